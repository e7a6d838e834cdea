// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: pools of clean pages, deferred zeroing and a shrinker.
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
 * chunks to a list and queues the worker, which zeroes them and then adds
 * them to their pool.  Nobody can see a chunk between the two, so no user
 * ever sees a previous user's data.  The allocation path never zeroes
 * pool chunks; the chunks it takes from the buddy allocator instead are
 * zeroed there (init_on_alloc, or __GFP_ZERO, which then costs nothing
 * extra).
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
 * The shrinker counts pooled pages; under memory pressure and on
 * ``echo 2 > /proc/sys/vm/drop_caches`` it frees chunks, cached pools
 * first (cheap), then uncached ones (they must return to write-back,
 * which sleeps, so only when the reclaim context may block), largest
 * orders first.  It keeps the default seeks: with seeks = 0 reclaim would
 * only ever ask for half of the pools per call, and drop_caches would
 * leave the last few pages behind.
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
#include <linux/seq_file.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "ion_cache.h"
#include "ion_page_pool.h"

static unsigned int pool_max_mb = 128;
module_param(pool_max_mb, uint, 0644);
MODULE_PARM_DESC(pool_max_mb,
		 "most MiB of freed pages kept zeroed for reuse, at most 1/8 of RAM (0: no pools)");

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
 * @deferred_lock:  protects @deferred
 * @deferred:	    chunks of freed buffers not zeroed yet, [cached], linked
 *		    by page->lru, with the order in page_private
 * @pool_pages:	    pages in all pools
 * @deferred_pages: pages freed to the pools and not yet in a pool (on
 *		    @deferred or being zeroed)
 * @shrink_count:   shrinker scans that freed something
 * @shrunk_pages:   pages the shrinker freed
 * @wq:		    runs @work
 * @work:	    the zeroing worker, ion_page_pools_worker()
 * @shrinker:	    gives pooled pages back under memory pressure
 * @zero_pages:	    page array for vmapping one chunk, used by @work only
 *
 * Lives from ion_page_pools_create() to ion_page_pools_destroy().
 */
struct ion_page_pools {
	const char *name;
	unsigned int norders;
	struct ion_page_pool pool[2][ION_POOL_MAX_ORDERS];
	spinlock_t deferred_lock;	/* protects @deferred */
	struct list_head deferred[2];
	atomic_long_t pool_pages;
	atomic_long_t deferred_pages;
	atomic_long_t shrink_count;
	atomic_long_t shrunk_pages;
	struct workqueue_struct *wq;
	struct work_struct work;
	struct shrinker *shrinker;
	struct page **zero_pages;
};

/* The cap on pooled plus deferred pages. */
static unsigned long ion_pool_cap_pages(void)
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

static void ion_pool_add(struct ion_page_pools *pools,
			 struct ion_page_pool *pool, struct page *page)
{
	spin_lock(&pool->lock);
	list_add(&page->lru, &pool->chunks);
	WRITE_ONCE(pool->count, pool->count + 1);
	spin_unlock(&pool->lock);
	atomic_long_add(1L << pool->order, &pools->pool_pages);
}

static struct page *ion_pool_take(struct ion_page_pools *pools,
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
static bool ion_pool_release(struct page *page, unsigned int order,
			     bool cached)
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

/*
 * Free up to @nr pages (whole chunks, so perhaps a little more) from one
 * pool.  A chunk that cannot return to write-back stays in the pool.
 */
static unsigned long ion_pool_shrink_one(struct ion_page_pools *pools,
					 struct ion_page_pool *pool,
					 bool cached, unsigned long nr)
{
	unsigned long freed = 0;
	struct page *page;

	while (freed < nr) {
		page = ion_pool_take(pools, pool);
		if (!page)
			break;
		if (!ion_pool_release(page, pool->order, cached)) {
			ion_pool_add(pools, pool, page);
			break;
		}
		freed += 1UL << pool->order;
	}
	return freed;
}

/*
 * Free about @nr pooled pages: cached pools first, uncached ones only when
 * @may_block (restoring write-back sleeps), largest orders first.
 */
static unsigned long ion_pool_shrink(struct ion_page_pools *pools,
				     unsigned long nr, bool may_block)
{
	unsigned long freed = 0;
	unsigned int i;
	int c;

	for (c = 1; c >= 0 && freed < nr; c--) {
		if (!c && !may_block)
			break;
		for (i = 0; i < pools->norders && freed < nr; i++)
			freed += ion_pool_shrink_one(pools, &pools->pool[c][i],
						     c, nr - freed);
	}
	return freed;
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

/* The next chunk waiting to be zeroed, off the list, or NULL. */
static struct page *ion_pool_next_deferred(struct ion_page_pools *pools,
					   bool *cached)
{
	struct page *page = NULL;
	int c;

	spin_lock(&pools->deferred_lock);
	for (c = 0; c < 2 && !page; c++) {
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

static void ion_page_pools_worker(struct work_struct *work)
{
	struct ion_page_pools *pools = container_of(work, struct ion_page_pools,
						    work);
	unsigned long pooled, cap;
	struct page *page;
	bool cached;

	while ((page = ion_pool_next_deferred(pools, &cached))) {
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
 * Each chunk is queued for zeroing and pooling while the pools are within
 * their cap, otherwise given back to the buddy allocator at once (an
 * uncached one restored to write-back first; one that cannot be is leaked
 * with a warning).  The table itself stays the caller's to free.
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
	if (!list_empty(&chunks)) {
		spin_lock(&pools->deferred_lock);
		list_splice_tail(&chunks, &pools->deferred[cached]);
		spin_unlock(&pools->deferred_lock);
	} else if (atomic_long_read(&pools->pool_pages) <= cap) {
		return;
	}
	/* The worker zeroes what was queued and trims pools above the cap. */
	queue_work(pools->wq, &pools->work);
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
 * ion_page_pools_debug_show() - the pools' lines of the heap's debugfs file
 * @pools: the heap's pools
 * @s:	   the heap's debugfs file
 *
 * Sizes in bytes: all pools, the cap, each pool, the chunks waiting to be
 * zeroed; then the shrinker's scans that freed pages and what they freed.
 *
 * Context: Process context; does not sleep.
 */
void ion_page_pools_debug_show(struct ion_page_pools *pools,
			       struct seq_file *s)
{
	static const char * const mode[] = { "uncached", "cached" };
	unsigned int i;
	int c;

	seq_printf(s, "pool_bytes: %lu\n",
		   atomic_long_read(&pools->pool_pages) << PAGE_SHIFT);
	seq_printf(s, "pool_max_bytes: %lu\n",
		   ion_pool_cap_pages() << PAGE_SHIFT);
	for (c = 1; c >= 0; c--) {
		for (i = 0; i < pools->norders; i++) {
			struct ion_page_pool *pool = &pools->pool[c][i];

			seq_printf(s, "pool_order_%u_%s: %lu\n", pool->order,
				   mode[c], READ_ONCE(pool->count) <<
				   (pool->order + PAGE_SHIFT));
		}
	}
	seq_printf(s, "deferred_free_bytes: %lu\n",
		   atomic_long_read(&pools->deferred_pages) << PAGE_SHIFT);
	seq_printf(s, "shrink_count: %lu\n",
		   atomic_long_read(&pools->shrink_count));
	seq_printf(s, "shrink_freed_bytes: %lu\n",
		   atomic_long_read(&pools->shrunk_pages) << PAGE_SHIFT);
}

static unsigned long ion_page_pools_count(struct shrinker *shrinker,
					  struct shrink_control *sc)
{
	struct ion_page_pools *pools = shrinker->private_data;
	unsigned long n = atomic_long_read(&pools->pool_pages);

	return n ? n : SHRINK_EMPTY;
}

static unsigned long ion_page_pools_scan(struct shrinker *shrinker,
					 struct shrink_control *sc)
{
	struct ion_page_pools *pools = shrinker->private_data;
	unsigned long freed;

	freed = ion_pool_shrink(pools, sc->nr_to_scan,
				gfpflags_allow_blocking(sc->gfp_mask));
	if (!freed)
		return SHRINK_STOP;
	sc->nr_scanned = freed;
	atomic_long_inc(&pools->shrink_count);
	atomic_long_add(freed, &pools->shrunk_pages);
	return freed;
}

static void ion_pools_init_lists(struct ion_page_pools *pools,
				 const unsigned int *orders)
{
	unsigned int i;
	int c;

	for (c = 0; c < 2; c++) {
		for (i = 0; i < pools->norders; i++) {
			struct ion_page_pool *pool = &pools->pool[c][i];

			spin_lock_init(&pool->lock);
			INIT_LIST_HEAD(&pool->chunks);
			pool->order = orders[i];
		}
		INIT_LIST_HEAD(&pools->deferred[c]);
	}
	spin_lock_init(&pools->deferred_lock);
	INIT_WORK(&pools->work, ion_page_pools_worker);
}

/**
 * ion_page_pools_create() - pools for a heap's chunk orders
 * @name:    short name of the heap (for the workqueue and messages)
 * @orders:  the orders of the heap's chunks, largest first
 * @norders: how many, at most 4
 *
 * Registers the pools' shrinker.
 *
 * Context: Process context (module init).
 * Return: the pools, or ERR_PTR(-EINVAL) for bad orders, ERR_PTR(-ENOMEM).
 */
struct ion_page_pools *ion_page_pools_create(const char *name,
					     const unsigned int *orders,
					     unsigned int norders)
{
	struct ion_page_pools *pools;
	unsigned int i, max = 0;

	if (WARN_ON_ONCE(!norders || norders > ION_POOL_MAX_ORDERS))
		return ERR_PTR(-EINVAL);
	for (i = 0; i < norders; i++)
		max = max(max, orders[i]);
	if (WARN_ON_ONCE(max > MAX_PAGE_ORDER))
		return ERR_PTR(-EINVAL);
	pools = kzalloc(sizeof(*pools), GFP_KERNEL);
	if (!pools)
		return ERR_PTR(-ENOMEM);
	pools->name = name;
	pools->norders = norders;
	ion_pools_init_lists(pools, orders);
	pools->zero_pages = kmalloc_array(1U << max, sizeof(struct page *),
					  GFP_KERNEL);
	if (!pools->zero_pages)
		goto err_free_pools;
	pools->wq = alloc_workqueue("ion_%s_pool", WQ_UNBOUND, 1, name);
	if (!pools->wq)
		goto err_free_zero_pages;
	pools->shrinker = shrinker_alloc(0, "ion-%s-pool", name);
	if (!pools->shrinker)
		goto err_destroy_wq;
	pools->shrinker->count_objects = ion_page_pools_count;
	pools->shrinker->scan_objects = ion_page_pools_scan;
	pools->shrinker->seeks = DEFAULT_SEEKS;
	pools->shrinker->private_data = pools;
	shrinker_register(pools->shrinker);
	return pools;

err_destroy_wq:
	destroy_workqueue(pools->wq);
err_free_zero_pages:
	kfree(pools->zero_pages);
err_free_pools:
	kfree(pools);
	return ERR_PTR(-ENOMEM);
}

/**
 * ion_page_pools_destroy() - free every pooled page and the pools
 * @pools: pools from ion_page_pools_create(); no buffer may still hold
 *	   chunks that will come back to them
 *
 * Unregisters the shrinker, lets the worker finish the chunks still
 * queued, then gives every chunk back to the buddy allocator (uncached
 * ones restored to write-back; one that cannot be is leaked with a
 * warning rather than freed write-combined).
 *
 * Context: Process context (module exit); sleeps.
 */
void ion_page_pools_destroy(struct ion_page_pools *pools)
{
	unsigned long leaked = 0;
	unsigned int i;
	int c;

	shrinker_free(pools->shrinker);
	destroy_workqueue(pools->wq);	/* drains it first */
	for (c = 0; c < 2; c++) {
		for (i = 0; i < pools->norders; i++) {
			struct ion_page_pool *pool = &pools->pool[c][i];

			ion_pool_shrink_one(pools, pool, c, ULONG_MAX);
			leaked += pool->count << (pool->order + PAGE_SHIFT);
		}
	}
	if (leaked)
		pr_warn("ion: %s: cannot restore %lu pooled bytes to write-back, leaking them\n",
			pools->name, leaked);
	kfree(pools->zero_pages);
	kfree(pools);
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
