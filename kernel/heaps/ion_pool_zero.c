// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: the deferred zeroing of freed chunks - the chunks waiting for
 * it and the worker thread that zeroes them into the pools.  Calls only
 * down, into ion_page_pool.c and ion_cache.c; see ion_page_pool.h for
 * the layers.
 */

/**
 * DOC: deferred zeroing
 *
 * Freeing is deferred: the free of a buffer only queues its chunks for
 * the worker (a kthread of its own, in SCHED_IDLE), which zeroes them
 * and then adds them to their pool.  A buffer of several chunks has an sg
 * table from ion_pool_alloc_table(); its free puts the whole table on a
 * lock-free list, touching none of the chunks' struct pages, and the
 * worker takes the chunks off the table and frees it.  The one chunk of a
 * small buffer (whose table lives in the buffer, ion_buffer_one_chunk())
 * goes on the worker's list itself.  Nobody can see a chunk between its
 * free and its pooling, so no user ever sees a previous user's data.  The
 * allocation path never zeroes pool chunks; the chunks it takes from the
 * buddy allocator instead are zeroed there (init_on_alloc, or __GFP_ZERO,
 * which then costs nothing extra).
 *
 * The worker must not cost the tasks that allocate.  Zeroing is for
 * idle time: in SCHED_IDLE the worker yields to any other task that
 * wakes on its CPU, and the scheduler gives it an idle CPU when there is
 * one (a nice-0 kworker made a 1 MiB close() pay the zeroing of 1 MiB
 * when it preempted the freeing task).  Waking it is not
 * free either: a wake-up of an idle CPU cost more than everything else a
 * 4 KiB free does, in the bench's measurements (tens of microseconds,
 * milliseconds at p90, under TCG).  So a free does not wake it: it is
 * queued with a short delay (ION_POOL_DELAY_MS), and a timer wakes it
 * once for a whole burst of frees.  (Only a free that finds the pools
 * over their cap, pool_max_mb having been lowered, has it trim them at
 * once: ion_pool_zero_check_cap().)  Until then the pages are neither
 * pooled nor lost: they are counted in deferred_free_bytes, and an
 * allocation meanwhile takes fresh zeroed pages from the buddy allocator,
 * as without pools.  When the CPUs are busy the pools simply refill more
 * slowly, and the pools' shrinker can take the waiting chunks back: this
 * file hands it a struct ion_page_pools_reclaim for them
 * (ion_pool_zero_reclaim.c).  No allocation waits for the worker: a
 * cgroup at its memory.max gives back its waiting chunks itself
 * (ion_pool_zero_release_limited()).  Lowering
 * pool_max_mb trims the pools at the next free (the worker does it).
 *
 * Zeroing.  Cached chunks are cleared page by page with clear_highpage()
 * (kmap_local_page(), i.e. the linear map on 64-bit, and clear_page()).
 * Uncached chunks are zeroed through a temporary write-combined vmap of
 * the chunk, then wmb() drains the write-combining buffers.  On x86 that
 * matches the chunk's write-combined linear map, so PAT sees no
 * conflicting alias (a write-back alias of a WC page is not allowed
 * there), the stores stream to memory without a cache flush, and the
 * attribute is not flipped to write-back and back (each flip is a TLB
 * shootdown plus a flush of the chunk from the caches).  Where the linear
 * map stays cacheable (arm64), the non-cacheable alias leaves no dirty
 * line behind either, which is all an uncached buffer needs; zeroing
 * through the linear map would instead dirty the caches and need a clean
 * afterwards.  A memset writes whole lines, which write-combining likes.
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/highmem.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/vmalloc.h>
#include <uapi/linux/sched/types.h>

#include "ion_cache.h"
#include "ion_page_pool.h"
#include "ion_pool_zero.h"
#include "ion_pool_zero_priv.h"

/**
 * ion_pool_alloc_table() - an sg table for a buffer of pool chunks
 * @nents: its number of entries, at least 1
 *
 * The table goes back with its chunks to ion_pool_zero_queue_table(), or
 * alone to ion_pool_drop_table().  (A buffer of one chunk needs none:
 * ion_buffer_one_chunk().)
 *
 * Context: Process context; sleeps.
 * Return: the table, its entries cleared, or NULL.
 */
struct sg_table *ion_pool_alloc_table(unsigned int nents)
{
	struct ion_pool_table *t;

	t = kmalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return NULL;
	if (sg_alloc_table(&t->sgt, nents, GFP_KERNEL)) {
		kfree(t);
		return NULL;
	}
	return &t->sgt;
}

/**
 * ion_pool_drop_table() - free a table of ion_pool_alloc_table()
 * @sgt: the table; whatever chunks it lists are the caller's
 *
 * Context: Any context that may kfree().
 */
void ion_pool_drop_table(struct sg_table *sgt)
{
	sg_free_table(sgt);
	kfree(container_of(sgt, struct ion_pool_table, sgt));
}

/**
 * ion_pool_unpack() - move the chunks of wholly freed tables to the lists
 * @zero: the heap's deferred chunks
 *
 * For the worker and the shrinker, which work on chunks; the tables are
 * freed.  The chunks stay counted in deferred_pages.
 *
 * Context: any; takes a spinlock.
 */
void ion_pool_unpack(struct ion_pool_zero *zero)
{
	struct llist_node *first = llist_del_all(&zero->freed);
	struct list_head chunks[2];
	struct ion_pool_table *t, *tmp;
	struct scatterlist *sg;
	unsigned int i;
	int c;

	if (!first)
		return;
	INIT_LIST_HEAD(&chunks[0]);
	INIT_LIST_HEAD(&chunks[1]);
	/* Oldest first, as they were freed. */
	first = llist_reverse_order(first);
	llist_for_each_entry_safe(t, tmp, first, node) {
		for_each_sgtable_sg(&t->sgt, sg, i) {
			struct page *page = sg_page(sg);

			set_page_private(page, get_order(sg->length));
			list_add_tail(&page->lru, &chunks[t->cached]);
		}
		ion_pool_drop_table(&t->sgt);
	}
	spin_lock(&zero->deferred_lock);
	for (c = 0; c < 2; c++)
		list_splice_tail(&chunks[c], &zero->deferred[c]);
	spin_unlock(&zero->deferred_lock);
}

/**
 * ion_pool_next_deferred() - take the next chunk waiting to be zeroed
 * @zero:	  the heap's deferred chunks
 * @cached:	  out: the chunk's cache mode
 * @uncached_too: whether uncached chunks may be taken
 *
 * Cached chunks first.  The chunk's order is in its page_private.
 *
 * Context: any; takes a spinlock.
 * Return: the chunk, off its list, or NULL.
 */
struct page *ion_pool_next_deferred(struct ion_pool_zero *zero, bool *cached,
				    bool uncached_too)
{
	struct page *page = NULL;
	int c;

	spin_lock(&zero->deferred_lock);
	for (c = 1; c >= !uncached_too && !page; c--) {
		page = list_first_entry_or_null(&zero->deferred[c],
						struct page, lru);
		if (page) {
			list_del(&page->lru);
			*cached = c;
		}
	}
	spin_unlock(&zero->deferred_lock);
	return page;
}

/**
 * ion_pool_requeue() - put a chunk back at the head of its waiting list
 * @zero:   the heap's deferred chunks
 * @page:   a chunk taken off by ion_pool_next_deferred() or a walk, still
 *	    counted in deferred_pages, that could not be given back
 * @order:  its order
 * @cached: its cache mode
 *
 * Context: any; takes a spinlock.
 */
void ion_pool_requeue(struct ion_pool_zero *zero, struct page *page,
		      unsigned int order, bool cached)
{
	set_page_private(page, order);
	spin_lock(&zero->deferred_lock);
	list_add(&page->lru, &zero->deferred[cached]);
	atomic_long_inc(&zero->queued);
	spin_unlock(&zero->deferred_lock);
}

/**
 * ion_pool_give_back() - give a waiting chunk back to the buddy allocator
 * @zero:   the heap's deferred chunks
 * @page:   a chunk taken off the waiting lists, its order in page_private
 * @cached: its cache mode
 *
 * Unzeroed, as any freed page goes back (an uncached one restored to
 * write-back first, or to its block on x86).  One that cannot return to
 * write-back waits again (ion_pool_requeue()).
 *
 * Context: Process context when !@cached (restoring write-back sleeps).
 * Return: the pages given back, 0 when it waits again.
 */
unsigned long ion_pool_give_back(struct ion_pool_zero *zero,
				 struct page *page, bool cached)
{
	unsigned int order = page_private(page);

	set_page_private(page, 0);
	if (!ion_page_chunk_release(page, order, cached)) {
		ion_pool_requeue(zero, page, order, cached);
		return 0;
	}
	atomic_long_sub(1L << order, &zero->deferred_pages);
	return 1UL << order;
}

static void ion_pool_zero_cached(struct page *page, unsigned int order)
{
	unsigned long i;

	for (i = 0; i < 1UL << order; i++)
		clear_highpage(page + i);
}

/* Zero a write-combined chunk through a write-combined alias. */
static int ion_pool_zero_uncached(struct ion_pool_zero *zero,
				  struct page *page, unsigned int order)
{
	unsigned int i, n = 1U << order;
	void *vaddr;

	for (i = 0; i < n; i++)
		zero->zero_pages[i] = page + i;
	vaddr = vmap(zero->zero_pages, n, VM_MAP,
		     pgprot_writecombine(PAGE_KERNEL));
	if (!vaddr)
		return -ENOMEM;
	memset(vaddr, 0, PAGE_SIZE << order);
	/* Drain the write-combining buffers before the chunk is published. */
	wmb();
	vunmap(vaddr);
	return 0;
}

/* Zero one deferred chunk and pool it (or give it back if that fails). */
static void ion_pool_clean(struct ion_pool_zero *zero, struct page *page,
			   bool cached)
{
	unsigned int order = page_private(page);

	set_page_private(page, 0);
	if (cached) {
		ion_pool_zero_cached(page, order);
	} else if (ion_pool_zero_uncached(zero, page, order)) {
		ion_page_chunk_release_or_leak(page, order, cached,
					       zero->name);
		return;
	}
	ion_page_pools_put(zero->pools, page, order, cached);
}

static void ion_pool_zero_work(struct kthread_work *work)
{
	struct ion_pool_zero *zero = container_of(work, struct ion_pool_zero,
						  work.work);
	unsigned long pooled, cap;
	struct page *page;
	bool cached;

	ion_pool_unpack(zero);
	while ((page = ion_pool_next_deferred(zero, &cached, true))) {
		unsigned int order = page_private(page);

		ion_pool_clean(zero, page, cached);
		/* Only now, so the chunk is always counted somewhere. */
		atomic_long_sub(1L << order, &zero->deferred_pages);
		cond_resched();
	}
	/* pool_max_mb may have been lowered. */
	cap = ion_page_pools_cap();
	pooled = ion_page_pools_pages(zero->pools);
	if (pooled > cap)
		ion_page_pools_shrink(zero->pools, pooled - cap, true);
}

/**
 * ion_pool_zero_pending() - pages reserved for the pools, not pooled yet
 * @zero: the heap's deferred chunks
 *
 * Context: any; the value may be stale by the time it is used.
 * Return: the pages queued, waiting or being zeroed.
 */
unsigned long ion_pool_zero_pending(struct ion_pool_zero *zero)
{
	return atomic_long_read(&zero->deferred_pages);
}

/**
 * ion_pool_zero_reserve() - count pages as deferred, within the cap
 * @zero:   the heap's deferred chunks
 * @npages: the pages about to be queued
 * @cap:    the most pages the pools and the deferred chunks may hold
 *
 * Context: any.
 * Return: true when @npages are now counted in ion_pool_zero_pending()
 * (the caller must queue them), false when they would exceed @cap.
 */
bool ion_pool_zero_reserve(struct ion_pool_zero *zero, unsigned long npages,
			   unsigned long cap)
{
	unsigned long held;

	held = atomic_long_add_return(npages, &zero->deferred_pages) +
	       ion_page_pools_pages(zero->pools);
	if (held <= cap)
		return true;
	atomic_long_sub(npages, &zero->deferred_pages);
	return false;
}

/*
 * Start the worker within ION_POOL_DELAY_MS, once per burst of frees: a
 * free while the timer is pending arms nothing (see DOC).
 */
void ion_pool_zero_kick(struct ion_pool_zero *zero)
{
	if (!timer_pending(&zero->work.timer))
		kthread_queue_delayed_work(zero->worker, &zero->work,
					   msecs_to_jiffies(ION_POOL_DELAY_MS));
}

/**
 * ion_pool_zero_queue() - hand reserved chunks to the worker
 * @zero:   the heap's deferred chunks
 * @chunks: chunks reserved with ion_pool_zero_reserve(), linked by
 *	    page->lru, each with its order in page_private; taken over
 * @cached: their cache mode
 *
 * Context: any; takes a spinlock.
 */
void ion_pool_zero_queue(struct ion_pool_zero *zero, struct list_head *chunks,
			 bool cached)
{
	spin_lock(&zero->deferred_lock);
	list_splice_tail_init(chunks, &zero->deferred[cached]);
	atomic_long_inc(&zero->queued);
	spin_unlock(&zero->deferred_lock);
	ion_pool_zero_kick(zero);
}

/**
 * ion_pool_zero_queue_table() - hand a freed buffer's whole table over
 * @zero:   the heap's deferred chunks
 * @sgt:    a table of ion_pool_alloc_table() whose chunks are all of orders
 *	    the pools serve and reserved with ion_pool_zero_reserve(); taken
 *	    over, and freed by the worker
 * @cached: the buffer's cache mode
 *
 * Touches none of the chunks' struct pages.
 *
 * Context: any.
 */
void ion_pool_zero_queue_table(struct ion_pool_zero *zero,
			       struct sg_table *sgt, bool cached)
{
	struct ion_pool_table *t = container_of(sgt, struct ion_pool_table,
						sgt);

	t->cached = cached;
	llist_add(&t->node, &zero->freed);
	atomic_long_inc(&zero->queued);
	ion_pool_zero_kick(zero);
}

/**
 * ion_pool_zero_check_cap() - trim the pools now if they exceed @cap
 * @zero: the heap's deferred chunks
 * @cap:  the cap (pool_max_mb may have been lowered)
 *
 * The worker trims them, at once.
 *
 * Context: any.
 */
void ion_pool_zero_check_cap(struct ion_pool_zero *zero, unsigned long cap)
{
	if (ion_page_pools_pages(zero->pools) > cap)
		kthread_mod_delayed_work(zero->worker, &zero->work, 0);
}

/**
 * ion_pool_zero_create() - deferred zeroing into @pools
 * @pools:     the heap's pools
 * @name:      short name of the heap (for the thread)
 * @max_order: the largest chunk order that will be queued
 *
 * Starts the worker thread, then the pools' shrinker, with the chunks
 * waiting here as its reclaim hook.
 *
 * Context: Process context (module init).
 * Return: the deferred chunks' state, or ERR_PTR(-ENOMEM).
 */
struct ion_pool_zero *ion_pool_zero_create(struct ion_page_pools *pools,
					   const char *name,
					   unsigned int max_order)
{
	const struct sched_attr idle = {
		.size = sizeof(idle), .sched_policy = SCHED_IDLE,
	};
	struct ion_pool_zero *zero;

	zero = kzalloc(sizeof(*zero), GFP_KERNEL);
	if (!zero)
		return ERR_PTR(-ENOMEM);
	zero->name = name;
	zero->pools = pools;
	init_llist_head(&zero->freed);
	spin_lock_init(&zero->deferred_lock);
	mutex_init(&zero->limit_mutex);
	INIT_LIST_HEAD(&zero->deferred[0]);
	INIT_LIST_HEAD(&zero->deferred[1]);
	kthread_init_delayed_work(&zero->work, ion_pool_zero_work);
	zero->zero_pages = kmalloc_array(1U << max_order,
					 sizeof(struct page *), GFP_KERNEL);
	if (!zero->zero_pages)
		goto err_free_zero;
	zero->worker = kthread_create_worker(0, "ion_%s_pool", name);
	if (IS_ERR(zero->worker))
		goto err_free_zero_pages;
	/* Zeroing is for idle time: never preempt the tasks that allocate. */
	if (sched_setattr_nocheck(zero->worker->task, &idle))
		sched_set_normal(zero->worker->task, MAX_NICE);
	ion_page_pools_start_shrinker(pools, &ion_pool_zero_reclaim, zero);
	return zero;

err_free_zero_pages:
	kfree(zero->zero_pages);
err_free_zero:
	kfree(zero);
	return ERR_PTR(-ENOMEM);
}

/**
 * ion_pool_zero_destroy() - zero what is left into the pools, stop
 * @zero: from ion_pool_zero_create(); no chunk may be queued any more
 *
 * Stops the pools' shrinker (whose reclaim hook is here), then lets the
 * worker finish the chunks still queued.  The pools stay, with every
 * chunk, for ion_page_pools_destroy().
 *
 * Context: Process context (module exit); sleeps.
 */
void ion_pool_zero_destroy(struct ion_pool_zero *zero)
{
	ion_page_pools_stop_shrinker(zero->pools);
	/* Run delayed work now; no free can queue it again. */
	kthread_mod_delayed_work(zero->worker, &zero->work, 0);
	kthread_destroy_worker(zero->worker);	/* flushes it first */
	kfree(zero->zero_pages);
	kfree(zero);
}
