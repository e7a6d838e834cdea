// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion_test: imports (ION_TEST_IOC_IMPORT, ION_TEST_IOC_RELEASE), each
 * mapped for edu when edu can reach it, and undone slot by slot.
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
#include <linux/ion.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ion_test.h"
#include "ion_test_priv.h"

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
	/*
	 * Synced by hand around each transfer (ion_test_sync()), so no
	 * sync at map and unmap; that also lets several slots map one
	 * buffer at once, which DMA-API debugging reports as overlapping
	 * mappings otherwise ("cacheline tracking EEXIST").
	 */
	ret = dma_map_sgtable(dev, &s->copy, DMA_BIDIRECTIONAL,
			      DMA_ATTR_SKIP_CPU_SYNC);
	if (ret) {
		sg_free_table(&s->copy);
		return ret;
	}
	s->dma_sgt = &s->copy;
	s->dma_dev = dev;
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
	attach = dma_buf_attach(dmabuf, ion_test_probe_device());
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
	s->dma_dev = dev;
	s->mapped = true;
	return 0;
}

/*
 * The physical range of the buffer's pages: first page, one past the top.
 * Read from a kernel client's own table of the buffer (ion_sg_table()),
 * never from the importer's mapped table: an importer must not look at
 * the pages of what dma_buf_map_attachment() returns, and with
 * CONFIG_DMABUF_DEBUG (the debug kernel) dma-buf scrambles them to catch
 * importers that do.  The buffer is backed by now (edu mapped it).
 */
static void ion_test_phys_range(struct ion_test_file *tf,
				struct ion_test_import *arg)
{
	struct ion_handle *h = ion_import_fd(tf->client, arg->fd);
	struct scatterlist *sg;
	struct sg_table *sgt;
	unsigned int i;

	if (IS_ERR_OR_NULL(h))
		return;
	sgt = ion_sg_table(tf->client, h);
	if (!IS_ERR_OR_NULL(sgt)) {
		arg->cpu_phys = sg_phys(sgt->sgl);
		for_each_sgtable_sg(sgt, sg, i)
			arg->phys_end = max_t(u64, arg->phys_end,
					      sg_phys(sg) + sg->length);
	}
	ion_free(tf->client, h);
}

/*
 * @dev attaches as the slot's second attachment and maps once, then
 * unmaps; the attachment stays until the release.  The map's result in
 * @arg->dma_err, its first DMA address and segments when it succeeded.
 * NOMASK: the mask-less device, whose map the exporter must refuse.
 * PROBE_IDLE: the probe device, as a driver between two uses.
 */
static int ion_test_import_map_once(struct ion_test_slot_data *s,
				    struct device *dev,
				    struct ion_test_import *arg)
{
	struct sg_table *sgt;

	s->probe = dma_buf_attach(s->dmabuf, dev);
	if (IS_ERR(s->probe)) {
		arg->dma_err = PTR_ERR(s->probe);
		s->probe = NULL;
		return 0;
	}
	sgt = dma_buf_map_attachment_unlocked(s->probe, DMA_BIDIRECTIONAL);
	arg->dma_err = PTR_ERR_OR_ZERO(sgt);
	if (IS_ERR(sgt))
		return 0;
	arg->dma_addr = sg_dma_address(sgt->sgl);
	arg->dma_segs = sgt->nents;
	dma_buf_unmap_attachment_unlocked(s->probe, sgt, DMA_BIDIRECTIONAL);
	return 0;
}

/* PROBE_TWICE: the probe device's attachment mapped, then again. */
static int ion_test_import_twice(struct ion_test_slot_data *s,
				 struct ion_test_import *arg)
{
	struct sg_table *sgt;

	arg->dma_err = ion_test_attach(s, ion_test_probe_device());
	if (arg->dma_err)
		return 0;
	sgt = dma_buf_map_attachment_unlocked(s->attach, DMA_BIDIRECTIONAL);
	arg->dma_err = PTR_ERR_OR_ZERO(sgt);
	if (!IS_ERR(sgt))
		dma_buf_unmap_attachment_unlocked(s->attach, sgt,
						  DMA_BIDIRECTIONAL);
	return 0;
}

/* Bits PROBE_SCRAMBLE flips in each DMA address: none ever mapped. */
#define ION_TEST_SCRAMBLE	(0x5a5aULL << 28)

/*
 * PROBE_SCRAMBLE: the probe device's mapping, then its table changed
 * and a CPU access; it stays mapped, changed, until the release.
 */
static int ion_test_import_scramble(struct ion_test_slot_data *s,
				    struct ion_test_import *arg)
{
	struct scatterlist *sg;
	unsigned int i;

	arg->dma_err = ion_test_attach(s, ion_test_probe_device());
	if (arg->dma_err)
		return 0;
	for_each_sgtable_dma_sg(s->dma_sgt, sg, i)
		sg_dma_address(sg) ^= ION_TEST_SCRAMBLE;
	arg->dma_err = dma_buf_begin_cpu_access(s->dmabuf, DMA_BIDIRECTIONAL);
	if (!arg->dma_err)
		arg->dma_err = dma_buf_end_cpu_access(s->dmabuf,
						      DMA_BIDIRECTIONAL);
	return 0;
}

/*
 * DMABUF: edu after a preflight.  EDU_FIRST, PROBE_EDU: no preflight, the
 * exporter chooses memory edu reaches (ion's auto heap), and the probe
 * device attached first for PROBE_EDU.  PROBE: the probe device alone.
 * NOMASK: the mask-less device attached alone, its map refused.
 * PROBE_TWICE: the probe device's attachment mapped twice.
 * PROBE_SCRAMBLE: the probe device's table changed, then a CPU access.
 * PROBE_IDLE: the probe device mapped once, its attachment kept.
 */
static int ion_test_import_dmabuf(struct ion_test_file *tf,
				  struct ion_test_slot_data *s,
				  struct ion_test_import *arg)
{
	struct device *dev = ion_test_edu_device();

	s->dmabuf = dma_buf_get(arg->fd);
	if (IS_ERR(s->dmabuf))
		return PTR_ERR(s->dmabuf);
	s->size = s->dmabuf->size;
	arg->phys_err = -EOPNOTSUPP;
	if (s->mode == ION_TEST_MODE_NOMASK)
		return ion_test_import_map_once(s, ion_test_nomask_device(),
						arg);
	if (s->mode == ION_TEST_MODE_PROBE) {
		arg->dma_err = ion_test_attach(s, ion_test_probe_device());
		return 0;
	}
	if (s->mode == ION_TEST_MODE_PROBE_TWICE)
		return ion_test_import_twice(s, arg);
	if (s->mode == ION_TEST_MODE_PROBE_SCRAMBLE)
		return ion_test_import_scramble(s, arg);
	if (s->mode == ION_TEST_MODE_PROBE_IDLE)
		return ion_test_import_map_once(s, ion_test_probe_device(),
						arg);
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
		s->probe = dma_buf_attach(s->dmabuf, ion_test_probe_device());
		if (IS_ERR(s->probe)) {
			dma_buf_put(s->dmabuf);
			return PTR_ERR(s->probe);
		}
	}
	arg->dma_err = ion_test_attach(s, dev);
	if (!arg->dma_err)
		ion_test_phys_range(tf, arg);
	return 0;
}

/**
 * ion_test_slot_unmap() - undo an import's DMA mapping, if it has one
 * @s: the import, its file's lock held
 *
 * In dma-buf modes the attachment goes too; the import itself stays.
 *
 * Context: Process context; sleeps.
 */
void ion_test_slot_unmap(struct ion_test_slot_data *s)
{
	if (!s->mapped)
		return;
	if (s->mode == ION_TEST_MODE_CLIENT) {
		dma_unmap_sgtable(s->dma_dev, &s->copy, DMA_BIDIRECTIONAL,
				  DMA_ATTR_SKIP_CPU_SYNC);
		sg_free_table(&s->copy);
	} else {
		dma_buf_unmap_attachment_unlocked(s->attach, s->dma_sgt,
						  DMA_BIDIRECTIONAL);
		dma_buf_detach(s->dmabuf, s->attach);
		s->attach = NULL;
	}
	s->dma_sgt = NULL;
	s->dma_dev = NULL;
	s->mapped = false;
}

/**
 * ion_test_slot_free() - undo an import and free it
 * @tf: its file, locked (or being released)
 * @s:  the import, no longer in @tf's slots
 *
 * Context: Process context; sleeps.
 */
void ion_test_slot_free(struct ion_test_file *tf, struct ion_test_slot_data *s)
{
	ion_test_slot_unmap(s);
	if (s->mode == ION_TEST_MODE_CLIENT) {
		ion_free(tf->client, s->handle);
	} else {
		if (s->probe)
			dma_buf_detach(s->dmabuf, s->probe);
		dma_buf_put(s->dmabuf);
	}
	kfree(s);
}

/**
 * ion_test_ioc_import() - ION_TEST_IOC_IMPORT
 * @tf:	  the file, its lock held
 * @uarg: struct ion_test_import
 *
 * Context: Process context, under @tf->lock.
 * Return: 0 (whether it could be mapped is in the argument) or -errno.
 */
long ion_test_ioc_import(struct ion_test_file *tf, void __user *uarg)
{
	struct ion_test_import arg;
	struct ion_test_slot_data *s;
	unsigned int slot;
	int ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.reserved || !arg.mode ||
	    arg.mode > ION_TEST_MODE_PROBE_IDLE)
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
		ret = ion_test_import_dmabuf(tf, s, &arg);
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

/**
 * ion_test_ioc_release() - ION_TEST_IOC_RELEASE
 * @tf:	  the file, its lock held
 * @uarg: struct ion_test_slot
 *
 * Context: Process context, under @tf->lock.
 * Return: 0, -EFAULT, or -EINVAL for a free or bad slot.
 */
long ion_test_ioc_release(struct ion_test_file *tf, void __user *uarg)
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
