// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: user mappings of a buffer (dma_buf_ops.mmap, ion_dmabuf.c), and
 * the fault handler of a deferred heap's buffer mapped before its first
 * use.
 *
 * A private mapping (MAP_PRIVATE: copy-on-write) works only within one
 * chunk of the buffer: remap_pfn_range() maps such a mapping only whole,
 * so one that spans chunks fails with -EINVAL (mainline's heaps refuse
 * it, or fail alike), and a deferred heap's buffer has been backed by
 * then.
 *
 * An uncached buffer takes no private mapping at all (-EINVAL, as
 * mainline's heaps answer every private one): copy-on-write would put the
 * write-combined page protection on the anonymous copies, which the kernel
 * fills through their cacheable linear map (an attribute alias; on arm64
 * the copy stays dirty in the cache under a non-cacheable mapping).
 */
#include <linux/dma-buf.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>

#include "ion_priv.h"
#include "trace/ion_trace.h"

/*
 * The default user mapping: remap the sg chunks from vm_pgoff on, under
 * the buffer's lock, so that the backing cannot move meanwhile.
 */
static int ion_dmabuf_mmap_pages(struct ion_core_buffer *buffer,
				 struct vm_area_struct *vma)
{
	unsigned long addr = vma->vm_start, skip = vma->vm_pgoff;
	unsigned long left = vma_pages(vma), npages, n;
	struct scatterlist *sg;
	struct sg_table *sgt;
	unsigned int i;
	int ret;

	lockdep_assert_held(&buffer->lock);
	sgt = __ion_buffer_sg_table(buffer);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	ret = ion_pfnmap_prepare(vma);
	if (ret)
		return ret;
	for_each_sgtable_sg(sgt, sg, i) {
		if (WARN_ON_ONCE(sg->offset || !PAGE_ALIGNED(sg->length)))
			return -EINVAL;
		npages = sg->length >> PAGE_SHIFT;
		if (skip >= npages) {
			skip -= npages;
			continue;
		}
		n = min(npages - skip, left);
		ret = remap_pfn_range(vma, addr, page_to_pfn(sg_page(sg)) + skip,
				      n << PAGE_SHIFT, vma->vm_page_prot);
		if (ret)
			return ret;
		addr += n << PAGE_SHIFT;
		left -= n;
		skip = 0;
		if (!left)
			return 0;
	}
	return -EINVAL;
}

/*
 * A deferred buffer mapped before its first use: backed at the first
 * fault (as the first use, through map_dma), then each page inserted as
 * it is touched.  The VMA's file is the dma-buf's, which keeps the buffer.
 *
 * A backing that cannot be had is SIGBUS, whatever the -errno, not
 * VM_FAULT_OOM: the heap allocates without waking the OOM killer (nor
 * its cgroup's), so no one would free memory for a retry, and the
 * page-fault handler retries a VM_FAULT_OOM for ever ("Huh VM_FAULT_OOM
 * leaked out"): a task touching a buffer its memory cgroup cannot afford
 * spun at full speed until killed.
 */
static vm_fault_t ion_dmabuf_fault(struct vm_fault *vmf)
{
	struct ion_core_buffer *buffer = vmf->vma->vm_private_data;
	unsigned long pgoff = vmf->pgoff, n;
	struct scatterlist *sg;
	struct sg_table *sgt;
	unsigned int i;

	sgt = ion_buffer_sg_table(buffer);
	if (IS_ERR(sgt))
		return VM_FAULT_SIGBUS;
	for_each_sgtable_sg(sgt, sg, i) {
		n = sg->length >> PAGE_SHIFT;
		if (pgoff < n)
			return vmf_insert_pfn(vmf->vma, vmf->address,
					      page_to_pfn(sg_page(sg)) + pgoff);
		pgoff -= n;
	}
	return VM_FAULT_SIGBUS;
}

/*
 * Every user mapping that the core makes is counted (&ion_core_buffer.
 * mmap_count): while one lives, the backing must not move.  open runs
 * for a VMA copied by fork or split off by a partial munmap or mprotect.
 */
static void ion_dmabuf_vm_open(struct vm_area_struct *vma)
{
	struct ion_core_buffer *buffer = vma->vm_private_data;

	mutex_lock(&buffer->lock);
	buffer->mmap_count++;
	mutex_unlock(&buffer->lock);
}

static void ion_dmabuf_vm_close(struct vm_area_struct *vma)
{
	struct ion_core_buffer *buffer = vma->vm_private_data;

	mutex_lock(&buffer->lock);
	buffer->mmap_count--;
	mutex_unlock(&buffer->lock);
}

/* A heap's &ion_heap.whole_maps: no part of a mapping goes alone. */
static int ion_dmabuf_may_split(struct vm_area_struct *vma,
				unsigned long addr)
{
	struct ion_core_buffer *buffer = vma->vm_private_data;

	return buffer->base.heap->whole_maps ? -EINVAL : 0;
}

static const struct vm_operations_struct ion_dmabuf_vm_ops = {
	.open = ion_dmabuf_vm_open,
	.close = ion_dmabuf_vm_close,
	.may_split = ion_dmabuf_may_split,
};

static const struct vm_operations_struct ion_dmabuf_deferred_vm_ops = {
	.open = ion_dmabuf_vm_open,
	.close = ion_dmabuf_vm_close,
	.may_split = ion_dmabuf_may_split,
	.fault = ion_dmabuf_fault,
};

/**
 * ion_dmabuf_mmap() - map a buffer into user space (dma_buf_ops.mmap)
 * @dmabuf: the buffer's dma-buf
 * @vma:    the user mapping, at most the buffer's size from vm_pgoff on
 *
 * An uncached buffer is mapped write-combined, and only shared (DOC
 * above: no copy-on-write mapping).  A heap's map_user op maps
 * it, or else its sg table's pages are remapped; a deferred heap's buffer
 * still waiting for its first use gets pages at the first fault instead,
 * unless the mapping is private (and so may become writable).  The
 * mappings the core makes are counted until they are unmapped
 * (ion_buffer_mapped()), and cannot be split where the heap says so
 * (&ion_heap.whole_maps).
 *
 * Context: Process context; sleeps; the caller's mmap_lock held, takes
 * &ion_core_buffer.lock.
 * Return: 0, -EINVAL for a range outside the buffer or a private mapping
 * of an uncached buffer, or the -errno of the mapping.
 */
int ion_dmabuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct ion_core_buffer *buffer = dmabuf->priv;
	struct ion_heap *heap = buffer->base.heap;
	unsigned long end;
	int ret = 0;

	if (check_add_overflow(vma->vm_pgoff, vma_pages(vma), &end) ||
	    end > buffer->base.size >> PAGE_SHIFT)
		return -EINVAL;
	if (!ion_buffer_cached(buffer)) {
		if (ion_vma_is_cow(vma))
			return -EINVAL;
		vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	}
	trace_ion_mmap(buffer, vma);
	if (heap->ops->map_user)
		return heap->ops->map_user(heap, &buffer->base, vma);
	vma->vm_private_data = buffer;
	mutex_lock(&buffer->lock);
	/*
	 * A private (copy-on-write) mapping cannot take pfns one
	 * fault at a time (vmf_insert_pfn() BUGs on it): it backs the buffer
	 * now and is mapped whole, as every other buffer is.
	 */
	if (!ion_vma_is_cow(vma) && heap->ops->attach &&
	    !buffer->base.sg_table) {
		vm_flags_set(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND |
			     VM_DONTDUMP);
		vma->vm_ops = &ion_dmabuf_deferred_vm_ops;
	} else {
		ret = ion_dmabuf_mmap_pages(buffer, vma);
		vma->vm_ops = &ion_dmabuf_vm_ops;
	}
	if (!ret)
		buffer->mmap_count++;
	mutex_unlock(&buffer->lock);
	return ret;
}
