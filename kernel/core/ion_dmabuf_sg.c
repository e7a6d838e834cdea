// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the sg tables of the dma-buf side (ion_dmabuf.c) - each
 * attachment's own copy of a buffer's table, split for its device, and
 * the copy of a mapped one that its importer gets.  Calls nothing else of
 * ion's.
 */
#include <linux/dma-mapping.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>

#include "ion_compat.h"
#include "ion_priv.h"

/*
 * The next piece of a chunk at @phys with @left bytes for a device taking
 * segments of at most @max bytes that do not cross a @boundary (mask).
 */
static unsigned int ion_sg_piece(phys_addr_t phys, unsigned int left,
				 unsigned int max, unsigned long boundary)
{
	unsigned int len = min(left, max);
	u64 next;

	if (boundary != ULONG_MAX) {
		next = ((u64)phys | boundary) + 1;
		if (phys + len > next)
			len = next - phys;
	}
	return len;
}

/*
 * Copy @src into @dst (or only count the entries when @dst is NULL),
 * splitting chunks into segments @dev can take: DMA-API debugging calls a
 * longer one, or one across the segment boundary, a bug of whoever built
 * the list (and an importer without dma_parms takes 64 KiB); nor may one
 * exceed what the device's DMA path maps at once (swiotlb bounces at most
 * 256 KiB: with swiotlb=force a 1 MiB segment failed with -EIO).
 */
static int ion_sg_table_split(const struct sg_table *src,
			      struct sg_table *dst, struct device *dev)
{
	/* dma_max_mapping_size() reads the mask: a device may have none. */
	unsigned int max = min_t(size_t, dma_get_max_seg_size(dev),
				 dev->dma_mask ? dma_max_mapping_size(dev) :
						 SIZE_MAX);
	unsigned long boundary = dma_get_seg_boundary(dev);
	struct scatterlist *s, *d = dst ? dst->sgl : NULL;
	unsigned int i, left, len;
	phys_addr_t phys;
	int n = 0;

	max = max_t(unsigned int, max, PAGE_SIZE);
	for_each_sgtable_sg(src, s, i) {
		phys = sg_phys(s);
		for (left = s->length; left; left -= len, phys += len) {
			len = ion_sg_piece(phys, left, max, boundary);
			if (d) {
				sg_set_page(d, pfn_to_page(PHYS_PFN(phys)), len,
					    offset_in_page(phys));
				d = sg_next(d);
			}
			n++;
		}
	}
	return n;
}

/**
 * ion_sg_table_dup() - an attachment's own copy of a buffer's table
 * @src: the buffer's table
 * @dst: the copy, its chunks split into segments @dev takes
 * @dev: the attached device
 *
 * Context: Process context; sleeps.
 * Return: 0 or -ENOMEM.
 */
int ion_sg_table_dup(const struct sg_table *src, struct sg_table *dst,
		     struct device *dev)
{
	int ret;

	ret = sg_alloc_table(dst, ion_sg_table_split(src, NULL, dev),
			     GFP_KERNEL);
	if (ret)
		return ret;
	ion_sg_table_split(src, dst, dev);
	return 0;
}

/**
 * ion_sg_table_export() - a mapped table's copy, for its importer
 * @mapped: an attachment's table, DMA-mapped
 * @out:    the copy: each entry's page, offset and length, and the DMA
 *	    address, length and flags of the first @mapped->nents (the
 *	    mapped segments), which is also its nents
 *
 * The dma-buf core may scramble the page links of the table an importer
 * gets until just before its unmap (CONFIG_DMABUF_DEBUG, on by default
 * with CONFIG_DMA_API_DEBUG: it catches importers that touch the pages).
 * ion syncs the attachment's table meanwhile, at the begin and end of
 * every CPU access, and the DMA API reads its pages (sg_phys()) for the
 * cache maintenance of a non-coherent device behind an IOMMU: a scrambled
 * link is a wild physical address.  So the importer gets this copy, and
 * ion keeps syncing and unmapping its own table.
 *
 * Context: Process context; sleeps.
 * Return: 0 or -ENOMEM.
 */
int ion_sg_table_export(const struct sg_table *mapped, struct sg_table *out)
{
	struct scatterlist *s, *d;
	unsigned int i;
	int ret;

	ret = sg_alloc_table(out, mapped->orig_nents, GFP_KERNEL);
	if (ret)
		return ret;
	d = out->sgl;
	for_each_sgtable_sg(mapped, s, i) {
		sg_set_page(d, sg_page(s), s->length, s->offset);
		if (i < mapped->nents) {
			sg_dma_address(d) = sg_dma_address(s);
			sg_dma_len(d) = sg_dma_len(s);
			ion_sg_dma_flags_copy(d, s);
		}
		d = sg_next(d);
	}
	out->nents = mapped->nents;
	return 0;
}
