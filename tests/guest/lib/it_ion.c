// SPDX-License-Identifier: MIT
/*
 * /dev/ion through raw ioctls (no libion, so the -m32 programs use them
 * too): opening, the heap list, allocation in both ABIs, SHARE, IMPORT,
 * FREE and dma-buf sync.  Every function returns >= 0 or -errno.
 */
#include "ion_test_util.h"

int it_open(void)
{
	int fd = open(IT_DEV, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int it_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

int it_heaps_load(int fd, struct it_heaps *hs)
{
	struct ion_heap_query q;
	int ret;

	memset(hs, 0, sizeof(*hs));
	memset(&q, 0, sizeof(q));
	ret = it_ioctl(fd, ION_IOC_HEAP_QUERY, &q);
	if (ret)
		return ret;
	if (q.cnt > ION_NUM_HEAP_IDS)
		return -E2BIG;
	q.heaps = (uintptr_t)hs->h;
	ret = it_ioctl(fd, ION_IOC_HEAP_QUERY, &q);
	if (ret)
		return ret;
	hs->cnt = q.cnt;
	return 0;
}

const struct ion_heap_data *
it_heap_find(const struct it_heaps *hs, const char *name)
{
	unsigned int i;

	for (i = 0; i < hs->cnt; i++)
		if (!strncmp(hs->h[i].name, name, ION_MAX_HEAP_NAME))
			return &hs->h[i];
	return NULL;
}

const struct it_heap *it_known_next(const struct it_heaps *hs,
				    unsigned int *i)
{
	for (; *i < IT_ARRAY_SIZE(it_known_heaps); (*i)++) {
		if (it_heap_find(hs, it_known_heaps[*i].name))
			return &it_known_heaps[*i];
		tap_skip(it_known_heaps[*i].name, "heap not registered");
	}
	return NULL;
}

unsigned int it_heaps_mask(const struct it_heaps *hs)
{
	unsigned int i, mask = 0;

	for (i = 0; i < hs->cnt; i++)
		mask |= 1U << hs->h[i].heap_id;
	return mask;
}

int it_setup(struct it_heaps *hs)
{
	int fd = it_open();
	int ret;

	if (fd < 0) {
		tap_ok(0, "open " IT_DEV);
		tap_diag("open: %s", strerror(-fd));
		exit(1);
	}
	ret = it_heaps_load(fd, hs);
	if (ret) {
		tap_ok(0, "ION_IOC_HEAP_QUERY");
		tap_diag("HEAP_QUERY: %s", strerror(-ret));
		exit(1);
	}
	return fd;
}

int it_alloc_fd(int fd, uint64_t len, unsigned int mask,
		unsigned int flags)
{
	struct ion_new_allocation_data a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.len = len;
	a.heap_id_mask = mask;
	a.flags = flags;
	ret = it_ioctl(fd, ION_IOC_NEW_ALLOC, &a);
	return ret ? ret : (int)a.fd;
}

int it_alloc_handle(int fd, size_t len, size_t align,
		    unsigned int mask, unsigned int flags,
		    ion_user_handle_t *handle)
{
	struct ion_allocation_data_legacy a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.len = len;
	a.align = align;
	a.heap_id_mask = mask;
	a.flags = flags;
	ret = it_ioctl(fd, ION_IOC_ALLOC_LEGACY, &a);
	if (!ret)
		*handle = a.handle;
	return ret;
}

int it_alloc_abi(int fd, uint64_t len, unsigned int mask, unsigned int flags,
		 int legacy)
{
	ion_user_handle_t h;

	if (legacy)
		return it_alloc_handle(fd, (size_t)len, 0, mask, flags, &h);
	return it_alloc_fd(fd, len, mask, flags);
}

int it_free(int fd, ion_user_handle_t handle)
{
	struct ion_handle_data d = { .handle = handle };

	return it_ioctl(fd, ION_IOC_FREE, &d);
}

int it_share_cmd(int fd, unsigned long cmd,
		 ion_user_handle_t handle)
{
	struct ion_fd_data d = { .handle = handle, .fd = -1 };
	int ret = it_ioctl(fd, cmd, &d);

	return ret ? ret : d.fd;
}

int it_share(int fd, ion_user_handle_t handle)
{
	return it_share_cmd(fd, ION_IOC_SHARE, handle);
}

int it_import(int fd, int buf_fd, ion_user_handle_t *handle)
{
	struct ion_fd_data d = { .fd = buf_fd };
	int ret = it_ioctl(fd, ION_IOC_IMPORT, &d);

	if (!ret)
		*handle = d.handle;
	return ret;
}

int it_sync(int buf_fd, unsigned long long flags)
{
	struct dma_buf_sync s = { .flags = flags };

	return it_ioctl(buf_fd, DMA_BUF_IOCTL_SYNC, &s);
}
