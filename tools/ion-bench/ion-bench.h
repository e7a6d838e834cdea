/* SPDX-License-Identifier: MIT */
/*
 * ion-bench's own declarations, shared by tools/ion-bench.c (the head
 * comment, the options, main) and the files of tools/ion-bench/, one part
 * each: context.c (the pool hook, helper CPUs, memory cgroups, tracing:
 * what a run waits for or runs in), ops.c (allocation and the timed ops),
 * run.c (running a case round-robin, its statistics and rows), scaling.c
 * (the scaling and directmap ops), impls.c (finding the implementations)
 * and bounce.c (swiotlb bytes bounced for edu, the "bounce" op).
 */
#ifndef ION_BENCH_H
#define ION_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <ion/ion.h>

#include "ion_debugfs_priv.h"

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
#define MAX_SIZES	8

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

/* One implementation's share of a group: its op, samples and state. */
struct member {
	struct impl *im;
	const char *op;
	op_fn fn;
	unsigned int n;
	int err;
	struct sample s[MAX_REPS];
};

/* ---- configuration (ion-bench.c: the options) ------------------------------ */

extern uint64_t budget_ns, cold_budget_ns;	/* -b, -c */
extern int dump_samples;			/* -S */
extern const char *only_impls, *only_ops;	/* -i, -o */
extern size_t sizes[MAX_SIZES];			/* -s */
extern unsigned int nsizes;
extern unsigned int max_live;			/* -L */
extern unsigned int dm_rounds;			/* -R */
extern int helpers_on;				/* -H */

uint64_t now_ns(void);
/* A progress line "# ..." on stdout (and what the guest's console shows). */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sleep_ns(uint64_t ns);
/* Is @name in the comma-separated @list (NULL: everything is)? */
int selected(const char *list, const char *name);

/* ---- context.c: what a run waits for or runs in ---------------------------- */

extern char helper_file[128];
extern int helpers_orig;
extern char trace_dir[200];

int pool_state(const struct impl *im, char *out, size_t n);
uint64_t wait_quiet(void);
void drain_pools(void);
long long helper_bytes(void);
int set_helpers(int v);
void setup_helpers(void);
int move_cgroup(int in);
int setup_tracing(void);
int set_context(const struct impl *im);
int setup_memcg(void);

/* ---- ops.c: allocation and the timed ops ------------------------------------ */

extern struct ion_device *iondev;
extern const struct ion_heap_data *memcg_heap;	/* the system heap */
extern void *memset_buf;

int buf_alloc(struct impl *im, size_t size, struct buf *b);
void buf_free(struct buf *b);
int op_alloc_free_cold(struct impl *im, size_t size, struct sample *s);
int op_alloc_free_warm(struct impl *im, size_t size, struct sample *s);
int op_alloc_map_touch(struct impl *im, size_t size, struct sample *s);
int op_memset(struct impl *im, size_t size, struct sample *s);
#ifdef __x86_64__
#define HAVE_STOSB 1
int op_memset_stosb(struct impl *im, size_t size, struct sample *s);
#else
#define HAVE_STOSB 0
#define op_memset_stosb op_memset
#endif

/* ---- run.c: running a case ------------------------------------------------- */

void skip(const char *impl, const char *op, size_t size, const char *why);
void report(const struct member *m, size_t size, unsigned int live);
void run_group(unsigned int nm, size_t size, unsigned int live,
	       uint64_t budget);
void add_member(unsigned int *nm, struct impl *im, const char *op,
		op_fn fn);
void run_op(const char *op, op_fn fn);

/* ---- scaling.c, impls.c, bounce.c ----------------------------------------- */

void run_scaling(void);
void run_directmap(void);

extern struct impl impls[MAX_IMPLS];
extern int nimpls;
void find_impls(void);

/*
 * The "bounce" op: ion-auto's and ion-system's 1 MiB buffers mapped and
 * read by edu, the bytes swiotlb bounced ("@bounce" rows); ion_test is
 * loaded with edu_dma_bits @edu_bits when it is not loaded yet.
 */
void run_bounce(int edu_bits);

#endif /* ION_BENCH_H */
