// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: pools of clean chunks and their cap - the bottom of the page
 * pools (see ion_page_pool.h for the layers).
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
 * ion_memcg.c and ion_memcg_lru.c keep the lists, ion_memcg.c says the
 * rules.  They count in the cap like the others, and at the cap a freed
 * chunk may take the place of another owner's (ion_page_pools_displace(),
 * DOC: free policy).  A charged buffer of several chunks takes those of its
 * largest order from its cgroup's list in one walk, up to 64 at a time
 * (ion_chunk_get.c): a walk costs far more than taking a chunk off the
 * shared lists, which an uncharged buffer does chunk by chunk.
 *
 * The pools' shrinker, their creation and destruction are in
 * ion_pool_shrink.c.
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "ion_cache.h"
#include "ion_compat.h"
#include "ion_memcg.h"
#include "ion_page_pool.h"
#include "ion_page_pool_priv.h"
#include "trace/ion_trace.h"

static unsigned int pool_max_mb = 128;
module_param(pool_max_mb, uint, 0644);
MODULE_PARM_DESC(pool_max_mb,
		 "most MiB of freed pages kept zeroed for reuse, at most 1/8 of RAM (0: no pools)");

static unsigned int pool_displace_ms = 1000;
module_param(pool_displace_ms, uint, 0644);
MODULE_PARM_DESC(pool_displace_ms,
		 "at the pools' cap, another owner's chunk is displaced only once pooled this long, in ms (0: at once)");

/**
 * ion_pool_displace_before() - the latest pooling time a displacement undoes
 *
 * A chunk pooled at or before it may be given back at the cap to make room
 * for another owner's (DOC: free policy, "Caps"); page_private of a pooled
 * chunk holds the jiffies it was pooled at.
 *
 * Context: any.
 * Return: jiffies less pool_displace_ms.
 */
unsigned long ion_pool_displace_before(void)
{
	return jiffies - msecs_to_jiffies(READ_ONCE(pool_displace_ms));
}

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

/**
 * ion_pool_add() - put a clean uncharged chunk on its pool's list
 * @pools: the pools
 * @pool:  one of them, of the chunk's order and cache mode
 * @page:  the chunk's first page; its page_private becomes the time it is
 *	   pooled at, in jiffies (0 again when taken off)
 *
 * Context: Any context; takes a spinlock.
 */
void ion_pool_add(struct ion_page_pools *pools, struct ion_page_pool *pool,
		  struct page *page)
{
	set_page_private(page, jiffies);
	spin_lock(&pool->lock);
	list_add(&page->lru, &pool->chunks);
	WRITE_ONCE(pool->count, pool->count + 1);
	spin_unlock(&pool->lock);
	atomic_long_add(1L << pool->order, &pools->pool_pages);
}

/*
 * Take a chunk off @pool's list: the most recently added, or with @before
 * the first added if it was pooled at or before *@before.
 */
static struct page *ion_pool_take_one(struct ion_page_pools *pools,
				      struct ion_page_pool *pool,
				      const unsigned long *before)
{
	struct page *page = NULL;

	/* Empty (as after drop_caches): no lock. */
	if (!READ_ONCE(pool->count))
		return NULL;
	spin_lock(&pool->lock);
	if (!list_empty(&pool->chunks)) {
		page = before ? list_last_entry(&pool->chunks, struct page, lru) :
		       list_first_entry(&pool->chunks, struct page, lru);
		if (before && time_after(page_private(page), *before)) {
			page = NULL;
		} else {
			list_del(&page->lru);
			set_page_private(page, 0);
			WRITE_ONCE(pool->count, pool->count - 1);
		}
	}
	spin_unlock(&pool->lock);
	if (page)
		atomic_long_sub(1L << pool->order, &pools->pool_pages);
	return page;
}

/**
 * ion_pool_take() - take an uncharged chunk off a pool's list
 * @pools: the pools
 * @pool:  one of them
 *
 * Context: Any context; takes a spinlock.
 * Return: the most recently added chunk, or NULL.
 */
struct page *ion_pool_take(struct ion_page_pools *pools,
			   struct ion_page_pool *pool)
{
	return ion_pool_take_one(pools, pool, NULL);
}

/**
 * ion_pool_take_old() - take the oldest uncharged chunk, if old enough
 * @pools:  the pools
 * @pool:   one of them
 * @before: the latest pooling time to take (ion_pool_displace_before())
 *
 * Context: Any context; takes a spinlock.
 * Return: the chunk added first, when it was pooled at or before @before;
 * else NULL.
 */
struct page *ion_pool_take_old(struct ion_page_pools *pools,
			       struct ion_page_pool *pool, unsigned long before)
{
	return ion_pool_take_one(pools, pool, &before);
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
	struct page *page = pool ? ion_pool_take(pools, pool) : NULL;

	if (page && trace_ion_pool_drain_enabled())
		trace_ion_pool_drain(pools->name, order, cached, false,
				     ion_page_pools_pages(pools));
	return page;
}

/**
 * ion_pool_count_charged() - count charged chunks in or out of a pool
 * @pools: the pools
 * @pool:  one of them
 * @n:     chunks added to its charged lists, negative for taken off
 *
 * Context: Any context.
 */
void ion_pool_count_charged(struct ion_page_pools *pools,
			    struct ion_page_pool *pool, long n)
{
	atomic_long_add(n, &pool->ncharged);
	atomic_long_add(n << pool->order, &pools->pool_pages);
	atomic_long_add(n << pool->order, &pools->charged_pages);
}

/**
 * ion_pool_add_charged() - pool a clean charged chunk for its cgroup
 * @pools:  the pools
 * @pool:   one of them, of the chunk's order and cache mode
 * @page:   the chunk's first page, charged to a memory cgroup
 * @cached: its cache mode
 *
 * The chunk goes back to the buddy allocator when it cannot be pooled.
 *
 * Context: Process context; may sleep (a cgroup's first chunk).
 */
void ion_pool_add_charged(struct ion_page_pools *pools,
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
 * ion_page_pools_get_charged() - clean chunks of the caller's cgroup
 * @pools:  the heap's pools
 * @order:  the chunks' order
 * @cached: cached chunks or uncached, as ion_page_pools_get()
 * @n:      the most chunks to take
 * @chunks: where they go, linked by page->lru
 *
 * For a caller whose fresh pages are charged to its memory cgroup: only
 * chunks charged to that same cgroup are taken, all in one walk of its
 * list (ion_memcg_pool_take()).
 *
 * Context: Process context; takes a spinlock.
 * Return: the number of zeroed chunks of @order taken, 0 when the cgroup
 * has none.
 */
unsigned long ion_page_pools_get_charged(struct ion_page_pools *pools,
					 unsigned int order, bool cached,
					 unsigned long n, struct list_head *chunks)
{
	struct ion_page_pool *pool = ion_pool_of(pools, order, cached);
	unsigned long i, got;

	/*
	 * Nothing pooled for any cgroup (as in every cold allocation): no
	 * lookup of the caller's cgroup and its list.  Cold 4 KiB with
	 * charging on took 1.07 times the instructions of charging off with
	 * that lookup, 1.04 without (Documentation/bench.md).
	 */
	if (!pool || atomic_long_read(&pool->ncharged) <= 0)
		return 0;
	got = ion_memcg_pool_take(&pool->charged, n, chunks);
	if (got)
		ion_pool_count_charged(pools, pool, -(long)got);
	for (i = 0; i < got && trace_ion_pool_drain_enabled(); i++)
		trace_ion_pool_drain(pools->name, order, cached, true,
				     ion_page_pools_pages(pools));
	return got;
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
	bool charged = ion_memcg_page_charged(page);

	if (WARN_ON_ONCE(!pool))
		return;
	if (charged)
		ion_pool_add_charged(pools, pool, page, cached);
	else
		ion_pool_add(pools, pool, page);
	if (trace_ion_pool_refill_enabled())
		trace_ion_pool_refill(pools->name, order, cached, charged,
				      ion_page_pools_pages(pools));
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

/**
 * ion_page_pools_uncharged_pages() - pages of the shared pools of one mode
 * @pools:  the pools
 * @cached: the cached pools, else the uncached ones
 *
 * The chunks charged to no memory cgroup, which any uncharged caller of
 * that cache mode may take.
 *
 * Context: any; the value may be stale by the time it is used.
 * Return: the number of pages.
 */
unsigned long ion_page_pools_uncharged_pages(struct ion_page_pools *pools,
					     bool cached)
{
	unsigned long n = 0;
	unsigned int i;

	for (i = 0; i < pools->norders; i++) {
		struct ion_page_pool *pool = &pools->pool[cached][i];

		n += READ_ONCE(pool->count) << pool->order;
	}
	return n;
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
 * ion_pools_alloc() - the pools of a heap's chunk orders, empty
 * @name:     short name of the heap (for messages)
 * @orders:   the orders of the heap's chunks, largest first, each once
 * @norders:  how many, at most ION_POOL_MAX_ORDERS
 * @shrinker: the pools' shrinker, allocated and not registered yet
 *
 * Context: Process context (module init).
 * Return: the pools, or ERR_PTR(-EINVAL) for bad orders, ERR_PTR(-ENOMEM).
 */
struct ion_page_pools *ion_pools_alloc(const char *name,
				       const unsigned int *orders,
				       unsigned int norders,
				       struct shrinker *shrinker)
{
	struct ion_page_pools *pools;
	unsigned int i;

	if (WARN_ON_ONCE(!norders || norders > ION_POOL_MAX_ORDERS))
		return ERR_PTR(-EINVAL);
	/* Largest first: the shrinker and the displacement rely on it. */
	for (i = 0; i < norders; i++)
		if (WARN_ON_ONCE(orders[i] > MAX_PAGE_ORDER ||
				 (i && orders[i] >= orders[i - 1])))
			return ERR_PTR(-EINVAL);
	pools = kzalloc(sizeof(*pools), GFP_KERNEL);
	if (!pools)
		return ERR_PTR(-ENOMEM);
	pools->name = name;
	pools->norders = norders;
	pools->shrinker = shrinker;
	if (ion_pools_init(pools, orders)) {
		kfree(pools);
		return ERR_PTR(-ENOMEM);
	}
	return pools;
}

/**
 * ion_pools_free() - free empty pools
 * @pools: from ion_pools_alloc(), every chunk taken off
 *
 * Context: Process context (module exit); sleeps.
 */
void ion_pools_free(struct ion_page_pools *pools)
{
	ion_pools_fini(pools, 2 * pools->norders);
	kfree(pools);
}
