// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the system-contig heap, physically contiguous pages from the buddy
 * allocator.
 *
 * A buffer is one block of the order that covers its length (at most
 * MAX_PAGE_ORDER, 4 MiB on x86 with 4 KiB pages).  A block longer than the
 * buffer is split and the pages beyond the length go straight back; one of
 * exactly the length (a power of two pages, aligned no more than its size:
 * the common case) stays whole and goes back in one __free_pages(), not
 * page by page.  A block of order n is
 * aligned to its own size, so an alignment is honoured by asking for a
 * block at least that large; an alignment no block can give is -EINVAL, a
 * length no block can hold is -ENOMEM (so a heap mask falls back to the
 * next heap).  Contiguous, so phys works and the sg table has one entry.
 *
 * An uncached buffer of at most 2 MiB is, on x86, a chunk of the system
 * heap's write-combined 2 MiB blocks (ion_cache_uncached_chunk(), "uncached
 * blocks (x86)"), so converting it splits no large page of the direct map:
 * the whole block of its order, not trimmed (the tail stays unused in the
 * block while the buffer lives); a caller that must be charged to its
 * memory cgroup gets it from a block charged whole to that cgroup.
 *
 * A larger uncached buffer (an order-10 block, 4 MiB aligned; or one over
 * 1 MiB when no block chunk could be had) keeps whole 2 MiB blocks of its
 * pages (ion_cache_uncached_span(): on x86 the length rounded up to
 * 2 MiB, elsewhere the length): converting a range that starts at a 2 MiB
 * boundary and covers whole 2 MiB pages of the linear map keeps them
 * large (ion_cache_set_uncached()), where converting the bare length
 * would split the last one.  The pages beyond the length stay unused with
 * the buffer (up to 2 MiB less 4 KiB) and go back with it; they are not
 * lent out as chunks (not done: it would make the buffer's last 2 MiB a
 * block shared with other buffers).  Other architectures convert (clean)
 * just the buffer's pages.
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "ion_heap.h"
#include "ion_cache.h"
#include "ion_heaps.h"
#include "ion_memcg.h"

#define ION_CONTIG_GFP	(GFP_HIGHUSER | __GFP_ZERO | __GFP_NOWARN | \
			 __GFP_RETRY_MAYFAIL)

/* The order of the block for @len bytes aligned to @align. */
static unsigned int ion_contig_order(unsigned long len, unsigned long align)
{
	unsigned int order = get_order(len);

	if (align > PAGE_SIZE)
		order = max_t(unsigned int, order, get_order(align));
	return order;
}

/* Give back the first @npages of a block of @order (split unless whole). */
static void ion_contig_put_pages(struct page *page, unsigned long npages,
				 unsigned int order)
{
	unsigned long i;

	if (npages == 1UL << order) {
		__free_pages(page, order);
		return;
	}
	for (i = 0; i < npages; i++)
		__free_page(page + i);
}

/* One zeroed, naturally aligned block of @order trimmed to @npages. */
static struct page *ion_contig_get_pages(unsigned int order,
					 unsigned long npages)
{
	struct page *page;

	page = alloc_pages(ION_CONTIG_GFP | ion_memcg_gfp(), order);
	if (!page || npages == 1UL << order)
		return page;
	split_page(page, order);
	ion_contig_put_pages(page + npages, (1UL << order) - npages, order);
	return page;
}

/* The pages an uncached buffer of @npages keeps: DOC above. */
static unsigned long ion_contig_kept(unsigned long npages, bool cached)
{
	return cached ? npages : ion_cache_uncached_span(npages);
}

/* Convert the @kept pages from @page to write-combining. */
static int ion_contig_set_uncached(struct page *page, unsigned long kept)
{
	struct scatterlist sg;
	struct sg_table one;

	ion_cache_one_table(&one, &sg, page, kept);
	return ion_cache_set_uncached(&one);
}

static int ion_contig_allocate(struct ion_heap *heap, struct ion_buffer *buffer)
{
	unsigned long len = buffer->size, npages = len >> PAGE_SHIFT, kept;
	unsigned int order = ion_contig_order(len, buffer->align);
	bool cached = buffer->flags & ION_FLAG_CACHED;
	struct page *page;
	int ret;

	if (get_order(len) > MAX_PAGE_ORDER)
		return -ENOMEM;
	if (order > MAX_PAGE_ORDER)
		return -EINVAL;
	if (!ion_heap_leaves_reserve(npages, NULL, false))
		return -ENOMEM;
	if (fatal_signal_pending(current))
		return -EINTR;

	if (!cached && order <= ION_CACHE_BLOCK_ORDER) {
		page = ion_cache_uncached_chunk(order, NUMA_NO_NODE,
						ion_memcg_caller_charged(),
						U64_MAX);
		if (page) {
			ion_buffer_one_chunk(buffer, page, len);
			return 0;
		}
	}
	kept = ion_contig_kept(npages, cached);
	page = ion_contig_get_pages(order, kept);
	if (!page)
		return ion_memcg_note_refusal(heap->name, len, -ENOMEM);
	if (!cached) {
		ret = ion_contig_set_uncached(page, kept);
		if (ret)
			goto err_put_pages;
	}
	ion_buffer_one_chunk(buffer, page, len);
	return 0;

err_put_pages:
	ion_contig_put_pages(page, kept, order);
	return ret;
}

static void ion_contig_free(struct ion_buffer *buffer)
{
	struct scatterlist *sg = buffer->sg_table->sgl, one_sg;
	unsigned int order = ion_contig_order(sg->length, buffer->align);
	bool cached = buffer->flags & ION_FLAG_CACHED;
	unsigned long kept;
	struct sg_table one;

	if (!cached && order <= ION_CACHE_BLOCK_ORDER &&
	    ion_cache_uncached_chunk_put(sg_page(sg), order))
		return;
	kept = ion_contig_kept(sg->length >> PAGE_SHIFT, cached);
	ion_cache_one_table(&one, &one_sg, sg_page(sg), kept);
	if (cached || ion_cache_restore_or_leak(&one, buffer->heap->name))
		ion_contig_put_pages(sg_page(sg), kept, order);
}

static int ion_contig_phys(struct ion_heap *heap, struct ion_buffer *buffer,
			   phys_addr_t *addr, size_t *len)
{
	struct scatterlist *sg = buffer->sg_table->sgl;

	*addr = page_to_phys(sg_page(sg));
	*len = sg->length;
	return 0;
}

static const struct ion_heap_ops ion_contig_heap_ops = {
	.allocate = ion_contig_allocate,
	.free = ion_contig_free,
	.phys = ion_contig_phys,
};

static struct ion_heap ion_contig_heap = {
	.name = ION_SYSTEM_CONTIG_HEAP_NAME,
	.type = ION_HEAP_TYPE_SYSTEM_CONTIG,
	.id = ION_HEAP_TYPE_SYSTEM_CONTIG,
	.ops = &ion_contig_heap_ops,
};

/**
 * ion_system_contig_heap_init() - register the system-contig heap
 *
 * Context: Process context (module init).
 * Return: 0 or the -errno of ion_device_add_heap().
 */
int ion_system_contig_heap_init(void)
{
	return ion_device_add_heap(&ion_contig_heap);
}

/**
 * ion_system_contig_heap_exit() - unregister the system-contig heap
 *
 * Context: Process context (module exit).
 */
void ion_system_contig_heap_exit(void)
{
	ion_device_remove_heap(&ion_contig_heap);
}
