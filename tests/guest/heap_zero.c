// SPDX-License-Identifier: MIT
/*
 * heap_zero: every heap hands out zeroed memory, also when it reuses
 * memory a previous buffer filled (cached and uncached).  Each buffer is
 * filled, freed, and the same size allocated again from the same heap.
 */
#include "heap_util.h"

#define LEN	(256 * 1024)
#define ROUNDS	4

static int fill_and_free(int ion, const struct it_heap *kh, unsigned int flags,
			 unsigned int seed, long *first_bad)
{
	unsigned char *p;
	int buf;

	buf = ht_alloc_map(ion, LEN, kh->id, flags, &p);
	if (buf < 0)
		return buf;
	*first_bad = it_check_zero(p, LEN);
	it_fill(p, LEN, seed);
	ht_cpu_end(buf);
	munmap(p, LEN);
	close(buf);
	return 0;
}

int main(void)
{
	const struct it_heap *kh;
	struct it_heaps hs;
	unsigned int i, c, r, seed;
	int ion;

	ion = it_setup(&hs);
	seed = it_seed();
	for (i = 0; (kh = it_known_next(&hs, &i)); i++) {
		for (c = 0; c < IT_ARRAY_SIZE(ht_cache_modes); c++) {
			long bad = -1, worst = -1;
			int ret = 0;

			for (r = 0; r < ROUNDS && !ret; r++) {
				ret = fill_and_free(ion, kh,
						    ht_cache_modes[c].flags,
						    seed + r, &bad);
				if (bad >= 0 && worst < 0)
					worst = bad;
			}
			if (ret)
				tap_diag("allocate: %s", strerror(-ret));
			if (worst >= 0)
				tap_diag("non-zero byte at offset %ld", worst);
			tap_ok(!ret && worst < 0, "%s %s: zeroed on every reuse",
			       kh->name, ht_cache_modes[c].name);
		}
	}
	close(ion);
	return tap_exit();
}
