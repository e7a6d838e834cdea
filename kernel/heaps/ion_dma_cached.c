// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the DMA heap's cached buffers - lean ones on a cache-coherent
 * DMA-direct device, and those of a device that is not coherent.
 */

/**
 * DOC: ion DMA heap, cached buffers
 *
 * A cached buffer on a cache-coherent device comes from dma_alloc_attrs()
 * with DMA_ATTR_NO_KERNEL_MAPPING (DOC: ion DMA heap).  When the device is
 * also DMA-direct (no dma_map_ops, no IOMMU) and memory is not encrypted,
 * as ion's own device on x86 is, such a buffer is *lean*: it keeps nothing
 * of its own beside the memory.  What it relies on of dma-direct (6.12,
 * kernel/dma/direct.c):
 *
 * - the memory is one physically contiguous range, whose first page is
 *   the page at dma_to_phys() of the DMA address: what
 *   dma_direct_get_sgtable() would put in the one entry of the table it
 *   allocates.  The buffer uses the core's one-entry table instead
 *   (ion_buffer_one_chunk());
 * - the DMA address is phys_to_dma() of that page's physical address
 *   (dma_direct_alloc_no_mapping(): phys_to_dma_direct(), which is
 *   phys_to_dma() without memory encryption).  So it is not kept but
 *   computed again for dma_free_attrs() and dma_mmap_attrs();
 * - @priv_virt holds the allocation's cookie, opaque as ever.
 *
 * That saves, per buffer, the heap's struct ion_dma_buffer and the sg
 * table dma_get_sgtable_attrs() allocates, with their frees: at 4 KiB
 * the better part of what the cold path cost over the system heap
 * (Documentation/bench.md, "Issue 25, third stop").  On any other device
 * a cached coherent buffer takes the general path (ion_dma_heap.c).
 *
 * On a device that is not coherent (arm64's platform devices) cached
 * buffers come from dma_alloc_pages(): ion_dma_get_cached().
 */
#include <linux/cc_platform.h>
#include <linux/dma-direct.h>
#include <linux/dma-map-ops.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>

#include "ion_dma.h"

/**
 * ion_dma_can_lean() - may @dev's cached buffers be lean?
 * @dev: the heap's device
 *
 * Context: Process context.
 * Return: true when @dev is cache coherent and DMA-direct and memory is
 * not encrypted (DOC: ion DMA heap, cached buffers).
 */
bool ion_dma_can_lean(struct device *dev)
{
	return dev_is_dma_coherent(dev) && ion_dma_is_direct(dev) &&
	       !cc_platform_has(CC_ATTR_MEM_ENCRYPT);
}

/* A lean buffer's DMA address, as dma-direct computed it. */
static dma_addr_t ion_dma_lean_addr(struct device *dev,
				    struct ion_buffer *buffer)
{
	return phys_to_dma(dev, page_to_phys(sg_page(buffer->sg_table->sgl)));
}

/**
 * ion_dma_lean_allocate() - back a cached @buffer for @dev, leanly
 * @dev:    the heap's device, one ion_dma_can_lean() accepted
 * @buffer: the buffer; its size is at most ION_CHUNK_MAX
 *
 * Sets the core's one-entry table and @buffer->priv_virt (the cookie).
 *
 * Context: Process context; may sleep.
 * Return: 0, -ENOMEM, or -EINTR from zeroing.
 */
int ion_dma_lean_allocate(struct device *dev, struct ion_buffer *buffer)
{
	struct sg_table *sgt;
	dma_addr_t dma;
	void *cookie;
	int ret;

	cookie = dma_alloc_attrs(dev, buffer->size, &dma, ION_DMA_GFP,
				 DMA_ATTR_NO_KERNEL_MAPPING);
	if (!cookie)
		return -ENOMEM;
	sgt = ion_buffer_one_chunk(buffer,
				   pfn_to_page(PHYS_PFN(dma_to_phys(dev, dma))),
				   buffer->size);
	ret = ion_dma_zero_fresh(sgt);
	if (ret) {
		dma_free_attrs(dev, buffer->size, cookie, dma,
			       DMA_ATTR_NO_KERNEL_MAPPING);
		return ret;
	}
	buffer->priv_virt = cookie;
	return 0;
}

/**
 * ion_dma_lean_free() - release what ion_dma_lean_allocate() set up
 * @dev:    the heap's device
 * @buffer: the buffer
 *
 * Context: Process context; may sleep.
 */
void ion_dma_lean_free(struct device *dev, struct ion_buffer *buffer)
{
	dma_free_attrs(dev, buffer->size, buffer->priv_virt,
		       ion_dma_lean_addr(dev, buffer),
		       DMA_ATTR_NO_KERNEL_MAPPING);
}

/**
 * ion_dma_lean_mmap() - map a lean buffer into @vma
 * @dev:    the heap's device
 * @buffer: the buffer
 * @vma:    the mapping, as the map_user op gets it
 *
 * Context: Process context (mmap).
 * Return: what dma_mmap_attrs() returns.
 */
int ion_dma_lean_mmap(struct device *dev, struct ion_buffer *buffer,
		      struct vm_area_struct *vma)
{
	return dma_mmap_attrs(dev, vma, buffer->priv_virt,
			      ion_dma_lean_addr(dev, buffer), buffer->size,
			      DMA_ATTR_NO_KERNEL_MAPPING);
}

/**
 * ion_dma_get_cached() - a cached buffer for a device that is not coherent
 * @dev: the heap's device
 * @db:  the heap's struct of the buffer, zeroed
 * @len: the buffer's size
 *
 * Context: Process context; may sleep.
 * Return: 0 or -ENOMEM.
 */
int ion_dma_get_cached(struct device *dev, struct ion_dma_buffer *db,
		       unsigned long len)
{
	int ret;

	db->page = dma_alloc_pages(dev, len, &db->dma, DMA_BIDIRECTIONAL,
				   ION_DMA_GFP);
	if (!db->page)
		return -ENOMEM;
	ret = sg_alloc_table(&db->sgt, 1, GFP_KERNEL);
	if (ret) {
		dma_free_pages(dev, len, db->page, db->dma, DMA_BIDIRECTIONAL);
		return ret;
	}
	sg_set_page(db->sgt.sgl, db->page, len, 0);
	/*
	 * dma_alloc_pages() zeroes the memory itself (dma-direct and the
	 * IOMMU's dma_common_alloc_pages() both memset() it), on top of the
	 * page allocator's init_on_alloc: zeroing it a third time here was
	 * most of this heap's extra cost.
	 * The device owns the memory: push the zeroes out of the caches.
	 */
	dma_sync_single_for_device(dev, db->dma, len, DMA_TO_DEVICE);
	return 0;
}
