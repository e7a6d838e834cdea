// SPDX-License-Identifier: MIT
/*
 * libion: the ioctl helper every call goes through, and the other small
 * helpers the files share (errno, allocating a dma-buf fd through either
 * ABI, a sorted directory walk).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "ion_priv.h"

int ion_neg_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

int ion_xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	if (fd < 0)
		return -EBADF;
	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? ion_neg_errno() : 0;
}

int ion_ioc_alloc_fd(int fd, size_t len, unsigned int heap_mask,
		     unsigned int flags)
{
	struct ion_new_allocation_data data = {
		.len = len,
		.heap_id_mask = heap_mask,
		.flags = flags,
	};
	int ret;

	ret = ion_xioctl(fd, ION_IOC_NEW_ALLOC, &data);
	return ret ? ret : (int)data.fd;
}

int ion_ioc_alloc_shared(int fd, size_t len, size_t align,
			 unsigned int heap_mask, unsigned int flags)
{
	struct ion_allocation_data_legacy data = {
		.len = len,
		.align = align,
		.heap_id_mask = heap_mask,
		.flags = flags,
	};
	struct ion_fd_data share = { .fd = -1 };
	struct ion_handle_data free_data;
	int ret;

	ret = ion_xioctl(fd, ION_IOC_ALLOC_LEGACY, &data);
	if (ret)
		return ret;
	share.handle = data.handle;
	ret = ion_xioctl(fd, ION_IOC_SHARE, &share);
	free_data.handle = data.handle;
	ion_xioctl(fd, ION_IOC_FREE, &free_data);
	if (!ret && share.fd < 0)
		ret = -EINVAL;
	return ret ? ret : share.fd;
}

int ion_dir_foreach(const char *dir, const char *prefix,
		    int (*fn)(const char *name, void *data), void *data)
{
	struct dirent **names;
	int i, n, ret = 0;

	if (!fn)
		return -EINVAL;
	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		return ion_neg_errno();
	for (i = 0; i < n; i++) {
		const char *e = names[i]->d_name;

		if (!ret && e[0] != '.' &&
		    (!prefix || !strncmp(e, prefix, strlen(prefix))))
			ret = fn(e, data);
		free(names[i]);
	}
	free(names);
	return ret;
}
