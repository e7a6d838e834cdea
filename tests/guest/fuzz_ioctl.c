// SPDX-License-Identifier: MIT
/*
 * ioctl fuzzer for /dev/ion and /dev/dma_heap/ion-*.
 *
 * Random sequences, from several threads in this process and in forked
 * worker processes, of every ion ioctl of both ABIs (ALLOC, ALLOC_LEGACY,
 * FREE, MAP, SHARE, IMPORT, CUSTOM, SYNC, HEAP_QUERY, ABI_VERSION), of
 * DMA_HEAP_IOCTL_ALLOC on the ion dma-heap nodes when they exist, and of
 * random command numbers in the 'I', 'H' (and, on dma-bufs, 'b') spaces
 * with random size and direction bits; arguments are valid, boundary or
 * random, and argument pointers are now and then NULL, unmapped, a kernel
 * address, read-only, or straddle the end of a page into an inaccessible
 * or read-only one.  Interleaved: close, dup, open, mmap/munmap (random
 * offsets and lengths, also past the buffer), touching the mappings,
 * DMA_BUF_IOCTL_SYNC with random flags, DMA_BUF_SET_NAME, and short-lived
 * children that do some of the same and exit with everything still open
 * (some with RLIMIT_NOFILE lowered so that fd-returning calls hit EMFILE).
 *
 * Every call's result is checked against the errnos documented for it
 * (include/uapi/linux/ion.h for ion's, the dma-buf and dma-heap core for
 * theirs), with exact expectations where the arguments decide the answer
 * (a bad pointer is EFAULT, len 0 is EINVAL, an ion dma-buf imports, a
 * mapping past the end is refused...).  Each distinct violation is a
 * failed case naming the seed, the thread and the call.  Afterwards
 * every fd is closed and debugfs must be back to zero (summary, every
 * heap, no client of ours), and a last allocation must work.
 *
 * Real importers (fuzz_ioctl/ops_dev.c): ion_test's edu imports pool
 * buffers (ION_TEST_IOC_IMPORT in every mode; auto-heap buffers also with
 * edu attaching first) and lets them go (ION_TEST_IOC_RELEASE), vgem
 * imports them with PRIME and closes its handles, interleaved with the
 * mmaps, touches, syncs and closes above; edu's mapping of an auto buffer
 * must lie below its DMA mask.  fuzz_ioctl/coverage.c counts which of the
 * auto heap's paths ran (first use with no device attached and with
 * devices attached, from the ion_backing tracepoint; moves, from debugfs
 * auto_moves; attaches refused with ERANGE) and, in a whole plain run of
 * at least a quarter of the default calls, asserts each ran at least once
 * (a move or a refusal only where edu is direct, without an IOMMU).
 *
 * Quotas (fuzz_ioctl/quota.c): after the main run, in which root's calls
 * must never answer EDQUOT (unless quota_root was set), a quarter as many
 * calls again from a forked process that became an unprivileged user,
 * once with every quota off and once with small per-user and per-client
 * limits, and from root with those limits and quota_root; EDQUOT only
 * where a limit applies, and there at least once, each one counted in
 * quota_refusals, the quota file empty once the process is gone; the
 * parameters are restored after.  A quota run's process is P = 100 + run.
 *
 * Reproducible: every thread's sequence follows from --seed and its
 * place (process P, thread T); a violation is reported with both and
 * with the thread's call count C, and "--seed S --only P.T --iterations C"
 * runs just that sequence, in one thread, up to that call (--verbose logs
 * each call first).  --iterations is the number of calls over all
 * threads (default 200000, or $ION_FUZZ_ITERATIONS when set: the debug
 * kernel run, scripts/check-debug.sh, sets it higher; --iterations wins).
 *
 * Fault injection (fuzz_ioctl/inject.c): --fail-percent N (or
 * $ION_FUZZ_FAIL_PERCENT) makes ion's injectable steps (alloc, export,
 * attach, map: /sys/kernel/debug/ion/fail/) fail with chance N % during
 * the main run; the failures injected are reported, and at least one
 * must have been.  The quota runs are left out then.
 * --kernel-faults N (or $ION_FUZZ_KERNEL_FAULTS; fuzz_ioctl/kfault.c) does
 * the same with the kernel's failslab and fail_page_alloc, on kernels that
 * have them (make check-debug's): any call may then answer ENOMEM.
 *
 * Usage: fuzz_ioctl [--seed N] [--iterations N] [--procs N] [--threads N]
 *		     [--only P.T] [--fail-percent N] [--kernel-faults N]
 *		     [--verbose]
 *
 * One program of several files: this one (configuration, the loop, the
 * forked children, main) and the .c files of fuzz_ioctl/, one per
 * section, which fuzz_ioctl/fuzz_ioctl.h lists.
 */
#include "fuzz_ioctl/fuzz_ioctl.h"

/* Shared between all processes (fuzz_ioctl.h). */
struct shared *sh;

/* ------------------------------------------------------------------ */
/* Configuration and what the setup learned                            */

uint64_t seed;
long iterations = DEF_ITERATIONS;
int nprocs = DEF_PROCS, nthreads = DEF_THREADS;
int only_proc = -1, only_thread = -1;
int verbose;
struct it_heaps hs;
unsigned int heap_mask;
unsigned long long totalram;
struct fz_nodes nodes;
int have_system_dma_heap;

/* ------------------------------------------------------------------ */
/* The loop                                                            */

static void op_fork(struct thr *t);

static void op_maybe_fork(struct thr *t)
{
	if (!t->in_child && one_in(t, FORK_ONE_IN / 10))
		op_fork(t);
	else
		op_alloc(t);
}

/* The operations and their weights (per mille). */
static const struct {
	void (*fn)(struct thr *t);
	unsigned int weight;
	const char *name;
} ops[] = {
	{ op_alloc, 45, "ALLOC" },
	{ op_alloc_legacy, 35, "ALLOC_LEGACY" },
	{ op_free, 40, "FREE" },
	{ op_share, 60, "MAP/SHARE" },
	{ op_import, 60, "IMPORT" },
	{ op_custom, 30, "CUSTOM" },
	{ op_sync_ion, 55, "SYNC" },
	{ op_heap_query, 50, "HEAP_QUERY" },
	{ op_abi_version, 35, "ABI_VERSION" },
	{ op_node_alloc, 25, "DMA_HEAP_IOCTL_ALLOC" },
	{ op_random_cmd, 125, "random command" },
	{ op_dev_import, 30, "ion_test import" },
	{ op_dev_release, 15, "ion_test release" },
	{ op_vgem, 20, "vgem import/close" },
	{ op_dmabuf_sync, 80, "DMA_BUF_IOCTL_SYNC" },
	{ op_set_name, 35, "DMA_BUF_SET_NAME" },
	{ op_mmap, 60, "mmap" },
	{ op_munmap, 30, "munmap" },
	{ op_touch, 30, "touch a mapping" },
	{ op_close, 50, "close" },
	{ op_dup, 40, "dup" },
	{ op_open, 40, "open" },
	{ op_maybe_fork, 10, "fork" },
};

#define NOPS	IT_ARRAY_SIZE(ops)

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * ION_FUZZ_SKIP_OPS: operations (names as in the report, comma-separated)
 * the run leaves out, to narrow a finding down.
 */
static int op_skipped(unsigned int i)
{
	static const char *skip;
	const char *p;
	size_t n = strlen(ops[i].name);

	if (!skip)
		skip = getenv("ION_FUZZ_SKIP_OPS") ?: "";
	for (p = strstr(skip, ops[i].name); p; p = strstr(p + 1, ops[i].name))
		if ((p == skip || p[-1] == ',') && (!p[n] || p[n] == ','))
			return 1;
	return 0;
}

static void one_op(struct thr *t)
{
	unsigned int r, i;
	long long t0 = now_ns();

	do {
		r = below(t, 1000);
		for (i = 0; i < NOPS - 1 && r >= ops[i].weight; i++)
			r -= ops[i].weight;
	} while (op_skipped(i));
	ops[i].fn(t);
	if (!t->in_child)
		__atomic_add_fetch(&sh->op_ns[i], now_ns() - t0,
				   __ATOMIC_RELAXED);
}

/* A child that runs a few ops and exits with everything open. */
static void op_fork(struct thr *t)
{
	int status, i;
	pid_t pid;

	/*
	 * fork() itself outside the kernel's fault injection: at a few per
	 * cent per slab allocation, hardly a fork of the hundreds of
	 * allocations one makes succeeded, and no child ran.  The child's
	 * calls are injected again (it inherits the flag cleared).
	 */
	kfault_thread(0);
	pid = fork();
	kfault_thread(1);
	if (pid < 0) {
		sh->fork_errno = errno;
		__atomic_add_fetch(&sh->fork_failed, 1, __ATOMIC_RELAXED);
		return;
	}
	if (pid == 0) {
		t->in_child = 1;
		t->rng = fz_mix(t->rng ^ 0xc41dULL);
		dev_forked(t);
		if (one_in(t, 3)) {
			/* no fd above the current highest: EMFILE paths */
			struct rlimit rl;
			int maxfd = 3;

			for (i = 0; i < t->nfds; i++)
				if (t->fds[i].fd >= maxfd)
					maxfd = t->fds[i].fd + 1;
			rl.rlim_cur = rl.rlim_max = maxfd;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		for (i = 0; i < CHILD_OPS; i++)
			one_op(t);
		_exit(0);
	}
	__atomic_add_fetch(&sh->children, 1, __ATOMIC_RELAXED);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		struct call c = { .name = "forked child", .fd_kind = -1 };

		CALL_ARGS(&c, status);
		__atomic_add_fetch(&sh->child_crashes, 1, __ATOMIC_RELAXED);
		violation(t, &c, 0, "the child died (status in the first argument)");
	}
}

static void thr_setup(struct thr *t)
{
	int p[2];

	t->rng = fz_mix(seed ^ ((uint64_t)t->proc << 32) ^
			((uint64_t)t->idx << 16) ^ 0x10f);
	t->scratch = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->scratch == MAP_FAILED) {
		t->scratch = NULL;
		return;
	}
	mprotect(pc(t), PG, PROT_NONE);
	dev_thr_init(t);
	t->qbuf = calloc(32, sizeof(*t->qbuf));
	ion_fd(t);
	if (!pipe2(p, O_CLOEXEC)) {
		fd_add(t, p[0], K_OTHER, 0);
		close(p[1]);
	}
	if (have_system_dma_heap) {
		int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
		int fd = heap >= 0 ? fz_node_alloc(heap, 2 * PG) : -1;

		if (fd >= 0)
			fd_add(t, fd, K_FOREIGN, 2 * PG);
		if (heap >= 0)
			close(heap);
	}
}

/* Explicit cleanup: unmap and close everything, free every handle. */
static void thr_cleanup(struct thr *t)
{
	int i, fd = -1;

	for (i = 0; i < t->nmaps; i++)
		munmap(t->maps[i].addr, t->maps[i].len);
	t->nmaps = 0;
	dev_thr_cleanup(t);
	i = fd_pick(t, K_ION);
	if (i >= 0)
		fd = t->fds[i].fd;
	for (i = 0; fd >= 0 && i < t->nhandles; i++)
		it_free(fd, t->handles[i]);
	t->nhandles = 0;
	for (i = 0; i < t->nfds; i++)
		close(t->fds[i].fd);
	t->nfds = 0;
	munmap(t->scratch, 3 * PG);
	free(t->qbuf);
}

long per_thread;

static void *thr_main(void *arg)
{
	struct thr *t = arg;

	thr_setup(t);
	if (!t->scratch)
		return NULL;
	kfault_thread(1);
	for (t->iter = 0; t->calls < per_thread; t->iter++)
		one_op(t);
	kfault_thread(0);
	/* thread 0 of each worker process exits with everything open */
	if (t->proc == 0 || t->idx != 0)
		thr_cleanup(t);
	return NULL;
}

void run_threads(int proc, int n)
{
	struct thr *t = calloc(n, sizeof(*t));
	int i;

	for (i = 0; i < n; i++) {
		t[i].proc = proc;
		t[i].idx = only_thread >= 0 ? only_thread : i;
		pthread_create(&t[i].tid, NULL, thr_main, &t[i]);
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i].tid, NULL);
	free(t);
}

/*
 * A buffer left behind: have the kernel's tracing record the stack of
 * each later dma-buf release of ion's (ION_FUZZ_TRACE_RELEASE=1, a kprobe;
 * fuzz_kfault.sh prints the trace once the fuzzer has exited).
 */
static void trace_late_release(void)
{
	const char *t = "/sys/kernel/tracing/";
	char path[128];

	if (!getenv("ION_FUZZ_TRACE_RELEASE"))
		return;
	snprintf(path, sizeof(path), "%skprobe_events", t);
	ht_write_str(path, "p:ionrel ion_buffer_release", 0);
	snprintf(path, sizeof(path), "%sevents/kprobes/ionrel/trigger", t);
	ht_write_str(path, "stacktrace", 0);
	snprintf(path, sizeof(path), "%sevents/kprobes/ionrel/enable", t);
	ht_write_str(path, "1", 0);
}

/* Close every fd above stderr except @keep. */
static void close_all(int keep)
{
	int fd;

	for (fd = 3; fd < 1024; fd++)
		if (fd != keep)
			close(fd);
}

/* A crash of the fuzzer itself: say where, for addr2line. */
/* The interrupted program counter, for the crash report. */
#if defined(__x86_64__)
#define FZ_PC(uc) ((uc)->uc_mcontext.gregs[REG_RIP])
#elif defined(__aarch64__)
#define FZ_PC(uc) ((uc)->uc_mcontext.pc)
#else
#define FZ_PC(uc) 0
#endif

static void on_crash(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	void *bt[32];
	char buf[160];
	int n;

	touch_recover(sig);

	n = snprintf(buf, sizeof(buf),
		     "# fuzzer pid %d: signal %d at address %p, pc %#llx\n",
		     getpid(), sig, si->si_addr,
		     (unsigned long long)FZ_PC(uc));
	if (write(1, buf, n) != n)
		_exit(128 + sig);
	n = backtrace(bt, 32);
	backtrace_symbols_fd(bt, n, 1);
	_exit(128 + sig);
}

static void usage(void)
{
	fprintf(stderr, "usage: fuzz_ioctl [--seed N] [--iterations N] "
		"[--procs N] [--threads N] [--only P.T] [--fail-percent N] "
		"[--kernel-faults N] [--verbose]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int i, ion, status, bad_procs = 0, total_threads, ok, armed, karmed;
	long injected, kinjected;
	long long t0, ms;
	struct sysinfo si;
	char prefix[48];
	pid_t *pids;
	struct stat st;
	char *env, *end;

	struct sigaction sa = { .sa_sigaction = on_crash,
				.sa_flags = SA_SIGINFO };

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	env = getenv("ION_FUZZ_ITERATIONS");
	if (env && *env) {
		iterations = strtol(env, &end, 0);
		if (*end || iterations < 1) {
			fprintf(stderr, "fuzz_ioctl: bad ION_FUZZ_ITERATIONS '%s'\n",
				env);
			return 2;
		}
	}
	env = getenv("ION_FUZZ_FAIL_PERCENT");
	if (env && *env)
		fail_percent = atoi(env);
	env = getenv("ION_FUZZ_KERNEL_FAULTS");
	if (env && *env)
		kfault_percent = atoi(env);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--iterations") && i + 1 < argc)
			iterations = strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--procs") && i + 1 < argc)
			nprocs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc &&
			 sscanf(argv[++i], "%d.%d", &only_proc, &only_thread) == 2)
			;
		else if (!strcmp(argv[i], "--fail-percent") && i + 1 < argc)
			fail_percent = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--kernel-faults") && i + 1 < argc)
			kfault_percent = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--verbose"))
			verbose = 1;
		else
			usage();
	}
	if (only_proc >= 0) {
		nprocs = 0;
		nthreads = 1;
	}
	if (nthreads < 1 || nprocs < 0 || iterations < 1 || fail_percent < 0 ||
	    fail_percent > 100 || kfault_percent < 0 || kfault_percent > 100)
		usage();
	printf("# seed=%llu\n", (unsigned long long)seed);
	total_threads = (nprocs + 1) * nthreads;
	per_thread = only_proc >= QUOTA_PROC ? 0 :	/* a quota run's sequence */
		     only_proc >= 0 ? iterations : iterations / total_threads;
	printf("# iterations=%ld%s: %d processes x %d threads, %ld calls each%s\n",
	       iterations, iterations == DEF_ITERATIONS ? " (default)" : "",
	       nprocs + 1, nthreads, per_thread,
	       only_proc >= 0 ? " (one sequence only)" : "");
	printf("# reproduce: fuzz_ioctl --seed %llu --iterations %ld"
	       " --procs %d --threads %d --fail-percent %d --kernel-faults %d\n",
	       (unsigned long long)seed, iterations, nprocs, nthreads,
	       fail_percent, kfault_percent);
	fflush(stdout);

	ion = it_setup(&hs);
	heap_mask = it_heaps_mask(&hs);
	close(ion);
	if (sysinfo(&si))
		return 1;
	totalram = (unsigned long long)si.totalram * si.mem_unit;
	fz_nodes_load(&nodes);
	/* Mainline's own heap: on arm64 /dev/dma_heap/system is ion's. */
	have_system_dma_heap = !stat("/sys/class/dma_heap/system", &st);
	tap_diag("%u heaps (mask %#x), %d dma-heap nodes%s", hs.cnt, heap_mask,
		 nodes.cnt, have_system_dma_heap ?
		 ", /dev/dma_heap/system for foreign dma-bufs" : "");
	if (!fz_dfs_clean(NULL, 1))
		tap_diag("debugfs was not clean before the run");
	quota_init();
	dev_setup();

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	memset(sh, 0, sizeof(*sh));
	pids = calloc(nprocs + 1, sizeof(*pids));
	armed = inject_start();
	karmed = kfault_start();
	cov_start();
	t0 = it_now_ms();
	for (i = 1; i <= nprocs; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			run_threads(i, nthreads);
			_exit(0);	/* with thread 0's things still open */
		}
	}
	run_threads(only_proc >= 0 ? only_proc : 0, nthreads);
	for (i = 1; i <= nprocs; i++) {
		waitpid(pids[i], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			tap_diag("worker process %d: status %#x", i, status);
			bad_procs++;
		}
	}
	ms = it_now_ms() - t0;
	injected = inject_stop();
	kinjected = kfault_stop();
	close_all(-1);
	tap_diag("%ld calls in %lld ms, %ld forked children, %ld violations",
		 sh->calls, ms, sh->children, sh->violations);
	if (sh->touch_sigbus)
		tap_diag("%ld touches of an auto buffer's mapping got SIGBUS (its first use found no memory)",
			 sh->touch_sigbus);
	if (sh->munmap_failed)
		tap_diag("%ld munmaps failed (the mappings kept and unmapped later)",
			 sh->munmap_failed);
	if (sh->fork_failed)
		tap_diag("%ld forks failed (last: %s)", sh->fork_failed,
			 strerror(sh->fork_errno));

	for (i = 0; i < (int)NOPS; i++)
		tap_diag("%-22s %6lld ms", ops[i].name,
			 sh->op_ns[i] / 1000000);
	tap_ok(sh->calls >= per_thread * total_threads,
	       "the fuzzer made %ld calls (at least %ld)", sh->calls,
	       per_thread * total_threads);
	tap_ok(!bad_procs, "every worker process exited normally");
	tap_ok(!sh->child_crashes,
	       "every forked child exited normally (%ld children)",
	       sh->children);
	tap_ok(!sh->setup_errors, "the fuzzer could always open its devices");
	if (fail_percent)
		tap_ok(armed && injected > 0, "fault injection at %d %%: %ld "
		       "failures injected", fail_percent, injected);
	if (kfault_percent)
		tap_ok(karmed && kinjected > 0, "kernel fault injection at %d %%: %ld allocations failed",
		       kfault_percent, kinjected);
	report_violations(NULL);
	/* coverage is asserted in a whole plain run of the usual length */
	cov_report(!fail_percent && !kfault_percent && only_proc < 0 &&
		   iterations >= DEF_ITERATIONS / 4);
	tap_ok(quota_set || !sh->edquot,
	       "no call answered EDQUOT: no quota applies to root (%ld)",
	       sh->edquot);

	fz_client_prefix(prefix, sizeof(prefix));
	if (!tap_ok(fz_dfs_wait_clean(prefix, 10000),
		    "after the run: debugfs summary, every heap and the clients"
		    " back to zero"))
		trace_late_release();
	/* The quota runs are the plain fuzzer's (fuzz_inject.sh: not twice). */
	if (!fail_percent && !kfault_percent)
		quota_runs(only_proc >= 0 ? iterations : iterations / 4);

	/* the kernel is alive and /dev/ion still works */
	ion = it_open();
	ok = ion >= 0;
	if (ok) {
		ion_user_handle_t h;
		int fd = it_alloc_fd(ion, 64 << 10, heap_mask, 0);
		void *p = fd >= 0 ? mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE,
					 MAP_SHARED, fd, 0) : MAP_FAILED;

		ok = p != MAP_FAILED;
		if (ok) {
			it_fill(p, 64 << 10, 1);
			ok = it_check(p, 64 << 10, 1) < 0;
			munmap(p, 64 << 10);
		}
		if (fd >= 0)
			close(fd);
		ok = ok && !it_alloc_handle(ion, PG, 0, heap_mask, 0, &h) &&
		     !it_free(ion, h);
		close(ion);
	}
	tap_ok(ok, "/dev/ion still allocates, maps and frees through both ABIs");
	tap_ok(fz_dfs_wait_clean(prefix, 5000), "and debugfs is back to zero again");
	dev_teardown();
	return tap_exit();
}
