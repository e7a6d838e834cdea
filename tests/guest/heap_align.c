// SPDX-License-Identifier: MIT
/*
 * heap_align: the contiguous heaps honour the handle ABI's align (the
 * physical address, as ion_test sees it, is a multiple of it); the DMA
 * heap refuses an alignment beyond the size's page order with EINVAL, and
 * where CMA serves it one beyond CMA's 1 MiB (CONFIG_CMA_ALIGNMENT); the
 * system heap gives pages (align only needs page alignment there).  A
 * one-page buffer is held in the heap during each case, so the heap's
 * next free address is not aligned by accident.  The carveout refuses an
 * alignment that no address of its region leaves room for with EINVAL.
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

/*
 * The DMA heap's cap where CMA may serve it: CMA aligns a range to its
 * order but at most CONFIG_CMA_ALIGNMENT's (1 MiB with 4 KiB pages), so a
 * 2 MiB buffer aligned to 2 MiB is refused by a kernel with CMA (the
 * heap's debugfs cma_max_align says its cap; a kernel with a CMA area
 * must have one), and given aligned elsewhere.  0-3 one-MiB buffers are
 * held first, so a first fit at a 1 MiB step would not land on 2 MiB by
 * chance every time.
 */
static void cma_cap_case(int ion, int tfd, const struct it_heap *kh)
{
	long long cap = it_heap_num(ION_DMA_HEAP_NAME, "cma_max_align");
	size_t mib = 1 << 20, align;
	int spacers[3], buf, i, k, cma;
	unsigned long long phys;

	tap_diag("CmaTotal %lld, cma_max_align %lld", ht_meminfo("CmaTotal"),
		 cap);
	tap_ok(ht_meminfo("CmaTotal") <= 0 || cap == (long long)mib,
	       "dma: where a CMA area exists, debugfs says CMA caps align "
	       "at 1 MiB");
	cma = cap > 0;

	for (k = 0; k <= 3; k++) {
		for (i = 0; i < k; i++)
			spacers[i] = ht_alloc(ion, mib, 0, kh->id, ION_FLAG_CACHED);
		for (align = mib; align <= 2 * mib; align *= 2) {
			buf = ht_alloc(ion, 2 * mib, align, kh->id,
				       ION_FLAG_CACHED);
			phys = buf >= 0 && tfd >= 0 ? ht_buf_phys(tfd, buf) : 0;
			tap_diag("dma: %d held, align %zu: %d, phys 0x%llx",
				 k, align, buf, phys);
			if (cma && align > (size_t)cap)
				it_expect(buf < 0 ? buf : 0, EINVAL,
					  "dma: len 2M align 2M with %d held: "
					  "EINVAL, CMA aligns to 1M at most",
					  k);
			else
				tap_ok(phys && !(phys % align),
				       "dma: len 2M align %zuM with %d held: "
				       "allocated, address aligned%s", align / mib,
				       k, cma ? " (CMA cap)" : "");
			if (buf >= 0)
				close(buf);
		}
		for (i = 0; i < k; i++)
			if (spacers[i] >= 0)
				close(spacers[i]);
	}
}

/*
 * An alignment that no address of the carveout's region can take with
 * the length: EINVAL (never possible), not ENOMEM (not possible now).
 * Half the region's size, and a length that leaves one page too few
 * after the region's first address of that alignment; skipped when the
 * region starts at such an address (every length fits then).
 */
static void carveout_never_case(int ion, const struct it_heap *kh)
{
	const char *name = "carveout: an alignment no address of the region fits: EINVAL";
	unsigned long long base = 0, size, align, gap;
	struct it_dfs d;
	const char *v;
	int buf;

	if (it_dfs_load_heap(&d, ION_CARVEOUT_HEAP_NAME)) {
		tap_ok(0, "%s (debugfs file)", name);
		return;
	}
	v = it_dfs_get(&d, "region_base_hex");
	if (v)
		base = strtoull(v, NULL, 16);
	size = it_dfs_num(&d, "region_size");
	it_dfs_free(&d);
	for (align = 1; align * 2 <= size / 2; align *= 2)
		;
	gap = ((base + align - 1) & ~(align - 1)) - base;
	tap_diag("carveout region 0x%llx + %llu, align %llu: first aligned address %llu bytes in",
		 base, size, align, gap);
	if (!v || !base || size < 2 * 4096) {
		tap_ok(0, "%s (region_base_hex, region_size)", name);
		return;
	}
	if (!gap) {
		tap_skip(name, "the region starts at an address of that alignment");
		return;
	}
	buf = ht_alloc(ion, size - gap + 4096, align, kh->id, ION_FLAG_CACHED);
	if (buf >= 0)
		close(buf);
	it_expect(buf < 0 ? buf : 0, EINVAL, "%s", name);
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
	if (it_heap_find(&hs, ION_CARVEOUT_HEAP_NAME))
		carveout_never_case(ion, known(ION_CARVEOUT_HEAP_NAME));
	else
		tap_skip("carveout: an alignment no address of the region fits",
			 "heap not registered");
	if (!it_heap_find(&hs, ION_DMA_HEAP_NAME))
		tap_skip("dma: CMA's alignment cap", "heap not registered");
	else if (tfd < 0)
		tap_skip("dma: CMA's alignment cap", "no /dev/ion_test");
	else
		cma_cap_case(ion, tfd, known(ION_DMA_HEAP_NAME));
	if (tfd >= 0)
		close(tfd);
	close(ion);
	return tap_exit();
}
