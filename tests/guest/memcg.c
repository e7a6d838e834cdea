// SPDX-License-Identifier: MIT
/*
 * Memory-cgroup charging (kernel/heaps/ion_memcg.c, "memory cgroups"):
 * system-heap and system-contig buffers count in the allocating task's
 * memory.current (as "kernel" in memory.stat) for their whole life; over
 * memory.max an allocation fails with ENOMEM and no OOM is declared in
 * the cgroup, while a task outside it allocates normally; freed buffers
 * leave no charge behind (after memory.reclaim the cgroup and its parent
 * are back where they started, also after 1000 rounds); a chunk freed in
 * one cgroup, or pooled by the root cgroup, never makes another cgroup
 * pay or go free; memcg_charge=N turns charging off.
 *
 * Per-memcg pools: a cgroup's freed chunks stay charged to it and are
 * pooled for it alone (pool_charged_bytes in the system heap's debugfs
 * file): its next allocation reuses them without a new charge; another
 * cgroup never gets them; memory.reclaim in the cgroup frees them (and
 * not another cgroup's); removing the cgroup hands them to its parent,
 * whose memory.reclaim frees them, with no warning in the kernel log.
 */
#include <sched.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>

#include "heap_util.h"
#include "ion_test_util.h"

#define CG_ROOT		"/sys/fs/cgroup"
#define CG_TOP		CG_ROOT "/ion-test"
#define CG_A		CG_TOP "/a"
#define CG_B		CG_TOP "/b"
#define CG_C		CG_TOP "/c"	/* removed with pooled chunks */
#define CG_SINK		CG_ROOT "/ion-sink"	/* outside CG_TOP */
#define PARAM		"/sys/module/ion/parameters/memcg_charge"
#define MIB		(1024LL * 1024)
#define SLACK		(64 * 1024LL)	/* "a few pages" */

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -errno;
}

static long long current_of(const char *cg)
{
	return it_cg_num(cg, "memory.current", NULL);
}

static int setup(void)
{
	int ret = it_cg_memory();

	if (ret)
		return ret;
	rmdir(CG_A);
	rmdir(CG_B);
	rmdir(CG_C);
	rmdir(CG_TOP);
	rmdir(CG_SINK);
	if (mkdir(CG_TOP, 0755) || mkdir(CG_SINK, 0755) ||
	    write_file(CG_TOP "/cgroup.subtree_control", "+memory") ||
	    mkdir(CG_A, 0755) || mkdir(CG_B, 0755) ||
	    write_file(CG_A "/memory.max", "32M"))
		return -errno ? -errno : -EIO;
	return 0;
}

/*
 * The kernel keeps a per-CPU batch of pages precharged to the last cgroup
 * that charged on that CPU (memory.current counts it, memory.stat does
 * not); a charge from another cgroup on that CPU gives it back.  So, on
 * every CPU, a task of the sink cgroup (outside ours) touches a fresh
 * anonymous page and allocates and frees 4 KiB of ion (which may come
 * from the sink's own pooled chunks, with no charge): afterwards no
 * cgroup of ours holds a batch.  Each task's free is pooled before the
 * next task allocates, so the sink keeps one pooled 4 KiB chunk, not one
 * more each time a task came before the worker (pool_charged_bytes would
 * then grow under the pool cases' feet, as seen once a fresh uncached
 * chunk came from the sink's charged 2 MiB block, quicker than the
 * worker).
 */
static void evict_batches(void)
{
	long cpu, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char pid[16];

	for (cpu = 0; cpu < ncpu; cpu++) {
		pid_t p = fork();

		if (p == 0) {
			cpu_set_t set;
			volatile char *anon;
			int ion, fd;

			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			snprintf(pid, sizeof(pid), "%d", (int)getpid());
			if (write_file(CG_SINK "/cgroup.procs", pid) ||
			    sched_setaffinity(0, sizeof(set), &set))
				_exit(1);
			anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (anon == MAP_FAILED)
				_exit(1);
			anon[0] = 1;
			ion = it_open();
			fd = ion < 0 ? -1 :
			     it_alloc_fd(ion, 4096, ION_HEAP_SYSTEM_MASK, 0);
			_exit(fd < 0);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
		ht_wait_deferred();
	}
}

/* memory.reclaim as much as @cg holds, then its memory.current. */
static long long reclaim_once(const char *cg)
{
	char path[160];

	evict_batches();
	snprintf(path, sizeof(path), "%s/memory.reclaim", cg);
	write_file(path, "256M");	/* EAGAIN when less is there: fine */
	return current_of(cg);
}

/*
 * As reclaim_once(), until @cg is within SLACK of @want or 2 s passed:
 * the dentries and inodes of closed dma-buf files are freed after an RCU
 * grace period, and their slab charges go with them (not ion's memory,
 * but in the cgroup until then).  A leak would never settle.
 */
static long long reclaimed_to(const char *cg, long long want)
{
	long long cur = reclaim_once(cg);
	int i;

	for (i = 0; i < 20 && cur > want + SLACK; i++) {
		usleep(100000);
		cur = reclaim_once(cg);
	}
	return cur;
}

static long long reclaimed(const char *cg)
{
	return reclaim_once(cg);
}

/*
 * How far over its charges a cgroup's memory.current may read: each CPU
 * keeps a charge stock, up to MEMCG_CHARGE_BATCH (64) pages charged in
 * advance for a cgroup, and user space cannot drain it (a 7.3 guest read
 * 64 KiB over after 1000 rounds, with memory.stat's kernel at 12 KiB).
 * Doubled for a parent, whose two children may each have one.  What is
 * charged, without the stock, is memory.stat's kernel: checked within
 * SLACK.
 */
static long long left_max(void)
{
	return SLACK + 2LL * get_nprocs_conf() * 64 * it_page();
}

static void test_limit(struct it_worker *a, unsigned int sys)
{
	long long a0 = reclaimed(CG_A), t0 = reclaimed(CG_TOP);
	long long k0 = it_cg_num(CG_A, "memory.stat", "kernel");
	struct it_reply r;
	int fd;

	r = it_worker_alloc(a, 16, MIB, sys, 0);
	tap_ok(r.done == 16 && !r.err, "memory.max 32M: 16 MiB of buffers");
	tap_ok(current_of(CG_A) - a0 >= 16 * MIB,
	       "memory.current rose by at least 16 MiB");
	tap_ok(it_cg_num(CG_A, "memory.stat", "kernel") - k0 >= 16 * MIB,
	       "memory.stat shows it as kernel memory");
	tap_diag("memory.current %lld -> %lld", a0, current_of(CG_A));
	r = it_worker_alloc(a, 32, MIB, sys, 0);
	tap_ok(r.done < 32 && r.err == ENOMEM,
	       "32 MiB more fails with ENOMEM");
	tap_diag("%d MiB more succeeded, then %s", r.done, strerror(r.err));
	tap_ok(it_cg_num(CG_A, "memory.events", "oom") == 0 &&
	       it_cg_num(CG_A, "memory.events", "oom_kill") == 0 &&
	       !kill(a->pid, 0),
	       "no OOM in the cgroup, its task alive");
	fd = it_alloc_fd(it_open(), 64 * MIB, sys, 0);
	tap_ok(fd >= 0, "a task outside the cgroup allocates 64 MiB meanwhile");
	if (fd >= 0)
		close(fd);
	r = it_worker_free(a, IT_WORKER_FREE_ALL);
	r = it_worker_alloc(a, 24, MIB, sys, 0);
	tap_ok(r.done == 24 && !r.err,
	       "after the frees, 24 MiB succeeds up to the limit again");
	it_worker_free(a, IT_WORKER_FREE_ALL);
	tap_ok(reclaimed_to(CG_A, a0) <= a0 + left_max() &&
	       reclaimed_to(CG_TOP, t0) <= t0 + left_max() &&
	       it_cg_num(CG_A, "memory.stat", "kernel") <= k0 + SLACK,
	       "after memory.reclaim the cgroup and its parent are back");
	tap_diag("memory.current %lld (start %lld), parent %lld (start %lld)",
		 current_of(CG_A), a0, current_of(CG_TOP), t0);
	r = it_worker_rounds(a, 1000, sys);
	tap_ok(r.done == 1000 && !r.err, "1000 alloc/free rounds");
	tap_ok(reclaimed_to(CG_A, a0) <= a0 + left_max() &&
	       reclaimed_to(CG_TOP, t0) <= t0 + left_max() &&
	       it_cg_num(CG_A, "memory.stat", "kernel") <= k0 + SLACK,
	       "and no charge is left behind, in the cgroup or its parent");
	tap_diag("memory.current %lld (start %lld), parent %lld (start %lld), kernel at the start %lld",
		 current_of(CG_A), a0, current_of(CG_TOP), t0, k0);
	tap_diag("memory.stat: kernel %lld, slab %lld, percpu %lld, anon %lld",
		 it_cg_num(CG_A, "memory.stat", "kernel"),
		 it_cg_num(CG_A, "memory.stat", "slab"),
		 it_cg_num(CG_A, "memory.stat", "percpu"),
		 it_cg_num(CG_A, "memory.stat", "anon"));
	tap_diag("memory.current %lld (start %lld), parent %lld (start %lld)",
		 current_of(CG_A), a0, current_of(CG_TOP), t0);
}

static void test_no_crossing(struct it_worker *a, struct it_worker *b,
			     unsigned int sys)
{
	long long a0, b0;
	struct it_reply r;
	int ion = it_open(), i, fds[16];

	/* Chunks freed in A, and chunks the root cgroup freed to the pools. */
	it_worker_alloc(a, 16, MIB, sys, 0);
	it_worker_free(a, IT_WORKER_FREE_ALL);
	for (i = 0; i < 16; i++)
		fds[i] = it_alloc_fd(ion, MIB, sys, 0);
	for (i = 0; i < 16; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	close(ion);
	usleep(300000);	/* the pools' worker takes the root's chunks */
	a0 = reclaimed(CG_A);
	b0 = current_of(CG_B);
	r = it_worker_alloc(b, 16, MIB, sys, 0);
	tap_ok(r.done == 16 && !r.err &&
	       current_of(CG_B) - b0 >= 16 * MIB,
	       "cgroup B pays for its 16 MiB, pools or not");
	tap_ok(current_of(CG_A) <= a0 + SLACK,
	       "cgroup A pays nothing for B's buffers");
	it_worker_free(b, IT_WORKER_FREE_ALL);
}

/* Charged bytes in the pools, once the deferred zeroing is done. */
static long long charged_pooled(void)
{
	if (ht_wait_deferred())
		return -1;
	return ht_system_num("pool_charged_bytes");
}

/* pool_charged_bytes is read and at most @max. */
static int pooled_at_most(long long max)
{
	long long n = charged_pooled();

	return n >= 0 && n <= max;
}

/* @w allocates then frees @n MiB: pooled for its cgroup. */
static void alloc_free(struct it_worker *w, int n, unsigned int sys)
{
	it_worker_alloc(w, n, MIB, sys, 0);
	it_worker_free(w, IT_WORKER_FREE_ALL);
}

/*
 * Cgroup A's freed chunks stay charged to it, pooled; its next allocation
 * takes them, and memory.current does not grow by their size again.
 * Cgroup B's allocation then takes none of them.
 */
static void test_pool_reuse(struct it_worker *a, struct it_worker *b,
			    unsigned int sys)
{
	long long p0, p1, c1, b0;
	struct it_reply r;

	ht_drop_pools();
	p0 = charged_pooled();
	alloc_free(a, 8, sys);
	p1 = charged_pooled();
	tap_ok(p0 >= 0 && p1 - p0 >= 8 * MIB,
	       "cgroup A's freed 8 MiB are pooled, charged (pool_charged_bytes)");
	tap_diag("pool_charged_bytes %lld -> %lld", p0, p1);
	c1 = current_of(CG_A);
	r = it_worker_alloc(a, 8, MIB, sys, 0);
	tap_ok(r.done == 8 && pooled_at_most(p1 - 8 * MIB),
	       "A's next 8 MiB come from its pooled chunks");
	tap_ok(current_of(CG_A) - c1 < 2 * MIB,
	       "and A's memory.current does not grow by 8 MiB again");
	tap_diag("memory.current %lld -> %lld", c1, current_of(CG_A));
	it_worker_free(a, IT_WORKER_FREE_ALL);
	p1 = charged_pooled();
	b0 = current_of(CG_B);
	r = it_worker_alloc(b, 8, MIB, sys, 0);
	tap_ok(r.done == 8 && current_of(CG_B) - b0 >= 8 * MIB,
	       "cgroup B pays for its 8 MiB while A has chunks pooled");
	tap_ok(p1 >= 0 && charged_pooled() == p1,
	       "B takes none of A's pooled chunks");
	it_worker_free(b, IT_WORKER_FREE_ALL);
}

/*
 * The same for one buffer of eight chunks (8 MiB), which takes its chunks
 * from A's list in one walk (kernel/heaps/ion_chunk_get.c): all eight
 * come from there, and B's buffer of eight takes none of them.
 */
static void test_pool_reuse_big(struct it_worker *a, struct it_worker *b,
				unsigned int sys)
{
	long long p1, c1, b0;
	struct it_reply r;

	ht_drop_pools();
	it_worker_alloc(a, 1, 8 * MIB, sys, 0);
	it_worker_free(a, IT_WORKER_FREE_ALL);
	p1 = charged_pooled();
	c1 = current_of(CG_A);
	r = it_worker_alloc(a, 1, 8 * MIB, sys, 0);
	tap_ok(r.done == 1 && p1 >= 8 * MIB &&
	       pooled_at_most(p1 - 8 * MIB),
	       "A's next 8 MiB buffer takes its eight chunks from A's pool");
	tap_ok(current_of(CG_A) - c1 < 2 * MIB,
	       "and A's memory.current does not grow by 8 MiB again");
	tap_diag("pool_charged_bytes %lld -> %lld, memory.current %lld -> %lld",
		 p1, charged_pooled(), c1, current_of(CG_A));
	it_worker_free(a, IT_WORKER_FREE_ALL);
	p1 = charged_pooled();
	b0 = current_of(CG_B);
	r = it_worker_alloc(b, 1, 8 * MIB, sys, 0);
	tap_ok(r.done == 1 && current_of(CG_B) - b0 >= 8 * MIB &&
	       p1 >= 0 && charged_pooled() == p1,
	       "B's 8 MiB buffer takes none of A's pooled chunks and pays for itself");
	it_worker_free(b, IT_WORKER_FREE_ALL);
}

/*
 * memory.reclaim in A frees A's pooled chunks and their charge, not B's;
 * then removing cgroup C with chunks pooled leaves them to the parent,
 * whose memory.reclaim frees them.
 */
static void test_pool_reclaim(struct it_worker *a, struct it_worker *b,
			      unsigned int sys)
{
	static const char *const warn[] = { "WARNING", "BUG", NULL };
	long long a0, t0, p0, p1;
	struct it_worker c;
	int kmsg = it_kmsg_open(0);

	ht_drop_pools();
	a0 = reclaimed(CG_A);
	t0 = reclaimed(CG_TOP);
	p0 = charged_pooled();
	alloc_free(a, 8, sys);
	alloc_free(b, 8, sys);
	p1 = charged_pooled();
	tap_ok(reclaimed_to(CG_A, a0) <= a0 + SLACK,
	       "memory.reclaim in A frees its pooled chunks' charge");
	tap_ok(p1 - p0 >= 16 * MIB && charged_pooled() <= p1 - 8 * MIB &&
	       charged_pooled() >= p1 - 8 * MIB - SLACK,
	       "it frees A's pooled chunks and leaves B's");
	tap_diag("pool_charged_bytes %lld, %lld, %lld", p0, p1,
		 charged_pooled());
	if (mkdir(CG_C, 0755) || it_worker_start(&c, it_cg_join, CG_C)) {
		tap_ok(0, "a task in cgroup c");
		return;
	}
	it_worker_rounds(&c, 0, sys);
	alloc_free(&c, 8, sys);
	p1 = charged_pooled();
	it_worker_stop(&c);
	tap_ok(!rmdir(CG_C), "cgroup C removed with 8 MiB pooled");
	tap_ok(reclaimed_to(CG_TOP, t0) <= t0 + SLACK &&
	       pooled_at_most(p0),
	       "the parent's memory.reclaim frees C's (and B's) pooled chunks");
	tap_diag("pool_charged_bytes %lld after C's frees, %lld now; parent %lld (start %lld)",
		 p1, charged_pooled(), current_of(CG_TOP), t0);
	tap_ok(it_kmsg_grep(kmsg, warn) == 0, "no warning in the kernel log");
	close(kmsg);
}

static void test_off(struct it_worker *b, unsigned int sys)
{
	struct it_param saved;
	long long b0;
	struct it_reply r;

	if (it_param_save(&saved, "memcg_charge") ||
	    it_param_set("memcg_charge", "N")) {
		tap_ok(0, "memcg_charge can be turned off");
		it_param_restore(&saved);
		return;
	}
	b0 = reclaimed(CG_B);
	r = it_worker_alloc(b, 16, MIB, sys, 0);
	tap_ok(r.done == 16 && current_of(CG_B) - b0 < 2 * MIB,
	       "with memcg_charge=N nothing is charged");
	it_worker_free(b, IT_WORKER_FREE_ALL);
	it_param_restore(&saved);
}

int main(void)
{
	const unsigned int sys = ION_HEAP_SYSTEM_MASK;
	struct it_worker a, b;
	struct it_heaps hs;
	const struct ion_heap_data *contig;
	char *text = NULL;
	int ion = it_setup(&hs), ret;
	long long b0, p0 = -1, p1;
	struct it_reply r;

	tap_ok(it_read_file(PARAM, &text) > 0 && text[0] == 'Y',
	       "memcg_charge is on by default");
	free(text);
	ret = setup();
	if (ret) {
		tap_ok(0, "cgroup2 with the memory controller");
		tap_diag("setup: %s", strerror(-ret));
		return tap_exit();
	}
	if (it_worker_start(&a, it_cg_join, CG_A) ||
	    it_worker_start(&b, it_cg_join, CG_B)) {
		tap_ok(0, "tasks in cgroups a and b");
		return tap_exit();
	}
	it_worker_rounds(&a, 0, sys);	/* a is in its cgroup now */
	it_worker_rounds(&b, 0, sys);
	test_limit(&a, sys);
	test_no_crossing(&a, &b, sys);
	if (it_memcg_pools_kernel()) {
		test_pool_reuse(&a, &b, sys);
		test_pool_reuse_big(&a, &b, sys);
		test_pool_reclaim(&a, &b, sys);
	} else {
		tap_skip("per-memcg pools", "kernel before 6.8: charged chunks are not pooled");
	}
	contig = it_heap_find(&hs, ION_SYSTEM_CONTIG_HEAP_NAME);
	if (contig) {
		b0 = reclaimed(CG_B);
		/*
		 * 256 KiB blocks: late in a run the guest's memory may no
		 * longer have four free 1 MiB blocks.
		 */
		r = it_worker_alloc(&b, 16, MIB / 4, 1u << contig->heap_id, 0);
		if (!tap_ok(r.done == 16 && current_of(CG_B) - b0 >= 4 * MIB,
			    "system-contig buffers are charged too"))
			tap_diag("%d of 16 allocated (%d), memory.current %lld -> %lld",
				 r.done, r.err, b0, current_of(CG_B));
		it_worker_free(&b, IT_WORKER_FREE_ALL);
	}
	test_off(&b, sys);
	if (it_memcg_pools_kernel()) {
		/*
		 * Left pooled: removing the cgroups below hands them up to
		 * the root cgroup, and the rig's unload at the end of the
		 * run (which checks the kernel log) must free them.
		 */
		p0 = charged_pooled();
		alloc_free(&a, 4, sys);
		/*
		 * Pooled before the removal: a chunk the worker reaches once
		 * its cgroup is going away is given back instead.
		 */
		ht_wait_deferred();
	}
	it_worker_stop(&a);
	it_worker_stop(&b);
	rmdir(CG_A);
	rmdir(CG_B);
	rmdir(CG_TOP);
	rmdir(CG_SINK);
	if (it_memcg_pools_kernel()) {
		p1 = charged_pooled();
		tap_diag("pool_charged_bytes %lld -> %lld", p0, p1);
		tap_ok(p0 >= 0 && p1 - p0 >= 4 * MIB,
		       "A's chunks stay pooled through the removal of its cgroups, for the unload");
	}
	close(ion);
	return tap_exit();
}
