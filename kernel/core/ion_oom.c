// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: what the OOM killer sees - a buffer counts in the RSS of the
 * process that allocated it.
 */
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/notifier.h>
#include <linux/oom.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>

#include "ion_priv.h"

/**
 * DOC: the OOM killer
 *
 * The OOM killer picks its victim by badness: the RSS of the victim's
 * address space (its mm), its swap entries and its page tables.  Memory
 * behind an ion buffer is in no page table the kernel counts (user
 * mappings are PFN maps), so without help a process holding most of RAM
 * in ion buffers looks empty and an innocent process dies instead.
 *
 * So every byte of a live buffer counts in the RSS of the address space
 * that allocated it, as shared memory: the mm's MM_SHMEMPAGES counter,
 * which /proc/<pid>/status shows as RssShmem (and within VmRSS and the
 * high-water mark VmHWM, hence getrusage()'s ru_maxrss), /proc/<pid>/statm
 * within "resident" and "shared", /proc/<pid>/oom_score through the
 * badness, and the OOM killer's "Killed process" line as shmem-rss.
 * (smaps, which walks page tables, does not show it; the rss_stat
 * tracepoint, which modules cannot reach, does not fire for it.)  The
 * rule for a shared buffer:
 *
 * - The charge is taken when the buffer goes live, from the address
 *   space of the task that made the allocation call (whichever client's
 *   file it used), and given back when the buffer is freed, whoever
 *   drops the last reference.  It never moves: passing the fd to another
 *   process, closing it in the allocator, importing or mapping it
 *   elsewhere leaves it where it is.  A process therefore cannot hide its
 *   buffers by handing their fds around while it lives; an OOM kill of
 *   the allocator frees what only it holds.
 * - The charge is not taken for kernel clients (include/linux/ion.h),
 *   for tasks without an address space (kernel threads), for heaps of
 *   memory set aside at boot (&ion_heap.reserved_mem: the carveout, whose
 *   memory a kill would not give back to anyone else), or while the
 *   module parameter oom_charge is off (it applies to buffers allocated
 *   from then on; each buffer remembers whether it was charged).  Every
 *   other heap is charged: system, system-contig, and the DMA heap (its
 *   memory, CMA's included, serves other allocations once freed).
 * - Limit: when the charged address space goes (the allocator exits, or
 *   replaces its image with execve()) while another process still holds
 *   the buffer, the buffer counts in no live process's RSS: the charge
 *   stays with the dead address space until the buffer is freed.  What a
 *   user can hide that way is bounded by the per-user quotas (ion_quota.c:
 *   by default half of RAM, or of the heap's size, on each heap - so across
 *   the heaps up to about all of RAM, less the reserve the heaps keep;
 *   set uid_max_kb lower where that matters) and,
 *   for system and system-contig buffers of a task in a memory cgroup, by
 *   the cgroup's charge, both of which count the buffer against the
 *   allocator for its whole life.
 *
 * A charged buffer holds a reference on the mm_struct (mmgrab(), not the
 * address space: a dead allocator's mm_struct, a few KiB, stays until its
 * last charged buffer is freed), so the counter is back at zero before
 * the kernel checks it on freeing the mm.  The charge and uncharge are a
 * per-CPU counter add each, lock-free on the allocation path.
 *
 * One more step makes the kill free what it was meant to: a victim tears
 * down its address space (which tells the OOM killer it may choose
 * again) before it closes its files (which frees its buffers), and an
 * OOM in between would kill a second, innocent process.  While a victim
 * (from its kill on) whose address space still carries ion's charge has a
 * thread not yet done exiting, ion's OOM notifier reports memory on its
 * way, so the allocation that ran out retries instead; for one victim at
 * most %ION_OOM_WAIT (the OOM reaper's own grace period) without its charge
 * going down, and %ION_OOM_WAIT_MAX (30 s) in all, so a victim stuck in
 * its exit cannot hold the OOM killer back for good (not even while
 * another process frees its buffers one by one), while one still closing
 * its buffers on a slow or loaded machine (a 7.3 guest beside other
 * guests took longer than 2 s to free 1.5 GiB, and the OOM killer killed
 * the innocent process too) is waited for.  A victim whose
 * buffers other processes still hold is done exiting with the charge
 * still there: the OOM killer goes on at once.  Memory cgroup OOMs call
 * no notifier and do not wait.
 */

static bool oom_charge = true;
module_param(oom_charge, bool, 0644);
MODULE_PARM_DESC(oom_charge,
		 "count each buffer in the RSS (RssShmem) of the process that allocated it, for the OOM killer (default on)");

static void ion_oom_add(struct mm_struct *mm, long pages)
{
	ion_mm_counter_add(mm, MM_SHMEMPAGES, pages);
}

/**
 * ion_oom_charge() - count a new buffer in its allocator's RSS
 * @buffer: a buffer going live, with its size and owner set
 *
 * Charges the address space of the calling task unless the buffer is a
 * kernel client's, the caller has no address space of its own, the heap's
 * memory was reserved at boot, or oom_charge is off; @buffer->oom_mm
 * records the charged mm (or NULL).
 *
 * Context: Process context, the allocating task; does not sleep.
 */
void ion_oom_charge(struct ion_core_buffer *buffer)
{
	struct mm_struct *mm = current->mm;

	buffer->oom_mm = NULL;
	if (!READ_ONCE(oom_charge) || buffer->owner->kernel || !mm ||
	    (current->flags & PF_KTHREAD) || buffer->base.heap->reserved_mem)
		return;
	mmgrab(mm);
	ion_oom_add(mm, buffer->base.size >> PAGE_SHIFT);
	buffer->oom_mm = mm;
}

/**
 * ion_oom_uncharge() - undo ion_oom_charge() as the buffer is freed
 * @buffer: the buffer
 *
 * The charged mm may belong to another process than the caller's, or to
 * none any more; the reference the charge holds keeps its counters alive.
 *
 * Context: Process context.
 */
void ion_oom_uncharge(struct ion_core_buffer *buffer)
{
	struct mm_struct *mm = buffer->oom_mm;

	if (!mm)
		return;
	buffer->oom_mm = NULL;
	ion_oom_add(mm, -(long)(buffer->base.size >> PAGE_SHIFT));
	mmdrop(mm);
}

#define ION_OOM_WAIT	(2 * HZ)
/* Longest wait for one victim, however it progresses. */
#define ION_OOM_WAIT_MAX	(15 * ION_OOM_WAIT)

/* Has @p, an OOM victim, a thread that may still close its files? */
static bool ion_oom_exiting(struct task_struct *p)
{
	struct task_struct *t;

	for_each_thread(p, t)
		if (!t->exit_state)
			return true;
	return false;
}

/*
 * The address space of a victim still exiting with ion's charge, or NULL;
 * the pages still charged to it in *@pages.
 */
static struct mm_struct *ion_oom_pending(unsigned long *pages)
{
	struct task_struct *p;
	struct mm_struct *mm;

	for_each_process(p) {
		/*
		 * From the kill on, not only once the victim's address space
		 * is gone (MMF_OOM_SKIP): out_of_memory() asks the notifiers
		 * before it looks for a victim, and one that finishes tearing
		 * its address space down in between lets it choose again.
		 */
		mm = p->signal->oom_mm;
		if (!mm)
			continue;
		*pages = get_mm_counter(mm, MM_SHMEMPAGES);
		if (*pages && ion_oom_exiting(p))
			return mm;
	}
	return NULL;
}

/*
 * Called by out_of_memory() under its oom_lock, which also serializes
 * the victim and the time it was first seen.  The mm is compared, never
 * dereferenced: one freed and reused at the same address only shortens
 * a wait.
 */
static int ion_oom_notify(struct notifier_block *nb, unsigned long unused,
			  void *parm)
{
	static unsigned long first, since, left;
	static struct mm_struct *victim;
	unsigned long *freed = parm, pages = 0;
	struct mm_struct *mm;

	rcu_read_lock();
	mm = ion_oom_pending(&pages);
	rcu_read_unlock();
	if (!mm) {
		/* A later victim at the same address is a new one. */
		victim = NULL;
		return NOTIFY_DONE;
	}
	if (mm != victim)
		first = jiffies;
	/*
	 * A victim still giving buffers back gets the grace period anew, but
	 * not for ever: a stuck victim whose buffers another process frees
	 * one by one would hold the OOM killer back as long as it liked.
	 */
	if (mm != victim || pages < left) {
		victim = mm;
		since = jiffies;
	}
	left = pages;
	if (time_after(jiffies, since + ION_OOM_WAIT) ||
	    time_after(jiffies, first + ION_OOM_WAIT_MAX))
		return NOTIFY_DONE;
	(*freed)++;
	return NOTIFY_OK;
}

static struct notifier_block ion_oom_nb = {
	.notifier_call = ion_oom_notify,
};

/**
 * ion_oom_init() - wait for OOM victims' buffers (see "the OOM killer")
 *
 * Return: 0 or a negative errno.
 */
int ion_oom_init(void)
{
	return register_oom_notifier(&ion_oom_nb);
}

/**
 * ion_oom_exit() - undo ion_oom_init()
 */
void ion_oom_exit(void)
{
	unregister_oom_notifier(&ion_oom_nb);
}
