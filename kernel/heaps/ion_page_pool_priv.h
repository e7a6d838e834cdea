/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: what the two halves of the page pools share -
 * ion_page_pool.c (the allocation and free paths, the zeroing worker) and
 * ion_page_pool_shrink.c (the shrinker, debugfs, creation and teardown).
 */
#ifndef _ION_PAGE_POOL_PRIV_H
#define _ION_PAGE_POOL_PRIV_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/kthread.h>

struct page;
struct shrinker;

/* Most orders a pool set serves. */
#define ION_POOL_MAX_ORDERS	4

/**
 * struct ion_page_pool - clean chunks of one order and cache mode
 * @lock:   protects @chunks and @count
 * @chunks: the chunks, linked by page->lru, most recently added first
 * @count:  number of chunks on @chunks (read locklessly for statistics)
 * @order:  order of every chunk, set at creation
 */
struct ion_page_pool {
	spinlock_t lock;	/* protects @chunks and @count */
	struct list_head chunks;
	unsigned long count;
	unsigned int order;
};

/**
 * struct ion_page_pools - the pools of one heap
 * @name:	    the heap's short name, for the workqueue and messages
 * @norders:	    orders served, largest first
 * @pool:	    the pools, [cached][index of the order]
 * @last_free:	    jiffies at the latest free (read and written locklessly)
 * @freed:	    tables of freed buffers whose chunks are all deferred
 *		    (struct ion_pool_table), not yet unpacked onto @deferred
 * @deferred_lock:  protects @deferred
 * @deferred:	    chunks of freed buffers not zeroed yet, [cached], linked
 *		    by page->lru, with the order in page_private
 * @pool_pages:	    pages in all pools
 * @deferred_pages: pages freed to the pools and not yet in a pool (on
 *		    @freed, on @deferred or being zeroed)
 * @shrink_count:   shrinker scans that freed something
 * @shrunk_pages:   pages the shrinker freed
 * @worker:	    the thread that runs @work, in SCHED_IDLE
 * @work:	    the zeroing work, ion_page_pools_worker(); queued with a
 *		    short delay so that a burst of frees wakes it once
 * @shrinker:	    gives pooled pages back under memory pressure
 * @zero_pages:	    page array for vmapping one chunk, used by @work only
 *
 * Lives from ion_page_pools_create() to ion_page_pools_destroy().
 */
struct ion_page_pools {
	const char *name;
	unsigned int norders;
	struct ion_page_pool pool[2][ION_POOL_MAX_ORDERS];
	unsigned long last_free;
	struct llist_head freed;
	spinlock_t deferred_lock;	/* protects @deferred */
	struct list_head deferred[2];
	atomic_long_t pool_pages;
	atomic_long_t deferred_pages;
	atomic_long_t shrink_count;
	atomic_long_t shrunk_pages;
	struct kthread_worker *worker;
	struct kthread_delayed_work work;
	struct shrinker *shrinker;
	struct page **zero_pages;
};

unsigned long ion_pool_cap_pages(void);
void ion_pool_unpack(struct ion_page_pools *pools);
void ion_pool_add(struct ion_page_pools *pools, struct ion_page_pool *pool,
		  struct page *page);
struct page *ion_pool_take(struct ion_page_pools *pools,
			   struct ion_page_pool *pool);
bool ion_pool_release(struct page *page, unsigned int order, bool cached);
unsigned long ion_pool_shrink_one(struct ion_page_pools *pools,
				  struct ion_page_pool *pool, bool cached,
				  unsigned long nr);
unsigned long ion_pool_shrink(struct ion_page_pools *pools, unsigned long nr,
			      bool may_block);
void ion_page_pools_worker(struct kthread_work *work);
unsigned long ion_pool_shrink_deferred(struct ion_page_pools *pools,
				       unsigned long nr, bool may_block);

#endif /* _ION_PAGE_POOL_PRIV_H */
