// SPDX-License-Identifier: MIT
/*
 * heap_carveout_uncached: x86's write-combined 2 MiB blocks for the
 * carveout heap's uncached buffers (kernel/heaps/ion_cache_x86_region.c).
 *
 * - an uncached carveout buffer's first page is write-combining in the
 *   linear map, still mapped by a large (2 MiB or 1 GiB) entry, and its
 *   chunk is counted in use in the heap's debugfs file;
 * - a cached buffer never shares a write-combined block: cached buffers
 *   allocated while an uncached chunk lives are write-back and lie in no
 *   2 MiB block of the uncached one;
 * - a buffer larger than 2 MiB takes whole blocks: its first and last
 *   pages are write-combining in large entries;
 * - a chunk cut again from a block is zeroed (another chunk keeps the block
 *   converted meanwhile);
 * - the direct map stays whole: ROUNDS rounds of uncached carveout
 *   alloc/free of random sizes from 4 KiB to 8 MiB (four live, seed
 *   printed) grow DirectMap4k by at most 2 MiB and cause no split counted
 *   by the heap (direct_map_splits); ENOMEM of a round (a full or
 *   fragmented carveout) is counted, not failed;
 * - after the frees every block is back (uncached_blocks 0, no chunk in
 *   use) and a page of a freed uncached buffer reads write-back;
 * - the counters add up: blocks held = converted - restored - leaked, and
 *   none leaked.
 * SKIP without a carveout heap or off x86 (arm64 keeps per-buffer cache
 * maintenance and a cacheable linear map).
 */
#include "heap_util.h"

#define CO_FILE		IT_DEBUGFS "/heaps/" ION_CARVEOUT_HEAP_NAME
#define ROUNDS		500
#define BLOCK		(2 * MiB)
#define X86_PAGE_PWT	0x8ULL

static long long co_num(const char *key)
{
	return it_dfs_file_num(CO_FILE, key);
}

static int co_alloc(int ion, size_t len, unsigned int flags)
{
	return ht_alloc(ion, len, 0, ION_HEAP_TYPE_CARVEOUT, flags);
}

/* Is the page at @phys write-combining in a large linear-map entry? */
static int wc_large(int tfd, unsigned long long phys)
{
	struct ion_test_phys_attr a;
	int ret = ht_phys_attr(tfd, phys, &a);

	if (ret)
		return ret;
	tap_diag("page %#llx: cache bits %#llx, mapped by %u KiB", phys,
		 (unsigned long long)a.kernel_bits, a.map_kb);
	return a.kernel_bits == X86_PAGE_PWT && a.map_kb >= 2048 ? 1 : 0;
}

static void wc_case(int ion, int tfd, unsigned long long *phys)
{
	long long inuse0 = co_num("uncached_chunks_in_use");
	int buf, ret = -EIO;

	*phys = 0;
	buf = co_alloc(ion, 64 * KiB, 0);
	if (buf >= 0)
		*phys = ht_buf_phys(tfd, buf);
	if (*phys)
		ret = wc_large(tfd, *phys);
	tap_ok(ret == 1 && co_num("uncached_chunks_in_use") == inuse0 + 1,
	       "an uncached carveout chunk is write-combining in a whole large page, counted in use");
	if (buf >= 0)
		close(buf);
}

/* Cached buffers beside a live uncached chunk: write-back, other blocks. */
static void cached_case(int ion, int tfd)
{
	unsigned long long uphys = 0, phys;
	struct ion_test_phys_attr a;
	int ubuf, bufs[8], i, bad = 0;

	ubuf = co_alloc(ion, 64 * KiB, 0);
	if (ubuf >= 0)
		uphys = ht_buf_phys(tfd, ubuf);
	for (i = 0; i < 8; i++) {
		bufs[i] = co_alloc(ion, 64 * KiB, ION_FLAG_CACHED);
		phys = bufs[i] >= 0 ? ht_buf_phys(tfd, bufs[i]) : 0;
		if (!phys || ht_phys_attr(tfd, phys, &a) || a.kernel_bits ||
		    phys / BLOCK == uphys / BLOCK) {
			tap_diag("cached buffer %d at %#llx (uncached at %#llx): cache bits %#llx",
				 i, phys, uphys,
				 (unsigned long long)a.kernel_bits);
			bad++;
		}
	}
	tap_ok(uphys && !bad,
	       "cached carveout buffers are write-back and share no block with an uncached one");
	for (i = 0; i < 8; i++)
		if (bufs[i] >= 0)
			close(bufs[i]);
	if (ubuf >= 0)
		close(ubuf);
}

/* A 3 MiB uncached buffer: whole blocks, first and last page. */
static void large_case(int ion, int tfd)
{
	size_t len = 3 * MiB;
	unsigned long long phys = 0;
	int buf, first = -EIO, last = -EIO;

	buf = co_alloc(ion, len, 0);
	if (buf >= 0)
		phys = ht_buf_phys(tfd, buf);
	if (phys) {
		first = wc_large(tfd, phys);
		last = wc_large(tfd, phys + len - it_page());
	}
	tap_ok(first == 1 && last == 1 && phys % BLOCK == 0,
	       "a 3 MiB uncached carveout buffer takes whole write-combined blocks");
	if (buf >= 0)
		close(buf);
}

static void zero_case(int ion)
{
	static const size_t lens[] = { 4 * KiB, 64 * KiB, 1 * MiB,
				       1 * MiB + 68 * KiB };
	long long conv0 = co_num("uncached_blocks_converted");
	unsigned int i;
	int keep, ret = 0;

	/* A live chunk keeps its block converted across the rounds. */
	keep = co_alloc(ion, 4 * KiB, 0);
	for (i = 0; i < IT_ARRAY_SIZE(lens) && !ret; i++) {
		ret = ht_fill_free(ion, lens[i], ION_HEAP_TYPE_CARVEOUT, 0,
				   i + 1);
		if (!ret)
			ret = ht_new_zeroed(ion, lens[i],
					    ION_HEAP_TYPE_CARVEOUT, 0);
	}
	tap_diag("blocks converted during the rounds: %lld",
		 co_num("uncached_blocks_converted") - conv0);
	tap_ok(keep >= 0 && !ret,
	       "uncached chunks cut again from a live block are zeroed");
	if (keep >= 0)
		close(keep);
}

static void direct_map_case(int ion)
{
	long long before, after, splits0, splits1;
	unsigned int seed = it_seed();
	int ret, full;

	before = ht_dm4k_kb();
	if (before < 0) {
		tap_skip("the direct map stays whole", "no DirectMap4k");
		return;
	}
	splits0 = co_num("direct_map_splits");
	tap_diag("seed %u, %d rounds", seed, ROUNDS);
	full = 0;
	ret = ht_mixed_rounds(ion, 1U << ION_HEAP_TYPE_CARVEOUT, 23, ROUNDS,
			      seed, &full);
	after = ht_dm4k_kb();
	splits1 = co_num("direct_map_splits");
	tap_diag("DirectMap4k %lld kB -> %lld kB; direct_map_splits %lld -> %lld; blocks converted %lld; %d rounds ENOMEM",
		 before, after, splits0, splits1,
		 co_num("uncached_blocks_converted"), full);
	if (ret)
		tap_diag("rounds: %s", strerror(-ret));
	tap_ok(!ret && full < ROUNDS / 10 && after - before <= 2048 &&
	       splits0 >= 0 && splits1 == splits0,
	       "the direct map stays whole over %d mixed uncached carveout rounds",
	       ROUNDS);
}

/* Everything freed: no block left, a freed page write-back again. */
static void restore_case(int tfd, unsigned long long phys)
{
	struct ion_test_phys_attr a = { 0 };
	int ret = phys ? ht_phys_attr(tfd, phys, &a) : -EIO;

	tap_diag("after the frees: uncached_blocks %lld, chunks in use %lld, used %lld; page %#llx cache bits %#llx (%u KiB entry)",
		 co_num("uncached_blocks"), co_num("uncached_chunks_in_use"),
		 co_num("used"), phys, (unsigned long long)a.kernel_bits,
		 a.map_kb);
	tap_ok(!ret && a.kernel_bits == 0 && co_num("uncached_blocks") == 0 &&
	       co_num("uncached_chunks_in_use") == 0 && co_num("used") == 0,
	       "after the frees every block is back, a freed uncached page is write-back");
}

static void counters_case(void)
{
	long long held = co_num("uncached_blocks");
	long long conv = co_num("uncached_blocks_converted");
	long long rest = co_num("uncached_blocks_restored");
	long long leak = co_num("uncached_blocks_leaked");

	tap_diag("blocks: held %lld, converted %lld, restored %lld, leaked %lld, chunks %lld",
		 held, conv, rest, leak, co_num("uncached_block_chunks"));
	tap_ok(held >= 0 && conv > 0 && leak == 0 && held == conv - rest - leak,
	       "the carveout's block counters add up, none leaked");
}

int main(void)
{
	unsigned long long phys;
	struct it_heaps hs;
	int ion, tfd;

	ion = it_setup(&hs);
	if (!it_heap_find(&hs, ION_CARVEOUT_HEAP_NAME) ||
	    ht_system_num("uncached_blocks") < 0) {
		tap_skip("carveout uncached blocks", "no carveout heap, or not x86");
		close(ion);
		return tap_exit();
	}
	tfd = ht_test_open();
	if (tfd < 0) {
		tap_skip("carveout uncached blocks", "no ion_test");
		close(ion);
		return tap_exit();
	}
	direct_map_case(ion);
	wc_case(ion, tfd, &phys);
	cached_case(ion, tfd);
	large_case(ion, tfd);
	zero_case(ion);
	restore_case(tfd, phys);
	counters_case();
	close(tfd);
	close(ion);
	return tap_exit();
}
