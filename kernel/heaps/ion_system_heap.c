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
 * -ENOMEM instead of invoking the OOM killer (which could only kill
 * bystanders: ion memory belongs to no process's RSS).  A request bigger
 * than half of RAM does not even reclaim hard, so it fails fast.
 *
 * Each sg entry is exactly one chunk, so the order of a chunk is known
 * again from its length on free.  All chunks are obtained and returned
 * through ion_system_get_chunk() / ion_system_put_chunk(); the page pools
 * (ion_page_pool.c) will sit behind those two.
 *
 * There is no phys op: the memory is not contiguous.
 */
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "ion_heap.h"
#include "ion_cache.h"
#include "ion_heaps.h"

/* Chunk orders tried, largest first. */
static const unsigned int ion_system_orders[] = { 8, 4, 0 };

#define ION_SYSTEM_GFP_LOW	(GFP_HIGHUSER | __GFP_ZERO | __GFP_NOWARN | \
				 __GFP_RETRY_MAYFAIL)
#define ION_SYSTEM_GFP_HIGH	(GFP_HIGHUSER | __GFP_ZERO | __GFP_NOWARN | \
				 __GFP_NORETRY)

static struct page *ion_system_get_chunk(unsigned int order, bool big)
{
	gfp_t gfp = order || big ? ION_SYSTEM_GFP_HIGH : ION_SYSTEM_GFP_LOW;

	return alloc_pages(gfp, order);
}

static void ion_system_put_chunk(struct page *page, unsigned int order)
{
	__free_pages(page, order);
}

/*
 * The largest chunk of at most @remaining bytes, trying orders from index
 * *@first on; *@first moves past orders that failed.
 */
static struct page *ion_system_next_chunk(unsigned long remaining,
					  unsigned int *first, bool big)
{
	struct page *page;
	unsigned int i;

	for (i = *first; i < ARRAY_SIZE(ion_system_orders); i++) {
		unsigned int order = ion_system_orders[i];

		if (remaining < (PAGE_SIZE << order))
			continue;
		page = ion_system_get_chunk(order, big);
		if (page) {
			set_page_private(page, order);
			return page;
		}
		*first = i + 1;
	}
	return NULL;
}

static void ion_system_put_list(struct list_head *chunks)
{
	struct page *page, *tmp;
	unsigned int order;

	list_for_each_entry_safe(page, tmp, chunks, lru) {
		list_del(&page->lru);
		order = page_private(page);
		set_page_private(page, 0);
		ion_system_put_chunk(page, order);
	}
}

static void ion_system_put_table(struct sg_table *sgt)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_sg(sgt, sg, i)
		ion_system_put_chunk(sg_page(sg), get_order(sg->length));
	sg_free_table(sgt);
	kfree(sgt);
}

/* Move the chunks of @chunks into a new sg table, one entry each. */
static struct sg_table *ion_system_build_table(struct list_head *chunks,
					       unsigned int nchunks)
{
	struct scatterlist *sg;
	struct sg_table *sgt;
	struct page *page, *tmp;

	sgt = kmalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return NULL;
	if (sg_alloc_table(sgt, nchunks, GFP_KERNEL)) {
		kfree(sgt);
		return NULL;
	}
	sg = sgt->sgl;
	list_for_each_entry_safe(page, tmp, chunks, lru) {
		list_del(&page->lru);
		sg_set_page(sg, page, PAGE_SIZE << page_private(page), 0);
		set_page_private(page, 0);
		sg = sg_next(sg);
	}
	return sgt;
}

static int ion_system_allocate(struct ion_heap *heap,
			       struct ion_buffer *buffer, unsigned long len,
			       unsigned long align, unsigned long flags)
{
	unsigned long remaining = len;
	unsigned int first = 0, nchunks = 0;
	struct sg_table *sgt;
	LIST_HEAD(chunks);
	struct page *page;
	bool big;
	int ret;

	if ((len >> PAGE_SHIFT) > totalram_pages())
		return -ENOMEM;
	big = (len >> PAGE_SHIFT) > totalram_pages() / 2;

	while (remaining) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_put_chunks;
		}
		page = ion_system_next_chunk(remaining, &first, big);
		if (!page) {
			ret = -ENOMEM;
			goto err_put_chunks;
		}
		list_add_tail(&page->lru, &chunks);
		remaining -= PAGE_SIZE << page_private(page);
		nchunks++;
	}

	sgt = ion_system_build_table(&chunks, nchunks);
	if (!sgt) {
		ret = -ENOMEM;
		goto err_put_chunks;
	}
	if (!(flags & ION_FLAG_CACHED)) {
		ret = ion_cache_set_uncached(sgt);
		if (ret)
			goto err_put_table;
	}
	buffer->sg_table = sgt;
	return 0;

err_put_table:
	ion_system_put_table(sgt);
	return ret;
err_put_chunks:
	ion_system_put_list(&chunks);
	return ret;
}

static void ion_system_free(struct ion_buffer *buffer)
{
	struct sg_table *sgt = buffer->sg_table;

	if (!(buffer->flags & ION_FLAG_CACHED) && ion_cache_set_cached(sgt)) {
		/* Pages left write-combined must not be reused: leak them. */
		pr_warn_ratelimited("ion: %s: cannot restore %zu bytes to write-back, leaking them\n",
				    buffer->heap->name, buffer->size);
		sg_free_table(sgt);
		kfree(sgt);
		return;
	}
	ion_system_put_table(sgt);
}

static const struct ion_heap_ops ion_system_heap_ops = {
	.allocate = ion_system_allocate,
	.free = ion_system_free,
};

static struct ion_heap ion_system_heap = {
	.name = ION_SYSTEM_HEAP_NAME,
	.type = ION_HEAP_TYPE_SYSTEM,
	.id = ION_HEAP_TYPE_SYSTEM,
	.ops = &ion_system_heap_ops,
};

/**
 * ion_system_heap_init() - register the system heap
 *
 * Context: Process context (module init).
 * Return: 0 or the -errno of ion_device_add_heap().
 */
int ion_system_heap_init(void)
{
	return ion_device_add_heap(&ion_system_heap);
}

/**
 * ion_system_heap_exit() - unregister the system heap
 *
 * Context: Process context (module exit).
 */
void ion_system_heap_exit(void)
{
	ion_device_remove_heap(&ion_system_heap);
}
