// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: a heap's page pools as the heap sees them, and the free
 * policy - whether a freed chunk is deferred for zeroing (and pooled) or
 * given back to the buddy allocator (handing chunks out is
 * ion_chunk_get.c's).  Calls only down: ion_pool_zero.c and
 * ion_page_pool.c (see ion_page_pool.h for the layers).
 */

/**
 * DOC: free policy
 *
 * A freed chunk is deferred for zeroing and pooling (ion_pool_zero.c)
 * while the pools stay within their cap; otherwise it goes straight back
 * to the buddy allocator, unzeroed, as it did without pools (an uncached
 * one restored to write-back first, or leaked with a warning when that
 * fails).
 *
 * Charged chunks follow the same policy: zeroed, they are pooled for
 * their own memory cgroup (ion_memcg.c); on kernels without per-memcg
 * pools they go straight back to the buddy allocator.
 *
 * Isolated frees.  An isolated free of a small cached buffer (at most
 * ION_POOL_ISOLATED_PAGES, 64 KiB; the first free after ION_POOL_DELAY_MS
 * without any, while no chunk waits for the worker) does not even arm the
 * worker's timer: its chunks go straight back to the buddy allocator,
 * unzeroed, as without pools, because the timer and the wake-up it leads
 * to cost more than zeroing 64 KiB saves the next allocation.  Frees that
 * come in a burst (within ION_POOL_DELAY_MS of each other: a loop that
 * allocates and frees, a process releasing its buffers) are pooled
 * whatever their size, and so are uncached chunks, whose reuse also saves
 * a change of the linear map's attributes.
 *
 * Caps.  Chunks are only deferred (and so pooled) while the pools plus the
 * chunks waiting for the worker stay within ion_page_pools_cap().  At the
 * cap a freed chunk first makes room by giving back cached pooled chunks
 * that its owner could not reuse: for a chunk charged to a memory cgroup,
 * the uncharged ones and those of other cgroups; for an uncharged one, the
 * charged ones; best fit (the smallest order whose one chunk makes the
 * room first, so that a 64 KiB free does not give back a 1 MiB chunk
 * while 64 KiB ones are pooled), the oldest of each list first, and only
 * those pooled at least pool_displace_ms ago (default 1000).  So the
 * pools come to hold the chunks of whoever frees now, not of whoever
 * filled them first: a cgroup that freed a lot and went idle does not
 * keep every other user from pooling until memory runs short.  And owners that free in turn at
 * the cap do not displace each other's chunks as soon as the worker pooled
 * them: that spent the worker's zeroing (CPU time charged to no one) on
 * chunks given back before anyone reused them; such a free goes back to
 * the buddy allocator instead, as below (and the rest of that free does
 * not look again).  A cgroup's list is oldest first, so the walk leaves a
 * list at its first chunk pooled too recently.  Chunks of the same owner
 * and order never displace each other (that would trade a pooled chunk
 * for another one that still needs zeroing), nor does a chunk no task
 * could take again (charged to the root cgroup after its own cgroups were
 * removed); and the walk of the other cgroups' lists leaves the owner's
 * own list at its first chunk, however many it holds.  But a chunk that
 * found too few other owners' chunks to displace gives back its own
 * owner's chunks of the other orders pooled pool_displace_ms ago (the
 * uncharged ones for an uncharged chunk, its cgroup's for a charged one):
 * a workload that moved from 1 MiB buffers to 64 KiB ones would otherwise
 * find the pools full of chunks it no longer asks for, and pool none of
 * its frees until memory ran short (the bench's scaling row after its
 * 64 MiB cases, Documentation/bench.md, "Known limits").
 * An uncached chunk then makes room by giving back any cached pooled
 * ones, which costs nothing.  Otherwise a freed chunk goes back to the
 * buddy allocator.  A free that defers nothing still has the worker trim
 * the pools when pool_max_mb was lowered below what they hold.
 */
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "ion_chunk_pool.h"
#include "ion_chunk_pool_priv.h"
#include "ion_memcg.h"
#include "ion_cache.h"
#include "ion_page_pool.h"
#include "ion_pool_zero.h"

/* The largest cached buffer an isolated free does not pool, in pages. */
#define ION_POOL_ISOLATED_PAGES	(SZ_64K >> PAGE_SHIFT)

/**
 * ion_chunk_pool_pages() - pages held by the pools, ready for reuse
 * @cp: the heap's pools
 *
 * Context: any; the value may be stale by the time it is used.
 * Return: the number of clean pooled pages.
 */
unsigned long ion_chunk_pool_pages(struct ion_chunk_pool *cp)
{
	return ion_page_pools_pages(cp->pools);
}

/**
 * ion_chunk_pool_usable() - pooled pages the caller's buffer could take
 * @cp:     the heap's pools
 * @cached: the buffer's cache mode
 *
 * For ion_heap_leaves_reserve(): the shared pools of @cached for a caller
 * charged to no memory cgroup; none for a charged one (its cgroup's own
 * chunks are not counted: the reserve check errs on the side of refusing).
 *
 * Context: any; the value may be stale by the time it is used.
 * Return: the number of pages.
 */
unsigned long ion_chunk_pool_usable(struct ion_chunk_pool *cp, bool cached)
{
	if (ion_memcg_caller_charged())
		return 0;
	return ion_page_pools_uncharged_pages(cp->pools, cached);
}

/**
 * ion_chunk_alloc_table() - an sg table for a buffer of several chunks
 * @nents: its number of entries, at least 1
 *
 * The table goes back with its chunks to ion_chunk_free_table(), or alone
 * to ion_chunk_drop_table().
 *
 * Context: Process context; sleeps.
 * Return: the table, its entries cleared, or NULL.
 */
struct sg_table *ion_chunk_alloc_table(unsigned int nents)
{
	return ion_pool_alloc_table(nents);
}

/**
 * ion_chunk_drop_table() - free a table of ion_chunk_alloc_table()
 * @sgt: the table; whatever chunks it lists are the caller's
 *
 * Context: Any context that may kfree().
 */
void ion_chunk_drop_table(struct sg_table *sgt)
{
	ion_pool_drop_table(sgt);
}

/*
 * An isolated free of a small cached buffer (the first free after a quiet
 * spell of ION_POOL_DELAY_MS, with nothing waiting for the worker) goes
 * straight back to the buddy allocator, unzeroed, as without pools:
 * waking the worker for it would cost more than the zeroing it saves the
 * next allocation (see DOC).  Records the time of this free.
 */
static bool ion_chunk_isolated(struct ion_chunk_pool *cp,
			       unsigned long npages, bool cached)
{
	unsigned long last = READ_ONCE(cp->last_free), now = jiffies;

	if (last != now)
		WRITE_ONCE(cp->last_free, now);
	return cached && npages && npages <= ION_POOL_ISOLATED_PAGES &&
	       time_after(now, last + msecs_to_jiffies(ION_POOL_DELAY_MS)) &&
	       !ion_pool_zero_pending(cp->zero);
}

/* Count @freed pooled pages given back for room; did it make room for @n? */
static bool ion_chunk_made_room(struct ion_chunk_pool *cp,
				unsigned long freed, unsigned long n,
				unsigned long cap)
{
	atomic_long_add(freed, &cp->displaced_pages);
	return freed && ion_pool_zero_reserve(cp->zero, n, cap);
}

/*
 * Count @n pages of @page as deferred within @cap, making room if need be
 * (DOC: free policy, "Caps"): first by giving back cached pooled chunks
 * that @page's owner could not reuse (or had not been reusing: its own of
 * other orders), then, for an uncached chunk, any cached ones: giving
 * back a cached chunk costs nothing, an uncached one two changes of the
 * linear map (now, and at its next allocation).  When
 * the first found nothing to give back (*@displace false), the other
 * chunks of the same free do not look again: nothing it could displace
 * was pooled long enough (a later chunk of another order might have
 * found some of the first one's order: rare, since a buffer's largest
 * chunks come first), and a 64 MiB buffer of 4 KiB chunks would walk the
 * cgroups' lists thousands of times for nothing.
 */
static bool ion_chunk_reserve(struct ion_chunk_pool *cp, struct page *page,
			      unsigned long n, bool cached, unsigned long cap,
			      bool *displace)
{
	unsigned long freed;

	if (ion_pool_zero_reserve(cp->zero, n, cap))
		return true;
	if (*displace) {
		freed = ion_page_pools_displace(cp->pools, page, n);
		*displace = freed;
		if (ion_chunk_made_room(cp, freed, n, cap))
			return true;
	}
	if (!cached &&
	    ion_chunk_made_room(cp, ion_page_pools_shrink(cp->pools, n, false),
				n, cap))
		return true;
	atomic_long_add(n, &cp->cap_freed_pages);
	return false;
}

/*
 * Put one chunk on @chunks for the worker if the pools stay within @cap
 * (*@displace: as ion_chunk_reserve(), for one free's chunks).
 */
static bool ion_chunk_defer(struct ion_chunk_pool *cp, struct page *page,
			    unsigned int order, bool cached, unsigned long cap,
			    struct list_head *chunks, bool *displace)
{
	if (!ion_page_pools_serves(cp->pools, order) ||
	    !ion_chunk_reserve(cp, page, 1UL << order, cached, cap, displace))
		return false;
	set_page_private(page, order);
	list_add_tail(&page->lru, chunks);
	return true;
}

/* Hand @chunks to the worker (or, when empty, let it check the cap). */
static void ion_chunk_queue(struct ion_chunk_pool *cp,
			    struct list_head *chunks, bool cached,
			    unsigned long cap)
{
	if (list_empty(chunks))
		ion_pool_zero_check_cap(cp->zero, cap);
	else
		ion_pool_zero_queue(cp->zero, chunks, cached);
}

/*
 * Chunk by chunk: defer each chunk while the pools stay within @cap, give
 * the others back to the buddy allocator.
 */
static void ion_chunk_defer_table(struct ion_chunk_pool *cp,
				  struct sg_table *sgt, bool cached,
				  unsigned long cap)
{
	struct scatterlist *sg;
	bool displace = true;
	LIST_HEAD(chunks);
	unsigned int i;

	for_each_sgtable_sg(sgt, sg, i) {
		struct page *page = sg_page(sg);
		unsigned int order = get_order(sg->length);

		if (!ion_chunk_defer(cp, page, order, cached, cap, &chunks,
				     &displace))
			ion_page_chunk_release_or_leak(page, order, cached,
						       cp->name);
	}
	ion_chunk_queue(cp, &chunks, cached, cap);
}

/*
 * The pages of @sgt when every chunk is of a pool order, else 0.  Reads
 * the table only: the chunks' struct pages are left for the worker.
 */
static unsigned long ion_chunk_table_pages(struct ion_chunk_pool *cp,
					   struct sg_table *sgt)
{
	unsigned long npages = 0;
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_sg(sgt, sg, i) {
		if (!ion_page_pools_serves(cp->pools, get_order(sg->length)))
			return 0;
		npages += sg->length >> PAGE_SHIFT;
	}
	return npages;
}

/*
 * Is any chunk of @sgt charged to a memory cgroup?  One buffer may mix
 * charged and uncharged chunks (memcg_charge turned on, or its task moved
 * to another cgroup, while it was filled): all of them are checked.
 */
static bool ion_chunk_table_charged(struct sg_table *sgt)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_sg(sgt, sg, i)
		if (ion_memcg_page_charged(sg_page(sg)))
			return true;
	return false;
}

/**
 * ion_chunk_free() - take back the one chunk of a freed buffer
 * @cp:     the heap's pools
 * @page:   the chunk's first page
 * @order:  its order
 * @cached: whether the buffer was cached (else its linear map is still
 *	    write-combined)
 *
 * The chunk is queued for zeroing and pooling (the worker starts within
 * ION_POOL_DELAY_MS) while the pools are within their cap, otherwise given
 * back to the buddy allocator at once (an uncached one restored to
 * write-back first; one that cannot be is leaked with a warning).  An
 * isolated free of a small cached chunk is given back at once too.
 *
 * Context: Process context, may sleep.
 */
void ion_chunk_free(struct ion_chunk_pool *cp, struct page *page,
		    unsigned int order, bool cached)
{
	unsigned long cap = ion_page_pools_cap();
	bool displace = true;
	LIST_HEAD(chunks);

	if (!ion_memcg_pools_enabled() && ion_memcg_page_charged(page)) {
		ion_page_chunk_release_or_leak(page, order, cached, cp->name);
		return;
	}
	if (ion_chunk_isolated(cp, 1UL << order, cached)) {
		__free_pages(page, order);
		ion_pool_zero_check_cap(cp->zero, cap);
		return;
	}
	if (!ion_chunk_defer(cp, page, order, cached, cap, &chunks,
			     &displace))
		ion_page_chunk_release_or_leak(page, order, cached, cp->name);
	ion_chunk_queue(cp, &chunks, cached, cap);
}

/**
 * ion_chunk_free_table() - take back a freed buffer's chunks and table
 * @cp:     the heap's pools
 * @sgt:    the buffer's table, from ion_chunk_alloc_table(), one chunk per
 *	    entry; freed here or by the worker
 * @cached: whether the buffer was cached
 *
 * As ion_chunk_free() for each chunk.  When the whole buffer fits within
 * the cap, the table is queued as it is: the free touches none of the
 * chunks' struct pages, and the worker unpacks and frees the table.
 *
 * Context: Process context, may sleep.
 */
void ion_chunk_free_table(struct ion_chunk_pool *cp, struct sg_table *sgt,
			  bool cached)
{
	unsigned long npages = ion_chunk_table_pages(cp, sgt);
	unsigned long cap = ion_page_pools_cap();
	/* Once: it records this free's time, so a second call is false. */
	bool isolated = ion_chunk_isolated(cp, npages, cached);
	struct scatterlist *sg;
	unsigned int i;

	if (!ion_memcg_pools_enabled() && ion_chunk_table_charged(sgt)) {
		for_each_sgtable_sg(sgt, sg, i)
			ion_page_chunk_release_or_leak(sg_page(sg),
						       get_order(sg->length),
						       cached, cp->name);
		ion_pool_drop_table(sgt);
		return;
	}
	if (!isolated && npages &&
	    ion_pool_zero_reserve(cp->zero, npages, cap)) {
		ion_pool_zero_queue_table(cp->zero, sgt, cached);
		return;
	}
	if (isolated) {
		for_each_sgtable_sg(sgt, sg, i)
			__free_pages(sg_page(sg), get_order(sg->length));
		ion_pool_zero_check_cap(cp->zero, cap);
	} else {
		ion_chunk_defer_table(cp, sgt, cached, cap);
	}
	ion_pool_drop_table(sgt);
}

/**
 * ion_chunk_pool_debug_show() - the pools' lines of the heap's debugfs file
 * @cp: the heap's pools
 * @s:  the heap's debugfs file
 *
 * See ion_page_pools_debug_show(); then what making room at the cap gave
 * back, the freed bytes the pools had no room for, and the waiting ones
 * a cgroup at its memory.max gave back.
 *
 * Context: Process context; does not sleep.
 */
void ion_chunk_pool_debug_show(struct ion_chunk_pool *cp, struct seq_file *s)
{
	ion_page_pools_debug_show(cp->pools, s);
	seq_printf(s, "pool_displaced_bytes: %lu\n",
		   atomic_long_read(&cp->displaced_pages) << PAGE_SHIFT);
	seq_printf(s, "pool_cap_freed_bytes: %lu\n",
		   atomic_long_read(&cp->cap_freed_pages) << PAGE_SHIFT);
	seq_printf(s, "pool_limit_freed_bytes: %lu\n",
		   atomic_long_read(&cp->limit_freed_pages) << PAGE_SHIFT);
}

/**
 * ion_chunk_pool_create() - pools for a heap's chunk orders
 * @name:    short name of the heap (for the worker, the shrinker and
 *	     messages)
 * @orders:  the orders of the heap's chunks, largest first
 * @norders: how many, at most 4
 *
 * Creates the pools, then their zeroing worker, which starts their
 * shrinker.
 *
 * Context: Process context (module init).
 * Return: the pools, or ERR_PTR(-EINVAL) for bad orders, ERR_PTR(-ENOMEM).
 */
struct ion_chunk_pool *ion_chunk_pool_create(const char *name,
					     const unsigned int *orders,
					     unsigned int norders)
{
	struct ion_chunk_pool *cp;
	unsigned int i, max = 0;
	int ret;

	cp = kzalloc(sizeof(*cp), GFP_KERNEL);
	if (!cp)
		return ERR_PTR(-ENOMEM);
	cp->name = name;
	cp->pools = ion_page_pools_create(name, orders, norders);
	if (IS_ERR(cp->pools)) {
		ret = PTR_ERR(cp->pools);
		goto err_free_cp;
	}
	for (i = 0; i < norders; i++)
		max = max(max, orders[i]);
	cp->zero = ion_pool_zero_create(cp->pools, name, max);
	if (IS_ERR(cp->zero)) {
		ret = PTR_ERR(cp->zero);
		goto err_destroy_pools;
	}
	return cp;

err_destroy_pools:
	ion_page_pools_destroy(cp->pools);
err_free_cp:
	kfree(cp);
	return ERR_PTR(ret);
}

/**
 * ion_chunk_pool_destroy() - free every pooled chunk and the pools
 * @cp: from ion_chunk_pool_create(); no buffer may still hold chunks that
 *	will come back to it
 *
 * Stops the shrinker, lets the worker finish the chunks still queued,
 * then gives every chunk back to the buddy allocator (uncached ones
 * restored to write-back; one that cannot be is leaked with a warning
 * rather than freed write-combined).
 *
 * Context: Process context (module exit); sleeps.
 */
void ion_chunk_pool_destroy(struct ion_chunk_pool *cp)
{
	ion_pool_zero_destroy(cp->zero);
	ion_page_pools_destroy(cp->pools);
	kfree(cp);
}
