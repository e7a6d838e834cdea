// SPDX-License-Identifier: MIT
/*
 * ion-camera-demo: a camera-like pipeline for `make demo`.
 *
 *   vivid (V4L2 capture) --DMABUF--> ion buffers --SCM_RIGHTS--> viewer
 *
 * Two processes, started by a launcher that holds nothing of ion itself:
 *
 *  camera  allocates a pool of ion buffers (libion, by heap name), names
 *          them, queues them on a V4L2 capture node with
 *          V4L2_MEMORY_DMABUF and sends the whole pool, as dma-buf fds,
 *          to the viewer over a unix socket (SCM_RIGHTS).  It then
 *          streams: every dequeued frame is announced to the viewer with
 *          its buffer index, sequence number, size and a checksum (FNV-1a)
 *          the camera computed through its own mapping, and requeued when
 *          the viewer hands the buffer back.  The device writes the
 *          frames; nobody copies them.
 *  viewer  imports each fd into its own ion client (ION_IOC_IMPORT),
 *          maps it read-only, and for every frame brackets its read with
 *          DMA_BUF_IOCTL_SYNC, checks that the frame landed (the sentinel
 *          the camera wrote before streaming is gone, the picture is not
 *          blank) and that its checksum equals the camera's, and reports
 *          the luma of vivid's colour bars.
 *
 * While both hold the pool (the camera still streaming) --show CMD runs a
 * shell command, e.g. `ionctl buffers`.  When both have exited the
 * launcher checks debugfs: ion's buffer count and bytes are back to what
 * they were and neither process left a client behind.  Exit status 0 when
 * every check held.
 *
 * usage: ion-camera-demo [--device /dev/videoN] [--heap NAME] [--buffers N]
 *                        [--frames N] [--uncached] [--show CMD]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/videodev2.h>

#include <ion/ion.h>

#include "ion_debugfs_priv.h"

#define DEBUGFS		ION_DEBUGFS_DIR
#define MAX_BUFS	8
#define SENTINEL	0xa5	/* what a buffer holds before the device writes */
#define POLL_MS		20000	/* a hang guard */

struct opts {
	const char *device;
	const char *heap;
	const char *show;
	unsigned int nbuf;
	unsigned int frames;
	int cached;
};

/* Messages on the socket (SOCK_SEQPACKET: one message each). */
enum { MSG_POOL, MSG_READY, MSG_FRAME, MSG_RELEASE, MSG_SHOWN, MSG_EOS };

struct msg {
	uint32_t type;
	uint32_t index;		/* POOL: buffer count; others: buffer index */
	uint32_t sequence;
	uint32_t bytesused;
	uint32_t sum;		/* FNV-1a of bytes [0, bytesused) */
	uint32_t width, height, bytesperline, sizeimage;
};

static const char *who = "launcher";

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	printf("[%-6s %5d] ", who, (int)getpid());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static int fail(const char *what, int err)
{
	say("FAILED: %s: %s", what, strerror(err < 0 ? -err : err));
	return 1;
}

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

static uint32_t fnv1a(const unsigned char *p, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* ---- socket ------------------------------------------------------------ */

static int send_msg(int sock, const struct msg *m, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAX_BUFS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfds) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(*m) ?
	       0 : -EPIPE;
}

/* Receive one message (and up to MAX_BUFS fds); the fd count or -errno. */
static int recv_msg(int sock, struct msg *m, int *fds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAX_BUFS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c;
	ssize_t n;
	int nfds = 0;

	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(*m))
		return -EPROTO;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			nfds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds, CMSG_DATA(c), sizeof(int) * nfds);
		}
	return nfds;
}

/* ---- camera -------------------------------------------------------------- */

struct camera {
	const struct opts *o;
	int vfd, sock;
	struct ion_device *dev;
	struct v4l2_format fmt;
	unsigned int nbuf;
	int fd[MAX_BUFS];
	unsigned char *map[MAX_BUFS];
	size_t len;
};

static int cam_qbuf(struct camera *c, unsigned int i)
{
	struct v4l2_buffer b;

	memset(&b, 0, sizeof(b));
	b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	b.memory = V4L2_MEMORY_DMABUF;
	b.index = i;
	b.m.fd = c->fd[i];
	b.length = (unsigned int)c->len;
	return xioctl(c->vfd, VIDIOC_QBUF, &b);
}

static int cam_stream(struct camera *c, int on)
{
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	return xioctl(c->vfd, on ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, &type);
}

/* Open the node, take YUYV at its default size, REQBUFS DMABUF. */
static int cam_setup_device(struct camera *c)
{
	struct v4l2_requestbuffers rb;
	struct v4l2_capability cap;
	struct v4l2_format *f = &c->fmt;
	int ret;

	c->vfd = open(c->o->device, O_RDWR | O_CLOEXEC);
	if (c->vfd < 0)
		return fail(c->o->device, errno);
	memset(&cap, 0, sizeof(cap));
	ret = xioctl(c->vfd, VIDIOC_QUERYCAP, &cap);
	if (ret)
		return fail("VIDIOC_QUERYCAP", ret);
	memset(f, 0, sizeof(*f));
	f->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	ret = xioctl(c->vfd, VIDIOC_G_FMT, f);
	if (!ret) {
		f->fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
		f->fmt.pix.field = V4L2_FIELD_ANY;
		f->fmt.pix.bytesperline = 0;
		f->fmt.pix.sizeimage = 0;
		ret = xioctl(c->vfd, VIDIOC_S_FMT, f);
	}
	if (ret)
		return fail("VIDIOC_S_FMT YUYV", ret);
	say("%s: %s \"%s\" (%s), %ux%u %.4s, %u bytes per line, %u bytes per frame",
	    c->o->device, (const char *)cap.driver, (const char *)cap.card,
	    (const char *)cap.bus_info, f->fmt.pix.width, f->fmt.pix.height,
	    (const char *)&f->fmt.pix.pixelformat, f->fmt.pix.bytesperline,
	    f->fmt.pix.sizeimage);
	memset(&rb, 0, sizeof(rb));
	rb.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	rb.memory = V4L2_MEMORY_DMABUF;
	rb.count = c->o->nbuf;
	ret = xioctl(c->vfd, VIDIOC_REQBUFS, &rb);
	if (ret)
		return fail("VIDIOC_REQBUFS V4L2_MEMORY_DMABUF", ret);
	c->nbuf = rb.count < MAX_BUFS ? rb.count : MAX_BUFS;
	say("VIDIOC_REQBUFS: %u buffers, memory V4L2_MEMORY_DMABUF (the driver allocates nothing)",
	    c->nbuf);
	return 0;
}

/* Allocate, name, map and pre-fill the pool. */
static int cam_alloc_pool(struct camera *c)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned int i;
	char name[32];
	void *p;
	int ret;

	ret = ion_device_open(&c->dev);
	if (ret)
		return fail("/dev/ion", ret);
	c->len = (c->fmt.fmt.pix.sizeimage + pg - 1) / pg * pg;
	for (i = 0; i < c->nbuf; i++) {
		ret = ion_device_alloc_by_name(c->dev, c->o->heap, c->len,
					       c->o->cached ? ION_FLAG_CACHED : 0);
		if (ret < 0)
			return fail(c->o->heap, ret);
		c->fd[i] = ret;
		snprintf(name, sizeof(name), "frame%u", i);
		ion_buffer_set_name(c->fd[i], name);
		ret = ion_buffer_map(c->fd[i], c->len, PROT_READ | PROT_WRITE, &p);
		if (ret)
			return fail("mmap", ret);
		c->map[i] = p;
		ion_buffer_begin_cpu_access(c->fd[i], ION_CPU_WRITE);
		memset(p, SENTINEL, c->len);
		ion_buffer_end_cpu_access(c->fd[i], ION_CPU_WRITE);
	}
	say("allocated %u ion buffers of %zu bytes from %s (%s), named frame0..frame%u, filled with 0x%02x",
	    c->nbuf, c->len, c->o->heap, c->o->cached ? "cached" : "uncached",
	    c->nbuf - 1, SENTINEL);
	return 0;
}

static void cam_release(struct camera *c)
{
	unsigned int i;

	for (i = 0; i < c->nbuf; i++) {
		if (c->map[i])
			ion_buffer_unmap(c->map[i], c->len);
		if (c->fd[i] >= 0)
			close(c->fd[i]);
	}
	if (c->dev)
		ion_device_close(c->dev);
	if (c->vfd >= 0)
		close(c->vfd);
}

/* DQBUF one frame, checksum it and hand it to the viewer. */
static int cam_frame(struct camera *c)
{
	struct v4l2_buffer b;
	struct msg m;
	int ret;

	memset(&b, 0, sizeof(b));
	b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	b.memory = V4L2_MEMORY_DMABUF;
	ret = xioctl(c->vfd, VIDIOC_DQBUF, &b);
	if (ret)
		return fail("VIDIOC_DQBUF", ret);
	if (b.index >= c->nbuf || b.m.fd != c->fd[b.index] ||
	    (b.flags & V4L2_BUF_FLAG_ERROR))
		return fail("VIDIOC_DQBUF returned a bad buffer", EPROTO);
	memset(&m, 0, sizeof(m));
	m.type = MSG_FRAME;
	m.index = b.index;
	m.sequence = b.sequence;
	m.bytesused = b.bytesused;
	ion_buffer_begin_cpu_access(c->fd[b.index], ION_CPU_READ);
	m.sum = fnv1a(c->map[b.index], b.bytesused);
	ion_buffer_end_cpu_access(c->fd[b.index], ION_CPU_READ);
	say("frame seq %-3u in frame%u: %u bytes, fnv1a %08x -> viewer",
	    b.sequence, b.index, b.bytesused, m.sum);
	return send_msg(c->sock, &m, NULL, 0) ? fail("send", EPIPE) : 0;
}

/*
 * Stream until o->frames frames went to the viewer and came back; frames
 * are requeued as the viewer releases them.
 */
static int cam_loop(struct camera *c)
{
	unsigned int sent = 0, back = 0;
	struct pollfd p[2] = {
		{ .fd = c->vfd, .events = POLLIN },
		{ .fd = c->sock, .events = POLLIN },
	};
	struct msg m;
	int ret, fds[MAX_BUFS];

	while (back < c->o->frames) {
		p[0].events = sent < c->o->frames ? POLLIN : 0;
		ret = poll(p, 2, POLL_MS);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			return fail("waiting for a frame", ret ? errno : ETIMEDOUT);
		if (p[1].revents) {
			ret = recv_msg(c->sock, &m, fds);
			if (ret < 0 || m.type != MSG_RELEASE || m.index >= c->nbuf)
				return fail("viewer", ret < 0 ? ret : EPROTO);
			back++;
			ret = cam_qbuf(c, m.index);
			if (ret)
				return fail("VIDIOC_QBUF", ret);
		}
		if (p[0].revents & POLLIN) {
			if (cam_frame(c))
				return 1;
			sent++;
		}
	}
	return 0;
}

static int camera(int sock, const struct opts *o)
{
	struct camera c = { .o = o, .vfd = -1, .sock = sock };
	unsigned int i;
	struct msg m;
	int ret, rc = 1, fds[MAX_BUFS];

	who = "camera";
	prctl(PR_SET_NAME, "camera");	/* ion names the client comm-pid */
	for (i = 0; i < MAX_BUFS; i++)
		c.fd[i] = -1;
	if (cam_setup_device(&c) || cam_alloc_pool(&c))
		goto out;
	memset(&m, 0, sizeof(m));
	m.type = MSG_POOL;
	m.index = c.nbuf;
	m.width = c.fmt.fmt.pix.width;
	m.height = c.fmt.fmt.pix.height;
	m.bytesperline = c.fmt.fmt.pix.bytesperline;
	m.sizeimage = c.fmt.fmt.pix.sizeimage;
	if (send_msg(sock, &m, c.fd, (int)c.nbuf)) {
		fail("sending the pool", EPIPE);
		goto out;
	}
	say("sent the %u dma-buf fds to the viewer over a unix socket (SCM_RIGHTS)",
	    c.nbuf);
	ret = recv_msg(sock, &m, fds);
	if (ret < 0 || m.type != MSG_READY) {
		fail("waiting for the viewer", ret < 0 ? ret : EPROTO);
		goto out;
	}
	for (i = 0; i < c.nbuf; i++) {
		ret = cam_qbuf(&c, i);
		if (ret) {
			fail("VIDIOC_QBUF", ret);
			goto out;
		}
	}
	ret = cam_stream(&c, 1);
	if (ret) {
		fail("VIDIOC_STREAMON", ret);
		goto out;
	}
	say("queued the %u ion dma-bufs (VIDIOC_QBUF, m.fd), VIDIOC_STREAMON", c.nbuf);
	if (cam_loop(&c))
		goto out_stream;
	say("%u frames captured and handed over; the pool is still queued%s",
	    o->frames, o->show ? ":" : "");
	if (o->show) {
		int st = system(o->show);

		if (st)
			say("--show exited with status %d", st);
	}
	rc = 0;
out_stream:
	cam_stream(&c, 0);
	say("VIDIOC_STREAMOFF");
out:
	if (c.vfd >= 0) {
		struct v4l2_requestbuffers rb = {
			.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
			.memory = V4L2_MEMORY_DMABUF,
		};

		xioctl(c.vfd, VIDIOC_REQBUFS, &rb);	/* detach the device */
	}
	memset(&m, 0, sizeof(m));
	m.type = MSG_EOS;
	send_msg(sock, &m, NULL, 0);
	cam_release(&c);
	say("REQBUFS 0, unmapped and closed my buffers and /dev/ion, exiting");
	close(sock);
	return rc;
}

/* ---- viewer -------------------------------------------------------------- */

/*
 * Luma of the 8 columns of vivid's default test pattern (75% colour bars:
 * white, yellow, cyan, green, magenta, red, blue, black), sampled at 3/4
 * of the height, below vivid's text overlay.
 */
static void bars(const unsigned char *p, const struct msg *pool, char *out,
		 size_t size)
{
	size_t row = (size_t)pool->height * 3 / 4 * pool->bytesperline;
	int b, n = 0;

	for (b = 0; b < 8; b++) {
		size_t x = (size_t)(2 * b + 1) * pool->width / 16;

		n += snprintf(out + n, size - n, "%s%u", b ? " " : "",
			      p[row + x * 2]);	/* YUYV: Y at even bytes */
	}
}

struct viewer {
	int ion, sock, nbuf;
	int fd[MAX_BUFS];
	ion_user_handle_t handle[MAX_BUFS];
	const unsigned char *map[MAX_BUFS];
	size_t len;
	struct msg pool;
};

/* Check one frame; 0 when it landed and matches the camera's checksum. */
static int view_frame(struct viewer *v, const struct msg *m, int first)
{
	const unsigned char *p = v->map[m->index];
	unsigned int distinct = 0;
	unsigned char seen[256] = { 0 };
	size_t i, sentinel = 0;
	uint32_t sum;
	char y[64] = "";
	int ok;

	ion_buffer_begin_cpu_access(v->fd[m->index], ION_CPU_READ);
	sum = fnv1a(p, m->bytesused);
	for (i = 0; i < m->bytesused; i++) {
		sentinel += p[i] == SENTINEL;
		if (!seen[p[i]]) {
			seen[p[i]] = 1;
			distinct++;
		}
	}
	if (first)
		bars(p, &v->pool, y, sizeof(y));
	ion_buffer_end_cpu_access(v->fd[m->index], ION_CPU_READ);
	ok = sum == m->sum && m->bytesused == v->pool.sizeimage &&
	     sentinel * 10 < m->bytesused && distinct >= 8;
	say("frame seq %-3u in frame%u: fnv1a %08x %s camera's, %u distinct byte values, %s",
	    m->sequence, m->index, sum, sum == m->sum ? "==" : "!=", distinct,
	    ok ? "OK" : "BAD");
	if (first)
		say("  luma (Y) of the 8 colour bars: %s (75%% bars, BT.601 limited range: ~180 162 131 112 84 65 35 16)",
		    y);
	return !ok;
}

static void view_release(struct viewer *v)
{
	int i;

	for (i = 0; i < v->nbuf; i++) {
		if (v->map[i])
			ion_buffer_unmap((void *)v->map[i], v->len);
		if (v->handle[i])
			ion_free(v->ion, v->handle[i]);
		close(v->fd[i]);
	}
	if (v->ion >= 0)
		ion_close(v->ion);
}

static int viewer(int sock)
{
	struct viewer v = { .ion = -1, .sock = sock };
	unsigned int frames = 0, bad = 0;
	struct msg m;
	void *p;
	int i, ret, fds[MAX_BUFS];

	who = "viewer";
	prctl(PR_SET_NAME, "viewer");
	ret = recv_msg(sock, &v.pool, v.fd);
	if (ret <= 0 || v.pool.type != MSG_POOL || ret != (int)v.pool.index)
		return fail("receiving the pool", ret < 0 ? ret : EPROTO);
	v.nbuf = ret;
	v.ion = ion_open();
	if (v.ion < 0)
		return fail("/dev/ion", v.ion);
	if (ion_buffer_size(v.fd[0], &v.len))
		return fail("dma-buf size", EINVAL);
	for (i = 0; i < v.nbuf; i++) {
		ret = ion_import(v.ion, v.fd[i], &v.handle[i]);
		if (ret)
			return fail("ION_IOC_IMPORT", ret);
		ret = ion_buffer_map(v.fd[i], v.len, PROT_READ, &p);
		if (ret)
			return fail("mmap", ret);
		v.map[i] = p;
	}
	say("received %d dma-buf fds of %zu bytes (%ux%u frames), ION_IOC_IMPORT -> handles %d..%d in my own client, mapped read-only",
	    v.nbuf, v.len, v.pool.width, v.pool.height, v.handle[0],
	    v.handle[v.nbuf - 1]);
	memset(&m, 0, sizeof(m));
	m.type = MSG_READY;
	if (send_msg(sock, &m, NULL, 0))
		return fail("send", EPIPE);
	for (;;) {
		ret = recv_msg(sock, &m, fds);
		if (ret < 0)
			return fail("receive", ret);
		if (m.type == MSG_EOS)
			break;
		if (m.type != MSG_FRAME || m.index >= (unsigned int)v.nbuf)
			return fail("unexpected message", EPROTO);
		bad += view_frame(&v, &m, !frames);
		frames++;
		m.type = MSG_RELEASE;
		if (send_msg(sock, &m, NULL, 0))
			return fail("send", EPIPE);
	}
	view_release(&v);
	say("%u frames checked, %u bad; freed my handles, unmapped, closed everything, exiting",
	    frames, bad);
	return bad || !frames;
}

/* ---- launcher -------------------------------------------------------------- */

static long long summary(const char *key)
{
	unsigned long long v;
	struct ion_dbg_file *f;
	int err;

	if (ion_dbg_read(&f, ION_DBG_KEYS_ONLY, DEBUGFS "/summary"))
		return -1;
	err = ion_dbg_get_ull(f, key, &v);
	ion_dbg_free(f);
	return err ? -1 : (long long)v;
}

struct left_behind {
	char suffix[24];
	int n;
};

static int client_left(const char *name, void *data)
{
	struct left_behind *lb = data;
	size_t l = strlen(name), k = strlen(lb->suffix);

	if (l > k && !strcmp(name + l - k, lb->suffix)) {
		say("client left behind: %s", name);
		lb->n++;
	}
	return 0;
}

/* Client files left in debugfs for @pid. */
static int clients_of(pid_t pid)
{
	struct left_behind lb = { .n = 0 };

	snprintf(lb.suffix, sizeof(lb.suffix), "-%d", (int)pid);
	if (ion_dbg_foreach(client_left, &lb, DEBUGFS "/clients"))
		return -1;
	return lb.n;
}

static int reap(pid_t pid, const char *name)
{
	int st = 0;

	if (pid < 0)	/* fork() failed: nothing to wait for */
		return fail(name, ECHILD);
	if (waitpid(pid, &st, 0) != pid)
		return fail(name, errno);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		say("%s %d failed (status %#x)", name, (int)pid, st);
		return 1;
	}
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: ion-camera-demo [--device /dev/videoN] [--heap NAME] [--buffers N]\n"
	      "                       [--frames N] [--uncached] [--show CMD]\n"
	      "vivid (or any V4L2 capture device doing YUYV) captures into ion buffers\n"
	      "with V4L2_MEMORY_DMABUF; a second process imports them and checks every\n"
	      "frame.  Defaults: /dev/video0, ion_system_heap, 4 buffers, 8 frames.\n", f);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "heap", required_argument, NULL, 'H' },
		{ "buffers", required_argument, NULL, 'b' },
		{ "frames", required_argument, NULL, 'f' },
		{ "uncached", no_argument, NULL, 'u' },
		{ "show", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct opts o = {
		.device = "/dev/video0", .heap = ION_SYSTEM_HEAP_NAME,
		.nbuf = 4, .frames = 8, .cached = 1,
	};
	long long buffers0, bytes0, buffers, bytes;
	int opt, sv[2], bad = 0, left;
	pid_t cam, view;

	while ((opt = getopt_long(argc, argv, "d:H:b:f:us:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'd': o.device = optarg; break;
		case 'H': o.heap = optarg; break;
		case 'b': o.nbuf = (unsigned int)atoi(optarg); break;
		case 'f': o.frames = (unsigned int)atoi(optarg); break;
		case 'u': o.cached = 0; break;
		case 's': o.show = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc || o.nbuf < 1 || o.nbuf > MAX_BUFS || o.frames < 1) {
		usage(stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	buffers0 = summary("buffers");
	bytes0 = summary("bytes");
	if (buffers0 < 0)
		return fail(DEBUGFS "/summary (debugfs mounted? ion.ko loaded?)",
			    ENOENT);
	say("ion before: %lld buffers, %lld bytes", buffers0, bytes0);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return fail("socketpair", errno);
	cam = fork();
	if (cam == 0) {
		close(sv[1]);
		_exit(camera(sv[0], &o));
	}
	view = fork();
	if (view == 0) {
		close(sv[0]);
		_exit(viewer(sv[1]));
	}
	close(sv[0]);
	close(sv[1]);
	bad |= reap(cam, "camera");
	bad |= reap(view, "viewer");

	buffers = summary("buffers");
	bytes = summary("bytes");
	left = clients_of(cam) + clients_of(view);
	say("both exited; ion after: %lld buffers, %lld bytes, %d clients of theirs left: %s",
	    buffers, bytes, left,
	    buffers == buffers0 && bytes == bytes0 && !left ? "nothing left"
							     : "LEAK");
	bad |= buffers != buffers0 || bytes != bytes0 || left;
	say("%s", bad ? "pipeline FAILED" : "pipeline OK");
	return bad;
}
