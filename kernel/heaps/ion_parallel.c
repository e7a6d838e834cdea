// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: one allocation shared out between the caller and helpers.
 */

/**
 * DOC: parallel fill
 *
 * The page allocator zeroes every page it hands out in the thread that
 * asked (init_on_alloc, __GFP_ZERO), so filling a large buffer with fresh
 * memory costs the caller one pass of clearing over all of it: 64 MiB is
 * tens of milliseconds even on fast hardware.  Other CPUs are often idle
 * meanwhile; ion_parallel_run() lets up to parallel_helpers of them take
 * part.  The job is a byte count, claimed in pieces (the heap's largest
 * chunk) by whoever is free: the caller works on it too, and once nothing
 * is left to claim it cancels the helpers that have not started and waits
 * only for those in the middle of a piece.  So a busy machine, where a
 * helper never gets a CPU, costs the caller a queued work item and no
 * waiting; what it may wait for is one piece per helper that started,
 * and longer only if such a helper is preempted meanwhile.
 *
 * Helpers are off by default (parallel_helpers=0): they are kworkers of
 * system_unbound_wq, placed by the scheduler where a CPU is free, and the
 * CPU time they spend is charged to no cgroup of the caller's.  A task
 * under a cpu.max limit would escape it by allocating large buffers, so
 * helpers are for systems that trust every allocating task with idle
 * CPUs: a dedicated media device may set parallel_helpers (to 3, say).
 *
 * Even then their CPU time is not the caller's, and they are in no cgroup
 * or cpuset of the caller's.  So only an unconfined caller gets
 * them: allowed every online CPU and every memory node, with no memory
 * policy and no reclaim scope (memalloc_nofs_save(), ...) of its own, and
 * scheduled as an ordinary task at nice 0 or below.  A real-time or
 * deadline caller would wait on nice-0 kworkers (priority inversion), an
 * idle, batch or niced one would have them work at a priority it does not
 * have.  (A caller's cpu cgroup limits are not looked at: a throttled
 * group's task still gets helpers, hence the default of none.)
 * Anyone else, and every job smaller than parallel_min_kb, is done by the
 * caller alone, the same code with no helpers.  A fatal signal to the
 * caller stops the helpers too.
 */
#include <linux/cpumask.h>
#include <linux/cpuset.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>

#include "ion_memcg.h"
#include "ion_parallel.h"

static unsigned int parallel_helpers;
module_param(parallel_helpers, uint, 0644);
MODULE_PARM_DESC(parallel_helpers,
		 "Most helper threads on other CPUs one large allocation takes (default 0: none, as their CPU time escapes the caller's cgroup cpu.max; at most 3, e.g. 3 on a dedicated media device)");

static unsigned int parallel_min_kb = 2048;
module_param(parallel_min_kb, uint, 0644);
MODULE_PARM_DESC(parallel_min_kb,
		 "Fresh memory (KiB) an allocation must need before helpers share it (default 2048)");

/*
 * A caller in a reclaim scope of its own (memalloc_nofs_save(), say, with
 * a filesystem lock held) must not have helpers reclaim for it outside
 * that scope: they could wait on the lock it holds while it waits for
 * them.
 */
#define ION_PARALLEL_SCOPES	(PF_MEMALLOC | PF_MEMALLOC_NOFS | \
				 PF_MEMALLOC_NOIO | PF_MEMALLOC_PIN)

/* SCHED_NORMAL at nice 0 or below: see the DOC above. */
static bool ion_parallel_ordinary_task(void)
{
	return current->policy == SCHED_NORMAL && task_nice(current) <= 0;
}

#ifdef CONFIG_NUMA
static bool ion_parallel_unconfined_mems(void)
{
	return !current->mempolicy &&
	       nodes_subset(node_states[N_MEMORY], cpuset_current_mems_allowed);
}
#else
static bool ion_parallel_unconfined_mems(void)
{
	return true;
}
#endif

/**
 * ion_parallel_helpers() - how many helpers a job is worth
 * @len:   bytes of the job that need real work (fresh memory to zero)
 * @piece: the bytes one claim takes
 *
 * None below parallel_min_kb, nor for a caller confined to some CPUs or
 * memory nodes, inside a reclaim scope (PF_MEMALLOC_NOFS, ...), not an
 * ordinary task at nice 0 or below, or charged to a memory cgroup (a
 * kworker's pages would be charged to no one); otherwise one per piece beyond the
 * first, at most parallel_helpers and one fewer than the online CPUs.
 *
 * Context: Process context (reads current's CPU and memory constraints).
 * Return: the helper count for ion_parallel_run().
 */
unsigned int ion_parallel_helpers(unsigned long len, unsigned long piece)
{
	unsigned int n = min_t(unsigned int, READ_ONCE(parallel_helpers),
			       ION_PARALLEL_MAX_HELPERS);

	if (!n || len < (unsigned long)READ_ONCE(parallel_min_kb) << 10 ||
	    len <= piece)
		return 0;
	n = min_t(unsigned long, n, len / piece - 1);
	n = min(n, num_online_cpus() - 1);
	if (!n || !cpumask_subset(cpu_online_mask, current->cpus_ptr) ||
	    !ion_parallel_unconfined_mems() ||
	    (current->flags & ION_PARALLEL_SCOPES) ||
	    !ion_parallel_ordinary_task() || ion_memcg_caller_charged())
		return 0;
	return n;
}

static void ion_parallel_helper_work(struct work_struct *work)
{
	struct ion_parallel_helper *h =
		container_of(work, struct ion_parallel_helper, work);

	h->par->fn(h->par, h->who);
}

/**
 * ion_parallel_run() - do a job with the caller and up to @nhelpers helpers
 * @par:      the job, on the caller's stack; filled in here
 * @fn:       what every participant runs
 * @len:      the job's size in bytes
 * @piece:    the most one claim takes (not 0; it and @len at most LONG_MAX)
 * @nhelpers: helpers to queue (see ion_parallel_helpers()); 0 runs @fn in
 *            the caller only
 *
 * Returns once no participant is running @fn any more: helpers that never
 * started are cancelled.
 *
 * Context: Process context; may sleep.
 * Return: 0 when every byte was claimed and done, the error the job was
 * stopped with (-EINTR for a fatal signal), or -EINVAL for a bad @piece or
 * @len.
 */
int ion_parallel_run(struct ion_parallel *par, ion_parallel_fn fn,
		     unsigned long len, unsigned long piece,
		     unsigned int nhelpers)
{
	unsigned int i;

	if (WARN_ON_ONCE(!piece || piece > LONG_MAX || len > LONG_MAX))
		return -EINVAL;
	par->fn = fn;
	atomic_long_set(&par->left, len);
	par->piece = piece;
	atomic_set(&par->err, 0);
	par->task = current;
	par->nhelpers = min_t(unsigned int, nhelpers,
			      ION_PARALLEL_MAX_HELPERS);
	for (i = 0; i < par->nhelpers; i++) {
		struct ion_parallel_helper *h = &par->helper[i];

		h->par = par;
		h->who = i + 1;
		INIT_WORK_ONSTACK(&h->work, ion_parallel_helper_work);
		queue_work(system_unbound_wq, &h->work);
	}
	fn(par, 0);
	for (i = 0; i < par->nhelpers; i++) {
		cancel_work_sync(&par->helper[i].work);
		destroy_work_on_stack(&par->helper[i].work);
	}
	return atomic_read(&par->err);
}

/**
 * ion_parallel_stop() - stop a job: nobody claims another piece
 * @par: the job
 * @err: why (a negative errno); the first one stands
 *
 * Context: any.
 */
void ion_parallel_stop(struct ion_parallel *par, int err)
{
	atomic_cmpxchg(&par->err, 0, err);
}

/**
 * ion_parallel_stopped() - whether a participant should give up
 * @par: the job
 *
 * A fatal signal to the caller stops the job with -EINTR.
 *
 * Context: a participant of @par.
 * Return: true once the job is stopped.
 */
bool ion_parallel_stopped(struct ion_parallel *par)
{
	if (atomic_read(&par->err))
		return true;
	/* Another task's signals, unlocked: a racy look is all it needs. */
	if (!data_race(fatal_signal_pending(par->task)))
		return false;
	ion_parallel_stop(par, -EINTR);
	return true;
}

/**
 * ion_parallel_claim() - take the next piece of a job
 * @par: the job
 * @len: set to the piece's size: the job's piece, or what is left
 *
 * Context: a participant of @par.
 * Return: true with a piece to do; false when nothing is left or the job
 * is stopped.
 */
bool ion_parallel_claim(struct ion_parallel *par, unsigned long *len)
{
	long left = atomic_long_read(&par->left);
	long take;

	do {
		if (left <= 0 || ion_parallel_stopped(par))
			return false;
		take = min_t(long, left, par->piece);
	} while (!atomic_long_try_cmpxchg(&par->left, &left, left - take));
	*len = take;
	return true;
}
