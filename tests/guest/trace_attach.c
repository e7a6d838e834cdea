// SPDX-License-Identifier: MIT
/*
 * trace_attach: ion's device events carry the importing device's name
 * (dev_name()), read back through a tracefs instance of the test's own.
 * edu, through ion_test's plain dma-buf import: ion_attach, then ion_map
 * with dir=bidirectional and nents equal to the DMA segments ion_test
 * counted, and on release ion_unmap and ion_detach; the device named is
 * edu (its sysfs vendor and device ids).  vgem's PRIME import: ion_attach
 * with dev=vgem, ion_detach after GEM_CLOSE.  The auto heap's
 * ion_backing: once at edu's first use (its mask, the backing chosen), at
 * a CPU first use (system), and cause=move with edu's name when edu
 * attaches late to an unmapped CPU-first buffer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heap_util.h"
#include "ion_test_util.h"
#include "trace_util.h"
#include "vgem_util.h"

#define LEN	(256 * 1024)

static struct tr_inst inst;

static void expect(const char *text, const char *event,
		   const char *const *fields, const char *what)
{
	int found = text && tr_find(text, event, fields);

	if (!found)
		tap_diag("no %s with %s %s; buffer:\n%s", event, fields[0],
			 fields[1] ? fields[1] : "", text ? text : "-");
	tap_ok(found, "%s", what);
}

/* Is @dev the edu PCI device (1234:11e8)? */
static int is_edu(const char *dev)
{
	static const char *const ids[][2] = {
		{ "vendor", "0x1234" }, { "device", "0x11e8" },
	};
	char path[128], *v;
	unsigned int i;
	int ok = 1;

	for (i = 0; i < 2 && ok; i++) {
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", dev,
			 ids[i][0]);
		v = NULL;
		ok = it_read_file(path, &v) >= 0 &&
		     !strncmp(v, ids[i][1], strlen(ids[i][1]));
		free(v);
	}
	return ok;
}

/* The edu device among the ion_attach events of @ino, in @dev. */
static int find_edu(const char *text, const char *ino, char *dev,
		    size_t size)
{
	const char *const f[] = { ino, NULL };
	const char *line = text;

	while (line && (line = tr_find(line, "ion_attach", f))) {
		if (!tr_field(line, "dev", dev, size) && is_edu(dev))
			return 0;
		line = strchr(line, '\n');
	}
	return -ENOENT;
}

/*
 * The auto buffer edu mapped first: one ion_backing at its first use,
 * with edu's mask among the constraints and the backing it chose.
 */
static void backing_first_case(const char *text, const char *ino,
			       const struct ion_test_info *info)
{
	char mask[48];
	const char *const f[] = {
		"cause=first_use", "dev=-", ino, "ret=0", "state=backed",
		info->iommu ? "backing=scattered" : "backing=contiguous",
		info->iommu ? "mask=none" : mask, NULL,
	};

	snprintf(mask, sizeof(mask), "mask=%#llx",
		 (1ULL << info->dma_bits) - 1);
	expect(text, "ion_backing", f,
	       "ion_backing: first use by edu, its mask, the backing chosen");
	tap_ok(tr_count(text, "ion_backing", f + 2) == 1,
	       "ion_backing: once for the buffer");
}

/*
 * A CPU-first auto buffer of two chunks (system backing), unmapped, then
 * edu attaching: the backing moves, and ion_backing says so with edu's
 * name.  Behind an IOMMU edu fits any backing: no move.
 */
static void backing_move_case(int ion)
{
	const size_t len = (64 << 10) + 4096;
	char ino[48], dev[96], mask[48], *text = NULL;
	const char *const first[] = {
		"cause=first_use", ino, "ret=0", "backing=system", NULL,
	};
	const char *const moved[] = {
		"cause=move", dev, ino, "ret=0", "backing=contiguous", mask,
		"moves=1", NULL,
	};
	struct ion_test_info info;
	struct ion_test_import imp;
	int tfd = ht_test_open(), fd = -1;
	unsigned char *p;

	if (tfd < 0 || ht_test_info(tfd, &info) || !info.has_edu ||
	    info.iommu) {
		tap_skip("ion_backing on a move", "no edu, or edu behind an IOMMU");
		goto out;
	}
	tr_clear(&inst);
	fd = ht_alloc_map(ion, len, ION_HEAP_AUTO_ID, ION_FLAG_CACHED, &p);
	if (!tap_ok(fd >= 0, "CPU-first auto buffer mapped"))
		goto out;
	snprintf(ino, sizeof(ino), "ino=%lu", it_ino(fd));
	ht_cpu_end(fd);
	munmap(p, len);
	text = tr_read(&inst);
	expect(text, "ion_backing", first,
	       "ion_backing: CPU first use, system backing");
	free(text);
	tr_clear(&inst);
	if (!tap_ok(!ht_import(tfd, fd, ION_TEST_MODE_EDU_FIRST, &imp) &&
		    !imp.dma_err, "edu attaches late to the unmapped buffer"))
		goto out;
	text = tr_read(&inst);
	snprintf(mask, sizeof(mask), "mask=%#llx", (1ULL << info.dma_bits) - 1);
	if (text && !find_edu(text, ino, dev + 4, sizeof(dev) - 4))
		memcpy(dev, "dev=", 4);
	else
		snprintf(dev, sizeof(dev), "dev=?");
	expect(text, "ion_backing", moved,
	       "ion_backing: cause=move by edu, contiguous below its mask");
	free(text);
	ht_release(tfd, imp.slot);
out:
	if (fd >= 0)
		close(fd);
	if (tfd >= 0)
		close(tfd);
}

static void edu_case(int ion, unsigned int heap_id, unsigned int mode)
{
	char ino[48], d[96], nents[32], *text;
	const char *const map[] = { d, "dir=bidirectional", nents, ino, NULL };
	const char *const dev_only[] = { d, ino, NULL };
	struct ion_test_info info;
	struct ion_test_import imp;
	int tfd = ht_test_open(), fd;

	if (tfd < 0 || ht_test_info(tfd, &info) || !info.has_edu) {
		tap_skip("edu: attach and map events", "no edu device");
		if (tfd >= 0)
			close(tfd);
		return;
	}
	fd = ht_alloc(ion, LEN, 0, heap_id, ION_FLAG_CACHED);
	snprintf(ino, sizeof(ino), "ino=%lu", fd >= 0 ? it_ino(fd) : 0);
	tr_clear(&inst);
	if (fd < 0 || ht_import(tfd, fd, mode, &imp) ||
	    imp.dma_err) {
		tap_ok(0, "edu imports a buffer of heap %u (%s)", heap_id,
		       fd < 0 ? strerror(-fd) : "import or mapping failed");
		goto out;
	}
	text = tr_read(&inst);
	if (!tap_ok(text && !find_edu(text, ino, d + 4, sizeof(d) - 4),
		    "ion_attach names edu (dev_name, sysfs ids 1234:11e8)")) {
		tap_diag("buffer:\n%s", text ? text : "-");
		free(text);
		goto out_release;
	}
	memcpy(d, "dev=", 4);
	tap_diag("edu is %s, %u DMA segments", d, imp.dma_segs);
	snprintf(nents, sizeof(nents), "nents=%u", imp.dma_segs);
	expect(text, "ion_map", map,
	       "ion_map: edu, dir=bidirectional, nents as mapped");
	if (heap_id == ION_HEAP_AUTO_ID)
		backing_first_case(text, ino, &info);
	free(text);
	tr_clear(&inst);
	ht_release(tfd, imp.slot);
	text = tr_read(&inst);
	expect(text, "ion_unmap", map,
	       "ion_unmap: edu, dir=bidirectional, nents as mapped");
	expect(text, "ion_detach", dev_only, "ion_detach: edu");
	free(text);
	goto out;
out_release:
	ht_release(tfd, imp.slot);
out:
	if (fd >= 0)
		close(fd);
	close(tfd);
}

static void vgem_case(int ion)
{
	char ino[48], *text;
	const char *const f[] = { "dev=vgem", ino, NULL };
	int drm = open_vgem(), fd;
	uint32_t handle;

	if (drm < 0) {
		tap_skip("vgem: attach events", "vgem module not available");
		return;
	}
	fd = it_alloc_fd(ion, LEN, ION_HEAP_SYSTEM_MASK, 0);
	snprintf(ino, sizeof(ino), "ino=%lu", fd >= 0 ? it_ino(fd) : 0);
	tr_clear(&inst);
	if (fd < 0 || vgem_import(drm, fd, &handle)) {
		tap_ok(0, "vgem imports a system-heap buffer");
		goto out;
	}
	text = tr_read(&inst);
	expect(text, "ion_attach", f, "ion_attach: dev=vgem on PRIME import");
	free(text);
	tr_clear(&inst);
	vgem_close(drm, handle);
	text = tr_read(&inst);
	expect(text, "ion_detach", f, "ion_detach: dev=vgem after GEM_CLOSE");
	free(text);
out:
	if (fd >= 0)
		close(fd);
	close(drm);
	vgem_unload();
}

int main(void)
{
	const struct ion_heap_data *dma;
	struct it_heaps hs;
	int ion, ret;

	ion = it_setup(&hs);
	ret = tr_open(&inst, "trace_attach");
	if (ret == -ENOENT && tr_kernel_has_events()) {
		tap_ok(0, "ion's events are in tracefs");
		close(ion);
		return tap_exit();
	}
	if (ret) {
		tap_skip("trace_attach", ret == -ENOENT ?
			 "no tracefs in this kernel" : strerror(-ret));
		close(ion);
		return tap_exit();
	}
	/*
	 * The auto heap backs a buffer below edu's mask when edu maps it
	 * first; without it, the DMA heap's (32-bit) buffer, which edu (28
	 * bits without an IOMMU) reaches only when it happens to lie low.
	 */
	if (it_heap_find(&hs, ION_AUTO_HEAP_NAME)) {
		edu_case(ion, ION_HEAP_AUTO_ID, ION_TEST_MODE_EDU_FIRST);
		backing_move_case(ion);
	} else {
		dma = it_heap_find(&hs, ION_DMA_HEAP_NAME);
		edu_case(ion, dma ? dma->heap_id : 0, ION_TEST_MODE_DMABUF);
	}
	vgem_case(ion);
	tr_close(&inst);
	close(ion);
	return tap_exit();
}
