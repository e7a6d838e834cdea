/* SPDX-License-Identifier: MIT */
/*
 * vgem, DRM's virtual GEM driver, as a real dma-buf importer for guest
 * tests: open its node (modprobe vgem) and import or drop a dma-buf with
 * PRIME.  No libdrm headers on the build machine: the few DRM uapi
 * definitions needed are written out from include/uapi/drm/drm.h (6.12).
 */
#ifndef ION_VGEM_UTIL_H
#define ION_VGEM_UTIL_H

#include "ion_test_util.h"

struct it_drm_version {
	int version_major, version_minor, version_patchlevel;
	size_t name_len;
	char *name;
	size_t date_len;
	char *date;
	size_t desc_len;
	char *desc;
};

struct it_drm_gem_close {
	uint32_t handle;
	uint32_t pad;
};

struct it_drm_prime_handle {
	uint32_t handle;
	uint32_t flags;
	int32_t fd;
};

#define IT_DRM_IOCTL_VERSION	_IOWR('d', 0x00, struct it_drm_version)
#define IT_DRM_IOCTL_GEM_CLOSE	_IOW('d', 0x09, struct it_drm_gem_close)
#define IT_DRM_IOCTL_PRIME_FD_TO_HANDLE \
	_IOWR('d', 0x2e, struct it_drm_prime_handle)

/* An open vgem node, or -errno. */
static inline int open_vgem(void)
{
	static const char *const nodes[] = {
		"/dev/dri/renderD128", "/dev/dri/renderD129",
		"/dev/dri/card0", "/dev/dri/card1",
	};
	unsigned int i;

	if (system("modprobe vgem >/dev/null 2>&1"))
		return -ENOENT;
	for (i = 0; i < IT_ARRAY_SIZE(nodes); i++) {
		struct it_drm_version v;
		char name[16] = "";
		int fd = open(nodes[i], O_RDWR | O_CLOEXEC);

		if (fd < 0)
			continue;
		memset(&v, 0, sizeof(v));
		v.name = name;
		v.name_len = sizeof(name) - 1;
		if (!it_ioctl(fd, IT_DRM_IOCTL_VERSION, &v) &&
		    !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -ENODEV;
}

static inline int vgem_import(int drm, int buf_fd, uint32_t *handle)
{
	struct it_drm_prime_handle p = { .fd = buf_fd };
	int ret = it_ioctl(drm, IT_DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	if (!ret)
		*handle = p.handle;
	return ret;
}

static inline int vgem_close(int drm, uint32_t handle)
{
	struct it_drm_gem_close c = { .handle = handle };

	return it_ioctl(drm, IT_DRM_IOCTL_GEM_CLOSE, &c);
}

#endif /* ION_VGEM_UTIL_H */
