// SPDX-License-Identifier: MIT
/*
 * libion: allocation over the dma-heap nodes in /dev/dma_heap/ (ion's
 * /dev/dma_heap/ion-* nodes and mainline's own heaps alike).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/dma-heap.h>

#include "ion_priv.h"

#define ION_DMA_HEAP_DIR	"/dev/dma_heap"

/**
 * struct ion_dma_heap - an open dma-heap node
 * @fd:   the node's fd, owned
 * @name: the node's name (the last path component)
 *
 * Immutable after ion_dma_heap_open().
 */
struct ion_dma_heap {
	int fd;
	char name[NAME_MAX + 1];
};

ION_PUBLIC int ion_dma_heap_open(const char *name, struct ion_dma_heap **heapp)
{
	char path[PATH_MAX];
	struct ion_dma_heap *heap;
	const char *base;
	struct stat st;
	int n;

	if (!name || !*name || !heapp)
		return -EINVAL;
	if (name[0] == '/')
		n = snprintf(path, sizeof(path), "%s", name);
	else if (strchr(name, '/'))
		return -EINVAL;
	else
		n = snprintf(path, sizeof(path), ION_DMA_HEAP_DIR "/%s", name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	heap = calloc(1, sizeof(*heap));
	if (!heap)
		return -ENOMEM;
	heap->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (heap->fd < 0) {
		n = ion_neg_errno();
		free(heap);
		return n;
	}
	/* "." or a stray file under /dev/dma_heap is no heap. */
	if (fstat(heap->fd, &st) || !S_ISCHR(st.st_mode)) {
		close(heap->fd);
		free(heap);
		return -EINVAL;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	n = (int)strnlen(base, sizeof(heap->name) - 1);
	memcpy(heap->name, base, n);
	heap->name[n] = 0;
	*heapp = heap;
	return 0;
}

ION_PUBLIC void ion_dma_heap_close(struct ion_dma_heap *heap)
{
	if (!heap)
		return;
	close(heap->fd);
	free(heap);
}

ION_PUBLIC const char *ion_dma_heap_name(const struct ion_dma_heap *heap)
{
	return heap ? heap->name : NULL;
}

ION_PUBLIC int ion_dma_heap_alloc(struct ion_dma_heap *heap, size_t len,
				  unsigned int fd_flags)
{
	struct dma_heap_allocation_data data;
	int ret;

	if (!heap)
		return -EINVAL;
	memset(&data, 0, sizeof(data));
	data.len = len;
	data.fd_flags = fd_flags ? fd_flags : O_RDWR | O_CLOEXEC;
	ret = ion_xioctl(heap->fd, DMA_HEAP_IOCTL_ALLOC, &data);
	return ret ? ret : (int)data.fd;
}

ION_PUBLIC int ion_dma_heap_foreach(const char *prefix,
				    int (*fn)(const char *name, void *data),
				    void *data)
{
	return ion_dir_foreach(ION_DMA_HEAP_DIR, prefix, fn, data);
}
