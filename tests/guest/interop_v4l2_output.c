// SPDX-License-Identifier: MIT
/*
 * interop_v4l2_output: ion buffers filled by the CPU feed vivid's video
 * output node with V4L2_MEMORY_DMABUF.
 *
 * For each vivid instance (vb2-vmalloc, vb2-dma-contig; see
 * interop_v4l2.h) and each heap HEAP_QUERY reports: IV_NBUF ion buffers of
 * the output format's sizeimage are filled with a seeded pattern from the
 * CPU (bracketed with DMA_BUF_IOCTL_SYNC), queued with bytesused =
 * sizeimage, streamed, and IV_FRAMES QBUF/DQBUF cycles must complete
 * without error.  vivid only reads output buffers, so after each DQBUF the
 * pattern must still be there.  As for capture, vb2-dma-contig refuses a
 * system heap buffer that is not one DMA run with EFAULT at QBUF.
 */
#include "interop_v4l2.h"

#define OUT V4L2_BUF_TYPE_VIDEO_OUTPUT

static void out_cycle(int vfd, const char *what, int inst,
		      const struct ion_heap_data *heap, struct iv_buf *bufs,
		      int nbuf, unsigned int sizeimage)
{
	int frames = 0, bad = 0, kept = 0, ret, att, want = inst == 1;

	ret = iv_stream(vfd, OUT, 1);
	if (!tap_ok(!ret, "output %s: STREAMON", what)) {
		tap_diag("STREAMON: %s", strerror(-ret));
		return;
	}
	att = iv_attachments(bufs[0].fd, heap->name);
	if (att != want)
		tap_diag("attachments of a queued buffer: %d", att);
	tap_ok(att == want, "output %s: debugfs attachments of a queued buffer is %d",
	       what, want);
	while (frames < IV_FRAMES) {
		struct v4l2_buffer b;
		long off;

		ret = iv_dqbuf(vfd, OUT, V4L2_MEMORY_DMABUF, &b);
		if (ret)
			break;
		frames++;
		if (b.index >= (unsigned int)nbuf) {
			tap_diag("DQBUF index %u", b.index);
			bad++;
			break;
		}
		if ((b.flags & V4L2_BUF_FLAG_ERROR) ||
		    b.m.fd != bufs[b.index].fd) {
			tap_diag("cycle %d: flags %#x fd %d (want %d)", frames,
				 b.flags, b.m.fd, bufs[b.index].fd);
			bad++;
		}
		it_sync(bufs[b.index].fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
		off = it_check(bufs[b.index].map, sizeimage, b.index + 1);
		it_sync(bufs[b.index].fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
		if (off < 0)
			kept++;
		else
			tap_diag("buffer %u changed at offset %ld", b.index, off);
		ret = iv_qbuf_dmabuf(vfd, OUT, b.index, bufs[b.index].fd,
				     bufs[b.index].len, sizeimage);
		if (ret)
			break;
	}
	if (ret)
		tap_diag("stopped after %d cycles: %s", frames, strerror(-ret));
	tap_ok(frames == IV_FRAMES && !bad,
	       "output %s: %d QBUF/DQBUF cycles complete without error",
	       what, IV_FRAMES);
	tap_ok(frames == IV_FRAMES && kept == IV_FRAMES,
	       "output %s: the CPU's pattern is intact after the device read it", what);
	tap_errno(iv_stream(vfd, OUT, 0), 0, "output %s: STREAMOFF", what);
}

static void out_run(int ion, const struct iv_node *node, int inst,
		    const struct ion_heap_data *heap)
{
	struct iv_buf bufs[IV_NBUF + 4];
	struct v4l2_format f;
	char what[96];
	int vfd, ret, nbuf, i, queued, refused, att = 0;

	snprintf(what, sizeof(what), "%s/%s", iv_alloc_names[inst], heap->name);
	vfd = open(node->path, O_RDWR | O_CLOEXEC);
	if (vfd < 0 || iv_set_fmt(vfd, OUT, &f)) {
		tap_ok(0, "output %s: open %s and set YUYV", what, node->path);
		if (vfd >= 0)
			close(vfd);
		return;
	}
	nbuf = iv_reqbufs(vfd, OUT, V4L2_MEMORY_DMABUF, IV_NBUF);
	if (nbuf < 1 || nbuf > (int)IT_ARRAY_SIZE(bufs)) {
		tap_ok(0, "output %s: REQBUFS V4L2_MEMORY_DMABUF", what);
		tap_diag("REQBUFS: %d", nbuf);
		close(vfd);
		return;
	}
	tap_diag("%s on %s: %ux%u %.4s sizeimage %u, %d buffers", what,
		 node->path, f.fmt.pix.width, f.fmt.pix.height,
		 (const char *)&f.fmt.pix.pixelformat, f.fmt.pix.sizeimage, nbuf);
	for (i = 0; i < nbuf; i++)
		bufs[i].fd = -1, bufs[i].map = NULL;
	ret = 0;
	for (i = 0; i < nbuf && !ret; i++) {
		ret = iv_buf_alloc(ion, heap->heap_id, f.fmt.pix.sizeimage,
				   &bufs[i]);
		if (!ret)
			ret = it_sync(bufs[i].fd, DMA_BUF_SYNC_START |
				      DMA_BUF_SYNC_WRITE);
		if (!ret) {
			it_fill(bufs[i].map, bufs[i].len, i + 1);
			ret = it_sync(bufs[i].fd, DMA_BUF_SYNC_END |
				      DMA_BUF_SYNC_WRITE);
		}
	}
	if (ret == -ENOMEM && heap->type != ION_HEAP_TYPE_SYSTEM) {
		tap_skip(what, "heap cannot give the frame size");
		goto out;
	}
	if (!tap_ok(!ret, "output %s: allocate, map and fill %d ion buffers from the CPU",
		    what, nbuf)) {
		tap_diag("alloc/map/fill: %s", strerror(-ret));
		goto out;
	}
	queued = iv_queue_all(vfd, OUT, inst, heap, bufs, nbuf,
			      f.fmt.pix.sizeimage, &refused);
	if (inst == 1 && iv_heap_is_system(heap)) {
		tap_diag("system heap: %d of %d buffers refused as not one DMA run",
			 refused, nbuf);
		tap_ok(queued >= 0, "output %s: QBUF refuses a buffer that is not one DMA run with EFAULT (and takes one that happens to be)",
		       what);
		goto out_reqbufs;
	}
	if (tap_ok(queued == nbuf, "output %s: QBUF of %d ion dma-buf fds",
		   what, nbuf))
		out_cycle(vfd, what, inst, heap, bufs, nbuf,
			  f.fmt.pix.sizeimage);
out_reqbufs:
	ret = iv_reqbufs(vfd, OUT, V4L2_MEMORY_DMABUF, 0);
	for (i = 0; i < nbuf; i++)
		att += iv_attachments(bufs[i].fd, heap->name);
	if (ret || att)
		tap_diag("REQBUFS 0: %d, attachments left %d", ret, att);
	tap_ok(!ret && !att, "output %s: REQBUFS 0 detaches every buffer", what);
out:
	for (i = 0; i < nbuf; i++)
		iv_buf_free(&bufs[i]);
	close(vfd);
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
		tap_skip("vivid output from ion buffers", "vivid module not available");
		close(ion);
		return 0;
	}
	if (!tap_ok(!ret, "vivid loaded (" IV_VIVID_ARGS "), output nodes of both instances found")) {
		iv_unload("vivid");
		close(ion);
		return tap_exit();
	}
	for (inst = 0; inst < 2; inst++)
		for (h = 0; h < hs.cnt; h++)
			out_run(ion, iv_node(nodes, n, inst,
					     V4L2_CAP_VIDEO_OUTPUT),
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
