// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the dma-buf side of a buffer - dma_buf_ops for importers, CPU
 * access, kernel mappings (user mappings: ion_dmabuf_mmap.c).
 */
#include <linux/ctype.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/error-injection.h>
#include <linux/fcntl.h>
#include <linux/highmem.h>
#include <linux/iosys-map.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "ion_fail.h"
#include "ion_priv.h"
#include "trace/ion_trace.h"

/**
 * DOC: dma-buf
 *
 * Every buffer is one dma-buf (exporter name "ion").  Each attachment gets
 * its own copy of the buffer's sg table (made at attach, or at the first
 * map while a deferred heap's buffer has no backing yet: the heap's attach
 * op has then only recorded the device), so each device has its own DMA
 * addresses, with the chunks split into segments the device takes (its
 * dma_get_max_seg_size(), 64 KiB without dma_parms, and segment
 * boundary); map_dma_buf maps that copy with dma_map_sgtable() for the
 * attached device and gives the importer a copy of the mapped table
 * (the core may scramble what it gives out: ion_dmabuf_sg.c); a device
 * without a DMA mask may attach (an importer for CPU access), but its map
 * is refused with -EINVAL, where the DMA API would warn and map nothing.
 * An attachment is mapped once at a time: a second map_dma_buf before the
 * first one's unmap gets -EBUSY.  Every mapping is made with
 * DMA_ATTR_SKIP_CPU_SYNC,
 * followed by an explicit dma_sync_sgtable_for_device() (and unmapped
 * after a dma_sync_sgtable_for_cpu()): the same maintenance and swiotlb
 * bouncing as a plain map and unmap, but the DMA API (CONFIG_DMA_API_DEBUG) then
 * knows that ion does the syncing of memory other mappings overlap - the
 * DMA heap's own device holds a DMA-API allocation of every buffer it
 * gives out, and one buffer may be mapped by several importers at once;
 * without the attribute each such mapping is a "cacheline tracking EEXIST,
 * overlapping mappings aren't supported" report.  Uncached buffers (no
 * ION_FLAG_CACHED) are synced too: they hold no dirty CPU cache line, but
 * a mapping that swiotlb bounces (a device that cannot reach the pages,
 * swiotlb=force, a confidential guest) has its data copied to and from
 * the bounce buffer only by these syncs; where there is neither bouncing
 * nor maintenance to do (a coherent device: dma_skip_sync) they cost
 * nothing.  begin_cpu_access and end_cpu_access (DMA_BUF_IOCTL_SYNC,
 * ION_IOC_SYNC) sync every mapped attachment in the direction it was
 * mapped with, and for cached buffers the kernel mapping if there is one;
 * the heap's own begin/end_cpu_access run after that for every buffer.
 *
 * User mappings are write-combined for uncached buffers.  Without a heap
 * map_user op the pages of the sg table are remapped chunk by chunk,
 * starting vm_pgoff pages into the buffer, and never past its end (a
 * private one within one chunk only: ion_dmabuf_mmap.c).  A
 * deferred heap's buffer mapped before its first use is not backed by
 * the mmap: its first page fault is the first use, and pages are then
 * inserted one by one as they are touched.  Kernel
 * mappings (vmap) are counted and shared with ion_map_kernel().
 */

/**
 * struct ion_attachment - one device attached to a buffer
 * @dev:    the importing device
 * @table:  the attachment's own copy of the buffer's sg table
 * @node:   entry in &ion_core_buffer.attachments
 * @export: while mapped, the copy of @table its importer got
 *	    (ion_sg_table_export())
 * @busy:   a mapping of @table is being made or stands, until its unmap:
 *	    the attachment has one table, so a second map is refused
 * @mapped: @table is DMA-mapped for @dev
 * @dir:    direction of that mapping
 *
 * Lives from attach to detach; @node, @busy, @mapped and @dir are under
 * the buffer's lock.
 */
struct ion_attachment {
	struct device *dev;
	struct sg_table table;
	struct sg_table export;
	struct list_head node;
	bool busy;
	bool mapped;
	enum dma_data_direction dir;
};

/* Build @a's own table from the buffer's backing (backing it if need be). */
static int ion_attachment_table(struct ion_core_buffer *buffer,
				struct ion_attachment *a)
{
	struct sg_table *sgt;

	lockdep_assert_held(&buffer->lock);
	sgt = __ion_buffer_sg_table(buffer);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	return ion_sg_table_dup(sgt, &a->table, a->dev);
}

/*
 * A heap with an attach op sees the device first and may refuse it; while
 * such a heap's buffer has no backing, the table waits for the first map.
 * A backing that does not fit the device (-ERANGE) moves when nothing has
 * it mapped (ion_buffer_move()); otherwise the attach fails with -ERANGE.
 */
static int ion_dmabuf_attach(struct dma_buf *dmabuf,
			     struct dma_buf_attachment *attach)
{
	struct ion_core_buffer *buffer = dmabuf->priv;
	struct ion_heap *heap = buffer->base.heap;
	struct ion_attachment *a;
	int ret = 0;

	ret = ion_fail(ION_FAIL_ATTACH);
	if (ret)
		return ret;
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	a->dev = attach->dev;

	mutex_lock(&buffer->lock);
	if (heap->ops->attach) {
		ret = heap->ops->attach(heap, &buffer->base, a->dev);
		if (ret == -ERANGE && buffer->base.sg_table)
			ret = ion_buffer_move(buffer, a->dev);
		if (ret)
			goto err_unlock;
	}
	if (buffer->base.sg_table || !heap->ops->attach)
		ret = ion_attachment_table(buffer, a);
	if (ret)
		goto err_heap_detach;
	spin_lock(&ion_dev.stats_lock);
	list_add_tail(&a->node, &buffer->attachments);
	spin_unlock(&ion_dev.stats_lock);
	WRITE_ONCE(buffer->attach_count, buffer->attach_count + 1);
	mutex_unlock(&buffer->lock);

	attach->priv = a;
	trace_ion_attach(buffer, a->dev);
	return 0;

err_heap_detach:
	if (heap->ops->detach)
		heap->ops->detach(heap, &buffer->base, a->dev);
err_unlock:
	mutex_unlock(&buffer->lock);
	kfree(a);
	return ret;
}
ALLOW_ERROR_INJECTION(ion_dmabuf_attach, ERRNO);

static void ion_dmabuf_detach(struct dma_buf *dmabuf,
			      struct dma_buf_attachment *attach)
{
	struct ion_core_buffer *buffer = dmabuf->priv;
	struct ion_heap *heap = buffer->base.heap;
	struct ion_attachment *a = attach->priv;

	trace_ion_detach(buffer, a->dev);
	mutex_lock(&buffer->lock);
	spin_lock(&ion_dev.stats_lock);
	list_del(&a->node);
	spin_unlock(&ion_dev.stats_lock);
	WRITE_ONCE(buffer->attach_count, buffer->attach_count - 1);
	if (heap->ops->detach)
		heap->ops->detach(heap, &buffer->base, a->dev);
	mutex_unlock(&buffer->lock);
	sg_free_table(&a->table);
	kfree(a);
}

/**
 * ion_dmabuf_drop_tables() - forget the attachments' tables of a moved buffer
 * @buffer: the buffer, whose backing has just moved; no attachment mapped
 *
 * Each attachment builds its table again from the new backing at its
 * next map.
 *
 * Context: &ion_core_buffer.lock held.
 */
void ion_dmabuf_drop_tables(struct ion_core_buffer *buffer)
{
	struct ion_attachment *a;

	lockdep_assert_held(&buffer->lock);
	list_for_each_entry(a, &buffer->attachments, node) {
		if (WARN_ON_ONCE(a->mapped))
			continue;
		sg_free_table(&a->table);
		memset(&a->table, 0, sizeof(a->table));
	}
}

/**
 * ion_dmabuf_devices() - the devices attached to a buffer, for debugfs
 * @buffer: the buffer
 * @buf:    where to write "<dev_name>(<driver>)" per attachment, comma
 *	    separated, "-" for none, "..." at the end when @len is too short
 * @len:    size of @buf, at least 4
 *
 * Context: &ion_device.stats_lock held (keeps the attachment list and its
 * devices, which each attachment holds, from going).
 */
void ion_dmabuf_devices(struct ion_core_buffer *buffer, char *buf,
			size_t len)
{
	const struct device_driver *drv;
	struct ion_attachment *a;
	size_t n = 0;
	int w;

	lockdep_assert_held(&ion_dev.stats_lock);
	strscpy(buf, "-", len);
	list_for_each_entry(a, &buffer->attachments, node) {
		drv = READ_ONCE(a->dev->driver);
		w = snprintf(buf + n, len - n, "%s%s%s%s%s", n ? "," : "",
			     dev_name(a->dev), drv ? "(" : "",
			     drv ? drv->name : "", drv ? ")" : "");
		if (n + w >= len - 3) {
			strscpy(buf + min(n, len - 4), "...", 4);
			break;
		}
		n += w;
	}
	for (; *buf; buf++) {
		if (!isgraph(*buf))
			*buf = '_';
	}
}

/*
 * Every mapping skips the CPU sync and is synced by hand (DOC).  The
 * buffer counts the mapping from before its table is built until it is
 * unmapped, so that its backing cannot move under it.  A second map of
 * the attachment's one table would overwrite the first one's DMA
 * addresses (leaking IOVAs or bounce slots) and unmap them twice.
 */
static struct sg_table *ion_dmabuf_map(struct dma_buf_attachment *attach,
				       enum dma_data_direction dir)
{
	struct ion_core_buffer *buffer = attach->dmabuf->priv;
	struct ion_attachment *a = attach->priv;
	int ret = 0;

	if (!a->dev->dma_mask)
		return ERR_PTR(-EINVAL);	/* no DMA at all (DOC) */
	mutex_lock(&buffer->lock);
	if (a->busy)
		ret = -EBUSY;
	else if (!a->table.sgl)
		ret = ion_attachment_table(buffer, a);
	if (!ret) {
		a->busy = true;
		buffer->map_count++;
	}
	mutex_unlock(&buffer->lock);
	if (ret)
		return ERR_PTR(ret);
	ret = ion_fail(ION_FAIL_MAP) ?:
	      dma_map_sgtable(a->dev, &a->table, dir, DMA_ATTR_SKIP_CPU_SYNC);
	if (ret)
		goto err_uncount;
	ret = ion_sg_table_export(&a->table, &a->export);
	if (ret)
		goto err_unmap;
	dma_sync_sgtable_for_device(a->dev, &a->table, dir);
	mutex_lock(&buffer->lock);
	a->mapped = true;
	a->dir = dir;
	mutex_unlock(&buffer->lock);
	trace_ion_map(buffer, a->dev, dir, &a->table);
	return &a->export;

err_unmap:
	dma_unmap_sgtable(a->dev, &a->table, dir, DMA_ATTR_SKIP_CPU_SYNC);
err_uncount:
	mutex_lock(&buffer->lock);
	a->busy = false;
	buffer->map_count--;
	mutex_unlock(&buffer->lock);
	return ERR_PTR(ret);
}
ALLOW_ERROR_INJECTION(ion_dmabuf_map, ERRNO);	/* an ERR_PTR(-errno) */

/* @sgt is the importer's copy (a->export): ion unmaps its own table. */
static void ion_dmabuf_unmap(struct dma_buf_attachment *attach,
			     struct sg_table *sgt, enum dma_data_direction dir)
{
	struct ion_core_buffer *buffer = attach->dmabuf->priv;
	struct ion_attachment *a = attach->priv;

	trace_ion_unmap(buffer, a->dev, dir, &a->table);
	mutex_lock(&buffer->lock);
	a->mapped = false;
	mutex_unlock(&buffer->lock);
	dma_sync_sgtable_for_cpu(a->dev, &a->table, dir);
	dma_unmap_sgtable(a->dev, &a->table, dir, DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(&a->export);
	mutex_lock(&buffer->lock);
	a->busy = false;
	buffer->map_count--;
	mutex_unlock(&buffer->lock);
}

/*
 * CPU access begins (@for_cpu) or ends: sync every mapped attachment in
 * the direction it was mapped with, and a cached buffer's kernel mapping.
 * An uncached buffer that no device has attached has nothing to sync.
 */
static void ion_dmabuf_sync_cpu_access(struct ion_core_buffer *buffer,
				       bool for_cpu)
{
	bool cached = ion_buffer_cached(buffer);
	struct ion_attachment *a;

	if (!cached && !READ_ONCE(buffer->attach_count))
		return;
	mutex_lock(&buffer->lock);
	if (cached && buffer->kmap_count) {
		if (for_cpu)
			invalidate_kernel_vmap_range(buffer->vaddr,
						     buffer->base.size);
		else
			flush_kernel_vmap_range(buffer->vaddr,
						buffer->base.size);
	}
	list_for_each_entry(a, &buffer->attachments, node) {
		if (!a->mapped)
			continue;
		if (for_cpu)
			dma_sync_sgtable_for_cpu(a->dev, &a->table, a->dir);
		else
			dma_sync_sgtable_for_device(a->dev, &a->table, a->dir);
	}
	mutex_unlock(&buffer->lock);
}

static int ion_dmabuf_begin_cpu_access(struct dma_buf *dmabuf,
				       enum dma_data_direction dir)
{
	struct ion_core_buffer *buffer = dmabuf->priv;
	struct ion_heap *heap = buffer->base.heap;
	int ret;

	trace_ion_cpu_access_begin(buffer, dir);
	ret = ion_buffer_back_lazy(buffer);
	if (ret)
		return ret;
	ion_dmabuf_sync_cpu_access(buffer, true);
	if (heap->ops->begin_cpu_access)
		return heap->ops->begin_cpu_access(heap, &buffer->base, dir);
	return 0;
}

static int ion_dmabuf_end_cpu_access(struct dma_buf *dmabuf,
				     enum dma_data_direction dir)
{
	struct ion_core_buffer *buffer = dmabuf->priv;
	struct ion_heap *heap = buffer->base.heap;

	trace_ion_cpu_access_end(buffer, dir);
	ion_dmabuf_sync_cpu_access(buffer, false);
	if (heap->ops->end_cpu_access)
		return heap->ops->end_cpu_access(heap, &buffer->base, dir);
	return 0;
}

static int ion_dmabuf_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	void *vaddr = ion_buffer_kmap(dmabuf->priv);

	if (IS_ERR(vaddr))
		return PTR_ERR(vaddr);
	iosys_map_set_vaddr(map, vaddr);
	return 0;
}

static void ion_dmabuf_vunmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	ion_buffer_kunmap(dmabuf->priv);
}

const struct dma_buf_ops ion_dmabuf_ops = {
	.attach = ion_dmabuf_attach,
	.detach = ion_dmabuf_detach,
	.map_dma_buf = ion_dmabuf_map,
	.unmap_dma_buf = ion_dmabuf_unmap,
	.begin_cpu_access = ion_dmabuf_begin_cpu_access,
	.end_cpu_access = ion_dmabuf_end_cpu_access,
	.mmap = ion_dmabuf_mmap,
	.vmap = ion_dmabuf_vmap,
	.vunmap = ion_dmabuf_vunmap,
	.release = ion_buffer_release,
};

/**
 * ion_dmabuf_to_buffer() - the ion buffer behind a dma-buf
 * @dmabuf: any dma-buf
 *
 * Context: Any context.
 * Return: the buffer, or NULL when ion did not export @dmabuf.
 */
struct ion_core_buffer *ion_dmabuf_to_buffer(struct dma_buf *dmabuf)
{
	return dmabuf->ops == &ion_dmabuf_ops ? dmabuf->priv : NULL;
}

/**
 * ion_dmabuf_sync_fd() - ION_IOC_SYNC: end CPU access to an ion dma-buf
 * @fd: the dma-buf fd
 *
 * Does what DMA_BUF_IOCTL_SYNC with DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW
 * does, so CPU writes become visible to the devices the buffer is mapped
 * for.
 *
 * Context: Process context; sleeps.
 * Return: 0, -EBADF for a bad fd, -EINVAL when @fd is not a dma-buf that
 * ion exported, or a heap's -errno.
 */
int ion_dmabuf_sync_fd(int fd)
{
	struct dma_buf *dmabuf;
	int ret;

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	if (ion_dmabuf_to_buffer(dmabuf))
		ret = dma_buf_end_cpu_access(dmabuf, DMA_BIDIRECTIONAL);
	else
		ret = -EINVAL;
	dma_buf_put(dmabuf);
	return ret;
}
