// SPDX-License-Identifier: MIT
/*
 * heap_uncached_memcg: x86's write-combined 2 MiB blocks for a task in a
 * memory cgroup other than the root (kernel/heaps/ion_cache_x86_block.c,
 * "Memory cgroups"): its uncached chunks come from blocks charged whole
 * to its own cgroup.  The test process moves itself into a child cgroup:
 *
 * - one live 4 KiB uncached buffer raises the cgroup's memory.current by
 *   a whole block (2 MiB, less the per-CPU charge batch the kernel may
 *   have held for it already), is write-combining in the linear map, and
 *   comes from a charged block (uncached_charged_blocks,
 *   uncached_charged_chunks) with no split (direct_map_splits);
 * - ROUNDS rounds of uncached alloc/free of random sizes from 4 KiB to
 *   8 MiB (four live, seed printed) grow DirectMap4k by at most 2 MiB
 *   with no split: before per-cgroup blocks, every chunk of a charged
 *   task was converted alone;
 * - chunks cut again from a charged block are zeroed: with pool_max_mb=0
 *   a 4 KiB buffer keeps the block alive while buffers of mixed sizes are
 *   filled, freed back to it dirty and allocated again;
 * - with memory.max 1 MiB above its usage the cgroup cannot be charged a
 *   block: a 4 KiB uncached buffer is still had, converted alone
 *   (uncached_fallback_chunks), and no OOM is declared in the cgroup;
 * - after the frees, memory.reclaim in the cgroup gives every charged
 *   block back (uncached_charged_blocks 0) and memory.current returns to
 *   within less than a block of where it started;
 * - the cgroup removed with chunks pooled (6.8 and later) and a 4 KiB
 *   buffer still live: rmdir succeeds, the buffer (its block now charged
 *   to the parent) is freed after, then drop_caches gives every charged
 *   block back, and the kernel log has no warning.
 *
 * SKIP off x86 (no blocks) or without cgroup2's memory controller.
 */
#include <sys/mount.h>
#include <sys/stat.h>

#include "heap_util.h"

#define CG_ROOT		"/sys/fs/cgroup"
#define CG		CG_ROOT "/ion-uncached"
#define ROUNDS		500
#define X86_PAGE_PWT	0x8ULL
#define BLOCK		(2 * (long long)MiB)
/* The kernel's per-CPU charge batch: 64 pages a CPU may hold precharged. */
#define BATCH		(64 * 4096LL)

static long long cg_current(void)
{
	char *text;
	long long v;

	if (it_read_file(CG "/memory.current", &text) < 0)
		return -1;
	v = atoll(text);
	free(text);
	return v;
}

/* Move this process into cgroup @cg (its cgroup.procs). */
static int cg_join(const char *cg)
{
	char path[128], pid[16];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return ht_write_str(path, pid, 0);
}

static int cg_setup(void)
{
	struct stat st;

	if (stat(CG_ROOT "/cgroup.controllers", &st) &&
	    mount("none", CG_ROOT, "cgroup2", 0, NULL))
		return -errno;
	rmdir(CG);
	if (ht_write_str(CG_ROOT "/cgroup.subtree_control", "+memory", 0) ||
	    mkdir(CG, 0755))
		return -EIO;
	return cg_join(CG);
}

/* Free the cgroup's pooled chunks (memory.reclaim), then its usage. */
static long long cg_reclaimed(void)
{
	if (ht_wait_deferred())
		return -1;
	/* EAGAIN when less than asked could be reclaimed: fine. */
	ht_write_str(CG "/memory.reclaim", "256M", 0);
	return cg_current();
}

static void block_case(int ion, int tfd)
{
	long long c0, c1, blocks0, chunks0, splits0;
	struct ion_test_phys_attr a = { 0 };
	unsigned long long phys = 0;
	int buf, ret = -EIO;

	ht_drop_pools();
	c0 = cg_reclaimed();
	blocks0 = ht_system_num("uncached_charged_blocks");
	chunks0 = ht_system_num("uncached_charged_chunks");
	splits0 = ht_system_num("direct_map_splits");
	buf = it_alloc_fd(ion, 4 * KiB, ION_HEAP_SYSTEM_MASK, 0);
	c1 = cg_current();
	if (buf >= 0)
		phys = ht_buf_phys(tfd, buf);
	if (phys)
		ret = ht_phys_attr(tfd, phys, &a);
	tap_diag("memory.current %lld -> %lld; charged blocks %lld -> %lld, chunks %lld -> %lld; cache bits %#llx, %u KiB entry",
		 c0, c1, blocks0, ht_system_num("uncached_charged_blocks"),
		 chunks0, ht_system_num("uncached_charged_chunks"),
		 (unsigned long long)a.kernel_bits, a.map_kb);
	tap_ok(buf >= 0 && c0 >= 0 && c1 - c0 >= BLOCK - 2 * BATCH,
	       "a cgroup's 4 KiB uncached buffer is charged a whole 2 MiB block");
	tap_ok(!ret && a.kernel_bits == X86_PAGE_PWT &&
	       ht_system_num("uncached_charged_blocks") > blocks0 &&
	       ht_system_num("uncached_charged_chunks") > chunks0 &&
	       splits0 >= 0 &&
	       ht_system_num("direct_map_splits") == splits0,
	       "it is a write-combining chunk of a charged block, converted without a split");
	if (buf >= 0)
		close(buf);
}

static void direct_map_case(int ion)
{
	long long chunks0 = ht_system_num("uncached_charged_chunks");
	long long fb0 = ht_system_num("uncached_fallback_chunks");
	struct ht_dm before, after;
	int ret;

	ret = ht_dm_rounds(ion, ROUNDS, it_seed(), &before, &after);
	if (ret == -ENOENT) {
		tap_skip("the direct map stays whole", "no DirectMap4k");
		return;
	}
	tap_diag("in a cgroup: charged chunks %lld -> %lld; fallback chunks %lld -> %lld",
		 chunks0, ht_system_num("uncached_charged_chunks"), fb0,
		 ht_system_num("uncached_fallback_chunks"));
	tap_ok(!ret && after.dm4k_kb - before.dm4k_kb <= 2048 &&
	       after.splits == before.splits &&
	       ht_system_num("uncached_charged_chunks") > chunks0,
	       "the direct map stays whole over %d mixed uncached rounds in a cgroup",
	       ROUNDS);
}

static void zero_case(int ion)
{
	static const size_t lens[] = { 4 * KiB, 64 * KiB, 1 * MiB,
				       1 * MiB + 68 * KiB };
	struct it_param cap;
	unsigned int i;
	int pin, ret;

	if (it_param_save(&cap, "pool_max_mb")) {
		tap_ok(0, "pool_max_mb readable");
		return;
	}
	ret = it_param_set("pool_max_mb", "0");
	if (!ret)
		ret = ht_drop_pools();
	/* Holds its block: the freed chunks go back to it, dirty. */
	pin = it_alloc_fd(ion, 4 * KiB, ION_HEAP_SYSTEM_MASK, 0);
	if (pin < 0)
		ret = pin;
	for (i = 0; i < IT_ARRAY_SIZE(lens) && !ret; i++) {
		ret = ht_fill_free(ion, lens[i], ION_HEAP_TYPE_SYSTEM, 0,
				   i + 21);
		if (!ret)
			ret = ht_new_zeroed(ion, lens[i], ION_HEAP_TYPE_SYSTEM,
					    0);
	}
	tap_ok(!ret && ht_system_num("uncached_charged_blocks") > 0,
	       "chunks cut again from a charged block are zeroed");
	if (pin >= 0)
		close(pin);
	it_param_restore(&cap);
}

static long long cg_oom_events(void)
{
	char *text, *p;
	long long v = -1;

	if (it_read_file(CG "/memory.events", &text) < 0)
		return -1;
	p = strstr(text, "oom ");
	if (p)
		v = atoll(p + 4);
	free(text);
	return v;
}

/* No room for a 2 MiB block under memory.max: the chunk alone. */
static void limit_case(int ion)
{
	long long fb0 = ht_system_num("uncached_fallback_chunks");
	long long oom0 = cg_oom_events(), c0 = cg_reclaimed();
	char max[32];
	int buf = -EIO;

	snprintf(max, sizeof(max), "%lld", c0 + (long long)MiB);
	if (c0 >= 0 && !ht_write_str(CG "/memory.max", max, 0))
		buf = it_alloc_fd(ion, 4 * KiB, ION_HEAP_SYSTEM_MASK, 0);
	tap_diag("memory.max %s: buffer %d, fallback chunks %lld -> %lld, oom events %lld -> %lld",
		 max, buf, fb0, ht_system_num("uncached_fallback_chunks"),
		 oom0, cg_oom_events());
	tap_ok(buf >= 0 && fb0 >= 0 && oom0 >= 0 &&
	       ht_system_num("uncached_fallback_chunks") > fb0 &&
	       cg_oom_events() == oom0,
	       "a cgroup that cannot be charged a block gets its chunk converted alone, no OOM");
	if (buf >= 0)
		close(buf);
	if (ht_write_str(CG "/memory.max", "max", 0))
		tap_diag("could not lift memory.max");
}

static void reclaim_case(int ion, long long c0)
{
	long long c1, c2;
	int bufs[4], i;

	for (i = 0; i < 4; i++)
		bufs[i] = it_alloc_fd(ion, (i + 1) * 768 * KiB,
				      ION_HEAP_SYSTEM_MASK, 0);
	c1 = cg_current();
	for (i = 0; i < 4; i++)
		if (bufs[i] >= 0)
			close(bufs[i]);
	c2 = cg_reclaimed();
	/* The slab of closed dma-buf files goes after an RCU grace period. */
	for (i = 0; i < 20 && c2 > c0 + BLOCK / 2; i++) {
		usleep(100000);
		c2 = cg_reclaimed();
	}
	tap_diag("memory.current: %lld at the start, %lld with 7.5 MiB live, %lld after memory.reclaim; charged blocks %lld",
		 c0, c1, c2, ht_system_num("uncached_charged_blocks"));
	tap_ok(bufs[3] >= 0 && c1 - c0 >= 7 * (long long)MiB,
	       "the cgroup's memory.current holds its live buffers' blocks");
	tap_ok(c2 >= 0 && c2 < c0 + BLOCK / 2 &&
	       ht_system_num("uncached_charged_blocks") == 0,
	       "after the frees memory.reclaim gives every charged block back");
}

/*
 * Chunks pooled for the cgroup and a live buffer when it goes: its
 * parent's, then freed.
 */
static void rmdir_case(int ion)
{
	static const char *const warn[] = { "WARNING", "BUG", NULL };
	int kmsg = it_kmsg_open(0), buf, live, ret;

	live = it_alloc_fd(ion, 4 * KiB, ION_HEAP_SYSTEM_MASK, 0);
	buf = it_alloc_fd(ion, 1 * MiB + 4 * KiB, ION_HEAP_SYSTEM_MASK, 0);
	if (buf >= 0)
		close(buf);
	ret = buf < 0 ? buf : live < 0 ? live : ht_wait_deferred();
	tap_diag("before rmdir: charged blocks %lld, pool_charged_bytes %lld",
		 ht_system_num("uncached_charged_blocks"),
		 ht_system_num("pool_charged_bytes"));
	if (!ret)
		ret = cg_join(CG_ROOT);
	if (!ret && rmdir(CG))
		ret = -errno;
	tap_ok(!ret, "the cgroup is removed with a buffer live and chunks pooled (or freed)");
	if (live >= 0)
		close(live);
	if (!ret)
		ret = ht_drop_pools();
	tap_diag("after drop_caches: charged blocks %lld, pool_charged_bytes %lld",
		 ht_system_num("uncached_charged_blocks"),
		 ht_system_num("pool_charged_bytes"));
	tap_ok(!ret && ht_system_num("uncached_charged_blocks") == 0,
	       "then drop_caches gives its blocks back");
	tap_ok(kmsg >= 0 && it_kmsg_grep(kmsg, warn) == 0,
	       "no warning in the kernel log");
	if (kmsg >= 0)
		close(kmsg);
}

int main(void)
{
	struct it_heaps hs;
	long long c0;
	int ion, tfd, ret;

	ion = it_setup(&hs);
	if (!it_heap_find(&hs, ION_SYSTEM_HEAP_NAME) ||
	    ht_system_num("uncached_charged_blocks") < 0) {
		tap_skip("uncached blocks in a memory cgroup",
			 "no system heap, or not x86");
		close(ion);
		return tap_exit();
	}
	tfd = ht_test_open();
	ret = tfd < 0 ? tfd : cg_setup();
	if (ret) {
		tap_skip("uncached blocks in a memory cgroup",
			 tfd < 0 ? "no ion_test" : "no cgroup2 memory controller");
		rmdir(CG);
		close(ion);
		return tap_exit();
	}
	block_case(ion, tfd);
	direct_map_case(ion);
	zero_case(ion);
	limit_case(ion);
	ht_drop_pools();
	c0 = cg_reclaimed();
	reclaim_case(ion, c0);
	rmdir_case(ion);
	cg_join(CG_ROOT);
	rmdir(CG);
	close(tfd);
	close(ion);
	return tap_exit();
}
