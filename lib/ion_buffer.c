// SPDX-License-Identifier: MIT
/*
 * libion: CPU access to any dma-buf fd (ion's or another exporter's).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include "ion_priv.h"

ION_PUBLIC int ion_buffer_size(int buf_fd, size_t *size)
{
	off_t end;

	if (!size)
		return -EINVAL;
	if (buf_fd < 0)
		return -EBADF;
	end = lseek(buf_fd, 0, SEEK_END);
	if (end < 0)
		return ion_neg_errno();
	/* dma-buf only allows seeking to 0 or the end; rewind for others */
	lseek(buf_fd, 0, SEEK_SET);
	*size = (size_t)end;
	return 0;
}

ION_PUBLIC int ion_buffer_map(int buf_fd, size_t len, int prot, void **ptr)
{
	void *p;

	if (!ptr || (prot & ~(PROT_READ | PROT_WRITE)))
		return -EINVAL;
	if (!len) {
		int ret = ion_buffer_size(buf_fd, &len);

		if (ret)
			return ret;
		if (!len)
			return -EINVAL;
	}
	p = mmap(NULL, len, prot, MAP_SHARED, buf_fd, 0);
	if (p == MAP_FAILED)
		return ion_neg_errno();
	*ptr = p;
	return 0;
}

ION_PUBLIC int ion_buffer_unmap(void *ptr, size_t len)
{
	if (!ptr || !len)
		return -EINVAL;
	return munmap(ptr, len) ? ion_neg_errno() : 0;
}

static int ion_buffer_sync(int buf_fd, unsigned int access, __u64 when)
{
	struct dma_buf_sync sync = { .flags = when };

	if (!access || (access & ~ION_CPU_RW))
		return -EINVAL;
	if (access & ION_CPU_READ)
		sync.flags |= DMA_BUF_SYNC_READ;
	if (access & ION_CPU_WRITE)
		sync.flags |= DMA_BUF_SYNC_WRITE;
	return ion_xioctl(buf_fd, DMA_BUF_IOCTL_SYNC, &sync);
}

ION_PUBLIC int ion_buffer_begin_cpu_access(int buf_fd, unsigned int access)
{
	return ion_buffer_sync(buf_fd, access, DMA_BUF_SYNC_START);
}

ION_PUBLIC int ion_buffer_end_cpu_access(int buf_fd, unsigned int access)
{
	return ion_buffer_sync(buf_fd, access, DMA_BUF_SYNC_END);
}

ION_PUBLIC int ion_buffer_set_name(int buf_fd, const char *name)
{
	if (!name)
		return -EINVAL;
	if (strlen(name) >= DMA_BUF_NAME_LEN)
		return -ENAMETOOLONG;
	/* the argument is the string itself, not a pointer to it */
	return ion_xioctl(buf_fd, DMA_BUF_SET_NAME_B, (void *)name);
}
