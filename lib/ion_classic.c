// SPDX-License-Identifier: MIT
/*
 * libion: the classic AOSP libion functions.
 *
 * They work with either kernel ABI.  Which one a kernel serves is probed
 * with ION_IOC_FREE of handle 0, as AOSP does: -ENOTTY means the fd ABI
 * only, anything else the handle ABI (ion's kernel serves both and so is
 * "legacy"; ion_alloc_fd() then goes ALLOC, SHARE, FREE).  A definite
 * answer is cached for the process (there is one kernel); a probe that
 * failed for another reason (a bad fd) is not, nor an -ENOTTY from an fd
 * that is no ion device (a tty, /dev/null, a dma-buf): only one that
 * answers ION_IOC_HEAP_QUERY (4.12 on) proves the fd ABI.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include "ion_priv.h"

enum { ABI_UNKNOWN, ABI_LEGACY, ABI_FD };

static atomic_int ion_abi = ABI_UNKNOWN;

ION_PUBLIC int ion_open(void)
{
	int fd = open("/dev/ion", O_RDONLY | O_CLOEXEC);

	return fd < 0 ? ion_neg_errno() : fd;
}

ION_PUBLIC int ion_close(int fd)
{
	return close(fd) ? ion_neg_errno() : 0;
}

ION_PUBLIC int ion_free(int fd, ion_user_handle_t handle)
{
	struct ion_handle_data data = { .handle = handle };

	return ion_xioctl(fd, ION_IOC_FREE, &data);
}

ION_PUBLIC int ion_is_legacy(int fd)
{
	int abi = atomic_load_explicit(&ion_abi, memory_order_acquire);
	int ret;

	if (abi != ABI_UNKNOWN)
		return abi == ABI_LEGACY;
	ret = ion_free(fd, 0);
	if (ret == -ENOTTY) {
		struct ion_heap_query query;

		memset(&query, 0, sizeof(query));
		if (ion_xioctl(fd, ION_IOC_HEAP_QUERY, &query))
			return 0;	/* not an ion device: nothing learnt */
		abi = ABI_FD;
	} else {
		abi = ABI_LEGACY;
	}
	/* handle 0 is never valid: only -EINVAL is a definite answer */
	if (ret == -ENOTTY || ret == -EINVAL)
		atomic_store_explicit(&ion_abi, abi, memory_order_release);
	return abi == ABI_LEGACY;
}

ION_PUBLIC int ion_is_using_modular_heaps(int fd)
{
	__u32 version = 0;

	return !ion_xioctl(fd, ION_IOC_ABI_VERSION, &version) && version >= 2;
}

ION_PUBLIC int ion_alloc(int fd, size_t len, size_t align,
			 unsigned int heap_mask, unsigned int flags,
			 ion_user_handle_t *handle)
{
	struct ion_allocation_data_legacy data = {
		.len = len,
		.align = align,
		.heap_id_mask = heap_mask,
		.flags = flags,
	};
	int ret;

	if (!handle || !ion_is_legacy(fd))
		return -EINVAL;
	ret = ion_xioctl(fd, ION_IOC_ALLOC_LEGACY, &data);
	if (ret)
		return ret;
	*handle = data.handle;
	return 0;
}

ION_PUBLIC int ion_share(int fd, ion_user_handle_t handle, int *share_fd)
{
	struct ion_fd_data data = { .handle = handle, .fd = -1 };
	int ret;

	if (!share_fd || !ion_is_legacy(fd))
		return -EINVAL;
	ret = ion_xioctl(fd, ION_IOC_SHARE, &data);
	if (ret)
		return ret;
	if (data.fd < 0)
		return -EINVAL;
	*share_fd = data.fd;
	return 0;
}

ION_PUBLIC int ion_alloc_fd(int fd, size_t len, size_t align,
			    unsigned int heap_mask, unsigned int flags,
			    int *handle_fd)
{
	int ret;

	if (!handle_fd)
		return -EINVAL;
	if (ion_is_legacy(fd))
		ret = ion_ioc_alloc_shared(fd, len, align, heap_mask, flags);
	else
		ret = ion_ioc_alloc_fd(fd, len, heap_mask, flags);
	if (ret < 0)
		return ret;
	*handle_fd = ret;
	return 0;
}

ION_PUBLIC int ion_map(int fd, ion_user_handle_t handle, size_t length,
		       int prot, int flags, off_t offset, unsigned char **ptr,
		       int *map_fd)
{
	struct ion_fd_data data = { .handle = handle, .fd = -1 };
	void *p;
	int ret;

	if (!ptr || !map_fd || !length || offset < 0 || !ion_is_legacy(fd))
		return -EINVAL;
	ret = ion_xioctl(fd, ION_IOC_MAP, &data);
	if (ret)
		return ret;
	if (data.fd < 0)
		return -EINVAL;
	p = mmap(NULL, length, prot, flags, data.fd, offset);
	if (p == MAP_FAILED) {
		ret = ion_neg_errno();
		close(data.fd);
		return ret;
	}
	*ptr = p;
	*map_fd = data.fd;
	return 0;
}

ION_PUBLIC int ion_import(int fd, int share_fd, ion_user_handle_t *handle)
{
	struct ion_fd_data data = { .fd = share_fd };
	int ret;

	if (!handle || !ion_is_legacy(fd))
		return -EINVAL;
	ret = ion_xioctl(fd, ION_IOC_IMPORT, &data);
	if (ret)
		return ret;
	*handle = data.handle;
	return 0;
}

ION_PUBLIC int ion_sync_fd(int fd, int handle_fd)
{
	struct ion_fd_data data = { .fd = handle_fd };
	struct dma_buf_sync sync = {
		.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW,
	};

	if (ion_is_legacy(fd))
		return ion_xioctl(fd, ION_IOC_SYNC, &data);
	return ion_xioctl(handle_fd, DMA_BUF_IOCTL_SYNC, &sync);
}

ION_PUBLIC int ion_query_heap_cnt(int fd, int *cnt)
{
	struct ion_heap_query query;
	int ret;

	if (!cnt)
		return -EINVAL;
	memset(&query, 0, sizeof(query));
	ret = ion_xioctl(fd, ION_IOC_HEAP_QUERY, &query);
	if (ret)
		return ret;
	*cnt = (int)query.cnt;
	return 0;
}

ION_PUBLIC int ion_query_get_heaps(int fd, int cnt, void *buffers)
{
	struct ion_heap_query query;

	if (cnt < 0)
		return -EINVAL;
	memset(&query, 0, sizeof(query));
	/* NULL fills nothing: ask for the count, which checks the fd */
	if (buffers) {
		query.cnt = (__u32)cnt;
		query.heaps = (uintptr_t)buffers;
	}
	return ion_xioctl(fd, ION_IOC_HEAP_QUERY, &query);
}
