// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: the page pools' shrinker, their creation and destruction -
 * everything that frees pooled chunks.  Calls only down, into
 * ion_page_pool.c (see ion_page_pool.h for the layers).
 */

/**
 * DOC: pool shrinker
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
 *
 * It is memcg-aware.  Reclaim in one cgroup (memory.max, memory.reclaim)
 * counts and frees that cgroup's charged chunks only.  Global reclaim
 * and drop_caches call it once per cgroup too, and for the root cgroup it
 * counts and frees the uncharged pools, the charged chunks reparented to
 * the root, and the layer above's chunks waiting to be zeroed.  Reclaim
 * counts as its progress only pages that reach the buddy allocator
 * (ion_cache_free_pages()): an x86 uncached chunk given back to a block
 * that stays held frees nothing, though the shrinker returns it as an
 * object freed.  Since 6.5 only reclaim of the whole system or of the
 * root cgroup counts such pages, not a child cgroup's; before, every
 * reclaim did.
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/math.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/shrinker.h>

#include "ion_cache.h"
#include "ion_compat.h"
#include "ion_memcg.h"
#include "ion_page_pool.h"
#include "ion_page_pool_priv.h"
#include "trace/ion_trace.h"

/*
 * Free up to @nr pages (whole chunks, so perhaps a little more) from one
 * pool: the most recently pooled first, or with @before (a displacement)
 * the oldest, as long as they were pooled at or before *@before.  A chunk
 * that cannot return to write-back stays in the pool.
 */
static unsigned long ion_pool_shrink_one(struct ion_page_pools *pools,
					 struct ion_page_pool *pool,
					 bool cached, unsigned long nr,
					 const unsigned long *before)
{
	unsigned long freed = 0;
	struct page *page;

	while (freed < nr) {
		page = before ? ion_pool_take_old(pools, pool, *before) :
		       ion_pool_take(pools, pool);
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
 * Free @n charged chunks that were taken off @pool's lists onto @chunks.
 * One that cannot return to write-back goes back on its cgroup's list.
 */
static unsigned long ion_pool_release_charged(struct ion_page_pools *pools,
					      struct ion_page_pool *pool,
					      bool cached,
					      struct list_head *chunks,
					      unsigned long n)
{
	unsigned long freed = 0;
	struct page *page, *tmp;

	if (!n)
		return 0;
	ion_pool_count_charged(pools, pool, -(long)n);
	list_for_each_entry_safe(page, tmp, chunks, lru) {
		list_del(&page->lru);
		if (ion_page_chunk_release(page, pool->order, cached))
			freed += 1UL << pool->order;
		else
			ion_pool_add_charged(pools, pool, page, cached);
	}
	return freed;
}

/*
 * As ion_pool_shrink_one(), for the charged chunks of @sc's cgroup (NULL:
 * of every cgroup).
 */
static unsigned long ion_pool_shrink_charged(struct ion_page_pools *pools,
					     struct ion_page_pool *pool,
					     bool cached,
					     const struct shrink_control *sc,
					     unsigned long nr)
{
	unsigned long n = DIV_ROUND_UP(nr, 1UL << pool->order);
	LIST_HEAD(chunks);

	n = ion_memcg_pool_isolate(&pool->charged, sc, n, &chunks);
	return ion_pool_release_charged(pools, pool, cached, &chunks, n);
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
							     nr - freed, NULL);
			if (freed < nr)
				freed += ion_pool_shrink_charged(pools, pool,
								 c, sc,
								 nr - freed);
		}
	}
	return freed;
}

/*
 * Displace about @nr pages of @pool's charged chunks pooled at or before
 * @before for @page: other cgroups' than @page's, or with @own that
 * cgroup's own (ion_page_pools_displace()).
 */
static unsigned long ion_pool_displace_charged(struct ion_page_pools *pools,
					       struct ion_page_pool *pool,
					       struct page *page,
					       unsigned long nr,
					       unsigned long before, bool own)
{
	unsigned long want = DIV_ROUND_UP(nr, 1UL << pool->order);
	unsigned long n;
	LIST_HEAD(chunks);

	if (atomic_long_read(&pool->ncharged) <= 0)
		return 0;
	if (own)
		n = ion_memcg_pool_isolate_own(&pool->charged, page, want,
					       before, &chunks);
	else
		n = ion_memcg_pool_isolate_others(&pool->charged, page, want,
						  before, &chunks);
	return ion_pool_release_charged(pools, pool, true, &chunks, n);
}

/*
 * The cached pools in the order a displacement for a chunk of @order
 * visits them, into @idx: best fit first - the orders of at least @order,
 * smallest first (one chunk makes the room, larger ones stay), then the
 * smaller orders, largest first.  (Largest first throughout, a 64 KiB
 * free gave back another owner's 1 MiB chunk while its 64 KiB ones
 * stayed.)  The pools are largest first (ion_pools_alloc()).
 */
static unsigned int ion_pool_fit_order(const struct ion_page_pools *pools,
				       unsigned int order, unsigned int *idx)
{
	unsigned int i, n = 0;

	for (i = pools->norders; i--;)
		if (pools->pool[1][i].order >= order)
			idx[n++] = i;
	for (i = 0; i < pools->norders; i++)
		if (pools->pool[1][i].order < order)
			idx[n++] = i;
	return n;
}

/**
 * ion_page_pools_displace() - make room at the cap for @page's owner
 * @pools: the pools
 * @page:  a chunk about to be pooled, charged to a memory cgroup or not
 * @nr:    its pages (a power of two; whole chunks are freed, so perhaps a
 *	   little more)
 *
 * Gives back cached pooled chunks that @page's owner could not take
 * again: the uncharged ones when @page is charged, and those charged to
 * any cgroup but @page's (DOC: free policy, "Caps"); then its owner's own
 * chunks of the other orders, which it has not been reusing (uncharged
 * ones for an uncharged @page, those of its cgroup for a charged one).
 * Each only once it has been pooled pool_displace_ms
 * (ion_pool_displace_before()).  The pools best fit first
 * (ion_pool_fit_order()); in each, for a charged @page the uncharged
 * chunks first, then other cgroups' (ion_memcg_pool_isolate_others());
 * in each list the oldest first.  Nothing for a chunk no task could reuse
 * (charged to the root cgroup).
 *
 * Context: Any context in which a cached chunk may be freed.
 * Return: the pages freed.
 */
unsigned long ion_page_pools_displace(struct ion_page_pools *pools,
				      struct page *page, unsigned long nr)
{
	unsigned long before = ion_pool_displace_before();
	bool charged = ion_memcg_page_charged(page);
	unsigned int i, n, order = ilog2(nr);
	unsigned int idx[ION_POOL_MAX_ORDERS];
	struct ion_page_pool *pool;
	unsigned long freed = 0;

	if (!ion_memcg_chunk_reusable(page))
		return 0;
	n = ion_pool_fit_order(pools, order, idx);
	for (i = 0; i < n && freed < nr; i++) {
		pool = &pools->pool[1][idx[i]];
		if (charged)
			freed += ion_pool_shrink_one(pools, pool, true,
						     nr - freed, &before);
		if (freed < nr)
			freed += ion_pool_displace_charged(pools, pool, page,
							   nr - freed, before,
							   false);
	}
	/* Then its owner's own idle chunks of the other orders. */
	for (i = 0; i < n && freed < nr; i++) {
		pool = &pools->pool[1][idx[i]];
		if (pool->order == order)
			continue;
		if (charged)
			freed += ion_pool_displace_charged(pools, pool, page,
							   nr - freed, before,
							   true);
		else
			freed += ion_pool_shrink_one(pools, pool, true,
						     nr - freed, &before);
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

static unsigned long ion_page_pools_count(struct shrinker *shrinker,
					  struct shrink_control *sc)
{
	struct ion_page_pools *pools = ion_shrinker_data(shrinker);
	unsigned long n = 0;
	unsigned int i;
	int c;

	/* The uncharged pools: read apart, the two counts may cross. */
	if (!ion_memcg_shrinking_cgroup(sc))
		n = max(atomic_long_read(&pools->pool_pages) -
			atomic_long_read(&pools->charged_pages), 0L) +
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
	trace_ion_pool_shrink(pools->name, sc->nr_to_scan, freed,
			      ion_page_pools_pages(pools));
	if (!freed)
		return SHRINK_STOP;
	sc->nr_scanned = freed;
	atomic_long_inc(&pools->shrink_count);
	atomic_long_add(freed, &pools->shrunk_pages);
	return freed;
}

/**
 * ion_page_pools_create() - pools for a heap's chunk orders
 * @name:    short name of the heap (for the shrinker and messages)
 * @orders:  the orders of the heap's chunks, largest first, each once
 * @norders: how many, at most ION_POOL_MAX_ORDERS
 *
 * Allocates the pools' shrinker, then the pools (whose per-memcg lists
 * need it); ion_page_pools_start_shrinker() registers it.
 *
 * Context: Process context (module init).
 * Return: the pools, or ERR_PTR(-EINVAL) for bad orders, ERR_PTR(-ENOMEM).
 */
struct ion_page_pools *ion_page_pools_create(const char *name,
					     const unsigned int *orders,
					     unsigned int norders)
{
	struct ion_page_pools *pools;
	struct shrinker *shrinker;

	shrinker = shrinker_alloc(ion_memcg_pools_enabled() ?
				  SHRINKER_MEMCG_AWARE : 0,
				  "ion-%s-pool", name);
	if (!shrinker)
		return ERR_PTR(-ENOMEM);
	pools = ion_pools_alloc(name, orders, norders, shrinker);
	if (IS_ERR(pools)) {
		shrinker_free(shrinker);
		return pools;
	}
	shrinker->count_objects = ion_page_pools_count;
	shrinker->scan_objects = ion_page_pools_scan;
	shrinker->seeks = DEFAULT_SEEKS;
	ion_shrinker_data(shrinker) = pools;
	return pools;
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
	ion_pools_free(pools);
}
