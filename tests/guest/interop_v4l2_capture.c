// SPDX-License-Identifier: MIT
/*
 * interop_v4l2_capture: vivid captures frames straight into ion buffers.
 *
 * vivid is loaded with two instances, vb2-vmalloc and vb2-dma-contig (see
 * interop_v4l2.h).  For each instance and each heap HEAP_QUERY reports,
 * the capture node gets ion dma-buf fds of the negotiated sizeimage with
 * V4L2_MEMORY_DMABUF, streams IV_FRAMES frames into them, and each frame
 * is checked in the ion mapping (bracketed with DMA_BUF_IOCTL_SYNC): the
 * sentinel the CPU wrote is gone, the frame is not zeros and varies.
 *
 * What the two allocators do with an ion buffer (6.12):
 *  - vb2-vmalloc attaches vivid's device and vmaps the dma-buf (ion's
 *    .vmap); every heap works.
 *  - vb2-dma-contig attaches, maps the attachment (ion's .map_dma_buf)
 *    and wants one DMA-contiguous run.  vivid is a platform device without
 *    an IOMMU, so DMA addresses are physical addresses and the system
 *    heap's scattered chunks are refused at QBUF with EFAULT
 *    (vb2_dc_map_dmabuf: "contiguous chunk is too small <run>/<size>" in
 *    the kernel log, which the test reads back); the contiguous heaps
 *    (system-contig, carveout, dma) are taken.  A system heap buffer whose
 *    chunks the buddy allocator happened to place back to back would be
 *    taken too: user space cannot see an ion buffer's physical layout
 *    (pagemap shows nothing for VM_PFNMAP mappings), so for the system
 *    heap the test accepts success or exactly that refusal.
 */
#include "interop_v4l2.h"

#define CAP V4L2_BUF_TYPE_VIDEO_CAPTURE

struct cap_run {
	int ion;
	const char *what;	/* "vmalloc/ion_system_heap" */
	const struct ion_heap_data *heap;
	int inst;
	int vfd;
	unsigned int sizeimage;
	int nbuf;
	struct iv_buf bufs[IV_NBUF + 4];
};

static int cap_alloc(struct cap_run *r)
{
	int i, ret;

	for (i = 0; i < r->nbuf; i++)
		r->bufs[i].fd = -1;
	for (i = 0; i < r->nbuf; i++) {
		ret = iv_buf_alloc(r->ion, r->heap->heap_id, r->sizeimage,
				   &r->bufs[i]);
		if (!ret)
			ret = iv_buf_fill(&r->bufs[i], IV_SENTINEL);
		if (ret)
			return ret;
	}
	return 0;
}

static void cap_free(struct cap_run *r)
{
	int i;

	for (i = 0; i < r->nbuf; i++)
		iv_buf_free(&r->bufs[i]);
}

/* Dequeue IV_FRAMES frames, check each in its ion buffer, requeue it. */
static void cap_stream(struct cap_run *r)
{
	int frames = 0, landed = 0, bad_meta = 0, ret = 0, att, want;
	unsigned int last_seq = 0;

	ret = iv_stream(r->vfd, CAP, 1);
	if (!tap_ok(!ret, "capture %s: STREAMON", r->what)) {
		tap_diag("STREAMON: %s", strerror(-ret));
		return;
	}
	/* vb2-vmalloc only vmaps a dma-buf; vb2-dma-contig attaches it. */
	want = r->inst == 1 ? 1 : 0;
	att = iv_attachments(r->bufs[0].fd, r->heap->name);
	if (att != want)
		tap_diag("attachments of a queued buffer: %d", att);
	tap_ok(att == want, "capture %s: debugfs attachments of a queued buffer is %d",
	       r->what, want);

	while (frames < IV_FRAMES) {
		struct iv_frame_stats s;
		struct v4l2_buffer b;
		struct iv_buf *ib;

		ret = iv_dqbuf(r->vfd, CAP, V4L2_MEMORY_DMABUF, &b);
		if (ret)
			break;
		frames++;
		if (b.index >= (unsigned int)r->nbuf) {
			tap_diag("DQBUF index %u", b.index);
			bad_meta++;
			break;
		}
		ib = &r->bufs[b.index];
		if (b.bytesused != r->sizeimage || b.m.fd != ib->fd ||
		    (b.flags & V4L2_BUF_FLAG_ERROR) ||
		    (frames > 1 && b.sequence <= last_seq)) {
			tap_diag("frame %d: bytesused %u (want %u) fd %d (want %d) flags %#x seq %u (last %u)",
				 frames, b.bytesused, r->sizeimage, b.m.fd,
				 ib->fd, b.flags, b.sequence, last_seq);
			bad_meta++;
		}
		last_seq = b.sequence;
		if (iv_buf_stats(ib, r->sizeimage, &s)) {
			tap_diag("DMA_BUF_IOCTL_SYNC failed");
		} else if (iv_frame_ok(&s, r->sizeimage)) {
			landed++;
		} else {
			tap_diag("frame %d in buffer %u: %zu sentinel, %zu zero bytes of %u, %u distinct values",
				 frames, b.index, s.sentinel, s.zero,
				 r->sizeimage, s.distinct);
		}
		if (frames == 1)
			tap_diag("first frame: seq %u, %u distinct byte values, %zu zero bytes, sum %08x",
				 b.sequence, s.distinct, s.zero, s.sum);
		ret = iv_buf_fill(ib, IV_SENTINEL);
		if (!ret)
			ret = iv_qbuf_dmabuf(r->vfd, CAP, b.index, ib->fd,
					     ib->len, 0);
		if (ret) {
			tap_diag("refill/requeue buffer %u: %s", b.index,
				 strerror(-ret));
			break;
		}
	}
	if (ret)
		tap_diag("stopped after %d frames: %s", frames, strerror(-ret));
	tap_ok(frames == IV_FRAMES && !bad_meta,
	       "capture %s: %d frames dequeued (bytesused == sizeimage, own fd, no error flag, sequence rising)",
	       r->what, IV_FRAMES);
	tap_ok(frames == IV_FRAMES && landed == IV_FRAMES,
	       "capture %s: every frame landed in the ion buffer (sentinel overwritten, not zeros, varied)",
	       r->what);
	ret = iv_stream(r->vfd, CAP, 0);
	tap_errno(ret, 0, "capture %s: STREAMOFF", r->what);
}

static void cap_run(int ion, const struct iv_node *node, int inst,
		    const struct ion_heap_data *heap)
{
	struct cap_run r = { .ion = ion, .heap = heap, .inst = inst };
	char what[96];
	struct v4l2_format f;
	int ret, queued, refused, i, att;
	int system_on_contig = inst == 1 && iv_heap_is_system(heap);

	snprintf(what, sizeof(what), "%s/%s", iv_alloc_names[inst], heap->name);
	r.what = what;
	r.vfd = open(node->path, O_RDWR | O_CLOEXEC);
	if (r.vfd < 0 || iv_set_fmt(r.vfd, CAP, &f)) {
		tap_ok(0, "capture %s: open %s and set YUYV", what, node->path);
		if (r.vfd >= 0)
			close(r.vfd);
		return;
	}
	r.sizeimage = f.fmt.pix.sizeimage;
	ret = iv_reqbufs(r.vfd, CAP, V4L2_MEMORY_DMABUF, IV_NBUF);
	if (ret < 1 || ret > (int)IT_ARRAY_SIZE(r.bufs)) {
		tap_ok(0, "capture %s: REQBUFS V4L2_MEMORY_DMABUF", what);
		tap_diag("REQBUFS: %d", ret);
		close(r.vfd);
		return;
	}
	r.nbuf = ret;
	tap_diag("%s on %s: %ux%u %.4s sizeimage %u, %d buffers", what,
		 node->path, f.fmt.pix.width, f.fmt.pix.height,
		 (const char *)&f.fmt.pix.pixelformat, r.sizeimage, r.nbuf);

	ret = cap_alloc(&r);
	if (ret == -ENOMEM && heap->type != ION_HEAP_TYPE_SYSTEM) {
		tap_skip(what, "heap cannot give the frame size");
		goto out;
	}
	if (!tap_ok(!ret, "capture %s: allocate, map and fill %d ion buffers of %u bytes",
		    what, r.nbuf, r.sizeimage)) {
		tap_diag("alloc/map/fill: %s", strerror(-ret));
		goto out;
	}

	queued = iv_queue_all(r.vfd, CAP, inst, heap, r.bufs, r.nbuf, 0,
			      &refused);
	if (system_on_contig) {
		tap_diag("system heap: %d of %d buffers refused as not one DMA run",
			 refused, r.nbuf);
		tap_ok(queued >= 0, "capture %s: QBUF refuses a buffer that is not one DMA run with EFAULT (and takes one that happens to be)",
		       what);
		goto out_reqbufs;
	}
	if (!tap_ok(queued == r.nbuf, "capture %s: QBUF of %d ion dma-buf fds",
		    what, r.nbuf))
		goto out_reqbufs;
	cap_stream(&r);

out_reqbufs:
	ret = iv_reqbufs(r.vfd, CAP, V4L2_MEMORY_DMABUF, 0);
	att = 0;
	for (i = 0; i < r.nbuf; i++)
		att += iv_attachments(r.bufs[i].fd, heap->name);
	if (ret || att)
		tap_diag("REQBUFS 0: %d, attachments left %d", ret, att);
	tap_ok(!ret && !att, "capture %s: REQBUFS 0 detaches every buffer", what);
out:
	cap_free(&r);
	close(r.vfd);
}

int main(void)
{
	struct iv_node nodes[IV_MAX_NODES];
	long long buffers0, bytes0, buffers, bytes;
	struct it_heaps hs;
	int ion, n = 0, ret, inst;
	unsigned int h;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ion = it_setup(&hs);
	it_summary(&buffers0, &bytes0);
	ret = iv_vivid_setup(nodes, &n);
	if (ret == -ENOENT) {
		tap_skip("vivid capture into ion buffers", "vivid module not available");
		close(ion);
		return 0;
	}
	for (inst = 0; inst < n; inst++)
		tap_diag("%s: vivid-%03d caps %#x", nodes[inst].path,
			 nodes[inst].inst, nodes[inst].caps);
	if (!tap_ok(!ret, "vivid loaded (" IV_VIVID_ARGS "), capture nodes of both instances found")) {
		iv_unload("vivid");
		close(ion);
		return tap_exit();
	}

	for (inst = 0; inst < 2; inst++)
		for (h = 0; h < hs.cnt; h++)
			cap_run(ion, iv_node(nodes, n, inst,
					     V4L2_CAP_VIDEO_CAPTURE),
				inst, &hs.h[h]);

	tap_ok(!iv_unload("vivid"), "vivid unloads (no reference left behind)");
	ret = it_summary(&buffers, &bytes);
	if (ret || buffers != buffers0 || bytes != bytes0)
		tap_diag("summary: buffers %lld -> %lld, bytes %lld -> %lld",
			 buffers0, buffers, bytes0, bytes);
	tap_ok(!ret && buffers == buffers0 && bytes == bytes0,
	       "every ion buffer freed (debugfs summary back to %lld buffers)", buffers0);
	close(ion);
	return tap_exit();
}
