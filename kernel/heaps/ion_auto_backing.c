// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the auto heap's backing - the constraints of the attached devices
 * collated at first use, and memory that meets them.
 */
#include <linux/cc_platform.h>
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/string.h>
#include <linux/highmem.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "ion_heap.h"
#include "ion_auto.h"
#include "ion_fail.h"
#include "ion_cache.h"
#include "ion_heaps.h"

/**
 * DOC: auto heap backing
 *
 * At the first use that needs memory the constraints recorded at each
 * attach are collated, and the backing chosen:
 *
 * - No device attached (a CPU-first buffer): scattered chunks, as the
 *   system heap's (orders 8, 4, 0, zeroed), from the auto heap's pools
 *   first (ion_auto_chunks.c).
 * - Only devices behind an IOMMU (device_iommu_mapped(), not in a
 *   passthrough domain, which uses DMA-direct): the same
 *   scattered chunks.  Their DMA mask bounds IOVAs, not physical
 *   addresses, and the IOMMU maps a scattered table as one range.  A
 *   device with no DMA mask (an importer for CPU access only: the DMA
 *   API maps nothing for it) counts the same: it constrains nothing.
 * - At least one device without an IOMMU (a direct device): one
 *   physically contiguous range, from dma_alloc_pages() below the limit
 *   of the most constrained direct device (the smallest of DMA mask and
 *   bus_dma_limit), through the auto heap's own device of that mask
 *   (ion_auto_dma.c), so that the DMA zone or CMA serves it as the
 *   platform intends, zeroed.
 *   The rule: a direct device is assumed to need a single DMA-contiguous
 *   segment, as vb2-dma-contig and most display controllers do, because
 *   nothing in struct device or the dma-buf attach says it does not
 *   (max_segment_size only bounds each segment).  When no contiguous
 *   range is to be had (larger than the page allocator's largest block and
 *   no CMA), scattered chunks below that limit are the fallback: fine for
 *   importers taking a scatter list (edu, most PCI devices), refused by a
 *   single-segment importer at its map.  A direct device attaching later
 *   takes that fallback as the first ones did, if it reaches every chunk.
 *
 * Every direct device must reach all of the memory: each chunk's last
 * byte is checked against each one's limit (physical addresses; platforms
 * with DMA offsets, dma_range_map, are not modelled).  Coherency is
 * recorded and shown but chooses nothing: ion's syncs do the maintenance
 * a non-coherent device needs on any backing.
 *
 * A device attaching once the buffer is backed, which that backing does
 * not fit, moves it when nothing has it mapped (the core checks that,
 * include/linux/ion_heap.h, @move): the backing is chosen again as above,
 * from every attached device with the new one, the contents are copied
 * through a kernel mapping of the old backing (write-combined for an
 * uncached buffer, so that no stale cache line is read) into the new
 * one before it is made write-combined, and the old backing is freed.
 * When no new backing is to be had the old one stays and the attach
 * fails with the error of the choice.  A move from a backing of one entry
 * (a contiguous range, or a single chunk of any other kind) while another
 * direct device is attached takes one range or nothing
 * (-ENOMEM): the fallback of scattered chunks would break that device at
 * its next map, if it needs one segment (as vb2-dma-contig does), where
 * it mapped fine before the newcomer attached.
 *
 * Errors of the first use: -ENOMEM when no memory of the chosen kind is
 * left (contiguous and scattered both failed below the limit) or when
 * the backing would leave less than the reserve every heap keeps for the
 * system (ion_heap_leaves_reserve(): 1/16 of RAM), -ERANGE
 * when memory was found but lies beyond a direct device's limit, -EINTR
 * on a fatal signal.  The buffer then stays waiting, and
 * &ion_auto_buffer.why says which constraint failed (debugfs).
 */

/**
 * ion_auto_kind_name() - a backing kind as debugfs shows it
 * @kind: the kind
 *
 * Context: Any context.
 * Return: a constant string.
 */
const char *ion_auto_kind_name(enum ion_auto_kind kind)
{
	static const char *const names[] = {
		[ION_AUTO_WAITING] = "waiting",
		[ION_AUTO_SYSTEM] = "system",
		[ION_AUTO_SCATTERED] = "scattered",
		[ION_AUTO_CONTIG] = "contiguous",
	};

	return kind < ARRAY_SIZE(names) ? names[kind] : "?";
}

/* The smallest limit of the direct devices; is there a direct device? */
static bool ion_auto_collate(struct ion_auto_buffer *ab)
{
	bool direct = false;
	struct ion_auto_dev *d;

	ab->limit = U64_MAX;
	list_for_each_entry(d, &ab->devs, node) {
		if (d->any_backing)
			continue;
		direct = true;
		ab->limit = min(ab->limit, d->limit);
	}
	return direct;
}

/* Does every chunk of the backing end at or below @limit? */
static bool ion_auto_below(const struct ion_auto_buffer *ab, u64 limit)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_sg(&ab->sgt, sg, i)
		if (sg_phys(sg) + sg->length - 1 > limit)
			return false;
	return true;
}

/**
 * ion_auto_fits() - can a device use the backing an auto buffer has?
 * @ab:	 the buffer, backed
 * @d:	 the device's constraints
 * @why: where to store the constraint that failed
 *
 * A device behind an IOMMU, or without a DMA mask, takes any backing; a
 * direct one needs every chunk within its limit and, by the rule of the
 * DOC above, one range, unless the backing is already the fallback of
 * scattered chunks for a direct device.
 *
 * Context: Any context; the buffer's lock held.
 * Return: true when @d can map the backing as it is.
 */
bool ion_auto_fits(const struct ion_auto_buffer *ab,
		   const struct ion_auto_dev *d, const char **why)
{
	if (d->any_backing)
		return true;
	if (!ion_auto_below(ab, d->limit)) {
		*why = "late attach: backing beyond the device's DMA mask";
		return false;
	}
	/* The fallback served the direct devices at first use: it may here. */
	if (ab->sgt.orig_nents > 1 && !ab->fallback) {
		*why = "late attach: backing scattered, device direct";
		return false;
	}
	return true;
}

/* One range below @ab->limit, from the auto heap's own device, zeroed. */
static int ion_auto_alloc_contig(struct ion_buffer *buffer,
				 struct ion_auto_buffer *ab)
{
	struct device *dev = ion_auto_dma_dev(ab->limit);
	struct page *page;
	int ret;

	/*
	 * A confidential guest's dma-direct gives pages shared with the host
	 * (decrypted), which ion maps encrypted: chunks, bounced, instead.
	 */
	if (IS_ERR_OR_NULL(dev) || cc_platform_has(CC_ATTR_MEM_ENCRYPT) ||
	    ion_fail(ION_FAIL_CONTIG))	/* debugfs fail/contig */
		return -ENOMEM;
	/* One sg entry, whose length is an unsigned int: chunks beyond. */
	if (buffer->size > ION_CHUNK_MAX)
		return -ENOMEM;
	/* No OOM killer, even for the small orders the allocator retries. */
	page = dma_alloc_pages(dev, buffer->size, &ab->dma, DMA_BIDIRECTIONAL,
			       GFP_KERNEL | __GFP_NOWARN | __GFP_RETRY_MAYFAIL);
	if (!page)
		return -ENOMEM;
	ret = sg_alloc_table(&ab->sgt, 1, GFP_KERNEL);
	if (ret) {
		dma_free_pages(dev, buffer->size, page, ab->dma,
			       DMA_BIDIRECTIONAL);
		return ret;
	}
	/* The DMA API does not promise zeroes on every path: ion does. */
	memset(page_address(page), 0, buffer->size);
	sg_set_page(ab->sgt.sgl, page, buffer->size, 0);
	ab->page = page;
	ab->dma_dev = dev;
	ab->fresh = 1;
	return 0;
}

/*
 * A direct device attached: one range, else chunks within reach, unless
 * @contig_only (a move from one entry that a direct device still uses).
 */
static int ion_auto_back_direct(struct ion_buffer *buffer,
				struct ion_auto_buffer *ab, bool pool,
				bool contig_only)
{
	int ret;

	ret = ion_auto_alloc_contig(buffer, ab);
	if (!ret && ion_auto_below(ab, ab->limit)) {
		ab->kind = ION_AUTO_CONTIG;
		ab->why = "direct device: one range below its DMA mask (DMA API)";
		return 0;
	}
	if (!ret) {
		ion_auto_unback(buffer, ab);
		ab->why = "DMA API gave memory beyond a direct device's DMA mask";
		return -ERANGE;
	}
	if (contig_only) {
		ab->why = "move: no contiguous range below the new mask, one a direct device uses";
		return ret;
	}
	ret = ion_auto_alloc_chunks(buffer, ab, ab->limit, pool);
	if (ret) {
		ab->why = ret == -ERANGE ?
			  "no memory below the smallest DMA mask" :
			  "no contiguous or scattered memory below the DMA mask";
		return ret;
	}
	ab->kind = ION_AUTO_SCATTERED;
	ab->fallback = true;
	ab->why = "direct device, no contiguous range: chunks below its mask";
	return 0;
}

/* Copy @from (a kernel mapping of the buffer's size) into @sgt's pages. */
static void ion_auto_copy(struct ion_buffer *buffer, struct sg_table *sgt,
			  const void *from)
{
	struct sg_page_iter piter;
	size_t off = 0;
	void *to;

	for_each_sgtable_page(sgt, &piter, 0) {
		if (off >= buffer->size)
			break;
		to = kmap_local_page(sg_page_iter_page(&piter));
		memcpy(to, from + off, PAGE_SIZE);
		kunmap_local(to);
		off += PAGE_SIZE;
	}
}

/*
 * Make the fresh entries of a new backing write-combined (the first
 * @ab->fresh: pooled chunks are already); on failure give it all back.
 */
static int ion_auto_set_uncached(struct ion_buffer *buffer,
				 struct ion_auto_buffer *ab)
{
	struct sg_table fresh = ab->sgt;
	int ret;

	fresh.nents = ab->fresh;
	fresh.orig_nents = ab->fresh;
	ret = ion_cache_set_uncached(&fresh);
	if (!ret)
		return 0;
	/* The attributes are unchanged: nothing to restore. */
	if (ab->dma_dev) {
		ab->kind = ION_AUTO_WAITING;
		ion_auto_unback(buffer, ab);
	} else {
		ion_auto_put_chunks(buffer, ab);
	}
	return ret;
}

/*
 * ion_auto_back() for a first use (@from NULL, the backing zeroed) or a
 * move (@from a kernel mapping of the old backing, copied into the new
 * one; @contig_only when the old one was one entry an attached direct
 * device still needs: no fallback to scattered chunks then).
 */
static int ion_auto_back_from(struct ion_buffer *buffer,
			      struct ion_auto_buffer *ab, const void *from,
			      bool contig_only)
{
	bool cached = buffer->flags & ION_FLAG_CACHED;
	bool direct = ion_auto_collate(ab);
	bool pool = cached || !from;	/* ion_auto_chunks.c, DOC */
	int ret;

	ab->fallback = false;

	/* The reserve every heap leaves; pools count where chunks are taken. */
	if (!ion_heap_leaves_reserve(buffer->size >> PAGE_SHIFT,
				     pool && !direct ? ion_auto_pooled : NULL,
				     cached)) {
		ab->why = "would eat the memory reserve (1/16 of RAM)";
		ret = -ENOMEM;
		goto err_waiting;
	}
	if (direct) {
		ret = ion_auto_back_direct(buffer, ab, pool, contig_only);
	} else {
		ret = ion_auto_alloc_chunks(buffer, ab, U64_MAX, pool);
		ab->kind = list_empty(&ab->devs) ? ION_AUTO_SYSTEM :
						   ION_AUTO_SCATTERED;
		ab->why = list_empty(&ab->devs) ?
			  "no device attached at first use (CPU first)" :
			  "every attached device takes any backing (IOMMU, or no DMA)";
		if (ret)
			ab->why = "no memory for scattered chunks";
	}
	if (ret)
		goto err_waiting;
	if (from)
		ion_auto_copy(buffer, &ab->sgt, from);
	if (!cached && ab->fresh) {
		ret = ion_auto_set_uncached(buffer, ab);
		if (ret) {
			ab->why = "could not make the pages write-combined";
			goto err_waiting;
		}
	}
	return 0;

err_waiting:
	ab->kind = ION_AUTO_WAITING;
	return ret;
}

/**
 * ion_auto_back() - choose and allocate the backing of an auto buffer
 * @buffer: the buffer
 * @ab:	    its state, waiting
 *
 * Collates the constraints of the attached devices and backs @buffer,
 * zeroed, as the DOC above says; an uncached buffer's pages are made
 * write-combined.
 *
 * Context: Process context; sleeps; the buffer's lock held.
 * Return: 0 with @ab->sgt set, or -ENOMEM, -ERANGE, -EINTR (DOC above).
 */
int ion_auto_back(struct ion_buffer *buffer, struct ion_auto_buffer *ab)
{
	return ion_auto_back_from(buffer, ab, NULL, false);
}

/**
 * ion_auto_unback() - give an auto buffer's backing back
 * @buffer: the buffer
 * @ab:	    its state, backed
 *
 * Scattered chunks go to the pools (ion_auto_free_chunks()).  A
 * contiguous range goes back to the DMA API; uncached pages of it that
 * cannot be made cached again are leaked, with the warning of
 * ion_cache_restore_or_leak().
 *
 * Context: Process context; sleeps; the buffer's lock held (or its last
 * reference gone).
 */
void ion_auto_unback(struct ion_buffer *buffer, struct ion_auto_buffer *ab)
{
	bool give_back = true;

	if (!ab->dma_dev) {
		ion_auto_free_chunks(buffer, ab);
		ab->kind = ION_AUTO_WAITING;
		return;
	}
	if (ab->kind != ION_AUTO_WAITING && !(buffer->flags & ION_FLAG_CACHED))
		give_back = ion_cache_restore_or_leak(&ab->sgt,
						      buffer->heap->name);
	if (give_back)
		dma_free_pages(ab->dma_dev, buffer->size, ab->page, ab->dma,
			       DMA_BIDIRECTIONAL);
	ab->dma_dev = NULL;
	ab->page = NULL;
	sg_free_table(&ab->sgt);
	ab->kind = ION_AUTO_WAITING;
}

/* Hand the backing of @from over to @to, leaving @from waiting. */
static void ion_auto_hand_over(struct ion_auto_buffer *to,
			       struct ion_auto_buffer *from)
{
	to->kind = from->kind;
	to->sgt = from->sgt;
	to->dma_dev = from->dma_dev;
	to->page = from->page;
	to->dma = from->dma;
	to->fresh = from->fresh;
	to->fallback = from->fallback;
	from->kind = ION_AUTO_WAITING;
	from->fallback = false;
	memset(&from->sgt, 0, sizeof(from->sgt));
	from->dma_dev = NULL;
	from->page = NULL;
}

/* The backing mapped in the kernel, write-combined unless cached. */
static void *ion_auto_vmap(struct ion_buffer *buffer, struct sg_table *sgt)
{
	unsigned long n = buffer->size >> PAGE_SHIFT, i = 0;
	pgprot_t prot = PAGE_KERNEL;
	struct sg_page_iter piter;
	struct page **pages;
	void *vaddr;

	pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return NULL;
	for_each_sgtable_page(sgt, &piter, 0) {
		if (i == n)
			break;
		pages[i++] = sg_page_iter_page(&piter);
	}
	if (!(buffer->flags & ION_FLAG_CACHED))
		prot = pgprot_writecombine(prot);
	vaddr = i == n ? vmap(pages, n, VM_MAP, prot) : NULL;
	kvfree(pages);
	return vaddr;
}

/**
 * ion_auto_move() - back an auto buffer anew, for every attached device
 * @buffer:	 the buffer, backed and mapped by nobody
 * @ab:		 its state, with the device that did not fit already listed
 * @contig_only: the old backing is one entry that another attached direct
 *		 device uses: take one range below the new limit or fail
 *
 * Chooses and allocates the new backing as at first use, copies the
 * contents into it and frees the old one (DOC above).
 *
 * Context: Process context; sleeps; the buffer's lock held.
 * Return: 0 with the new backing in @ab; -ENOMEM, -ERANGE or -EINTR as
 * ion_auto_back(), the old backing kept and @ab->fail saying why.
 */
int ion_auto_move(struct ion_buffer *buffer, struct ion_auto_buffer *ab,
		  bool contig_only)
{
	struct ion_auto_buffer old = {};
	const char *why = ab->why;
	u64 limit = ab->limit;
	void *from;
	int ret;

	from = ion_auto_vmap(buffer, &ab->sgt);
	if (!from) {
		ab->fail = "move: no kernel mapping of the old backing";
		return -ENOMEM;
	}
	ion_auto_hand_over(&old, ab);
	ret = ion_auto_back_from(buffer, ab, from, contig_only);
	vunmap(from);
	if (ret) {
		ion_auto_hand_over(ab, &old);
		ab->fail = ab->why;
		ab->why = why;
		ab->limit = limit;
		return ret;
	}
	ion_auto_unback(buffer, &old);
	return 0;
}
