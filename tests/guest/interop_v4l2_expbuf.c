// SPDX-License-Identifier: MIT
/*
 * interop_v4l2_expbuf: vivid's own buffers, exported with VIDIOC_EXPBUF,
 * are dma-bufs ion did not create.
 *
 * For each vivid instance (vb2-vmalloc, vb2-dma-contig; interop_v4l2.h):
 * a V4L2_MEMORY_MMAP buffer is written by the CPU through vivid's mmap and
 * exported as a dma-buf.  ION_IOC_IMPORT (handle ABI) must refuse it with
 * EINVAL, as ION_IOC_SYNC must: ion takes only buffers it exported.  The
 * plain dma-buf importer of tests/kmod/ion_test.ko (ION_TEST_MODE_DMABUF)
 * must take it, attach QEMU's edu device and map it, and edu must DMA the
 * CPU's bytes from it into an ion buffer.  Without an IOMMU edu reaches
 * only the low 256 MiB, so ion_test may refuse the mapping with ERANGE
 * (its documented answer) and the DMA case is then skipped.
 */
#include "heap_util.h"
#include "interop_v4l2.h"

#define CAP V4L2_BUF_TYPE_VIDEO_CAPTURE

/* edu DMA: ION_TEST_MAX_XFER bytes of slot @src into ion buffer @dst. */
static void exp_dma(int ion, int tfd, unsigned int src, const char *what,
		    unsigned int seed, const struct it_heaps *hs)
{
	struct ion_test_import di;
	struct ion_test_dma d;
	struct iv_buf b = { .fd = -1 };
	const struct ion_heap_data *h = it_heap_find(hs, ION_CARVEOUT_HEAP_NAME);
	char name[128];
	long off;
	int ret;

	snprintf(name, sizeof(name), "expbuf %s: edu DMA copies vivid's bytes into an ion buffer",
		 what);
	/* The carveout is low in RAM, where edu reaches without an IOMMU. */
	ret = iv_buf_alloc(ion, h ? h->heap_id : ION_HEAP_TYPE_SYSTEM,
			   ION_TEST_MAX_XFER, &b);
	if (!ret)
		ret = iv_buf_fill(&b, 0);
	if (ret || ht_import(tfd, b.fd, ION_TEST_MODE_CLIENT, &di)) {
		tap_ok(0, "%s", name);
		tap_diag("ion destination buffer: %s", strerror(ret ? -ret : errno));
		iv_buf_free(&b);
		return;
	}
	if (di.dma_err) {
		tap_skip(name, "edu cannot reach the ion destination buffer");
		goto out;
	}
	memset(&d, 0, sizeof(d));
	d.src_slot = src;
	d.dst_slot = di.slot;
	d.len = ION_TEST_MAX_XFER;
	ret = it_ioctl(tfd, ION_TEST_IOC_DMA, &d);
	if (ret) {
		tap_ok(0, "%s", name);
		tap_diag("ION_TEST_IOC_DMA: %s", strerror(-ret));
		goto out;
	}
	off = iv_buf_check(&b, ION_TEST_MAX_XFER, seed);
	if (off >= 0)
		tap_diag("first difference at %ld (src dma %#llx dst dma %#llx)",
			 off, (unsigned long long)d.src_dma,
			 (unsigned long long)d.dst_dma);
	tap_ok(off < 0, "%s", name);
out:
	ht_release(tfd, di.slot);
	iv_buf_free(&b);
}

static void exp_ion_test(int ion, int efd, const char *what, size_t len,
			 unsigned int seed, const struct it_heaps *hs)
{
	struct ion_test_import imp;
	struct ion_test_info info;
	char name[128];
	int tfd, ret, loaded;

	snprintf(name, sizeof(name), "expbuf %s: ion_test's plain dma-buf importer takes vivid's dma-buf",
		 what);
	loaded = !access("/sys/module/ion_test", F_OK);
	tfd = ht_test_open();
	if (tfd < 0) {
		tap_ok(0, "%s (tests/kmod/ion_test.ko did not load: %d)", name,
		       tfd);
		return;
	}
	if (ht_test_info(tfd, &info) || !info.has_edu) {
		tap_skip(name, "ion_test has no edu device");
		close(tfd);
		if (!loaded)
			iv_unload("ion_test");
		return;
	}
	ret = ht_import(tfd, efd, ION_TEST_MODE_DMABUF, &imp);
	if (ret || imp.size != len)
		tap_diag("ION_TEST_IOC_IMPORT: %s, size %llu (want %zu)",
			 ret ? strerror(-ret) : "ok",
			 (unsigned long long)imp.size, len);
	if (!tap_ok(!ret && imp.size == len, "%s", name)) {
		if (!ret)
			ht_release(tfd, imp.slot);
		close(tfd);
		if (!loaded)
			iv_unload("ion_test");
		return;
	}
	tap_diag("edu %s an IOMMU, %u-bit DMA; dma_err %d, %u DMA segments at %#llx",
		 info.iommu ? "behind" : "without", info.dma_bits, imp.dma_err,
		 imp.dma_segs, (unsigned long long)imp.dma_addr);
	snprintf(name, sizeof(name), "expbuf %s: ion_test attaches edu to vivid's dma-buf and maps it",
		 what);
	if (imp.dma_err == -ERANGE && !info.iommu) {
		tap_skip(name, "no IOMMU and vivid's memory is above edu's DMA mask (ERANGE)");
	} else {
		if (imp.dma_err)
			tap_diag("dma_err: %s", strerror(-imp.dma_err));
		if (imp.dma_err == -EINVAL && !info.iommu)
			tap_diag("without an IOMMU ion_test_preflight() (tests/kmod/ion_test_main.c) checks the pages through ion_import_fd(), which ion refuses for a dma-buf it did not export, so the plain importer never attaches");
		tap_ok(!imp.dma_err, "%s", name);
	}
	if (!imp.dma_err)
		exp_dma(ion, tfd, imp.slot, what, seed, hs);
	ht_release(tfd, imp.slot);
	close(tfd);
	if (!loaded)
		iv_unload("ion_test");
}

static void exp_run(int ion, const struct iv_node *node, int inst,
		    const struct it_heaps *hs)
{
	const char *what = iv_alloc_names[inst];
	struct v4l2_exportbuffer e;
	struct v4l2_buffer qb;
	struct v4l2_format f;
	ion_user_handle_t ih;
	unsigned char *p = MAP_FAILED;
	char exp_name[64] = "?";
	int vfd, ret, efd = -1;

	vfd = open(node->path, O_RDWR | O_CLOEXEC);
	ret = vfd < 0 ? -errno : iv_set_fmt(vfd, CAP, &f);
	if (!ret)
		ret = iv_reqbufs(vfd, CAP, V4L2_MEMORY_MMAP, 2);
	if (!tap_ok(ret > 0, "expbuf %s: S_FMT and REQBUFS V4L2_MEMORY_MMAP on %s",
		    what, node->path)) {
		tap_diag("%s", strerror(-ret));
		goto out;
	}
	memset(&qb, 0, sizeof(qb));
	qb.type = CAP;
	qb.memory = V4L2_MEMORY_MMAP;
	ret = it_ioctl(vfd, VIDIOC_QUERYBUF, &qb);
	if (!ret) {
		p = mmap(NULL, qb.length, PROT_READ | PROT_WRITE, MAP_SHARED,
			 vfd, qb.m.offset);
		if (p == MAP_FAILED)
			ret = -errno;
	}
	if (!tap_ok(!ret, "expbuf %s: QUERYBUF and mmap of vivid's buffer 0", what)) {
		tap_diag("%s", strerror(-ret));
		goto out_reqbufs;
	}
	it_fill(p, qb.length, 11 + inst);

	memset(&e, 0, sizeof(e));
	e.type = CAP;
	e.index = 0;
	e.flags = O_RDWR | O_CLOEXEC;
	ret = it_ioctl(vfd, VIDIOC_EXPBUF, &e);
	efd = ret ? -1 : e.fd;
	if (!tap_ok(!ret && efd >= 0, "expbuf %s: VIDIOC_EXPBUF exports vivid's buffer as a dma-buf",
		    what)) {
		tap_diag("EXPBUF: %s", strerror(-ret));
		goto out_unmap;
	}
	it_fdinfo(efd, "exp_name", exp_name, sizeof(exp_name));
	tap_diag("%s: exported by %s, %u bytes", what, exp_name, qb.length);

	ret = it_import(ion, efd, &ih);
	it_expect(ret, EINVAL, "expbuf %s: ION_IOC_IMPORT refuses a dma-buf ion did not export",
		  what);
	if (!ret)
		it_free(ion, ih);
	{
		struct ion_fd_data sd = { .fd = efd };

		it_expect(it_ioctl(ion, ION_IOC_SYNC, &sd), EINVAL,
			  "expbuf %s: ION_IOC_SYNC refuses it too", what);
	}
	/* vb2 allocates whole pages; QUERYBUF reports the plane's size. */
	exp_ion_test(ion, efd, what, it_round_page(qb.length), 11 + inst, hs);
	close(efd);
out_unmap:
	munmap(p, qb.length);
out_reqbufs:
	iv_reqbufs(vfd, CAP, V4L2_MEMORY_MMAP, 0);
out:
	if (vfd >= 0)
		close(vfd);
}

int main(void)
{
	struct iv_prog p;
	int inst, ret;

	iv_prog_begin(&p);
	ret = iv_prog_vivid(&p, "vivid buffers exported with VIDIOC_EXPBUF",
			    "capture nodes of both instances found");
	if (ret <= 0)
		return iv_prog_abort(&p);
	for (inst = 0; inst < 2; inst++)
		exp_run(p.ion, iv_node(p.nodes, p.n, inst,
				       V4L2_CAP_VIDEO_CAPTURE),
			inst, &p.hs);
	return iv_prog_end(&p, "vivid");
}
