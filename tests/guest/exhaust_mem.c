// SPDX-License-Identifier: MIT
/*
 * Memory exhaustion: asking ion for more than the guest has fails with
 * ENOMEM, without the OOM killer, and leaves the system usable.
 *
 *  - one request larger than RAM (3 GiB in a 2 GiB guest), on every heap,
 *    through both ABIs;
 *  - many 256 MiB requests, each held, until one fails: the failure is
 *    ENOMEM (not a kill, not a hang); from the system heap through the fd
 *    ABI, from every heap through the handle ABI;
 *  - each contiguous heap (system-contig, DMA) alone, 1 MiB blocks held
 *    through the handle ABI until one fails: ENOMEM while MemAvailable,
 *    less the free CMA pages the kernel's own allocations cannot use,
 *    still has 1/32 of RAM (the heaps keep 1/16 of RAM for the rest of
 *    the system, as the system heap does);
 *  - the auto heap, buffers of RAM / 512 (4 MiB in 2 GiB) each used once
 *    (DMA_BUF_IOCTL_SYNC START backs it) and held until one fails: ENOMEM
 *    with the same 1/32 left (its backing leaves the same reserve);
 *  - the reserve counts only pooled chunks a buffer can take: 64 MiB
 *    cached with MemAvailable 32 MiB above the reserve is refused beside
 *    256 MiB of uncached pooled chunks, made from 256 MiB of cached ones;
 *  - then: the test process (and its children) survived, the kernel log
 *    has no "Out of memory" / "Killed process" line and oom_kill in
 *    /proc/vmstat did not move, everything is freed and a normal
 *    allocation works.
 *
 * The allocating runs in a child so that a kill or a hang shows as a
 * failed case; a child that hangs is killed by an alarm of HANG_S.
 */
#include <poll.h>
#include <signal.h>
#include <sys/sysinfo.h>

#include "fz_common.h"
#include "heap_util.h"

#define HUGE		(3ULL << 30)
#define CHUNK		(256ULL << 20)
#define MAX_CHUNKS	64
#define BLOCK		(1ULL << 20)
#define MAX_BLOCKS	4096
#define HANG_S		240
/* child()'s @legacy: the fd ABI, each buffer then used once (backed). */
#define FIRST_USE	2

struct report {
	int ok_count;		/* allocations that succeeded */
	int err;		/* errno of the first failure, 0 if none */
	long long fail_ms;	/* how long the failing call took */
	long long total_ms;
	long long avail;	/* avail_outside_cma() after the failure, bytes */
};

/*
 * MemAvailable less CmaFree, in bytes: free CMA pages serve only movable
 * allocations, not the kernel's own that ion's reserve is for.
 */
static long long avail_outside_cma(void)
{
	long long avail = ht_meminfo("MemAvailable");
	long long cma = ht_meminfo("CmaFree");

	return cma > 0 ? avail - cma : avail;
}

/*
 * Allocate @len (once or, when @hold, until failure) in a child, through
 * the handle ABI (@legacy 1), the fd ABI (0), or the fd ABI with a first
 * use of each buffer (FIRST_USE).
 */
static void child(int out, unsigned long long len, unsigned int mask,
		  int legacy, int hold)
{
	int max = len < CHUNK ? MAX_BLOCKS : MAX_CHUNKS;
	struct report r = { 0 };
	long long t0 = it_now_ms(), t;
	int ion = it_open(), ret, i;

	alarm(HANG_S);
	for (i = 0; i < (hold ? max : 1); i++) {
		t = it_now_ms();
		ret = ion < 0 ? ion : it_alloc_abi(ion, len, mask, 0,
						   legacy == 1);
		if (ret >= 0 && legacy == FIRST_USE)
			ret = it_sync(ret, DMA_BUF_SYNC_START |
					   DMA_BUF_SYNC_RW);
		if (ret < 0) {
			r.err = -ret;
			r.fail_ms = it_now_ms() - t;
			r.avail = avail_outside_cma();
			break;
		}
		r.ok_count++;	/* held until exit */
	}
	r.total_ms = it_now_ms() - t0;
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(3);
	_exit(0);
}

/*
 * The child @pid has not answered for HANG_S - 10 s: say where it is (its
 * kernel stack, and every CPU's backtrace in the kernel log) before its
 * alarm kills it.
 */
static void report_hang(pid_t pid)
{
	int fd;

	it_diag_stack(pid, "child");
	fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "l", 1) != 1)
			tap_diag("sysrq l: %s", strerror(errno));
		close(fd);
	}
}

static int kmsg;
static const char *const oom_lines[] = {
	"invoked oom-killer", "Out of memory", "Killed process", NULL
};

/*
 * Run one child and report its cases under @name; with @min_avail (bytes),
 * the failure must leave at least that much MemAvailable.
 */
static void run_min(const char *name, unsigned long long len,
		    unsigned int mask, int legacy, int hold,
		    long long min_avail)
{
	long long oom0 = it_vmstat("oom_kill"), oom1;
	struct report r = { .err = -1 };
	struct pollfd pfd = { .events = POLLIN };
	int p[2], status = 0, killed;
	pid_t pid;

	if (pipe(p)) {
		tap_ok(0, "%s: pipe", name);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		child(p[1], len, mask, legacy, hold);
	}
	close(p[1]);
	pfd.fd = p[0];
	if (poll(&pfd, 1, (HANG_S - 10) * 1000) == 0)
		report_hang(pid);
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r.err = -1;
	close(p[0]);
	waitpid(pid, &status, 0);
	oom1 = it_vmstat("oom_kill");
	killed = it_kmsg_grep(kmsg, oom_lines);

	if (WIFSIGNALED(status))
		tap_diag("%s: child killed by signal %d", name,
			 WTERMSIG(status));
	tap_diag("%s: %d allocations of %llu MiB, then %s after %lld ms (%lld ms in all)",
		 name, r.ok_count, len >> 20,
		 r.err > 0 ? strerror(r.err) : r.err ? "no answer" : "no failure",
		 r.fail_ms, r.total_ms);
	tap_ok(r.err == ENOMEM, "%s: fails with ENOMEM", name);
	if (min_avail)
		tap_ok(r.avail >= min_avail, "%s: and leaves %lld MiB "
		       "available outside CMA (at least %lld)", name,
		       r.avail >> 20, min_avail >> 20);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "%s: the allocating process survived", name);
	tap_ok(oom0 >= 0 && oom1 == oom0 && killed == 0,
	       "%s: no OOM kill (oom_kill %lld -> %lld, %d log lines)", name,
	       oom0, oom1, killed);
	tap_ok(fz_dfs_wait_clean(NULL, 10000),
	       "%s: everything freed after the process exited", name);
}

static void run(const char *name, unsigned long long len, unsigned int mask,
		int legacy, int hold)
{
	run_min(name, len, mask, legacy, hold, 0);
}

/*
 * A child touching anonymous memory until MemAvailable is at most
 * @target bytes; it says so on @out and holds it until killed.
 */
static pid_t hog_until(long long target, int out)
{
	const size_t step = 8 << 20;
	pid_t pid = fork();
	char *p;

	if (pid)
		return pid;
	while (ht_meminfo("MemAvailable") > target) {
		p = mmap(NULL, step, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(2);
		memset(p, 1, step);
	}
	if (write(out, "h", 1) != 1)
		_exit(2);
	pause();
	_exit(0);
}

/*
 * The reserve counts only the pooled chunks a buffer can take: with the
 * pools full of 256 MiB of one cache mode and MemAvailable 32 MiB above
 * the reserve (1/16 of RAM), a 64 MiB cached buffer is refused with
 * ENOMEM when the pooled chunks are uncached, and made from them when
 * they are cached.
 */
static void reserve_pools_case(int ion, unsigned long long total)
{
	static const unsigned int modes[] = { 0, ION_FLAG_CACHED };
	const long long reserve = total / 16, piece = 64 << 20;
	int bufs[4], pfd[2], fd, err, i, n;
	struct it_param cap;
	unsigned int m;
	char c;
	pid_t hog;

	if (total < (1ULL << 30) || total > (4ULL << 30)) {
		tap_skip("reserve and pools", "RAM not between 1 and 4 GiB");
		return;
	}
	if (it_param_save(&cap, "pool_max_mb") ||
	    it_param_set("pool_max_mb", "256")) {
		tap_ok(0, "reserve and pools: pool_max_mb=256");
		return;
	}
	for (m = 0; m < IT_ARRAY_SIZE(modes); m++) {
		const char *mode = modes[m] ? "cached" : "uncached";

		ht_drop_pools();
		for (n = 0; n < 4; n++) {
			bufs[n] = it_alloc_fd(ion, piece, ION_HEAP_SYSTEM_MASK,
					      modes[m]);
			if (bufs[n] < 0)
				break;
		}
		for (i = 0; i < n; i++)
			close(bufs[i]);
		ht_wait_deferred();
		if (pipe2(pfd, O_CLOEXEC)) {
			tap_ok(0, "reserve and pools: pipe");
			break;
		}
		hog = hog_until(reserve + (32 << 20), pfd[1]);
		close(pfd[1]);
		if (hog < 0 || read(pfd[0], &c, 1) != 1) {
			tap_ok(0, "reserve and pools: memory taken up to the reserve");
			close(pfd[0]);
			break;
		}
		close(pfd[0]);
		tap_diag("%s pools: %lld MiB pooled, MemAvailable %lld MiB, reserve %lld MiB",
			 mode, ht_system_num("pool_bytes") >> 20,
			 ht_meminfo("MemAvailable") >> 20, reserve >> 20);
		fd = it_alloc_fd(ion, piece, ION_HEAP_SYSTEM_MASK,
				 ION_FLAG_CACHED);
		err = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
		kill(hog, SIGKILL);
		waitpid(hog, NULL, 0);
		if (modes[m])
			tap_ok(!err,
			       "reserve and pools: 64 MiB cached from cached pooled chunks (%s)",
			       err ? strerror(err) : "made");
		else
			tap_ok(err == ENOMEM,
			       "reserve and pools: 64 MiB cached refused beside uncached pooled chunks (%s)",
			       err ? strerror(err) : "made");
	}
	ht_drop_pools();
	it_param_restore(&cap);
}

int main(void)
{
	struct it_heaps hs;
	struct sysinfo si;
	unsigned long long total, len;
	int ion = it_setup(&hs), fd;
	unsigned int i;
	char name[128];

	kmsg = it_kmsg_open(0);
	if (!tap_ok(kmsg >= 0, "open /dev/kmsg"))
		tap_diag("open /dev/kmsg: %s", strerror(-kmsg));
	if (sysinfo(&si))
		return 1;
	total = (unsigned long long)si.totalram * si.mem_unit;
	tap_diag("RAM %llu MiB, free %llu MiB", total >> 20,
		 ((unsigned long long)si.freeram * si.mem_unit) >> 20);
	if (total >= HUGE) {
		tap_skip("more than RAM", "machine has 3 GiB of RAM or more");
	} else {
		for (i = 0; i < hs.cnt; i++) {
			snprintf(name, sizeof(name), "%s: 3 GiB, ALLOC",
				 hs.h[i].name);
			run(name, HUGE, 1U << hs.h[i].heap_id, 0, 0);
			snprintf(name, sizeof(name), "%s: 3 GiB, ALLOC_LEGACY",
				 hs.h[i].name);
			run(name, HUGE, 1U << hs.h[i].heap_id, 1, 0);
		}
		run("every heap: 3 GiB, ALLOC", HUGE, it_heaps_mask(&hs), 0, 0);
	}
	run("system: 256 MiB until failure, ALLOC", CHUNK,
	    ION_HEAP_SYSTEM_MASK, 0, 1);
	run("every heap: 256 MiB until failure, ALLOC_LEGACY", CHUNK,
	    it_heaps_mask(&hs), 1, 1);
	for (i = 0; i < hs.cnt; i++) {
		if (hs.h[i].type != ION_HEAP_TYPE_SYSTEM_CONTIG &&
		    hs.h[i].type != ION_HEAP_TYPE_DMA)
			continue;
		snprintf(name, sizeof(name), "%s: 1 MiB until failure, "
			 "ALLOC_LEGACY", hs.h[i].name);
		run_min(name, BLOCK, 1U << hs.h[i].heap_id, 1, 1,
			(long long)total / 32);
	}
	/* RAM in at most 512 buffers: the fds stay within RLIMIT_NOFILE. */
	if (it_heap_find(&hs, ION_AUTO_HEAP_NAME)) {
		len = (total / 512 + 4 * BLOCK - 1) / (4 * BLOCK) * 4 * BLOCK;
		snprintf(name, sizeof(name), "ion_auto_heap: %llu MiB used once, "
			 "until failure, ALLOC", len >> 20);
		run_min(name, len, ION_HEAP_AUTO_MASK, FIRST_USE, 1,
			(long long)total / 32);
	}

	reserve_pools_case(ion, total);

	/* The system is usable afterwards. */
	fd = it_alloc_fd(ion, 64 << 20, ION_HEAP_SYSTEM_MASK, 0);
	if (tap_ok(fd >= 0, "64 MiB from the system heap afterwards")) {
		void *p = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE,
			       MAP_SHARED, fd, 0);

		tap_ok(p != MAP_FAILED, "... and it maps");
		if (p != MAP_FAILED) {
			memset(p, 0x5a, 64 << 20);
			munmap(p, 64 << 20);
		}
		close(fd);
	}
	for (i = 0; i < hs.cnt; i++) {
		fd = it_alloc_fd(ion, 1 << 20, 1U << hs.h[i].heap_id, 0);
		it_expect(fd < 0 ? fd : 0, 0, "%s: 1 MiB afterwards",
			  hs.h[i].name);
		if (fd >= 0)
			close(fd);
	}
	close(ion);
	tap_ok(fz_dfs_wait_clean(NULL, 5000), "nothing left allocated");
	return tap_exit();
}
