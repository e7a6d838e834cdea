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
int open_vgem(void);

/*
 * Leave the guest as the test found it: unload vgem and the DRM core it
 * pulled in (a diagnostic when that fails).
 */
void vgem_unload(void);

int vgem_import(int drm, int buf_fd, uint32_t *handle);

int vgem_close(int drm, uint32_t handle);

#endif /* ION_VGEM_UTIL_H */
