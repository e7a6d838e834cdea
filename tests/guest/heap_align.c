// SPDX-License-Identifier: MIT
/*
 * heap_align: the contiguous heaps honour the handle ABI's align (the
 * physical address, as ion_test sees it, is a multiple of it); the DMA
 * heap refuses an alignment beyond the size's page order with EINVAL; the
 * system heap gives pages (align only needs page alignment there).  A
 * one-page buffer is held in the heap during each case, so the heap's
 * next free address is not aligned by accident.
 */
#include "heap_util.h"

struct align_case {
	const char *heap;
	size_t len;
	size_t align;
	int expect;	/* errno, 0 for success */
};

static const struct align_case cases[] = {
	{ ION_SYSTEM_CONTIG_HEAP_NAME, 16384, 65536, 0 },
	{ ION_SYSTEM_CONTIG_HEAP_NAME, 16384, 1 << 20, 0 },
	{ ION_SYSTEM_CONTIG_HEAP_NAME, 16384, 4 << 20, 0 },
	{ ION_SYSTEM_CONTIG_HEAP_NAME, 16384, 8 << 20, EINVAL },
	/* not a power of two: as 3.10, aligned to the next one */
	{ ION_SYSTEM_CONTIG_HEAP_NAME, 16384, 0x3000, 0 },
	{ ION_SYSTEM_CONTIG_HEAP_NAME, 16384, 0x30000, 0 },
	{ ION_CARVEOUT_HEAP_NAME, 16384, 65536, 0 },
	{ ION_CARVEOUT_HEAP_NAME, 16384, 1 << 20, 0 },
	{ ION_CARVEOUT_HEAP_NAME, 16384, 2 << 20, 0 },
	{ ION_DMA_HEAP_NAME, 65536, 65536, 0 },
	{ ION_DMA_HEAP_NAME, 16384, 1 << 20, EINVAL },
	{ ION_SYSTEM_HEAP_NAME, 16384, 65536, 0 },
};

/* The alignment ion gives for @align: the next power of two. */
static size_t pow2_up(size_t align)
{
	size_t p = 1;

	while (p < align)
		p <<= 1;
	return p;
}

static const struct it_heap *known(const char *name)
{
	unsigned int i;

	for (i = 0; i < IT_ARRAY_SIZE(it_known_heaps); i++)
		if (!strcmp(it_known_heaps[i].name, name))
			return &it_known_heaps[i];
	return NULL;
}

int main(void)
{
	struct it_heaps hs;
	unsigned int i;
	int ion, tfd;

	ion = it_setup(&hs);
	tfd = ht_test_open();
	for (i = 0; i < IT_ARRAY_SIZE(cases); i++) {
		const struct align_case *ac = &cases[i];
		const struct it_heap *kh = known(ac->heap);
		unsigned long long phys;
		int buf, ok, spacer;

		if (!it_heap_find(&hs, ac->heap)) {
			tap_skip(ac->heap, "heap not registered");
			continue;
		}
		spacer = ht_alloc(ion, it_page(), 0, kh->id, ION_FLAG_CACHED);
		buf = ht_alloc(ion, ac->len, ac->align, kh->id,
			       ION_FLAG_CACHED);
		if (spacer >= 0)
			close(spacer);
		if (ac->expect || buf < 0) {
			it_expect(buf < 0 ? buf : 0, ac->expect,
				  "%s: len %zu align %zu: %s", ac->heap,
				  ac->len, ac->align,
				  ac->expect ? strerror(ac->expect) : "allocated");
			if (buf >= 0)
				close(buf);
			continue;
		}
		if (tfd < 0) {
			tap_skip(ac->heap, "no /dev/ion_test to read addresses");
			close(buf);
			continue;
		}
		phys = ht_buf_phys(tfd, buf);
		if (kh->contig)
			ok = phys && !(phys % pow2_up(ac->align));
		else
			ok = phys && !(phys % it_page());
		tap_diag("%s: phys 0x%llx", ac->heap, phys);
		tap_ok(ok, "%s: len %zu align %zu: address aligned%s",
		       ac->heap, ac->len, ac->align,
		       kh->contig ? "" : " to a page (not contiguous)");
		close(buf);
	}
	if (tfd >= 0)
		close(tfd);
	close(ion);
	return tap_exit();
}
