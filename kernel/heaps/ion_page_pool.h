/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: pools of clean chunks, the bottom of the page pools
 * (ion_page_pool.c, with their shrinker in ion_pool_shrink.c).
 *
 * The layers, each calling only the ones below it:
 *   ion_system_heap.c	the heap; reaches the pools only through
 *			ion_chunk_pool.h
 *   ion_chunk_pool.c	the free policy: a freed chunk is deferred for
 *			zeroing, or given back to the buddy allocator
 *			(ion_chunk_get.c: handing out pooled and fresh
 *			chunks)
 *   ion_pool_zero.c	the deferred chunks and the worker that zeroes them
 *			(ion_pool_zero_reclaim.c: what the shrinker takes
 *			back of them; ion_pool_zero_limit.c: what a memory
 *			cgroup at its memory.max takes back)
 *   ion_pool_shrink.c	the pools' shrinker, creation and destruction:
 *			what frees pooled chunks
 *   ion_page_pool.c	(here) the pools' lists of clean chunks and their
 *			cap; below it only ion_memcg.c and
 *			ion_memcg_lru.c (the per-memcg lists of charged
 *			chunks) and ion_cache.c
 *
 * A set of pools keeps clean chunks (zeroed, and for uncached ones with no
 * dirty CPU cache line) of the orders it was created with, cached and
 * uncached apart.  Its shrinker also takes back the chunks the layer above
 * holds on their way to the pools, through the hooks that layer registers
 * with ion_page_pools_start_shrinker(): the pools never call up.
 */
#ifndef _ION_PAGE_POOL_H
#define _ION_PAGE_POOL_H

#include <linux/types.h>

struct list_head;
struct page;
struct seq_file;
struct ion_page_pools;

/* Most orders a pool set serves. */
#define ION_POOL_MAX_ORDERS	4

/**
 * struct ion_page_pools_reclaim - chunks on their way to the pools
 * @count: the pages the layer above holds for the pools (dirty chunks not
 *	   pooled yet); must not sleep
 * @scan:  give back about @nr of them to the buddy allocator, uncached
 *	   chunks only when @may_block; returns the pages freed
 *
 * The pools' shrinker counts and frees these after the pooled chunks.
 */
struct ion_page_pools_reclaim {
	unsigned long (*count)(void *data);
	unsigned long (*scan)(void *data, unsigned long nr, bool may_block);
};

struct ion_page_pools *ion_page_pools_create(const char *name,
					     const unsigned int *orders,
					     unsigned int norders);
void ion_page_pools_start_shrinker(struct ion_page_pools *pools,
				   const struct ion_page_pools_reclaim *reclaim,
				   void *data);
void ion_page_pools_stop_shrinker(struct ion_page_pools *pools);
void ion_page_pools_destroy(struct ion_page_pools *pools);

bool ion_page_pools_serves(const struct ion_page_pools *pools,
			   unsigned int order);
struct page *ion_page_pools_get(struct ion_page_pools *pools,
				unsigned int order, bool cached);
unsigned long ion_page_pools_get_charged(struct ion_page_pools *pools,
					 unsigned int order, bool cached,
					 unsigned long n, struct list_head *chunks);
void ion_page_pools_put(struct ion_page_pools *pools, struct page *page,
			unsigned int order, bool cached);
unsigned long ion_page_pools_pages(struct ion_page_pools *pools);
unsigned long ion_page_pools_uncharged_pages(struct ion_page_pools *pools,
					     bool cached);
unsigned long ion_page_pools_cap(void);
unsigned long ion_page_pools_shrink(struct ion_page_pools *pools,
				    unsigned long nr, bool may_block);
unsigned long ion_page_pools_displace(struct ion_page_pools *pools,
				      struct page *page, unsigned long nr);
void ion_page_pools_debug_show(struct ion_page_pools *pools,
			       struct seq_file *s);

#endif /* _ION_PAGE_POOL_H */
