// SPDX-License-Identifier: MIT
/*
 * interop_pipeline: a camera-like pipeline across processes.
 *
 * A producer process opens its own ion client, captures one vivid frame
 * (vb2-vmalloc instance, see interop_v4l2.h) into a system heap buffer
 * with V4L2_MEMORY_DMABUF, and sends the dma-buf fd over a unix socket
 * (SCM_RIGHTS) together with the frame's checksum; then it releases
 * everything and exits.  A consumer process waits for the producer's end
 * of the socket to close, imports the fd into its own client
 * (ION_IOC_IMPORT, handle ABI), maps it through ION_IOC_MAP, and checks
 * the frame against the checksum: the buffer outlived the process that
 * allocated it.  When both have exited, debugfs must show nothing left:
 * the buffer count back to where it was and no client file of either pid.
 */
#include <sys/socket.h>

#include "interop_v4l2.h"

#define CAP V4L2_BUF_TYPE_VIDEO_CAPTURE

struct pl_msg {
	unsigned int bytesused;
	uint32_t sum;
	int frame_ok;
};

static int pl_send(int sock, int fd, const struct pl_msg *m)
{
	return it_send_fd(sock, fd, m, sizeof(*m), 0);
}

static int pl_recv(int sock, struct pl_msg *m)
{
	int fd = it_recv_fd(sock, m, sizeof(*m), 0);

	return fd == -EIO ? -EPROTO : fd;
}

/* Capture one frame into a fresh system heap buffer; its fd or -errno. */
static int pl_capture(int ion, const char *node, unsigned int heap_id,
		      struct pl_msg *m)
{
	struct iv_frame_stats s = { 0 };
	struct v4l2_format f;
	struct v4l2_buffer b;
	struct iv_buf ib = { .fd = -1 };
	int vfd, ret;

	vfd = open(node, O_RDWR | O_CLOEXEC);
	if (vfd < 0)
		return -errno;
	ret = iv_set_fmt(vfd, CAP, &f);
	if (!ret)
		ret = iv_reqbufs(vfd, CAP, V4L2_MEMORY_DMABUF, 2);
	if (ret < 0)
		goto out;
	ret = iv_buf_alloc(ion, heap_id, f.fmt.pix.sizeimage, &ib);
	if (!ret)
		ret = iv_buf_fill(&ib, IV_SENTINEL);
	if (!ret)
		ret = iv_qbuf_dmabuf(vfd, CAP, 0, ib.fd, ib.len, 0);
	if (!ret)
		ret = iv_stream(vfd, CAP, 1);
	if (!ret)
		ret = iv_dqbuf(vfd, CAP, V4L2_MEMORY_DMABUF, &b);
	if (!ret)
		ret = iv_buf_stats(&ib, b.bytesused, &s);
	if (!ret) {
		m->bytesused = b.bytesused;
		m->sum = s.sum;
		m->frame_ok = b.bytesused == f.fmt.pix.sizeimage &&
			      iv_frame_ok(&s, b.bytesused);
		tap_diag("producer: frame of %u bytes, %u distinct values, sum %08x",
			 b.bytesused, s.distinct, s.sum);
	}
	iv_stream(vfd, CAP, 0);
	iv_reqbufs(vfd, CAP, V4L2_MEMORY_DMABUF, 0);
out:
	close(vfd);
	if (ret < 0) {
		iv_buf_free(&ib);
		return ret;
	}
	munmap(ib.map, ib.len);
	return ib.fd;
}

static int producer(int sock, const char *node)
{
	struct pl_msg m = { 0 };
	int ion = it_open(), fd;

	if (ion < 0) {
		tap_ok(0, "producer: open /dev/ion");
		return 1;
	}
	fd = pl_capture(ion, node, ION_HEAP_TYPE_SYSTEM, &m);
	if (!tap_ok(fd >= 0 && m.frame_ok,
		    "producer: vivid captured a frame into its ion buffer")) {
		if (fd < 0)
			tap_diag("capture: %s", strerror(-fd));
		return 1;
	}
	tap_errno(pl_send(sock, fd, &m), 0,
		  "producer: sends the dma-buf fd over the socket (SCM_RIGHTS)");
	close(fd);
	close(ion);
	close(sock);
	return tap_exit();
}

static int consumer(int sock)
{
	struct iv_frame_stats s = { 0 };
	struct pl_msg m;
	ion_user_handle_t h = 0;
	unsigned char *p;
	char c;
	int ion, fd, mfd, ret;

	fd = pl_recv(sock, &m);
	if (!tap_ok(fd >= 0, "consumer: receives the dma-buf fd")) {
		tap_diag("recvmsg: %s", strerror(-fd));
		return 1;
	}
	/* The producer's end closes when it has released everything. */
	ret = (int)read(sock, &c, 1);
	tap_ok(ret == 0, "consumer: the producer has let go of the buffer (EOF)");
	close(sock);

	ion = it_open();
	ret = ion < 0 ? ion : it_import(ion, fd, &h);
	if (!tap_ok(!ret, "consumer: ION_IOC_IMPORT into its own client")) {
		tap_diag("import: %s", strerror(-ret));
		return 1;
	}
	close(fd);	/* the handle keeps the buffer now */
	mfd = it_share_cmd(ion, ION_IOC_MAP, h);
	p = mfd < 0 ? MAP_FAILED : mmap(NULL, m.bytesused, PROT_READ,
					MAP_SHARED, mfd, 0);
	if (!tap_ok(p != MAP_FAILED, "consumer: ION_IOC_MAP and mmap of the imported handle")) {
		tap_diag("map: %s", mfd < 0 ? strerror(-mfd) : strerror(errno));
		return 1;
	}
	it_sync(mfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	iv_stats(p, m.bytesused, &s);
	it_sync(mfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	if (s.sum != m.sum)
		tap_diag("consumer: sum %08x, producer's %08x", s.sum, m.sum);
	tap_ok(s.sum == m.sum && iv_frame_ok(&s, m.bytesused),
	       "consumer: sees the producer's frame, byte for byte");
	munmap(p, m.bytesused);
	close(mfd);
	tap_errno(it_free(ion, h), 0, "consumer: ION_IOC_FREE of its handle");
	close(ion);
	return tap_exit();
}

static int pl_wait(pid_t pid, const char *who)
{
	int st = 0;

	if (waitpid(pid, &st, 0) != pid)
		return tap_ok(0, "%s exits", who);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		tap_diag("%s: status %#x", who, st);
	return tap_ok(WIFEXITED(st) && !WEXITSTATUS(st), "%s exits with status 0", who);
}

int main(void)
{
	const struct iv_node *node;
	struct iv_prog p;
	int ret, sv[2], left;
	pid_t prod, cons;

	iv_prog_begin(&p);
	close(p.ion);	/* the parent holds nothing of ion while they run */
	p.ion = -1;
	if (!it_heap_find(&p.hs, ION_SYSTEM_HEAP_NAME)) {
		tap_skip("vivid -> ion buffer -> second process", "no system heap");
		return 0;
	}
	ret = iv_prog_vivid(&p, "vivid -> ion buffer -> second process",
			    "capture nodes of both instances found");
	if (ret <= 0)
		return iv_prog_abort(&p);
	node = iv_node(p.nodes, p.n, 0, V4L2_CAP_VIDEO_CAPTURE);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		tap_ok(0, "socketpair");
		iv_unload("vivid");
		return 1;
	}
	prod = fork();
	if (prod == 0) {
		close(sv[1]);
		_exit(producer(sv[0], node->path));
	}
	cons = fork();
	if (cons == 0) {
		close(sv[0]);
		_exit(consumer(sv[1]));
	}
	close(sv[0]);
	close(sv[1]);
	pl_wait(prod, "producer");
	pl_wait(cons, "consumer");

	iv_prog_summary_back(&p, " after both exited");
	left = it_clients_of(prod);
	left |= it_clients_of(cons);
	tap_ok(left == 0, "no debugfs client file left for the producer's or the consumer's pid");
	return iv_prog_end(&p, "vivid");
}
