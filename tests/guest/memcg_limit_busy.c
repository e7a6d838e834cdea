// SPDX-License-Identifier: MIT
/*
 * memcg_limit_busy: a cgroup at its memory.max does not wait for the
 * zeroing worker (kernel/heaps/ion_memcg.c, DOC: memory cgroups).  Its
 * freed chunks are charged to it while they wait for the worker, out of
 * reach of its reclaim; the worker runs in SCHED_IDLE, so while a CPU-bound
 * task shares its CPU it hardly runs at all.
 *
 * The pool worker (thread ion_system_pool) is pinned to the last CPU with
 * a nice -20 spinner beside it, which leaves it about 3/88761 of that CPU.
 * Cgroup a (memory.max 32M) holds 28 MiB of 1 MiB buffers, cgroup b 8 MiB;
 * both free them once the spinner runs (b first: a worker that gets a
 * slice on waking zeroes the oldest), and most wait for the worker.
 * Then a allocates 28 MiB again, from the first CPU:
 *
 * - it gets them, while the spinner still runs (before, it waited for
 *   the worker, i.e. until the spinner stopped; without either, its
 *   reclaim could not reach the waiting chunks and it failed with ENOMEM);
 * - pool_limit_freed_bytes grew by what a gave back, and
 *   deferred_free_bytes fell by as much: a's waiting chunks went back to
 *   the page allocator, with their charge;
 * - b's memory.current is unchanged (only the cgroup at its limit gives
 *   back);
 * - a's new buffers are charged to it.
 *
 * Then, on x86, the same for an uncached 4 KiB buffer of a cgroup 512 KiB
 * below its memory.max: its chunk comes from a 2 MiB block charged whole
 * to the cgroup, for which the cgroup gives back its waiting chunks.
 *
 * SKIP with one CPU, before 6.8 (no per-memcg pools: charged chunks are
 * never deferred) or without cgroup2's memory controller.
 */
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>

#include "heap_util.h"

#define CG_TOP		IT_CG_ROOT "/ion-limit-busy"
#define CG_A		CG_TOP "/a"
#define CG_B		CG_TOP "/b"
#define WORKER_COMM	"ion_system_pool"
/* How long the spinner spins: the longest an allocation could wait. */
#define SPIN_S		20
#define MIB_LL		(1024LL * 1024)
/* a's buffers, twice: more than its memory.max (32M) holds at once. */
#define A_MB		28
#define B_MB		8

/* The pid of the kernel thread named @comm, or -1. */
static pid_t find_thread(const char *comm)
{
	char path[300], name[32];
	struct dirent *d;
	pid_t pid = -1;
	DIR *dir = opendir("/proc");
	FILE *f;

	while (dir && pid < 0 && (d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) &&
		    !strncmp(name, comm, strlen(comm)) &&
		    name[strlen(comm)] == '\n')
			pid = atoi(d->d_name);
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return pid;
}

static int pin(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set);
}


/* Pin the pool worker @kworker to @cpu, its affinity saved in @saved. */
static int pin_worker(pid_t kworker, int cpu, cpu_set_t *saved,
		      const char *what)
{
	return tap_ok(kworker > 0 &&
		      !sched_getaffinity(kworker, sizeof(*saved), saved) &&
		      !pin(kworker, cpu),
		      "%sthe pool worker pinned to CPU %d", what, cpu);
}

/* A nice -20 busy loop on @cpu for SPIN_S seconds (it ends by itself). */
static pid_t spinner(int cpu)
{
	volatile unsigned long n = 0;
	pid_t pid = fork();

	if (pid)
		return pid;
	if (pin(0, cpu) || setpriority(PRIO_PROCESS, 0, -20))
		_exit(2);
	alarm(SPIN_S);
	for (;;)
		n++;
}

static int still_running(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == 0;
}

static void test_busy(struct it_worker *a, struct it_worker *b, int cpu)
{
	const unsigned int sys = ION_HEAP_SYSTEM_MASK;
	pid_t kworker = find_thread(WORKER_COMM), spin;
	long long given, fell, b0, d0, g0, d1, g1, t0;
	struct it_reply r;
	cpu_set_t saved;
	int running;

	if (!pin_worker(kworker, cpu, &saved, ""))
		return;
	r = it_worker_alloc(a, A_MB, MIB_LL, sys, ION_FLAG_CACHED);
	tap_ok(r.done == A_MB, "a: %d MiB of buffers", A_MB);
	r = it_worker_alloc(b, B_MB, MIB_LL, sys, ION_FLAG_CACHED);
	tap_ok(r.done == B_MB, "b: %d MiB of buffers", B_MB);
	spin = spinner(cpu);
	usleep(300000);		/* the spinner has the CPU */
	/*
	 * b's first: if the worker gets a slice on waking, it zeroes the
	 * oldest chunks, b's, not those a needs to give back.
	 */
	it_worker_free(b, IT_WORKER_FREE_ALL);
	it_worker_free(a, IT_WORKER_FREE_ALL);
	usleep(50000);		/* past the worker's delay: it is queued */
	d0 = ht_system_num("deferred_free_bytes");
	g0 = ht_system_num("pool_limit_freed_bytes");
	b0 = it_cg_num(CG_B, "memory.current", NULL);
	tap_diag("waiting for the worker: %lld KiB; pooled for a: %lld KiB",
		 d0 >> 10, ht_system_num("pool_charged_bytes") >> 10);

	/* More than a's memory.max leaves room for unless it gives back. */
	tap_ok(still_running(spin), "the spinner runs (nice -20)");
	t0 = it_now_ms();
	r = it_worker_alloc(a, A_MB, MIB_LL, sys, ION_FLAG_CACHED);
	running = still_running(spin);
	tap_diag("the allocation took %lld ms (the spinner spins %d s)",
		 it_now_ms() - t0, SPIN_S);
	d1 = ht_system_num("deferred_free_bytes");
	g1 = ht_system_num("pool_limit_freed_bytes");
	if (!tap_ok(r.done == A_MB && !r.err,
		    "a at its memory.max: %d MiB more", A_MB))
		tap_diag("%d of %d (%s)", r.done, A_MB, strerror(r.err));
	tap_ok(running,
	       "and without waiting for the worker (the spinner still ran)");
	given = g1 - g0;
	fell = d0 - d1;
	tap_diag("pool_limit_freed_bytes +%lld KiB, deferred_free_bytes -%lld KiB",
		 given >> 10, fell >> 10);
	tap_ok(given >= MIB_LL && given <= A_MB * MIB_LL,
	       "a gave back chunks that waited for the worker");
	tap_ok(fell >= given && fell <= given + MIB_LL,
	       "deferred_free_bytes fell by as much");
	tap_ok(it_cg_num(CG_B, "memory.current", NULL) >= b0 - MIB_LL &&
	       b0 >= B_MB * MIB_LL,
	       "b's chunks are still charged to b (only the cgroup at its limit gives back)");
	tap_ok(it_cg_num(CG_A, "memory.current", NULL) >= A_MB * MIB_LL,
	       "a's new buffers are charged to a");
	it_worker_free(a, IT_WORKER_FREE_ALL);

	kill(spin, SIGKILL);
	waitpid(spin, NULL, 0);
	sched_setaffinity(kworker, sizeof(saved), &saved);
	tap_ok(!ht_wait_deferred(), "the worker zeroes the rest once it runs");
}

/*
 * x86: a charged uncached allocation takes a chunk of a 2 MiB block
 * charged whole to its cgroup.  With a's cached chunks waiting for the
 * worker, the rest of what it holds reclaimed, and its memory.max 512 KiB
 * above its usage, a 4 KiB uncached buffer
 * needs room for the block: a gives back its waiting chunks for it, and
 * the chunk comes from a block, not converted alone (which splits the
 * direct map: uncached_fallback_chunks).
 */
static void test_block(struct it_worker *a, int cpu)
{
	const unsigned int sys = ION_HEAP_SYSTEM_MASK;
	pid_t kworker = find_thread(WORKER_COMM), spin;
	long long f0, g0, f1, g1, cur;
	struct it_reply r;
	cpu_set_t saved;
	char max[32];

	if (ht_system_num("uncached_fallback_chunks") < 0) {
		tap_skip("block room", "no uncached blocks (x86 only)");
		return;
	}
	if (!pin_worker(kworker, cpu, &saved, "block room: "))
		return;
	r = it_worker_alloc(a, A_MB, MIB_LL, sys, ION_FLAG_CACHED);
	tap_ok(r.done == A_MB, "block room: a holds %d MiB", A_MB);
	spin = spinner(cpu);
	usleep(300000);		/* the spinner has the CPU */
	it_worker_free(a, IT_WORKER_FREE_ALL);
	usleep(50000);
	/*
	 * What a's reclaim reaches goes first (its pooled chunks, page
	 * cache): only the waiting chunks can make room after this (EAGAIN:
	 * it could not reclaim 64M, as expected).
	 */
	ht_write_str(CG_A "/memory.reclaim", "64M", 0);
	cur = it_cg_num(CG_A, "memory.current", NULL);
	snprintf(max, sizeof(max), "%lld", cur + MIB_LL / 2);
	f0 = ht_system_num("uncached_fallback_chunks");
	g0 = ht_system_num("pool_limit_freed_bytes");
	tap_diag("block room: a at %lld KiB, memory.max %s, waiting %lld KiB",
		 cur >> 10, max, ht_system_num("deferred_free_bytes") >> 10);
	if (ht_write_str(CG_A "/memory.max", max, 0)) {
		tap_ok(0, "block room: memory.max set");
		goto out;
	}
	r = it_worker_alloc(a, 1, 4096, sys, 0);
	f1 = ht_system_num("uncached_fallback_chunks");
	g1 = ht_system_num("pool_limit_freed_bytes");
	tap_diag("block room: fallback chunks +%lld, limit freed +%lld KiB",
		 f1 - f0, (g1 - g0) >> 10);
	tap_ok(r.done == 1 && still_running(spin),
	       "block room: a gets a 4 KiB uncached buffer, worker starved");
	tap_ok(f1 == f0, "block room: its chunk is a block's, not converted alone");
	tap_ok(g1 - g0 >= MIB_LL,
	       "block room: a gave back waiting chunks for the block");
	it_worker_free(a, IT_WORKER_FREE_ALL);
	ht_write_str(CG_A "/memory.max", "32M", 0);
out:
	kill(spin, SIGKILL);
	waitpid(spin, NULL, 0);
	sched_setaffinity(kworker, sizeof(saved), &saved);
	tap_ok(!ht_wait_deferred(), "block room: the worker zeroes the rest");
}

int main(void)
{
	struct it_worker a, b;
	struct it_heaps hs;
	int ion = it_setup(&hs), cpu = get_nprocs() - 1;

	if (cpu < 1 || !it_memcg_pools_kernel()) {
		tap_skip("memcg_limit_busy",
			 cpu < 1 ? "one CPU" : "kernel before 6.8: charged chunks are not pooled");
		return tap_exit();
	}
	if (it_cg_pair(CG_TOP, CG_A, CG_B) ||
	    ht_write_str(CG_A "/memory.max", "32M", 0)) {
		tap_skip("memcg_limit_busy", "no cgroup2 memory controller");
		it_cg_pair_remove(CG_TOP, CG_A, CG_B);
		return tap_exit();
	}
	if (pin(0, 0) || ht_drop_pools() ||
	    it_worker_start(&a, it_cg_join, CG_A) ||
	    it_worker_start(&b, it_cg_join, CG_B)) {
		tap_ok(0, "tasks in cgroups a and b, on CPU 0");
		return tap_exit();
	}
	it_worker_rounds(&a, 0, ION_HEAP_SYSTEM_MASK);	/* joined by now */
	it_worker_rounds(&b, 0, ION_HEAP_SYSTEM_MASK);
	test_busy(&a, &b, cpu);
	test_block(&a, cpu);
	it_worker_stop(&a);
	it_worker_stop(&b);
	ht_drop_pools();	/* a's last chunks would go to the root cgroup */
	it_cg_pair_remove(CG_TOP, CG_A, CG_B);
	close(ion);
	return tap_exit();
}
