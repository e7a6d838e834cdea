// SPDX-License-Identifier: MIT
/*
 * ion-bench: what each timed run waits for or runs in: the pool hook
 * (background work of every heap with pools), ion.ko's parallel_helpers,
 * the memory cgroup of the memcg twins and the tracefs instance of the
 * +trace twin, each restored at exit.
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

#include "ion_tracefs_priv.h"
#include "ion-bench.h"

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

int pool_state(const struct impl *im, char *out, size_t n)
{
	int busy = 0;

	out[0] = 0;
	return pool_state_of(im->pool_file, out, 0, n, &busy) > 0;
}

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
uint64_t wait_quiet(void)
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
void drain_pools(void)
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
char helper_file[128];

long long helper_bytes(void)
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
int helpers_orig = -1, helpers_now = -1;
int helpers_on = 3;	/* -H: the twins' value */

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
int set_helpers(int v)
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
void setup_helpers(void)
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
int move_cgroup(int in)
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
char trace_dir[200];	/* the bench's tracefs instance */

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
int setup_tracing(void)
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
int set_context(const struct impl *im)
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
int setup_memcg(void)
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
