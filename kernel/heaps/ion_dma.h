/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion: what the DMA heap's files share (ion_dma_heap.c: the heap and its
 * uncached buffers; ion_dma_cached.c: its cached buffers).
 */
#ifndef _ION_DMA_H
#define _ION_DMA_H

#include <linux/dma-map-ops.h>
#include <linux/dma-mapping.h>
#include <linux/gfp.h>
#include <linux/scatterlist.h>
#include <linux/types.h>

#include "ion_heap.h"

/* Fail with -ENOMEM rather than wake the OOM killer. */
#define ION_DMA_GFP		(GFP_KERNEL | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)

/**
 * struct ion_dma_buffer - one buffer of the DMA heap, but a lean one
 * @sgt:    the buffer's pages (buffer->sg_table points here)
 * @cookie: what dma_alloc_attrs() returned (opaque, never dereferenced):
 *	    uncached buffers, and cached ones on a coherent device that is
 *	    not lean (DOC: ion DMA heap, cached buffers); or NULL
 * @page:   cached on a device that is not coherent: what
 *	    dma_alloc_pages() returned; or NULL
 * @chunk:  uncached from a write-combined block: its first page (@cookie
 *	    and @page NULL)
 * @dma:    DMA address for the heap's device (unset for a @chunk)
 * @attrs:  DMA_ATTR_* of the allocation
 * @len:    bytes asked of dma_alloc_attrs(): the buffer's size, or whole
 *	    2 MiB blocks (DOC: ion DMA heap)
 *
 * Owned by its ion_buffer (priv_virt): made by allocate, gone after free.
 * A lean buffer has none (ion_buffer_is_one_chunk() tells).
 */
struct ion_dma_buffer {
	struct sg_table sgt;
	void *cookie;
	struct page *page;
	struct page *chunk;
	dma_addr_t dma;
	unsigned long attrs;
	size_t len;
};

/* Does @dev use DMA-direct (no IOMMU, no other dma_map_ops)? */
static inline bool ion_dma_is_direct(struct device *dev)
{
	return !get_dma_ops(dev) && !use_dma_iommu(dev);
}

/* ion_dma_heap.c */
int ion_dma_zero_fresh(struct sg_table *sgt);

/* ion_dma_cached.c */
bool ion_dma_can_lean(struct device *dev);
int ion_dma_lean_allocate(struct device *dev, struct ion_buffer *buffer);
void ion_dma_lean_free(struct device *dev, struct ion_buffer *buffer);
int ion_dma_lean_mmap(struct device *dev, struct ion_buffer *buffer,
		      struct vm_area_struct *vma);
int ion_dma_get_cached(struct device *dev, struct ion_dma_buffer *db,
		       unsigned long len);

#endif /* _ION_DMA_H */
