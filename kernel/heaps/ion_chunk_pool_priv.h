/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: a heap's page pools as the heap sees them, inside: shared by
 * the free policy and the pools' lifetime (ion_chunk_pool.c) and the
 * handing out of chunks (ion_chunk_get.c).  Nothing else includes it.
 */
#ifndef _ION_CHUNK_POOL_PRIV_H
#define _ION_CHUNK_POOL_PRIV_H

struct ion_page_pools;
struct ion_pool_zero;

/**
 * struct ion_chunk_pool - a heap's pools, with their free policy
 * @name:      the heap's short name, for messages
 * @pools:     the clean chunks
 * @zero:      the freed chunks waiting to be zeroed into @pools
 * @last_free: jiffies at the latest free (read and written locklessly)
 * @displaced_pages: pooled pages given back at the cap to make room for
 *	       a freed chunk (ion_chunk_reserve())
 * @cap_freed_pages: freed pages the pools had no room for at the cap, not
 *	       pooled
 * @limit_freed_pages: pages waiting for the zeroing worker, charged to a
 *	       cgroup at its memory.max, that an allocation of that cgroup
 *	       gave back (ion_pool_zero_release_limited())
 *
 * Lives from ion_chunk_pool_create() to ion_chunk_pool_destroy().
 */
struct ion_chunk_pool {
	const char *name;
	struct ion_page_pools *pools;
	struct ion_pool_zero *zero;
	unsigned long last_free;
	atomic_long_t displaced_pages;
	atomic_long_t cap_freed_pages;
	atomic_long_t limit_freed_pages;
};

#endif /* _ION_CHUNK_POOL_PRIV_H */
