// SPDX-License-Identifier: MIT
/*
 * libion: struct ion_device, /dev/ion with its heap list.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ion_priv.h"

/**
 * struct ion_device - an open /dev/ion
 * @fd:     the /dev/ion fd, owned
 * @fd_abi: the kernel has the fd ABI (HEAP_QUERY answered)
 * @cnt:    entries in @heaps
 * @heaps:  the heap list in priority order, read once at open
 *
 * Immutable after ion_device_open(), so it needs no lock.
 */
struct ion_device {
	int fd;
	int fd_abi;
	unsigned int cnt;
	struct ion_heap_data heaps[ION_NUM_HEAP_IDS];
};

/* Default ids (id == type) for kernels that cannot list their heaps. */
static const struct {
	const char *name;
	unsigned int id;
} ion_default_heaps[] = {
	{ ION_SYSTEM_HEAP_NAME, ION_HEAP_TYPE_SYSTEM },
	{ ION_SYSTEM_CONTIG_HEAP_NAME, ION_HEAP_TYPE_SYSTEM_CONTIG },
	{ ION_CARVEOUT_HEAP_NAME, ION_HEAP_TYPE_CARVEOUT },
	{ ION_DMA_HEAP_NAME, ION_HEAP_TYPE_DMA },
};

static int ion_device_load_heaps(struct ion_device *dev)
{
	struct ion_heap_query query;
	int ret;

	memset(&query, 0, sizeof(query));
	ret = ion_xioctl(dev->fd, ION_IOC_HEAP_QUERY, &query);
	if (ret == -ENOTTY)
		return 0;	/* handle ABI only: no list */
	if (ret)
		return ret;
	if (query.cnt > ION_NUM_HEAP_IDS)
		query.cnt = ION_NUM_HEAP_IDS;
	query.heaps = (uintptr_t)dev->heaps;
	ret = ion_xioctl(dev->fd, ION_IOC_HEAP_QUERY, &query);
	if (ret)
		return ret;
	dev->cnt = query.cnt;
	dev->fd_abi = 1;
	return 0;
}

ION_PUBLIC int ion_device_open(struct ion_device **devp)
{
	struct ion_device *dev;
	int ret;

	if (!devp)
		return -EINVAL;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->fd = ion_open();
	if (dev->fd < 0) {
		ret = dev->fd;
		goto err_free;
	}
	ret = ion_device_load_heaps(dev);
	if (ret)
		goto err_close;
	*devp = dev;
	return 0;

err_close:
	close(dev->fd);
err_free:
	free(dev);
	return ret;
}

ION_PUBLIC void ion_device_close(struct ion_device *dev)
{
	if (!dev)
		return;
	close(dev->fd);
	free(dev);
}

ION_PUBLIC int ion_device_fd(const struct ion_device *dev)
{
	return dev ? dev->fd : -EINVAL;
}

ION_PUBLIC int ion_device_heap_count(const struct ion_device *dev)
{
	return dev ? (int)dev->cnt : -EINVAL;
}

ION_PUBLIC const struct ion_heap_data *
ion_device_heap(const struct ion_device *dev, unsigned int index)
{
	return dev && index < dev->cnt ? &dev->heaps[index] : NULL;
}

ION_PUBLIC int ion_device_find_heap(const struct ion_device *dev,
				    const char *name, unsigned int *heap_id)
{
	unsigned int i;

	if (!dev || !name || !heap_id)
		return -EINVAL;
	for (i = 0; i < dev->cnt; i++) {
		if (!strncmp(dev->heaps[i].name, name, ION_MAX_HEAP_NAME)) {
			*heap_id = dev->heaps[i].heap_id;
			return 0;
		}
	}
	if (dev->fd_abi)
		return -ENOENT;
	for (i = 0; i < sizeof(ion_default_heaps) /
			sizeof(ion_default_heaps[0]); i++) {
		if (!strcmp(ion_default_heaps[i].name, name)) {
			*heap_id = ion_default_heaps[i].id;
			return 0;
		}
	}
	return -ENOENT;
}

ION_PUBLIC int ion_device_alloc(struct ion_device *dev, size_t len,
				unsigned int heap_mask, unsigned int flags)
{
	if (!dev)
		return -EINVAL;
	if (!dev->fd_abi)
		return ion_ioc_alloc_shared(dev->fd, len, 0, heap_mask, flags);
	return ion_ioc_alloc_fd(dev->fd, len, heap_mask, flags);
}

ION_PUBLIC int ion_device_alloc_by_name(struct ion_device *dev,
					const char *heap_name, size_t len,
					unsigned int flags)
{
	unsigned int id;
	int ret = ion_device_find_heap(dev, heap_name, &id);

	if (ret)
		return ret;
	return ion_device_alloc(dev, len, 1U << id, flags);
}
