// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the ioctls of /dev/ion - one table-driven dispatcher serving both
 * historic ABIs, native and 32-bit callers.
 *
 * These are compatibility ABIs: each input is checked exactly as the kernel
 * of its ABI checked it and no stricter (Documentation/abi-compat.rst has
 * the table).  Fields those kernels never read are ignored here too, and
 * flag bits they passed through unread are dropped before the core sees
 * them.
 */
#include <linux/compat.h>
#include <linux/dma-buf.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/uaccess.h>

#include "ion_priv.h"

/**
 * struct ion_ioctl_ctx - state of one ioctl call
 * @client:    the caller's client
 * @fd:	       an fd reserved by the command, installed after the result
 *	       was copied back, or -1
 * @file:      the file (a dma-buf reference) to install at @fd
 * @handle:    a handle the command created or raised (id 0: none);
 *	       dropped again if the result cannot be copied back and the
 *	       handle of that id is still that one (its serial)
 */
struct ion_ioctl_ctx {
	struct ion_client *client;
	int fd;
	struct file *file;
	struct ion_handle_tag handle;
};

/* Reserve an fd for @dmabuf, taking over the caller's reference to it. */
static int ion_ioctl_prepare_fd(struct ion_ioctl_ctx *ctx,
				struct dma_buf *dmabuf)
{
	int fd = get_unused_fd_flags(O_CLOEXEC);

	if (fd < 0) {
		dma_buf_put(dmabuf);
		return fd;
	}
	ctx->fd = fd;
	ctx->file = dmabuf->file;
	return fd;
}

/* Install the reserved fd on success, undo the command's effects if not. */
static void ion_ioctl_finish(struct ion_ioctl_ctx *ctx, long ret)
{
	struct ion_client *client = ctx->client;
	struct ion_handle *handle;

	if (ret >= 0) {
		if (ctx->file)
			fd_install(ctx->fd, ctx->file);
		return;
	}
	if (ctx->file) {
		put_unused_fd(ctx->fd);
		fput(ctx->file);
	}
	if (ctx->handle.id) {
		mutex_lock(&client->lock);
		handle = ion_handle_find(client, ctx->handle.id);
		if (handle && handle->serial == ctx->handle.serial)
			ion_handle_put(handle);
		mutex_unlock(&client->lock);
	}
}

static long ion_ioctl_alloc(struct ion_ioctl_ctx *ctx, void *arg)
{
	struct ion_new_allocation_data *data = arg;
	struct ion_client *client = ctx->client;
	struct ion_core_buffer *buffer;
	int fd;

	/* 4.12-5.10 never read fd or unused on input. */
	buffer = ion_buffer_create(client->dev, client->owner, data->len, 0,
				   data->heap_id_mask & client->heap_mask,
				   data->flags & ION_FLAGS_VALID);
	if (IS_ERR(buffer))
		return PTR_ERR(buffer);
	fd = ion_ioctl_prepare_fd(ctx, buffer->dmabuf);
	if (fd < 0)
		return fd;
	data->fd = fd;
	return 0;
}

/*
 * The handle ABI's kernels passed align to the heaps, which refused only
 * an align above what they could give (above PAGE_SIZE for page-based
 * heaps) and ignored the rest: any align up to PAGE_SIZE, power of two or
 * not, is met by page-aligned memory and is dropped here.  Nothing tested
 * a larger align for a power of two either: the contiguous heap took any
 * align up to its buffer's order, whose natural alignment met it, so ion
 * asks for the next power of two, which is what that memory gave.
 */
static long ion_ioctl_alloc_common(struct ion_ioctl_ctx *ctx, u64 len,
				   unsigned long align, unsigned int heap_mask,
				   unsigned int flags, int *handle)
{
	struct ion_handle *h;

	if (align <= PAGE_SIZE)
		align = 0;
	else if (!is_power_of_2(align) && align <= ULONG_MAX / 2 + 1)
		align = roundup_pow_of_two(align);
	h = ion_client_alloc(ctx->client, len, align, heap_mask,
			     flags & ION_FLAGS_VALID, &ctx->handle);
	if (IS_ERR(h))
		return PTR_ERR(h);
	*handle = ctx->handle.id;
	return 0;
}

/*
 * A 64-bit caller of the 3.4 (article) ABI uses this command too: its
 * struct { size_t len, align; unsigned int flags; void *handle; } is also
 * 32 bytes.  Its heap mask lands in heap_id_mask, its padding in flags and
 * its handle pointer over handle and the tail padding, which is cleared so
 * that the pointer reads as the handle id.
 */
static long ion_ioctl_alloc_legacy(struct ion_ioctl_ctx *ctx, void *arg)
{
	struct ion_allocation_data_legacy *data = arg;
	long ret;

	ret = ion_ioctl_alloc_common(ctx, data->len, data->align,
				     data->heap_id_mask, data->flags,
				     &data->handle);
	memset((u8 *)data + offsetofend(typeof(*data), handle), 0,
	       sizeof(*data) - offsetofend(typeof(*data), handle));
	return ret;
}

static long ion_ioctl_free(struct ion_ioctl_ctx *ctx, void *arg)
{
	struct ion_handle_data *data = arg;
	struct ion_client *client = ctx->client;
	struct ion_handle *handle;

	mutex_lock(&client->lock);
	handle = ion_handle_find(client, data->handle);
	if (handle)
		ion_handle_put(handle);
	mutex_unlock(&client->lock);
	return handle ? 0 : -EINVAL;
}

static long ion_ioctl_share(struct ion_ioctl_ctx *ctx, void *arg)
{
	struct ion_fd_data *data = arg;
	struct ion_client *client = ctx->client;
	struct ion_handle *handle;
	struct dma_buf *dmabuf = NULL;
	int fd;

	mutex_lock(&client->lock);
	handle = ion_handle_find(client, data->handle);
	if (handle) {
		dmabuf = handle->buffer->dmabuf;
		get_dma_buf(dmabuf);
	}
	mutex_unlock(&client->lock);
	if (!dmabuf)
		return -EINVAL;
	fd = ion_ioctl_prepare_fd(ctx, dmabuf);
	if (fd < 0)
		return fd;
	data->fd = fd;
	return 0;
}

static long ion_ioctl_import(struct ion_ioctl_ctx *ctx, void *arg)
{
	struct ion_fd_data *data = arg;
	struct ion_handle *handle;

	handle = ion_client_import(ctx->client, data->fd, &ctx->handle);
	if (IS_ERR(handle))
		return PTR_ERR(handle);
	data->handle = ctx->handle.id;
	return 0;
}

static long ion_ioctl_custom(struct ion_ioctl_ctx *ctx, void *arg)
{
	struct ion_custom_data *data = arg;

	return ion_heap_custom_ioctl(ctx->client->dev, data->cmd, data->arg);
}

static long ion_ioctl_sync(struct ion_ioctl_ctx *ctx, void *arg)
{
	struct ion_fd_data *data = arg;

	return ion_dmabuf_sync_fd(data->fd);
}

static long ion_ioctl_heap_query(struct ion_ioctl_ctx *ctx, void *arg)
{
	struct ion_heap_query *query = arg;

	if (query->reserved0 || query->reserved1 || query->reserved2)
		return -EINVAL;
	return ion_heap_query(ctx->client->dev, u64_to_user_ptr(query->heaps),
			      &query->cnt);
}

static long ion_ioctl_abi_version(struct ion_ioctl_ctx *ctx, void *arg)
{
	*(u32 *)arg = ION_ABI_VERSION;
	return 0;
}

/*
 * The handle ABI's structs as a 32-bit process lays them out (size_t and
 * unsigned long are 4 bytes there); all other structs are the same.
 */
struct ion_allocation_data_legacy32 {
	u32 len;
	u32 align;
	u32 heap_id_mask;
	u32 flags;
	s32 handle;
};

struct ion_custom_data32 {
	u32 cmd;
	u32 arg;
};

#define ION_IOC_ALLOC_LEGACY32	_IOWR(ION_IOC_MAGIC, 0, \
				      struct ion_allocation_data_legacy32)
#define ION_IOC_CUSTOM32	_IOWR(ION_IOC_MAGIC, 6, struct ion_custom_data32)

/*
 * The 3.4 ABI (the LWN article's): the heap mask is in flags, there are no
 * buffer flags (ion's default, uncached, is used), and the handle is a
 * pointer.  For a 32-bit caller only ALLOC differs from the 3.10 ABI (16
 * bytes); for a 64-bit caller ALLOC has the 3.10 size (see
 * ion_ioctl_alloc_legacy()) and the handle structs grow to pointer size.
 */
struct ion_allocation_data_article32 {
	u32 len;
	u32 align;
	u32 flags;
	u32 handle;
};

struct ion_handle_data_article64 {
	u64 handle;
};

struct ion_fd_data_article64 {
	u64 handle;
	s32 fd;
	u32 pad;
};

#define ION_IOC_ALLOC_ARTICLE32	_IOWR(ION_IOC_MAGIC, 0, \
				      struct ion_allocation_data_article32)
#define ION_IOC_FREE_ARTICLE64	_IOWR(ION_IOC_MAGIC, 1, \
				      struct ion_handle_data_article64)
#define ION_IOC_MAP_ARTICLE64	_IOWR(ION_IOC_MAGIC, 2, \
				      struct ion_fd_data_article64)
#define ION_IOC_SHARE_ARTICLE64	_IOWR(ION_IOC_MAGIC, 4, \
				      struct ion_fd_data_article64)
#define ION_IOC_IMPORT_ARTICLE64 _IOWR(ION_IOC_MAGIC, 5, \
				       struct ion_fd_data_article64)

static long ion_ioctl_alloc_article32(struct ion_ioctl_ctx *ctx, void *arg)
{
	struct ion_allocation_data_article32 *data = arg;
	int handle;
	long ret;

	ret = ion_ioctl_alloc_common(ctx, data->len, data->align, data->flags,
				     0, &handle);
	if (ret >= 0)
		data->handle = handle;
	return ret;
}

/* A pointer-sized handle ion never gave out is an unknown handle. */
static int ion_ioctl_article_handle(u64 handle)
{
	return handle > INT_MAX ? 0 : handle;
}

static long ion_ioctl_free_article64(struct ion_ioctl_ctx *ctx, void *arg)
{
	struct ion_handle_data_article64 *data = arg;
	struct ion_handle_data h = {
		.handle = ion_ioctl_article_handle(data->handle),
	};

	return ion_ioctl_free(ctx, &h);
}

static long ion_ioctl_share_article64(struct ion_ioctl_ctx *ctx, void *arg)
{
	struct ion_fd_data_article64 *data = arg;
	struct ion_fd_data fdd = {
		.handle = ion_ioctl_article_handle(data->handle),
	};
	long ret;

	ret = ion_ioctl_share(ctx, &fdd);
	data->fd = fdd.fd;
	return ret;
}

static long ion_ioctl_import_article64(struct ion_ioctl_ctx *ctx, void *arg)
{
	struct ion_fd_data_article64 *data = arg;
	struct ion_fd_data fdd = { .fd = data->fd };
	long ret;

	ret = ion_ioctl_import(ctx, &fdd);
	data->handle = fdd.handle;
	return ret;
}

static long ion_ioctl_alloc_legacy32(struct ion_ioctl_ctx *ctx, void *arg)
{
	struct ion_allocation_data_legacy32 *data = arg;

	return ion_ioctl_alloc_common(ctx, data->len, data->align,
				      data->heap_id_mask, data->flags,
				      &data->handle);
}

static long ion_ioctl_custom32(struct ion_ioctl_ctx *ctx, void *arg)
{
	struct ion_custom_data32 *data = arg;

	return ion_heap_custom_ioctl(ctx->client->dev, data->cmd,
				     (unsigned long)compat_ptr(data->arg));
}

/* Which callers a command is for. */
#define ION_IOCTL_NATIVE	BIT(0)
#define ION_IOCTL_COMPAT	BIT(1)
#define ION_IOCTL_BOTH		(ION_IOCTL_NATIVE | ION_IOCTL_COMPAT)

/**
 * struct ion_ioctl_desc - one ioctl command
 * @cmd:   the full command number; its size selects the ABI
 * @fn:	   the handler; gets the argument copied in, fills it for copying
 *	   out, returns >= 0 or -errno
 * @flags: ION_IOCTL_NATIVE, ION_IOCTL_COMPAT
 */
struct ion_ioctl_desc {
	unsigned int cmd;
	long (*fn)(struct ion_ioctl_ctx *ctx, void *arg);
	unsigned int flags;
};

static const struct ion_ioctl_desc ion_ioctls[] = {
	{ ION_IOC_NEW_ALLOC, ion_ioctl_alloc, ION_IOCTL_BOTH },
	{ ION_IOC_ALLOC_LEGACY, ion_ioctl_alloc_legacy, ION_IOCTL_NATIVE },
	{ ION_IOC_ALLOC_LEGACY32, ion_ioctl_alloc_legacy32, ION_IOCTL_COMPAT },
	{ ION_IOC_ALLOC_ARTICLE32, ion_ioctl_alloc_article32, ION_IOCTL_COMPAT },
	{ ION_IOC_FREE_ARTICLE64, ion_ioctl_free_article64, ION_IOCTL_NATIVE },
	{ ION_IOC_MAP_ARTICLE64, ion_ioctl_share_article64, ION_IOCTL_NATIVE },
	{ ION_IOC_SHARE_ARTICLE64, ion_ioctl_share_article64, ION_IOCTL_NATIVE },
	{ ION_IOC_IMPORT_ARTICLE64, ion_ioctl_import_article64,
	  ION_IOCTL_NATIVE },
	{ ION_IOC_FREE, ion_ioctl_free, ION_IOCTL_BOTH },
	{ ION_IOC_MAP, ion_ioctl_share, ION_IOCTL_BOTH },
	{ ION_IOC_SHARE, ion_ioctl_share, ION_IOCTL_BOTH },
	{ ION_IOC_IMPORT, ion_ioctl_import, ION_IOCTL_BOTH },
	{ ION_IOC_CUSTOM, ion_ioctl_custom, ION_IOCTL_NATIVE },
	{ ION_IOC_CUSTOM32, ion_ioctl_custom32, ION_IOCTL_COMPAT },
	{ ION_IOC_SYNC, ion_ioctl_sync, ION_IOCTL_BOTH },
	{ ION_IOC_HEAP_QUERY, ion_ioctl_heap_query, ION_IOCTL_BOTH },
	{ ION_IOC_ABI_VERSION, ion_ioctl_abi_version, ION_IOCTL_BOTH },
};

/* Room for the largest argument (struct ion_allocation_data_legacy). */
#define ION_IOCTL_MAX_SIZE	32

static const struct ion_ioctl_desc *
ion_ioctl_lookup(unsigned int cmd, unsigned int caller)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ion_ioctls); i++) {
		if (ion_ioctls[i].cmd == cmd && (ion_ioctls[i].flags & caller))
			return &ion_ioctls[i];
	}
	return NULL;
}

static long ion_ioctl_dispatch(struct file *file, unsigned int cmd,
			       void __user *uarg, unsigned int caller)
{
	struct ion_ioctl_ctx ctx = { .client = file->private_data, .fd = -1 };
	const struct ion_ioctl_desc *desc;
	u64 data[ION_IOCTL_MAX_SIZE / sizeof(u64)] = { };
	unsigned int size = _IOC_SIZE(cmd);
	long ret;

	desc = ion_ioctl_lookup(cmd, caller);
	if (!desc || WARN_ON_ONCE(size > sizeof(data)))
		return -ENOTTY;
	if ((_IOC_DIR(cmd) & _IOC_WRITE) && copy_from_user(data, uarg, size))
		return -EFAULT;

	ret = desc->fn(&ctx, data);
	if (ret >= 0 && (_IOC_DIR(cmd) & _IOC_READ) &&
	    copy_to_user(uarg, data, size))
		ret = -EFAULT;
	ion_ioctl_finish(&ctx, ret);
	return ret;
}

/**
 * ion_ioctl() - the unlocked_ioctl of /dev/ion
 * @file: the caller's /dev/ion file; its private data is the client
 * @cmd:  the command
 * @arg:  the argument, a user pointer
 *
 * Context: Process context; sleeps.
 * Return: 0 or a value the command defines, -ENOTTY for an unknown
 * command, -EFAULT for an unreadable or unwritable argument, or the
 * command's -errno (Documentation/ion.rst lists them).
 */
long ion_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	return ion_ioctl_dispatch(file, cmd, (void __user *)arg,
				  ION_IOCTL_NATIVE);
}

/**
 * ion_compat_ioctl() - the compat_ioctl of /dev/ion, for 32-bit callers
 * @file: the caller's /dev/ion file
 * @cmd:  the command, with the 32-bit layout's size in it
 * @arg:  the argument, a 32-bit user pointer
 *
 * Context: Process context; sleeps.
 * Return: as ion_ioctl().
 */
long ion_compat_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	return ion_ioctl_dispatch(file, cmd, compat_ptr(arg), ION_IOCTL_COMPAT);
}
