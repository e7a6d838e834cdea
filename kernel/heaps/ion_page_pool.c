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
 * Freeing is deferred: the free of a buffer only queues its chunks for
 * the worker (a kthread of its own, in SCHED_IDLE), which zeroes them
 * and then adds them to their pool.  A buffer of several chunks has an sg
 * table the pools allocated (ion_page_pools_alloc_table()); its free puts
 * the whole table on a lock-free list, touching none of the chunks'
 * struct pages, and the worker takes the chunks off the table and frees
 * it.  The one chunk of a small buffer (whose table lives in the buffer,
 * ion_buffer_one_chunk()) goes on the worker's list itself.  Nobody can
 * see a chunk between its free and its pooling, so no user ever sees a
 * previous user's data.  The allocation path never zeroes pool chunks;
 * the chunks it takes from the buddy allocator instead are
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
 * as without pools.  An isolated free of a small cached buffer (at most
 * ION_POOL_ISOLATED_PAGES, 64 KiB; the first free after ION_POOL_DELAY_MS
 * without any, while no chunk waits for the worker) does not even arm the
 * timer: its chunks go straight back to the buddy allocator, unzeroed, as
 * without pools, because the timer and the wake-up it leads to cost more
 * than zeroing 64 KiB saves the next allocation.  Frees that come in a
 * burst (within ION_POOL_DELAY_MS of each other: a loop that allocates
 * and frees, a process releasing its buffers) are pooled whatever their
 * size, and so are uncached chunks, whose reuse also saves a change of
 * the linear map's attributes.  When the CPUs are busy
 * the pools simply refill more slowly, and the shrinker can take the
 * waiting chunks back.
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
 * restored to write-back first), except that an uncached chunk first
 * makes room by giving back cached pooled ones, which costs nothing.
 * Lowering pool_max_mb trims the pools at the next free (the worker does
 * it).
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
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/vmalloc.h>
#include <linux/kthread.h>

#include "ion_cache.h"
#include "ion_heap.h"
#include "ion_page_pool.h"
#include "ion_page_pool_priv.h"

/* How long after a free the worker starts (one wake-up per burst). */
#define ION_POOL_DELAY_MS	10

/* The largest cached buffer an isolated free does not pool, in pages. */
#define ION_POOL_ISOLATED_PAGES	(SZ_64K >> PAGE_SHIFT)

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

	ion_pool_unpack(pools);
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

static void ion_pool_warn_leak(struct ion_page_pools *pools,
			       unsigned long bytes)
{
	pr_warn_ratelimited("ion: %s: cannot restore %lu bytes to write-back, leaking them\n",
			    pools->name, bytes);
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
			ion_pool_warn_leak(pools, PAGE_SIZE << order);
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

	ion_pool_unpack(pools);
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
			     unsigned long npages,
			     unsigned long cap)
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
 * struct ion_pool_table - a buffer's sg table, from the pools' allocator
 * @sgt:    the table
 * @node:   on &ion_page_pools.freed once its buffer is freed whole
 * @cached: the buffer's cache mode, set then
 */
struct ion_pool_table {
	struct sg_table sgt;
	struct llist_node node;
	bool cached;
};

/**
 * ion_page_pools_alloc_table() - an sg table for a buffer of pool chunks
 * @nents: its number of entries, at least 1
 *
 * The table goes back with its chunks to ion_page_pools_free_table(), or
 * alone to ion_page_pools_drop_table().  (A buffer of one chunk needs
 * none: ion_buffer_one_chunk(), and ion_page_pools_free_chunk().)
 *
 * Context: Process context; sleeps.
 * Return: the table, its entries cleared, or NULL.
 */
struct sg_table *ion_page_pools_alloc_table(unsigned int nents)
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
 * ion_page_pools_drop_table() - free a table of ion_page_pools_alloc_table()
 * @sgt: the table; whatever chunks it lists are the caller's
 *
 * Context: Any context that may kfree().
 */
void ion_page_pools_drop_table(struct sg_table *sgt)
{
	sg_free_table(sgt);
	kfree(container_of(sgt, struct ion_pool_table, sgt));
}

/**
 * ion_pool_unpack() - move the chunks of wholly freed tables to @deferred
 * @pools: the pools
 *
 * For the worker and the shrinker, which work on chunks; the tables are
 * freed.  The chunks stay counted in deferred_pages.
 *
 * Context: Any context that may kfree(); takes a spinlock.
 */
void ion_pool_unpack(struct ion_page_pools *pools)
{
	struct llist_node *first = llist_del_all(&pools->freed);
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
		ion_page_pools_drop_table(&t->sgt);
	}
	spin_lock(&pools->deferred_lock);
	for (c = 0; c < 2; c++)
		list_splice_tail(&chunks[c], &pools->deferred[c]);
	spin_unlock(&pools->deferred_lock);
}

/*
 * The pages of @sgt when every chunk is of a pool order, else 0.  Reads
 * the table only: the chunks' struct pages are left for the worker.
 */
static unsigned long
ion_pool_table_pages(struct ion_page_pools *pools, struct sg_table *sgt)
{
	unsigned long npages = 0;
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_sg(sgt, sg, i) {
		if (ion_pool_index(pools, get_order(sg->length)) < 0)
			return 0;
		npages += sg->length >> PAGE_SHIFT;
	}
	return npages;
}

/*
 * Start the worker within ION_POOL_DELAY_MS, once per burst of frees: a
 * free while the timer is pending arms nothing (see DOC).
 */
static void ion_pool_kick(struct ion_page_pools *pools)
{
	if (!timer_pending(&pools->work.timer))
		kthread_queue_delayed_work(pools->worker, &pools->work,
					   msecs_to_jiffies(ION_POOL_DELAY_MS));
}

/*
 * An isolated free of a small cached buffer (the first free after a quiet
 * spell of ION_POOL_DELAY_MS, with nothing waiting for the worker) goes
 * straight back to the buddy allocator, unzeroed, as without pools:
 * waking the worker for it would cost more than the zeroing it saves the
 * next allocation (see DOC).  Records the time of this free.
 */
static bool ion_pool_isolated(struct ion_page_pools *pools,
			      unsigned long npages, bool cached)
{
	unsigned long last = READ_ONCE(pools->last_free), now = jiffies;

	if (last != now)
		WRITE_ONCE(pools->last_free, now);
	return cached && npages && npages <= ION_POOL_ISOLATED_PAGES &&
	       time_after(now, last + msecs_to_jiffies(ION_POOL_DELAY_MS)) &&
	       !atomic_long_read(&pools->deferred_pages);
}

/* pool_max_mb may have been lowered: have the worker trim the pools. */
static void ion_pool_check_cap(struct ion_page_pools *pools,
			       unsigned long cap)
{
	if (atomic_long_read(&pools->pool_pages) > cap)
		kthread_mod_delayed_work(pools->worker, &pools->work, 0);
}

/* Put one chunk on @chunks for the worker if the pools stay within @cap. */
static bool ion_pool_defer(struct ion_page_pools *pools, struct page *page,
			   unsigned int order, bool cached, unsigned long cap,
			   struct list_head *chunks)
{
	unsigned long n = 1UL << order;

	if (ion_pool_index(pools, order) < 0)
		return false;
	/*
	 * At the cap, an uncached chunk takes the place of cached pooled
	 * ones: giving back a cached chunk costs nothing, an uncached one
	 * two changes of the linear map (now, and at its next allocation).
	 */
	if (!ion_pool_reserve(pools, n, cap) &&
	    (cached || !ion_pool_shrink(pools, n, false) ||
	     !ion_pool_reserve(pools, n, cap)))
		return false;
	set_page_private(page, order);
	list_add_tail(&page->lru, chunks);
	return true;
}

/* Hand @chunks to the worker (or, when empty, let it check the cap). */
static void ion_pool_queue(struct ion_page_pools *pools,
			   struct list_head *chunks, bool cached,
			   unsigned long cap)
{
	if (list_empty(chunks)) {
		ion_pool_check_cap(pools, cap);
		return;
	}
	spin_lock(&pools->deferred_lock);
	list_splice_tail(chunks, &pools->deferred[cached]);
	spin_unlock(&pools->deferred_lock);
	ion_pool_kick(pools);
}

/*
 * Chunk by chunk: defer each chunk while the pools stay within @cap, give
 * the others back to the buddy allocator.
 */
static void ion_pool_defer_table(struct ion_page_pools *pools,
				 struct sg_table *sgt, bool cached,
				 unsigned long cap)
{
	unsigned long leaked = 0;
	struct scatterlist *sg;
	LIST_HEAD(chunks);
	unsigned int i;

	for_each_sgtable_sg(sgt, sg, i) {
		struct page *page = sg_page(sg);
		unsigned int order = get_order(sg->length);

		if (!ion_pool_defer(pools, page, order, cached, cap, &chunks) &&
		    !ion_pool_release(page, order, cached))
			leaked += sg->length;
	}
	if (leaked)
		ion_pool_warn_leak(pools, leaked);
	ion_pool_queue(pools, &chunks, cached, cap);
}

/**
 * ion_page_pools_free_chunk() - take back the one chunk of a freed buffer
 * @pools:  the heap's pools
 * @page:   the chunk's first page
 * @order:  its order
 * @cached: whether the buffer was cached (else its linear map is still
 *	    write-combined)
 *
 * The chunk is queued for zeroing and pooling (the worker starts within
 * ION_POOL_DELAY_MS) while the pools are within their cap, otherwise given
 * back to the buddy allocator at once (an uncached one restored to
 * write-back first; one that cannot be is leaked with a warning).  An
 * isolated free of a small cached chunk is given back at once too.
 *
 * Context: Process context, may sleep.
 */
void ion_page_pools_free_chunk(struct ion_page_pools *pools,
			       struct page *page,
			       unsigned int order, bool cached)
{
	unsigned long cap = ion_pool_cap_pages();
	LIST_HEAD(chunks);

	if (ion_pool_isolated(pools, 1UL << order, cached)) {
		__free_pages(page, order);
		ion_pool_check_cap(pools, cap);
		return;
	}
	if (!ion_pool_defer(pools, page, order, cached, cap, &chunks) &&
	    !ion_pool_release(page, order, cached))
		ion_pool_warn_leak(pools, PAGE_SIZE << order);
	ion_pool_queue(pools, &chunks, cached, cap);
}

/**
 * ion_page_pools_free_table() - take back a freed buffer's chunks and table
 * @pools:  the heap's pools
 * @sgt:    the buffer's table, from ion_page_pools_alloc_table(), one
 *	    chunk per entry; the pools free it
 * @cached: whether the buffer was cached
 *
 * As ion_page_pools_free_chunk() for each chunk.  When the whole buffer
 * fits within the cap, the table is queued as it is: the free touches
 * none of the chunks' struct pages, and the worker unpacks and frees the
 * table.
 *
 * Context: Process context, may sleep.
 */
void ion_page_pools_free_table(struct ion_page_pools *pools,
			       struct sg_table *sgt, bool cached)
{
	struct ion_pool_table *t = container_of(sgt, struct ion_pool_table,
						sgt);
	unsigned long npages = ion_pool_table_pages(pools, sgt);
	unsigned long cap = ion_pool_cap_pages();
	/* Once: it records this free's time, so a second call is false. */
	bool isolated = ion_pool_isolated(pools, npages, cached);
	struct scatterlist *sg;
	unsigned int i;

	if (!isolated && npages && ion_pool_reserve(pools, npages, cap)) {
		t->cached = cached;
		llist_add(&t->node, &pools->freed);
		ion_pool_kick(pools);
		return;
	}
	if (isolated) {
		for_each_sgtable_sg(sgt, sg, i)
			__free_pages(sg_page(sg), get_order(sg->length));
		ion_pool_check_cap(pools, cap);
	} else {
		ion_pool_defer_table(pools, sgt, cached, cap);
	}
	ion_page_pools_drop_table(sgt);
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
	struct ion_page_pool *pool;

	if (idx < 0)
		return NULL;
	pool = &pools->pool[cached][idx];
	/* Empty (as after drop_caches): no call, no lock. */
	if (!READ_ONCE(pool->count))
		return NULL;
	return ion_pool_take(pools, pool);
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
