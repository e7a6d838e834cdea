// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the auto heap's scattered backing - chunks from the heap's own
 * pools, or from the page allocator.
 */
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/scatterlist.h>

#include "ion_heap.h"
#include "ion_auto.h"
#include "ion_chunk_pool.h"
#include "ion_memcg.h"

/**
 * DOC: auto heap chunks
 *
 * A scattered backing (CPU first, IOMMU only, or the fallback below a
 * direct device's limit) is cut into chunks of orders 8, 4 and 0 as the
 * system heap's.  Each chunk is first asked of the auto heap's own pools
 * (ion_chunk_pool.h, "auto" in their messages and shrinker), cached and
 * uncached apart, then of the page allocator with __GFP_ZERO.  A pooled
 * chunk beyond the limit of the fallback goes back to its pool and the
 * page allocator is asked instead (in ZONE_DMA32 below 4 GiB).  A freed
 * backing goes to the pools, which zero its chunks on their worker (or
 * give them back to the buddy allocator, see ion_chunk_free()).
 *
 * Fresh chunks come first in the table: of an uncached buffer only they
 * are made write-combined, the pooled ones are already.  A move of an
 * uncached buffer takes no pooled chunk: its copy is written through the
 * cacheable kernel mapping before the conversion, which on arm64 cleans
 * only the chunks it converts.
 *
 * Charging: with the module parameter memcg_charge on (ion_memcg.c), a
 * fresh chunk is charged (__GFP_ACCOUNT) to the memory cgroup of the task
 * that causes the first use, and a charged task takes only chunks pooled
 * for its own cgroup, as for the system heap.  That task is the first
 * user, not necessarily the allocator: the process whose mmap fault,
 * begin_cpu_access or vmap comes first, or the importer mapping the
 * buffer for a device (another process, or a kernel thread, whose root
 * cgroup charges nothing); for a move, the task attaching late.  The
 * charge stays with that cgroup until the buffer is freed.  Contiguous
 * backings (the DMA API) are not charged.
 */

/* As the system heap's, largest first: 1 MiB, 64 KiB, 4 KiB. */
static const unsigned int ion_auto_orders[] = { 8, 4, 0 };

#define ION_AUTO_GFP_LOW	(GFP_USER | __GFP_ZERO | __GFP_NOWARN | \
				 __GFP_RETRY_MAYFAIL)
#define ION_AUTO_GFP_HIGH	(GFP_USER | __GFP_ZERO | __GFP_NOWARN | \
				 __GFP_NORETRY)

/* Set at init, before the heap is registered. */
static struct ion_chunk_pool *ion_auto_pools;

/* The chunks of one fill: from the page allocator and from the pools. */
struct ion_auto_fill {
	struct list_head fresh;
	struct list_head pooled;
	unsigned int nfresh;
	unsigned int npooled;
	bool cached;
};

static bool ion_auto_beyond(struct page *page, unsigned int order, u64 limit)
{
	return page_to_phys(page) + (PAGE_SIZE << order) - 1 > limit;
}

static void ion_auto_drop_fill(struct ion_auto_fill *f)
{
	struct page *page, *tmp;

	list_for_each_entry_safe(page, tmp, &f->fresh, lru) {
		list_del(&page->lru);
		__free_pages(page, page_private(page));
	}
	list_for_each_entry_safe(page, tmp, &f->pooled, lru) {
		list_del(&page->lru);
		ion_chunk_put(ion_auto_pools, page, page_private(page),
			      f->cached);
	}
}

/* A chunk of @order within @limit: pooled if @pool lets, else fresh. */
static struct page *ion_auto_chunk(struct ion_auto_fill *f, unsigned int order,
				   u64 limit, gfp_t zone, bool pool)
{
	const struct ion_chunk_want w = {
		.gfp = (order ? ION_AUTO_GFP_HIGH : ION_AUTO_GFP_LOW) | zone,
		.nid = NUMA_NO_NODE,
		.limit = limit,
		.cached = f->cached,
		.pool = pool,
	};
	enum ion_chunk_src src;
	struct page *page;

	/* Charged (ion_chunk_get_or_alloc() adds it): DOC above. */
	page = ion_chunk_get_or_alloc(ion_auto_pools, order, &w, &src);
	if (!page)
		return NULL;
	if (src == ION_CHUNK_POOLED) {
		list_add_tail(&page->lru, &f->pooled);
		f->npooled++;
	} else {
		list_add_tail(&page->lru, &f->fresh);
		f->nfresh++;
	}
	set_page_private(page, order);
	return page;
}

/* Chunks for @size bytes on @f; -ERANGE for a fresh one beyond @limit. */
static int ion_auto_fill(struct ion_auto_fill *f, size_t size, u64 limit,
			 gfp_t zone, bool pool)
{
	unsigned int first = 0, order = 0;
	struct page *page = NULL;

	while (size) {
		if (fatal_signal_pending(current))
			return -EINTR;
		for (; first < ARRAY_SIZE(ion_auto_orders); first++) {
			order = ion_auto_orders[first];
			if (size < PAGE_SIZE << order)
				continue;
			page = ion_auto_chunk(f, order, limit, zone, pool);
			if (page)
				break;
		}
		if (!page)
			return -ENOMEM;
		if (ion_auto_beyond(page, order, limit))
			return -ERANGE;
		size -= PAGE_SIZE << order;
		page = NULL;
	}
	return 0;
}

/* The chunks of @f into @sgt: the fresh ones first. */
static void ion_auto_fill_table(struct ion_auto_fill *f, struct sg_table *sgt)
{
	struct scatterlist *sg = sgt->sgl;
	struct page *page, *tmp;

	list_splice_tail_init(&f->pooled, &f->fresh);
	list_for_each_entry_safe(page, tmp, &f->fresh, lru) {
		list_del(&page->lru);
		sg_set_page(sg, page, PAGE_SIZE << page_private(page), 0);
		sg = sg_next(sg);
	}
}

/**
 * ion_auto_alloc_chunks() - a scattered backing, zeroed
 * @buffer: the buffer
 * @ab:	    its state, waiting
 * @limit:  highest physical address any chunk may reach (U64_MAX: any)
 * @pool:   whether chunks may come from the pools (DOC above)
 *
 * Context: Process context; sleeps; the buffer's lock held.
 * Return: 0 with @ab->sgt and @ab->fresh set; -ENOMEM, -ERANGE (a fresh
 * chunk beyond @limit) or -EINTR.
 */
int ion_auto_alloc_chunks(struct ion_buffer *buffer,
			  struct ion_auto_buffer *ab, u64 limit, bool pool)
{
	struct ion_auto_fill f = {
		.fresh = LIST_HEAD_INIT(f.fresh),
		.pooled = LIST_HEAD_INIT(f.pooled),
		.cached = buffer->flags & ION_FLAG_CACHED,
	};
	gfp_t zone = limit <= DMA_BIT_MASK(32) &&
		     IS_ENABLED(CONFIG_ZONE_DMA32) ? GFP_DMA32 : 0;
	int ret;

	ret = ion_auto_fill(&f, buffer->size, limit, zone, pool);
	if (ret)
		goto err_drop;
	ret = sg_alloc_table(&ab->sgt, f.nfresh + f.npooled, GFP_KERNEL);
	if (ret)
		goto err_drop;
	ion_auto_fill_table(&f, &ab->sgt);
	ab->fresh = f.nfresh;
	return 0;

err_drop:
	ion_auto_drop_fill(&f);
	return ret;
}

/**
 * ion_auto_put_chunks() - give back a scattered backing nobody used
 * @buffer: the buffer
 * @ab:	    its state, the pooled chunks of an uncached buffer still
 *	    write-combined, the fresh ones write-back
 *
 * Context: Process context; sleeps; the buffer's lock held.
 */
void ion_auto_put_chunks(struct ion_buffer *buffer, struct ion_auto_buffer *ab)
{
	bool cached = buffer->flags & ION_FLAG_CACHED;
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_sg(&ab->sgt, sg, i) {
		if (i < ab->fresh)
			__free_pages(sg_page(sg), get_order(sg->length));
		else
			ion_chunk_put(ion_auto_pools, sg_page(sg),
				      get_order(sg->length), cached);
	}
	sg_free_table(&ab->sgt);
}

/**
 * ion_auto_free_chunks() - give a freed scattered backing to the pools
 * @buffer: the buffer
 * @ab:	    its state; an uncached buffer's chunks all write-combined
 *
 * Each chunk goes to ion_chunk_free(), which zeroes and pools it on the
 * worker or gives it back to the buddy allocator.
 *
 * Context: Process context; sleeps; the buffer's lock held (or its last
 * reference gone).
 */
void ion_auto_free_chunks(struct ion_buffer *buffer, struct ion_auto_buffer *ab)
{
	bool cached = buffer->flags & ION_FLAG_CACHED;
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_sg(&ab->sgt, sg, i)
		ion_chunk_free(ion_auto_pools, sg_page(sg),
			       get_order(sg->length), cached);
	sg_free_table(&ab->sgt);
}

/**
 * ion_auto_chunks_show() - the pools' lines of the auto heap's debugfs file
 * @s: that file
 *
 * Context: Process context; does not sleep.
 */
void ion_auto_chunks_show(struct seq_file *s)
{
	ion_chunk_pool_debug_show(ion_auto_pools, s);
}

/**
 * ion_auto_pooled() - pages the auto heap's pools could give a buffer
 * @cached: the buffer's cache mode
 *
 * For ion_heap_leaves_reserve() (ion_chunk_pool_usable()).
 *
 * Context: Any context; the value may be stale.
 * Return: the pages of the pools' clean chunks of that mode.
 */
unsigned long ion_auto_pooled(bool cached)
{
	return ion_auto_pools ? ion_chunk_pool_usable(ion_auto_pools, cached) :
				0;
}

/**
 * ion_auto_chunks_init() - create the auto heap's pools
 *
 * Context: Process context (module init).
 * Return: 0 or the -errno of ion_chunk_pool_create().
 */
int ion_auto_chunks_init(void)
{
	ion_auto_pools = ion_chunk_pool_create("auto", ion_auto_orders,
					       ARRAY_SIZE(ion_auto_orders));
	if (IS_ERR(ion_auto_pools)) {
		int ret = PTR_ERR(ion_auto_pools);

		ion_auto_pools = NULL;
		return ret;
	}
	return 0;
}

/**
 * ion_auto_chunks_exit() - free the auto heap's pools
 *
 * No auto buffer is live any more: every chunk goes back to the buddy
 * allocator.
 *
 * Context: Process context (module exit).
 */
void ion_auto_chunks_exit(void)
{
	ion_chunk_pool_destroy(ion_auto_pools);
	ion_auto_pools = NULL;
}
