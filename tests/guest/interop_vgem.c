// SPDX-License-Identifier: MIT
/*
 * interop_vgem: DRM's vgem imports ion buffers with PRIME.
 *
 * For each heap HEAP_QUERY reports, an ion buffer written by the CPU is
 * imported into vgem (DRM_IOCTL_PRIME_FD_TO_HANDLE: drm_gem_prime_import
 * attaches vgem's device and maps the attachment through ion's
 * .map_dma_buf), and the GEM object is checked from vgem's side.
 *
 * What vgem allows on an imported object in 6.12: DRM_IOCTL_MODE_MAP_DUMB
 * goes to drm_gem_dumb_map_offset(), which refuses imported objects with
 * EINVAL ("Don't allow imported objects to be mapped"), so there is no
 * fake offset to mmap the card at.  PRIME_HANDLE_TO_FD on an imported
 * object hands back the very dma-buf it was imported from
 * (drm_gem_prime_handle_to_dmabuf returns import_attach->dmabuf): the test
 * checks that it is ion's (same inode, ION_IOC_IMPORT accepts it).  So
 * vgem offers no view of the bytes of an imported buffer: comparing a
 * mapping of that fd with the ion mapping would read one dma-buf twice
 * through ion's own mmap and could not fail, so this test makes no claim
 * about the bytes (heap_edu and the interop_v4l2_* tests have a device
 * read and write them).  In the other direction, vgem's own dumb buffer
 * (written through vgem's mmap) exported as a dma-buf is refused by
 * ION_IOC_IMPORT with EINVAL: ion imports only what it exported.
 *
 * No libdrm headers are installed on the build machine (/usr/include/drm
 * is missing), so the few structs and ioctl numbers needed are written
 * out from the kernel's include/uapi/drm/drm.h (vgem_util.h) and
 * drm_mode.h (below).
 */
#include "interop_v4l2.h"
#include "vgem_util.h"

/* From include/uapi/drm/drm_mode.h (6.12); the rest is in vgem_util.h. */
struct vg_drm_mode_create_dumb {
	__u32 height;
	__u32 width;
	__u32 bpp;
	__u32 flags;
	__u32 handle;
	__u32 pitch;
	__u64 size;
};

struct vg_drm_mode_map_dumb {
	__u32 handle;
	__u32 pad;
	__u64 offset;
};

#define VG_IOCTL_HANDLE_TO_FD	_IOWR('d', 0x2d, struct it_drm_prime_handle)
#define VG_IOCTL_CREATE_DUMB	_IOWR('d', 0xB2, struct vg_drm_mode_create_dumb)
#define VG_IOCTL_MAP_DUMB	_IOWR('d', 0xB3, struct vg_drm_mode_map_dumb)

#define VG_LEN		(64 * 1024)

/* Open the DRM card whose driver is "vgem", or -ENODEV. */
static int vg_open_card(char *path, size_t size)
{
	int i;

	for (i = 0; i < 16; i++) {
		struct it_drm_version v;
		char name[32] = "";
		int fd;

		snprintf(path, size, "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(&v, 0, sizeof(v));
		v.name = name;
		v.name_len = sizeof(name) - 1;
		if (!it_ioctl(fd, IT_DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -ENODEV;
}

static int vg_handle_to_fd(int card, __u32 handle)
{
	struct it_drm_prime_handle p = {
		.handle = handle, .flags = O_CLOEXEC | O_RDWR, .fd = -1,
	};
	int ret = it_ioctl(card, VG_IOCTL_HANDLE_TO_FD, &p);

	return ret ? ret : p.fd;
}

static int vg_map_dumb(int card, __u32 handle, __u64 *offset)
{
	struct vg_drm_mode_map_dumb m = { .handle = handle };
	int ret = it_ioctl(card, VG_IOCTL_MAP_DUMB, &m);

	if (!ret)
		*offset = m.offset;
	return ret;
}

static void vg_run(int ion, int card, const struct ion_heap_data *heap)
{
	const char *name = heap->name;
	struct iv_buf b = { .fd = -1 };
	__u32 handle = 0, again = 0;
	__u64 offset = 0;
	ion_user_handle_t ih;
	int ret, vfd, att;

	ret = iv_buf_alloc(ion, heap->heap_id, VG_LEN, &b);
	if (!ret)
		ret = iv_buf_pattern(&b, 7);
	if (!tap_ok(!ret, "vgem %s: allocate, map and fill a %d KiB ion buffer",
		    name, VG_LEN / 1024)) {
		tap_diag("%s", strerror(-ret));
		iv_buf_free(&b);
		return;
	}
	ret = vgem_import(card, b.fd, &handle);
	if (!tap_ok(!ret, "vgem %s: PRIME_FD_TO_HANDLE imports the ion fd", name)) {
		tap_diag("PRIME_FD_TO_HANDLE: %s", strerror(-ret));
		iv_buf_free(&b);
		return;
	}
	att = iv_attachments(b.fd, name);
	if (att != 1)
		tap_diag("attachments: %d", att);
	tap_ok(att == 1, "vgem %s: debugfs shows vgem's attachment", name);
	tap_ok(it_buffer_has_device(b.fd, name, "vgem") == 1,
	       "vgem %s: debugfs devices names vgem's device (vgem; on newer kernels a faux device, vgem(faux_driver))",
	       name);
	ret = vgem_import(card, b.fd, &again);
	if (ret || again != handle)
		tap_diag("second import: %d, handle %u (first %u)", ret, again, handle);
	tap_ok(!ret && again == handle, "vgem %s: importing it again gives the same GEM handle",
	       name);
	ret = vg_map_dumb(card, handle, &offset);
	it_expect(ret, EINVAL, "vgem %s: MAP_DUMB of the imported object is EINVAL (drm_gem_dumb_map_offset maps no imported object)",
		  name);

	vfd = vg_handle_to_fd(card, handle);
	if (!tap_ok(vfd >= 0 && it_ino(vfd) == it_ino(b.fd),
		    "vgem %s: PRIME_HANDLE_TO_FD gives back ion's dma-buf itself (same inode)",
		    name)) {
		tap_diag("PRIME_HANDLE_TO_FD: %s, inode %lu vs %lu",
			 vfd < 0 ? strerror(-vfd) : "ok",
			 vfd < 0 ? 0 : it_ino(vfd), it_ino(b.fd));
	}
	if (vfd >= 0) {
		ret = it_import(ion, vfd, &ih);
		it_expect(ret, 0, "vgem %s: ION_IOC_IMPORT takes the fd vgem exported",
			  name);
		if (!ret)
			it_free(ion, ih);
		close(vfd);
	}
	tap_errno(vgem_close(card, handle), 0, "vgem %s: GEM_CLOSE", name);
	att = iv_attachments(b.fd, name);
	if (att != 0)
		tap_diag("attachments: %d", att);
	tap_ok(att == 0, "vgem %s: vgem's attachment is gone after GEM_CLOSE", name);
	iv_buf_free(&b);
}

/* vgem's own buffer, exported: not ion's, so ION_IOC_IMPORT says EINVAL. */
static void vg_foreign(int ion, int card)
{
	struct vg_drm_mode_create_dumb c = { .width = 64, .height = 64, .bpp = 32 };
	ion_user_handle_t ih;
	__u64 offset = 0;
	unsigned char *p;
	int ret, vfd;

	ret = it_ioctl(card, VG_IOCTL_CREATE_DUMB, &c);
	if (!tap_ok(!ret, "vgem dumb buffer: CREATE_DUMB 64x64x32")) {
		tap_diag("CREATE_DUMB: %s", strerror(-ret));
		return;
	}
	ret = vg_map_dumb(card, c.handle, &offset);
	p = ret ? MAP_FAILED : mmap(NULL, c.size, PROT_READ | PROT_WRITE,
				    MAP_SHARED, card, (off_t)offset);
	if (tap_ok(p != MAP_FAILED, "vgem dumb buffer: MAP_DUMB and mmap of the card")) {
		it_fill(p, c.size, 5);
		munmap(p, c.size);
	} else {
		tap_diag("MAP_DUMB: %s", strerror(ret ? -ret : errno));
	}
	vfd = vg_handle_to_fd(card, c.handle);
	if (tap_ok(vfd >= 0, "vgem dumb buffer: PRIME_HANDLE_TO_FD")) {
		ret = it_import(ion, vfd, &ih);
		it_expect(ret, EINVAL, "vgem dumb buffer: ION_IOC_IMPORT refuses a dma-buf ion did not export");
		if (!ret)
			it_free(ion, ih);
		close(vfd);
	}
	tap_errno(vgem_close(card, c.handle), 0, "vgem dumb buffer: GEM_CLOSE");
}

int main(void)
{
	struct iv_prog p;
	char path[32];
	int card;
	unsigned int h;

	iv_prog_begin(&p);
	if (iv_load("vgem", NULL)) {
		tap_skip("vgem imports ion buffers", "vgem module not available");
		return iv_prog_abort(&p);
	}
	card = vg_open_card(path, sizeof(path));
	if (!tap_ok(card >= 0, "vgem loaded, its DRM card found by DRM_IOCTL_VERSION")) {
		iv_unload("vgem");
		return iv_prog_abort(&p);
	}
	tap_diag("vgem is %s", path);
	for (h = 0; h < p.hs.cnt; h++)
		vg_run(p.ion, card, &p.hs.h[h]);
	vg_foreign(p.ion, card);
	close(card);
	return iv_prog_end(&p, "vgem");
}
