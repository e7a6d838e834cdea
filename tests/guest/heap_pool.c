// SPDX-License-Identifier: MIT
/*
 * heap_pool: the system heap's page pools (kernel/heaps/ion_page_pool.c).
 *
 * - the pool keys are in the heap's debugfs file;
 * - pooled pages come back zeroed: buffers filled with a pattern are
 *   freed, the deferred zeroing is waited for (deferred_free_bytes: 0),
 *   the same sizes are allocated again, every chunk of them must come
 *   from the pools (pool_bytes drops by exactly their size) and every
 *   byte must be zero, cached and uncached;
 * - echo 3 > /proc/sys/vm/drop_caches empties the pools (drop_slab runs
 *   every shrinker);
 * - an isolated free of a small cached buffer (4, 8, 64 KiB: the first
 *   free for over 10 ms, nothing else waiting for the zeroing worker) is
 *   not pooled: nothing is deferred, and the pools stay empty past the
 *   worker's delay; the same free right after a 1 MiB one (joining its
 *   burst) is pooled, so are 4 KiB frees in a loop, and so is an isolated
 *   free of a small uncached buffer;
 * - memory pressure empties them: a child touches anonymous memory until
 *   shrink_count moves, never more than MemFree plus a quarter of the
 *   pools (the shrinker gives back half the pools as soon as kswapd runs,
 *   so the child stops long before anything could invoke the OOM killer,
 *   and it is the first OOM candidate anyway: oom_score_adj 1000);
 * - the cap holds: with pool_max_mb=4, freeing 12 MiB pools at most 4 MiB;
 *   a 1 MiB uncached chunk freed then is pooled in place of cached ones;
 *   lowering the cap trims the pools; at a 4 MiB cap full of four 1 MiB
 *   chunks, sixteen 64 KiB frees of the same owner are not pooled while
 *   those chunks are younger than pool_displace_ms (60000), and displace
 *   one of them and are pooled at 0 (before, never: the pools kept sizes
 *   the owner no longer asked for until memory ran short);
 * - nothing leaks across unload: free memory (MemFree plus the per-CPU
 *   free lists, ht_free_bytes()) after filling the pools with
 *   96 MiB and unloading ion.ko is back to what it was before filling them,
 *   within 8 MiB (both read after drop_caches, with the pools empty; the
 *   drop while filled, at least half the pooled bytes, shows the
 *   measurement sees pooled memory at all: not all of them, since a debug
 *   kernel's KASAN quarantine and kmemleak free memory meanwhile); the
 *   drop_caches after the unload calls every shrinker still registered,
 *   so one ion left behind would run the unloaded module's code (an Oops
 *   the rig reports).
 * Runs last what unloads ion.ko, and loads it again.
 */
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "heap_util.h"
#include "fz_common.h"

#define HEAP_FILE	HT_SYSTEM_HEAP_FILE
#define CAP_PARAM	"/sys/module/ion/parameters/pool_max_mb"

/* Sizes that take every chunk order (1 MiB, 64 KiB, 4 KiB) in mixes. */
static const size_t sizes[] = {
	4 * KiB, 64 * KiB, 1 * MiB, 1 * MiB + 68 * KiB, 3 * MiB + 4 * KiB,
};
#define NSIZES	IT_ARRAY_SIZE(sizes)

static long long mode_bytes(const char *mode)
{
	return ht_pool_mode_bytes(HEAP_FILE, mode);
}

/*
 * Allocate @n buffers of @lens, fill each with a pattern, then close them
 * all (all live at once, so the pools get every chunk of them).
 */
static int fill_free(int ion, unsigned int flags, const size_t *lens,
		     unsigned int n)
{
	int bufs[16], ret = 0;
	unsigned int i, live = 0;

	if (n > IT_ARRAY_SIZE(bufs))
		return -E2BIG;
	for (i = 0; i < n && !ret; i++) {
		int buf = it_alloc_fd(ion, lens[i], ION_HEAP_SYSTEM_MASK, flags);
		void *p;

		if (buf < 0) {
			ret = buf;
			break;
		}
		bufs[live++] = buf;
		p = ht_map(buf, lens[i]);
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		ht_cpu_begin(buf);
		it_fill(p, lens[i], i + 1);
		ht_cpu_end(buf);
		munmap(p, lens[i]);
	}
	while (live--)
		close(bufs[live]);
	return ret;
}

static void keys_case(void)
{
	static const char * const keys[] = {
		"pool_bytes", "pool_max_bytes", "deferred_free_bytes",
		"shrink_count", "shrink_freed_bytes", "pool_displaced_bytes",
		"pool_cap_freed_bytes",
		"pool_order_8_cached", "pool_order_4_cached",
		"pool_order_0_cached", "pool_order_8_uncached",
		"pool_order_4_uncached", "pool_order_0_uncached",
	};
	unsigned int i, missing = 0;
	struct it_dfs d;

	if (it_dfs_load(&d, HEAP_FILE)) {
		tap_ok(0, "pool keys in the system heap's debugfs file");
		return;
	}
	for (i = 0; i < IT_ARRAY_SIZE(keys); i++)
		if (it_dfs_num(&d, keys[i]) < 0) {
			tap_diag("missing: %s", keys[i]);
			missing++;
		}
	it_dfs_free(&d);
	tap_ok(!missing, "pool keys in the system heap's debugfs file");
}

/* Pooled chunks of @mode come back zeroed, and really from the pool. */
static void zero_case(int ion, unsigned int flags, const char *mode)
{
	int bufs[NSIZES], ret, n = 0;
	long long before, after, bad = -1;
	size_t total = 0;
	unsigned int i;

	ret = ht_drop_pools();
	if (!ret)
		ret = fill_free(ion, flags, sizes, NSIZES);
	if (!ret)
		ret = ht_wait_deferred();
	before = mode_bytes(mode);
	for (i = 0; i < NSIZES; i++)
		total += sizes[i];
	for (i = 0; !ret && i < NSIZES; i++) {
		bufs[n] = it_alloc_fd(ion, sizes[i], ION_HEAP_SYSTEM_MASK, flags);
		if (bufs[n] < 0) {
			ret = bufs[n];
			break;
		}
		n++;
	}
	after = mode_bytes(mode);
	for (i = 0; !ret && i < NSIZES; i++) {
		unsigned char *p = ht_map(bufs[i], sizes[i]);

		if (!p) {
			ret = -ENOMEM;
			break;
		}
		ht_cpu_begin(bufs[i]);
		bad = it_check_zero(p, sizes[i]);
		ht_cpu_end(bufs[i]);
		munmap(p, sizes[i]);
		if (bad >= 0) {
			tap_diag("buffer of %zu bytes: byte %lld not zero", sizes[i],
				 bad);
			break;
		}
	}
	while (n--)
		close(bufs[n]);
	if (ret)
		tap_diag("%s", strerror(-ret));
	tap_diag("%s pools: %lld bytes before reuse, %lld after, %zu reused",
		 mode, before, after, total);
	tap_ok(!ret && before - after == (long long)total,
	       "%s: the second round's chunks all come from the pools", mode);
	tap_ok(!ret && bad < 0, "%s: pooled pages come back zeroed", mode);
}

static void drop_caches_case(int ion)
{
	long long shrinks, pooled;
	int ret;

	ret = fill_free(ion, ION_FLAG_CACHED, sizes, NSIZES);
	if (!ret)
		ret = fill_free(ion, 0, sizes, NSIZES);
	if (!ret)
		ret = ht_wait_deferred();
	shrinks = ht_system_num("shrink_count");
	pooled = ht_system_num("pool_bytes");
	if (!ret)
		ret = ht_drop_pools();
	if (ret)
		tap_diag("%s", strerror(-ret));
	tap_diag("pool_bytes %lld -> %lld, shrink_count %lld -> %lld", pooled,
		 ht_system_num("pool_bytes"), shrinks, ht_system_num("shrink_count"));
	tap_ok(!ret && pooled > 0 && ht_system_num("pool_bytes") == 0 &&
	       ht_system_num("shrink_count") > shrinks,
	       "drop_caches empties the pools");
}

/* Allocate, fill and close one buffer of @len. */
static int one_free(int ion, unsigned int flags, size_t len)
{
	return fill_free(ion, flags, &len, 1);
}

static void isolated_case(int ion)
{
	static const size_t small[] = { 4 * KiB, 8 * KiB, 64 * KiB };
	long long deferred, pooled;
	unsigned int i;
	int ret;

	for (i = 0; i < IT_ARRAY_SIZE(small); i++) {
		ret = ht_drop_pools();
		if (!ret)
			ret = one_free(ion, ION_FLAG_CACHED, small[i]);
		deferred = ht_system_num("deferred_free_bytes");
		/* Past the worker's 10 ms delay: it would have run by now. */
		usleep(100000);
		pooled = ht_system_num("pool_bytes");
		tap_diag("isolated %zu KiB cached free: deferred %lld, then pool_bytes %lld",
			 small[i] / KiB, deferred, pooled);
		tap_ok(!ret && deferred == 0 && pooled == 0,
		       "an isolated %zu KiB cached free goes straight back to the page allocator",
		       small[i] / KiB);
	}

	/* Closed back to back: the 4 KiB free joins the 1 MiB one's burst. */
	ret = ht_drop_pools();
	if (!ret) {
		static const size_t burst[] = { 4 * KiB, 1 * MiB };

		ret = fill_free(ion, ION_FLAG_CACHED, burst, 2);
	}
	if (!ret)
		ret = ht_wait_deferred();
	pooled = ht_system_num("pool_order_0_cached");
	tap_diag("burst 1 MiB + 4 KiB: pool_order_0_cached %lld, pool_bytes %lld",
		 pooled, ht_system_num("pool_bytes"));
	tap_ok(!ret && pooled == (long long)(4 * KiB) &&
	       ht_system_num("pool_bytes") == (long long)(MiB + 4 * KiB),
	       "a small free that joins a burst is pooled");

	/* Back to back, a loop's frees come in a burst: pooled. */
	ret = ht_drop_pools();
	for (i = 0; !ret && i < 20; i++)
		ret = one_free(ion, ION_FLAG_CACHED, 4 * KiB);
	if (!ret)
		ret = ht_wait_deferred();
	pooled = ht_system_num("pool_order_0_cached");
	tap_ok(!ret && pooled > 0,
	       "4 KiB frees in a loop are pooled (%lld bytes after 20)", pooled);

	ret = ht_drop_pools();
	if (!ret)
		ret = one_free(ion, 0, 4 * KiB);
	if (!ret)
		ret = ht_wait_deferred();
	pooled = ht_system_num("pool_order_0_uncached");
	tap_ok(!ret && pooled == (long long)(4 * KiB),
	       "an isolated 4 KiB uncached free is pooled (%lld bytes)", pooled);
	if (!ret)
		ret = ht_drop_pools();
	if (ret)
		tap_diag("%s", strerror(-ret));
}

/*
 * The child: touch anonymous memory 4 MiB at a time until shrink_count
 * passes @shrinks, at most @limit bytes.  Exit 0 when it moved.
 */
static void pressure_child(long long shrinks, long long limit)
{
	long long done = 0;

	ht_write_str("/proc/self/oom_score_adj", "1000\n", 0);
	while (done < limit) {
		void *p = mmap(NULL, 4 * MiB, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
			       -1, 0);

		if (p == MAP_FAILED)
			_exit(2);
		done += 4 * MiB;
		if (ht_system_num("shrink_count") > shrinks) {
			printf("# child: shrinker ran after %lld MiB\n",
			       done / (long long)MiB);
			fflush(stdout);
			_exit(0);
		}
	}
	_exit(1);
}

static void pressure_case(int ion)
{
	static const size_t big[] = { 16 * MiB, 16 * MiB, 16 * MiB, 16 * MiB };
	long long shrinks, pooled, limit;
	int ret, status = -1;
	pid_t pid;

	ret = ht_drop_pools();
	if (!ret)
		ret = fill_free(ion, ION_FLAG_CACHED, big, IT_ARRAY_SIZE(big));
	if (!ret)
		ret = ht_wait_deferred();
	shrinks = ht_system_num("shrink_count");
	pooled = ht_system_num("pool_bytes");
	limit = ht_meminfo("MemFree") + pooled / 4;
	if (ret || pooled < 32 * (long long)MiB || limit < 0) {
		tap_diag("pool_bytes %lld: %s", pooled, strerror(-ret));
		tap_ok(0, "memory pressure shrinks the pools");
		return;
	}
	tap_diag("pools hold %lld MiB; the child touches at most %lld MiB",
		 pooled / (long long)MiB, limit / (long long)MiB);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		pressure_child(shrinks, limit);
	if (pid > 0)
		waitpid(pid, &status, 0);
	tap_diag("child status 0x%x; pool_bytes %lld -> %lld, shrink_count %lld -> %lld",
		 status, pooled, ht_system_num("pool_bytes"), shrinks,
		 ht_system_num("shrink_count"));
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	       ht_system_num("shrink_count") > shrinks &&
	       ht_system_num("pool_bytes") < pooled,
	       "memory pressure shrinks the pools");
}

/* The pools' 1 MiB and 64 KiB cached bytes, and what was displaced. */
struct orders {
	long long o8, o4, displaced;
};

/* Sixteen 64 KiB cached buffers freed in a burst, then pooled. */
static int small_frees(int ion, struct orders *o)
{
	size_t small[16];
	long long d0 = ht_system_num("pool_displaced_bytes");
	unsigned int i;
	int ret;

	for (i = 0; i < IT_ARRAY_SIZE(small); i++)
		small[i] = 64 * KiB;
	ret = fill_free(ion, ION_FLAG_CACHED, small, IT_ARRAY_SIZE(small));
	if (!ret)
		ret = ht_wait_deferred();
	o->o8 = ht_system_num("pool_order_8_cached");
	o->o4 = ht_system_num("pool_order_4_cached");
	o->displaced = ht_system_num("pool_displaced_bytes") - d0;
	tap_diag("16 x 64 KiB freed: pool order 8 %lld, order 4 %lld, displaced +%lld",
		 o->o8, o->o4, o->displaced);
	return ret;
}

/*
 * At the cap, full of a workload's idle 1 MiB chunks, the same owner's
 * 64 KiB frees displace one of them once it has been pooled
 * pool_displace_ms, and are pooled; before that, they are not.  The
 * chunks are uncharged: the rig runs the tests in the root cgroup.
 */
static void other_order_case(int ion)
{
	static const size_t mib[] = { MiB, MiB, MiB, MiB };
	struct it_param cap, age;
	struct orders o = { -1, -1, -1 };
	int ret;

	if (it_param_save(&cap, "pool_max_mb") ||
	    it_param_save(&age, "pool_displace_ms")) {
		tap_ok(0, "pool_max_mb and pool_displace_ms can be saved");
		return;
	}
	ret = ht_drop_pools();
	if (!ret)
		ret = it_param_set("pool_max_mb", "4");
	if (!ret)
		ret = it_param_set("pool_displace_ms", "60000");
	if (!ret)
		ret = fill_free(ion, ION_FLAG_CACHED, mib, IT_ARRAY_SIZE(mib));
	if (!ret)
		ret = ht_wait_deferred();
	if (!ret)
		ret = small_frees(ion, &o);
	tap_ok(!ret && o.o8 == 4 * MiB && o.o4 == 0 && !o.displaced,
	       "at the cap, 1 MiB chunks pooled a moment ago stay, 64 KiB frees are not pooled");
	if (!ret)
		ret = it_param_set("pool_displace_ms", "0");
	if (!ret)
		ret = small_frees(ion, &o);
	tap_ok(!ret && o.o8 == 3 * MiB && o.o4 >= 15 * 64 * (long long)KiB &&
	       o.displaced == MiB,
	       "at the cap, the owner's idle 1 MiB chunks give way to its 64 KiB frees (one displaced, the frees pooled)");
	it_param_restore(&age);
	it_param_restore(&cap);
	ht_drop_pools();
}

static void cap_case(int ion)
{
	static const size_t big[] = { 4 * MiB, 4 * MiB, 4 * MiB };
	long long cap, pooled = -1, trimmed = -1, displaced;
	struct it_param old;
	int ret;

	if (it_param_save(&old, "pool_max_mb")) {
		tap_ok(0, "the pool cap holds");
		return;
	}
	ret = ht_drop_pools();
	if (!ret)
		ret = ht_write_str(CAP_PARAM, "4\n", 0);
	cap = ht_system_num("pool_max_bytes");
	if (!ret)
		ret = fill_free(ion, ION_FLAG_CACHED, big, IT_ARRAY_SIZE(big));
	if (!ret)
		ret = ht_wait_deferred();
	pooled = ht_system_num("pool_bytes");
	tap_diag("pool_max_mb=4: pool_max_bytes %lld, pool_bytes %lld after freeing 12 MiB",
		 cap, pooled);
	tap_ok(!ret && cap == 4 * (long long)MiB && pooled > 0 && pooled <= cap,
	       "the pool cap holds");

	/* At the cap, an uncached chunk displaces cached pooled ones. */
	displaced = ht_system_num("pool_displaced_bytes");
	if (!ret)
		ret = one_free(ion, 0, 1 * MiB);
	if (!ret)
		ret = ht_wait_deferred();
	displaced = ht_system_num("pool_displaced_bytes") - displaced;
	tap_diag("then 1 MiB uncached freed: pool_order_8_uncached %lld, pool_bytes %lld, pool_displaced_bytes +%lld",
		 ht_system_num("pool_order_8_uncached"), ht_system_num("pool_bytes"),
		 displaced);
	tap_ok(!ret && ht_system_num("pool_order_8_uncached") == (long long)MiB &&
	       ht_system_num("pool_bytes") <= cap,
	       "at the cap, a freed uncached chunk takes the place of cached ones");
	tap_ok(!ret && displaced > 0 && displaced <= (long long)MiB,
	       "debugfs counts the cached chunks it displaced");

	/* Lowering the cap trims the pools when the worker next runs. */
	if (!ret)
		ret = ht_write_str(CAP_PARAM, "1\n", 0);
	if (!ret)
		ret = fill_free(ion, ION_FLAG_CACHED, sizes, 1);
	if (!ret)
		ret = ht_system_wait("pool_bytes", MiB);
	trimmed = ht_system_num("pool_bytes");
	tap_diag("pool_max_mb=1: pool_bytes %lld", trimmed);
	tap_ok(!ret && trimmed >= 0 && trimmed <= (long long)MiB,
	       "lowering the pool cap trims the pools");
	if (ret)
		tap_diag("%s", strerror(-ret));
	it_param_restore(&old);
}

/* Closes @ion: nothing of this program may hold ion.ko while it unloads. */
static void unload_case(int ion)
{
	static const size_t big[] = { 16 * MiB, 16 * MiB, 16 * MiB, 16 * MiB };
	static const size_t unc[] = { 16 * MiB, 16 * MiB };
	long long free0, free1, free2, pooled = -1;
	const long long margin = 8 * (long long)MiB;
	int ret;

	if (fz_holders("ion", 0)) {
		close(ion);
		tap_skip("nothing leaks across module unload",
			 "other modules use ion.ko");
		return;
	}
	ret = ht_drop_pools();
	free0 = ht_free_bytes();
	if (!ret)
		ret = fill_free(ion, ION_FLAG_CACHED, big, IT_ARRAY_SIZE(big));
	if (!ret)
		ret = fill_free(ion, 0, unc, IT_ARRAY_SIZE(unc));
	if (!ret)
		ret = ht_wait_deferred();
	pooled = ht_system_num("pool_bytes");
	free1 = ht_free_bytes();
	close(ion);
	if (!ret && syscall(SYS_delete_module, "ion", O_NONBLOCK))
		ret = -errno;
	/* Runs every registered shrinker: one ion left would run freed code. */
	if (!ret)
		ret = ht_write_str("/proc/sys/vm/drop_caches", "3\n", 0);
	tap_ok(!ret, "drop_caches after the unload: no shrinker of ion's "
	       "left registered (%d)", ret);
	free2 = ht_free_bytes();
	if (ret)
		tap_diag("%s", strerror(-ret));
	tap_diag("per-CPU free lists now: %lld MiB", ht_pcp_bytes() / (long long)MiB);
	tap_diag("MemFree + per-CPU lists: %lld MiB before filling the pools, %lld MiB with %lld MiB pooled, %lld MiB after unloading",
		 free0 / (long long)MiB, free1 / (long long)MiB,
		 pooled / (long long)MiB, free2 / (long long)MiB);
	tap_ok(!ret && pooled >= 96 * (long long)MiB &&
	       free0 - free1 >= pooled / 2,
	       "pooled memory shows as used in MemFree");
	tap_ok(!ret && free2 >= free0 - margin,
	       "nothing leaks across module unload");
	tap_ok(fz_load_ion(), "modprobe ion loads it again");
	tap_ok(ht_system_num("pool_bytes") == 0, "the pools start empty");
}

int main(void)
{
	struct it_heaps hs;
	int ion;

	ion = it_setup(&hs);
	if (!it_heap_find(&hs, ION_SYSTEM_HEAP_NAME)) {
		tap_skip("system heap pools", "no system heap");
		close(ion);
		return tap_exit();
	}
	keys_case();
	zero_case(ion, ION_FLAG_CACHED, "cached");
	zero_case(ion, 0, "uncached");
	drop_caches_case(ion);
	isolated_case(ion);
	cap_case(ion);
	other_order_case(ion);
	pressure_case(ion);
	unload_case(ion);	/* closes ion */
	return tap_exit();
}
