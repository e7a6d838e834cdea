// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the kernel client API (include/linux/ion.h), exported in the ION
 * namespace.
 */
#include <linux/dma-buf.h>
#include <linux/err.h>
#include <linux/error-injection.h>
#include <linux/export.h>
#include <linux/fcntl.h>
#include <linux/ion.h>
#include <linux/sched.h>

#include "ion_fail.h"
#include "ion_priv.h"

/**
 * DOC: kernel clients
 *
 * A kernel driver gets the one ion device from ion_default_device(), a
 * client with ion_client_create(), and must destroy the client with
 * ion_client_destroy() before it unloads; destroying a client drops all
 * its handles (with their kernel mappings and sg tables).  Buffers shared
 * with user space (ion_share_fd()) or with other drivers
 * (ion_share_dma_buf()) outlive the client as long as their fds and
 * dma-buf references do.
 *
 * Handles: a kernel client's &struct ion_handle pointer is an opaque
 * cookie holding the handle's id, the same id a user client sees, never
 * the address of ion's object.  Each call looks the id up in the client's
 * handle xarray (O(1), and nothing the caller passes is dereferenced), so
 * a handle of another client, or one already freed, is refused with
 * -EINVAL.  Ids are handed out cyclically from 1 to INT_MAX, so a freed
 * handle stays invalid until 2^31 handles later, however memory is
 * reused; a pointer compared against the live handles (ION of 2012) would
 * accept a freed handle whose memory the next allocation reused.
 *
 * DMA: ion_sg_table() gives the handle its own copy of the buffer's
 * page list, which the driver may map with dma_map_sgtable() for its
 * device (and must unmap before it frees the handle); the copy goes with
 * the handle.  The buffer's own table is shared by every user and is never
 * handed out.  A driver that needs the exporter's help (an IOMMU shared
 * with other importers, cache maintenance by attachment) attaches to the
 * dma-buf from ion_share_dma_buf() instead.
 */

/*
 * Lock @client and look the handle behind @cookie up.  Returns the handle,
 * with the client's lock held, or NULL (lock not held).
 */
static struct ion_handle *ion_kapi_lock(struct ion_client *client,
					struct ion_handle *cookie)
{
	uintptr_t id = (uintptr_t)cookie;
	struct ion_handle *handle;

	if (IS_ERR_OR_NULL(client) || IS_ERR_OR_NULL(cookie) || id > INT_MAX)
		return NULL;
	mutex_lock(&client->lock);
	handle = ion_handle_find(client, id);
	if (handle)
		return handle;
	mutex_unlock(&client->lock);
	pr_debug("ion: %s: not a handle of this client\n", client->owner->name);
	return NULL;
}

/*
 * The cookie of a new or found handle, or its error.  From @tag, filled
 * under the client's lock: once that is dropped another thread of the
 * driver may free the handle (a double ion_free() is refused by id, but
 * the pointer would be stale).
 */
static struct ion_handle *ion_kapi_result(struct ion_handle *handle,
					  const struct ion_handle_tag *tag)
{
	return IS_ERR(handle) ? handle :
				(struct ion_handle *)(uintptr_t)tag->id;
}

/**
 * ion_default_device() - the ion device
 *
 * There is one ion device, behind /dev/ion; this is the @dev argument of
 * ion_client_create().  It takes no reference: the device lives as long
 * as ion.ko, which a module calling this pins.
 *
 * Context: Any context.
 * Return: the device.
 */
struct ion_device *ion_default_device(void)
{
	return &ion_dev;
}
EXPORT_SYMBOL_NS_GPL(ion_default_device, ION);

/**
 * ion_client_create() - create a kernel client
 * @dev:	the device, from ion_default_device()
 * @heap_mask:	the heaps (by id) this client may ever allocate from
 * @debug_name:	name of the client in debugfs (clients/<name>); "-<n>" is
 *		appended when the name is taken
 *
 * Context: Process context; sleeps.
 * Return: the client, ERR_PTR(-EINVAL) for a @dev other than
 * ion_default_device()'s or a NULL or empty @debug_name, or
 * ERR_PTR(-ENOMEM).
 */
struct ion_client *ion_client_create(struct ion_device *dev,
				     unsigned int heap_mask,
				     const char *debug_name)
{
	if (dev != &ion_dev || !debug_name || !debug_name[0])
		return ERR_PTR(-EINVAL);
	return ion_client_new(dev, heap_mask, debug_name);
}
EXPORT_SYMBOL_NS_GPL(ion_client_create, ION);

/**
 * ion_client_destroy() - destroy a kernel client and all its handles
 * @client: a client from ion_client_create(); NULL or an ERR_PTR is ignored
 *
 * Context: Process context; sleeps.
 */
void ion_client_destroy(struct ion_client *client)
{
	if (IS_ERR_OR_NULL(client) || WARN_ON_ONCE(client->pid))
		return;
	ion_client_put(client);
}
EXPORT_SYMBOL_NS_GPL(ion_client_destroy, ION);

/**
 * ion_alloc() - allocate a buffer
 * @client:    the client
 * @len:       size in bytes, rounded up to whole pages
 * @align:     0 or a power of two; honoured by contiguous heaps
 * @heap_mask: heaps to try (highest id first), within the client's mask
 * @flags:     ION_FLAG_*
 *
 * Context: Process context; sleeps.
 * Return: a new handle, or ERR_PTR(): -EINVAL for a bad @client, @len,
 * @align or @flags, -ENODEV when no registered heap is in both masks,
 * -ENOMEM when no heap could give the memory, -EDQUOT when a quota
 * refused it (kernel clients count as root: only with quota_root set),
 * -EINTR when the calling task has a fatal signal pending.
 */
struct ion_handle *ion_alloc(struct ion_client *client, size_t len,
			     size_t align, unsigned int heap_mask,
			     unsigned int flags)
{
	struct ion_handle_tag tag;
	int ret;

	if (IS_ERR_OR_NULL(client))
		return ERR_PTR(-EINVAL);
	ret = ion_fail(ION_FAIL_KAPI);
	if (ret)
		return ERR_PTR(ret);
	return ion_kapi_result(ion_client_alloc(client, len, align, heap_mask,
						flags, &tag), &tag);
}
EXPORT_SYMBOL_NS_GPL(ion_alloc, ION);
ALLOW_ERROR_INJECTION(ion_alloc, ERRNO);

/**
 * ion_free() - drop one count of a handle
 * @client: the client
 * @handle: one of its handles
 *
 * The handle goes when its count reaches 0 (an import of a buffer the
 * client already held raised it), with its kernel mappings and its sg
 * table; the buffer goes when nothing else holds it.
 *
 * Context: Process context; sleeps.
 * Return: 0, or -EINVAL when @handle is not a live handle of @client.
 */
int ion_free(struct ion_client *client, struct ion_handle *handle)
{
	struct ion_handle *h = ion_kapi_lock(client, handle);

	if (!h)
		return -EINVAL;
	ion_handle_put(h);
	mutex_unlock(&client->lock);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(ion_free, ION);

/**
 * ion_import_fd() - a handle for a dma-buf fd that ion exported
 * @client: the client
 * @fd:	    a dma-buf fd of the current process
 *
 * Context: Process context; sleeps.
 * Return: the handle - the client's existing one with its count raised if
 * it already holds the buffer - or ERR_PTR(): -EBADF for a bad fd,
 * -EINVAL for a bad @client or an fd that is not an ion dma-buf, -ENOMEM,
 * -EOVERFLOW when the client's handle to it has ION_HANDLE_MAX_COUNT
 * (65536) counts already.
 */
struct ion_handle *ion_import_fd(struct ion_client *client, int fd)
{
	struct ion_handle_tag tag;

	if (IS_ERR_OR_NULL(client))
		return ERR_PTR(-EINVAL);
	return ion_kapi_result(ion_client_import(client, fd, &tag), &tag);
}
EXPORT_SYMBOL_NS_GPL(ion_import_fd, ION);

/**
 * ion_import_dma_buf() - a handle for a dma-buf that ion exported
 * @client: the client
 * @dmabuf: the dma-buf; the caller keeps its own reference
 *
 * Context: Process context; sleeps.
 * Return: the handle - the client's existing one with its count raised if
 * it already holds the buffer - or ERR_PTR(): -EINVAL for a bad @client
 * or a dma-buf that ion did not export, -ENOMEM, -EOVERFLOW as
 * ion_import_fd().
 */
struct ion_handle *ion_import_dma_buf(struct ion_client *client,
				      struct dma_buf *dmabuf)
{
	struct ion_core_buffer *buffer;
	struct ion_handle_tag tag;

	if (IS_ERR_OR_NULL(client) || IS_ERR_OR_NULL(dmabuf))
		return ERR_PTR(-EINVAL);
	buffer = ion_dmabuf_to_buffer(dmabuf);
	if (!buffer)
		return ERR_PTR(-EINVAL);
	get_dma_buf(dmabuf);
	return ion_kapi_result(ion_handle_add(client, buffer, &tag), &tag);
}
EXPORT_SYMBOL_NS_GPL(ion_import_dma_buf, ION);

/**
 * ion_share_dma_buf() - the dma-buf of a handle's buffer
 * @client: the client
 * @handle: one of its handles
 *
 * The reference returned is the caller's: drop it with dma_buf_put().  It
 * keeps the buffer alive after the handle is freed.
 *
 * Context: Process context; sleeps.
 * Return: the dma-buf, or ERR_PTR(-EINVAL) when @handle is not a live
 * handle of @client.
 */
struct dma_buf *ion_share_dma_buf(struct ion_client *client,
				  struct ion_handle *handle)
{
	struct ion_handle *h = ion_kapi_lock(client, handle);
	struct dma_buf *dmabuf;

	if (!h)
		return ERR_PTR(-EINVAL);
	dmabuf = h->buffer->dmabuf;
	get_dma_buf(dmabuf);
	mutex_unlock(&client->lock);
	return dmabuf;
}
EXPORT_SYMBOL_NS_GPL(ion_share_dma_buf, ION);

/**
 * ion_share_fd() - a new dma-buf fd for a handle's buffer
 * @client: the client
 * @handle: one of its handles
 *
 * The fd (O_CLOEXEC) is installed in the current process and holds its
 * own reference to the buffer.  A kernel thread (a work item) is refused:
 * all kernel threads share one file table, where the fd would pin the
 * buffer with nobody to close it; use ion_share_dma_buf() there.
 *
 * Context: Process context of the process that is to own the fd; sleeps.
 * Return: the fd, -EINVAL when @handle is not a live handle of @client or
 * the caller is a kernel thread, or -EMFILE.
 */
int ion_share_fd(struct ion_client *client, struct ion_handle *handle)
{
	struct dma_buf *dmabuf;
	int fd;

	if (current->flags & PF_KTHREAD)
		return -EINVAL;
	dmabuf = ion_share_dma_buf(client, handle);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	fd = dma_buf_fd(dmabuf, O_CLOEXEC);
	if (fd < 0)
		dma_buf_put(dmabuf);
	return fd;
}
EXPORT_SYMBOL_NS_GPL(ion_share_fd, ION);

/**
 * ion_phys() - physical address and length of a contiguous buffer
 * @client: the client
 * @handle: one of its handles
 * @addr:   where to store the physical address
 * @len:    where to store the length in bytes
 *
 * Only heaps of physically contiguous memory (system_contig, carveout,
 * dma) can answer, and the auto heap for a buffer backed by one range; a
 * deferred buffer is backed first (its first use), and its backing never
 * moves after.  The address is a CPU physical address, not a DMA
 * address: a device behind an IOMMU must map ion_sg_table()'s table.
 *
 * Context: Process context; sleeps.
 * Return: 0, -EINVAL when @handle is not a live handle of @client,
 * -ENODEV when the buffer's memory is not one range (the system heap, an
 * auto buffer backed otherwise), or the first use's error (-ENOMEM,
 * -ERANGE, -EINTR).
 */
int ion_phys(struct ion_client *client, struct ion_handle *handle,
	     ion_phys_addr_t *addr, size_t *len)
{
	struct ion_handle *h;
	int ret;

	if (!addr || !len)
		return -EINVAL;
	h = ion_kapi_lock(client, handle);
	if (!h)
		return -EINVAL;
	ret = ion_buffer_phys(h->buffer, addr, len);
	mutex_unlock(&client->lock);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(ion_phys, ION);

/**
 * ion_sg_table() - the handle's own table of the buffer's pages
 * @client: the client
 * @handle: one of its handles
 *
 * The table is a copy of the buffer's page list made for this handle on
 * the first call (later calls return the same one): the driver may
 * dma_map_sgtable() it for its device, and must unmap it before the handle
 * goes.  It is freed with the handle (ion_free() to count 0, or
 * ion_client_destroy()).  No cache maintenance is done for the driver
 * beyond what the DMA API does on map and sync.
 *
 * Context: Process context; sleeps.
 * Return: the sg table, or ERR_PTR(): -EINVAL when @handle is not a live
 * handle of @client, -ENOMEM, or the heap's error.
 */
struct sg_table *ion_sg_table(struct ion_client *client,
			      struct ion_handle *handle)
{
	struct ion_handle *h = ion_kapi_lock(client, handle);
	struct sg_table *sgt;

	if (!h)
		return ERR_PTR(-EINVAL);
	sgt = ion_handle_sg_table(h);
	mutex_unlock(&client->lock);
	return sgt;
}
EXPORT_SYMBOL_NS_GPL(ion_sg_table, ION);

/**
 * ion_map_kernel() - map the whole buffer in the kernel
 * @client: the client
 * @handle: one of its handles
 *
 * Uncached buffers are mapped write-combined.  Mappings are counted per
 * handle; each needs an ion_unmap_kernel(), and those left when the
 * handle goes are undone then.  Bracket CPU access with
 * dma_buf_begin_cpu_access() / dma_buf_end_cpu_access() (on the dma-buf
 * from ion_share_dma_buf()) when devices or user space use the buffer too.
 *
 * Context: Process context; sleeps.
 * Return: the kernel address, or ERR_PTR(-EINVAL) when @handle is not a
 * live handle of @client, or ERR_PTR(-ENOMEM).
 */
void *ion_map_kernel(struct ion_client *client, struct ion_handle *handle)
{
	struct ion_handle *h = ion_kapi_lock(client, handle);
	void *vaddr;

	if (!h)
		return ERR_PTR(-EINVAL);
	vaddr = ion_buffer_kmap(h->buffer);
	if (!IS_ERR(vaddr))
		h->kmap_count++;
	mutex_unlock(&client->lock);
	return vaddr;
}
EXPORT_SYMBOL_NS_GPL(ion_map_kernel, ION);

/**
 * ion_unmap_kernel() - undo one ion_map_kernel()
 * @client: the client
 * @handle: the handle that was mapped
 *
 * A handle that is not the client's, or not mapped, is ignored.
 *
 * Context: Process context; sleeps.
 */
void ion_unmap_kernel(struct ion_client *client, struct ion_handle *handle)
{
	struct ion_handle *h = ion_kapi_lock(client, handle);

	if (!h)
		return;
	if (h->kmap_count) {
		h->kmap_count--;
		ion_buffer_kunmap(h->buffer);
	} else {
		pr_debug("ion: %s: unmap of a handle not mapped\n",
			 client->owner->name);
	}
	mutex_unlock(&client->lock);
}
EXPORT_SYMBOL_NS_GPL(ion_unmap_kernel, ION);
