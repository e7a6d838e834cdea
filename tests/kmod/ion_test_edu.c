// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion_test: driver for QEMU's edu PCI device, used as a DMA engine.
 *
 * edu (vendor 0x1234, device 0x11e8) has a 4 KiB buffer at device address
 * 0x40000 and one DMA channel: source (0x80), destination (0x88), count
 * (0x90) and command (0x98; bit 0 starts and reads 1 while running, bit 1
 * selects device to RAM, bit 2 asks for an interrupt).  It masks RAM
 * addresses with its DMA mask (edu_dma_bits) rather than failing, so the
 * driver never hands it an address beyond that mask, and it stops the
 * whole VM on a device range it dislikes (QEMU 7.2 also refuses a range
 * ending at the buffer's last byte), so the device range is checked here
 * against ION_TEST_MAX_XFER.  Transfers are polled; one runs at a time.
 */
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/dma-map-ops.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/iommu.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/sched/signal.h>

#include "ion_test.h"
#include "ion_test_compat.h"
#include "ion_test_priv.h"

#define EDU_REG_IDENT		0x00
#define EDU_REG_DMA_SRC		0x80
#define EDU_REG_DMA_DST		0x88
#define EDU_REG_DMA_COUNT	0x90
#define EDU_REG_DMA_CMD		0x98

#define EDU_CMD_START		BIT(0)
#define EDU_CMD_TO_RAM		BIT(1)

#define EDU_IDENT_MASK		0xff
#define EDU_IDENT		0xed
#define EDU_BUF_ADDR		0x40000
/*
 * QEMU's edu truncates RAM addresses to its dma_mask property, 28 bits by
 * default.  On arm64 virt RAM starts at 1 GiB, out of a 28-bit device's
 * reach without an IOMMU (DMA-direct refuses such a mask with -EIO), so
 * the rig gives edu dma_mask=0xffffffffff there (scripts/guest-run.sh) and
 * the driver must use the same 40 bits.
 */
#if IS_ENABLED(CONFIG_ARM64)
#define EDU_DMA_BITS		40
#else
#define EDU_DMA_BITS		28
#endif
#define EDU_TIMEOUT_MS		5000

/* What the rig gave edu as dma_mask, when not the default (swiotlb boot). */
static unsigned int edu_dma_bits = EDU_DMA_BITS;
module_param(edu_dma_bits, uint, 0444);
MODULE_PARM_DESC(edu_dma_bits,
		 "edu's DMA mask in bits, as QEMU's dma_mask property (24-64)");

/**
 * struct ion_test_edu - the bound edu device (at most one)
 * @pdev:  the PCI device
 * @regs:  BAR 0
 * @iommu: DMA goes through a translating IOMMU domain
 * @lock:  serialises transfers (the device has one channel)
 */
struct ion_test_edu {
	struct pci_dev *pdev;
	void __iomem *regs;
	bool iommu;
	struct mutex lock; /* see the kernel-doc above */
};

/*
 * Set in probe, cleared in remove; commands read it once (READ_ONCE) and
 * may use what they read until their file's lock is dropped (remove waits
 * for that, ion_test_unmap_device()).
 */
static struct ion_test_edu *ion_test_edu;

#if IS_ENABLED(CONFIG_ARM64)
/*
 * QEMU's virt machine describes its PCIe host "dma-coherent", so nothing
 * on it takes the non-coherent DMA path.  With edu_noncoherent=1 the
 * kernel treats edu as non-coherent: every map, unmap and sync for it
 * cleans or invalidates the CPU caches (harmless for a coherent device),
 * which is how importers on non-coherent SoCs see ion's buffers.
 */
static bool edu_noncoherent;
module_param(edu_noncoherent, bool, 0444);
MODULE_PARM_DESC(edu_noncoherent,
		 "treat edu's DMA as non-coherent (cache maintenance on every map and sync)");
#endif

/**
 * ion_test_edu_device() - the edu device to map buffers for
 *
 * Context: Any.
 * Return: the device, or NULL when no edu is bound.
 */
struct device *ion_test_edu_device(void)
{
	struct ion_test_edu *edu = READ_ONCE(ion_test_edu);

	return edu ? &edu->pdev->dev : NULL;
}

/**
 * ion_test_edu_iommu() - whether edu's DMA addresses are IOVAs
 *
 * Context: Any.
 * Return: true behind a translating IOMMU, false for direct DMA.
 */
bool ion_test_edu_iommu(void)
{
	struct ion_test_edu *edu = READ_ONCE(ion_test_edu);

	return edu && edu->iommu;
}

/**
 * ion_test_edu_coherent() - whether the kernel sees edu's DMA as coherent
 *
 * Context: Any.
 * Return: true when mapping and syncing for edu do no cache maintenance
 * (x86, and arm64 where the firmware says "dma-coherent"); false without
 * edu.
 */
bool ion_test_edu_coherent(void)
{
	struct ion_test_edu *edu = READ_ONCE(ion_test_edu);

	return edu && dev_is_dma_coherent(&edu->pdev->dev);
}

/**
 * ion_test_edu_iommu_group() - edu's IOMMU group
 *
 * Context: Process context.
 * Return: the group's id, or -1 without edu or without a group.
 */
int ion_test_edu_iommu_group(void)
{
	struct ion_test_edu *edu = READ_ONCE(ion_test_edu);
	struct iommu_group *group;
	int id;

	if (!edu)
		return -1;
	group = iommu_group_get(&edu->pdev->dev);
	if (!group)
		return -1;
	id = iommu_group_id(group);
	iommu_group_put(group);
	return id;
}

/**
 * ion_test_edu_dma_bits() - edu's DMA mask in bits
 *
 * Context: Any.
 * Return: the number of address bits the device decodes.
 */
unsigned int ion_test_edu_dma_bits(void)
{
	return edu_dma_bits;
}

static int ion_test_edu_wait(struct ion_test_edu *edu)
{
	unsigned long end = jiffies + msecs_to_jiffies(EDU_TIMEOUT_MS);

	while (readq(edu->regs + EDU_REG_DMA_CMD) & EDU_CMD_START) {
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(1000, 2000);
	}
	return 0;
}

/**
 * ion_test_edu_xfer() - one DMA transfer between RAM and the edu buffer
 * @ram:     DMA address in RAM (for the edu device)
 * @dev_off: offset in the device buffer
 * @len:     bytes; @dev_off + @len at most ION_TEST_MAX_XFER
 * @to_ram:  true: device buffer to RAM, false: RAM to device buffer
 *
 * Context: Process context, sleeps until the transfer is done.
 * Return: 0, -ENODEV without edu, -ERANGE for a range the device cannot
 * address, -ETIMEDOUT.
 */
int ion_test_edu_xfer(dma_addr_t ram, u32 dev_off, u32 len, bool to_ram)
{
	struct ion_test_edu *edu = READ_ONCE(ion_test_edu);
	u64 buf = EDU_BUF_ADDR + dev_off;
	int ret;

	if (!edu)
		return -ENODEV;
	if (!len || dev_off > ION_TEST_MAX_XFER ||
	    len > ION_TEST_MAX_XFER - dev_off ||
	    ram + len - 1 > DMA_BIT_MASK(edu_dma_bits) || ram + len < ram)
		return -ERANGE;

	mutex_lock(&edu->lock);
	ret = ion_test_edu_wait(edu);
	if (ret)
		goto out_unlock;
	writeq(to_ram ? buf : ram, edu->regs + EDU_REG_DMA_SRC);
	writeq(to_ram ? ram : buf, edu->regs + EDU_REG_DMA_DST);
	writeq(len, edu->regs + EDU_REG_DMA_COUNT);
	writeq(EDU_CMD_START | (to_ram ? EDU_CMD_TO_RAM : 0),
	       edu->regs + EDU_REG_DMA_CMD);
	ret = ion_test_edu_wait(edu);
out_unlock:
	mutex_unlock(&edu->lock);
	return ret;
}

static bool ion_test_edu_translated(struct device *dev)
{
	struct iommu_domain *domain = iommu_get_domain_for_dev(dev);

	return domain && domain->type != IOMMU_DOMAIN_IDENTITY;
}

static int ion_test_edu_probe(struct pci_dev *pdev,
			      const struct pci_device_id *id)
{
	struct ion_test_edu *edu;
	u32 ident;
	int ret;

	if (ion_test_edu)
		return -EBUSY;
	edu = devm_kzalloc(&pdev->dev, sizeof(*edu), GFP_KERNEL);
	if (!edu)
		return -ENOMEM;
	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	edu->regs = pcim_iomap_region(pdev, 0, "ion_test");
	if (IS_ERR(edu->regs))
		return PTR_ERR(edu->regs);
	if (edu_dma_bits < 24 || edu_dma_bits > 64)
		return -EINVAL;
	ident = readl(edu->regs + EDU_REG_IDENT);
	if ((ident & EDU_IDENT_MASK) != EDU_IDENT) {
		dev_err(&pdev->dev, "not an edu device (ident %#x)\n", ident);
		return -ENODEV;
	}
#if IS_ENABLED(CONFIG_ARM64)
	/*
	 * Before the mask: dma_set_mask() decides from the coherence whether
	 * the sync calls may be skipped for the device (dma_skip_sync).
	 */
	if (edu_noncoherent)
		pdev->dev.dma_coherent = false;
#endif
	ret = dma_set_mask_and_coherent(&pdev->dev,
					DMA_BIT_MASK(edu_dma_bits));
	if (ret)
		return ret;
	pci_set_master(pdev);
	mutex_init(&edu->lock);
	edu->pdev = pdev;
	edu->iommu = ion_test_edu_translated(&pdev->dev);
	pci_set_drvdata(pdev, edu);
	ion_test_edu = edu;
	dev_info(&pdev->dev, "edu %u.%u bound, %u-bit DMA, %s, %s\n",
		 ident >> 24, (ident >> 16) & 0xff, edu_dma_bits,
		 edu->iommu ? "through an IOMMU" : "direct",
		 dev_is_dma_coherent(&pdev->dev) ? "coherent" : "non-coherent");
	return 0;
}

/*
 * Unbound through sysfs with files open, or at module exit with none: no
 * new command finds edu once ion_test_edu is NULL, and
 * ion_test_unmap_device() waits for the commands that found it and undoes
 * every mapping for it before devres frees @edu.
 */
static void ion_test_edu_remove(struct pci_dev *pdev)
{
	struct ion_test_edu *edu = pci_get_drvdata(pdev);

	mutex_lock(&edu->lock);
	WRITE_ONCE(ion_test_edu, NULL);
	mutex_unlock(&edu->lock);
	ion_test_unmap_device(&pdev->dev);
	mutex_destroy(&edu->lock);
}

static const struct pci_device_id ion_test_edu_ids[] = {
	{ PCI_DEVICE(0x1234, 0x11e8) },
	{ }
};
MODULE_DEVICE_TABLE(pci, ion_test_edu_ids);

static struct pci_driver ion_test_edu_driver = {
	.name = "ion_test_edu",
	.id_table = ion_test_edu_ids,
	.probe = ion_test_edu_probe,
	.remove = ion_test_edu_remove,
};

/**
 * ion_test_edu_register() - register the edu PCI driver
 *
 * A missing edu device is not an error: the DMA commands then answer
 * -ENODEV.
 *
 * Context: Process context (module init).
 * Return: 0 or the -errno of pci_register_driver().
 */
int ion_test_edu_register(void)
{
	return pci_register_driver(&ion_test_edu_driver);
}

/**
 * ion_test_edu_unregister() - unbind edu and unregister the driver
 *
 * Context: Process context (module exit), after the misc device is gone.
 */
void ion_test_edu_unregister(void)
{
	pci_unregister_driver(&ion_test_edu_driver);
}
