// SPDX-License-Identifier: MIT
/*
 * heap_parallel: idle CPUs help fill large system heap buffers
 * (kernel/heaps/ion_parallel.c).
 *
 * - the keys parallel_fills and parallel_helper_bytes are in the heap's
 *   debugfs file, the module parameters parallel_helpers and
 *   parallel_min_kb exist with their defaults (0: helpers are opt-in,
 *   2048); the cases below set parallel_helpers=3 and restore it after;
 * - with the pools empty, a 32 MiB buffer, cached and uncached, is filled
 *   with help: parallel_fills moves by one, parallel_helper_bytes by more
 *   than 0 and at most 32 MiB (tried up to 3 times: a helper that never got
 *   a CPU is allowed, three in a row are not); the buffer is still made of
 *   32 chunks of 1 MiB (the pieces are cut as the whole would be), zeroed,
 *   and holds a pattern over all of its bytes (no chunk twice);
 * - no help: with parallel_helpers=0, below parallel_min_kb, when the
 *   pools hold the buffer already, for a caller bound to one CPU, and for
 *   callers at nice 1 or SCHED_BATCH; each buffer still zeroed and whole;
 * - a fatal signal stops a helped fill: a child allocating 768 MiB (or
 *   half of MemAvailable, if less; at least 128 MiB) is killed while at it (parallel_fills moved, the heap's allocs did not:
 *   the fill gave up instead of finishing), and once it is reaped no
 *   buffer is live and MemFree comes back.
 * Needs two online CPUs; SKIPs the helped cases otherwise.
 */
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>

#include "heap_util.h"

#define HELPERS_PARAM	"/sys/module/ion/parameters/parallel_helpers"
#define MIN_PARAM	"/sys/module/ion/parameters/parallel_min_kb"
#define BIG		(32 * MiB)
#define KILL_MAX	(768 * MiB)

struct counters {
	long long fills, helper_bytes;
};

static int read_counters(struct counters *c)
{
	c->fills = ht_system_num("parallel_fills");
	c->helper_bytes = ht_system_num("parallel_helper_bytes");
	return c->fills < 0 || c->helper_bytes < 0 ? -1 : 0;
}

static long long param(const char *path)
{
	char *s = NULL;
	long long v;

	if (it_read_file(path, &s) <= 0)
		return -1;
	v = strtoll(s, NULL, 10);
	free(s);
	return v;
}

static int set_param(const char *path, long long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%lld\n", v);
	return ht_write_str(path, s, 0);
}

/*
 * A buffer of @len is whole: 1 MiB chunks only (when @chunks), zeroed,
 * and every byte holds a pattern written through a mapping.
 */
static int check_buffer(int tfd, int buf, size_t len, int chunks)
{
	struct ion_test_import imp;
	long bad;
	void *p;

	if (ht_import(tfd, buf, ION_TEST_MODE_CLIENT, &imp))
		return -1;
	ht_release(tfd, imp.slot);
	if (imp.size != len || (chunks && imp.cpu_segs != len / MiB)) {
		tap_diag("size %llu, %u chunks", (unsigned long long)imp.size,
			 imp.cpu_segs);
		return -1;
	}
	p = ht_map(buf, len);
	if (!p)
		return -1;
	ht_cpu_begin(buf);
	bad = it_check_zero(p, len);
	if (bad >= 0) {
		tap_diag("byte %ld not zero", bad);
	} else {
		it_fill(p, len, 5);
		bad = it_check(p, len, 5);
		if (bad >= 0)
			tap_diag("pattern wrong at byte %ld", bad);
	}
	ht_cpu_end(buf);
	munmap(p, len);
	return bad >= 0 ? -1 : 0;
}

/*
 * Allocate @len with the pools empty; *@d gets how the counters moved.
 * The buffer fd, or -errno.
 */
static int cold_alloc(int ion, size_t len, unsigned int flags,
		      struct counters *d)
{
	struct counters a, b;
	int buf;

	if (ht_drop_pools() || read_counters(&a))
		return -EIO;
	buf = it_alloc_fd(ion, len, ION_HEAP_SYSTEM_MASK, flags);
	if (buf >= 0 && read_counters(&b)) {
		close(buf);
		return -EIO;
	}
	if (buf >= 0) {
		d->fills = b.fills - a.fills;
		d->helper_bytes = b.helper_bytes - a.helper_bytes;
	}
	return buf;
}

static void keys_case(void)
{
	struct counters c;

	tap_ok(!read_counters(&c),
	       "parallel_fills and parallel_helper_bytes in the system heap's debugfs file");
	tap_ok(param(HELPERS_PARAM) == 0 && param(MIN_PARAM) == 2048,
	       "parallel_helpers is 0 and parallel_min_kb 2048 by default");
}

static void helped_case(int ion, int tfd, unsigned int flags,
			const char *mode)
{
	struct counters d = { 0 };
	int buf = -1, try, fills_ok = 1;

	for (try = 0; try < 3; try++) {
		buf = cold_alloc(ion, BIG, flags, &d);
		if (buf < 0)
			break;
		if (d.fills != 1)
			fills_ok = 0;
		if (d.helper_bytes > 0)
			break;
		tap_diag("%s try %d: no helper took part", mode, try + 1);
		close(buf);
		buf = -1;
	}
	if (buf < 0) {
		tap_ok(0, "%s 32 MiB with empty pools: helpers filled part of it",
		       mode);
		return;
	}
	tap_diag("%s: helpers filled %lld of %lu bytes", mode, d.helper_bytes,
		 BIG);
	tap_ok(fills_ok && d.helper_bytes <= (long long)BIG &&
	       d.helper_bytes % (long long)MiB == 0,
	       "%s 32 MiB with empty pools: helpers filled part of it (parallel_fills +1, whole chunks)",
	       mode);
	tap_ok(!check_buffer(tfd, buf, BIG, 1),
	       "%s helped buffer: 32 chunks of 1 MiB, zeroed, every byte its own",
	       mode);
	close(buf);
}

/* A cold allocation of @len that must not be helped: @why names it. */
static void unhelped(int ion, int tfd, size_t len, const char *why)
{
	struct counters d = { -1, -1 };
	int buf = cold_alloc(ion, len, ION_FLAG_CACHED, &d);

	if (buf < 0) {
		tap_ok(0, "%s: allocated (%s)", why, strerror(-buf));
		return;
	}
	if (d.fills || d.helper_bytes)
		tap_diag("parallel_fills +%lld, helper bytes +%lld", d.fills,
			 d.helper_bytes);
	tap_ok(!d.fills && !d.helper_bytes, "%s: no helpers", why);
	tap_ok(!check_buffer(tfd, buf, len, len % MiB == 0),
	       "%s: buffer zeroed and whole", why);
	close(buf);
}

static void params_case(int ion, int tfd)
{
	if (set_param(HELPERS_PARAM, 0)) {
		tap_ok(0, "parallel_helpers=0 written");
		return;
	}
	unhelped(ion, tfd, BIG, "parallel_helpers=0, 32 MiB");
	set_param(HELPERS_PARAM, 3);
	if (set_param(MIN_PARAM, 65536)) {
		tap_ok(0, "parallel_min_kb=65536 written");
		return;
	}
	unhelped(ion, tfd, BIG, "parallel_min_kb=65536, 32 MiB");
	set_param(MIN_PARAM, 2048);
	unhelped(ion, tfd, 2 * MiB - 4 * KiB, "2 MiB - 4 KiB, below 2048 KiB");
}

/* The pools hold the buffer already: nothing to zero, nobody to help. */
static void warm_case(int ion, int tfd)
{
	struct counters a, b;
	int buf;

	buf = cold_alloc(ion, BIG, ION_FLAG_CACHED, &a);
	if (buf < 0) {
		tap_ok(0, "32 MiB allocated to fill the pools");
		return;
	}
	close(buf);
	if (ht_wait_deferred() || read_counters(&a)) {
		tap_ok(0, "freed buffer pooled");
		return;
	}
	tap_diag("pool_bytes %lld", ht_system_num("pool_bytes"));
	buf = it_alloc_fd(ion, BIG, ION_HEAP_SYSTEM_MASK, ION_FLAG_CACHED);
	read_counters(&b);
	tap_ok(buf >= 0 && b.fills == a.fills,
	       "32 MiB the pools hold: no helpers");
	if (buf >= 0)
		close(buf);
}

/* A caller allowed one CPU only gets no helpers (they would run elsewhere). */
static void confined_case(int ion, int tfd)
{
	cpu_set_t all, one;

	if (sched_getaffinity(0, sizeof(all), &all)) {
		tap_ok(0, "sched_getaffinity");
		return;
	}
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		tap_ok(0, "sched_setaffinity to one CPU");
		return;
	}
	unhelped(ion, tfd, BIG, "caller bound to one CPU, 32 MiB");
	sched_setaffinity(0, sizeof(all), &all);
}

/*
 * A niced or batch caller gets no helpers (they would work at a priority
 * it does not have); a child, so the test's own priority stays as it was.
 */
static void priority_case(int ion, int tfd)
{
	static const struct {
		const char *name;
		int nice, policy;
	} cases[] = {
		{ "caller at nice 1, 32 MiB", 1, SCHED_OTHER },
		{ "SCHED_BATCH caller, 32 MiB", 0, SCHED_BATCH },
	};
	unsigned int i;

	for (i = 0; i < IT_ARRAY_SIZE(cases); i++) {
		struct sched_param sp = { 0 };
		int status = 0;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			if (setpriority(PRIO_PROCESS, 0, cases[i].nice) ||
			    sched_setscheduler(0, cases[i].policy, &sp))
				_exit(2);
			unhelped(ion, tfd, BIG, cases[i].name);
			_exit(tap_failed ? 1 : 0);
		}
		waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) == 2)
			tap_ok(0, "%s: child set up", cases[i].name);
		else if (WEXITSTATUS(status))
			tap_failed++;	/* the child printed which case */
	}
}

/* The child: announce the allocation, then report if it ever returns. */
static void kill_child(int wfd, size_t len)
{
	int ion = open(IT_DEV, O_RDWR | O_CLOEXEC), buf;

	if (ion < 0 || write(wfd, "s", 1) != 1)
		_exit(2);
	buf = it_alloc_fd(ion, len, ION_HEAP_SYSTEM_MASK, ION_FLAG_CACHED);
	if (write(wfd, buf >= 0 ? "d" : "e", 1) != 1)
		_exit(3);
	_exit(0);
}

static void kill_case(void)
{
	long long free0, free1, bufs0 = -1, bufs1 = -1, bytes, allocs;
	struct counters a, b;
	int pfd[2], status = 0;
	long long avail = ht_meminfo("MemAvailable");
	size_t len = avail / 2 / MiB * MiB;
	char c = 0, after = 0;
	pid_t pid;

	if (len > KILL_MAX)
		len = KILL_MAX;
	if (len < 128 * MiB) {
		tap_skip("SIGKILL during a helped fill", "less than 256 MiB available");
		return;
	}
	if (ht_drop_pools() || read_counters(&a) || it_summary(&bufs0, &bytes) ||
	    pipe2(pfd, O_CLOEXEC)) {
		tap_ok(0, "SIGKILL during a helped fill: set up");
		return;
	}
	free0 = ht_meminfo("MemFree");
	allocs = ht_system_num("allocs");
	pid = fork();
	if (pid == 0)
		kill_child(pfd[1], len);
	close(pfd[1]);
	if (pid < 0 || read(pfd[0], &c, 1) != 1) {
		tap_ok(0, "SIGKILL during a helped fill: child started");
		close(pfd[0]);
		return;
	}
	usleep(20000);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (read(pfd[0], &after, 1) != 1)
		after = 0;
	close(pfd[0]);
	read_counters(&b);
	tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !after &&
	       b.fills == a.fills + 1 && ht_system_num("allocs") == allocs,
	       "SIGKILL during a helped %zu MiB fill: the fill stops, no buffer made",
	       len / MiB);
	if (after)
		tap_diag("the ioctl returned first (%c)", after);
	ht_drop_pools();
	free1 = ht_meminfo("MemFree");
	it_summary(&bufs1, &bytes);
	tap_diag("MemFree %lld MiB before, %lld MiB after", free0 >> 20,
		 free1 >> 20);
	tap_ok(bufs1 == bufs0 && free1 > free0 - 32 * (long long)MiB,
	       "after the kill: no buffer left, MemFree back (within 32 MiB)");
}

int main(void)
{
	struct it_heaps hs;
	struct it_param helpers0, min0;
	int ion, tfd;

	ion = it_setup(&hs);
	if (!it_heap_find(&hs, ION_SYSTEM_HEAP_NAME)) {
		tap_skip("parallel fills", "no system heap");
		return tap_exit();
	}
	keys_case();
	tfd = ht_test_open();
	if (tfd < 0) {
		tap_ok(0, "open %s", HT_TEST_DEV);
		return tap_exit();
	}
	if (it_param_save(&helpers0, "parallel_helpers") ||
	    it_param_save(&min0, "parallel_min_kb")) {
		tap_ok(0, "parallel_helpers and parallel_min_kb readable");
		return tap_exit();
	}
	set_param(HELPERS_PARAM, 3);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		tap_skip("helped fills", "one CPU online");
	} else {
		helped_case(ion, tfd, ION_FLAG_CACHED, "cached");
		helped_case(ion, tfd, 0, "uncached");
		kill_case();
	}
	params_case(ion, tfd);
	warm_case(ion, tfd);
	confined_case(ion, tfd);
	priority_case(ion, tfd);
	it_param_restore(&helpers0);
	it_param_restore(&min0);
	close(tfd);
	close(ion);
	return tap_exit();
}
