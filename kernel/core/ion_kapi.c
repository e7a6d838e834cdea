// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the kernel client API (include/linux/ion.h), exported in the ION
 * namespace.
 */
#include <linux/dma-buf.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/fcntl.h>
#include <linux/ion.h>

#include "ion_priv.h"

/**
 * DOC: kernel clients
 *
 * A kernel driver gets a client with ion_client_create() and must destroy
 * it with ion_client_destroy() before it unloads; destroying a client
 * drops all its handles (and their kernel mappings).  Handles are opaque
 * pointers.  Each call looks the handle up among the client's own handles
 * before touching it, so a handle of another client, or one already
 * freed, is refused.  Buffers shared with user space (ion_share_fd())
 * outlive the client as long as their fds do.
 */

/* Lock @client and check @handle, which is then safe to use. */
static bool ion_kapi_lock(struct ion_client *client, struct ion_handle *handle)
{
	if (IS_ERR_OR_NULL(client))
		return false;
	mutex_lock(&client->lock);
	if (ion_handle_valid(client, handle))
		return true;
	mutex_unlock(&client->lock);
	pr_debug("ion: %s: not a handle of this client\n", client->owner->name);
	return false;
}

/**
 * ion_client_create() - create a kernel client
 * @heap_mask: the heaps (by id) this client may ever allocate from
 * @name:      name of the client in debugfs (clients/<name>); "-<n>" is
 *	       appended when the name is taken
 *
 * Context: Process context; sleeps.
 * Return: the client, ERR_PTR(-EINVAL) for a NULL or empty @name, or
 * ERR_PTR(-ENOMEM).
 */
struct ion_client *ion_client_create(unsigned int heap_mask, const char *name)
{
	if (!name || !name[0])
		return ERR_PTR(-EINVAL);
	return ion_client_new(&ion_dev, heap_mask, name);
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
 * -ENOMEM when no heap could give the memory.
 */
struct ion_handle *ion_alloc(struct ion_client *client, size_t len,
			     size_t align, unsigned int heap_mask,
			     unsigned int flags)
{
	int id;

	if (IS_ERR_OR_NULL(client))
		return ERR_PTR(-EINVAL);
	return ion_client_alloc(client, len, align, heap_mask, flags, &id);
}
EXPORT_SYMBOL_NS_GPL(ion_alloc, ION);

/**
 * ion_free() - drop one count of a handle
 * @client: the client
 * @handle: one of its handles
 *
 * The handle goes when its count reaches 0 (an import of a buffer the
 * client already held raised it), the buffer when nothing else holds it.
 *
 * Context: Process context; sleeps.
 * Return: 0, or -EINVAL when @handle is not a live handle of @client.
 */
int ion_free(struct ion_client *client, struct ion_handle *handle)
{
	if (!ion_kapi_lock(client, handle))
		return -EINVAL;
	ion_handle_put(handle);
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
 * -EINVAL for a bad @client or an fd that is not an ion dma-buf, -ENOMEM.
 */
struct ion_handle *ion_import_fd(struct ion_client *client, int fd)
{
	int id;

	if (IS_ERR_OR_NULL(client))
		return ERR_PTR(-EINVAL);
	return ion_client_import(client, fd, &id);
}
EXPORT_SYMBOL_NS_GPL(ion_import_fd, ION);

/**
 * ion_share_fd() - a new dma-buf fd for a handle's buffer
 * @client: the client
 * @handle: one of its handles
 *
 * The fd (O_CLOEXEC) is installed in the current process and holds its
 * own reference to the buffer.
 *
 * Context: Process context; sleeps.
 * Return: the fd, -EINVAL when @handle is not a live handle of @client, or
 * -EMFILE.
 */
int ion_share_fd(struct ion_client *client, struct ion_handle *handle)
{
	struct dma_buf *dmabuf;
	int fd;

	if (!ion_kapi_lock(client, handle))
		return -EINVAL;
	dmabuf = handle->buffer->dmabuf;
	get_dma_buf(dmabuf);
	mutex_unlock(&client->lock);

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
 * dma) can answer.  The address is a CPU physical address, not a DMA
 * address: devices behind an IOMMU must map the buffer through dma-buf.
 *
 * Context: Process context; sleeps.
 * Return: 0, -EINVAL when @handle is not a live handle of @client, or
 * -ENODEV when the buffer's heap has no phys op (the system heap: its
 * memory is not contiguous).
 */
int ion_phys(struct ion_client *client, struct ion_handle *handle,
	     phys_addr_t *addr, size_t *len)
{
	int ret;

	if (!addr || !len || !ion_kapi_lock(client, handle))
		return -EINVAL;
	ret = ion_buffer_phys(handle->buffer, addr, len);
	mutex_unlock(&client->lock);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(ion_phys, ION);

/**
 * ion_sg_table() - the buffer's backing as CPU pages
 * @client: the client
 * @handle: one of its handles
 *
 * The table is the buffer's own and shared: read it, do not change it and
 * do not map it for DMA - attach to the dma-buf for that.  It stays valid
 * as long as the handle.
 *
 * Context: Process context; sleeps.
 * Return: the sg table, or ERR_PTR(-EINVAL) when @handle is not a live
 * handle of @client, or the heap's error.
 */
struct sg_table *ion_sg_table(struct ion_client *client,
			      struct ion_handle *handle)
{
	struct sg_table *sgt;

	if (!ion_kapi_lock(client, handle))
		return ERR_PTR(-EINVAL);
	sgt = ion_buffer_sg_table(handle->buffer);
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
 * dma_buf_begin_cpu_access() / dma_buf_end_cpu_access() when devices use
 * the buffer too.
 *
 * Context: Process context; sleeps.
 * Return: the kernel address, or ERR_PTR(-EINVAL) when @handle is not a
 * live handle of @client, or ERR_PTR(-ENOMEM).
 */
void *ion_map_kernel(struct ion_client *client, struct ion_handle *handle)
{
	void *vaddr;

	if (!ion_kapi_lock(client, handle))
		return ERR_PTR(-EINVAL);
	vaddr = ion_buffer_kmap(handle->buffer);
	if (!IS_ERR(vaddr))
		handle->kmap_count++;
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
	if (!ion_kapi_lock(client, handle))
		return;
	if (handle->kmap_count) {
		handle->kmap_count--;
		ion_buffer_kunmap(handle->buffer);
	} else {
		pr_debug("ion: %s: unmap of a handle not mapped\n",
			 client->owner->name);
	}
	mutex_unlock(&client->lock);
}
EXPORT_SYMBOL_NS_GPL(ion_unmap_kernel, ION);
