/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ioctl's own declarations, shared by tests/guest/fuzz_ioctl.c (the
 * loop and main) and the files of tests/guest/fuzz_ioctl/: record.c
 * (violations, counted calls), args.c (argument placement, fd and handle
 * pools, argument values), ops_ion.c (ion ioctls and dma-heap nodes),
 * ops_random.c (random command numbers), ops_fd.c (dma-buf ioctls,
 * mmap, munmap, touching, close, dup, open), ops_dev.c (real importers:
 * ion_test's edu and vgem), coverage.c (which of the auto heap's paths
 * ran), quota.c (the runs with quotas set), inject.c (the main run with
 * ion's fault injection) and kfault.c (with the kernel's).
 */
#ifndef ION_FUZZ_IOCTL_H
#define ION_FUZZ_IOCTL_H

#include <execinfo.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <ucontext.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>

#include "fz_common.h"
#include "heap_util.h"

#define DEF_ITERATIONS	200000	/* total, over all threads */
#define DEF_PROCS	2	/* worker processes besides this one */
#define DEF_THREADS	2	/* threads per process */
#define MAX_FDS		40
#define MAX_MAPS	16
#define MAX_HANDLES	32
#define MAX_RECS	48
#define DEV_SLOTS	8	/* ION_TEST_MAX_SLOTS: imports per file */
/*
 * Imports of one buffer a thread holds at once.  DMA-API debugging warns
 * past 7 overlapping mappings of a cache line ("exceeded 7 overlapping
 * mappings"), counting the buffer's own DMA allocation (DMA and auto
 * heaps): a limit of its tracking, not of ion.  Seen with 8 imports of
 * one auto buffer.  2 per thread, a forked child's 2 more and each one's
 * vgem import stay under it.
 */
#define DEV_SAME_BUF	2
#define MAX_GEM		8	/* vgem handles a thread keeps */
#define BYTES_BUDGET	(12 << 20)	/* buffers a thread keeps */
#define FORK_ONE_IN	600
#define CHILD_OPS	150
#define PG		4096UL

typedef unsigned __int128 eset_t;	/* bit 0: success, bit e: errno e */
#define E(e)		((eset_t)1 << (e))
#define OK		E(0)

/* ------------------------------------------------------------------ */
/* Shared between all processes                                        */

struct rec {
	char key[64];
	char desc[320];
	int err;
	long count;
};

struct shared {
	long long op_ns[32];	/* time spent in each kind of op */
	long calls;
	long violations;
	long children;
	long fork_failed;	/* fork() itself failed */
	long munmap_failed;	/* munmap() failed: the mapping kept */
	long touch_sigbus;	/* touches whose first use found no memory */
	int fork_errno;		/* the last such errno */
	long child_crashes;
	long setup_errors;
	long edquot;		/* calls that answered EDQUOT */
	long dev[8];		/* enum dev_count, ops_dev.c */
	int lock;
	int nrec;
	int dropped;
	struct rec recs[MAX_RECS];
};

extern struct shared *sh;

/* ------------------------------------------------------------------ */
/* Configuration and what the setup learned                            */

extern uint64_t seed;
extern long iterations;
extern int nprocs, nthreads;
extern int only_proc, only_thread;
extern int verbose;
extern struct it_heaps hs;
extern unsigned int heap_mask;
extern unsigned long long totalram;
extern struct fz_nodes nodes;
extern int have_system_dma_heap;
extern long per_thread;		/* calls each thread makes */

/* Run @n threads as process @proc (fuzz_ioctl.c). */
void run_threads(int proc, int n);

/* ------------------------------------------------------------------ */
/* Per-thread state                                                    */

enum kind { K_ION, K_BUF, K_NODE, K_FOREIGN, K_OTHER };

struct ffd {
	int fd;
	enum kind kind;
	size_t size;		/* K_BUF, K_FOREIGN */
	int heap;		/* K_BUF: heap id when known, else -1 */
	int not_auto;		/* K_BUF of heap -1: known not the auto heap's */
};

/* An import in the thread's ion_test file. */
struct dslot {
	unsigned int slot;
	int is_auto;		/* of an auto-heap buffer */
	unsigned long ino;	/* the dma-buf's inode */
};

struct fmap {
	unsigned char *addr;
	size_t len;
	int prot;
	int deferred;	/* an auto-heap buffer's (or of a heap not known) */
	int kind;	/* the kind of fd mapped */
	int heap;	/* its buffer's heap id, -1 when not known */
	unsigned long long off;	/* the mmap offset */
};

enum mode {
	M_OK, M_NULL, M_LOW, M_KERNEL, M_NONE, M_STRADDLE_NONE, M_RO,
	M_STRADDLE_RO, M_COUNT
};

struct thr {
	int proc, idx;
	int in_child;
	uint64_t rng;
	long iter, calls;
	pthread_t tid;
	unsigned char *scratch;	/* A (rw), B (rw or ro), C (none) */
	struct ion_heap_data *qbuf;
	struct ffd fds[MAX_FDS];
	int nfds;
	struct fmap maps[MAX_MAPS];
	int nmaps;
	int handles[MAX_HANDLES];
	int nhandles;
	size_t bytes;
	int tfd;		/* its /dev/ion_test: -1 not yet, -2 none */
	struct dslot dslots[DEV_SLOTS];
	int ndslots;
	int drm;		/* its vgem node: -1 not yet, -2 none */
	uint32_t gem[MAX_GEM];	/* vgem's handles of imported buffers */
	int ngem;
};

/* One call, for the record. */
struct call {
	const char *name;
	unsigned long cmd;
	int fd_kind;
	int fd;			/* the fd called, when recorded; else 0 (stdin) */
	enum mode mode;
	unsigned long long a[6];
	int na;
};

static inline uint64_t rnd(struct thr *t)
{
	return fz_next(&t->rng);
}

static inline uint64_t below(struct thr *t, uint64_t n)
{
	return fz_below(&t->rng, n);
}

static inline int one_in(struct thr *t, uint64_t n)
{
	return fz_one_in(&t->rng, n);
}

/* ------------------------------------------------------------------ */
/* Recording and counted calls (record.c)                             */

void violation(struct thr *t, const struct call *c, int err,
	       const char *why);
int check(struct thr *t, const struct call *c, int err, eset_t allowed,
	  const char *why);
void log_call(const struct thr *t, const struct call *c);
/* One failed case per kind of violation, then the total; @what: a prefix. */
void report_violations(const char *what);
/* Zero the counters and records of the shared memory for another run. */
void shared_reset(void);
/*
 * Record @fd in @c, log the call and make it: c->cmd on @fd, counted.
 * Returns its errno, 0 for success.
 */
int call_ioctl(struct thr *t, struct call *c, int fd, void *arg);
void count_call(struct thr *t);

/* Record a call's arguments (at most 6) for its log and its violations. */
void call_args(struct call *c, const unsigned long long *a, int na);
#define CALL_ARGS(c, ...)						\
	call_args((c), (const unsigned long long[]){ __VA_ARGS__ },	\
		  sizeof((unsigned long long[]){ __VA_ARGS__ }) /	\
		  sizeof(unsigned long long))

/*
 * Place @size bytes of @arg as c->mode says (place() may change the mode),
 * log the call and make it: c->cmd on @fd.  Returns the argument passed;
 * *@err is the call's errno, 0 for success.
 */
void *call_placed(struct thr *t, struct call *c, int fd, const void *arg,
		  size_t size, int *err);

/* ------------------------------------------------------------------ */
/* Arguments and pools (args.c)                                       */

unsigned char *pa(struct thr *t);
unsigned char *pb(struct thr *t);
unsigned char *pc(struct thr *t);
void b_prot(struct thr *t, int prot);
enum mode pick_mode(struct thr *t);
void *place(struct thr *t, const void *data, size_t size,
	    enum mode *mode);
int mode_readable(enum mode m);
eset_t by_mode(enum mode m, int out, eset_t handler);
void fd_add(struct thr *t, int fd, enum kind kind, size_t size);
/* fd_add() with the buffer's heap id (-1: unknown); its index, or -1. */
int fd_add_heap(struct thr *t, int fd, enum kind kind, size_t size,
		int heap);
void fd_remove(struct thr *t, int i);
int fd_pick(struct thr *t, enum kind kind);
void fd_make_room(struct thr *t);
void open_failed(struct thr *t);
int ion_fd(struct thr *t);
size_t buf_size(int fd);
void handle_add(struct thr *t, int h);
int pick_handle(struct thr *t, int take);
unsigned long long pick_len(struct thr *t, int *sane);
unsigned int pick_mask(struct thr *t);
unsigned int pick_flags(struct thr *t);

/*
 * Garbage for the input fields the historic kernels never read; the lenient
 * forms of the ion ioctls put it there and expect what a clean call gets.
 */
#define LENIENT_GARBAGE	0xA5A5A5A5U
int len_einval(unsigned long long len);
unsigned long long page_align(unsigned long long len);
/* After an allocation from @heap (-1: not known): its index, or -1. */
int new_buf(struct thr *t, const struct call *c, int fd,
	    unsigned long long len, int heap);

/* ------------------------------------------------------------------ */
/* ion ioctls and dma-heap nodes (ops_ion.c)                          */

void op_alloc(struct thr *t);
int node_fd(struct thr *t);
void op_alloc_legacy(struct thr *t);
void op_free(struct thr *t);
void op_share(struct thr *t);
void op_import(struct thr *t);
void op_custom(struct thr *t);
void op_sync_ion(struct thr *t);
void op_heap_query(struct thr *t);
void op_abi_version(struct thr *t);
void op_node_alloc(struct thr *t);

/* ------------------------------------------------------------------ */
/* Random command numbers (ops_random.c)                              */

void op_random_cmd(struct thr *t);

/* ------------------------------------------------------------------ */
/* dma-buf ioctls, mappings and fds (ops_fd.c)                        */

/* What DMA_BUF_IOCTL_SYNC with @flags may answer on a pool fd of @kind. */
eset_t sync_eset(int kind, int maybe_auto, unsigned long long flags);
void op_dmabuf_sync(struct thr *t);
void op_set_name(struct thr *t);
void op_munmap(struct thr *t);
void op_mmap(struct thr *t);
void op_touch(struct thr *t);
/*
 * From the SIGBUS handler: if this thread was touching a mapping whose
 * first use may fail, go back to that touch (it counts the signal);
 * otherwise return.
 */
void touch_recover(int sig);
void op_close(struct thr *t);
void op_dup(struct thr *t);
void op_open(struct thr *t);

/* ------------------------------------------------------------------ */
/* Real importers: ion_test's edu and vgem (ops_dev.c)                */

/* What the importers did, counted over all processes in sh->dev[]. */
enum dev_count {
	DC_IMPORT,	/* ION_TEST_IOC_IMPORT succeeded */
	DC_EDU_MAPPED,	/* ... and edu mapped the buffer */
	DC_AUTO_EDU,	/* edu attached and mapped an auto buffer */
	DC_REFUSED,	/* edu's or the probe's attach to an auto buffer: ERANGE */
	DC_RELEASE,	/* ION_TEST_IOC_RELEASE: edu detached */
	DC_VGEM_IMPORT,	/* vgem imported a buffer (attached, mapped) */
	DC_VGEM_CLOSE,	/* vgem let one go (detached) */
	DC_COUNT
};

/* ion_test and vgem as the main process found them (dev_setup()). */
extern struct ion_test_info edu;
extern int have_ion_test, have_vgem, have_auto;

/* Load ion_test and vgem, learn edu's constraints; before the threads. */
void dev_setup(void);
/* Unload vgem if dev_setup() loaded it (ion_test: at exit). */
void dev_teardown(void);
/* A thread's importer state: none open yet. */
void dev_thr_init(struct thr *t);
/* A forked child: its own importers, not its parent's. */
void dev_forked(struct thr *t);
/* Close the thread's importers: every import dropped. */
void dev_thr_cleanup(struct thr *t);
void op_dev_import(struct thr *t);
void op_dev_release(struct thr *t);
void op_vgem(struct thr *t);

/* ------------------------------------------------------------------ */
/* Coverage of the auto heap's paths (coverage.c)                     */

/* Start counting: an ion_backing trace, the auto heap's counters. */
void cov_start(void);
/*
 * Stop and report what ran; when @assert, each path of the auto heap
 * that the boot allows is a case that must have run at least once.
 */
void cov_report(int assert);

/* ------------------------------------------------------------------ */
/* Quota runs (quota.c)                                               */

#define QUOTA_RUNS	3
#define QUOTA_PROC	100	/* the process number P of quota run i: 100 + i */

/* A quota applies to the calls of this process: EDQUOT is allowed. */
extern int quota_set;

/* EDQUOT, as an allowed answer of an allocation, while quota_set. */
eset_t quota_eset(void);
/* Learn whether root's own calls are limited (quota_root). */
void quota_init(void);
/* The quota runs, @calls over all three, each parameter restored after. */
void quota_runs(long calls);

/* ------------------------------------------------------------------ */
/* Fault injection during the main run (inject.c)                     */

/* --fail-percent: chance in % that each injectable step fails (0: off). */
extern int fail_percent;
/* Set the knobs; 1 when every write worked (or injection is off). */
int inject_start(void);
/* Set them back to 0; the number of failures injected. */
long inject_stop(void);

/* ------------------------------------------------------------------ */
/* The kernel's fault injection during the main run (kfault.c)          */

/* --kernel-faults: chance in % that a slab or page allocation fails. */
extern int kfault_percent;
/* Set while the knobs are armed: check() then allows ENOMEM, ENOBUFS. */
extern int kfault_armed;
/* Arm failslab and fail_page_alloc; 1 when armed (or when off). */
int kfault_start(void);
/* Make the calling thread (and what it forks) subject to them, or not. */
void kfault_thread(int on);
/* Disarm; the number of allocations failed. */
long kfault_stop(void);

#endif /* ION_FUZZ_IOCTL_H */
