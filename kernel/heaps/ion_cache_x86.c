// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: x86 linear-map attributes of uncached buffers.
 *
 * PAT keeps one memory type per page of RAM (in the page flags, not in the
 * memtype tree that /sys/kernel/debug/x86/pat_memtype_list shows).  A user
 * or vmap mapping asking for write-combining on RAM whose type is still
 * write-back is silently given write-back (with a "map pfn RAM range req
 * write-combining" warning for remap_pfn_range).  So an uncached buffer's
 * pages are switched to WC in the linear map before anyone maps them, and
 * back to WB before they return to their allocator.  The switch flushes the
 * pages from the CPU caches, so no dirty line of the (zeroed) memory
 * survives it.
 *
 * Built only on x86 (Kbuild); other architectures use the stubs in
 * ion_cache.h.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <asm/pgtable_types.h>
#include <asm/set_memory.h>

#include "ion_cache.h"

/* Conversions that split a large page of the linear map, for debugfs. */
static atomic_long_t ion_cache_splits = ATOMIC_LONG_INIT(0);

/* Is the linear map at @addr a large page (2 MiB or 1 GiB) now? */
static bool ion_linear_large(unsigned long addr)
{
	unsigned int level;

	return lookup_address(addr, &level) && level > PG_LEVEL_4K;
}

/**
 * ion_cache_count_split() - count a conversion that split a large page
 * @addr:	 linear-map address of the range converted
 * @was_large: ion_linear_large() of @addr before the conversion
 *
 * Context: any.
 * Return: true when it was counted (a split).
 */
bool ion_cache_count_split(unsigned long addr, bool was_large)
{
	if (!was_large || ion_linear_large(addr))
		return false;
	atomic_long_inc(&ion_cache_splits);
	return true;
}

/**
 * ion_cache_linear_large() - is @addr's linear map a large page now?
 * @addr: a linear-map address
 *
 * Context: any.
 * Return: true for a 2 MiB or 1 GiB mapping.
 */
bool ion_cache_linear_large(unsigned long addr)
{
	return ion_linear_large(addr);
}

/**
 * ion_cache_split_count() - splits ion_cache_count_split() counted
 *
 * Context: Any context.
 * Return: the conversions, ever, that found a large page under their
 * first page and left a 4 KiB one (blocks and single chunks alike).
 */
long ion_cache_split_count(void)
{
	return atomic_long_read(&ion_cache_splits);
}

/* Every page of @sgt in one array, as the set_pages_array_*() calls want. */
static struct page **ion_cache_pages(struct sg_table *sgt, int *count)
{
	struct sg_page_iter iter;
	struct page **pages;
	unsigned long n = 0;
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_sg(sgt, sg, i)
		n += sg->length >> PAGE_SHIFT;
	if (WARN_ON_ONCE(!n || n > INT_MAX))
		return NULL;
	pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return NULL;
	n = 0;
	for_each_sgtable_page(sgt, &iter, 0)
		pages[n++] = sg_page_iter_page(&iter);
	*count = n;
	return pages;
}

/**
 * ion_cache_set_uncached() - make a buffer's linear map write-combined
 * @sgt: the buffer's pages, whole pages only
 *
 * Page by page (set_pages_array_wc()): this splits the large pages of the
 * linear map that hold them, which ion_cache_count_split() counts (for
 * the first page).  The system heap avoids it with its blocks
 * (ion_cache_x86_block.c) and comes here only when it has none.
 *
 * Context: Process context, may sleep.
 * Return: 0, or -ENOMEM / -EINVAL with the attributes unchanged.
 */
int ion_cache_set_uncached(struct sg_table *sgt)
{
	struct page **pages;
	int count, ret;
	bool large;

	pages = ion_cache_pages(sgt, &count);
	if (!pages)
		return -ENOMEM;
	large = ion_cache_linear_large((unsigned long)page_address(pages[0]));
	ret = set_pages_array_wc(pages, count);
	if (!ret)
		ion_cache_count_split((unsigned long)page_address(pages[0]),
				      large);
	kvfree(pages);
	return ret;
}

/**
 * ion_cache_set_cached() - restore a buffer's linear map to write-back
 * @sgt: the pages ion_cache_set_uncached() was called on
 *
 * Works entry by entry and allocates nothing, so it does not fail for lack
 * of memory on the free path.
 *
 * Context: Process context, may sleep.
 * Return: 0, or -errno when some pages are still write-combined; the caller
 * must then not give them back to their allocator.
 */
int ion_cache_set_cached(struct sg_table *sgt)
{
	struct scatterlist *sg;
	unsigned int i;
	int ret = 0;

	for_each_sgtable_sg(sgt, sg, i) {
		struct page *page = sg_page(sg);

		if (PageHighMem(page))
			continue;
		ret = set_memory_wb((unsigned long)page_address(page),
				    sg->length >> PAGE_SHIFT) ?: ret;
	}
	return ret;
}
