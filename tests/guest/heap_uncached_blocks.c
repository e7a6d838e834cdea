// SPDX-License-Identifier: MIT
/*
 * heap_uncached_blocks: x86's write-combined 2 MiB blocks for the system
 * heap's uncached chunks (kernel/heaps/ion_cache_x86_block.c).
 *
 * - the block keys are in the system heap's debugfs file (else SKIP: only
 *   x86 converts the linear map);
 * - an uncached buffer's first page is write-combining in the linear map
 *   (ion_test's ION_TEST_IOC_PHYS_ATTR), its chunk came from a block;
 * - the direct map stays whole: ROUNDS rounds of uncached alloc/free of
 *   random sizes from 4 KiB to 8 MiB (four buffers live, seed printed) grow
 *   DirectMap4k by at most 2 MiB and cause no split (direct_map_splits),
 *   and the bound still holds after the pools drained.  ROUNDS is 1000,
 *   not the 10 000, to fit the test's time under TCG: before the
 *   blocks, 200 rounds of a single 1 MiB size split 26 MiB, so 1000 mixed
 *   rounds are more than enough to break a 2 MiB bound;
 * - a page that left the pool is write-back again: with no block kept
 *   (uncached_keep_blocks=0), drop_caches empties the pools, every block
 *   returns (uncached_blocks 0) and the linear-map entry of the first page
 *   of a freed uncached buffer reads write-back;
 * - chunks reused from a block are zeroed: with pool_max_mb=0 a freed
 *   uncached buffer's dirty chunks go straight back to their block, the
 *   next buffer is cut from it and must read all zero (and a kept block
 *   after drop_caches likewise);
 * - a fill stopped part way by SIGKILL gives its block chunks back to
 *   their blocks: with pool_max_mb=0 and none kept, nothing is pooled
 *   after and no block is held;
 * - pooled chunks handed back to their blocks are no reclaim progress:
 *   with every block kept (uncached_keep_blocks=64), 16 MiB of them
 *   pooled, the root cgroup's memory.reclaim of 16M takes them from the
 *   pools and fails with EAGAIN, blocks held unchanged, unless free memory
 *   (MemFree and the per-CPU lists) rose by 8 MiB; with none kept, the
 *   blocks emptied are freed and count: memory.reclaim of 12M succeeds
 *   with free memory up by 8 MiB (SKIP without memory.reclaim);
 * - an unmasked caller leaves the low kept blocks to callers with a DMA
 *   mask: with KEEP_N blocks kept empty (pool_max_mb=0), a 4 KiB uncached
 *   buffer is cut from the highest of them (it took the lowest);
 * - the counters add up: blocks held = converted - restored - leaked, and
 *   none leaked;
 * - uncached system-contig buffers of at most 2 MiB are chunks of the
 *   blocks too: write-combining in a large linear-map entry, counted in
 *   uncached_block_chunks, and CONTIG_ROUNDS rounds of mixed sizes from
 *   4 KiB to 2 MiB grow DirectMap4k by at most 2 MiB with no split.
 */
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "heap_util.h"

#define CG_ROOT		"/sys/fs/cgroup"
#define KEEP		"uncached_keep_blocks"
#define ROUNDS		1000
#define CONTIG_ROUNDS	300
#define CONTIG_MASK	ION_HEAP_SYSTEM_CONTIG_MASK
#define X86_PAGE_PWT	0x8ULL
#define RECLAIM_MB	16

static int alloc_uncached(int ion, size_t len)
{
	return it_alloc_fd(ion, len, ION_HEAP_SYSTEM_MASK, 0);
}

/*
 * A new uncached buffer of @len in *@buf (-1 on failure), the physical
 * address of its first page and that page's linear-map entry; 0 or -errno.
 */
static int live_attr(int ion, int tfd, size_t len, int *buf,
		     unsigned long long *phys, struct ion_test_phys_attr *a)
{
	*phys = 0;
	*buf = alloc_uncached(ion, len);
	if (*buf < 0)
		return *buf;
	*phys = ht_buf_phys(tfd, *buf);
	return *phys ? ht_phys_attr(tfd, *phys, a) : -EIO;
}

/* An uncached buffer's first page: write-combining, from a block. */
static void wc_case(int ion, int tfd)
{
	struct ion_test_phys_attr a = { 0 };
	unsigned long long phys;
	long long chunks0;
	int buf, ret;

	/* Earlier tests' pooled uncached chunks would serve it instead. */
	if (ht_drop_pools())
		tap_diag("could not empty the pools");
	chunks0 = ht_system_num("uncached_block_chunks");

	ret = live_attr(ion, tfd, 64 * KiB, &buf, &phys, &a);
	if (!ret)
		tap_diag("first page: cache bits %#llx, mapped by %u KiB",
			 (unsigned long long)a.kernel_bits, a.map_kb);
	tap_ok(!ret && a.kernel_bits == X86_PAGE_PWT &&
	       ht_system_num("uncached_block_chunks") > chunks0,
	       "an uncached chunk comes from a block, write-combining in the linear map");
	if (buf >= 0)
		close(buf);
}

static void direct_map_case(int ion)
{
	struct ht_dm before, after;
	long long drained;
	int ret;

	ret = ht_dm_rounds(ion, ROUNDS, it_seed(), &before, &after);
	if (ret == -ENOENT) {
		tap_skip("the direct map stays whole", "no DirectMap4k");
		tap_skip("the direct map stays whole after the pools drain",
			 "no DirectMap4k");
		return;
	}
	tap_diag("blocks converted %lld",
		 ht_system_num("uncached_blocks_converted"));
	tap_ok(!ret && after.dm4k_kb - before.dm4k_kb <= 2048 &&
	       after.splits == before.splits,
	       "the direct map stays whole over %d mixed uncached rounds", ROUNDS);
	ret = it_param_set(KEEP, "0");
	if (!ret)
		ret = ht_drop_pools();
	drained = ht_dm4k_kb();
	tap_diag("after the pools drained: DirectMap4k %lld kB, uncached_blocks %lld",
		 drained, ht_system_num("uncached_blocks"));
	tap_ok(!ret && drained - before.dm4k_kb <= 2048,
	       "the direct map stays whole after the pools drain");
}

/* A freed buffer's page, after the pools drained, is write-back again. */
static void restore_case(int ion, int tfd)
{
	struct ion_test_phys_attr a = { 0 };
	unsigned long long phys = 0;
	int buf, ret;

	buf = -1;
	ret = it_param_set(KEEP, "0");
	if (!ret)
		ret = live_attr(ion, tfd, 1 * MiB, &buf, &phys, &a);
	tap_ok(!ret && a.kernel_bits == X86_PAGE_PWT,
	       "a live uncached buffer's page is write-combining");
	if (buf >= 0)
		close(buf);
	if (!ret)
		ret = ht_drop_pools();
	if (!ret)
		ret = ht_phys_attr(tfd, phys, &a);
	tap_diag("after drop_caches: pool_bytes %lld, uncached_blocks %lld, its page's cache bits %#llx (%u KiB entry)",
		 ht_system_num("pool_bytes"), ht_system_num("uncached_blocks"),
		 (unsigned long long)a.kernel_bits, a.map_kb);
	tap_ok(!ret && ht_system_num("uncached_blocks") == 0 &&
	       a.kernel_bits == 0,
	       "after drop_caches every block is back, the page that left the pool is write-back");
}

static void zero_case(int ion)
{
	static const size_t lens[] = { 4 * KiB, 64 * KiB, 1 * MiB,
				       1 * MiB + 68 * KiB };
	struct it_param cap;
	long long chunks0;
	unsigned int i;
	int ret;

	if (it_param_save(&cap, "pool_max_mb")) {
		tap_ok(0, "pool_max_mb readable");
		return;
	}
	ret = it_param_set("pool_max_mb", "0");
	if (!ret)
		ret = it_param_set(KEEP, "1");
	if (!ret)
		ret = ht_drop_pools();
	chunks0 = ht_system_num("uncached_block_chunks");
	for (i = 0; i < IT_ARRAY_SIZE(lens) && !ret; i++) {
		ret = ht_fill_free(ion, lens[i], ION_HEAP_TYPE_SYSTEM, 0,
				   i + 1);
		if (!ret)
			ret = ht_new_zeroed(ion, lens[i], ION_HEAP_TYPE_SYSTEM,
					    0);
	}
	tap_ok(!ret && ht_system_num("pool_bytes") == 0 &&
	       ht_system_num("uncached_block_chunks") > chunks0,
	       "without pools, chunks cut again from a block are zeroed");
	it_param_restore(&cap);
	ret = 0;
	for (i = 0; i < IT_ARRAY_SIZE(lens) && !ret; i++) {
		ret = ht_fill_free(ion, lens[i], ION_HEAP_TYPE_SYSTEM, 0,
				   i + 11);
		if (!ret)
			ret = ht_drop_pools();
		if (!ret)
			ret = ht_new_zeroed(ion, lens[i], ION_HEAP_TYPE_SYSTEM,
					    0);
	}
	tap_ok(!ret, "after drop_caches, chunks of a kept block are zeroed");
}

#define KEEP_N		4	/* as written to uncached_keep_blocks */
#define BLOCK		(2 * MiB)

/* The base of the block of @buf's first page, or 0. */
static unsigned long long block_of(int tfd, int buf)
{
	return ht_buf_phys(tfd, buf) & ~(unsigned long long)(BLOCK - 1);
}

/* Fill KEEP_N blocks with 1 MiB buffers, free them, then cut 4 KiB. */
static void high_first_case(int ion, int tfd)
{
	unsigned long long lo = ~0ULL, hi = 0, b, got = 0;
	int bufs[2 * KEEP_N], i, n = 0, small;
	struct it_param cap;

	if (it_param_save(&cap, "pool_max_mb") ||
	    it_param_set("pool_max_mb", "0") || it_param_set(KEEP, "0") ||
	    ht_drop_pools() || it_param_set(KEEP, "4")) {
		tap_ok(0, "pool_max_mb=0, %s=%d", KEEP, KEEP_N);
		goto out;
	}
	for (n = 0; n < 2 * KEEP_N; n++) {
		bufs[n] = alloc_uncached(ion, MiB);
		if (bufs[n] < 0)
			break;
		b = block_of(tfd, bufs[n]);
		lo = b < lo ? b : lo;
		hi = b > hi ? b : hi;
	}
	for (i = 0; i < n; i++)
		close(bufs[i]);
	small = alloc_uncached(ion, 4 * KiB);
	if (small >= 0) {
		got = block_of(tfd, small);
		close(small);
	}
	tap_diag("kept blocks from %#llx to %#llx; a 4 KiB buffer cut from %#llx",
		 lo, hi, got);
	tap_ok(n == 2 * KEEP_N && lo < hi && got == hi,
	       "an unmasked caller takes the highest kept block, leaving the low ones to masked callers");
out:
	it_param_restore(&cap);
}

static void counters_case(void)
{
	long long held = ht_system_num("uncached_blocks");
	long long conv = ht_system_num("uncached_blocks_converted");
	long long rest = ht_system_num("uncached_blocks_restored");
	long long leak = ht_system_num("uncached_blocks_leaked");

	tap_diag("blocks: held %lld, converted %lld, restored %lld, leaked %lld, chunks %lld, fallback chunks %lld",
		 held, conv, rest, leak, ht_system_num("uncached_block_chunks"),
		 ht_system_num("uncached_fallback_chunks"));
	tap_ok(held >= 0 && conv > 0 && leak == 0 && held == conv - rest - leak,
	       "the block counters add up, none leaked");
}

struct reclaim_round {
	long long pooled0, pooled1, free0, free1, held0, held1;
	int ret;
};

/*
 * With uncached_keep_blocks=@keep, pool @mb MiB of uncached chunks, then
 * write @ask MiB to the root cgroup's memory.reclaim (its result in
 * @r->ret); the pools, free memory and blocks held before and after.
 */
static void reclaim_round(int ion, const char *keep, int mb, int ask,
			  struct reclaim_round *r)
{
	char amount[16];
	int buf;

	r->pooled0 = r->pooled1 = r->free0 = r->free1 = -1;
	r->held0 = r->held1 = -1;
	snprintf(amount, sizeof(amount), "%dM", ask);
	r->ret = it_param_set(KEEP, keep);
	if (!r->ret)
		r->ret = ht_drop_pools();
	buf = r->ret ? r->ret : alloc_uncached(ion, mb * MiB);
	if (buf >= 0)
		close(buf);
	r->ret = buf < 0 ? buf : ht_wait_deferred();
	if (r->ret)
		return;
	r->pooled0 = ht_system_num("pool_bytes");
	r->held0 = ht_system_num("uncached_blocks");
	r->free0 = ht_free_bytes();
	r->ret = ht_write_str(CG_ROOT "/memory.reclaim", amount, 0);
	r->free1 = ht_free_bytes();
	r->pooled1 = ht_system_num("pool_bytes");
	r->held1 = ht_system_num("uncached_blocks");
	tap_diag("keep %s, memory.reclaim of %d MiB: %d; pooled %lld -> %lld, free %lld -> %lld bytes, blocks held %lld -> %lld",
		 keep, ask, r->ret, r->pooled0, r->pooled1, r->free0, r->free1,
		 r->held0, r->held1);
}

/*
 * Reclaim counts only pages that reach the buddy allocator.  With every
 * block kept, the shrinker hands pooled uncached chunks back to their
 * blocks and frees nothing: the root cgroup's memory.reclaim of their size
 * may then succeed only if free memory really rose by about as much.  With
 * none kept, the blocks it empties are freed and count.
 */
static void reclaim_case(int ion)
{
	const long long want = RECLAIM_MB * (long long)MiB;
	struct reclaim_round r;
	struct stat st;

	if (stat(CG_ROOT "/cgroup.controllers", &st))
		mount("none", CG_ROOT, "cgroup2", 0, NULL);
	if (stat(CG_ROOT "/memory.reclaim", &st)) {
		tap_skip("reclaim progress of pooled uncached chunks",
			 "no memory.reclaim");
		tap_skip("reclaim progress of emptied blocks",
			 "no memory.reclaim");
		return;
	}
	reclaim_round(ion, "64", RECLAIM_MB, RECLAIM_MB, &r);
	tap_ok(r.pooled0 >= want && r.pooled1 >= 0 &&
	       r.pooled0 - r.pooled1 >= want && r.held1 == r.held0 &&
	       r.free0 >= 0 && r.free1 >= 0 &&
	       (r.ret == -EAGAIN || (!r.ret && r.free1 - r.free0 >= want / 2)),
	       "chunks the shrinker hands back to kept blocks are no reclaim progress: memory.reclaim of their size fails, or frees as much");
	reclaim_round(ion, "0", RECLAIM_MB, RECLAIM_MB * 3 / 4, &r);
	tap_ok(!r.ret && r.held0 >= 0 && r.held1 >= 0 && r.held1 < r.held0 &&
	       r.free0 >= 0 && r.free1 - r.free0 >= want / 2,
	       "with no block kept, the blocks the shrinker empties are freed and count: memory.reclaim of %d MiB succeeds",
	       RECLAIM_MB * 3 / 4);
}

/* Uncached system-contig buffers of at most 2 MiB come from blocks. */
static void contig_case(int ion, int tfd)
{
	long long chunks0 = ht_system_num("uncached_block_chunks");
	long long splits0 = ht_system_num("direct_map_splits");
	long long before = ht_dm4k_kb(), after;
	struct ion_test_phys_attr a = { 0 };
	unsigned long long phys = 0;
	unsigned int seed = it_seed();
	int buf, ret;

	buf = it_alloc_fd(ion, 64 * KiB, CONTIG_MASK, 0);
	if (buf >= 0)
		phys = ht_buf_phys(tfd, buf);
	ret = phys ? ht_phys_attr(tfd, phys, &a) : -EIO;
	tap_diag("contig chunk %#llx: cache bits %#llx, mapped by %u KiB",
		 phys, (unsigned long long)a.kernel_bits, a.map_kb);
	/*
	 * Its block may lie where someone else split the linear map before
	 * (a buffer converted alone earlier in the run): a 4 KiB mapping is
	 * no proof against ion, a split ion counts is.
	 */
	tap_ok(!ret && a.kernel_bits == X86_PAGE_PWT &&
	       ht_system_num("uncached_block_chunks") > chunks0 &&
	       splits0 >= 0 &&
	       ht_system_num("direct_map_splits") == splits0,
	       "an uncached system-contig buffer is a write-combining chunk of a block, converted without a split");
	if (buf >= 0)
		close(buf);
	tap_diag("contig: seed %u, %d rounds", seed, CONTIG_ROUNDS);
	ret = ht_mixed_rounds(ion, CONTIG_MASK, 21, CONTIG_ROUNDS, seed,
			      NULL);
	after = ht_dm4k_kb();
	tap_diag("contig: DirectMap4k %lld kB -> %lld kB; direct_map_splits %lld -> %lld",
		 before, after, splits0, ht_system_num("direct_map_splits"));
	tap_ok(!ret && before >= 0 && after - before <= 2048 &&
	       splits0 >= 0 &&
	       ht_system_num("direct_map_splits") == splits0,
	       "the direct map stays whole over %d mixed uncached system-contig rounds up to 2 MiB",
	       CONTIG_ROUNDS);
}

/*
 * A fill stopped part way (SIGKILL: -EINTR) gives the chunks it cut from
 * blocks back to their blocks, not to the pools, which never held them:
 * with pool_max_mb=0 and no block kept, nothing is pooled after and every
 * block is freed.
 */
static void killed_fill_case(int ion)
{
	size_t len = ht_meminfo("MemAvailable") / 2 / MiB * MiB;
	long long pooled, blocks;
	struct it_param cap;
	int pfd[2], status = 0;
	char c;
	pid_t pid;

	if (len > 512 * MiB)
		len = 512 * MiB;
	if (it_param_save(&cap, "pool_max_mb") ||
	    it_param_set("pool_max_mb", "0") || it_param_set(KEEP, "0") ||
	    ht_drop_pools() || pipe2(pfd, O_CLOEXEC)) {
		tap_ok(0, "stopped fill: pool_max_mb=0, %s=0", KEEP);
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		if (write(pfd[1], "s", 1) != 1)
			_exit(2);
		_exit(alloc_uncached(ion, len) < 0 ? 0 : 1);
	}
	close(pfd[1]);
	if (pid > 0 && read(pfd[0], &c, 1) == 1) {
		usleep(100000);		/* well into the fill */
		kill(pid, SIGKILL);
	}
	close(pfd[0]);
	waitpid(pid, &status, 0);
	pooled = ht_system_num("pool_bytes");
	blocks = ht_system_num("uncached_blocks");
	tap_diag("stopped fill of %zu MiB: pool_bytes %lld, uncached_blocks %lld",
		 len / MiB, pooled, blocks);
	if (!WIFSIGNALED(status)) {
		tap_skip("stopped fill", "the allocation ended before the kill");
	} else {
		tap_ok(pooled == 0,
		       "stopped fill: none of its chunks pooled (pool_max_mb=0)");
		tap_ok(blocks == 0,
		       "stopped fill: its blocks freed (none kept)");
	}
	it_param_restore(&cap);
}

int main(void)
{
	struct it_heaps hs;
	struct it_param keep;
	int ion, tfd;

	ion = it_setup(&hs);
	if (!it_heap_find(&hs, ION_SYSTEM_HEAP_NAME) ||
	    ht_system_num("uncached_blocks") < 0) {
		tap_skip("uncached blocks", "no system heap, or not x86");
		close(ion);
		return tap_exit();
	}
	tfd = ht_test_open();
	if (tfd < 0) {
		tap_skip("uncached blocks", "no ion_test");
		close(ion);
		return tap_exit();
	}
	if (it_param_save(&keep, KEEP))
		tap_diag("could not read %s", KEEP);
	wc_case(ion, tfd);
	direct_map_case(ion);
	restore_case(ion, tfd);
	zero_case(ion);
	killed_fill_case(ion);
	reclaim_case(ion);
	contig_case(ion, tfd);
	high_first_case(ion, tfd);
	counters_case();
	it_param_restore(&keep);
	close(tfd);
	close(ion);
	return tap_exit();
}
