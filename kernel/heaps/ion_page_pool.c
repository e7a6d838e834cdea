// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: pools of clean chunks, their cap and their shrinker - the
 * bottom of the page pools (see ion_page_pool.h for the layers).
 */

/**
 * DOC: page pools
 *
 * The Debian kernel zeroes every page it hands out (init_on_alloc=1), so a
 * cold allocation costs at least a memset of the buffer.  A set of page
 * pools keeps the chunks of freed buffers, zeroed again, so the next
 * allocation of that size costs only taking them off a list.  How a freed
 * chunk gets there is the layers' above: ion_chunk_pool.c decides whether
 * it is pooled at all, ion_pool_zero.c zeroes it on a worker thread.
 *
 * There is one pool per chunk order and cache mode.  Cached and uncached
 * chunks are kept apart: an uncached chunk keeps the write-combined
 * linear-map attribute ion_cache_set_uncached() gave it, so reusing it
 * costs no attribute change (no TLB shootdown, no cache flush), and a
 * cached buffer never gets a write-combined page.  A pool holds clean
 * chunks only: zeroed, and for uncached ones with no dirty CPU cache line.
 *
 * Caps.  The pools plus the chunks waiting to be zeroed stay within
 * pool_max_mb (and at most an eighth of RAM), ion_page_pools_cap(); the
 * free policy enforces it.
 *
 * Charged chunks.  A chunk charged to a memory cgroup is pooled for that
 * cgroup alone, on its list in the pool's struct ion_memcg_pool, and
 * taken again only by that cgroup's tasks (ion_page_pools_get_charged());
 * ion_memcg.c keeps the lists and says the rules.  They count in the cap
 * like the others.
 *
 * The shrinker is memcg-aware.  Reclaim in one cgroup (memory.max,
 * memory.reclaim) counts and frees that cgroup's charged chunks only.
 * Global reclaim calls it once per cgroup too, and for the root it
 * counts and frees the uncharged pools, the chunks reparented to the
 * root, and the layer above's chunks waiting to be zeroed.
 *
 * The shrinker counts pooled pages and those waiting to be zeroed; under
 * memory pressure and on ``echo 2 > /proc/sys/vm/drop_caches`` it frees
 * chunks, cached pools first (cheap), then uncached ones (they must return
 * to write-back, which sleeps, so only when the reclaim context may
 * block), largest orders first, and then chunks still waiting for the
 * worker (unzeroed, as any freed page goes back).  Those belong to the
 * layer above, which hands the shrinker a struct ion_page_pools_reclaim
 * (a count and a scan callback) when it starts it: a callback registered
 * downwards, so that nothing here calls up.  It keeps the default seeks:
 * with seeks = 0 reclaim would only ever ask for half of the pools per
 * call, and drop_caches would leave the last few pages behind.
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "ion_cache.h"
#include "ion_compat.h"
#include "ion_memcg.h"
#include "ion_page_pool.h"

static unsigned int pool_max_mb = 128;
module_param(pool_max_mb, uint, 0644);
MODULE_PARM_DESC(pool_max_mb,
		 "most MiB of freed pages kept zeroed for reuse, at most 1/8 of RAM (0: no pools)");

/**
 * struct ion_page_pool - clean chunks of one order and cache mode
 * @lock:    protects @chunks and @count
 * @chunks:  the uncharged chunks, linked by page->lru, most recently added
 *	     first
 * @count:   number of chunks on @chunks (read locklessly for statistics)
 * @charged: the chunks charged to a memory cgroup, per cgroup
 * @order:   order of every chunk, set at creation
 */
struct ion_page_pool {
	spinlock_t lock;	/* protects @chunks and @count */
	struct list_head chunks;
	unsigned long count;
	struct ion_memcg_pool charged;
	unsigned int order;
};

/**
 * struct ion_page_pools - the pools of one heap
 * @name:	  the heap's short name, for the shrinker and messages
 * @norders:	  orders served, largest first
 * @index:	  the index in @pool of each order, -1 for orders not served
 * @pool:	  the pools, [cached][index of the order]
 * @pool_pages:	  pages in all pools, charged chunks included
 * @charged_pages: pages of charged chunks in all pools
 * @shrink_count: shrinker scans that freed something
 * @shrunk_pages: pages the shrinker freed
 * @shrinker:	  gives pooled pages back under memory pressure; NULL once
 *		  stopped
 * @reclaim:	  the layer above's chunks on their way to the pools, set
 *		  before @shrinker is registered
 * @reclaim_data: their callbacks' argument
 *
 * Lives from ion_page_pools_create() to ion_page_pools_destroy().
 */
struct ion_page_pools {
	const char *name;
	unsigned int norders;
	s8 index[MAX_PAGE_ORDER + 1];
	struct ion_page_pool pool[2][ION_POOL_MAX_ORDERS];
	atomic_long_t pool_pages;
	atomic_long_t charged_pages;
	atomic_long_t shrink_count;
	atomic_long_t shrunk_pages;
	struct shrinker *shrinker;
	const struct ion_page_pools_reclaim *reclaim;
	void *reclaim_data;
};

/**
 * ion_page_pools_cap() - the cap on pooled plus deferred pages
 *
 * Context: any.
 * Return: pool_max_mb in pages, at most an eighth of RAM.
 */
unsigned long ion_page_pools_cap(void)
{
	unsigned long cap = (unsigned long)READ_ONCE(pool_max_mb) <<
			    (20 - PAGE_SHIFT);

	return min(cap, totalram_pages() / 8);
}

/* The pool of @order and cache mode, or NULL for an order not served. */
static struct ion_page_pool *ion_pool_of(struct ion_page_pools *pools,
					 unsigned int order, bool cached)
{
	if (order > MAX_PAGE_ORDER || pools->index[order] < 0)
		return NULL;
	return &pools->pool[cached][pools->index[order]];
}

/**
 * ion_page_pools_serves() - whether the pools keep chunks of @order
 * @pools: the pools
 * @order: a chunk order
 *
 * Context: any.
 * Return: true for one of the orders the pools were created with.
 */
bool ion_page_pools_serves(const struct ion_page_pools *pools,
			   unsigned int order)
{
	return order <= MAX_PAGE_ORDER && pools->index[order] >= 0;
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

	/* Empty (as after drop_caches): no lock. */
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
	struct ion_page_pool *pool = ion_pool_of(pools, order, cached);

	return pool ? ion_pool_take(pools, pool) : NULL;
}

/* Count @n (negative: taken off) charged chunks of @pool's order. */
static void ion_pool_count_charged(struct ion_page_pools *pools,
				   struct ion_page_pool *pool, long n)
{
	atomic_long_add(n << pool->order, &pools->pool_pages);
	atomic_long_add(n << pool->order, &pools->charged_pages);
}

/* Pool a clean charged chunk for its cgroup, or give it back. */
static void ion_pool_add_charged(struct ion_page_pools *pools,
				 struct ion_page_pool *pool, struct page *page,
				 bool cached)
{
	if (ion_memcg_pool_add(&pool->charged, page))
		ion_pool_count_charged(pools, pool, 1);
	else
		ion_page_chunk_release_or_leak(page, pool->order, cached,
					       pools->name);
}

/**
 * ion_page_pools_get_charged() - a clean chunk of the caller's cgroup
 * @pools:  the heap's pools
 * @order:  the chunk's order
 * @cached: cached chunk or uncached, as ion_page_pools_get()
 *
 * For a caller whose fresh pages are charged to its memory cgroup: only
 * chunks charged to that same cgroup are taken.
 *
 * Context: Process context; takes a spinlock.
 * Return: a zeroed chunk of @order, or NULL when the cgroup has none.
 */
struct page *ion_page_pools_get_charged(struct ion_page_pools *pools,
					unsigned int order, bool cached)
{
	struct ion_page_pool *pool = ion_pool_of(pools, order, cached);
	struct page *page;

	if (!pool)
		return NULL;
	page = ion_memcg_pool_take(&pool->charged);
	if (page)
		ion_pool_count_charged(pools, pool, -1);
	return page;
}

/**
 * ion_page_pools_put() - add a clean chunk to its pool
 * @pools:  the heap's pools
 * @page:   the chunk: zeroed, and for an uncached one write-combined with
 *	    no dirty cache line (one from ion_page_pools_get() nobody used,
 *	    or one the worker zeroed)
 * @order:  its order, one the pools serve
 * @cached: its cache mode
 *
 * A chunk charged to a memory cgroup goes on that cgroup's list (or back
 * to the buddy allocator when it cannot), the others on the shared list.
 *
 * Context: Process context; may sleep (a cgroup's first charged chunk).
 */
void ion_page_pools_put(struct ion_page_pools *pools, struct page *page,
			unsigned int order, bool cached)
{
	struct ion_page_pool *pool = ion_pool_of(pools, order, cached);

	if (WARN_ON_ONCE(!pool))
		return;
	if (ion_memcg_page_charged(page))
		ion_pool_add_charged(pools, pool, page, cached);
	else
		ion_pool_add(pools, pool, page);
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
		if (!ion_page_chunk_release(page, pool->order, cached)) {
			ion_pool_add(pools, pool, page);
			break;
		}
		freed += 1UL << pool->order;
	}
	return freed;
}

/*
 * As ion_pool_shrink_one(), for the charged chunks of @sc's cgroup (NULL:
 * of every cgroup).  A chunk that cannot return to write-back goes back
 * on its cgroup's list.
 */
static unsigned long ion_pool_shrink_charged(struct ion_page_pools *pools,
					     struct ion_page_pool *pool,
					     bool cached,
					     const struct shrink_control *sc,
					     unsigned long nr)
{
	unsigned long n = DIV_ROUND_UP(nr, 1UL << pool->order), freed = 0;
	struct page *page, *tmp;
	LIST_HEAD(chunks);

	n = ion_memcg_pool_isolate(&pool->charged, sc, n, &chunks);
	if (!n)
		return 0;
	ion_pool_count_charged(pools, pool, -(long)n);
	list_for_each_entry_safe(page, tmp, &chunks, lru) {
		list_del(&page->lru);
		if (ion_page_chunk_release(page, pool->order, cached))
			freed += 1UL << pool->order;
		else
			ion_pool_add_charged(pools, pool, page, cached);
	}
	return freed;
}

/*
 * Free about @nr pages: for a cgroup's reclaim (@sc names one) its charged
 * chunks; otherwise the shared pools and the charged chunks of @sc's root
 * list, or of every cgroup when @sc is NULL.  Cached pools first, largest
 * orders first.
 */
static unsigned long ion_pools_shrink(struct ion_page_pools *pools,
				      const struct shrink_control *sc,
				      unsigned long nr, bool may_block)
{
	bool shared = !sc || !ion_memcg_shrinking_cgroup(sc);
	struct ion_page_pool *pool;
	unsigned long freed = 0;
	unsigned int i;
	int c;

	for (c = 1; c >= 0 && freed < nr; c--) {
		if (!c && !may_block)
			break;
		for (i = 0; i < pools->norders && freed < nr; i++) {
			pool = &pools->pool[c][i];
			if (shared)
				freed += ion_pool_shrink_one(pools, pool, c,
							     nr - freed);
			if (freed < nr)
				freed += ion_pool_shrink_charged(pools, pool,
								 c, sc,
								 nr - freed);
		}
	}
	return freed;
}

/**
 * ion_page_pools_shrink() - give pooled chunks back to the buddy allocator
 * @pools:     the pools
 * @nr:	       about how many pages (whole chunks, so perhaps a little more)
 * @may_block: uncached pools too (restoring write-back sleeps)
 *
 * Cached pools first, largest orders first; in each, the uncharged chunks
 * first, then those of any cgroup.
 *
 * Context: Process context; sleeps when @may_block.
 * Return: the pages freed.
 */
unsigned long ion_page_pools_shrink(struct ion_page_pools *pools,
				    unsigned long nr, bool may_block)
{
	return ion_pools_shrink(pools, NULL, nr, may_block);
}

/**
 * ion_page_pools_debug_show() - the pools' lines of the heap's debugfs file
 * @pools: the heap's pools
 * @s:	   the heap's debugfs file
 *
 * Sizes in bytes: all pools, their chunks charged to cgroups, the cap,
 * each pool's uncharged chunks, the chunks waiting to be
 * zeroed (the reclaim count); then the shrinker's scans that freed pages
 * and what they freed.
 *
 * Context: Process context; does not sleep.
 */
void ion_page_pools_debug_show(struct ion_page_pools *pools,
			       struct seq_file *s)
{
	static const char * const mode[] = { "uncached", "cached" };
	unsigned long deferred = 0;
	unsigned int i;
	int c;

	seq_printf(s, "pool_bytes: %lu\n",
		   atomic_long_read(&pools->pool_pages) << PAGE_SHIFT);
	seq_printf(s, "pool_charged_bytes: %lu\n",
		   atomic_long_read(&pools->charged_pages) << PAGE_SHIFT);
	seq_printf(s, "pool_max_bytes: %lu\n",
		   ion_page_pools_cap() << PAGE_SHIFT);
	for (c = 1; c >= 0; c--) {
		for (i = 0; i < pools->norders; i++) {
			struct ion_page_pool *pool = &pools->pool[c][i];

			seq_printf(s, "pool_order_%u_%s: %lu\n", pool->order,
				   mode[c], READ_ONCE(pool->count) <<
				   (pool->order + PAGE_SHIFT));
		}
	}
	if (pools->reclaim)
		deferred = pools->reclaim->count(pools->reclaim_data);
	seq_printf(s, "deferred_free_bytes: %lu\n", deferred << PAGE_SHIFT);
	seq_printf(s, "shrink_count: %lu\n",
		   atomic_long_read(&pools->shrink_count));
	seq_printf(s, "shrink_freed_bytes: %lu\n",
		   atomic_long_read(&pools->shrunk_pages) << PAGE_SHIFT);
}

static unsigned long ion_page_pools_count(struct shrinker *shrinker,
					  struct shrink_control *sc)
{
	struct ion_page_pools *pools = ion_shrinker_data(shrinker);
	unsigned long n = 0;
	unsigned int i;
	int c;

	if (!ion_memcg_shrinking_cgroup(sc))
		n = atomic_long_read(&pools->pool_pages) -
		    atomic_long_read(&pools->charged_pages) +
		    pools->reclaim->count(pools->reclaim_data);
	for (c = 0; c < 2; c++)
		for (i = 0; i < pools->norders; i++)
			n += ion_memcg_pool_count(&pools->pool[c][i].charged,
						  sc) << pools->pool[c][i].order;
	return n ? n : SHRINK_EMPTY;
}

static unsigned long ion_page_pools_scan(struct shrinker *shrinker,
					 struct shrink_control *sc)
{
	struct ion_page_pools *pools = ion_shrinker_data(shrinker);
	bool may_block = gfpflags_allow_blocking(sc->gfp_mask);
	unsigned long freed;

	freed = ion_pools_shrink(pools, sc, sc->nr_to_scan, may_block);
	if (freed < sc->nr_to_scan && !ion_memcg_shrinking_cgroup(sc))
		freed += pools->reclaim->scan(pools->reclaim_data,
					      sc->nr_to_scan - freed,
					      may_block);
	if (!freed)
		return SHRINK_STOP;
	sc->nr_scanned = freed;
	/* Pages freed outside the LRUs: reclaim counts them as progress. */
	mm_account_reclaimed_pages(freed);
	atomic_long_inc(&pools->shrink_count);
	atomic_long_add(freed, &pools->shrunk_pages);
	return freed;
}

/* Free the charged lists of the first @n pools (in [cached][index] order). */
static void ion_pools_fini(struct ion_page_pools *pools, unsigned int n)
{
	while (n--)
		ion_memcg_pool_destroy(&pools->pool[n / pools->norders]
						   [n % pools->norders].charged);
}

static int ion_pools_init(struct ion_page_pools *pools,
			  const unsigned int *orders)
{
	unsigned int i, n = 0;
	int c, ret;

	memset(pools->index, -1, sizeof(pools->index));
	for (i = 0; i < pools->norders; i++)
		pools->index[orders[i]] = i;
	for (c = 0; c < 2; c++) {
		for (i = 0; i < pools->norders; i++, n++) {
			struct ion_page_pool *pool = &pools->pool[c][i];

			spin_lock_init(&pool->lock);
			INIT_LIST_HEAD(&pool->chunks);
			pool->order = orders[i];
			ret = ion_memcg_pool_init(&pool->charged,
						  pools->shrinker);
			if (ret) {
				ion_pools_fini(pools, n);
				return ret;
			}
		}
	}
	return 0;
}

/**
 * ion_page_pools_create() - pools for a heap's chunk orders
 * @name:    short name of the heap (for the shrinker and messages)
 * @orders:  the orders of the heap's chunks, largest first, each once
 * @norders: how many, at most ION_POOL_MAX_ORDERS
 *
 * Allocates the pools' shrinker; ion_page_pools_start_shrinker() registers
 * it.
 *
 * Context: Process context (module init).
 * Return: the pools, or ERR_PTR(-EINVAL) for bad orders, ERR_PTR(-ENOMEM).
 */
struct ion_page_pools *ion_page_pools_create(const char *name,
					     const unsigned int *orders,
					     unsigned int norders)
{
	struct ion_page_pools *pools;
	unsigned int i;

	if (WARN_ON_ONCE(!norders || norders > ION_POOL_MAX_ORDERS))
		return ERR_PTR(-EINVAL);
	for (i = 0; i < norders; i++)
		if (WARN_ON_ONCE(orders[i] > MAX_PAGE_ORDER))
			return ERR_PTR(-EINVAL);
	pools = kzalloc(sizeof(*pools), GFP_KERNEL);
	if (!pools)
		return ERR_PTR(-ENOMEM);
	pools->name = name;
	pools->norders = norders;
	pools->shrinker = shrinker_alloc(ion_memcg_pools_enabled() ?
					 SHRINKER_MEMCG_AWARE : 0,
					 "ion-%s-pool", name);
	if (!pools->shrinker)
		goto err_free_pools;
	if (ion_pools_init(pools, orders))
		goto err_free_shrinker;
	pools->shrinker->count_objects = ion_page_pools_count;
	pools->shrinker->scan_objects = ion_page_pools_scan;
	pools->shrinker->seeks = DEFAULT_SEEKS;
	ion_shrinker_data(pools->shrinker) = pools;
	return pools;

err_free_shrinker:
	shrinker_free(pools->shrinker);
err_free_pools:
	kfree(pools);
	return ERR_PTR(-ENOMEM);
}

/**
 * ion_page_pools_start_shrinker() - register the pools' shrinker
 * @pools:   pools from ion_page_pools_create()
 * @reclaim: the caller's chunks on their way to the pools, which the
 *	     shrinker counts and frees too
 * @data:    the argument of @reclaim's callbacks; must stay valid until
 *	     ion_page_pools_stop_shrinker()
 *
 * Context: Process context (module init).
 */
void ion_page_pools_start_shrinker(struct ion_page_pools *pools,
				   const struct ion_page_pools_reclaim *reclaim,
				   void *data)
{
	pools->reclaim = reclaim;
	pools->reclaim_data = data;
	shrinker_register(pools->shrinker);
}

/**
 * ion_page_pools_stop_shrinker() - unregister the pools' shrinker
 * @pools: the pools
 *
 * Waits for running scans: no reclaim callback runs once it returns.
 *
 * Context: Process context (module exit); sleeps.
 */
void ion_page_pools_stop_shrinker(struct ion_page_pools *pools)
{
	shrinker_free(pools->shrinker);
	pools->shrinker = NULL;
	pools->reclaim = NULL;
}

/* Give back every charged chunk of @pool, of every cgroup. */
static void ion_pools_drain_charged(struct ion_page_pools *pools,
				    struct ion_page_pool *pool, bool cached)
{
	struct page *page, *tmp;
	unsigned long n;
	LIST_HEAD(chunks);

	n = ion_memcg_pool_isolate(&pool->charged, NULL, ULONG_MAX, &chunks);
	ion_pool_count_charged(pools, pool, -(long)n);
	list_for_each_entry_safe(page, tmp, &chunks, lru) {
		list_del(&page->lru);
		ion_page_chunk_release_or_leak(page, pool->order, cached,
					       pools->name);
	}
}

/**
 * ion_page_pools_destroy() - free every pooled chunk and the pools
 * @pools: pools from ion_page_pools_create(); no chunk may come back to
 *	   them any more
 *
 * Stops the shrinker if still running, then gives every chunk back to the
 * buddy allocator (uncached ones restored to write-back; one that cannot
 * be is leaked with a warning rather than freed write-combined).
 *
 * Context: Process context (module exit); sleeps.
 */
void ion_page_pools_destroy(struct ion_page_pools *pools)
{
	struct page *page;
	unsigned int i;
	int c;

	if (pools->shrinker)
		ion_page_pools_stop_shrinker(pools);
	for (c = 0; c < 2; c++) {
		for (i = 0; i < pools->norders; i++) {
			struct ion_page_pool *pool = &pools->pool[c][i];

			while ((page = ion_pool_take(pools, pool)))
				ion_page_chunk_release_or_leak(page,
							       pool->order, c,
							       pools->name);
			ion_pools_drain_charged(pools, pool, c);
		}
	}
	ion_pools_fini(pools, 2 * pools->norders);
	kfree(pools);
}
