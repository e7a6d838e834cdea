// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: handing out a heap's pooled chunks - from the shared lists,
 * or a charged caller's from its memory cgroup's list - and fresh ones
 * when the pools have none.  The free policy is ion_chunk_pool.c's; calls
 * only down (see ion_page_pool.h for the layers).
 */
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mm.h>

#include "ion_cache.h"
#include "ion_chunk_pool.h"
#include "ion_chunk_pool_priv.h"
#include "ion_fail.h"
#include "ion_memcg.h"
#include "ion_page_pool.h"
#include "ion_pool_zero.h"

/* Most chunks one walk of a cgroup's list takes, its lock held meanwhile. */
#define ION_CHUNK_AHEAD_MAX	64

/*
 * The caller's cgroup's chunks waiting for the worker, given back when
 * @npages more would take it (or an ancestor) past memory.max
 * (ion_pool_zero_release_limited()); the pages given back.  Where charged
 * chunks are never pooled (!ion_memcg_pools_enabled()) none of them waits.
 */
static unsigned long ion_chunk_release_limited(struct ion_chunk_pool *cp,
					       unsigned long npages)
{
	unsigned long freed;

	if (!ion_memcg_pools_enabled() || !ion_pool_zero_pending(cp->zero))
		return 0;
	freed = ion_pool_zero_release_limited(cp->zero, npages);
	if (freed)
		atomic_long_add(freed, &cp->limit_freed_pages);
	return freed;
}

/*
 * Up to @n chunks charged to the caller's cgroup, onto @chunks.  When it
 * has none and its cgroup (or an ancestor) is at memory.max, the freed
 * chunks of that cgroup still waiting for the worker, charged but out of
 * reach of its reclaim, are given back by the caller itself
 * (ion_chunk_release_limited()), so that its fresh chunk can be
 * charged.
 */
static unsigned long ion_chunk_get_charged(struct ion_chunk_pool *cp,
					   unsigned int order, bool cached,
					   unsigned long n,
					   struct list_head *chunks)
{
	unsigned long got;

	got = ion_page_pools_get_charged(cp->pools, order, cached, n, chunks);
	if (!got)
		ion_chunk_release_limited(cp, 1UL << order);
	return got;
}

/**
 * ion_chunk_get() - a clean chunk from the pools
 * @cp:     the heap's pools
 * @order:  the chunk's order
 * @cached: cached chunk (write-back) or uncached (write-combined linear
 *	    map, no dirty cache line)
 *
 * A caller whose pages are charged to a memory cgroup gets only a chunk
 * charged to that cgroup (see ion_memcg.c); when that cgroup is at its
 * memory.max, its chunks waiting to be zeroed are given back first.
 *
 * Context: Process context; may sleep.
 * Return: a zeroed chunk of @order, or NULL when that pool is empty.
 */
struct page *ion_chunk_get(struct ion_chunk_pool *cp, unsigned int order,
			   bool cached)
{
	LIST_HEAD(chunks);

	if (!ion_memcg_caller_charged())
		return ion_page_pools_get(cp->pools, order, cached);
	/* A charged caller reuses only its own cgroup's chunks. */
	ion_chunk_get_charged(cp, order, cached, 1, &chunks);
	return list_first_entry_or_null(&chunks, struct page, lru);
}

/*
 * The next chunk of @a.  A charged caller's are taken from its cgroup's
 * list up to ION_CHUNK_AHEAD_MAX at a time, in one walk: with one walk a
 * chunk, a warm 8 MiB buffer took 1.29 times the instructions of charging
 * off, with one walk for all 1.04 (Documentation/bench.md, "Memory
 * cgroups").  The shared lists cost little a chunk: an uncharged caller
 * takes its chunks one by one.
 */
static struct page *ion_chunk_ahead_get(struct ion_chunk_pool *cp,
					struct ion_chunk_ahead *a, bool cached)
{
	unsigned long n = min_t(unsigned long, a->want, ION_CHUNK_AHEAD_MAX);
	struct page *page;

	if (list_empty(&a->chunks) && n) {
		if (ion_memcg_caller_charged() &&
		    ion_chunk_get_charged(cp, a->order, cached, n,
					  &a->chunks) == n)
			a->want -= n;
		else
			a->want = 0;	/* chunk by chunk from now on */
	}
	page = list_first_entry_or_null(&a->chunks, struct page, lru);
	if (page)
		list_del(&page->lru);
	return page;
}

/**
 * ion_chunk_ahead_put() - give back what an allocation took ahead
 * @cp:     the heap's pools
 * @a:      chunks from ion_chunk_get_or_alloc() with @a, not handed out
 * @cached: their cache mode
 *
 * Context: Process context; may sleep.
 */
void ion_chunk_ahead_put(struct ion_chunk_pool *cp, struct ion_chunk_ahead *a,
			 bool cached)
{
	struct page *page, *tmp;

	list_for_each_entry_safe(page, tmp, &a->chunks, lru) {
		list_del(&page->lru);
		ion_chunk_put(cp, page, a->order, cached);
	}
}

/* A pooled chunk, or NULL; one beyond @w->limit goes back. */
static struct page *ion_chunk_get_within(struct ion_chunk_pool *cp,
					 unsigned int order,
					 const struct ion_chunk_want *w)
{
	struct page *page = NULL;

	if (w->ahead && w->ahead->order == order)
		page = ion_chunk_ahead_get(cp, w->ahead, w->cached);
	if (!page)
		page = ion_chunk_get(cp, order, w->cached);
	if (page && page_to_phys(page) + (PAGE_SIZE << order) - 1 > w->limit) {
		ion_chunk_put(cp, page, order, w->cached);
		return NULL;
	}
	return page;
}

/**
 * ion_chunk_get_or_alloc() - a chunk from the pools, else a fresh one
 * @cp:    the heap's pools
 * @order: the chunk's order
 * @w:     where it may come from and how a fresh one is allocated
 * @src:   set to where it came from
 *
 * In order: the pools (@w->pool; a chunk beyond @w->limit goes back),
 * for an uncached chunk a write-combined block (@w->blocks), then the
 * page allocator with @w->gfp and the caller's memcg charging (a step
 * fault injection can fail: debugfs fail/refill, core/ion_fail.c).  A
 * block's chunk lies within @w->limit; a fresh one may lie beyond it: the
 * caller checks, its zone is in @w->gfp.
 *
 * Context: Process context; may sleep.
 * Return: the zeroed chunk (a fresh one write-back, a pooled or block one
 * of the mode asked for), or NULL when none could be had.
 */
struct page *ion_chunk_get_or_alloc(struct ion_chunk_pool *cp,
				    unsigned int order,
				    const struct ion_chunk_want *w,
				    enum ion_chunk_src *src)
{
	gfp_t gfp = w->gfp | ion_memcg_gfp();	/* charged: ion_memcg.c */
	struct page *page;

	*src = ION_CHUNK_POOLED;
	page = w->pool ? ion_chunk_get_within(cp, order, w) : NULL;
	if (page)
		return page;
	/* Converted already; a charged caller's from its cgroup's blocks. */
	if (!w->cached && w->blocks) {
		bool charged = ion_memcg_caller_charged();

		/*
		 * A new block is charged whole: a cgroup that 2 MiB more
		 * would take past memory.max gives back its waiting chunks
		 * first, or the block could not be had (and its chunk would
		 * be converted alone, splitting the direct map).
		 */
		if (charged)
			ion_chunk_release_limited(cp,
						  1UL << ION_CACHE_BLOCK_ORDER);
		*src = ION_CHUNK_BLOCK;
		page = ion_cache_uncached_chunk(order, w->nid, charged,
						w->limit);
		if (page)
			return page;
	}
	*src = ION_CHUNK_FRESH;
	if (ion_fail(ION_FAIL_REFILL))	/* debugfs fail/refill */
		return NULL;
	if (w->nid == NUMA_NO_NODE)
		return alloc_pages(gfp, order);
	return alloc_pages_node(w->nid, gfp, order);
}

/**
 * ion_chunk_put() - return an unused chunk from ion_chunk_get()
 * @cp:     the heap's pools
 * @page:   the chunk, untouched since ion_chunk_get() (still clean)
 * @order:  its order
 * @cached: the pool it came from
 *
 * For allocations that failed half-way.  An uncached chunk cut from a
 * write-combined block goes back to its block (whether it came from there
 * or from the pools): the pools' cap never counted a block's chunk, and a
 * failed fill must not leave the pools above it.
 *
 * Context: Process context; may sleep.
 */
void ion_chunk_put(struct ion_chunk_pool *cp, struct page *page,
		   unsigned int order, bool cached)
{
	if (!cached && ion_cache_uncached_chunk_put(page, order))
		return;
	ion_page_pools_put(cp->pools, page, order, cached);
}
