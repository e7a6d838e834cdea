// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion_test: a test-only DMA importer of ion buffers (/dev/ion_test).
 *
 * Each open file is one ion kernel client ("ion_test") with up to
 * ION_TEST_MAX_SLOTS imports.  An import is either a handle of that client
 * (client mode: ion_import_fd, ion_phys, ion_sg_table, and a private copy
 * of the sg table DMA-mapped for edu) or a plain dma-buf attachment of the
 * edu device (dma-buf mode).  Closing the file drops every import and the
 * client, so debugfs shows the client exactly while the file is open.
 * Imports live in ion_test_import.c.
 */
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/ion.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ion_test.h"
#include "ion_test_priv.h"

/* Bytes described by @sgt. */
size_t ion_test_sgt_size(struct sg_table *sgt)
{
	struct scatterlist *sg;
	size_t size = 0;
	unsigned int i;

	for_each_sgtable_sg(sgt, sg, i)
		size += sg->length;
	return size;
}

/*
 * A device that reaches all of memory, never behind an IOMMU: mapping a
 * dma-buf for it yields the buffer's physical addresses, whoever exported
 * it.
 */
static struct platform_device *ion_test_probe_dev;

/**
 * ion_test_probe_device() - a platform device that reaches all of memory
 *
 * Context: Any context.
 * Return: the device, for the life of the module.
 */
struct device *ion_test_probe_device(void)
{
	return &ion_test_probe_dev->dev;
}

/* A root device: no bus, no DMA mask (dev->dma_mask NULL). */
static struct device *ion_test_nomask_dev;

/**
 * ion_test_nomask_device() - a device with no DMA mask
 *
 * As an importer that only wants CPU access to a dma-buf: it may attach,
 * the DMA API maps nothing for it.
 *
 * Context: Any context.
 * Return: the device, for the life of the module.
 */
struct device *ion_test_nomask_device(void)
{
	return ion_test_nomask_dev;
}

/* Every open file, for ion_test_unmap_device(). */
static LIST_HEAD(ion_test_files);
/* Protects ion_test_files; taken before a file's lock, never under it. */
static DEFINE_MUTEX(ion_test_files_lock);

/**
 * ion_test_unmap_device() - undo every file's mappings for a device
 * @dev: a device going away (edu being unbound)
 *
 * A driver must not keep memory mapped for its device once unbound: each
 * import mapped for @dev is unmapped (and detached in dma-buf modes) and
 * stays as an import that DMA refuses with -ERANGE.  Taking each file's
 * lock also waits for a command of that file in progress, a transfer with
 * @dev included.
 *
 * Context: Process context; sleeps.
 */
void ion_test_unmap_device(struct device *dev)
{
	struct ion_test_file *tf;
	unsigned int i;

	mutex_lock(&ion_test_files_lock);
	list_for_each_entry(tf, &ion_test_files, node) {
		mutex_lock(&tf->lock);
		for (i = 0; i < ION_TEST_MAX_SLOTS; i++)
			if (tf->slots[i] && tf->slots[i]->dma_dev == dev)
				ion_test_slot_unmap(tf->slots[i]);
		mutex_unlock(&tf->lock);
	}
	mutex_unlock(&ion_test_files_lock);
}

/* The commands and their handlers, each called under &ion_test_file.lock. */
static const struct {
	unsigned int cmd;
	long (*fn)(struct ion_test_file *tf, void __user *uarg);
} ion_test_ioctls[] = {
	{ ION_TEST_IOC_INFO, ion_test_ioc_info },
	{ ION_TEST_IOC_IMPORT, ion_test_ioc_import },
	{ ION_TEST_IOC_RELEASE, ion_test_ioc_release },
	{ ION_TEST_IOC_DMA, ion_test_ioc_dma },
	{ ION_TEST_IOC_ATTR, ion_test_ioc_attr },
	{ ION_TEST_IOC_FRAGMENT, ion_test_ioc_fragment },
	{ ION_TEST_IOC_KAPI, ion_test_ioc_kapi },
	{ ION_TEST_IOC_PHYS_ATTR, ion_test_ioc_phys_attr },
};

static long ion_test_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	struct ion_test_file *tf = file->private_data;
	long ret = -ENOTTY;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ion_test_ioctls); i++) {
		if (ion_test_ioctls[i].cmd != cmd)
			continue;
		mutex_lock(&tf->lock);
		ret = ion_test_ioctls[i].fn(tf, (void __user *)arg);
		mutex_unlock(&tf->lock);
		break;
	}
	return ret;
}

static int ion_test_open(struct inode *inode, struct file *file)
{
	struct ion_test_file *tf;

	tf = kzalloc(sizeof(*tf), GFP_KERNEL);
	if (!tf)
		return -ENOMEM;
	tf->client = ion_client_create(ion_default_device(), ~0U,
				       "ion_test");
	if (IS_ERR_OR_NULL(tf->client)) {
		int ret = tf->client ? PTR_ERR(tf->client) : -ENOMEM;

		kfree(tf);
		return ret;
	}
	mutex_init(&tf->lock);
	INIT_LIST_HEAD(&tf->frag);
	file->private_data = tf;
	mutex_lock(&ion_test_files_lock);
	list_add(&tf->node, &ion_test_files);
	mutex_unlock(&ion_test_files_lock);
	return 0;
}

static int ion_test_release(struct inode *inode, struct file *file)
{
	struct ion_test_file *tf = file->private_data;
	unsigned int i;

	mutex_lock(&ion_test_files_lock);
	list_del(&tf->node);
	mutex_unlock(&ion_test_files_lock);
	for (i = 0; i < ION_TEST_MAX_SLOTS; i++)
		if (tf->slots[i])
			ion_test_slot_free(tf, tf->slots[i]);
	ion_test_unfragment(tf);
	ion_client_destroy(tf->client);
	mutex_destroy(&tf->lock);
	kfree(tf);
	return 0;
}

static const struct file_operations ion_test_fops = {
	.owner = THIS_MODULE,
	.open = ion_test_open,
	.release = ion_test_release,
	.unlocked_ioctl = ion_test_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice ion_test_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "ion_test",
	.fops = &ion_test_fops,
	.mode = 0600,
};

static int __init ion_test_init(void)
{
	int ret;

	ion_test_probe_dev = platform_device_register_simple("ion_test_probe",
							     -1, NULL, 0);
	if (IS_ERR(ion_test_probe_dev))
		return PTR_ERR(ion_test_probe_dev);
	/*
	 * A generic importer: take exporters' segments whole (vivid's
	 * dma-contig buffers are one segment of a whole frame).
	 */
	dma_set_max_seg_size(&ion_test_probe_dev->dev, UINT_MAX);
	ret = dma_coerce_mask_and_coherent(&ion_test_probe_dev->dev,
					   DMA_BIT_MASK(64));
	if (ret)
		goto err_unregister_probe;
	ion_test_nomask_dev = root_device_register("ion_test_nomask");
	if (IS_ERR(ion_test_nomask_dev)) {
		ret = PTR_ERR(ion_test_nomask_dev);
		goto err_unregister_probe;
	}
	ret = ion_test_edu_register();
	if (ret)
		goto err_unregister_nomask;
	ret = misc_register(&ion_test_miscdev);
	if (ret)
		goto err_unregister_edu;
	return 0;

err_unregister_edu:
	ion_test_edu_unregister();
err_unregister_nomask:
	root_device_unregister(ion_test_nomask_dev);
err_unregister_probe:
	platform_device_unregister(ion_test_probe_dev);
	ion_test_zero_exit();	/* zero_watch=PID at load */
	return ret;
}

static void __exit ion_test_exit(void)
{
	misc_deregister(&ion_test_miscdev);
	ion_test_zero_exit();
	ion_test_edu_unregister();
	root_device_unregister(ion_test_nomask_dev);
	platform_device_unregister(ion_test_probe_dev);
}

module_init(ion_test_init);
module_exit(ion_test_exit);
MODULE_DESCRIPTION("ion test DMA importer for QEMU's edu device");
MODULE_LICENSE("GPL");
ION_MODULE_IMPORT_NS();
MODULE_IMPORT_NS(DMA_BUF);
