// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: arm64 cache maintenance of uncached buffers.
 *
 * An uncached buffer is mapped Normal Non-cacheable (pgprot_writecombine())
 * in user space and in the core's vmap, while its pages keep their
 * cacheable alias in the kernel's linear map: arm64 has no set_memory_wc(),
 * and mainline does the same for every non-coherent dma_alloc_coherent()
 * buffer (kernel/dma/direct.c remaps with pgprot_dmacoherent(), which is
 * Normal-NC on arm64, and leaves the linear map alone).  The architecture
 * allows such mismatched aliases as long as the cacheable one holds no
 * dirty line: a dirty line would hide the memory from non-cacheable
 * readers (user space, devices) and, when evicted later, overwrite what
 * they wrote.  The heaps zero a buffer through the linear map, so its
 * zeroes sit dirty in the caches until they are cleaned to the point of
 * coherency.
 *
 * Mainline's rule (arch_dma_prep_coherent() in arch/arm64/mm/dma-mapping.c,
 * called once when a non-coherent coherent buffer is allocated) is a clean
 * to PoC after the buffer was zeroed; the clean lines speculation may bring
 * back later are harmless because nothing reads through that alias any
 * more.  dcache_clean_poc() and arch_dma_prep_coherent() are not exported,
 * so this file reaches the same instructions through the DMA API: mapping
 * the pages for a non-coherent device cleans them (arch_sync_dma_for_device:
 * DC CVAC), unmapping them invalidates them (arch_sync_dma_for_cpu: DC
 * IVAC), so the buffer leaves ion_cache_set_uncached() with no line of it
 * in any cache.  Nothing is needed when the pages go back (mainline's
 * dma_direct_free() does nothing either): the only lines left are clean.
 *
 * The device: ion_cache_dev is a bare struct device used only as the DMA
 * API's handle, never registered and never device_initialize()d, so it
 * has no DMA ops and no IOMMU (DMA-direct), is not DMA-coherent
 * (dev_is_dma_coherent() is false: the cache maintenance is done), and has
 * no swiotlb pool (a bounce would clean the bounce slot, not the buffer).
 * Its 64-bit mask fits every page.  It has no kobject state, holds no
 * reference and needs no release.
 *
 * Built only on arm64 (Kbuild); see ion_cache.h.
 * Documentation/arm64.md has the details.
 */
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/scatterlist.h>

#include "ion_cache.h"
#include "ion_fail.h"

static struct device ion_cache_dev = {
	.init_name = "ion-cache",
	.coherent_dma_mask = DMA_BIT_MASK(64),
	.dma_mask = &ion_cache_dev.coherent_dma_mask,
};

/**
 * ion_cache_set_uncached() - clean and invalidate a buffer's cache lines
 * @sgt: the buffer's pages, already zeroed through the linear map
 *
 * Call once, before the buffer is mapped non-cacheable anywhere.
 *
 * Context: Process context, may sleep.
 * Return: 0, or -ENOMEM when a segment could not be mapped (then nothing
 * is left mapped and the buffer must not be used uncached).
 */
int ion_cache_set_uncached(struct sg_table *sgt)
{
	struct device *dev = &ion_cache_dev;
	struct scatterlist *sg;
	unsigned int i;
	dma_addr_t dma;

	if (ion_fail(ION_FAIL_UNCACHED))
		return -ENOMEM;
	for_each_sgtable_sg(sgt, sg, i) {
		/* DMA_BIDIRECTIONAL: clean on map, invalidate on unmap. */
		dma = dma_map_page(dev, sg_page(sg), sg->offset, sg->length,
				   DMA_BIDIRECTIONAL);
		if (dma_mapping_error(dev, dma))
			return -ENOMEM;
		dma_unmap_page(dev, dma, sg->length, DMA_BIDIRECTIONAL);
	}
	return 0;
}

/**
 * ion_cache_set_cached() - give a buffer's pages back to cacheable use
 * @sgt: the pages ion_cache_set_uncached() was called on
 *
 * Nothing to do on arm64: the linear map never changed and holds no dirty
 * line of the buffer.
 *
 * Context: Any.
 * Return: 0.
 */
int ion_cache_set_cached(struct sg_table *sgt)
{
	return 0;
}
