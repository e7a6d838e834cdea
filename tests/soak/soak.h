/* SPDX-License-Identifier: MIT */
/*
 * make soak (tests/soak/): several processes do mixed work on ion at once
 * for SOAK_MINUTES; this header is what the driver (soak.c) and the
 * operations (soak_ops.c) share.
 */
#ifndef ION_SOAK_H
#define ION_SOAK_H

#include <stdint.h>

#include "heap_util.h"
#include "fz_common.h"
#include "vgem_util.h"

/* What a worker does; each op's latency and outcome are counted apart. */
enum soak_op {
	SOAK_ALLOC,	/* allocate on a random heap, /dev/ion or a node */
	SOAK_TOUCH,	/* mmap, fill under SYNC, read back, munmap */
	SOAK_FREE,	/* close the last fd */
	SOAK_HANDLE,	/* handle ABI: alloc, SHARE, IMPORT, FREE */
	SOAK_SEND,	/* SCM_RIGHTS to a child that maps and checks it */
	SOAK_VGEM,	/* PRIME import into vgem, then close */
	SOAK_EDU,	/* import into ion_test, edu DMA, check the copy */
	SOAK_KILL,	/* a child allocating in a loop killed at random */
	SOAK_ADMIN,	/* drop_caches, or a module parameter changed */
	SOAK_OPS
};

#define SOAK_SAMPLES	4096	/* latency samples kept per worker and op */
#define SOAK_WORKERS	8

struct soak_stat {
	uint64_t ops;
	uint64_t enomem;	/* allowed: contiguous heaps, the carveout */
	uint64_t errors;	/* anything else: a failure */
	uint64_t corrupt;	/* a data check that did not hold: a failure */
	uint32_t nsamples;
	uint32_t us[SOAK_SAMPLES];
};

/* One worker's counters, in memory shared with the driver. */
struct soak_worker {
	struct soak_stat op[SOAK_OPS];
	char last_error[128];
};

/* What every worker needs: the heaps and nodes, its seed and deadline. */
struct soak_ctx {
	struct it_heaps hs;
	struct fz_nodes nodes;
	int ion;
	int tfd;		/* /dev/ion_test, -1 without */
	int edu;		/* ion_test has edu (DMA works) */
	int vgem;		/* a vgem node, -1 without */
	uint64_t seed;
	long long deadline_ms;
	struct soak_worker *w;
};

extern const char *const soak_op_names[SOAK_OPS];

/* Run op @op once and count it: its latency, ENOMEM, error or corruption. */
void soak_run(struct soak_ctx *c, enum soak_op op);

/* Close this worker's buffers and its receiver's socket. */
void soak_drop_all(void);

/* Monotonic microseconds. */
uint64_t soak_now_us(void);

/* Restore the module parameters SOAK_ADMIN changed. */
void soak_params_restore(void);

#endif /* ION_SOAK_H */
