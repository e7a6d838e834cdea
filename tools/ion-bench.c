// SPDX-License-Identifier: MIT
/*
 * ion-bench: ion's heaps against their peers, in one boot (issue 7).
 *
 * Implementations (each one that exists in this boot):
 *   ion-<heap>          every heap HEAP_QUERY lists, through /dev/ion's fd
 *                       ABI, ION_FLAG_CACHED (ion-system, ion-system-contig,
 *                       ion-carveout, ion-dma, ...)
 *   ion-system-uncached the system heap without ION_FLAG_CACHED
 *   ion-<x>-dmaheap     /dev/dma_heap/ion-<x> (ion's dma-heap nodes; only
 *                       ion-system-dmaheap unless -i names others)
 *   dma_heap-system     mainline's /dev/dma_heap/system, the peer
 *   udmabuf             memfd + F_SEAL_SHRINK + UDMABUF_CREATE
 *   anon                anonymous mmap, every page touched
 *   memset              memset of an already mapped buffer (the limit)
 *   memset-stosb        the same with "rep stosb", as the kernel clears pages
 *
 * Ops: alloc_free_cold, alloc_free_warm, alloc_map_touch, scaling (with,
 * for ion's heaps, "<impl>+spin" and "<impl>+dfsread" rows at the most
 * buffers live: another process spins, or reads the heap's debugfs file),
 * memset, directmap (untimed: DirectMap4k over uncached rounds,
 * "@directmap"), bounce (untimed, only when -o names it: swiotlb bytes
 * bounced for QEMU's edu, "@bounce", tools/ion-bench/bounce.c);
 * see Documentation/bench.md for what each one times.
 *
 * Helper CPUs: the system heap's helper kworkers (ion.ko's parameter
 * parallel_helpers) are set explicitly, whatever the module's default:
 * every row runs with them off (0), and alloc_free_cold of buffers of
 * more than one chunk (> 1 MiB) runs once more with them on, as
 * "<impl>+helpers" (-H N helpers, default 3; by default ion-system's
 * only).  The parameter is restored at exit.
 *
 * Memory cgroups: ion-system-memcg is ion-system run from a child cgroup
 * (/sys/fs/cgroup/ion-bench) with ion.ko's memcg_charge on, so its
 * buffers are charged to that cgroup and it reuses only that cgroup's
 * pooled chunks; ion-system-memcg-off is the same with memcg_charge off.
 * They run alloc_free_cold and alloc_free_warm only, side by side, and
 * "@mpair" rows give the paired ratio of the first to the second (issue
 * 19's cost).  The bench moves itself into the cgroup, and sets the
 * parameter, before each of their runs (untimed), and back after; the
 * parameter is restored at exit.
 *
 * Tracepoints: ion-system+trace is ion-system with every ion event
 * enabled (in a tracefs instance of the bench's own, "ion-bench", whose
 * buffer records them), alloc_free_cold and alloc_free_warm only, paired
 * with ion-system in the same rounds ("@mpair" rows: traced over not).
 * The events are switched on before each of its runs and off after
 * (untimed), and the instance is removed at exit.
 *
 * The auto heap: ion-auto (delayed allocation: alloc_free exports a
 * buffer with no memory, alloc_map_touch pays the first use) is paired
 * with ion-system in every op ("@mpair" rows: auto over system).
 *
 * Every ion and dma-heap call goes through libion, and every debugfs read
 * through its reader (udmabuf is not ion's: its ioctl stays here).
 *
 * Output on stdout: progress lines "# ...", one header line and one
 * tab-separated row per case (impl op size live median_ns p99_ns runs),
 * "@wait" rows (time the warm op waited for background work), "@mpair"
 * rows (charging on over off, see above), "@helped"
 * rows (bytes that helper CPUs allocated and zeroed for ion), "@skip"
 * lines (a case that could not run, and why) and "@done" at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/udmabuf.h>

#include <ion/ion.h>

#include "ion_debugfs_priv.h"
#include "ion_tracefs_priv.h"
#include "ion-bench/ion-bench.h"

#define PAGE		4096UL
#define KiB		1024UL
#define MiB		(1024UL * KiB)
#define MAX_IMPLS	16
#define MAX_REPS	4000
#define HEAP_DEBUGFS	ION_DEBUGFS_DIR "/heaps/"
#define HELPERS_PARAM	"/sys/module/ion/parameters/parallel_helpers"
#define MEMCG_PARAM	"/sys/module/ion/parameters/memcg_charge"
#define CG_ROOT		"/sys/fs/cgroup"
#define CG_BENCH	CG_ROOT "/ion-bench"

enum kind { K_ION, K_HEAP, K_UDMABUF, K_ANON };

/*
 * One implementation.  @fd: udmabuf's /dev/udmabuf; @heap: a dma-heap
 * node; K_ION allocates from @heap_mask of the one struct ion_device.
 * @pool_file is the ion heap's debugfs file (empty for the others);
 * @pooled says it has pool counters (see pool_state()).  @helpers: the
 * value of parallel_helpers its runs have; @big_cold_only: a "+helpers"
 * twin, only in alloc_free_cold above one chunk (see run_op()).
 * @in_cgroup: runs from CG_BENCH with memcg_charge @charge (a memcg twin,
 * alloc_free_cold and alloc_free_warm only); @traced: runs with ion's
 * events on (the same two ops); @pair_with: the member its "@mpair" rows
 * compare it with.
 */
struct impl {
	char name[64];
	enum kind kind;
	int fd;
	struct ion_dma_heap *heap;
	unsigned int heap_mask, flags;
	char pool_file[128];
	int pooled;
	int helpers, big_cold_only;
	int in_cgroup, charge;
	int traced;
	const char *pair_with;
};

struct buf {
	int fd;
	void *p;
	size_t len;
};

/*
 * One timed repetition: @ns the op, @wait_ns the untimed wait after it,
 * @helped the bytes helper CPUs allocated for it (see helper_bytes()).
 */
struct sample {
	uint64_t ns, wait_ns;
	long long helped;
};

typedef int (*op_fn)(struct impl *im, size_t size, struct sample *s);

static uint64_t budget_ns = 1000000000ULL;
/* The cold group's: its runs are few and slow (see drain_pools()). */
static uint64_t cold_budget_ns = 3000000000ULL;
static int dump_samples;	/* -S: every run's time as an @sample row */
static const char *only_impls, *only_ops;
#define MAX_SIZES	8
static size_t sizes[MAX_SIZES] = { 4 * KiB, 64 * KiB, 1 * MiB, 8 * MiB, 64 * MiB };
static unsigned int nsizes = 5;
static const unsigned int live_levels[] = { 1, 1000, 10000, 100000 };
static unsigned int max_live = 100000;
static int edu_bits = 28;	/* -E: ion_test's edu_dma_bits for bounce */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void progress(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { ns / 1000000000ULL, ns % 1000000000ULL };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Is @name in the comma-separated @list (NULL: everything is)? */
static int selected(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	if (!list)
		return 1;
	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

/* ---- the pool hook ------------------------------------------------------ */

/*
 * The key lines of a heap's debugfs file @file that describe pools or
 * deferred freeing (a key containing "pool" or "deferred"), appended to
 * @out as "key: value" lines; *@busy is set when a "deferred" key is not
 * 0 (chunks still wait for background zeroing).  A heap without such keys
 * has nothing to wait for or drain.  Returns the length of @out.
 */
static size_t pool_state_of(const char *file, char *out, size_t used,
			    size_t n, int *busy)
{
	struct ion_dbg_file *f;

	if (!file[0] || ion_dbg_read(&f, ION_DBG_KEYS_ONLY, "%s", file))
		return used;
	for (unsigned int k = 0; k < ion_dbg_nkeys(f) && used < n; k++) {
		const char *key = ion_dbg_key(f, k), *val = ion_dbg_val(f, k);
		int w;

		if (!strstr(key, "pool") && !strstr(key, "deferred"))
			continue;
		if (strstr(key, "deferred") && strtoull(val, NULL, 10))
			*busy = 1;
		w = snprintf(out + used, n - used, "%s: %s\n", key, val);
		used = w < 0 ? n : used + (size_t)w;
	}
	ion_dbg_free(f);
	return used < n ? used : n - 1;
}

static int pool_state(const struct impl *im, char *out, size_t n)
{
	int busy = 0;

	out[0] = 0;
	return pool_state_of(im->pool_file, out, 0, n, &busy) > 0;
}

static struct impl impls[MAX_IMPLS];
static int nimpls;

/* The pool lines of every heap with pools, once per heap file. */
static int all_pools_state(char *out, size_t n)
{
	size_t used = 0;
	int busy = 0;

	out[0] = 0;
	for (int i = 0; i < nimpls; i++) {
		int seen = 0;

		if (!impls[i].pooled)
			continue;
		for (int j = 0; j < i && !seen; j++)
			seen = impls[j].pooled &&
			       !strcmp(impls[j].pool_file, impls[i].pool_file);
		if (!seen)
			used = pool_state_of(impls[i].pool_file, out, used, n,
					     &busy);
	}
	return busy;
}

/*
 * Let every heap's background work finish: wait until no chunk waits for
 * deferred zeroing and the pool counters of all heaps stopped changing
 * for 10 ms (at most 10 s).  The same wait runs before every
 * implementation's run, pools or not, so each timed run starts from the
 * same state: no background work anywhere, the CPU idle for at least
 * 10 ms (under TCG an idle vCPU makes the next run several times slower:
 * the prelude must be the same for all).  Returns how long the counters
 * kept changing: the background work (deferred zeroing, pool refill) the
 * timed run before did not pay for.
 */
static uint64_t wait_quiet(void)
{
	char prev[4096], cur[4096];
	uint64_t t0 = now_ns(), last = t0;
	int stable = 0, busy;

	busy = all_pools_state(prev, sizeof(prev));
	while ((busy || stable < 5) && now_ns() - t0 < 10000000000ULL) {
		sleep_ns(2000000);
		busy = all_pools_state(cur, sizeof(cur));
		if (busy || strcmp(cur, prev)) {
			memcpy(prev, cur, sizeof(prev));
			last = now_ns();
			stable = 0;
		} else {
			stable++;
		}
	}
	return last - t0;
}

/*
 * The prelude of a cold run, the same for every implementation: let all
 * background work finish, drop_caches (which runs the pool shrinkers, and
 * empties the slab and dentry caches for everyone alike), wait again.
 */
static void drain_pools(void)
{
	int fd;

	wait_quiet();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "3\n", 2) != 2)
			progress("drop_caches: %s", strerror(errno));
		close(fd);
	}
	wait_quiet();
}

/*
 * A heap that shares the zeroing of large buffers out to other CPUs counts
 * the bytes those helpers did in its debugfs key parallel_helper_bytes
 * (the system heap: Documentation/debugfs.rst).  The bench reads it around
 * every alloc_free run of every implementation alike (the same untimed
 * work before each), so that results.md can say how much of the work the
 * latency did not show went to other CPUs.  @helper_file: the first
 * heap file with the key, or empty.
 */
static char helper_file[128];

static long long helper_bytes(void)
{
	unsigned long long v;
	struct ion_dbg_file *f;
	int err;

	if (!helper_file[0] ||
	    ion_dbg_read(&f, ION_DBG_KEYS_ONLY, "%s", helper_file))
		return -1;
	err = ion_dbg_get_ull(f, "parallel_helper_bytes", &v);
	ion_dbg_free(f);
	return err ? -1 : (long long)v;
}

/*
 * ion.ko's parallel_helpers: @helpers_orig the value found at start (-1:
 * no such parameter), restored at exit; @helpers_now the value last set.
 */
static int helpers_orig = -1, helpers_now = -1;
static int helpers_on = 3;	/* -H: the twins' value */

static int read_helpers(void)
{
	char b[32];
	int fd = open(HELPERS_PARAM, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	b[n] = 0;
	return atoi(b);
}

/* Untimed, before a run's prelude: 0 or -errno. */
static int set_helpers(int v)
{
	char b[16];
	int fd, n, err = 0;

	if (helpers_orig < 0 || v == helpers_now)
		return 0;
	fd = open(HELPERS_PARAM, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(b, sizeof(b), "%d\n", v);
	if (write(fd, b, n) != n)
		err = -errno;
	close(fd);
	if (!err)
		helpers_now = v;
	return err;
}

static void restore_helpers(void)
{
	if (helpers_orig >= 0 && !set_helpers(helpers_orig))
		progress("parallel_helpers restored to %d", helpers_orig);
}

/* No stdio stream here: open, write, close of the parameter. */
static void on_fatal_signal(int sig)
{
	if (helpers_orig >= 0)
		set_helpers(helpers_orig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Off for every row but the twins': the same whatever the module default. */
static void setup_helpers(void)
{
	helpers_orig = read_helpers();
	if (helpers_orig < 0) {
		progress("parallel_helpers: no %s: no +helpers rows", HELPERS_PARAM);
		return;
	}
	if (set_helpers(0)) {
		progress("parallel_helpers: cannot set %s: %s; no +helpers rows",
			 HELPERS_PARAM, strerror(errno));
		helpers_orig = -1;
		return;
	}
	atexit(restore_helpers);
	signal(SIGINT, on_fatal_signal);
	signal(SIGTERM, on_fatal_signal);
	progress("parallel_helpers: module had %d; every row runs with 0, "
		 "the +helpers rows (alloc_free_cold above 1 MiB) with %d; "
		 "restored at exit", helpers_orig, helpers_on);
}

/* ---- memory cgroups: where a memcg twin runs ----------------------------- */

static char cg_home[280];	/* our cgroup at start, to come back to */
static int cg_in_bench;		/* we are in CG_BENCH now */
static int charge_orig = -1, charge_now = -1;

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;
	ssize_t n = (ssize_t)strlen(val);

	if (fd < 0)
		return -errno;
	if (write(fd, val, n) != n)
		err = -errno;
	close(fd);
	return err;
}

static int set_charge(int v)
{
	int err;

	if (v == charge_now)
		return 0;
	err = write_str(MEMCG_PARAM, v ? "Y\n" : "N\n");
	if (!err)
		charge_now = v;
	return err;
}

/* Move into CG_BENCH (@in) or back to our own cgroup: 0 or -errno. */
static int move_cgroup(int in)
{
	char path[320], pid[16];
	int err;

	if (in == cg_in_bench)
		return 0;
	snprintf(path, sizeof(path), "%s/cgroup.procs", in ? CG_BENCH : cg_home);
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	err = write_str(path, pid);
	if (!err)
		cg_in_bench = in;
	return err;
}

/* ---- tracepoints: ion-system+trace --------------------------------------- */

static int trace_now;		/* ion's events are on in trace_dir */
static char trace_dir[200];	/* the bench's tracefs instance */

static int set_tracing(int on)
{
	int err;

	if (on == trace_now)
		return 0;
	err = ion_tracefs_enable(trace_dir, on);
	if (!err)
		trace_now = on;
	return err;
}

static void restore_tracing(void)
{
	ion_tracefs_instance_remove(trace_dir);
}

/* The instance "ion-bench" with ion's events (off): 0, or a reason, -1. */
static int setup_tracing(void)
{
	int err = ion_tracefs_instance("ion-bench", trace_dir,
				       sizeof(trace_dir));

	if (err) {
		progress("tracing: no tracefs instance: %s: no +trace rows",
			 strerror(-err));
		return -1;
	}
	atexit(restore_tracing);
	/*
	 * An event that stays on for the whole run keeps the instance's
	 * comm recording (a probe on sched_switch) registered: otherwise
	 * every switch of ion's events would patch __schedule too, and
	 * under TCG one such patch oopsed on an int3 (Documentation/bench.md).
	 */
	if (ion_tracefs_write(trace_dir, "events/module/module_load/enable", "1"))
		progress("tracing: module_load not on: comm recording toggles");
	return 0;
}

/*
 * Untimed, before each run of @im: its cgroup and memcg_charge (the
 * module's own for every implementation but the memcg twins), and ion's
 * events (on for the +trace twin only).
 */
static int set_context(const struct impl *im)
{
	int err = move_cgroup(im->in_cgroup);

	if (!err && charge_orig >= 0)
		err = set_charge(im->in_cgroup ? im->charge : charge_orig);
	if (!err)
		err = set_tracing(im->traced);
	return err;
}

static void restore_memcg(void)
{
	move_cgroup(0);
	rmdir(CG_BENCH);
	if (charge_orig >= 0 && !set_charge(charge_orig))
		progress("memcg_charge restored to %s", charge_orig ? "Y" : "N");
}

/* Our cgroup v2 path from /proc/self/cgroup ("0::/path"), into cg_home. */
static int find_home(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/cgroup", "r");
	int ok = 0;

	if (!f)
		return 0;
	while (!ok && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(cg_home, sizeof(cg_home), CG_ROOT "%s", line + 3);
			ok = 1;
		}
	fclose(f);
	return ok;
}

/*
 * CG_BENCH with the memory controller, memcg_charge known: 0, or a reason
 * on stdout and -1 (no memcg twins).
 */
static int setup_memcg(void)
{
	struct stat st;
	char b[8] = "";
	int fd = open(MEMCG_PARAM, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, b, sizeof(b) - 1) <= 0) {
		progress("memcg: no %s: no memcg rows", MEMCG_PARAM);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	charge_orig = charge_now = b[0] == 'Y';
	if (stat(CG_ROOT "/cgroup.controllers", &st) &&
	    mount("none", CG_ROOT, "cgroup2", 0, NULL)) {
		progress("memcg: cannot mount cgroup2: %s: no memcg rows",
			 strerror(errno));
		return -1;
	}
	rmdir(CG_BENCH);
	if (!find_home() ||
	    write_str(CG_ROOT "/cgroup.subtree_control", "+memory") ||
	    mkdir(CG_BENCH, 0755)) {
		progress("memcg: cannot make %s: %s: no memcg rows", CG_BENCH,
			 strerror(errno));
		return -1;
	}
	atexit(restore_memcg);
	return 0;
}

/* ---- allocation, one function per kind ---------------------------------- */

static struct ion_device *iondev;
static const struct ion_heap_data *memcg_heap;	/* the system heap */

static int ion_dev_alloc_fd(struct impl *im, size_t size)
{
	return ion_device_alloc(iondev, size, im->heap_mask, im->flags);
}

static int heap_alloc_fd(struct impl *im, size_t size)
{
	return ion_dma_heap_alloc(im->heap, size, 0);	/* O_RDWR | O_CLOEXEC */
}

/* Not an ion device: its one ioctl stays here. */
static int udmabuf_alloc_fd(struct impl *im, size_t size)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = size };
	int memfd, fd, err = 0;

	memfd = memfd_create("ion-bench", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0)
		return -errno;
	if (ftruncate(memfd, size) || fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		err = -errno;
	c.memfd = memfd;
	fd = err ? -1 : ioctl(im->fd, UDMABUF_CREATE, &c);
	if (!err && fd < 0)
		err = -errno;
	close(memfd);	/* the udmabuf keeps the pages */
	return err ? err : fd;
}

/* Allocate: a dma-buf fd, or for anon a mapping with every page touched. */
static int buf_alloc(struct impl *im, size_t size, struct buf *b)
{
	int fd;

	b->len = size;
	b->p = NULL;
	b->fd = -1;
	switch (im->kind) {
	case K_ANON:
		b->p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b->p == MAP_FAILED)
			return -errno;
		for (size_t off = 0; off < size; off += PAGE)
			((volatile char *)b->p)[off] = 1;
		return 0;
	case K_ION:
		fd = ion_dev_alloc_fd(im, size);
		break;
	case K_HEAP:
		fd = heap_alloc_fd(im, size);
		break;
	default:
		fd = udmabuf_alloc_fd(im, size);
		break;
	}
	if (fd < 0)
		return fd;
	b->fd = fd;
	return 0;
}

static void buf_free(struct buf *b)
{
	if (b->p)
		munmap(b->p, b->len);
	if (b->fd >= 0)
		close(b->fd);
}

/* ---- the ops: each times its own critical part --------------------------- */

/* One allocation and its free, timed together. */
static int timed_alloc_free(struct impl *im, size_t size, struct sample *s)
{
	long long h0 = helper_bytes(), h1;
	struct buf b;
	uint64_t t0;
	int err;

	t0 = now_ns();
	err = buf_alloc(im, size, &b);
	if (err)
		return err;
	buf_free(&b);
	s->ns = now_ns() - t0;
	h1 = helper_bytes();
	s->helped = h0 >= 0 && h1 >= h0 ? h1 - h0 : 0;
	return 0;
}

/*
 * Cold: nothing pooled, no background work, for every implementation.
 * The helper setting changes (if at all) before the prelude's waits.
 */
static int op_alloc_free_cold(struct impl *im, size_t size, struct sample *s)
{
	int err = set_helpers(im->helpers);

	if (err)
		return err;
	drain_pools();
	return timed_alloc_free(im, size, s);
}

/*
 * Warm: the pools refilled by what the previous runs freed.  The wait
 * after the run (for every implementation, see wait_quiet()) is this
 * run's background work, reported apart.
 */
static int op_alloc_free_warm(struct impl *im, size_t size, struct sample *s)
{
	int err = timed_alloc_free(im, size, s);

	s->wait_ns = wait_quiet();
	return err;
}

static int op_alloc_map_touch(struct impl *im, size_t size, struct sample *s)
{
	struct buf b;
	uint64_t t0;
	char *p;
	int err;

	t0 = now_ns();
	err = buf_alloc(im, size, &b);	/* anon: mapped and touched already */
	if (err)
		return err;
	if (im->kind != K_ANON) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, b.fd, 0);
		if (p == MAP_FAILED) {
			err = -errno;
			buf_free(&b);
			return err;
		}
		err = ion_buffer_begin_cpu_access(b.fd, ION_CPU_WRITE);
		for (size_t off = 0; off < size; off += PAGE)
			((volatile char *)p)[off] = 1;
		if (!err)
			err = ion_buffer_end_cpu_access(b.fd, ION_CPU_WRITE);
		munmap(p, size);
	}
	buf_free(&b);
	s->ns = now_ns() - t0;
	return err;
}

static void *memset_buf;

/* In the cold group, so with the cold prelude too: the same for all. */
static int op_memset(struct impl *im, size_t size, struct sample *s)
{
	uint64_t t0;

	drain_pools();
	t0 = now_ns();

	memset(memset_buf, 0, size);
	__asm__ volatile("" : : "r"(memset_buf) : "memory");
	s->ns = now_ns() - t0;
	return 0;
}

/*
 * The kernel clears pages with "rep stosb" on x86 (clear_page_erms); under
 * TCG that is much faster than glibc's vector memset, so the bench also
 * reports it as the limit "memset-stosb".
 */
#ifdef __x86_64__
#define HAVE_STOSB 1
static int op_memset_stosb(struct impl *im, size_t size, struct sample *s)
{
	void *dst = memset_buf;
	size_t n = size;
	uint64_t t0;

	drain_pools();
	t0 = now_ns();

	__asm__ volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(0) : "memory");
	s->ns = now_ns() - t0;
	return 0;
}
#else
#define HAVE_STOSB 0
#define op_memset_stosb op_memset
#endif

/* ---- running cases -------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median and p99 (nearest rank) of @n values, sorted in place. */
static void stats(uint64_t *v, unsigned int n, uint64_t *med, uint64_t *p99)
{
	unsigned int r = (99 * n + 99) / 100;

	qsort(v, n, sizeof(*v), cmp_u64);
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*p99 = v[(r ? r : 1) - 1];
}

/* Repetitions: at least MIN_REPS, more as the budget allows, capped by size. */
#define MIN_REPS	7

static unsigned int max_reps(size_t size)
{
	if (size <= 4 * KiB)
		return MAX_REPS;
	if (size <= 64 * KiB)
		return 2000;
	if (size <= 1 * MiB)
		return 500;
	if (size <= 8 * MiB)
		return 100;
	return 40;
}

static void skip(const char *impl, const char *op, size_t size,
		 const char *why)
{
	progress("%s %s %zu: skipped: %s", impl, op, size, why);
	printf("@skip\t%s\t%s\t%zu\t%s\n", impl, op, size, why);
}

/* One implementation's share of a group: its op, samples and state. */
struct member {
	struct impl *im;
	const char *op;
	op_fn fn;
	unsigned int n;
	int err;
	struct sample s[MAX_REPS];
};

static struct member members[MAX_IMPLS + 1];

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Paired ratios: run i of every member of a group is in round i, next to
 * its peer's run i in time, so the median of the per-round ratios cancels
 * load that drifts between rounds (the ratio of medians does not).
 * Returns the rounds compared (0: none) and the median in *ratio.
 */
static unsigned int paired_median(const struct member *m,
				  const struct member *peer, double *ratio)
{
	static double r[MAX_REPS];
	unsigned int k, n = m->n < peer->n ? m->n : peer->n;

	if (!n)
		return 0;
	for (k = 0; k < n; k++)
		r[k] = peer->s[k].ns ? (double)m->s[k].ns / peer->s[k].ns : 0;
	qsort(r, n, sizeof(*r), cmp_double);
	*ratio = n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
	return n;
}

static const struct member *find_member(unsigned int nm, const char *name)
{
	for (unsigned int i = 0; name && i < nm; i++)
		if (!strcmp(members[i].im->name, name))
			return &members[i];
	return NULL;
}

/*
 * "@pair impl op size live median_ratio rounds": every member's paired
 * ratio to dma_heap-system; "@mpair impl peer op size live median_ratio
 * rounds": that of each member with a pair_with to that member (charging
 * on over off).
 */
static void report_pairs(unsigned int nm, size_t size, unsigned int live)
{
	const struct member *base = find_member(nm, "dma_heap-system");
	unsigned int i, n;
	double ratio;

	for (i = 0; i < nm; i++) {
		const struct member *m = &members[i];
		const struct member *peer = find_member(nm, m->im->pair_with);

		n = base && m != base ? paired_median(m, base, &ratio) : 0;
		if (n)
			printf("@pair\t%s\t%s\t%zu\t%u\t%.4f\t%u\n",
			       m->im->name, m->op, size, live, ratio, n);
		n = peer ? paired_median(m, peer, &ratio) : 0;
		if (n)
			printf("@mpair\t%s\t%s\t%s\t%zu\t%u\t%.4f\t%u\n",
			       m->im->name, peer->im->name, m->op, size, live,
			       ratio, n);
	}
}

/* What helper CPUs did for a case's runs, when they did anything. */
static void report_helped(const struct member *m, size_t size)
{
	long long sum = 0;
	unsigned int i, runs = 0;

	for (i = 0; i < m->n; i++) {
		sum += m->s[i].helped;
		runs += m->s[i].helped > 0;
	}
	if (!sum)
		return;
	printf("@helped\t%s\t%s\t%zu\t%lld\t%llu\t%u\t%u\n", m->im->name,
	       m->op, size, sum, (unsigned long long)size * m->n, runs, m->n);
	progress("%-20s %-16s %9zu  helper CPUs allocated %.0f %% of the bytes (in %u of %u runs)",
		 m->im->name, m->op, size, 100.0 * sum / ((double)size * m->n),
		 runs, m->n);
}

static void report(const struct member *m, size_t size, unsigned int live)
{
	uint64_t v[MAX_REPS], med, p99, wmed, wp99;

	if (!m->n) {
		skip(m->im->name, m->op, size, strerror(-m->err));
		return;
	}
	if (m->err)
		progress("%s %s %zu: stopped after %u runs: %s", m->im->name,
			 m->op, size, m->n, strerror(-m->err));
	for (unsigned int i = 0; i < m->n; i++) {
		v[i] = m->s[i].ns;
		if (dump_samples)
			printf("@sample\t%s\t%s\t%zu\t%u\t%u\t%llu\n",
			       m->im->name, m->op, size, live, i,
			       (unsigned long long)v[i]);
	}
	stats(v, m->n, &med, &p99);
	printf("%s\t%s\t%zu\t%u\t%llu\t%llu\t%u\n", m->im->name, m->op, size,
	       live, (unsigned long long)med, (unsigned long long)p99, m->n);
	progress("%-20s %-16s %9zu %6u  median %10.1f us  p99 %10.1f us  (%u runs)",
		 m->im->name, m->op, size, live, med / 1e3, p99 / 1e3, m->n);
	report_helped(m, size);
	if (m->fn != op_alloc_free_warm)
		return;
	for (unsigned int i = 0; i < m->n; i++)
		v[i] = m->s[i].wait_ns;
	stats(v, m->n, &wmed, &wp99);
	printf("@wait\t%s\t%s\t%zu\t%llu\t%llu\t%u\n", m->im->name, m->op, size,
	       (unsigned long long)wmed, (unsigned long long)wp99, m->n);
	progress("%-20s %-16s %9zu  waited for background work after: median %.1f us, p99 %.1f us",
		 m->im->name, m->op, size, wmed / 1e3, wp99 / 1e3);
}

/* xorshift64: the members' order in each round, the same in every run. */
static uint64_t order_state = 0x9e3779b97f4a7c15ULL;

static unsigned int order_rand(unsigned int n)
{
	order_state ^= order_state << 13;
	order_state ^= order_state >> 7;
	order_state ^= order_state << 17;
	return order_state % n;
}

/* A new order of @nm members for the next round (Fisher-Yates). */
static void shuffle(unsigned int *order, unsigned int nm)
{
	unsigned int i, j, t;

	for (i = 0; i < nm; i++)
		order[i] = i;
	for (i = nm - 1; i > 0; i--) {
		j = order_rand(i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
}

/*
 * Run @nm members round-robin, one repetition each per round, so that the
 * load of this shared machine weighs on all of them alike, in an order
 * shuffled every round: what ran just before changes the state a run
 * starts from (caches, the page and slab allocators' lists) by a few per
 * cent, so no member may always follow the same one.  Stops when every
 * member has its MIN_REPS runs and the group used its budget (@budget per
 * case times @nm), or when every member reached the cap for @size.
 */
static void run_group(unsigned int nm, size_t size, unsigned int live,
		      uint64_t budget)
{
	unsigned int cap = max_reps(size), i, busy, short_of_min;
	unsigned int order[MAX_IMPLS + 1];
	uint64_t t0 = now_ns();

	if (!nm)
		return;
	for (;;) {
		busy = short_of_min = 0;
		shuffle(order, nm);
		for (i = 0; i < nm; i++) {
			struct member *m = &members[order[i]];

			if (m->err || m->n >= cap)
				continue;
			busy++;
			m->s[m->n].wait_ns = 0;
			m->s[m->n].helped = 0;
			m->err = set_context(m->im);
			if (!m->err)
				m->err = m->fn(m->im, size, &m->s[m->n]);
			if (!m->err)
				m->n++;
			if (!m->err && m->n < MIN_REPS)
				short_of_min++;
		}
		if (!busy || (!short_of_min && now_ns() - t0 >= budget * nm))
			break;
	}
	for (i = 0; i < nm; i++)
		report(&members[i], size, live);
	report_pairs(nm, size, live);
	move_cgroup(0);
	fflush(stdout);
}

static void add_member(unsigned int *nm, struct impl *im, const char *op,
		       op_fn fn)
{
	struct member *m = &members[(*nm)++];

	m->im = im;
	m->op = op;
	m->fn = fn;
	m->n = 0;
	m->err = 0;
}

static struct impl memset_impl = { .name = "memset", .fd = -1, .kind = K_ANON };
static struct impl stosb_impl = { .name = "memset-stosb", .fd = -1, .kind = K_ANON };

/*
 * One op over every size.  The memset limit runs in the alloc_free_cold
 * group (as its own op "memset"), anon only with alloc_map_touch.
 */
static void run_op(const char *op, op_fn fn)
{
	int with_memset = fn == op_alloc_free_cold &&
		selected(only_ops, "memset") &&
		(selected(only_impls, "memset") || selected(only_impls, "memset-stosb"));
	int with_op = selected(only_ops, op);
	unsigned int nm;
	struct buf b;

	if (!with_op && !with_memset)
		return;
	progress("op %s%s", with_op ? op : "", with_memset ? " memset" : "");
	for (unsigned int z = 0; z < nsizes; z++) {
		nm = 0;
		memset_buf = NULL;
		if (with_memset) {
			memset_buf = mmap(NULL, sizes[z], PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS |
					  MAP_POPULATE, -1, 0);
			if (memset_buf == MAP_FAILED) {
				skip("memset", "memset", sizes[z], strerror(errno));
				memset_buf = NULL;
			} else {
				memset(memset_buf, 1, sizes[z]);
				if (selected(only_impls, "memset"))
					add_member(&nm, &memset_impl, "memset",
						   op_memset);
				if (HAVE_STOSB && selected(only_impls, "memset-stosb"))
					add_member(&nm, &stosb_impl, "memset",
						   op_memset_stosb);
			}
		}
		for (int i = 0; with_op && i < nimpls; i++) {
			struct impl *im = &impls[i];

			if (im->kind == K_ANON && fn != op_alloc_map_touch)
				continue;
			/* helpers take a buffer only above one chunk */
			if (im->big_cold_only &&
			    (fn != op_alloc_free_cold || sizes[z] <= MiB))
				continue;
			if ((im->in_cgroup || im->traced) &&
			    fn != op_alloc_free_cold && fn != op_alloc_free_warm)
				continue;
			if (fn == op_alloc_free_warm && !set_context(im) &&
			    buf_alloc(im, sizes[z], &b) == 0)
				buf_free(&b);	/* let a pool fill */
			add_member(&nm, im, op, fn);
		}
		move_cgroup(0);
		if (fn == op_alloc_free_warm)
			wait_quiet();	/* the first runs start quiet too */
		run_group(nm, sizes[z], 0,
			  fn == op_alloc_free_cold ? cold_budget_ns : budget_ns);
		set_helpers(0);	/* a twin may have run last */
		if (memset_buf)
			munmap(memset_buf, sizes[z]);
	}
}

/* ---- scaling: one 4 KiB alloc/free with many buffers live --------------- */

static int op_alloc_free_plain(struct impl *im, size_t size, struct sample *s)
{
	struct buf b;
	uint64_t t0 = now_ns();
	int err = buf_alloc(im, size, &b);

	if (err)
		return err;
	buf_free(&b);
	s->ns = now_ns() - t0;
	return 0;
}

#define FILL_LIMIT_NS	45000000000ULL	/* fill time allowed per impl */
#define HEADROOM	16		/* buffers freed when memory ran out */

/* A child's whole life: read @path from start to end, over and over. */
static void read_forever(const char *path)
{
	static char chunk[65536];

	for (;;) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			_exit(1);
		while (read(fd, chunk, sizeof(chunk)) > 0)
			;
		close(fd);
	}
}

static volatile unsigned long spins;

/*
 * Issue 17's debugfs row: with @have buffers live, the scaling group once
 * more while a child only spins ("<impl>+spin") and once while a child
 * reads the heap's debugfs file, which walks the buffer list whose lock
 * the allocation path takes ("<impl>+dfsread"); both keep the other CPU
 * busy, so only the reads differ.  The report compares their p99s.
 */
static void run_scaling_reader(struct impl *im, unsigned int have)
{
	static const char *const suffix[2] = { "+spin", "+dfsread" };
	static struct impl twin[2];

	for (int k = 0; k < 2; k++) {
		size_t n = strlen(im->name);
		unsigned int nm = 0;
		pid_t pid;

		twin[k] = *im;
		if (n + strlen(suffix[k]) >= sizeof(twin[k].name))
			return;
		memcpy(twin[k].name + n, suffix[k], strlen(suffix[k]) + 1);
		pid = fork();
		if (pid < 0) {
			progress("%s: fork: %s", twin[k].name, strerror(errno));
			return;
		}
		if (pid == 0) {
			if (k)
				read_forever(im->pool_file);
			for (;;)
				spins++;
		}
		progress("%s scaling: %u live", twin[k].name, have);
		add_member(&nm, &twin[k], "scaling", op_alloc_free_plain);
		run_group(nm, 4 * KiB, have, budget_ns);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static void run_scaling_one(struct impl *im, struct buf *live)
{
	unsigned int have = 0, made, nm, nlev = sizeof(live_levels) / sizeof(live_levels[0]);
	uint64_t t0 = now_ns();
	const char *why = NULL;
	int err = 0;

	for (unsigned int l = 0; l < nlev && live_levels[l] <= max_live; l++) {
		unsigned int want = live_levels[l];

		while (have < want && !why) {
			if (now_ns() - t0 > FILL_LIMIT_NS)
				why = "fill time limit";
			else if ((err = buf_alloc(im, 4 * KiB, &live[have])))
				why = strerror(-err);
			else
				have++;
		}
		if (why) {
			made = have;
			/* Out of memory or fds: leave room for the timed op. */
			for (unsigned int k = 0; err && k < HEADROOM && have > 1; k++)
				buf_free(&live[--have]);
			progress("%s scaling: %u of %u buffers made live (%s), measured at %u",
				 im->name, made, want, why, have);
			printf("@skip\t%s\tscaling\t%lu\tlive %u not reached: %u made (%s), measured at %u\n",
			       im->name, 4 * KiB, want, made, why, have);
		}
		nm = 0;
		add_member(&nm, im, "scaling", op_alloc_free_plain);
		run_group(nm, 4 * KiB, have, budget_ns);
		if (why)
			break;
	}
	if (!strcmp(im->name, "ion-system"))
		run_scaling_reader(im, have);
	progress("%s scaling: freeing %u buffers", im->name, have);
	while (have)
		buf_free(&live[--have]);
}

static void run_scaling(void)
{
	struct rlimit rl = { max_live + 1024, max_live + 1024 };
	struct buf *live;
	int fd;

	if (!selected(only_ops, "scaling"))
		return;
	progress("op scaling");
	if (setrlimit(RLIMIT_NOFILE, &rl))
		progress("setrlimit(RLIMIT_NOFILE, %u): %s", max_live + 1024,
			 strerror(errno));
	fd = open("/proc/sys/vm/max_map_count", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1000000\n", 8) != 8)
			progress("vm.max_map_count: %s", strerror(errno));
		close(fd);
	}
	live = calloc(max_live + 1, sizeof(*live));
	if (!live) {
		progress("scaling: out of memory");
		return;
	}
	for (int i = 0; i < nimpls; i++)
		if (!impls[i].big_cold_only && !impls[i].in_cgroup)
			run_scaling_one(&impls[i], live);
	free(live);
}

/* ---- directmap: the kernel's linear map under uncached buffers ----------- */

static unsigned int dm_rounds = 10000;	/* -R */

/* DirectMap4k of /proc/meminfo in kB, or -1 (not x86). */
static long long directmap4k_kb(void)
{
	char line[128];
	long long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "DirectMap4k:", 12))
			v = strtoll(line + 12, NULL, 10);
	fclose(f);
	return v;
}

/*
 * Issue 25's row: dm_rounds uncached alloc/free rounds of random sizes
 * from 4 KiB to 8 MiB (four live, fixed seed), DirectMap4k before, after
 * and after the pools drained: "@directmap impl rounds before_kb after_kb
 * drained_kb failed".  Untimed; the first uncached implementation only.
 */
static void run_directmap(void)
{
	struct buf live[4] = { { .fd = -1 }, { .fd = -1 },
				{ .fd = -1 }, { .fd = -1 } };
	long long before, after, drained;
	unsigned int seed = 25, failed = 0;
	struct impl *im = NULL;

	if (!selected(only_ops, "directmap"))
		return;
	for (int i = 0; i < nimpls && !im; i++)
		if (!strcmp(impls[i].name, "ion-system-uncached"))
			im = &impls[i];
	before = directmap4k_kb();
	if (!im || before < 0) {
		printf("@skip\tion-system-uncached\tdirectmap\t0\t%s\n",
		       im ? "no DirectMap4k" : "not selected");
		return;
	}
	progress("op directmap: %u rounds", dm_rounds);
	for (unsigned int r = 0; r < dm_rounds; r++) {
		struct buf *b = &live[r % 4];
		unsigned int shift = 12 + rand_r(&seed) % 12;
		size_t len = (size_t)1 << shift;

		len += (size_t)(rand_r(&seed) % (1U << (shift - 12))) * PAGE;
		if (len > 8 * MiB)
			len = 8 * MiB;
		if (b->fd >= 0)
			buf_free(b);
		b->fd = -1;
		if (buf_alloc(im, len, b))
			failed++;
	}
	for (int i = 0; i < 4; i++)
		if (live[i].fd >= 0)
			buf_free(&live[i]);
	wait_quiet();
	after = directmap4k_kb();
	drain_pools();
	drained = directmap4k_kb();
	printf("@directmap\t%s\t%u\t%lld\t%lld\t%lld\t%u\n", im->name,
	       dm_rounds, before, after, drained, failed);
}

/* ---- finding the implementations ---------------------------------------- */

/* A new implementation @name, or NULL when it is not selected (-i). */
static struct impl *add_impl(const char *name, enum kind kind)
{
	struct impl *im;

	if (nimpls == MAX_IMPLS || !selected(only_impls, name))
		return NULL;
	im = &impls[nimpls++];
	memset(im, 0, sizeof(*im));
	snprintf(im->name, sizeof(im->name), "%s", name);
	im->kind = kind;
	im->fd = -1;
	return im;
}

/* "ion_system_contig_heap" -> "ion-system-contig" */
static void ion_impl_name(const char *heap, char *out, size_t n)
{
	const char *p = strncmp(heap, "ion_", 4) ? heap : heap + 4;
	size_t len;

	snprintf(out, n, "ion-%s", p);
	len = strlen(out);
	if (len > 5 && !strcmp(out + len - 5, "_heap"))
		out[len - 5] = 0;
	for (char *c = out; *c; c++)
		if (*c == '_')
			*c = '-';
}

static void set_pool_file(struct impl *im, const char *heap)
{
	char st[2048];

	snprintf(im->pool_file, sizeof(im->pool_file), HEAP_DEBUGFS "%s", heap);
	im->pooled = pool_state(im, st, sizeof(st));
	if (im->pooled)
		progress("%s: pool counters in %s: every run waits for them",
			 im->name, im->pool_file);
	if (!helper_file[0]) {
		memcpy(helper_file, im->pool_file, sizeof(helper_file));
		if (helper_bytes() < 0)
			helper_file[0] = 0;
		else
			progress("helper CPUs' bytes in %s (parallel_helper_bytes), read around every alloc_free run",
				 helper_file);
	}
}

static void add_ion_impl(const struct ion_heap_data *h, const char *name,
			 unsigned int flags)
{
	struct impl *im = add_impl(name, K_ION);

	if (!im)
		return;
	im->heap_mask = 1U << h->heap_id;
	im->flags = flags;
	set_pool_file(im, h->name);
	/* issue 20: delayed allocation against what it defers */
	if (h->type == ION_HEAP_TYPE_AUTO)
		im->pair_with = "ion-system";
}

/* A twin of ion-system @name from the system heap @h, or NULL. */
static struct impl *add_system_twin(const char *name,
				    const struct ion_heap_data *h)
{
	struct impl *tw = add_impl(name, K_ION);

	if (!tw)
		return NULL;
	tw->heap_mask = 1U << h->heap_id;
	tw->flags = ION_FLAG_CACHED;
	set_pool_file(tw, h->name);
	return tw;
}

/*
 * The memcg twins of ion-system (see the head comment), from the system
 * heap @h, when cgroup2 and the memory controller are there; selected by
 * name, whether ion-system is or not.
 */
static void add_memcg_twins(const struct ion_heap_data *h)
{
	static const char *const names[] = {
		"ion-system-memcg", "ion-system-memcg-off",
	};
	struct impl *tw;
	int i, ready = 0;

	for (i = 0; i < 2; i++) {
		if (!selected(only_impls, names[i]))
			continue;
		if (!ready && setup_memcg())
			return;
		ready = 1;
		tw = add_system_twin(names[i], h);
		if (!tw)
			return;
		tw->in_cgroup = 1;
		tw->charge = !i;
		tw->pair_with = i ? NULL : names[1];
		progress("%s: ion-system from %s, memcg_charge %s", names[i],
			 CG_BENCH, i ? "N" : "Y");
	}
}

/*
 * ion-system+trace (see the head comment), from the system heap @h, when
 * tracefs has ion's events; selected by name.
 */
static void add_trace_twin(const struct ion_heap_data *h)
{
	struct impl *tw;

	if (!selected(only_impls, "ion-system+trace") || setup_tracing())
		return;
	tw = add_system_twin("ion-system+trace", h);
	if (!tw)
		return;
	tw->traced = 1;
	tw->pair_with = "ion-system";
	progress("ion-system+trace: ion-system with ion's events on in %s",
		 trace_dir);
}

static void find_ion(void)
{
	char name[64];
	int err, n;

	err = ion_device_open(&iondev);
	if (err) {
		progress("/dev/ion: %s: no ion implementations", strerror(-err));
		return;
	}
	n = ion_device_heap_count(iondev);
	for (int i = 0; i < n; i++) {
		const struct ion_heap_data *h = ion_device_heap(iondev, i);

		progress("ion heap %s: type %u id %u", h->name, h->type,
			 h->heap_id);
		ion_impl_name(h->name, name, sizeof(name));
		add_ion_impl(h, name, ION_FLAG_CACHED);
		if (h->type != ION_HEAP_TYPE_SYSTEM)
			continue;
		snprintf(name + strlen(name), sizeof(name) - strlen(name),
			 "-uncached");
		add_ion_impl(h, name, 0);
		memcg_heap = h;
	}
}

/* /dev/dma_heap/system and ion's own nodes /dev/dma_heap/ion-*. */
static int add_dma_heap(const char *node, void *data)
{
	int ours = !strncmp(node, "ion-", 4), err, n;
	char name[300], heap[64];
	struct impl *im;
	struct stat st;

	/* "system" is mainline's only where its class has it (ion's alias else). */
	if (!ours && (strcmp(node, "system") ||
		      stat("/sys/class/dma_heap/system", &st)))
		return 0;
	snprintf(name, sizeof(name), ours ? "%s-dmaheap" : "dma_heap-%s", node);
	if (!selected(only_impls, name))
		return 0;
	/* Bounded run time: of ion's nodes only ion-system by default. */
	if (ours && !only_impls && strcmp(name, "ion-system-dmaheap")) {
		progress("dma-heap node /dev/dma_heap/%s: not timed by default (-i %s)",
			 node, name);
		return 0;
	}
	im = add_impl(name, K_HEAP);
	if (!im)
		return 0;
	err = ion_dma_heap_open(node, &im->heap);
	if (err) {
		progress("/dev/dma_heap/%s: %s", node, strerror(-err));
		nimpls--;
		return 0;
	}
	progress("dma-heap node /dev/dma_heap/%s", node);
	n = ours ? ion_device_heap_count(iondev) : 0;
	for (int i = 0; i < n; i++) {
		const struct ion_heap_data *h = ion_device_heap(iondev, i);

		ion_impl_name(h->name, heap, sizeof(heap));
		if (!strcmp(heap, node))
			set_pool_file(im, h->name);
	}
	return 0;
}

static void find_dma_heaps(void)
{
	int err = ion_dma_heap_foreach(NULL, add_dma_heap, NULL);

	if (err)
		progress("/dev/dma_heap: %s", strerror(-err));
}

/*
 * The "+helpers" twins: implementations of the heap with helper CPUs (the
 * one whose debugfs file has parallel_helper_bytes), run once more with
 * parallel_helpers on.  By default ion-system's only, to bound the run;
 * -i names others (ion-system-uncached+helpers, ...).
 */
static void add_twins(void)
{
	char name[sizeof(impls[0].name)];
	int n = nimpls;

	if (helpers_orig < 0 || !helpers_on || !helper_file[0])
		return;
	for (int i = 0; i < n; i++) {
		struct impl *tw;

		if (strcmp(impls[i].pool_file, helper_file))
			continue;
		if (strlen(impls[i].name) + 9 > sizeof(name) - 1)
			continue;
		memcpy(name, impls[i].name, strlen(impls[i].name) + 1);
		strcat(name, "+helpers");
		if (!only_impls && strcmp(name, "ion-system+helpers"))
			continue;
		tw = add_impl(name, impls[i].kind);
		if (!tw)
			continue;
		memcpy(tw, &impls[i], sizeof(*tw));
		memcpy(tw->name, name, sizeof(name));
		tw->helpers = helpers_on;
		tw->big_cold_only = 1;
		progress("%s: %s with parallel_helpers %d, alloc_free_cold above 1 MiB",
			 name, impls[i].name, helpers_on);
	}
}

static void find_impls(void)
{
	struct impl *im;
	int c;

	find_ion();
	find_dma_heaps();
	for (c = 0; c < nimpls && strcmp(impls[c].name, "dma_heap-system"); c++)
		;
	if (c == nimpls)
		progress("note: no dma_heap-system: the report has no peer to compare with");
	im = add_impl("udmabuf", K_UDMABUF);
	if (im) {
		im->fd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
		if (im->fd < 0) {
			progress("/dev/udmabuf: %s", strerror(errno));
			nimpls--;
		}
	}
	add_impl("anon", K_ANON);
	add_twins();
	if (memcg_heap)
		add_memcg_twins(memcg_heap);
	if (memcg_heap)
		add_trace_twin(memcg_heap);
}

/* ---- main -------------------------------------------------------------------- */

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end == 'K' || *end == 'k')
		v *= KiB;
	else if (*end == 'M' || *end == 'm')
		v *= MiB;
	return v;
}

static const char usage[] =
"usage: ion-bench [-b MS] [-c MS] [-i IMPL,...] [-o OP,...] [-s SIZE,...]\n"
"                 [-H N] [-L N] [-R N] [-S]\n"
"  -b MS    time budget per case and implementation in ms (default\n"
"           1000); at least 7 runs each\n"
"  -c MS    the same for alloc_free_cold and memset (default 3000)\n"
"  -i LIST  only these implementations (names as in the output)\n"
"  -o LIST  only these ops (alloc_free_cold, alloc_free_warm,\n"
"           alloc_map_touch, scaling, memset, directmap; bounce only\n"
"           when named)\n"
"  -s LIST  sizes (4K,64K,1M,8M,64M)\n"
"  -H N     parallel_helpers of the +helpers rows (default 3; 0: none);\n"
"           every other row runs with 0\n"
"  -L N     scaling: stop at N live buffers (default 100000)\n"
"  -R N     directmap: N uncached rounds (default 10000)\n"
"  -S       also print every run's time (@sample rows, in run order)\n"
"  -E BITS  bounce: edu's DMA mask for ion_test when it loads it (28)\n";

int main(int argc, char **argv)
{
	uint64_t t0 = now_ns();
	struct utsname u;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "b:c:i:o:s:E:H:L:R:Sh")) != -1) {
		switch (c) {
		case 'b':
			budget_ns = strtoull(optarg, NULL, 10) * 1000000ULL;
			break;
		case 'c':
			cold_budget_ns = strtoull(optarg, NULL, 10) * 1000000ULL;
			break;
		case 'i':
			only_impls = optarg;
			break;
		case 'o':
			only_ops = optarg;
			break;
		case 's':
			nsizes = 0;
			for (char *t = strtok(optarg, ","); t && nsizes < MAX_SIZES;
			     t = strtok(NULL, ","))
				sizes[nsizes++] = parse_size(t);
			break;
		case 'H':
			helpers_on = atoi(optarg);
			break;
		case 'L':
			max_live = strtoul(optarg, NULL, 10);
			break;
		case 'R':
			dm_rounds = strtoul(optarg, NULL, 10);
			break;
		case 'S':
			dump_samples = 1;
			break;
		case 'E':
			edu_bits = atoi(optarg);
			break;
		default:
			fputs(usage, c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	if (uname(&u) == 0)
		progress("kernel %s %s, %ld cpus, budget %llu ms per case and implementation (alloc_free_cold: %llu ms)",
			 u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN),
			 (unsigned long long)(budget_ns / 1000000),
			 (unsigned long long)(cold_budget_ns / 1000000));
	setup_helpers();
	find_impls();
	printf("impl\top\tsize\tlive\tmedian_ns\tp99_ns\truns\n");
	run_op("alloc_free_cold", op_alloc_free_cold);
	run_op("alloc_free_warm", op_alloc_free_warm);
	run_op("alloc_map_touch", op_alloc_map_touch);
	run_scaling();
	run_directmap();
	if (only_ops && selected(only_ops, "bounce"))
		run_bounce(edu_bits);
	progress("done in %.0f s", (now_ns() - t0) / 1e9);
	printf("@done\n");
	return 0;
}
