// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the system heap, non-contiguous pages from the page allocator.
 *
 * A buffer is a list of chunks, each one block of the buddy allocator, as
 * large as possible: orders 8 (1 MiB), 4 (64 KiB), then single pages.
 * Large chunks make device mappings (IOMMU, huge TLB entries) cheaper; a
 * failed large order is not retried for the rest of that buffer.  Large
 * orders are tried without retrying or warning, so fragmentation only
 * makes the buffer coarser, never the allocator loud.  Single pages are
 * asked for with __GFP_RETRY_MAYFAIL: reclaim as needed, but fail with
 * -ENOMEM rather than invoke the OOM killer.  A request bigger than half
 * of RAM does not even reclaim hard, so it fails fast.
 *
 * Each sg entry is exactly one chunk, so the order of a chunk is known
 * again from its length on free.  Every chunk is first asked of the page
 * pools (ion_chunk_pool.h), cached and uncached apart, which hold chunks
 * of earlier buffers zeroed again; only when the pool of that order is
 * empty does the buddy allocator give one (zeroed there: init_on_alloc, or
 * __GFP_ZERO).  An uncached buffer converts only its fresh chunks (x86
 * cuts them from converted 2 MiB blocks, ion_cache_x86_block.c).  A buffer
 * of one chunk (4 KiB, 64 KiB, 1 MiB: the common sizes) takes a short path
 * with no chunk lists and the one-entry table in the buffer itself; a
 * larger one takes its table from the pools and gives it back on free.
 * When the pools cannot cover a large buffer, idle CPUs may help fill it
 * (ion_parallel.c, opt-in with the parallel_helpers parameter): the
 * zeroing of its fresh chunks, most of the cost, is shared out.  The pools
 * zero freed chunks on their worker thread (or give them back to the buddy
 * allocator: when full, or for an isolated free of a small cached buffer).
 *
 * User mappings: the core remaps each chunk.  No phys op: not contiguous.
 */
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/scatterlist.h>
#include <linux/vmstat.h>

#include "ion_heap.h"
#include "ion_cache.h"
#include "ion_heaps.h"
#include "ion_chunk_pool.h"
#include "ion_memcg.h"
#include "ion_parallel.h"

static const unsigned int ion_system_orders[] = { 8, 4, 0 }; /* largest first */

#define ION_SYSTEM_GFP_LOW	(GFP_HIGHUSER | __GFP_ZERO | __GFP_NOWARN | \
				 __GFP_RETRY_MAYFAIL)
#define ION_SYSTEM_GFP_HIGH	(GFP_HIGHUSER | __GFP_ZERO | __GFP_NOWARN | \
				 __GFP_NORETRY)

/* The system heap's pools; set at init, before the heap is registered. */
static struct ion_chunk_pool *ion_system_pools;

/*
 * A chunk of @order from @ahead or its pool, an uncached block or the
 * buddy allocator (*@src), by the caller's policy or near @nid.
 */
static struct page *ion_system_get_chunk(unsigned int order,
					 bool big, bool cached, int nid,
					 struct ion_chunk_ahead *ahead,
					 enum ion_chunk_src *src)
{
	const struct ion_chunk_want w = {
		.gfp = order || big ? ION_SYSTEM_GFP_HIGH : ION_SYSTEM_GFP_LOW,
		.nid = nid,
		.limit = U64_MAX,
		.cached = cached,
		.pool = true,
		.blocks = true,
		.ahead = ahead,
	};

	return ion_chunk_get_or_alloc(ion_system_pools, order, &w, src);
}

/* Undo ion_system_get_chunk() for a chunk nobody used. */
static void ion_system_put_chunk(struct page *page, unsigned int order,
				 bool cached, bool pooled)
{
	if (pooled)
		ion_chunk_put(ion_system_pools, page, order, cached);
	else
		__free_pages(page, order);
}

/*
 * The largest chunk of at most @remaining bytes, trying orders from index
 * *@first on; *@first moves past orders that failed.  page_private holds
 * the chunk's order while it is on an allocation list.
 */
static struct page *
ion_system_next_chunk(unsigned long remaining, unsigned int *first, bool big,
		      bool cached, int nid, struct ion_chunk_ahead *ahead,
		      enum ion_chunk_src *src)
{
	struct page *page;
	unsigned int i;

	for (i = *first; i < ARRAY_SIZE(ion_system_orders); i++) {
		unsigned int order = ion_system_orders[i];

		if (remaining < (PAGE_SIZE << order))
			continue;
		page = ion_system_get_chunk(order, big, cached, nid, ahead,
					    src);
		if (page) {
			set_page_private(page, order);
			return page;
		}
		*first = i + 1;
	}
	return NULL;
}

static void ion_system_put_list(struct list_head *chunks, bool cached,
				bool pooled)
{
	struct page *page, *tmp;
	unsigned int order;

	list_for_each_entry_safe(page, tmp, chunks, lru) {
		list_del(&page->lru);
		order = page_private(page);
		set_page_private(page, 0);
		ion_system_put_chunk(page, order, cached, pooled);
	}
}

/*
 * Give back the chunks of @buffer's table, which nobody used: the first
 * @nfresh came from the buddy allocator (still write-back), the rest from
 * the pools.
 */
static void ion_system_put_table(struct ion_buffer *buffer,
				 unsigned int nfresh, bool cached)
{
	struct sg_table *sgt = buffer->sg_table;
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_sg(sgt, sg, i)
		ion_system_put_chunk(sg_page(sg), get_order(sg->length),
				     cached, i >= nfresh);
	if (!ion_buffer_is_one_chunk(buffer))
		ion_chunk_drop_table(sgt);
	buffer->sg_table = NULL;
}

/*
 * Move the chunks of @lists into a table from the pools for @buffer, one
 * entry each, in order.  Only for more than one chunk: a buffer of one
 * chunk is ion_system_allocate_one()'s.
 */
static struct sg_table *
ion_system_build_table(struct ion_buffer *buffer, struct list_head *lists,
		       unsigned int nlists, unsigned int nchunks)
{
	struct scatterlist *sg;
	struct sg_table *sgt;
	struct page *page, *tmp;
	unsigned int i;

	sgt = ion_chunk_alloc_table(nchunks);
	if (!sgt)
		return NULL;
	buffer->sg_table = sgt;
	sg = sgt->sgl;
	for (i = 0; i < nlists; i++) {
		list_for_each_entry_safe(page, tmp, &lists[i], lru) {
			list_del(&page->lru);
			sg_set_page(sg, page, PAGE_SIZE << page_private(page),
				    0);
			set_page_private(page, 0);
			sg = sg_next(sg);
		}
	}
	return sgt;
}

/* Switch the first @nfresh chunks of @sgt (the buddy ones) to uncached. */
static int ion_system_set_uncached(struct sg_table *sgt, unsigned int nfresh)
{
	struct sg_table fresh = {
		.sgl = sgt->sgl, .nents = nfresh, .orig_nents = nfresh,
	};

	return nfresh ? ion_cache_set_uncached(&fresh) : 0;
}

/* The index in ion_system_orders of a chunk of @len bytes, or -1. */
static int ion_system_one_index(unsigned long len)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ion_system_orders); i++)
		if (len == PAGE_SIZE << ion_system_orders[i])
			return i;
	return -1;
}

/*
 * A buffer of exactly one chunk (4 KiB, 64 KiB, 1 MiB): no lists and no
 * table to allocate, the buffer's own one-entry table.  -ENOMEM when no
 * such chunk is free: the caller tries smaller ones.
 */
static int ion_system_allocate_one(struct ion_buffer *buffer,
				   unsigned int order, bool big,
				   bool cached)
{
	enum ion_chunk_src src;
	struct page *page;
	int ret;

	page = ion_system_get_chunk(order, big, cached, NUMA_NO_NODE, NULL,
				    &src);
	if (!page)
		return -ENOMEM;
	ion_buffer_one_chunk(buffer, page, PAGE_SIZE << order);
	if (cached || src != ION_CHUNK_FRESH)
		return 0;
	ret = ion_system_set_uncached(buffer->sg_table, 1);
	if (ret)
		ion_system_put_table(buffer, 1, cached);
	return ret;
}

/* What the pools could give a buffer (ion_heap_leaves_reserve()). */
static unsigned long ion_system_pooled(bool cached)
{
	return ion_chunk_pool_usable(ion_system_pools, cached);
}

/* Index of a part's lists: fresh chunks come first in the table. */
enum { ION_SYSTEM_FRESH, ION_SYSTEM_POOLED, ION_SYSTEM_LISTS };

/* The chunks one participant of a fill took, fresh and pooled apart. */
struct ion_system_part {
	struct list_head chunks[ION_SYSTEM_LISTS];
	unsigned int n[ION_SYSTEM_LISTS];
};

/*
 * A buffer of more than one chunk, filled by the caller and maybe helpers
 * (ion_parallel.c) in pieces of the largest chunk: each piece is cut into
 * chunks as the whole buffer would be, so while no order fails the chunks
 * are the same, only their order in the table may differ (each
 * participant learns of a failed order by itself).  @nid: the caller's node, for
 * helpers (NUMA_NO_NODE with none: the caller's policy); @first: the
 * first order worth trying; @ahead: the caller's chunks of that order,
 * taken from the pools several at a time (helpers' one by one).
 */
struct ion_system_fill {
	struct ion_parallel par;
	bool big, cached;
	int nid;
	unsigned int first;
	struct ion_chunk_ahead ahead;
	struct ion_system_part part[ION_PARALLEL_MAX_HELPERS + 1];
};

#define ION_SYSTEM_PIECE	(PAGE_SIZE << ion_system_orders[0])

/* Bytes of fresh memory the helpers zeroed, and buffers they helped fill. */
static atomic_long_t ion_system_helper_bytes;
static atomic_long_t ion_system_parallel_fills;

/* An ion_parallel_fn: chunks for the pieces it claims, into its part. */
static void ion_system_fill_part(struct ion_parallel *par, unsigned int who)
{
	struct ion_system_fill *fill =
		container_of(par, struct ion_system_fill, par);
	struct ion_system_part *part = &fill->part[who];
	unsigned int first = fill->first;
	unsigned long len, fresh = 0;
	enum ion_chunk_src src;
	struct page *page;
	bool pooled;

	while (ion_parallel_claim(par, &len)) {
		while (len) {
			if (ion_parallel_stopped(par))
				goto out;
			page = ion_system_next_chunk(len, &first, fill->big,
						     fill->cached, fill->nid,
						     who ? NULL : &fill->ahead,
						     &src);
			if (!page) {
				ion_parallel_stop(par, -ENOMEM);
				goto out;
			}
			pooled = src != ION_CHUNK_FRESH;
			list_add_tail(&page->lru, &part->chunks[pooled]);
			part->n[pooled]++;
			len -= PAGE_SIZE << page_private(page);
			/* Not from the pools: zeroed by this participant. */
			if (src != ION_CHUNK_POOLED)
				fresh += PAGE_SIZE << page_private(page);
		}
	}
out:
	if (who && fresh)
		atomic_long_add(fresh, &ion_system_helper_bytes);
}

/*
 * Fill @fill: helpers only for what the pools cannot give (pooled chunks
 * cost no zeroing), then every part's chunks on part 0's lists.
 */
static int ion_system_fill(struct ion_system_fill *fill, unsigned long len)
{
	unsigned long pooled = ion_chunk_pool_pages(ion_system_pools) <<
			       PAGE_SHIFT;
	struct ion_system_part *all = &fill->part[0];
	unsigned int nhelpers = 0, i, l, order;
	int ret;

	if (len > pooled)
		nhelpers = ion_parallel_helpers(len - pooled, ION_SYSTEM_PIECE);
	for (i = 0; i <= nhelpers; i++) {
		for (l = 0; l < ION_SYSTEM_LISTS; l++) {
			INIT_LIST_HEAD(&fill->part[i].chunks[l]);
			fill->part[i].n[l] = 0;
		}
	}
	fill->nid = nhelpers ? numa_mem_id() : NUMA_NO_NODE;
	order = ion_system_orders[min_t(size_t, fill->first,	/* 4 KiB failed */
					ARRAY_SIZE(ion_system_orders) - 1)];
	ion_chunk_ahead_init(&fill->ahead, order, len / (PAGE_SIZE << order));
	if (nhelpers)
		atomic_long_inc(&ion_system_parallel_fills);
	ret = ion_parallel_run(&fill->par, ion_system_fill_part, len,
			       ION_SYSTEM_PIECE, nhelpers);
	ion_chunk_ahead_put(ion_system_pools, &fill->ahead, fill->cached);
	for (i = 1; i <= nhelpers; i++) {
		for (l = 0; l < ION_SYSTEM_LISTS; l++) {
			list_splice_tail(&fill->part[i].chunks[l],
					 &all->chunks[l]);
			all->n[l] += fill->part[i].n[l];
		}
	}
	return ret;
}

/*
 * A buffer of several chunks: filled, then its table built from the
 * chunks, fresh ones first (only they are switched to uncached).
 */
static int ion_system_allocate_chunks(struct ion_buffer *buffer,
				      unsigned long len, unsigned int first,
				      bool big, bool cached)
{
	struct ion_system_fill fill = {
		.big = big, .cached = cached, .first = first,
	};
	struct ion_system_part *all = &fill.part[0];
	struct sg_table *sgt;
	int ret;

	ret = ion_system_fill(&fill, len);
	if (ret)
		goto err_put_chunks;
	sgt = ion_system_build_table(buffer, all->chunks, ION_SYSTEM_LISTS,
				     all->n[ION_SYSTEM_FRESH] +
				     all->n[ION_SYSTEM_POOLED]);
	if (!sgt) {
		ret = -ENOMEM;
		goto err_put_chunks;
	}
	if (!cached) {
		ret = ion_system_set_uncached(sgt, all->n[ION_SYSTEM_FRESH]);
		if (ret)
			goto err_put_table;
	}
	return 0;

err_put_table:
	ion_system_put_table(buffer, all->n[ION_SYSTEM_FRESH], cached);
	return ret;
err_put_chunks:
	ion_system_put_list(&all->chunks[ION_SYSTEM_FRESH], cached, false);
	ion_system_put_list(&all->chunks[ION_SYSTEM_POOLED], cached, true);
	return ret;
}

static int ion_system_allocate(struct ion_heap *heap, struct ion_buffer *buffer)
{
	bool cached = buffer->flags & ION_FLAG_CACHED;
	unsigned long len = buffer->size, npages = len >> PAGE_SHIFT;
	unsigned int first = 0;
	int ret, one;
	bool big;

	if (!ion_heap_leaves_reserve(npages, ion_system_pooled, cached))
		return -ENOMEM;
	big = npages > totalram_pages() / 2;
	one = ion_system_one_index(len);
	if (one >= 0) {
		ret = ion_system_allocate_one(buffer, ion_system_orders[one],
					      big, cached);
		if (ret != -ENOMEM)
			return ret;
		first = one + 1;	/* smaller chunks, more of them */
	}
	ret = ion_system_allocate_chunks(buffer, len, first, big, cached);
	return ion_memcg_note_refusal(heap->name, len, ret);
}

/*
 * The chunks and the table go to the pools, which zero the chunks before
 * anyone gets them.
 */
static void ion_system_free(struct ion_buffer *buffer)
{
	bool cached = buffer->flags & ION_FLAG_CACHED;
	struct scatterlist *sg = buffer->sg_table->sgl;

	if (ion_buffer_is_one_chunk(buffer))
		ion_chunk_free(ion_system_pools, sg_page(sg),
			       get_order(sg->length), cached);
	else
		ion_chunk_free_table(ion_system_pools, buffer->sg_table,
				     cached);
	buffer->sg_table = NULL;
}

static void ion_system_debug_show(struct ion_heap *heap, struct seq_file *s)
{
	ion_chunk_pool_debug_show(ion_system_pools, s);
	ion_cache_blocks_debug_show(s);
	seq_printf(s, "parallel_fills: %ld\n",
		   atomic_long_read(&ion_system_parallel_fills));
	seq_printf(s, "parallel_helper_bytes: %ld\n",
		   atomic_long_read(&ion_system_helper_bytes));
}

static const struct ion_heap_ops ion_system_heap_ops = {
	.allocate = ion_system_allocate,
	.free = ion_system_free,
	.debug_show = ion_system_debug_show,
};

/* Mainline's system heap, and Android's uncached variant of it. */
static const struct ion_heap_alias ion_system_heap_aliases[] = {
	{ .name = "system" },
	{ .name = "system-uncached", .uncached = true },
	{ }
};

static struct ion_heap ion_system_heap = {
	.name = ION_SYSTEM_HEAP_NAME,
	.type = ION_HEAP_TYPE_SYSTEM,
	.id = ION_HEAP_TYPE_SYSTEM,
	.ops = &ion_system_heap_ops,
	.aliases = ion_system_heap_aliases,
};

/**
 * ion_system_heap_init() - register the system heap
 *
 * Creates the heap's page pools first.
 *
 * Context: Process context (module init).
 * Return: 0, -ENOMEM, or the -errno of ion_device_add_heap().
 */
int ion_system_heap_init(void)
{
	int ret;

	ion_system_pools = ion_chunk_pool_create("system", ion_system_orders,
						 ARRAY_SIZE(ion_system_orders));
	if (IS_ERR(ion_system_pools))
		return PTR_ERR(ion_system_pools);
	ret = ion_device_add_heap(&ion_system_heap);
	if (ret) {
		ion_chunk_pool_destroy(ion_system_pools);
		ion_system_pools = NULL;
	}
	return ret;
}

/**
 * ion_system_heap_exit() - unregister the system heap, free its pools
 *
 * No buffer of the heap is live any more, so every chunk is in the pools
 * or on its way there; all go back to the buddy allocator.
 *
 * Context: Process context (module exit).
 */
void ion_system_heap_exit(void)
{
	ion_device_remove_heap(&ion_system_heap);
	ion_chunk_pool_destroy(ion_system_pools);
	ion_system_pools = NULL;
	ion_cache_blocks_exit();
}
