// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: what every heap does with uncached pages it gives back,
 * whatever the architecture (the per-architecture part is in
 * ion_cache_<arch>.c), and the release of one chunk the pools use.
 */
#include <linux/gfp.h>
#include <linux/printk.h>
#include <linux/scatterlist.h>

#include "ion_cache.h"

/**
 * ion_cache_restore_or_leak() - give uncached pages back to write-back, or
 *				 leak them
 * @sgt:  the pages ion_cache_set_uncached() was called on
 * @name: the heap's name, for the warning
 *
 * Pages whose linear map is still write-combined must not go back to their
 * allocator (its next user would get them write-combined): when
 * ion_cache_set_cached() fails they are leaked, with a rate-limited
 * warning giving their size.
 *
 * Context: Process context, may sleep.
 * Return: true when the pages are write-back again and may be freed, false
 * when they were leaked and must not be.
 */
bool ion_cache_restore_or_leak(struct sg_table *sgt, const char *name)
{
	unsigned long bytes = 0;
	struct scatterlist *sg;
	unsigned int i;

	if (!ion_cache_set_cached(sgt))
		return true;
	for_each_sgtable_sg(sgt, sg, i)
		bytes += sg->length;
	pr_warn_ratelimited("ion: %s: cannot restore %lu bytes to write-back, leaking them\n",
			    name, bytes);
	return false;
}

/**
 * ion_cache_one_table() - @npages from @page as a one-entry table
 * @one:    the table to fill
 * @sg:     its one entry
 * @page:   the first page
 * @npages: the number of pages
 *
 * For the ion_cache calls on a range that has no table of its own.
 *
 * Context: Any context.
 */
void ion_cache_one_table(struct sg_table *one, struct scatterlist *sg,
			 struct page *page, unsigned long npages)
{
	sg_init_table(sg, 1);
	sg_set_page(sg, page, npages << PAGE_SHIFT, 0);
	one->sgl = sg;
	one->nents = 1;
	one->orig_nents = 1;
}

/**
 * ion_page_chunk_release() - give a chunk back to the buddy allocator
 * @page:   the chunk's first page
 * @order:  its order
 * @cached: false when its linear map is write-combined: given back to its
 *	    block (ion_cache_uncached_chunk_put()), or restored to
 *	    write-back first
 *
 * For the shrinker, which keeps a chunk it could not restore for later.
 *
 * Context: Process context; sleeps for an uncached chunk.
 * Return: true when freed, false when the chunk is still write-combined
 * and still the caller's.
 */
bool ion_page_chunk_release(struct page *page, unsigned int order,
			    bool cached)
{
	struct scatterlist sg;
	struct sg_table one;

	if (!cached) {
		if (ion_cache_uncached_chunk_put(page, order))
			return true;
		ion_cache_one_table(&one, &sg, page, 1UL << order);
		if (ion_cache_set_cached(&one))
			return false;
	}
	ion_cache_free_pages(page, order);
	return true;
}

/**
 * ion_page_chunk_release_or_leak() - give a chunk back, or leak it
 * @page:   the chunk's first page
 * @order:  its order
 * @cached: false when its linear map is write-combined
 * @name:   the heap's name, for the warning
 *
 * As ion_page_chunk_release(), but a chunk that stays write-combined is
 * leaked with a warning (ion_cache_restore_or_leak()).
 *
 * Context: Process context; sleeps for an uncached chunk.
 */
void ion_page_chunk_release_or_leak(struct page *page, unsigned int order,
				    bool cached, const char *name)
{
	struct scatterlist sg;
	struct sg_table one;

	if (!cached) {
		if (ion_cache_uncached_chunk_put(page, order))
			return;
		ion_cache_one_table(&one, &sg, page, 1UL << order);
		if (!ion_cache_restore_or_leak(&one, name))
			return;
	}
	ion_cache_free_pages(page, order);
}
