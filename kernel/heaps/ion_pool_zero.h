/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: freed chunks waiting to be zeroed, and the worker that zeroes
 * them into the pools (ion_pool_zero.c).  Below the free policy
 * (ion_chunk_pool.c), above the pools (ion_page_pool.c); see
 * ion_page_pool.h for the layers.
 *
 * The free policy reserves room for a freed buffer's chunks against the
 * cap (ion_pool_zero_reserve()), then queues them, one by one or as the
 * buffer's whole table; the worker zeroes them and puts them in their pool.
 * A buffer of several chunks takes its table from ion_pool_alloc_table(),
 * so that the table itself can be queued.
 */
#ifndef _ION_POOL_ZERO_H
#define _ION_POOL_ZERO_H

#include <linux/types.h>

/*
 * How long after a free the worker starts (one wake-up per burst); frees
 * closer together than this are a burst for the free policy too.
 */
#define ION_POOL_DELAY_MS	10

struct list_head;
struct sg_table;
struct ion_page_pools;
struct ion_pool_zero;

struct ion_pool_zero *ion_pool_zero_create(struct ion_page_pools *pools,
					   const char *name,
					   unsigned int max_order);
void ion_pool_zero_destroy(struct ion_pool_zero *zero);

struct sg_table *ion_pool_alloc_table(unsigned int nents);
void ion_pool_drop_table(struct sg_table *sgt);

unsigned long ion_pool_zero_pending(struct ion_pool_zero *zero);
bool ion_pool_zero_reserve(struct ion_pool_zero *zero, unsigned long npages,
			   unsigned long cap);
void ion_pool_zero_queue(struct ion_pool_zero *zero, struct list_head *chunks,
			 bool cached);
void ion_pool_zero_queue_table(struct ion_pool_zero *zero,
			       struct sg_table *sgt, bool cached);
unsigned long ion_pool_zero_release_limited(struct ion_pool_zero *zero,
					    unsigned long npages);
void ion_pool_zero_check_cap(struct ion_pool_zero *zero, unsigned long cap);

#endif /* _ION_POOL_ZERO_H */
