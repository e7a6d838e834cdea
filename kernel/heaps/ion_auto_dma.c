// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the auto heap's own DMA devices, one per DMA mask width, through
 * which it allocates contiguous backings.
 */
#include <asm/barrier.h>
#include <linux/bitops.h>
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>

#include "ion_auto.h"

/**
 * DOC: auto heap DMA devices
 *
 * A contiguous backing (ion_auto_backing.c) is asked of the DMA API for a
 * device whose DMA mask is the collated limit of the buffer's direct
 * devices.  It is not asked for the importing device itself: the
 * allocation outlives that device's attachment, and may outlive its
 * driver (an unbind with the buffer still alive), which the DMA API
 * forbids (DMA-API debugging reports "pending DMA allocations while
 * released from device").  So the auto heap owns one platform device per
 * mask width, "ion-auto.<bits>", made at the first contiguous backing of
 * that width and removed at module exit, when no buffer is left.
 *
 * These devices are DMA-direct (no IOMMU, no firmware node), as the
 * direct devices whose limit they stand for: their coherent mask chooses
 * the zone and CMA serves them as it would the importer.  A limit that is
 * not of the form 2^n - 1 (a bus_dma_limit) rounds down to the next such
 * mask, which only narrows where the memory may lie.
 *
 * @ion_auto_dma_lock serializes making a device; reading a made one
 * takes no lock (READ_ONCE(), set once with WRITE_ONCE() under the lock).
 */

/* The DMA API's smallest mask (ZONE_DMA on x86): no device for less. */
#define ION_AUTO_DMA_MIN_BITS	24

static struct platform_device *ion_auto_dma_pdev[65];
static DEFINE_MUTEX(ion_auto_dma_lock);	/* makes ion_auto_dma_pdev[] */

/* The widest mask of the form 2^n - 1 that is not above @limit. */
static unsigned int ion_auto_dma_bits(u64 limit)
{
	unsigned int bits = fls64(limit);

	if (bits < 64 && DMA_BIT_MASK(bits) > limit)
		bits--;
	return bits;
}

/**
 * ion_auto_dma_dev() - the auto heap's DMA device for a limit
 * @limit: the highest DMA address the backing may use
 *
 * Context: Process context; may sleep (the first call for a width
 * registers the device).
 * Return: the device (owned by the auto heap until ion_auto_dma_exit()),
 * NULL when @limit is below the DMA API's smallest mask, or an ERR_PTR()
 * of registering it.
 */
struct device *ion_auto_dma_dev(u64 limit)
{
	unsigned int bits = ion_auto_dma_bits(limit);
	struct platform_device_info info = {
		.name = "ion-auto",
		.id = bits,
		.dma_mask = DMA_BIT_MASK(bits),
	};
	struct platform_device *pdev;

	if (bits < ION_AUTO_DMA_MIN_BITS)
		return NULL;
	/* Acquire: the device's DMA masks, set before it was published. */
	pdev = smp_load_acquire(&ion_auto_dma_pdev[bits]);
	if (pdev)
		return &pdev->dev;
	mutex_lock(&ion_auto_dma_lock);
	pdev = ion_auto_dma_pdev[bits];
	if (!pdev) {
		pdev = platform_device_register_full(&info);
		if (!IS_ERR(pdev))
			/* Release: its DMA masks before the pointer. */
			smp_store_release(&ion_auto_dma_pdev[bits], pdev);
	}
	mutex_unlock(&ion_auto_dma_lock);
	return IS_ERR(pdev) ? ERR_CAST(pdev) : &pdev->dev;
}

/**
 * ion_auto_dma_exit() - remove the auto heap's DMA devices
 *
 * Context: Process context (module exit, no auto buffer left).
 */
void ion_auto_dma_exit(void)
{
	unsigned int bits;

	for (bits = 0; bits < ARRAY_SIZE(ion_auto_dma_pdev); bits++) {
		if (!ion_auto_dma_pdev[bits])
			continue;
		platform_device_unregister(ion_auto_dma_pdev[bits]);
		ion_auto_dma_pdev[bits] = NULL;
	}
}
