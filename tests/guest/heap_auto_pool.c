// SPDX-License-Identifier: MIT
/*
 * heap_auto_pool: the auto heap's scattered backings come from its own
 * page pools (kernel/heaps/ion_auto_chunks.c).
 *
 * - the pool keys are in the auto heap's debugfs file;
 * - for cached and uncached buffers: CPU-first auto buffers (scattered
 *   chunks), filled with a pattern and freed, grow the auto heap's pools
 *   of that mode by exactly their size once zeroed; the same sizes backed
 *   again (first use by mmap) shrink them by exactly that size, and read
 *   zero;
 * - echo 3 > /proc/sys/vm/drop_caches empties them;
 * - charging (memcg_charge on): a buffer allocated by this process (root
 *   cgroup) and first used by a child in another cgroup is charged to the
 *   child's cgroup (memory.current grows by its size), not before that
 *   first use; with memcg_charge=N it is not charged;
 * - a first use through a mapping that the child's cgroup cannot afford
 *   (memory.max below the buffer) ends in SIGBUS at once, with no OOM in
 *   the cgroup: the fault neither retries for ever nor kills anyone.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "heap_util.h"

#define AUTO_FILE	IT_DEBUGFS "/heaps/" ION_AUTO_HEAP_NAME

/* Each starts with a 1 MiB chunk, so no free of them is "isolated". */
static const size_t sizes[] = {
	1 * MiB + 68 * KiB, 3 * MiB + 4 * KiB, 2 * MiB,
};
#define NSIZES	IT_ARRAY_SIZE(sizes)

#define CG_ROOT		"/sys/fs/cgroup"
#define CG		CG_ROOT "/ion-auto-pool"
#define CG_PARAM	"/sys/module/ion/parameters/memcg_charge"
#define CG_LEN		(8 * MiB)
/* The kernel's per-CPU charge batch (64 pages) and page tables. */
#define CG_SLACK	(512 * KiB)

static long long auto_num(const char *key)
{
	return it_dfs_file_num(AUTO_FILE, key);
}

/* Wait for the auto pools' zeroing worker; 0 or -ETIMEDOUT after 60 s. */
static int wait_deferred(void)
{
	long long t0 = it_now_ms(), v;

	while ((v = auto_num("deferred_free_bytes")) != 0) {
		if (v < 0 || it_now_ms() - t0 > 60000) {
			tap_diag("deferred_free_bytes: %lld", v);
			return -ETIMEDOUT;
		}
		usleep(10000);
	}
	return 0;
}

/* Empty every pool: both heaps' zeroing done, then drop_caches. */
static int drop_pools(void)
{
	int ret = wait_deferred();

	return ret ? ret : ht_drop_pools();
}

/* One round of buffers of @sizes, all live at once. */
struct round {
	int bufs[NSIZES];
	unsigned char *p[NSIZES];
	unsigned int n;
};

/* Close every buffer of @r. */
static void release(struct round *r)
{
	while (r->n--) {
		munmap(r->p[r->n], sizes[r->n]);
		close(r->bufs[r->n]);
	}
	r->n = 0;
}

/*
 * Back auto buffers of @sizes by their first CPU use (mmap), each of
 * which must read zero with @check, then fill them with a pattern; they
 * stay live in @r (released on error).
 */
static int back(int ion, unsigned int flags, int check, struct round *r)
{
	unsigned int i;
	long bad;

	for (r->n = 0, i = 0; i < NSIZES; i++) {
		r->bufs[i] = ht_alloc_map(ion, sizes[i], ION_HEAP_AUTO_ID,
					  flags, &r->p[i]);
		if (r->bufs[i] < 0) {
			release(r);
			return r->bufs[i];
		}
		r->n++;
		bad = check ? it_check_zero(r->p[i], sizes[i]) : -1;
		if (bad >= 0) {
			tap_diag("buffer of %zu bytes: byte %ld not zero",
				 sizes[i], bad);
			release(r);
			return -EILSEQ;
		}
		it_fill(r->p[i], sizes[i], i + 1);
		ht_cpu_end(r->bufs[i]);
	}
	return 0;
}

/* A round backed, filled and freed, and the pools' zeroing waited for. */
static int use_free(int ion, unsigned int flags)
{
	struct round r;
	int ret = back(ion, flags, 0, &r);

	release(&r);
	return ret ? ret : wait_deferred();
}

static void keys_case(void)
{
	static const char *const keys[] = {
		"pool_bytes", "deferred_free_bytes", "pool_order_8_cached",
		"pool_order_4_cached", "pool_order_0_cached",
		"pool_order_8_uncached", "pool_order_4_uncached",
		"pool_order_0_uncached", "pool_displaced_bytes",
		"pool_cap_freed_bytes",
	};
	unsigned int i, missing = 0;

	for (i = 0; i < IT_ARRAY_SIZE(keys); i++) {
		if (auto_num(keys[i]) < 0) {
			tap_diag("no %s in %s", keys[i], AUTO_FILE);
			missing++;
		}
	}
	tap_ok(!missing, "pool keys in the auto heap's debugfs file");
}

/* Freed backings are pooled, and the next first uses take them, zeroed. */
static void reuse_case(int ion, unsigned int flags, const char *mode)
{
	long long empty, pooled = -1, after = -1;
	struct round r;
	size_t total = 0;
	unsigned int i;
	int ret;

	for (i = 0; i < NSIZES; i++)
		total += sizes[i];
	ret = drop_pools();
	empty = ht_pool_mode_bytes(AUTO_FILE, mode);
	if (!ret)
		ret = use_free(ion, flags);
	pooled = ht_pool_mode_bytes(AUTO_FILE, mode);
	if (!ret)
		ret = back(ion, flags, 1, &r);
	after = ht_pool_mode_bytes(AUTO_FILE, mode);
	if (!ret)
		release(&r);
	if (ret)
		tap_diag("%s", strerror(-ret));
	tap_diag("%s pools: %lld bytes empty, %lld after the free, %lld after reuse, %zu used",
		 mode, empty, pooled, after, total);
	tap_ok(!ret && empty == 0 && pooled == (long long)total,
	       "%s: a freed auto backing goes to the auto heap's pools", mode);
	tap_ok(!ret && pooled - after == (long long)total,
	       "%s: the next first uses take every chunk from the pools, zeroed",
	       mode);
	wait_deferred();
}

static void drop_caches_case(int ion)
{
	long long pooled;
	int ret;

	ret = use_free(ion, ION_FLAG_CACHED);
	pooled = auto_num("pool_bytes");
	if (!ret)
		ret = ht_write_str("/proc/sys/vm/drop_caches", "3\n", 0);
	tap_diag("pool_bytes %lld -> %lld", pooled, auto_num("pool_bytes"));
	tap_ok(!ret && pooled > 0 && auto_num("pool_bytes") == 0,
	       "drop_caches empties the auto heap's pools");
}

static long long cg_current(void)
{
	return it_cg_num(CG, "memory.current", NULL);
}

/*
 * In a child: join CG, then first-use @buf (@len bytes) by mmap and a
 * write to every page.  Exits 0 when memory.current grew by at least
 * @len - CG_SLACK (@charged) or by less than CG_SLACK (!@charged).
 */
static void first_use_child(int buf, size_t len, int charged)
{
	char pid[16];
	long long before, grew;
	unsigned char *p;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (ht_write_str(CG "/cgroup.procs", pid, 0))
		_exit(2);
	before = cg_current();
	p = ht_map(buf, len);
	if (!p)
		_exit(3);
	it_fill(p, len, 7);
	grew = cg_current() - before;
	munmap(p, len);
	tap_diag("child in %s: memory.current grew by %lld KiB at first use",
		 CG, grew / 1024);
	if (before < 0)
		_exit(4);
	_exit(charged ? grew < (long long)len - (long long)CG_SLACK :
		       grew >= (long long)CG_SLACK);
}

/* Allocate here, first use in a child in CG: charged there iff @on. */
static int charge_round(int ion, int on)
{
	long long at_alloc;
	int buf, status = -1;
	pid_t pid;

	if (ht_write_str(CG_PARAM, on ? "Y\n" : "N\n", 0))
		return -EIO;
	buf = ht_alloc(ion, CG_LEN, 0, ION_HEAP_AUTO_ID, ION_FLAG_CACHED);
	if (buf < 0)
		return buf;
	at_alloc = cg_current();
	pid = fork();
	if (pid == 0)
		first_use_child(buf, CG_LEN, on);
	if (pid > 0)
		waitpid(pid, &status, 0);
	close(buf);
	tap_diag("memcg_charge=%c: memory.current %lld KiB before the first use, child exit %d",
		 on ? 'Y' : 'N', at_alloc / 1024,
		 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

static void on_sigbus(int sig)
{
	_exit(0);
}

/*
 * In a child: join CG (memory.max below @len), touch @buf's first page
 * through a mapping.  Exits 0 on SIGBUS; SIGALRM kills it if the fault
 * keeps retrying.
 */
static void over_max_child(int buf, size_t len)
{
	volatile unsigned char *p;
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (ht_write_str(CG "/cgroup.procs", pid, 0))
		_exit(2);
	p = ht_map(buf, len);
	if (!p)
		_exit(3);
	signal(SIGBUS, on_sigbus);
	alarm(20);
	p[0] = 1;
	_exit(4);	/* backed beyond memory.max */
}

/* A first use over memory.max: SIGBUS, no OOM. */
static void over_max_case(int ion)
{
	long long oom0, oom1;
	int buf, status = -1;
	pid_t pid;

	oom0 = it_cg_num(CG, "memory.events", "oom");
	buf = ht_alloc(ion, CG_LEN, 0, ION_HEAP_AUTO_ID, ION_FLAG_CACHED);
	if (buf < 0 || ht_write_str(CG "/memory.max", "2M\n", 0)) {
		tap_diag("allocate, or set memory.max: %s",
			 strerror(buf < 0 ? -buf : errno));
		tap_ok(0, "a first use over memory.max is SIGBUS");
		if (buf >= 0)
			close(buf);
		return;
	}
	pid = fork();
	if (pid == 0)
		over_max_child(buf, CG_LEN);
	if (pid > 0)
		waitpid(pid, &status, 0);
	close(buf);
	ht_write_str(CG "/memory.max", "max\n", 0);
	oom1 = it_cg_num(CG, "memory.events", "oom");
	tap_diag("child: exit %d, signal %d; memory.events oom %lld -> %lld",
		 WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		 WIFSIGNALED(status) ? WTERMSIG(status) : 0, oom0, oom1);
	tap_ok(pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status) &&
	       oom1 == oom0,
	       "a first use over memory.max is SIGBUS at once, with no OOM");
}

static void charge_case(int ion)
{
	struct it_param saved;
	struct stat st;
	int ret = 0;

	if (stat(CG_ROOT "/cgroup.controllers", &st) &&
	    mount("none", CG_ROOT, "cgroup2", 0, NULL))
		ret = -errno;
	rmdir(CG);
	if (!ret && (ht_write_str(CG_ROOT "/cgroup.subtree_control",
				  "+memory", 0) || mkdir(CG, 0755)))
		ret = -errno ? -errno : -EIO;
	if (ret) {
		tap_diag("cgroup2 with the memory controller: %s",
			 strerror(-ret));
		tap_ok(0, "cgroup2 with the memory controller");
		return;
	}
	if (it_param_save(&saved, "memcg_charge")) {
		tap_ok(0, "memcg_charge readable");
		rmdir(CG);
		return;
	}
	tap_ok(!charge_round(ion, 1),
	       "charged at first use to the first user's cgroup, not the allocator's");
	tap_ok(!charge_round(ion, 0),
	       "memcg_charge=N: the first use charges nothing");
	/* The SIGBUS at memory.max needs charging on. */
	if (it_param_set("memcg_charge", "Y"))
		tap_diag("could not turn memcg_charge back on");
	over_max_case(ion);
	it_param_restore(&saved);
	wait_deferred();
	if (rmdir(CG))
		tap_diag("rmdir %s: %s", CG, strerror(errno));
}

int main(void)
{
	struct it_heaps hs;
	int ion;

	ion = it_setup(&hs);
	if (!it_heap_find(&hs, ION_AUTO_HEAP_NAME)) {
		tap_skip("auto heap pools", "no auto heap");
		close(ion);
		return tap_exit();
	}
	keys_case();
	reuse_case(ion, ION_FLAG_CACHED, "cached");
	reuse_case(ion, 0, "uncached");
	drop_caches_case(ion);
	charge_case(ion);
	close(ion);
	return tap_exit();
}
