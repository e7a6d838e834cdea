/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: what a heap sees of its page pools (ion_chunk_pool.c).
 *
 * A heap gets a chunk (a block of the buddy allocator, of one of the
 * orders the pools were created with) from ion_chunk_get() before asking
 * the buddy allocator, or from ion_chunk_get_or_alloc(), which does both,
 * and gives back a pooled chunk nobody used with ion_chunk_put().  A freed
 * buffer's chunk goes to ion_chunk_free(), a freed buffer of several
 * chunks with its table (from ion_chunk_alloc_table()) to
 * ion_chunk_free_table(): they are zeroed on a worker thread before they
 * return to a pool, or given back to the buddy allocator.  A shrinker gives
 * pooled chunks back under memory pressure; the module parameter
 * pool_max_mb caps what is kept.  The layers behind this are listed in
 * ion_page_pool.h.
 */
#ifndef _ION_CHUNK_POOL_H
#define _ION_CHUNK_POOL_H

#include <linux/gfp_types.h>
#include <linux/list.h>
#include <linux/types.h>

struct page;
struct seq_file;
struct sg_table;
struct ion_chunk_pool;

struct ion_chunk_pool *ion_chunk_pool_create(const char *name,
					     const unsigned int *orders,
					     unsigned int norders);
void ion_chunk_pool_destroy(struct ion_chunk_pool *cp);

/* Where ion_chunk_get_or_alloc() found a chunk. */
enum ion_chunk_src {
	ION_CHUNK_FRESH,	/* the page allocator: write-back */
	ION_CHUNK_POOLED,	/* the pools: of the mode asked for */
	ION_CHUNK_BLOCK,	/* an uncached block (x86): write-combined */
};

/**
 * struct ion_chunk_ahead - chunks of one order an allocation takes from
 *			    the pools ahead of need
 * @chunks: taken and not handed out yet, linked by page->lru
 * @order:  their order
 * @want:   how many more of @order the allocation may still need
 *
 * ion_chunk_ahead_init() sets it up; what is left when the allocation is
 * done goes back with ion_chunk_ahead_put().  Used by one task at a time.
 */
struct ion_chunk_ahead {
	struct list_head chunks;
	unsigned int order;
	unsigned long want;
};

/**
 * ion_chunk_ahead_init() - no chunks taken ahead yet
 * @a:     the chunks taken ahead
 * @order: the order of the chunks it may take
 * @want:  how many of them the allocation needs at most
 *
 * Context: any.
 */
static inline void ion_chunk_ahead_init(struct ion_chunk_ahead *a,
					unsigned int order, unsigned long want)
{
	INIT_LIST_HEAD(&a->chunks);
	a->order = order;
	a->want = want;
}

/**
 * struct ion_chunk_want - what ion_chunk_get_or_alloc() may hand out
 * @gfp:    the heap's flags for a fresh chunk; the caller's memcg charging
 *	    (ion_memcg_gfp()) is added to them
 * @nid:    the node of a fresh chunk or a new block, or NUMA_NO_NODE for
 *	    the caller's memory policy
 * @limit:  the highest physical address a pooled chunk may reach (U64_MAX:
 *	    any); one beyond it goes back to its pool
 * @cached: a cached chunk, or an uncached one
 * @pool:   chunks may come from the pools
 * @blocks: an uncached chunk may be cut from the write-combined blocks
 *	    (ion_cache_uncached_chunk()) before the page allocator is asked
 * @ahead:  NULL, or where pooled chunks of its order are taken from first
 *	    (a charged caller takes them from its cgroup's list several at
 *	    a time)
 */
struct ion_chunk_want {
	gfp_t gfp;
	int nid;
	u64 limit;
	bool cached;
	bool pool;
	bool blocks;
	struct ion_chunk_ahead *ahead;
};

struct page *ion_chunk_get(struct ion_chunk_pool *cp, unsigned int order,
			   bool cached);
struct page *ion_chunk_get_or_alloc(struct ion_chunk_pool *cp,
				    unsigned int order,
				    const struct ion_chunk_want *w,
				    enum ion_chunk_src *src);
void ion_chunk_put(struct ion_chunk_pool *cp, struct page *page,
		   unsigned int order, bool cached);
void ion_chunk_ahead_put(struct ion_chunk_pool *cp, struct ion_chunk_ahead *a,
			 bool cached);
void ion_chunk_free(struct ion_chunk_pool *cp, struct page *page,
		    unsigned int order, bool cached);

struct sg_table *ion_chunk_alloc_table(unsigned int nents);
void ion_chunk_drop_table(struct sg_table *sgt);
void ion_chunk_free_table(struct ion_chunk_pool *cp, struct sg_table *sgt,
			  bool cached);

unsigned long ion_chunk_pool_pages(struct ion_chunk_pool *cp);
unsigned long ion_chunk_pool_usable(struct ion_chunk_pool *cp, bool cached);
void ion_chunk_pool_debug_show(struct ion_chunk_pool *cp, struct seq_file *s);

#endif /* _ION_CHUNK_POOL_H */
