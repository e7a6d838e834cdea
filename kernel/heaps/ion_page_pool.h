/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: pools of clean pages (ion_page_pool.c).
 *
 * A set of pools keeps chunks (blocks of the buddy allocator of the orders
 * it was created with), cached and uncached apart, that are zeroed and
 * ready to hand out again.  A heap asks the pools before the buddy
 * allocator, takes the buffer's sg table from ion_page_pools_alloc_table(),
 * and gives a freed buffer's table and chunks to
 * ion_page_pools_free_table(), which zeroes them on a worker thread before
 * they return to a pool.  A shrinker gives pooled chunks back under memory
 * pressure; the module parameter pool_max_mb caps what is kept.
 */
#ifndef _ION_PAGE_POOL_H
#define _ION_PAGE_POOL_H

#include <linux/types.h>

struct page;
struct seq_file;
struct sg_table;
struct ion_page_pools;

struct ion_page_pools *ion_page_pools_create(const char *name,
					     const unsigned int *orders,
					     unsigned int norders);
void ion_page_pools_destroy(struct ion_page_pools *pools);
unsigned long ion_page_pools_pages(struct ion_page_pools *pools);
struct page *ion_page_pools_get(struct ion_page_pools *pools,
				unsigned int order, bool cached);
void ion_page_pools_put(struct ion_page_pools *pools, struct page *page,
			unsigned int order, bool cached);
struct sg_table *ion_page_pools_alloc_table(unsigned int nents);
void ion_page_pools_drop_table(struct sg_table *sgt);
void ion_page_pools_free_chunk(struct ion_page_pools *pools,
			       struct page *page, unsigned int order,
			       bool cached);
void ion_page_pools_free_table(struct ion_page_pools *pools,
			       struct sg_table *sgt, bool cached);
void ion_page_pools_debug_show(struct ion_page_pools *pools,
			       struct seq_file *s);

#endif /* _ION_PAGE_POOL_H */
