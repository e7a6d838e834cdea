// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: a buffer's backing as the core hands it out - the sg table of CPU
 * pages, the counted kernel mapping, the physical address - and the
 * one-entry table of single-chunk buffers.
 */
#include <linux/err.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "ion_priv.h"
#include "trace/ion_trace.h"

/* Longest heap detail an ion_backing event carries, with its NUL. */
#define ION_BACKING_DETAIL_LEN	256

/**
 * ion_buffer_one_chunk() - describe a buffer of one chunk, with no allocation
 * @buffer: the buffer being allocated
 * @page:   the chunk's first page
 * @len:    the chunk's length in bytes, at most ION_CHUNK_MAX
 *
 * Sets @buffer->sg_table to a one-entry table that the core keeps in its
 * own buffer object, so that a heap whose buffer is a single chunk
 * allocates and frees no table: the heap's free op must not
 * sg_free_table() it (ion_buffer_is_one_chunk() tells).
 *
 * Context: Any context.
 * Return: the table.
 */
struct sg_table *ion_buffer_one_chunk(struct ion_buffer *buffer,
				      struct page *page, unsigned int len)
{
	struct ion_core_buffer *core = to_core_buffer(buffer);
	struct scatterlist *sg = &core->one_sg;

	memset(sg, 0, sizeof(*sg));
	sg_init_marker(sg, 1);
	sg_set_page(sg, page, len, 0);
	core->one_table = (struct sg_table){
		.sgl = sg, .nents = 1, .orig_nents = 1,
	};
	buffer->sg_table = &core->one_table;
	return buffer->sg_table;
}
EXPORT_SYMBOL_NS_GPL(ion_buffer_one_chunk, ION);

/**
 * ion_buffer_is_one_chunk() - is @buffer's table the core's one-entry table?
 * @buffer: the buffer
 *
 * Context: Any context.
 * Return: true when ion_buffer_one_chunk() set up @buffer->sg_table.
 */
bool ion_buffer_is_one_chunk(const struct ion_buffer *buffer)
{
	const struct ion_core_buffer *core =
		container_of(buffer, const struct ion_core_buffer, base);

	return buffer->sg_table == &core->one_table;
}
EXPORT_SYMBOL_NS_GPL(ion_buffer_is_one_chunk, ION);

/*
 * The ion_backing event of a backing chosen (@cause "first_use") or moved
 * ("move", for @dev), with the heap's detail on the buffer; @t0 is the
 * start in ns, taken only while the event is enabled.
 */
static void ion_buffer_trace_backing(struct ion_core_buffer *buffer,
				     const char *cause, struct device *dev,
				     int ret, u64 t0)
{
	struct ion_heap *heap = buffer->base.heap;
	char detail[ION_BACKING_DETAIL_LEN] = "-";

	if (!trace_ion_backing_enabled())
		return;
	if (heap->ops->debug_buffer)
		heap->ops->debug_buffer(heap, &buffer->base, detail,
					sizeof(detail));
	trace_ion_backing(buffer, cause, dev, ret,
			  t0 ? ktime_get_ns() - t0 : 0, detail);
}

/**
 * __ion_buffer_sg_table() - the buffer's backing as CPU pages, locked
 * @buffer: the buffer; its lock is held
 *
 * Sets the table up through the heap's map_dma the first time.
 *
 * Context: Process context; sleeps; &ion_core_buffer.lock held.
 * Return: the sg table, valid until the buffer is freed, or an ERR_PTR.
 */
struct sg_table *__ion_buffer_sg_table(struct ion_core_buffer *buffer)
{
	struct ion_heap *heap = buffer->base.heap;
	struct sg_table *sgt;
	u64 t0;

	lockdep_assert_held(&buffer->lock);
	if (buffer->base.sg_table)
		return buffer->base.sg_table;
	if (WARN_ON_ONCE(!heap->ops->map_dma))
		return ERR_PTR(-EINVAL);
	t0 = trace_ion_backing_enabled() ? ktime_get_ns() : 0;
	sgt = heap->ops->map_dma(heap, &buffer->base);
	if (IS_ERR_OR_NULL(sgt))
		sgt = sgt ? sgt : ERR_PTR(-ENOMEM);
	ion_buffer_trace_backing(buffer, "first_use", NULL,
				 PTR_ERR_OR_ZERO(sgt), t0);
	if (IS_ERR(sgt))
		return sgt;
	buffer->base.sg_table = sgt;
	buffer->heap_mapped_dma = true;
	return sgt;
}

/**
 * ion_buffer_sg_table() - the buffer's backing as CPU pages
 * @buffer: the buffer
 *
 * Context: Process context; sleeps; takes &ion_core_buffer.lock.
 * Return: the sg table, valid until the buffer is freed, or an ERR_PTR.
 */
struct sg_table *ion_buffer_sg_table(struct ion_core_buffer *buffer)
{
	struct sg_table *sgt;

	mutex_lock(&buffer->lock);
	sgt = __ion_buffer_sg_table(buffer);
	mutex_unlock(&buffer->lock);
	return sgt;
}

/**
 * ion_buffer_back_lazy() - back a buffer whose heap builds it on demand
 * @buffer: the buffer
 *
 * For the first uses that need memory but no table of their own
 * (begin_cpu_access, ion_phys): a heap with a map_dma op backs the buffer
 * now, once (a deferred heap chooses its memory here); other buffers
 * were backed at allocation.
 *
 * Context: Process context; sleeps; takes &ion_core_buffer.lock.
 * Return: 0 or the -errno of the heap's map_dma.
 */
int ion_buffer_back_lazy(struct ion_core_buffer *buffer)
{
	struct sg_table *sgt;

	if (!buffer->base.heap->ops->map_dma)
		return 0;
	sgt = ion_buffer_sg_table(buffer);
	return PTR_ERR_OR_ZERO(sgt);
}

/* The default kernel mapping: vmap the pages of the sg table. */
static void *ion_buffer_vmap_pages(struct ion_core_buffer *buffer)
{
	unsigned long npages = buffer->base.size >> PAGE_SHIFT, i = 0;
	pgprot_t prot = PAGE_KERNEL;
	struct sg_page_iter piter;
	struct sg_table *sgt;
	struct page **pages;
	void *vaddr;

	sgt = __ion_buffer_sg_table(buffer);
	if (IS_ERR(sgt))
		return ERR_CAST(sgt);
	pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return ERR_PTR(-ENOMEM);
	for_each_sgtable_page(sgt, &piter, 0) {
		if (i == npages)
			break;
		pages[i++] = sg_page_iter_page(&piter);
	}
	if (!(buffer->base.flags & ION_FLAG_CACHED))
		prot = pgprot_writecombine(prot);
	vaddr = i == npages ? vmap(pages, npages, VM_MAP, prot) : NULL;
	kvfree(pages);
	return vaddr ? vaddr : ERR_PTR(-ENOMEM);
}

/**
 * ion_buffer_kmap() - map the whole buffer in the kernel, counted
 * @buffer: the buffer
 *
 * The first user maps (through the heap's map_kernel, or by vmapping the
 * sg table write-combined unless ION_FLAG_CACHED); later users share the
 * mapping.  Undo with ion_buffer_kunmap().
 *
 * Context: Process context; sleeps; takes &ion_core_buffer.lock.
 * Return: the kernel address, or an ERR_PTR.
 */
void *ion_buffer_kmap(struct ion_core_buffer *buffer)
{
	struct ion_heap *heap = buffer->base.heap;
	void *vaddr;

	mutex_lock(&buffer->lock);
	if (buffer->kmap_count) {
		buffer->kmap_count++;
		vaddr = buffer->vaddr;
		goto out_unlock;
	}
	if (heap->ops->map_kernel)
		vaddr = heap->ops->map_kernel(heap, &buffer->base);
	else
		vaddr = ion_buffer_vmap_pages(buffer);
	if (IS_ERR_OR_NULL(vaddr)) {
		vaddr = vaddr ? vaddr : ERR_PTR(-ENOMEM);
		goto out_unlock;
	}
	buffer->vaddr = vaddr;
	buffer->kmap_count = 1;
out_unlock:
	mutex_unlock(&buffer->lock);
	return vaddr;
}

/**
 * ion_buffer_kunmap() - drop one user of the kernel mapping
 * @buffer: the buffer, mapped with ion_buffer_kmap()
 *
 * Context: Process context; sleeps; takes &ion_core_buffer.lock.
 */
void ion_buffer_kunmap(struct ion_core_buffer *buffer)
{
	struct ion_heap *heap = buffer->base.heap;

	mutex_lock(&buffer->lock);
	if (WARN_ON_ONCE(!buffer->kmap_count))
		goto out_unlock;
	if (--buffer->kmap_count)
		goto out_unlock;
	if (heap->ops->unmap_kernel)
		heap->ops->unmap_kernel(heap, &buffer->base);
	else
		vunmap(buffer->vaddr);
	buffer->vaddr = NULL;
out_unlock:
	mutex_unlock(&buffer->lock);
}

/**
 * ion_buffer_phys() - physical address and length of a contiguous buffer
 * @buffer: the buffer
 * @addr:   where to store the address
 * @len:    where to store the length
 *
 * A deferred buffer is backed first, as by ion_buffer_back_lazy(); once
 * the address is out, the backing never moves (ion_buffer_mapped()).
 *
 * Context: Process context; may sleep; takes &ion_core_buffer.lock.
 * Return: 0, -ENODEV when the heap has no phys op (its memory is not
 * contiguous), or the heap's -errno.
 */
int ion_buffer_phys(struct ion_core_buffer *buffer, phys_addr_t *addr,
		    size_t *len)
{
	struct ion_heap *heap = buffer->base.heap;
	struct sg_table *sgt;
	int ret = 0;

	if (!heap->ops->phys)
		return -ENODEV;
	mutex_lock(&buffer->lock);
	if (heap->ops->map_dma) {
		sgt = __ion_buffer_sg_table(buffer);
		ret = PTR_ERR_OR_ZERO(sgt);
	}
	if (!ret)
		ret = heap->ops->phys(heap, &buffer->base, addr, len);
	if (!ret)
		buffer->phys_pinned = true;
	mutex_unlock(&buffer->lock);
	return ret;
}

/**
 * ion_buffer_sg_table_copy() - a copy of the buffer's table that pins it
 * @buffer: the buffer
 *
 * For a kernel client's handle: the copy's holder may map it for DMA
 * without touching the buffer's shared table, and while the copy lives
 * the backing cannot move (ion_buffer_mapped()).  Give it back with
 * ion_buffer_sg_table_put().
 *
 * Context: Process context; sleeps; takes &ion_core_buffer.lock.
 * Return: the new table, or an ERR_PTR.
 */
struct sg_table *ion_buffer_sg_table_copy(struct ion_core_buffer *buffer)
{
	struct scatterlist *from, *to;
	struct sg_table *src, *sgt;
	unsigned int i;
	int ret;

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	mutex_lock(&buffer->lock);
	src = __ion_buffer_sg_table(buffer);
	ret = PTR_ERR_OR_ZERO(src);
	if (!ret)
		ret = sg_alloc_table(sgt, src->orig_nents, GFP_KERNEL);
	if (ret)
		goto err_unlock;
	to = sgt->sgl;
	for_each_sgtable_sg(src, from, i) {
		sg_set_page(to, sg_page(from), from->length, from->offset);
		to = sg_next(to);
	}
	buffer->pin_count++;
	mutex_unlock(&buffer->lock);
	return sgt;

err_unlock:
	mutex_unlock(&buffer->lock);
	kfree(sgt);
	return ERR_PTR(ret);
}

/**
 * ion_buffer_sg_table_put() - free a table from ion_buffer_sg_table_copy()
 * @buffer: the buffer
 * @sgt:    the copy
 *
 * Context: Process context; sleeps; takes &ion_core_buffer.lock.
 */
void ion_buffer_sg_table_put(struct ion_core_buffer *buffer,
			     struct sg_table *sgt)
{
	mutex_lock(&buffer->lock);
	buffer->pin_count--;
	mutex_unlock(&buffer->lock);
	sg_free_table(sgt);
	kfree(sgt);
}

/**
 * ion_buffer_mapped() - does anything use the buffer's backing where it is?
 * @buffer: the buffer
 *
 * A DMA mapping of an attachment (also one being made or undone), a user
 * mapping, the kernel mapping, a kernel client's copy of the sg table or
 * a physical address given out by ion_phys(): while any of them lives,
 * the backing must not move.
 *
 * Context: &ion_core_buffer.lock held.
 * Return: true when the backing is in use where it lies.
 */
bool ion_buffer_mapped(struct ion_core_buffer *buffer)
{
	lockdep_assert_held(&buffer->lock);
	return buffer->map_count || buffer->mmap_count || buffer->kmap_count ||
	       buffer->pin_count || buffer->phys_pinned;
}

/**
 * ion_buffer_move() - move a backed buffer to memory that @dev can use too
 * @buffer: the buffer, backed by its heap's map_dma, not mapped
 * @dev:    the device attaching, which the heap's attach op refused
 *
 * The heap's move op records @dev, backs the buffer anew from the
 * constraints of every attached device, copies the contents and frees the
 * old backing; attachments not mapped (all of them) build their tables
 * again at their next map.
 *
 * Context: Process context; sleeps; &ion_core_buffer.lock held.
 * Return: 0, -ERANGE when the heap cannot move or something has the
 * buffer mapped (ion_buffer_mapped()), or the -errno of the heap's move.
 */
int ion_buffer_move(struct ion_core_buffer *buffer, struct device *dev)
{
	struct ion_heap *heap = buffer->base.heap;
	struct sg_table *sgt;
	u64 t0;

	lockdep_assert_held(&buffer->lock);
	if (!heap->ops->move || !buffer->heap_mapped_dma ||
	    ion_buffer_mapped(buffer))
		return -ERANGE;
	t0 = trace_ion_backing_enabled() ? ktime_get_ns() : 0;
	sgt = heap->ops->move(heap, &buffer->base, dev);
	if (IS_ERR_OR_NULL(sgt))
		sgt = sgt ? sgt : ERR_PTR(-ENOMEM);
	ion_buffer_trace_backing(buffer, "move", dev, PTR_ERR_OR_ZERO(sgt), t0);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	buffer->base.sg_table = sgt;
	ion_dmabuf_drop_tables(buffer);
	return 0;
}
