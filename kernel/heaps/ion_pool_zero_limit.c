// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: what a memory cgroup at its memory.max takes back of the
 * chunks waiting to be zeroed (DOC: memory cgroups, in ion_memcg.c).  The
 * worker and the lists are in ion_pool_zero.c; calls only down, into it,
 * ion_cache.c and ion_memcg.c.
 */
#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>

#include "ion_cache.h"
#include "ion_memcg.h"
#include "ion_pool_zero.h"
#include "ion_pool_zero_priv.h"

/**
 * ion_pool_zero_release_limited() - give back a limited cgroup's waiting chunks
 * @zero:   the heap's deferred chunks
 * @npages: the pages the caller is about to charge
 *
 * For a caller that @npages more would take past memory.max (its
 * cgroup's or an ancestor's): the chunks waiting here that are charged to
 * that cgroup or below it are charged, but in no pool its reclaim or its
 * allocations reach.  They go back to the buddy allocator now, in the
 * caller's context (an uncached one to its block, on x86; one that cannot
 * return to write-back waits again): the worker runs in SCHED_IDLE and
 * may not run at all while the CPUs are busy, so waiting for it (as ion
 * did before) could stall the allocation for as long.
 *
 * The walk takes every waiting chunk off the lists, without the lock
 * that frees take, and puts the others back at the head, oldest first
 * (meanwhile the worker and the shrinker find them out of reach, counted
 * in deferred_pages all the same).  Walks are serialized, so that a
 * second caller finds the chunks the first one did not give back; and a
 * cgroup that walked does not walk again until more are queued (its walk
 * gave back every chunk of its own it found; at its memory.max, every
 * chunk of its allocations that finds none pooled would ask).  A caller
 * that @npages more leave within every limit returns at once.
 *
 * Context: Process context; may sleep.
 * Return: the pages given back.
 */
unsigned long ion_pool_zero_release_limited(struct ion_pool_zero *zero,
					    unsigned long npages)
{
	struct list_head waiting[2], limited[2];
	unsigned long freed = 0, seq;
	struct page *page, *tmp;
	bool left = false;
	u64 id;
	int c;

	id = ion_memcg_limiting_id(npages);
	if (!id)
		return 0;
	mutex_lock(&zero->limit_mutex);
	seq = atomic_long_read(&zero->queued);
	if (id == zero->limit_id && seq == zero->limit_seq)
		goto out;
	zero->limit_id = id;
	zero->limit_seq = seq;
	ion_pool_unpack(zero);
	spin_lock(&zero->deferred_lock);
	for (c = 0; c < 2; c++) {
		INIT_LIST_HEAD(&waiting[c]);
		INIT_LIST_HEAD(&limited[c]);
		list_splice_init(&zero->deferred[c], &waiting[c]);
	}
	spin_unlock(&zero->deferred_lock);
	ion_memcg_split_limited(waiting, limited, 2, id);
	spin_lock(&zero->deferred_lock);
	for (c = 0; c < 2; c++) {
		left |= !list_empty(&waiting[c]);
		list_splice(&waiting[c], &zero->deferred[c]);
	}
	spin_unlock(&zero->deferred_lock);
	if (left)
		ion_pool_zero_kick(zero);
	for (c = 0; c < 2; c++) {
		list_for_each_entry_safe(page, tmp, &limited[c], lru) {
			list_del(&page->lru);
			freed += ion_pool_give_back(zero, page, c);
		}
	}
out:
	mutex_unlock(&zero->limit_mutex);
	return freed;
}
