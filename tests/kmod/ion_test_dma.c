// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion_test: the commands that use imports (DMA through edu, page-table
 * attributes) and the info command.
 */
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/pfn.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "ion_test.h"
#include "ion_test_priv.h"

/* DMA address of byte @off of @s and the DMA-contiguous bytes from there. */
static int ion_test_dma_at(struct ion_test_slot_data *s, u64 off,
			   dma_addr_t *addr, u32 *avail)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(s->dma_sgt, sg, i) {
		if (off < sg_dma_len(sg)) {
			*addr = sg_dma_address(sg) + off;
			*avail = sg_dma_len(sg) - off;
			return 0;
		}
		off -= sg_dma_len(sg);
	}
	return -ERANGE;
}

/* Move @len bytes at @off of @s to (or from) the start of edu's buffer. */
static int ion_test_xfer(struct ion_test_slot_data *s, u64 off, u32 len,
			 bool to_ram, u64 *first)
{
	u32 done = 0, avail, piece;
	dma_addr_t addr;
	int ret;

	while (done < len) {
		if (fatal_signal_pending(current))
			return -EINTR;
		ret = ion_test_dma_at(s, off + done, &addr, &avail);
		if (ret)
			return ret;
		piece = min(len - done, avail);
		if (!done)
			*first = addr;
		ret = ion_test_edu_xfer(addr, done, piece, to_ram);
		if (ret)
			return ret;
		done += piece;
	}
	return 0;
}

static bool ion_test_range_ok(struct ion_test_slot_data *s, u64 off, u32 len)
{
	/* Mapped for edu: not the probe device's mapping of a PROBE mode. */
	return s->mapped && s->dma_dev == ion_test_edu_device() &&
	       off <= s->size && len <= s->size - off;
}

static void ion_test_sync(struct ion_test_slot_data *s, bool for_device)
{
	/* dma-buf mode: the exporter syncs on DMA_BUF_IOCTL_SYNC. */
	if (s->mode != ION_TEST_MODE_CLIENT)
		return;
	if (for_device)
		dma_sync_sgtable_for_device(s->dma_dev, &s->copy,
					    DMA_BIDIRECTIONAL);
	else
		dma_sync_sgtable_for_cpu(s->dma_dev, &s->copy,
					 DMA_BIDIRECTIONAL);
}

/**
 * ion_test_ioc_dma() - ION_TEST_IOC_DMA: source range to edu and back
 * @tf:   the file, its lock held
 * @uarg: struct ion_test_dma
 *
 * Context: Process context, under @tf->lock; sleeps for the transfers.
 * Return: 0 or the -errno listed in ion_test.h.
 */
long ion_test_ioc_dma(struct ion_test_file *tf, void __user *uarg)
{
	struct ion_test_slot_data *src, *dst;
	struct ion_test_dma arg;
	int ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	src = ion_test_slot(tf, arg.src_slot);
	dst = ion_test_slot(tf, arg.dst_slot);
	if (arg.flags || !src || !dst || !arg.len ||
	    arg.len > ION_TEST_MAX_XFER)
		return -EINVAL;
	if (!ion_test_edu_device())
		return -ENODEV;
	if (!ion_test_range_ok(src, arg.src_off, arg.len) ||
	    !ion_test_range_ok(dst, arg.dst_off, arg.len))
		return -ERANGE;

	ion_test_sync(src, true);
	ret = ion_test_xfer(src, arg.src_off, arg.len, false, &arg.src_dma);
	if (ret)
		return ret;
	ion_test_sync(dst, true);
	ret = ion_test_xfer(dst, arg.dst_off, arg.len, true, &arg.dst_dma);
	ion_test_sync(dst, false);
	if (ret)
		return ret;
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}

/**
 * ion_test_ioc_info() - ION_TEST_IOC_INFO
 * @tf:   the open file (unused: the answer is the module's)
 * @uarg: struct ion_test_info
 *
 * Context: Process context.
 * Return: 0 or -EFAULT.
 */
long ion_test_ioc_info(struct ion_test_file *tf, void __user *uarg)
{
	struct ion_test_info info = {
		.has_edu = !!ion_test_edu_device(),
		.dma_bits = ion_test_edu_dma_bits(),
		.iommu = ion_test_edu_iommu(),
		.max_xfer = ION_TEST_MAX_XFER,
		.attr_query = ION_TEST_HAVE_ATTR,
		.coherent = ion_test_edu_coherent(),
		.iommu_group = ion_test_edu_iommu_group(),
	};

	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

/**
 * ion_test_ioc_attr() - ION_TEST_IOC_ATTR: cache bits of a buffer's PTEs
 * @tf:   the file, its lock held
 * @uarg: struct ion_test_attr
 *
 * Context: Process context, under @tf->lock; takes the mmap lock.
 * Return: 0 or the -errno listed in ion_test.h.
 */
long ion_test_ioc_attr(struct ion_test_file *tf, void __user *uarg)
{
	struct ion_test_slot_data *s;
	struct page *page = NULL;
	struct sg_page_iter piter;
	struct ion_test_attr arg;
	u32 n = 0;
	u64 bits = 0;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	s = ion_test_slot(tf, arg.slot);
	if (!s || s->mode != ION_TEST_MODE_CLIENT)
		return -EINVAL;
	for_each_sgtable_page(s->cpu, &piter, 0)
		if (n++ == arg.page) {
			page = sg_page_iter_page(&piter);
			break;
		}
	if (!page)
		return -EINVAL;
	if (!ION_TEST_HAVE_ATTR)
		return -EOPNOTSUPP;
	arg.kernel_err = ion_test_kernel_attr(page, &bits);
	arg.kernel_bits = bits;
	bits = 0;
	arg.user_err = arg.uaddr ? ion_test_user_attr(arg.uaddr, &bits) :
		       -ENOENT;
	arg.user_bits = bits;
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}

/**
 * ion_test_ioc_phys_attr() - ION_TEST_IOC_PHYS_ATTR: the linear-map entry
 *			      of any page of RAM
 * @tf:   the file
 * @uarg: struct ion_test_phys_attr
 *
 * For a page that left ion: whatever its owner now, a page back in the
 * page allocator must be write-back.
 *
 * Context: Process context.
 * Return: 0 or -errno (see struct ion_test_phys_attr).
 */
long ion_test_ioc_phys_attr(struct ion_test_file *tf, void __user *uarg)
{
	struct ion_test_phys_attr arg;
	struct page *page;
	u64 bits = 0;
	int ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.reserved || !pfn_valid(PHYS_PFN(arg.phys)))
		return -EINVAL;
	if (!ION_TEST_HAVE_ATTR)
		return -EOPNOTSUPP;
	page = pfn_to_page(PHYS_PFN(arg.phys));
	ret = ion_test_kernel_attr(page, &bits);
	if (ret)
		return ret;
	arg.kernel_bits = bits;
	arg.map_kb = ion_test_kernel_map_kb(page);
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}
