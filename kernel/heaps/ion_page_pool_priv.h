/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: the page pools' insides, shared by the pools' lists
 * (ion_page_pool.c) and their shrinker and lifetime (ion_pool_shrink.c,
 * which calls down into ion_page_pool.c only).  Nothing else includes it.
 */
#ifndef _ION_PAGE_POOL_PRIV_H
#define _ION_PAGE_POOL_PRIV_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "ion_compat.h"
#include "ion_memcg.h"
#include "ion_page_pool.h"

struct shrinker;

/**
 * struct ion_page_pool - clean chunks of one order and cache mode
 * @lock:    protects @chunks and @count
 * @chunks:  the uncharged chunks, linked by page->lru, most recently added
 *	     first
 * @count:   number of chunks on @chunks (read locklessly for statistics)
 * @charged: the chunks charged to a memory cgroup, per cgroup
 * @ncharged: number of chunks on @charged, counted after they were added
 *	     or taken off (so for a moment off by one, even negative): a
 *	     lockless look for an empty @charged
 * @order:   order of every chunk, set at creation
 */
struct ion_page_pool {
	spinlock_t lock;	/* protects @chunks and @count */
	struct list_head chunks;
	unsigned long count;
	struct ion_memcg_pool charged;
	atomic_long_t ncharged;
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

struct ion_page_pools *ion_pools_alloc(const char *name,
				       const unsigned int *orders,
				       unsigned int norders,
				       struct shrinker *shrinker);
void ion_pools_free(struct ion_page_pools *pools);
void ion_pool_add(struct ion_page_pools *pools, struct ion_page_pool *pool,
		  struct page *page);
struct page *ion_pool_take(struct ion_page_pools *pools,
			   struct ion_page_pool *pool);
struct page *ion_pool_take_old(struct ion_page_pools *pools,
			       struct ion_page_pool *pool, unsigned long before);
unsigned long ion_pool_displace_before(void);
void ion_pool_count_charged(struct ion_page_pools *pools,
			    struct ion_page_pool *pool, long n);
void ion_pool_add_charged(struct ion_page_pools *pools,
			  struct ion_page_pool *pool, struct page *page,
			  bool cached);

#endif /* _ION_PAGE_POOL_PRIV_H */
