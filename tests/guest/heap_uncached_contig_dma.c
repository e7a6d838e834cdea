// SPDX-License-Identifier: MIT
/*
 * heap_uncached_contig_dma: on x86, uncached system-contig buffers larger
 * than 2 MiB and the DMA heap's uncached buffers are converted without
 * splitting the kernel's direct map (ion_system_contig_heap.c,
 * ion_dma_heap.c; the rules in ion_cache_x86.c and DOC: uncached blocks).
 *
 * - a system-contig uncached buffer of 2 MiB + 4 KiB, 3 MiB and 4 MiB:
 *   its first and last pages are write-combining in the linear map, and
 *   converting it counted no split (direct_map_splits);
 * - CONTIG_ROUNDS rounds of such buffers of random sizes over 2 MiB (four
 *   live, seed printed; ENOMEM from fragmented memory counted, not
 *   failed) grow DirectMap4k by at most 2 MiB and cause no split;
 * - a 64 KiB uncached DMA-heap buffer is write-combining, cut from a
 *   block (the DMA heap's uncached_block_buffers), with no split;
 * - DMA_ROUNDS rounds of uncached DMA-heap buffers of mixed sizes from
 *   4 KiB to 4 MiB (2 MiB with CMA, see dma_rounds()) grow DirectMap4k by
 *   at most 2 MiB and cause no split;
 * - DMA-heap buffers cut again from a block's dirty pages read zero;
 * - the lowest empty block is the one kept: once an uncached system-heap
 *   buffer's block (above 4 GiB in the large-memory boot) was kept,
 *   KEEP_ROUNDS small uncached DMA-heap buffers one after the other
 *   convert at most one new block, not one each.
 *
 * SKIP off x86 (no block keys in the system heap's debugfs file), without
 * ion_test, or without the heaps.
 */
#include "heap_util.h"

#define CONTIG_ROUNDS	60
#define DMA_ROUNDS	300
#define KEEP_ROUNDS	10
#define CONTIG_MASK	ION_HEAP_SYSTEM_CONTIG_MASK
#define DMA_HEAP_FILE	IT_DEBUGFS "/heaps/" ION_DMA_HEAP_NAME
#define X86_PAGE_PWT	0x8ULL

/* Are the first and last pages of uncached buffer @buf of @len WC? */
static int ends_wc(int tfd, int buf, size_t len)
{
	struct ion_test_phys_attr first = { 0 }, last = { 0 };
	unsigned long long phys = ht_buf_phys(tfd, buf);
	int ret;

	if (!phys)
		return -EIO;
	ret = ht_phys_attr(tfd, phys, &first);
	if (!ret)
		ret = ht_phys_attr(tfd, phys + len - it_page(), &last);
	tap_diag("%zu KiB at %#llx: first page bits %#llx (%u KiB entry), last %#llx (%u KiB entry)",
		 len / KiB, phys, (unsigned long long)first.kernel_bits,
		 first.map_kb, (unsigned long long)last.kernel_bits,
		 last.map_kb);
	if (ret)
		return ret;
	return first.kernel_bits == X86_PAGE_PWT &&
	       last.kernel_bits == X86_PAGE_PWT ? 0 : -EILSEQ;
}

static void contig_sizes_case(int ion, int tfd)
{
	static const size_t lens[] = { 2 * MiB + 4 * KiB, 3 * MiB, 4 * MiB };
	long long splits0 = ht_system_num("direct_map_splits");
	unsigned int i;
	int buf, ret;

	for (i = 0; i < IT_ARRAY_SIZE(lens); i++) {
		buf = it_alloc_fd(ion, lens[i], CONTIG_MASK, 0);
		if (buf == -ENOMEM) {
			tap_skip("an uncached system-contig buffer over 2 MiB",
				 "no free 4 MiB block");
			continue;
		}
		ret = buf < 0 ? buf : ends_wc(tfd, buf, lens[i]);
		tap_ok(!ret && splits0 >= 0 &&
		       ht_system_num("direct_map_splits") == splits0,
		       "an uncached system-contig buffer of %zu KiB is write-combining end to end, converted without a split",
		       lens[i] / KiB);
		if (buf >= 0)
			close(buf);
	}
}

/* CONTIG_ROUNDS of sizes over 2 MiB, four live; ENOMEMs in *@enomem. */
static int contig_rounds(int ion, unsigned int seed, int *enomem)
{
	int bufs[4] = { -1, -1, -1, -1 };
	unsigned int i, slot;
	size_t len;
	int ret = 0;

	for (i = 0; i < CONTIG_ROUNDS && !ret; i++) {
		slot = i % 4;
		if (bufs[slot] >= 0)
			close(bufs[slot]);
		len = 2 * MiB + (1 + rand_r(&seed) % 512) * 4 * KiB;
		bufs[slot] = it_alloc_fd(ion, len, CONTIG_MASK, 0);
		if (bufs[slot] == -ENOMEM)
			(*enomem)++;
		else if (bufs[slot] < 0)
			ret = bufs[slot];
	}
	for (i = 0; i < 4; i++)
		if (bufs[i] >= 0)
			close(bufs[i]);
	return ret;
}

/*
 * DirectMap4k grows by at most 2 MiB and no split is counted while
 * @rounds runs; @what names it.
 */
static void dm_bound(int ion, const char *what, unsigned int rounds,
		     int (*run)(int ion, unsigned int seed, int *enomem))
{
	long long splits0 = ht_system_num("direct_map_splits");
	long long before = ht_dm4k_kb(), after;
	unsigned int seed = it_seed();
	int enomem = 0, ret;

	if (before < 0) {
		tap_skip("the direct map stays whole", "no DirectMap4k");
		return;
	}
	ret = run(ion, seed, &enomem);
	after = ht_dm4k_kb();
	tap_diag("%s: seed %u, %u rounds, %d ENOMEM; DirectMap4k %lld kB -> %lld kB, direct_map_splits %lld -> %lld",
		 what, seed, rounds, enomem, before, after, splits0,
		 ht_system_num("direct_map_splits"));
	tap_ok(!ret && enomem < (int)rounds && after - before <= 2048 &&
	       splits0 >= 0 &&
	       ht_system_num("direct_map_splits") == splits0,
	       "the direct map stays whole over %u rounds of %s", rounds,
	       what);
}

/*
 * With CMA (the debug kernel) dma-direct takes buffers over 2 MiB from
 * the CMA area, aligned to 1 MiB only (CONFIG_CMA_ALIGNMENT): their
 * conversion may split, as ion.rst says, so the rounds stop at 2 MiB
 * there (block chunks, which never split).
 */
static int dma_rounds(int ion, unsigned int seed, int *enomem)
{
	unsigned int max_shift = ht_meminfo("CmaTotal") > 0 ? 21 : 22;

	tap_diag("DMA rounds up to %u KiB", 1U << (max_shift - 10));
	return ht_mixed_rounds(ion, ION_HEAP_DMA_MASK, max_shift, DMA_ROUNDS,
			       seed, enomem);
}

static void dma_block_case(int ion, int tfd)
{
	long long blocks0 = it_dfs_file_num(DMA_HEAP_FILE,
					    "uncached_block_buffers");
	long long splits0 = ht_system_num("direct_map_splits");
	int buf, ret;

	buf = it_alloc_fd(ion, 64 * KiB, ION_HEAP_DMA_MASK, 0);
	ret = buf < 0 ? buf : ends_wc(tfd, buf, 64 * KiB);
	tap_ok(!ret && blocks0 >= 0 &&
	       it_dfs_file_num(DMA_HEAP_FILE, "uncached_block_buffers") >
	       blocks0 && splits0 >= 0 &&
	       ht_system_num("direct_map_splits") == splits0,
	       "an uncached DMA-heap buffer is a write-combining chunk of a block, converted without a split");
	if (buf >= 0)
		close(buf);
}

static void dma_zero_case(int ion)
{
	static const size_t lens[] = { 4 * KiB, 64 * KiB, 1 * MiB + 68 * KiB,
				       3 * MiB };
	unsigned int i;
	int ret = 0;

	for (i = 0; i < IT_ARRAY_SIZE(lens) && !ret; i++) {
		ret = ht_fill_free(ion, lens[i], ION_HEAP_TYPE_DMA, 0, i + 1);
		if (!ret)
			ret = ht_new_zeroed(ion, lens[i], ION_HEAP_TYPE_DMA, 0);
	}
	tap_ok(!ret, "uncached DMA-heap buffers on memory a filled one left read zero");
}

/*
 * With uncached_keep_blocks at 1, a new system-heap block (unmasked: above
 * 4 GiB when the guest has memory there) is kept first; the DMA heap's
 * first block, below 4 GiB, then displaces it, and serves every round.
 */
static void dma_keep_case(int ion, int tfd)
{
	long long conv0, conv = -1;
	unsigned long long phys = 0;
	unsigned int i;
	struct it_param keep;
	int buf, ret;

	if (it_param_save(&keep, "uncached_keep_blocks")) {
		tap_ok(0, "uncached_keep_blocks readable");
		return;
	}
	/* No block left: the system heap's is a new one. */
	ret = it_param_set("uncached_keep_blocks", "0");
	if (!ret)
		ret = ht_drop_pools();
	if (!ret)
		ret = it_param_set("uncached_keep_blocks", "1");
	buf = ret ? ret : it_alloc_fd(ion, 4 * KiB, ION_HEAP_SYSTEM_MASK, 0);
	if (buf >= 0) {
		phys = ht_buf_phys(tfd, buf);
		close(buf);
		ret = ht_drop_pools();
	} else {
		ret = buf;
	}
	conv0 = ht_system_num("uncached_blocks_converted");
	for (i = 0; i < KEEP_ROUNDS && !ret; i++) {
		buf = it_alloc_fd(ion, 4 * KiB, ION_HEAP_DMA_MASK, 0);
		if (buf < 0)
			ret = buf;
		else
			close(buf);
	}
	if (!ret)
		conv = ht_system_num("uncached_blocks_converted");
	tap_diag("system-heap block at %#llx, kept %lld; %u DMA-heap rounds converted %lld blocks (ret %d)",
		 phys, ht_system_num("uncached_blocks_kept"), KEEP_ROUNDS,
		 conv - conv0, ret);
	tap_ok(!ret && conv0 >= 0 && conv >= conv0 && conv - conv0 <= 1,
	       "the lowest empty block is kept: %u small uncached DMA-heap buffers convert at most one block",
	       KEEP_ROUNDS);
	it_param_restore(&keep);
}

int main(void)
{
	const char *why = NULL;
	struct it_heaps hs;
	int ion, tfd = -1;

	ion = it_setup(&hs);
	/* The block keys exist only on x86, with the system heap. */
	if (ht_system_num("uncached_blocks") < 0)
		why = "not x86, or no system heap";
	else if ((tfd = ht_test_open()) < 0)
		why = "no ion_test";
	if (why) {
		tap_skip("uncached contig and DMA buffers", why);
		close(ion);
		return tap_exit();
	}
	if (it_heap_find(&hs, ION_SYSTEM_CONTIG_HEAP_NAME)) {
		contig_sizes_case(ion, tfd);
		dm_bound(ion, "uncached system-contig buffers over 2 MiB",
			 CONTIG_ROUNDS, contig_rounds);
	} else {
		tap_skip("uncached system-contig buffers", "no such heap");
	}
	if (it_heap_find(&hs, ION_DMA_HEAP_NAME)) {
		dma_block_case(ion, tfd);
		dm_bound(ion, "uncached DMA-heap buffers of mixed sizes",
			 DMA_ROUNDS, dma_rounds);
		dma_zero_case(ion);
		dma_keep_case(ion, tfd);
	} else {
		tap_skip("uncached DMA-heap buffers", "no such heap");
	}
	close(tfd);
	close(ion);
	return tap_exit();
}
