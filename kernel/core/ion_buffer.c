// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: buffers - creation through a heap mask, the one release path, the
 * kernel mapping, and all accounting.
 */
#include <linux/dma-buf.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "ion_fail.h"
#include "ion_priv.h"
#include "trace/ion_trace.h"

/**
 * DOC: buffers
 *
 * A buffer is created in one step with its dma-buf: ion_buffer_create()
 * validates the request, tries the heaps of the mask in priority order
 * (highest heap id first; a heap answering -ENOMEM, -EDQUOT for a quota
 * (ion_quota.c) or -EINVAL for an alignment it cannot honour passes the
 * request on to the next one, any other error ends the search), exports
 * the dma-buf
 * and charges the buffer.  From then on the buffer is the dma-buf's: it is
 * freed only by the dma-buf's release op, through ion_buffer_release(),
 * when the last reference to the dma-buf file goes.
 *
 * All accounting is done here, in ion_account_failure(), ion_charge() and
 * ion_uncharge(): per heap and in total, live buffers and bytes, the peak
 * of bytes, successful allocations (buffers that went live: one lock round
 * per buffer) and failed attempts (a heap that refused, or an export that
 * failed after it).  The other charges hook in here too: quotas
 * (ion_quota.c) as a heap is tried, the allocator's RSS for the OOM
 * killer (ion_oom.c) as the buffer goes live and is freed; memcg charging
 * is the heaps' (__GFP_ACCOUNT, kernel/heaps/ion_memcg.c).  The backing
 * of a buffer is reached only through the heap ops and
 * ion_buffer_sg_table(), which sets up a heap's sg table lazily; delayed
 * allocation (the auto heap: the backing chosen at first use) lives
 * behind those two doors (Documentation/ion.rst, "Delayed allocation").
 */

/* Count a failed allocation attempt on @heap. */
static void ion_account_failure(struct ion_device *dev, struct ion_heap *heap)
{
	spin_lock(&dev->stats_lock);
	heap->core->stats.alloc_failures++;
	dev->stats.alloc_failures++;
	spin_unlock(&dev->stats_lock);
}

static void ion_stats_add(struct ion_stats *st, u64 size)
{
	st->allocs++;
	st->buffers++;
	st->bytes += size;
	st->peak_bytes = max(st->peak_bytes, st->bytes);
}

static void ion_stats_sub(struct ion_stats *st, u64 size)
{
	st->buffers--;
	st->bytes -= size;
}

/*
 * Make a new, exported buffer live: in its allocator's RSS (ion_oom.c),
 * counted (an allocation that succeeded) and listed in its heap.  A list,
 * not an index: adding and removing cost a few instructions where an
 * xarray's store and erase cost about 1 200, 10 % of a 4 KiB allocation
 * and free (icount bench).
 */
static void ion_charge(struct ion_core_buffer *buffer)
{
	struct ion_device *dev = buffer->dev;
	struct ion_heap_core *core = buffer->base.heap->core;

	buffer->id = atomic64_inc_return(&dev->next_buffer_id);
	ion_oom_charge(buffer);
	spin_lock(&dev->stats_lock);
	ion_stats_add(&core->stats, buffer->base.size);
	ion_stats_add(&dev->stats, buffer->base.size);
	list_add_tail(&buffer->heap_node, &core->buffers);
	spin_unlock(&dev->stats_lock);
}

/*
 * Unlisted first: debugfs may look at a listed buffer under the lock.
 * Its user and client are uncharged with it, under the same lock.
 */
static void ion_uncharge(struct ion_core_buffer *buffer)
{
	struct ion_device *dev = buffer->dev;
	struct ion_heap *heap = buffer->base.heap;

	spin_lock(&dev->stats_lock);
	list_del(&buffer->heap_node);
	ion_stats_sub(&heap->core->stats, buffer->base.size);
	ion_stats_sub(&dev->stats, buffer->base.size);
	ion_quota_uncharge_locked(heap, buffer);
	spin_unlock(&dev->stats_lock);
	ion_oom_uncharge(buffer);
}

/**
 * ion_stats_read() - snapshot the accounting of a heap or of the device
 * @dev:  the device
 * @heap: a registered heap, or NULL for the totals
 * @out:  where to store the snapshot
 *
 * Context: Any context that may take a spinlock; does not sleep.
 */
void ion_stats_read(struct ion_device *dev, struct ion_heap *heap,
		    struct ion_stats *out)
{
	struct ion_heap_core *core = heap ? heap->core : NULL;

	spin_lock(&dev->stats_lock);
	*out = core ? core->stats : dev->stats;
	spin_unlock(&dev->stats_lock);
}

/*
 * Give @buffer's backing back to its heap and drop the heap's pin; its
 * quota charge is gone (ion_uncharge(), or ion_quota_uncharge()).
 */
static void ion_buffer_free_backing(struct ion_core_buffer *buffer)
{
	struct ion_heap *heap = buffer->base.heap;

	if (buffer->heap_mapped_dma) {
		heap->ops->unmap_dma(heap, &buffer->base);
		buffer->base.sg_table = NULL;
		buffer->heap_mapped_dma = false;
	}
	heap->ops->free(&buffer->base);
	ion_heap_core_put(heap);
	if (heap->owner)
		module_put(heap->owner);
	buffer->base.heap = NULL;
}

static int ion_buffer_try_heap(struct ion_device *dev,
			       struct ion_heap *heap,
			       struct ion_core_buffer *buffer)
{
	struct ion_buffer *base = &buffer->base;
	int ret;

	if (heap->owner && !try_module_get(heap->owner))
		return -ENOMEM;
	ret = ion_quota_charge(heap, buffer);
	if (ret)
		goto err_put_module;
	base->heap = heap;
	ret = ion_fail(ION_FAIL_ALLOC) ?: heap->ops->allocate(heap, base);
	if (!ret && WARN_ON_ONCE(!base->sg_table && !heap->ops->map_dma)) {
		heap->ops->free(base);
		ret = -EINVAL;
	}
	if (!ret) {
		ion_heap_core_get(heap);
		return 0;
	}

	ion_account_failure(dev, heap);
	base->heap = NULL;
	base->sg_table = NULL;
	base->priv_virt = NULL;
	ion_quota_uncharge(heap, buffer);
err_put_module:
	if (heap->owner)
		module_put(heap->owner);
	return ret;
}

/* More than all of RAM: no heap can, and no OOM kill. */
static bool ion_buffer_too_big(const struct ion_core_buffer *buffer)
{
	return (buffer->base.size >> PAGE_SHIFT) > totalram_pages();
}

/* Try @heap, unless the request cannot succeed or the caller is dying. */
static int ion_buffer_try(struct ion_device *dev,
			  struct ion_heap *heap,
			  struct ion_core_buffer *buffer)
{
	lockdep_assert_held_read(&dev->heap_lock);
	if (ion_buffer_too_big(buffer))
		return -ENOMEM;
	if (fatal_signal_pending(current))
		return -EINTR;
	return ion_buffer_try_heap(dev, heap, buffer);
}

/*
 * Back @buffer from the first heap of @heap_mask that can, or, when @only
 * is given, from the heap *@only (read under the heap lock; NULL once that
 * heap is gone).
 */
static int ion_buffer_back(struct ion_device *dev,
			   struct ion_core_buffer *buffer,
			   unsigned int heap_mask,
			   struct ion_heap *const *only)
{
	bool nomem = false, quota = false;
	struct ion_heap *heap;
	int ret = -ENODEV;

	percpu_down_read(&dev->heap_lock);
	if (only) {
		heap = *only;
		if (heap && (heap_mask & BIT(heap->id)))
			ret = ion_buffer_try(dev, heap, buffer);
		goto out_unlock;
	}
	list_for_each_entry(heap, &dev->heaps, node) {
		if (!(heap_mask & BIT(heap->id)))
			continue;
		ret = ion_buffer_try(dev, heap, buffer);
		nomem |= ret == -ENOMEM;
		quota |= ret == -EDQUOT;
		if ((ret != -ENOMEM && ret != -EINVAL && ret != -EDQUOT) ||
		    ion_buffer_too_big(buffer))
			break;
	}
	/*
	 * Out of memory somewhere beats over quota, which beats "cannot
	 * honour the alignment".
	 */
	if ((ret == -EINVAL || ret == -EDQUOT) && nomem)
		ret = -ENOMEM;
	else if (ret == -EINVAL && quota)
		ret = -EDQUOT;
out_unlock:
	percpu_up_read(&dev->heap_lock);
	return ret;
}

/**
 * struct ion_buffer_req - what a new buffer is asked to be
 * @len:	 size in bytes, rounded up to whole pages
 * @align:	 0 or a power of two
 * @heap_mask:	 heaps to try, by heap id
 * @heap:	 NULL, or the one heap to use (read under the heap lock)
 * @flags:	 ION_FLAG_*
 * @file_flags:	 flags of the dma-buf's file
 */
struct ion_buffer_req {
	u64 len;
	unsigned long align;
	unsigned int heap_mask;
	struct ion_heap *const *heap;
	unsigned int flags;
	unsigned int file_flags;
};

/*
 * The dma-buf of a new buffer, backed by its heap.  @file_flags are the
 * flags of its file: O_RDWR for /dev/ion, the caller's fd_flags for the
 * dma-heap nodes (O_ACCMODE sets the file's access mode, as mainline's
 * heaps do).  The dma-buf pins ion.ko until it is released.
 */
static struct dma_buf *ion_buffer_export(struct ion_core_buffer *buffer,
					 unsigned int file_flags)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp);

	if (ion_fail(ION_FAIL_EXPORT))
		return ERR_PTR(-ENOMEM);
	exp.exp_name = "ion";
	exp.owner = THIS_MODULE;
	exp.ops = &ion_dmabuf_ops;
	exp.size = buffer->base.size;
	exp.flags = file_flags;
	exp.priv = buffer;
	return dma_buf_export(&exp);
}

static struct ion_core_buffer *
ion_buffer_alloc(struct ion_device *dev, struct ion_owner *owner,
		 const struct ion_buffer_req *req)
{
	struct ion_core_buffer *buffer;
	struct dma_buf *dmabuf;
	int ret;

	if (!req->len || req->len > (SIZE_MAX & PAGE_MASK) ||
	    (req->align && !is_power_of_2(req->align)) ||
	    (req->flags & ~ION_FLAGS_VALID))
		return ERR_PTR(-EINVAL);
	if (!req->heap_mask)
		return ERR_PTR(-ENODEV);

	buffer = kzalloc(sizeof(*buffer), GFP_KERNEL);
	if (!buffer)
		return ERR_PTR(-ENOMEM);
	buffer->dev = dev;
	buffer->base.size = PAGE_ALIGN(req->len);
	buffer->base.align = req->align;
	buffer->base.flags = req->flags;
	buffer->owner = ion_owner_get(owner);
	mutex_init(&buffer->lock);
	INIT_LIST_HEAD(&buffer->attachments);

	ret = ion_buffer_back(dev, buffer, req->heap_mask, req->heap);
	if (ret)
		goto err_free_buffer;

	dmabuf = ion_buffer_export(buffer, req->file_flags);
	if (IS_ERR(dmabuf)) {
		ret = PTR_ERR(dmabuf);
		goto err_free_backing;
	}
	buffer->dmabuf = dmabuf;
	buffer->ino = file_inode(dmabuf->file)->i_ino;
	ion_charge(buffer);
	return buffer;

err_free_backing:
	ion_account_failure(dev, buffer->base.heap);
	ion_quota_uncharge(buffer->base.heap, buffer);
	ion_buffer_free_backing(buffer);
err_free_buffer:
	ion_owner_put(buffer->owner);
	mutex_destroy(&buffer->lock);
	kfree(buffer);
	return ERR_PTR(ret);
}

/*
 * ion_buffer_alloc() timed for the ion_alloc event, which records refusals
 * too; the clock is read only while the event is enabled.
 */
static struct ion_core_buffer *
ion_buffer_alloc_traced(struct ion_device *dev, struct ion_owner *owner,
			const struct ion_buffer_req *req)
{
	struct ion_core_buffer *buffer;
	u64 start;

	if (!trace_ion_alloc_enabled())
		return ion_buffer_alloc(dev, owner, req);
	start = ktime_get_ns();
	buffer = ion_buffer_alloc(dev, owner, req);
	trace_ion_alloc(buffer, owner, PAGE_ALIGN(req->len), req->heap_mask,
			req->flags, ktime_get_ns() - start);
	return buffer;
}

/**
 * ion_buffer_create() - allocate a buffer and its dma-buf
 * @dev:       the device
 * @owner:     name of the allocating client, for debugfs (referenced)
 * @len:       size in bytes, rounded up to whole pages
 * @align:     0 or a power of two
 * @heap_mask: heaps to try, by heap id
 * @flags:     ION_FLAG_*
 *
 * The new dma-buf's file (O_RDWR) holds the one reference the caller
 * gets; hand it to an fd or a handle, or drop it with dma_buf_put().
 *
 * Context: Process context; sleeps.  No lock of the core held.
 * Return: the buffer, or ERR_PTR(-EINVAL) for a bad @len, @align or
 * @flags, ERR_PTR(-ENODEV) when @heap_mask names no registered heap,
 * ERR_PTR(-ENOMEM) when no heap could back it, ERR_PTR(-EINTR) on a fatal
 * signal, or another heap error.
 */
struct ion_core_buffer *
ion_buffer_create(struct ion_device *dev, struct ion_owner *owner, u64 len,
		  unsigned long align, unsigned int heap_mask,
		  unsigned int flags)
{
	const struct ion_buffer_req req = {
		.len = len,
		.align = align,
		.heap_mask = heap_mask,
		.flags = flags,
		.file_flags = O_RDWR,
	};

	return ion_buffer_alloc_traced(dev, owner, &req);
}

/**
 * ion_buffer_create_in() - allocate a buffer and its dma-buf from one heap
 * @dev:	the device
 * @owner:	name of the allocating client, for debugfs (referenced)
 * @len:	size in bytes, rounded up to whole pages
 * @heap:	where the heap is: *@heap is read under &ion_device.heap_lock
 *		and is NULL once the heap is unregistered
 * @flags:	ION_FLAG_*
 * @file_flags: flags of the dma-buf's file (its O_ACCMODE is the file's
 *		access mode)
 *
 * Like ion_buffer_create(), for the /dev/dma_heap/ nodes: no fallback to
 * another heap, and the heap may go away while its node is open.
 *
 * Context: Process context; sleeps.  No lock of the core held.
 * Return: the buffer, or the ERR_PTRs of ion_buffer_create();
 * ERR_PTR(-ENODEV) when the heap is gone.
 */
struct ion_core_buffer *
ion_buffer_create_in(struct ion_device *dev, struct ion_owner *owner, u64 len,
		     struct ion_heap *const *heap, unsigned int flags,
		     unsigned int file_flags)
{
	const struct ion_buffer_req req = {
		.len = len,
		.heap_mask = ~0U,
		.heap = heap,
		.flags = flags,
		.file_flags = file_flags,
	};

	return ion_buffer_alloc_traced(dev, owner, &req);
}

/**
 * ion_buffer_release() - free a buffer; the release op of its dma-buf
 * @dmabuf: the buffer's dma-buf, which has no references left
 *
 * Context: Process context; sleeps.
 */
void ion_buffer_release(struct dma_buf *dmabuf)
{
	struct ion_core_buffer *buffer = dmabuf->priv;

	trace_ion_free(buffer);
	ion_uncharge(buffer);
	WARN_ON_ONCE(buffer->kmap_count || buffer->attach_count);
	ion_buffer_free_backing(buffer);
	ion_owner_put(buffer->owner);
	mutex_destroy(&buffer->lock);
	kfree(buffer);
}
