// SPDX-License-Identifier: GPL-2.0-only
/* ion: clients and handles. */
#include <linux/debugfs.h>
#include <linux/dma-buf.h>
#include <linux/err.h>
#include <linux/pid.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "ion_priv.h"

/**
 * DOC: clients and handles
 *
 * A client is a user process or a kernel driver.  A process has exactly
 * one client, found by its thread group (and address space: a new one
 * after execve()) when it opens /dev/ion: two opens in one process give
 * two files bound to the same client, and the client dies with the last
 * of them.  A kernel driver gets a client of its own
 * from ion_client_create().  A client's name and its usage for the
 * per-client quota are its owner's, which its buffers keep and a process's
 * next client adopts (ion_owner.c, DOC: owners).
 *
 * A handle is a client's counted reference to a buffer; it holds one
 * reference to the buffer's dma-buf, whatever its own count.  Handle ids
 * are small integers from 1, handed out cyclically so that a freed id is
 * not immediately valid again.  A client never has two handles to one
 * buffer: importing a buffer it already holds raises the count of the
 * handle it has, and that handle must then be freed once more.  The ids
 * of kernel clients' handles come from one counter shared by all kernel
 * clients, as a kernel handle is its id (ion_kapi.c).
 */

/* A new client, listed and visible in debugfs. */
static struct ion_client *ion_client_create_locked(struct ion_device *dev,
						   unsigned int heap_mask,
						   const char *name,
						   struct pid *pid)
{
	struct ion_client *client;

	lockdep_assert_held(&dev->client_lock);
	client = kzalloc(sizeof(*client), GFP_KERNEL);
	if (!client)
		return ERR_PTR(-ENOMEM);
	client->owner = ion_owner_create(dev, pid, name);
	if (!client->owner) {
		kfree(client);
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&client->ref);
	client->dev = dev;
	client->pid = get_pid(pid);
	if (pid && current->mm) {
		client->mm = current->mm;
		mmgrab(client->mm);
	}
	client->heap_mask = heap_mask;
	mutex_init(&client->lock);
	xa_init_flags(&client->handles, XA_FLAGS_ALLOC1);
	client->by_buffer = RB_ROOT;

	list_add_tail(&client->node, &dev->clients);
	WRITE_ONCE(dev->client_count, dev->client_count + 1);
	ion_debugfs_add_client(dev, client);
	return client;
}

/**
 * ion_client_get_user() - the calling process's client
 * @dev: the device
 *
 * Finds the client of the caller's thread group and address space, or
 * creates it, named "<comm>-<tgid>".  A process that replaced its image
 * with execve() gets a new client at its next open, even while a file of
 * the old one is still open (inherited by a child, or passed on): what
 * the new program opens never reaches the old program's handles.  A
 * /dev/ion fd it kept across execve() (no O_CLOEXEC) is still the old
 * client's, as an inherited fd is.
 *
 * Context: Process context; sleeps.
 * Return: the client with a new reference, or ERR_PTR(-ENOMEM).
 */
struct ion_client *ion_client_get_user(struct ion_device *dev)
{
	struct pid *pid = task_tgid(current);
	char comm[TASK_COMM_LEN], name[ION_CLIENT_NAME_LEN];
	struct ion_client *client;

	mutex_lock(&dev->client_lock);
	list_for_each_entry(client, &dev->clients, node) {
		if (client->pid == pid && client->mm == current->mm) {
			kref_get(&client->ref);
			goto out_unlock;
		}
	}
	get_task_comm(comm, current->group_leader);
	snprintf(name, sizeof(name), "%s-%d", comm, pid_nr(pid));
	client = ion_client_create_locked(dev, ~0U, name, pid);
out_unlock:
	mutex_unlock(&dev->client_lock);
	return client;
}

/**
 * ion_client_new() - create a kernel client
 * @dev:       the device
 * @heap_mask: heaps the client may allocate from
 * @name:      name for debugfs; "-<n>" is appended when it is taken
 *
 * Context: Process context; sleeps.
 * Return: the client, or ERR_PTR(-ENOMEM).
 */
struct ion_client *ion_client_new(struct ion_device *dev,
				  unsigned int heap_mask, const char *name)
{
	struct ion_client *client;

	mutex_lock(&dev->client_lock);
	client = ion_client_create_locked(dev, heap_mask, name, NULL);
	mutex_unlock(&dev->client_lock);
	return client;
}

/* Per-client accounting of one handle more (@sign 1) or less (-1). */
static void ion_client_account(struct ion_client *client,
			       struct ion_core_buffer *buffer, int sign)
{
	struct ion_heap *heap = buffer->base.heap;
	struct ion_client_heap_stat *st = &client->heap_stats[heap->id];
	u64 size = buffer->base.size;

	lockdep_assert_held(&client->lock);
	lockdep_assert_held(&client->handles.xa_lock);
	st->name = heap->name;
	if (sign > 0) {
		st->handles++;
		st->bytes += size;
		client->handle_count++;
		client->bytes += size;
	} else {
		st->handles--;
		st->bytes -= size;
		client->handle_count--;
		client->bytes -= size;
	}
}

/*
 * Drop @handle whatever its count: its mappings, sg table, id and dma-buf
 * reference.
 */
static void ion_handle_destroy(struct ion_handle *handle)
{
	struct ion_client *client = handle->client;
	struct ion_core_buffer *buffer = handle->buffer;

	lockdep_assert_held(&client->lock);
	for (; handle->kmap_count; handle->kmap_count--)
		ion_buffer_kunmap(buffer);
	if (handle->sgt)
		ion_buffer_sg_table_put(buffer, handle->sgt);
	xa_lock(&client->handles);
	__xa_erase(&client->handles, handle->id);
	ion_client_account(client, buffer, -1);
	xa_unlock(&client->handles);
	rb_erase(&handle->node, &client->by_buffer);
	atomic_dec(&buffer->handle_count);
	dma_buf_put(buffer->dmabuf);
	kfree(handle);
}

static void ion_handle_kref_release(struct kref *ref)
{
	ion_handle_destroy(container_of(ref, struct ion_handle, ref));
}

/**
 * ion_handle_put() - drop one count of a handle
 * @handle: the handle
 *
 * At 0 the handle goes, with its kernel mappings and its dma-buf
 * reference.
 *
 * Context: Process context; &ion_client.lock of the handle's client held.
 */
void ion_handle_put(struct ion_handle *handle)
{
	lockdep_assert_held(&handle->client->lock);
	kref_put(&handle->ref, ion_handle_kref_release);
}

/* Called by kref_put_mutex() with client_lock held; drops it. */
static void ion_client_release(struct kref *ref)
{
	struct ion_client *client = container_of(ref, struct ion_client, ref);
	struct ion_device *dev = client->dev;
	struct ion_handle *handle;
	unsigned long id;

	list_del(&client->node);
	WRITE_ONCE(dev->client_count, dev->client_count - 1);
	ion_owner_orphan(dev, client->owner);
	/* Before unlocking, so that the name can be reused at once. */
	debugfs_remove(client->debugfs);
	mutex_unlock(&dev->client_lock);

	/*
	 * A client may hold very many handles (debugfs_load: 100 000): let
	 * others run between them, or closing /dev/ion holds the CPU for
	 * seconds (22 s on the KASAN debug kernel: a soft lockup).
	 */
	mutex_lock(&client->lock);
	xa_for_each(&client->handles, id, handle) {
		ion_handle_destroy(handle);
		cond_resched();
	}
	mutex_unlock(&client->lock);

	xa_destroy(&client->handles);
	mutex_destroy(&client->lock);
	put_pid(client->pid);
	if (client->mm)
		mmdrop(client->mm);
	ion_owner_put(client->owner);
	kfree(client);
}

/**
 * ion_client_put() - drop a reference to a client
 * @client: the client
 *
 * The last reference destroys the client and all its handles.
 *
 * Context: Process context; sleeps.
 */
void ion_client_put(struct ion_client *client)
{
	kref_put_mutex(&client->ref, ion_client_release,
		       &client->dev->client_lock);
}

static struct ion_handle *ion_handle_by_buffer(struct ion_client *client,
					       struct ion_core_buffer *buffer)
{
	struct rb_node *n = client->by_buffer.rb_node;

	lockdep_assert_held(&client->lock);
	while (n) {
		struct ion_handle *h = rb_entry(n, struct ion_handle, node);

		if (buffer < h->buffer)
			n = n->rb_left;
		else if (buffer > h->buffer)
			n = n->rb_right;
		else
			return h;
	}
	return NULL;
}

static void ion_handle_link(struct ion_client *client,
			    struct ion_handle *handle)
{
	struct rb_node **p = &client->by_buffer.rb_node, *parent = NULL;

	lockdep_assert_held(&client->lock);
	while (*p) {
		struct ion_handle *h = rb_entry(*p, struct ion_handle, node);

		parent = *p;
		if (handle->buffer < h->buffer)
			p = &(*p)->rb_left;
		else
			p = &(*p)->rb_right;
	}
	rb_link_node(&handle->node, parent, p);
	rb_insert_color(&handle->node, &client->by_buffer);
}

/*
 * Kernel clients' handle ids, unique among all kernel clients (until they
 * wrap at INT_MAX): a kernel handle is its id (ion_kapi.c), so one client's
 * handle must not name another's.
 */
static atomic_t ion_kernel_handle_id = ATOMIC_INIT(0);

/* Reserve a free handle id of @client in @id: cyclic, from 1. */
static int ion_handle_id_reserve(struct ion_client *client, u32 *id)
{
	int ret;

	lockdep_assert_held(&client->lock);
	if (client->pid)
		return xa_alloc_cyclic(&client->handles, id, NULL,
				       XA_LIMIT(1, INT_MAX), &client->next_id,
				       GFP_KERNEL);
	do {
		*id = atomic_inc_return(&ion_kernel_handle_id) & INT_MAX;
		ret = *id ? xa_insert(&client->handles, *id, NULL, GFP_KERNEL) :
			    -EBUSY;
	} while (ret == -EBUSY);
	return ret;
}

/* A new handle to @buffer, taking over the caller's dma-buf reference. */
static struct ion_handle *ion_handle_new(struct ion_client *client,
					 struct ion_core_buffer *buffer)
{
	struct ion_handle *handle;
	u32 id;
	int ret;

	lockdep_assert_held(&client->lock);
	handle = kzalloc(sizeof(*handle), GFP_KERNEL);
	if (!handle)
		return ERR_PTR(-ENOMEM);
	/* Reserve the id first: storing into it then needs no memory. */
	ret = ion_handle_id_reserve(client, &id);
	if (ret < 0) {
		kfree(handle);
		return ERR_PTR(ret == -EBUSY ? -ENOMEM : ret);
	}
	kref_init(&handle->ref);
	handle->client = client;
	handle->buffer = buffer;
	handle->id = id;
	handle->serial = ++client->serials;
	atomic_inc(&buffer->handle_count);
	ion_handle_link(client, handle);

	xa_lock(&client->handles);
	WARN_ON_ONCE(xa_is_err(__xa_store(&client->handles, id, handle,
					  GFP_NOWAIT)));
	ion_client_account(client, buffer, 1);
	xa_unlock(&client->handles);
	return handle;
}

/**
 * ion_handle_add() - give a client a handle to a buffer
 * @client: the client
 * @buffer: the buffer; the caller's reference to its dma-buf is taken
 *	    over in every case (kept by a new handle, dropped otherwise)
 * @tag:    where to store the handle's id and serial
 *
 * When the client already holds the buffer, the count of its handle is
 * raised instead, up to ION_HANDLE_MAX_COUNT: an import costs no memory,
 * so nothing else would stop a loop from saturating the count (a kernel
 * warning, and the buffer leaked).
 *
 * Context: Process context; sleeps; takes &ion_client.lock.
 * Return: the handle, ERR_PTR(-ENOMEM), or ERR_PTR(-EOVERFLOW) when the
 * client's handle to the buffer is at ION_HANDLE_MAX_COUNT already.
 */
struct ion_handle *ion_handle_add(struct ion_client *client,
				  struct ion_core_buffer *buffer,
				  struct ion_handle_tag *tag)
{
	struct ion_handle *handle;
	bool put = true;

	mutex_lock(&client->lock);
	handle = ion_handle_by_buffer(client, buffer);
	if (handle && kref_read(&handle->ref) >= ION_HANDLE_MAX_COUNT) {
		handle = ERR_PTR(-EOVERFLOW);
	} else if (handle) {
		kref_get(&handle->ref);
	} else {
		handle = ion_handle_new(client, buffer);
		put = IS_ERR(handle);
	}
	if (!IS_ERR(handle)) {
		tag->id = handle->id;
		tag->serial = handle->serial;
	}
	mutex_unlock(&client->lock);
	if (put)
		dma_buf_put(buffer->dmabuf);
	return handle;
}

/**
 * ion_handle_find() - look a handle up by id
 * @client: the client
 * @id:	    the id user space gave
 *
 * Context: &ion_client.lock held.
 * Return: the handle, or NULL for an unknown or freed id.
 */
struct ion_handle *ion_handle_find(struct ion_client *client, int id)
{
	lockdep_assert_held(&client->lock);
	if (id <= 0)
		return NULL;
	return xa_load(&client->handles, id);
}

/**
 * ion_handle_sg_table() - the handle's own copy of its buffer's sg table
 * @handle: the handle
 *
 * Made on the first call and kept until the handle goes, so that its
 * holder may map it for DMA without touching the buffer's shared table;
 * meanwhile the backing cannot move (ion_buffer_sg_table_copy()).
 *
 * Context: Process context; sleeps; &ion_client.lock of the handle's
 * client held.
 * Return: the table, or an ERR_PTR.
 */
struct sg_table *ion_handle_sg_table(struct ion_handle *handle)
{
	struct sg_table *sgt;

	lockdep_assert_held(&handle->client->lock);
	if (handle->sgt)
		return handle->sgt;
	sgt = ion_buffer_sg_table_copy(handle->buffer);
	if (!IS_ERR(sgt))
		handle->sgt = sgt;
	return sgt;
}

/**
 * ion_client_alloc() - allocate a buffer and a handle to it
 * @client:    the client
 * @len:       size in bytes
 * @align:     0 or a power of two
 * @heap_mask: heaps to try; limited to the client's heaps
 * @flags:     ION_FLAG_*
 * @tag:       where to store the new handle's id and serial
 *
 * Context: Process context; sleeps.
 * Return: the handle, or an ERR_PTR as ion_buffer_create() gives.
 */
struct ion_handle *ion_client_alloc(struct ion_client *client, u64 len,
				    unsigned long align,
				    unsigned int heap_mask,
				    unsigned int flags,
				    struct ion_handle_tag *tag)
{
	struct ion_core_buffer *buffer;

	buffer = ion_buffer_create(client->dev, client->owner, len, align,
				   heap_mask & client->heap_mask, flags);
	if (IS_ERR(buffer))
		return ERR_CAST(buffer);
	return ion_handle_add(client, buffer, tag);
}

/**
 * ion_client_import() - a handle for a dma-buf fd that ion exported
 * @client: the client
 * @fd:	    the dma-buf fd
 * @tag:    where to store the handle's id and serial
 *
 * Context: Process context; sleeps.
 * Return: the handle (the client's existing one, count raised, if it
 * already holds the buffer), ERR_PTR(-EBADF) for a bad fd,
 * ERR_PTR(-EINVAL) when @fd is not a dma-buf that ion exported,
 * ERR_PTR(-ENOMEM), or ERR_PTR(-EOVERFLOW) (ion_handle_add()).
 */
struct ion_handle *ion_client_import(struct ion_client *client, int fd,
				     struct ion_handle_tag *tag)
{
	struct ion_core_buffer *buffer;
	struct dma_buf *dmabuf;

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return ERR_CAST(dmabuf);
	buffer = ion_dmabuf_to_buffer(dmabuf);
	if (!buffer) {
		dma_buf_put(dmabuf);
		return ERR_PTR(-EINVAL);
	}
	return ion_handle_add(client, buffer, tag);
}
