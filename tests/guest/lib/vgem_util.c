// SPDX-License-Identifier: MIT
/*
 * vgem, DRM's virtual GEM driver, as a real dma-buf importer: open its
 * node, PRIME import and GEM close.
 */
#include "vgem_util.h"

void vgem_unload(void)
{
	if (system("modprobe -r vgem >/dev/null 2>&1"))
		tap_diag("modprobe -r vgem failed");
}

int open_vgem(void)
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

int vgem_import(int drm, int buf_fd, uint32_t *handle)
{
	struct it_drm_prime_handle p = { .fd = buf_fd };
	int ret = it_ioctl(drm, IT_DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	if (!ret)
		*handle = p.handle;
	return ret;
}

int vgem_close(int drm, uint32_t handle)
{
	struct it_drm_gem_close c = { .handle = handle };

	return it_ioctl(drm, IT_DRM_IOCTL_GEM_CLOSE, &c);
}
