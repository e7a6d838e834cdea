// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: pools of clean pages and their deferred zeroing - the
 * allocation and free paths.  The shrinker, debugfs, creation and teardown
 * are in ion_page_pool_shrink.c.
 */

/**
 * DOC: page pools
 *
 * The Debian kernel zeroes every page it hands out (init_on_alloc=1), so a
 * cold allocation costs at least a memset of the buffer.  A set of page
 * pools keeps the chunks of freed buffers, zeroed again, so the next
 * allocation of that size costs only taking them off a list.
 *
 * There is one pool per chunk order and cache mode.  Cached and uncached
 * chunks are kept apart: an uncached chunk keeps the write-combined
 * linear-map attribute ion_cache_set_uncached() gave it, so reusing it
 * costs no attribute change (no TLB shootdown, no cache flush), and a
 * cached buffer never gets a write-combined page.  A pool holds clean
 * chunks only: zeroed, and for uncached ones with no dirty CPU cache line.
 *
 * Freeing is deferred: ion_page_pools_free_table() only moves a buffer's
 * chunks to a list and queues the worker (a kthread of its own, in
 * SCHED_IDLE), which zeroes them and then adds them to their pool.
 * Nobody can see a chunk between the two, so no user ever sees a previous
 * user's data.  The allocation path never zeroes
 * pool chunks; the chunks it takes from the buddy allocator instead are
 * zeroed there (init_on_alloc, or __GFP_ZERO, which then costs nothing
 * extra).
 *
 * The worker must not cost the tasks that allocate.  Zeroing is for
 * idle time: in SCHED_IDLE the worker yields to any other task that
 * wakes on its CPU, and the scheduler gives it an idle CPU when there is
 * one (an unbound kworker at nice 0 often preempted the freeing task on
 * its own CPU, so that a 1 MiB close() took the zeroing of 1 MiB with it;
 * at nice 19 it still took a whole slice now and then).  Waking it is not
 * free either: a wake-up of an idle CPU cost more than everything else a
 * 4 KiB free does, in the bench's measurements (tens of microseconds,
 * milliseconds at p90, under TCG).  So a free never wakes it: it is
 * queued with a short delay (ION_POOL_DELAY_MS), and a timer wakes it
 * once for a whole burst of frees.  Until then the pages are neither
 * pooled nor lost: they are counted in deferred_free_bytes, and an
 * allocation meanwhile takes fresh zeroed pages from the buddy allocator,
 * as without pools.  When the CPUs are busy the pools simply refill more
 * slowly, and the shrinker can take the waiting chunks back.
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
 * afterwards.  Writing through a write-combined mapping is only slow for
 * reads and partial lines; a memset writes whole lines.
 *
 * Caps.  Chunks are only deferred (and so pooled) while the pools plus
 * the chunks waiting for the worker stay within pool_max_mb (and at most
 * an eighth of RAM); beyond that a freed chunk goes straight back to the
 * buddy allocator, unzeroed, as it did without pools (an uncached one
 * restored to write-back first).  Lowering pool_max_mb trims the pools
 * at the next free (the worker does it).
 *
 * The shrinker counts pooled pages and those waiting to be zeroed; under
 * memory pressure and on ``echo 2 > /proc/sys/vm/drop_caches`` it frees
 * chunks, cached pools first (cheap), then uncached ones (they must return
 * to write-back, which sleeps, so only when the reclaim context may
 * block), largest orders first, and then chunks still waiting for the
 * worker (unzeroed, as any freed page goes back).  It keeps the default
 * seeks: with seeks = 0 reclaim would only ever ask for half of the pools
 * per call, and drop_caches would leave the last few pages behind.
 *
 * ion_page_pools_destroy() unregisters the shrinker, drains the worker and
 * frees every chunk, so nothing is left behind when ion.ko unloads.
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>
#include <linux/kthread.h>

#include "ion_cache.h"
#include "ion_page_pool.h"
#include "ion_page_pool_priv.h"

/* How long after a free the worker starts (one wake-up per burst). */
#define ION_POOL_DELAY_MS	10

static unsigned int pool_max_mb = 128;
module_param(pool_max_mb, uint, 0644);
MODULE_PARM_DESC(pool_max_mb,
		 "most MiB of freed pages kept zeroed for reuse, at most 1/8 of RAM (0: no pools)");

/* The cap on pooled plus deferred pages. */
unsigned long ion_pool_cap_pages(void)
{
	unsigned long cap = (unsigned long)READ_ONCE(pool_max_mb) <<
			    (20 - PAGE_SHIFT);

	return min(cap, totalram_pages() / 8);
}

static int ion_pool_index(const struct ion_page_pools *pools,
			  unsigned int order)
{
	unsigned int i;

	for (i = 0; i < pools->norders; i++)
		if (pools->pool[0][i].order == order)
			return i;
	return -1;
}

void ion_pool_add(struct ion_page_pools *pools, struct ion_page_pool *pool,
		  struct page *page)
{
	spin_lock(&pool->lock);
	list_add(&page->lru, &pool->chunks);
	WRITE_ONCE(pool->count, pool->count + 1);
	spin_unlock(&pool->lock);
	atomic_long_add(1L << pool->order, &pools->pool_pages);
}

struct page *ion_pool_take(struct ion_page_pools *pools,
			   struct ion_page_pool *pool)
{
	struct page *page;

	if (!READ_ONCE(pool->count))
		return NULL;
	spin_lock(&pool->lock);
	page = list_first_entry_or_null(&pool->chunks, struct page, lru);
	if (page) {
		list_del(&page->lru);
		WRITE_ONCE(pool->count, pool->count - 1);
	}
	spin_unlock(&pool->lock);
	if (page)
		atomic_long_sub(1L << pool->order, &pools->pool_pages);
	return page;
}

/*
 * Give a chunk back to the buddy allocator, an uncached one restored to
 * write-back first.  False when that failed: the chunk is still
 * write-combined and must not go back.
 */
bool ion_pool_release(struct page *page, unsigned int order, bool cached)
{
	struct scatterlist sg;
	struct sg_table one = { .sgl = &sg, .nents = 1, .orig_nents = 1 };

	if (!cached) {
		sg_init_table(&sg, 1);
		sg_set_page(&sg, page, PAGE_SIZE << order, 0);
		if (ion_cache_set_cached(&one))
			return false;
	}
	__free_pages(page, order);
	return true;
}

static void ion_pool_zero_cached(struct page *page, unsigned int order)
{
	unsigned long i;

	for (i = 0; i < 1UL << order; i++)
		clear_highpage(page + i);
}

/* Zero a write-combined chunk through a write-combined alias. */
static int ion_pool_zero_uncached(struct ion_page_pools *pools,
				  struct page *page, unsigned int order)
{
	unsigned int i, n = 1U << order;
	void *vaddr;

	for (i = 0; i < n; i++)
		pools->zero_pages[i] = page + i;
	vaddr = vmap(pools->zero_pages, n, VM_MAP,
		     pgprot_writecombine(PAGE_KERNEL));
	if (!vaddr)
		return -ENOMEM;
	memset(vaddr, 0, PAGE_SIZE << order);
	/* Drain the write-combining buffers before the chunk is published. */
	wmb();
	vunmap(vaddr);
	return 0;
}

/*
 * The next chunk waiting to be zeroed, off the list, or NULL; cached
 * chunks first, uncached ones only when @uncached_too.
 */
static struct page *ion_pool_next_deferred(struct ion_page_pools *pools,
					   bool *cached, bool uncached_too)
{
	struct page *page = NULL;
	int c;

	spin_lock(&pools->deferred_lock);
	for (c = 1; c >= !uncached_too && !page; c--) {
		page = list_first_entry_or_null(&pools->deferred[c],
						struct page, lru);
		if (page) {
			list_del(&page->lru);
			*cached = c;
		}
	}
	spin_unlock(&pools->deferred_lock);
	return page;
}

/**
 * ion_pool_shrink_deferred() - give back chunks still waiting to be zeroed
 * @pools:     the pools
 * @nr:	       about how many pages (whole chunks, so perhaps a little more)
 * @may_block: uncached chunks too (restoring write-back sleeps)
 *
 * The zeroing worker runs at the lowest priority, so on busy CPUs chunks
 * can wait a while; under memory pressure the shrinker takes them back
 * unzeroed, as any freed page goes back to the buddy allocator.  An
 * uncached chunk that cannot return to write-back goes back on its list.
 *
 * Context: Process context; sleeps when @may_block.
 * Return: the pages freed.
 */
unsigned long ion_pool_shrink_deferred(struct ion_page_pools *pools,
				       unsigned long nr, bool may_block)
{
	unsigned long freed = 0;
	unsigned int order;
	struct page *page;
	bool cached;

	while (freed < nr) {
		page = ion_pool_next_deferred(pools, &cached, may_block);
		if (!page)
			break;
		order = page_private(page);
		set_page_private(page, 0);
		if (!ion_pool_release(page, order, cached)) {
			set_page_private(page, order);
			spin_lock(&pools->deferred_lock);
			list_add(&page->lru, &pools->deferred[cached]);
			spin_unlock(&pools->deferred_lock);
			break;
		}
		atomic_long_sub(1L << order, &pools->deferred_pages);
		freed += 1UL << order;
	}
	return freed;
}

/* Zero one deferred chunk and pool it (or give it back if that fails). */
static void ion_pool_clean(struct ion_page_pools *pools, struct page *page,
			   bool cached)
{
	unsigned int order = page_private(page);
	int idx = ion_pool_index(pools, order);

	set_page_private(page, 0);
	if (cached) {
		ion_pool_zero_cached(page, order);
	} else if (ion_pool_zero_uncached(pools, page, order)) {
		if (!ion_pool_release(page, order, cached))
			pr_warn_ratelimited("ion: %s: cannot restore %lu bytes to write-back, leaking them\n",
					    pools->name, PAGE_SIZE << order);
		return;
	}
	ion_pool_add(pools, &pools->pool[cached][idx], page);
}

void ion_page_pools_worker(struct kthread_work *work)
{
	struct ion_page_pools *pools = container_of(work, struct ion_page_pools,
						    work.work);
	unsigned long pooled, cap;
	struct page *page;
	bool cached;

	while ((page = ion_pool_next_deferred(pools, &cached, true))) {
		unsigned int order = page_private(page);

		ion_pool_clean(pools, page, cached);
		/* Only now, so the chunk is always counted somewhere. */
		atomic_long_sub(1L << order, &pools->deferred_pages);
		cond_resched();
	}
	/* pool_max_mb may have been lowered. */
	cap = ion_pool_cap_pages();
	pooled = atomic_long_read(&pools->pool_pages);
	if (pooled > cap)
		ion_pool_shrink(pools, pooled - cap, true);
}

/* Count @npages as deferred if that keeps the pools within the cap. */
static bool ion_pool_reserve(struct ion_page_pools *pools,
			     unsigned long npages, unsigned long cap)
{
	unsigned long held;

	held = atomic_long_add_return(npages, &pools->deferred_pages) +
	       atomic_long_read(&pools->pool_pages);
	if (held <= cap)
		return true;
	atomic_long_sub(npages, &pools->deferred_pages);
	return false;
}

/**
 * ion_page_pools_free_table() - take back the chunks of a freed buffer
 * @pools:  the heap's pools
 * @sgt:    the buffer's table, one chunk of a pool order per entry
 * @cached: whether the buffer was cached (else its linear map is still
 *	    write-combined)
 *
 * Each chunk is queued for zeroing and pooling (the worker starts within
 * ION_POOL_DELAY_MS) while the pools are within their cap, otherwise
 * given back to the buddy allocator at once (an uncached one restored to
 * write-back first; one that cannot be is leaked with a warning).  The
 * table itself stays the caller's to free.
 *
 * Context: Process context, may sleep.
 */
void ion_page_pools_free_table(struct ion_page_pools *pools,
			       struct sg_table *sgt, bool cached)
{
	unsigned long cap = ion_pool_cap_pages(), leaked = 0;
	struct scatterlist *sg;
	LIST_HEAD(chunks);
	unsigned int i;

	for_each_sgtable_sg(sgt, sg, i) {
		struct page *page = sg_page(sg);
		unsigned int order = get_order(sg->length);

		if (ion_pool_index(pools, order) >= 0 &&
		    ion_pool_reserve(pools, 1UL << order, cap)) {
			set_page_private(page, order);
			list_add_tail(&page->lru, &chunks);
		} else if (!ion_pool_release(page, order, cached)) {
			leaked += sg->length;
		}
	}
	if (leaked)
		pr_warn_ratelimited("ion: %s: cannot restore %lu bytes to write-back, leaking them\n",
				    pools->name, leaked);
	if (list_empty(&chunks)) {
		/* Nothing to zero; the worker trims pools above the cap. */
		if (atomic_long_read(&pools->pool_pages) > cap)
			kthread_mod_delayed_work(pools->worker, &pools->work,
						 0);
		return;
	}
	spin_lock(&pools->deferred_lock);
	list_splice_tail(&chunks, &pools->deferred[cached]);
	spin_unlock(&pools->deferred_lock);
	/* One wake-up per burst of frees, from a timer (see DOC). */
	kthread_queue_delayed_work(pools->worker, &pools->work,
				   msecs_to_jiffies(ION_POOL_DELAY_MS));
}

/**
 * ion_page_pools_get() - a clean chunk from a pool
 * @pools:  the heap's pools
 * @order:  the chunk's order
 * @cached: cached chunk (write-back) or uncached (write-combined linear
 *	    map, no dirty cache line)
 *
 * Context: Any context; takes a spinlock.
 * Return: a zeroed chunk of @order, or NULL when that pool is empty.
 */
struct page *ion_page_pools_get(struct ion_page_pools *pools,
				unsigned int order, bool cached)
{
	int idx = ion_pool_index(pools, order);

	if (idx < 0)
		return NULL;
	return ion_pool_take(pools, &pools->pool[cached][idx]);
}

/**
 * ion_page_pools_put() - return an unused chunk from ion_page_pools_get()
 * @pools:  the heap's pools
 * @page:   the chunk, untouched since ion_page_pools_get() (still clean)
 * @order:  its order
 * @cached: the pool it came from
 *
 * For allocations that failed half-way.
 *
 * Context: Any context; takes a spinlock.
 */
void ion_page_pools_put(struct ion_page_pools *pools, struct page *page,
			unsigned int order, bool cached)
{
	int idx = ion_pool_index(pools, order);

	if (WARN_ON_ONCE(idx < 0))
		return;
	ion_pool_add(pools, &pools->pool[cached][idx], page);
}

/**
 * ion_page_pools_pages() - pages held by all pools of @pools
 * @pools: the pools
 *
 * Context: any; the value may be stale by the time it is used.
 * Return: the number of clean pages ready for reuse.
 */
unsigned long ion_page_pools_pages(struct ion_page_pools *pools)
{
	return atomic_long_read(&pools->pool_pages);
}
