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

/* Dequeue IV_FRAMES frames, check each in its ion buffer, requeue it. */
static void cap_stream(struct iv_queue *q)
{
	int frames = 0, landed = 0, bad_meta = 0, ret = 0;
	unsigned int last_seq = 0;

	if (!iv_queue_streamon(q))
		return;
	while (frames < IV_FRAMES) {
		struct iv_frame_stats s;
		struct v4l2_buffer b;
		struct iv_buf *ib;

		ret = iv_dqbuf(q->vfd, CAP, V4L2_MEMORY_DMABUF, &b);
		if (ret)
			break;
		frames++;
		if (b.index >= (unsigned int)q->nbuf) {
			tap_diag("DQBUF index %u", b.index);
			bad_meta++;
			break;
		}
		ib = &q->bufs[b.index];
		if (b.bytesused != q->sizeimage || b.m.fd != ib->fd ||
		    (b.flags & V4L2_BUF_FLAG_ERROR) ||
		    (frames > 1 && b.sequence <= last_seq)) {
			tap_diag("frame %d: bytesused %u (want %u) fd %d (want %d) flags %#x seq %u (last %u)",
				 frames, b.bytesused, q->sizeimage, b.m.fd,
				 ib->fd, b.flags, b.sequence, last_seq);
			bad_meta++;
		}
		last_seq = b.sequence;
		if (iv_buf_stats(ib, q->sizeimage, &s)) {
			tap_diag("DMA_BUF_IOCTL_SYNC failed");
		} else if (iv_frame_ok(&s, q->sizeimage)) {
			landed++;
		} else {
			tap_diag("frame %d in buffer %u: %zu sentinel, %zu zero bytes of %u, %u distinct values",
				 frames, b.index, s.sentinel, s.zero,
				 q->sizeimage, s.distinct);
		}
		if (frames == 1)
			tap_diag("first frame: seq %u, %u distinct byte values, %zu zero bytes, sum %08x",
				 b.sequence, s.distinct, s.zero, s.sum);
		ret = iv_buf_fill(ib, IV_SENTINEL);
		if (!ret)
			ret = iv_qbuf_dmabuf(q->vfd, CAP, b.index, ib->fd,
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
	       q->what, IV_FRAMES);
	tap_ok(frames == IV_FRAMES && landed == IV_FRAMES,
	       "capture %s: every frame landed in the ion buffer (sentinel overwritten, not zeros, varied)",
	       q->what);
	iv_queue_streamoff(q);
}

int main(void)
{
	return iv_prog_queue_main("vivid capture into ion buffers", CAP, 0,
				  cap_stream);
}
