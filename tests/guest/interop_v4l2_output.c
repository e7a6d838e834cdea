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

/* IV_FRAMES DQBUF/QBUF cycles; the CPU's pattern must survive each. */
static void out_cycle(struct iv_queue *q)
{
	int frames = 0, bad = 0, kept = 0, ret = 0;

	if (!iv_queue_streamon(q))
		return;
	while (frames < IV_FRAMES) {
		struct v4l2_buffer b;
		struct iv_buf *ib;
		long off;

		ret = iv_dqbuf(q->vfd, OUT, V4L2_MEMORY_DMABUF, &b);
		if (ret)
			break;
		frames++;
		if (b.index >= (unsigned int)q->nbuf) {
			tap_diag("DQBUF index %u", b.index);
			bad++;
			break;
		}
		ib = &q->bufs[b.index];
		if ((b.flags & V4L2_BUF_FLAG_ERROR) || b.m.fd != ib->fd) {
			tap_diag("cycle %d: flags %#x fd %d (want %d)", frames,
				 b.flags, b.m.fd, ib->fd);
			bad++;
		}
		off = iv_buf_check(ib, q->sizeimage, b.index + 1);
		if (off < 0)
			kept++;
		else
			tap_diag("buffer %u changed at offset %ld", b.index, off);
		ret = iv_qbuf_dmabuf(q->vfd, OUT, b.index, ib->fd, ib->len,
				     q->sizeimage);
		if (ret)
			break;
	}
	if (ret)
		tap_diag("stopped after %d cycles: %s", frames, strerror(-ret));
	tap_ok(frames == IV_FRAMES && !bad,
	       "output %s: %d QBUF/DQBUF cycles complete without error",
	       q->what, IV_FRAMES);
	tap_ok(frames == IV_FRAMES && kept == IV_FRAMES,
	       "output %s: the CPU's pattern is intact after the device read it",
	       q->what);
	iv_queue_streamoff(q);
}

int main(void)
{
	/* Buffer i carries pattern i + 1 for vivid to read. */
	return iv_prog_queue_main("vivid output from ion buffers", OUT, 1,
				  out_cycle);
}
