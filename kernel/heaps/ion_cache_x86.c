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
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <asm/pgtable_types.h>
#include <asm/set_memory.h>

#include "ion_cache.h"
#include "ion_fail.h"

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

/* Linear-map address of @sg's first byte. */
static unsigned long ion_sg_addr(struct scatterlist *sg)
{
	return (unsigned long)page_address(sg_page(sg)) + sg->offset;
}

/*
 * Does @sg cover whole, aligned 2 MiB pages of the linear map only?  Then
 * one set_memory_wc() over it keeps them large (see DOC: uncached blocks
 * (x86)); a 1 GiB page above is split into 2 MiB ones, never 4 KiB.
 */
static bool ion_sg_whole_blocks(struct scatterlist *sg)
{
	return !PageHighMem(sg_page(sg)) &&
	       IS_ALIGNED(ion_sg_addr(sg) | sg->length, PMD_SIZE);
}

/*
 * The pages of the entries of @sgt that are not whole blocks in one
 * array, as set_pages_array_wc() wants; NULL with *@count 0 when there
 * are none.
 */
static struct page **ion_cache_pages(struct sg_table *sgt, int *count)
{
	struct page **pages;
	struct scatterlist *sg;
	unsigned long n = 0, j;
	unsigned int i;

	*count = 0;
	for_each_sgtable_sg(sgt, sg, i)
		if (!ion_sg_whole_blocks(sg))
			n += sg->length >> PAGE_SHIFT;
	if (!n)
		return NULL;
	if (WARN_ON_ONCE(n > INT_MAX))
		return ERR_PTR(-EINVAL);
	pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return ERR_PTR(-ENOMEM);
	n = 0;
	for_each_sgtable_sg(sgt, sg, i) {
		if (ion_sg_whole_blocks(sg))
			continue;
		for (j = 0; j < sg->length >> PAGE_SHIFT; j++)
			pages[n++] = sg_page(sg) + j;
	}
	*count = n;
	return pages;
}

/* Back to write-back: the whole-block entries of @sgt before @end. */
static void ion_cache_blocks_undo(struct sg_table *sgt, struct scatterlist *end)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_sg(sgt, sg, i) {
		if (sg == end)
			return;
		if (ion_sg_whole_blocks(sg))
			WARN_ON_ONCE(set_memory_wb(ion_sg_addr(sg),
						   sg->length >> PAGE_SHIFT));
	}
}

/*
 * set_pages_array_wc() failed: it gives back the memory types it reserved,
 * but when it fails part way through changing the attributes (a page
 * table for a split could not be had) the pages it changed stay
 * write-combined in the linear map (6.12 arch/x86/mm/pat/set_memory.c,
 * _set_pages_array()).  Put every page-by-page entry back to write-back,
 * so that the caller, told the attributes are unchanged, may free them.
 * set_memory_wb() also frees a memory type that is no longer there: PAT
 * logs "freeing invalid memtype" for it, an info line.
 */
static void ion_cache_pages_undo(struct sg_table *sgt)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_sg(sgt, sg, i) {
		if (ion_sg_whole_blocks(sg) || PageHighMem(sg_page(sg)))
			continue;
		WARN_ON_ONCE(set_memory_wb((unsigned long)page_address(sg_page(sg)),
					   sg->length >> PAGE_SHIFT));
	}
}

/* Convert each whole-block entry of @sgt in one call: no split. */
static int ion_cache_blocks_wc(struct sg_table *sgt)
{
	struct scatterlist *sg;
	unsigned int i;
	bool large;
	int ret;

	for_each_sgtable_sg(sgt, sg, i) {
		if (!ion_sg_whole_blocks(sg))
			continue;
		large = ion_cache_linear_large(ion_sg_addr(sg));
		ret = set_memory_wc(ion_sg_addr(sg), sg->length >> PAGE_SHIFT);
		if (ret) {
			/*
			 * This entry too: a failed split part way through
			 * leaves the part before it write-combined (as
			 * ion_cache_pages_undo() says of the page array).
			 */
			WARN_ON_ONCE(set_memory_wb(ion_sg_addr(sg),
						   sg->length >> PAGE_SHIFT));
			ion_cache_blocks_undo(sgt, sg);
			return ret;
		}
		ion_cache_count_split(ion_sg_addr(sg), large);
	}
	return 0;
}

/**
 * ion_cache_set_uncached() - make a buffer's linear map write-combined
 * @sgt: the buffer's pages, whole pages only
 *
 * An entry that covers whole, aligned 2 MiB pages of the linear map (a
 * contiguous buffer rounded to whole blocks, ion_cache_uncached_span())
 * is converted in one set_memory_wc() call, which keeps those pages
 * large.  The other entries are converted together page by page
 * (set_pages_array_wc(): one TLB flush for all of them, but it splits the
 * large pages that hold them), which ion_cache_count_split() counts (for
 * their first page).  The system heap avoids that with its blocks
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
	if (IS_ERR(pages))
		return PTR_ERR(pages);
	ret = ion_cache_blocks_wc(sgt);
	if (ret || !count)
		goto out;
	large = ion_cache_linear_large((unsigned long)page_address(pages[0]));
	ret = ion_fail(ION_FAIL_UNCACHED);
	if (ret && count > 1)	/* as a split failing part way leaves it */
		ret = set_pages_array_wc(pages, count / 2) ?: ret;
	else if (!ret)
		ret = set_pages_array_wc(pages, count);
	if (ret) {
		ion_cache_pages_undo(sgt);
		ion_cache_blocks_undo(sgt, NULL);
	} else {
		ion_cache_count_split((unsigned long)page_address(pages[0]),
				      large);
	}
out:
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
