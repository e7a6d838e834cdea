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
 *
 * Without an IOMMU, edu reaches only what its DMA mask covers (the low
 * 256 MiB with QEMU's default 28 bits, on x86), and DMA-direct has
 * no quiet way to refuse memory above a device's mask (it warns).  So
 * before mapping, ion_test looks at the buffer's pages (through its ion
 * client in client mode; in dma-buf mode, which takes any exporter's
 * buffers, through a mapping for a probe device that reaches all memory)
 * and refuses with -ERANGE what edu cannot reach: a buffer is then refused
 * cleanly, never corrupted by edu's address masking.
 */
#include <linux/dma-buf.h>
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

/* Without an IOMMU, may edu DMA to every page of @sgt? */
static int ion_test_reachable(struct sg_table *sgt)
{
	u64 limit = DMA_BIT_MASK(ion_test_edu_dma_bits());
	struct scatterlist *sg;
	unsigned int i;

	if (ion_test_edu_iommu())
		return 0;
	for_each_sgtable_sg(sgt, sg, i)
		if (sg_phys(sg) + sg->length - 1 > limit)
			return -ERANGE;
	return 0;
}

/* Entries of @cpu cut to at most @max bytes each. */
static unsigned int ion_test_pieces(struct sg_table *cpu, unsigned int max)
{
	struct scatterlist *sg;
	unsigned int i, n = 0;

	for_each_sgtable_sg(cpu, sg, i)
		n += DIV_ROUND_UP(sg->length, max);
	return n;
}

/*
 * Map a copy of @cpu for @dev, its entries cut to the device's maximum
 * segment size (64 KiB for edu: the PCI core's default), as a driver must:
 * DMA-API debugging reports longer segments.  ion's chunks are naturally
 * aligned, so no piece crosses edu's 4 GiB segment boundary.
 */
static int ion_test_map_copy(struct ion_test_slot_data *s,
			     struct sg_table *cpu, struct device *dev)
{
	unsigned int max = max_t(unsigned int, PAGE_SIZE,
				 dma_get_max_seg_size(dev) & PAGE_MASK);
	struct scatterlist *from, *to;
	unsigned int i, off, len;
	int ret;

	ret = ion_test_reachable(cpu);
	if (ret)
		return ret;
	ret = sg_alloc_table(&s->copy, ion_test_pieces(cpu, max), GFP_KERNEL);
	if (ret)
		return ret;
	to = s->copy.sgl;
	for_each_sgtable_sg(cpu, from, i) {
		for (off = 0; off < from->length; off += len) {
			len = min(from->length - off, max);
			sg_set_page(to, nth_page(sg_page(from),
						 (from->offset + off) >>
						 PAGE_SHIFT),
				    len, (from->offset + off) & ~PAGE_MASK);
			to = sg_next(to);
		}
	}
	ret = dma_map_sgtable(dev, &s->copy, DMA_BIDIRECTIONAL, 0);
	if (ret) {
		sg_free_table(&s->copy);
		return ret;
	}
	s->dma_sgt = &s->copy;
	s->mapped = true;
	return 0;
}

static int ion_test_import_client(struct ion_test_file *tf,
				  struct ion_test_slot_data *s,
				  struct ion_test_import *arg)
{
	struct device *dev = ion_test_edu_device();
	struct sg_table *cpu;
	ion_phys_addr_t phys;
	size_t len;

	s->handle = ion_import_fd(tf->client, arg->fd);
	if (IS_ERR_OR_NULL(s->handle))
		return s->handle ? PTR_ERR(s->handle) : -EINVAL;
	cpu = ion_sg_table(tf->client, s->handle);
	if (IS_ERR_OR_NULL(cpu)) {
		ion_free(tf->client, s->handle);
		return cpu ? PTR_ERR(cpu) : -EINVAL;
	}
	s->cpu = cpu;
	s->size = ion_test_sgt_size(cpu);
	arg->cpu_segs = cpu->orig_nents;
	arg->cpu_phys = sg_phys(cpu->sgl);
	arg->phys_err = ion_phys(tf->client, s->handle, &phys, &len);
	if (!arg->phys_err)
		arg->phys = phys;
	arg->dma_err = dev ? ion_test_map_copy(s, cpu, dev) : -ENODEV;
	return 0;
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

/*
 * Without an IOMMU, may edu DMA to every page of @dmabuf?  The pages of a
 * dma-buf ion did not export are known only through a mapping, so map it
 * for the probe device first and look at the addresses.
 */
static int ion_test_preflight(struct dma_buf *dmabuf)
{
	u64 limit = DMA_BIT_MASK(ion_test_edu_dma_bits());
	struct dma_buf_attachment *attach;
	struct scatterlist *sg;
	struct sg_table *sgt;
	unsigned int i;
	int ret = 0;

	if (ion_test_edu_iommu())
		return 0;
	attach = dma_buf_attach(dmabuf, &ion_test_probe_dev->dev);
	if (IS_ERR(attach))
		return PTR_ERR(attach);
	sgt = dma_buf_map_attachment_unlocked(attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto out_detach;
	}
	for_each_sgtable_dma_sg(sgt, sg, i)
		if (sg_dma_address(sg) + sg_dma_len(sg) - 1 > limit)
			ret = -ERANGE;
	dma_buf_unmap_attachment_unlocked(attach, sgt, DMA_BIDIRECTIONAL);
out_detach:
	dma_buf_detach(dmabuf, attach);
	return ret;
}

static int ion_test_attach(struct ion_test_slot_data *s, struct device *dev)
{
	struct sg_table *sgt;

	s->attach = dma_buf_attach(s->dmabuf, dev);
	if (IS_ERR(s->attach)) {
		int ret = PTR_ERR(s->attach);

		s->attach = NULL;
		return ret;
	}
	sgt = dma_buf_map_attachment_unlocked(s->attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt)) {
		dma_buf_detach(s->dmabuf, s->attach);
		s->attach = NULL;
		return PTR_ERR(sgt);
	}
	s->dma_sgt = sgt;
	s->mapped = true;
	return 0;
}

/* The physical range of the pages of @sgt: first page, one past the top. */
static void ion_test_phys_range(struct sg_table *sgt,
				struct ion_test_import *arg)
{
	struct scatterlist *sg;
	unsigned int i;

	arg->cpu_phys = sg_phys(sgt->sgl);
	for_each_sgtable_sg(sgt, sg, i)
		arg->phys_end = max_t(u64, arg->phys_end,
				      sg_phys(sg) + sg->length);
}

/*
 * DMABUF: edu after a preflight.  EDU_FIRST, PROBE_EDU: no preflight, the
 * exporter chooses memory edu reaches (ion's auto heap), and the probe
 * device attached first for PROBE_EDU.  PROBE: the probe device alone.
 */
static int ion_test_import_dmabuf(struct ion_test_slot_data *s,
				  struct ion_test_import *arg)
{
	struct device *dev = ion_test_edu_device();

	s->dmabuf = dma_buf_get(arg->fd);
	if (IS_ERR(s->dmabuf))
		return PTR_ERR(s->dmabuf);
	s->size = s->dmabuf->size;
	arg->phys_err = -EOPNOTSUPP;
	if (s->mode == ION_TEST_MODE_PROBE) {
		arg->dma_err = ion_test_attach(s, &ion_test_probe_dev->dev);
		return 0;
	}
	if (!dev) {
		arg->dma_err = -ENODEV;
		return 0;
	}
	if (s->mode == ION_TEST_MODE_DMABUF) {
		arg->dma_err = ion_test_preflight(s->dmabuf);
		if (!arg->dma_err)
			arg->dma_err = ion_test_attach(s, dev);
		return 0;
	}
	if (s->mode == ION_TEST_MODE_PROBE_EDU) {
		s->probe = dma_buf_attach(s->dmabuf, &ion_test_probe_dev->dev);
		if (IS_ERR(s->probe)) {
			dma_buf_put(s->dmabuf);
			return PTR_ERR(s->probe);
		}
	}
	arg->dma_err = ion_test_attach(s, dev);
	if (!arg->dma_err)
		ion_test_phys_range(s->dma_sgt, arg);
	return 0;
}

static void ion_test_slot_free(struct ion_test_file *tf,
			       struct ion_test_slot_data *s)
{
	struct device *dev = ion_test_edu_device();

	if (s->mode == ION_TEST_MODE_CLIENT) {
		if (s->mapped) {
			dma_unmap_sgtable(dev, &s->copy, DMA_BIDIRECTIONAL, 0);
			sg_free_table(&s->copy);
		}
		ion_free(tf->client, s->handle);
	} else {
		if (s->attach) {
			dma_buf_unmap_attachment_unlocked(s->attach, s->dma_sgt,
							  DMA_BIDIRECTIONAL);
			dma_buf_detach(s->dmabuf, s->attach);
		}
		if (s->probe)
			dma_buf_detach(s->dmabuf, s->probe);
		dma_buf_put(s->dmabuf);
	}
	kfree(s);
}

static long ion_test_ioc_import(struct ion_test_file *tf, void __user *uarg)
{
	struct ion_test_import arg;
	struct ion_test_slot_data *s;
	unsigned int slot;
	int ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.reserved || !arg.mode || arg.mode > ION_TEST_MODE_PROBE)
		return -EINVAL;
	for (slot = 0; slot < ION_TEST_MAX_SLOTS; slot++)
		if (!tf->slots[slot])
			break;
	if (slot == ION_TEST_MAX_SLOTS)
		return -ENOSPC;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->mode = arg.mode;
	arg = (struct ion_test_import){ .fd = arg.fd, .mode = arg.mode };
	if (s->mode == ION_TEST_MODE_CLIENT)
		ret = ion_test_import_client(tf, s, &arg);
	else
		ret = ion_test_import_dmabuf(s, &arg);
	if (ret) {
		kfree(s);
		return ret;
	}
	arg.slot = slot;
	arg.size = s->size;
	if (s->mapped) {
		arg.dma_addr = sg_dma_address(s->dma_sgt->sgl);
		arg.dma_segs = s->dma_sgt->nents;
	}
	if (copy_to_user(uarg, &arg, sizeof(arg))) {
		ion_test_slot_free(tf, s);
		return -EFAULT;
	}
	tf->slots[slot] = s;
	return 0;
}

/**
 * ion_test_slot() - an import of a file by slot number
 * @tf:   the file, its lock held
 * @slot: slot number from user space
 *
 * Context: Process context, under @tf->lock.
 * Return: the import, or NULL for a bad or free slot.
 */
struct ion_test_slot_data *ion_test_slot(struct ion_test_file *tf, u32 slot)
{
	lockdep_assert_held(&tf->lock);
	return slot < ION_TEST_MAX_SLOTS ? tf->slots[slot] : NULL;
}

static long ion_test_ioc_release(struct ion_test_file *tf, void __user *uarg)
{
	struct ion_test_slot arg;
	struct ion_test_slot_data *s;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	s = ion_test_slot(tf, arg.slot);
	if (arg.reserved || !s)
		return -EINVAL;
	tf->slots[arg.slot] = NULL;
	ion_test_slot_free(tf, s);
	return 0;
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
	return 0;
}

static int ion_test_release(struct inode *inode, struct file *file)
{
	struct ion_test_file *tf = file->private_data;
	unsigned int i;

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
	ret = ion_test_edu_register();
	if (ret)
		goto err_unregister_probe;
	ret = misc_register(&ion_test_miscdev);
	if (ret)
		goto err_unregister_edu;
	return 0;

err_unregister_edu:
	ion_test_edu_unregister();
err_unregister_probe:
	platform_device_unregister(ion_test_probe_dev);
	return ret;
}

static void __exit ion_test_exit(void)
{
	misc_deregister(&ion_test_miscdev);
	ion_test_edu_unregister();
	platform_device_unregister(ion_test_probe_dev);
}

module_init(ion_test_init);
module_exit(ion_test_exit);
MODULE_DESCRIPTION("ion test DMA importer for QEMU's edu device");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(ION);
MODULE_IMPORT_NS(DMA_BUF);
