/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: the insides of the deferred zeroing, shared by the worker
 * (ion_pool_zero.c), what the pools' shrinker takes back of the chunks
 * waiting for it (ion_pool_zero_reclaim.c) and what a memory cgroup at its
 * limit takes back (ion_pool_zero_limit.c).  Nothing else includes it.
 */
#ifndef _ION_POOL_ZERO_PRIV_H
#define _ION_POOL_ZERO_PRIV_H

#include <linux/atomic.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "ion_page_pool.h"

/**
 * struct ion_pool_zero - a heap's chunks waiting to be zeroed, its worker
 * @name:	    the heap's short name, for the thread and messages
 * @pools:	    where the zeroed chunks go
 * @freed:	    tables of freed buffers whose chunks are all deferred
 *		    (struct ion_pool_table), not yet unpacked onto @deferred
 * @deferred_lock:  protects @deferred
 * @deferred:	    chunks of freed buffers not zeroed yet, [cached], linked
 *		    by page->lru, with the order in page_private
 * @deferred_pages: pages reserved for the pools and not yet in a pool (on
 *		    @freed, on @deferred or being zeroed)
 * @worker:	    the thread that runs @work, in SCHED_IDLE
 * @work:	    the zeroing work, ion_pool_zero_work(); queued with a
 *		    short delay so that a burst of frees wakes it once
 * @zero_pages:	    page array for vmapping one chunk, used by @work only
 * @queued:	    counts every time chunks are queued or put back on
 *		    @deferred (atomic: a plain increment racing another
 *		    could write back an old value, one a walk recorded)
 * @limit_mutex:    serializes ion_pool_zero_release_limited(), which takes
 *		    every chunk off @deferred for its walk; protects
 *		    @limit_id and @limit_seq
 * @limit_id:	    the cgroup (its cgroup_id()) of the last such walk
 * @limit_seq:	    @queued when it began: while @queued still reads it, no
 *		    chunk of that cgroup waits
 *
 * Lives from ion_pool_zero_create() to ion_pool_zero_destroy(), within
 * the life of @pools.
 */
struct ion_pool_zero {
	const char *name;
	struct ion_page_pools *pools;
	struct llist_head freed;
	spinlock_t deferred_lock;	/* protects @deferred */
	struct list_head deferred[2];
	atomic_long_t deferred_pages;
	struct kthread_worker *worker;
	struct kthread_delayed_work work;
	struct page **zero_pages;
	atomic_long_t queued;
	struct mutex limit_mutex;	/* see above */
	u64 limit_id;
	unsigned long limit_seq;
};

/**
 * struct ion_pool_table - a buffer's sg table, from ion_pool_alloc_table()
 * @sgt:    the table
 * @node:   on &ion_pool_zero.freed once its buffer is freed whole
 * @cached: the buffer's cache mode, set then
 */
struct ion_pool_table {
	struct sg_table sgt;
	struct llist_node node;
	bool cached;
};

extern const struct ion_page_pools_reclaim ion_pool_zero_reclaim;

void ion_pool_unpack(struct ion_pool_zero *zero);
void ion_pool_zero_kick(struct ion_pool_zero *zero);
void ion_pool_requeue(struct ion_pool_zero *zero, struct page *page,
		      unsigned int order, bool cached);
unsigned long ion_pool_give_back(struct ion_pool_zero *zero,
				 struct page *page, bool cached);
struct page *ion_pool_next_deferred(struct ion_pool_zero *zero, bool *cached,
				    bool uncached_too);

#endif /* _ION_POOL_ZERO_PRIV_H */
