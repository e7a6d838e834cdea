/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: one allocation shared out between the caller and helper
 * threads on other CPUs (ion_parallel.c).
 *
 * A heap that must fill a large buffer with fresh memory, which the page
 * allocator zeroes in the allocating thread (init_on_alloc, __GFP_ZERO),
 * can have idle CPUs zero part of it: the job is a number of bytes, taken
 * in pieces by whoever is free, the caller included.  What each
 * participant does with a piece is the heap's ion_parallel_fn; each keeps
 * what it allocated apart (by its index, 0 for the caller), and the heap
 * puts the parts together once ion_parallel_run() returned.
 */
#ifndef _ION_PARALLEL_H
#define _ION_PARALLEL_H

#include <linux/atomic.h>
#include <linux/types.h>
#include <linux/workqueue.h>

/* The most helpers one job takes, whatever parallel_helpers says. */
#define ION_PARALLEL_MAX_HELPERS	3

struct ion_parallel;
struct task_struct;

/**
 * typedef ion_parallel_fn - what each participant of a job runs
 * @par: the job
 * @who: the participant: 0 for the caller, 1 to nhelpers for the helpers
 *
 * Takes pieces with ion_parallel_claim() until it answers false, and
 * calls ion_parallel_stop() when a piece cannot be done.  Between units of
 * work within a piece, ion_parallel_stopped() tells whether to give up.
 * Runs in the caller's context for @who 0, in a kworker otherwise.
 */
typedef void (*ion_parallel_fn)(struct ion_parallel *par, unsigned int who);

/**
 * struct ion_parallel_helper - one helper's work item
 * @work: queued on system_unbound_wq, on the caller's stack
 * @par:  its job
 * @who:  its index for the job's ion_parallel_fn
 */
struct ion_parallel_helper {
	struct work_struct work;
	struct ion_parallel *par;
	unsigned int who;
};

/**
 * struct ion_parallel - one job, in pieces, for the caller and its helpers
 * @fn:       what every participant runs
 * @left:     bytes not claimed yet
 * @piece:    the most one claim takes
 * @err:      0, or the first error a participant stopped the job with
 * @task:     the caller: its fatal signals stop the job
 * @nhelpers: the helpers queued, at most ION_PARALLEL_MAX_HELPERS
 * @helper:   their work items
 *
 * Lives on the caller's stack for one ion_parallel_run(); @left and @err
 * are atomic, everything else is written before the helpers are queued.
 */
struct ion_parallel {
	ion_parallel_fn fn;
	atomic_long_t left;
	unsigned long piece;
	atomic_t err;
	struct task_struct *task;
	unsigned int nhelpers;
	struct ion_parallel_helper helper[ION_PARALLEL_MAX_HELPERS];
};

unsigned int ion_parallel_helpers(unsigned long len, unsigned long piece);
int ion_parallel_run(struct ion_parallel *par, ion_parallel_fn fn,
		     unsigned long len, unsigned long piece,
		     unsigned int nhelpers);
bool ion_parallel_claim(struct ion_parallel *par, unsigned long *len);
bool ion_parallel_stopped(struct ion_parallel *par);
void ion_parallel_stop(struct ion_parallel *par, int err);

#endif /* _ION_PARALLEL_H */
