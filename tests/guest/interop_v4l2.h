/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the interop_* guest tests: loading and unloading Debian
 * modules (vivid, vgem), finding vivid's video nodes, V4L2 buffer queues
 * with V4L2_MEMORY_DMABUF, and checks on what a device wrote into an ion
 * buffer.
 *
 * vivid facts these tests rely on (6.12 drivers/media/test-drivers/vivid/):
 *  - module parameters are per instance arrays; allocators=0,1 gives
 *    instance 0 vb2-vmalloc and instance 1 vb2-dma-contig (vivid then sets
 *    a 32-bit coherent DMA mask on its platform device);
 *  - node_types bit 0 is the video capture node, bit 8 the video output
 *    node (0x101 creates just those two);
 *  - every node's bus_info is "platform:vivid-<instance as %03d>", so the
 *    instance (and so the allocator) of a /dev/videoN is known from
 *    VIDIOC_QUERYCAP whatever numbers the nodes got;
 *  - multiplanar defaults to 1 (single-planar), the default pixel format
 *    is vivid_formats[0], YUYV;
 *  - both queues accept V4L2_MEMORY_DMABUF; vb2-vmalloc imports a dma-buf
 *    by attaching and vmapping it (no DMA mapping), vb2-dma-contig by
 *    attaching and dma_buf_map_attachment(), then refuses at QBUF with
 *    -EFAULT ("contiguous chunk is too small") an sg table whose DMA
 *    addresses are not one run (vb2_dc_map_dmabuf()).
 */
#ifndef ION_INTEROP_V4L2_H
#define ION_INTEROP_V4L2_H

#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/videodev2.h>

#include "ion_test_util.h"

#define IV_MAX_NODES	16
#define IV_NBUF		3	/* buffers queued per stream */
#define IV_FRAMES	6	/* frames dequeued per stream */
#define IV_SENTINEL	0xa5	/* what a buffer holds before the device writes */
#define IV_POLL_MS	20000	/* a hang guard, not a timing check */

/* Parameters: two instances, vmalloc then dma-contig, capture + output. */
#define IV_VIVID_ARGS "n_devs=2 allocators=0,1 node_types=0x101,0x101 " \
		      "num_inputs=1,1 num_outputs=1,1"

static const char *const iv_alloc_names[] = { "vmalloc", "dma-contig" };

/* ------------------------------------------------------------------ */
/* Modules                                                             */

/* Unload @name if loaded; 0 when it is gone afterwards. */
static inline int iv_unload(const char *name)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "modprobe -r %s 2>/dev/null", name);
	return system(cmd) == 0 ? 0 : -EBUSY;
}

/* Load @name with @args after unloading any earlier instance. */
static inline int iv_load(const char *name, const char *args)
{
	char cmd[256];

	iv_unload(name);
	snprintf(cmd, sizeof(cmd), "modprobe %s %s", name, args ? args : "");
	return system(cmd) == 0 ? 0 : -ENOENT;
}

/* ------------------------------------------------------------------ */
/* vivid's nodes                                                       */

/**
 * struct iv_node - one vivid video node
 * @path: /dev/videoN
 * @inst: vivid instance (from bus_info)
 * @caps: device_caps
 */
struct iv_node {
	char path[32];
	int inst;
	unsigned int caps;
};

static inline int iv_querycap(int fd, struct v4l2_capability *cap)
{
	memset(cap, 0, sizeof(*cap));
	return it_ioctl(fd, VIDIOC_QUERYCAP, cap);
}

/* vivid's video nodes; returns how many were found. */
static inline int iv_find_nodes(struct iv_node *nodes, int max)
{
	int i, n = 0;

	for (i = 0; i < 64 && n < max; i++) {
		struct v4l2_capability cap;
		char path[32];
		const char *inst;
		int fd;

		snprintf(path, sizeof(path), "/dev/video%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!iv_querycap(fd, &cap) &&
		    !strcmp((const char *)cap.driver, "vivid")) {
			inst = strstr((const char *)cap.bus_info, "vivid-");
			snprintf(nodes[n].path, sizeof(nodes[n].path), "%s",
				 path);
			nodes[n].inst = inst ? atoi(inst + 6) : -1;
			nodes[n].caps = cap.capabilities & V4L2_CAP_DEVICE_CAPS ?
					cap.device_caps : cap.capabilities;
			n++;
		}
		close(fd);
	}
	return n;
}

/* The node of instance @inst with capability @cap, or NULL. */
static inline const struct iv_node *iv_node(const struct iv_node *nodes,
					    int n, int inst, unsigned int cap)
{
	int i;

	for (i = 0; i < n; i++)
		if (nodes[i].inst == inst && (nodes[i].caps & cap))
			return &nodes[i];
	return NULL;
}

/*
 * Load vivid with IV_VIVID_ARGS and find its nodes: 0, or -ENOENT when the
 * module is missing (the caller skips), -ENODEV when it loaded without the
 * nodes these tests need.
 */
static inline int iv_vivid_setup(struct iv_node *nodes, int *n)
{
	int inst;

	if (iv_load("vivid", IV_VIVID_ARGS))
		return -ENOENT;
	*n = iv_find_nodes(nodes, IV_MAX_NODES);
	for (inst = 0; inst < 2; inst++)
		if (!iv_node(nodes, *n, inst, V4L2_CAP_VIDEO_CAPTURE) ||
		    !iv_node(nodes, *n, inst, V4L2_CAP_VIDEO_OUTPUT))
			return -ENODEV;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Formats and queues                                                  */

/* Read the current format and set it back; sizeimage in *size. */
static inline int iv_set_fmt(int fd, unsigned int type, struct v4l2_format *f)
{
	int ret;

	memset(f, 0, sizeof(*f));
	f->type = type;
	ret = it_ioctl(fd, VIDIOC_G_FMT, f);
	if (ret)
		return ret;
	f->fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	f->fmt.pix.field = V4L2_FIELD_ANY;
	f->fmt.pix.bytesperline = 0;
	f->fmt.pix.sizeimage = 0;
	return it_ioctl(fd, VIDIOC_S_FMT, f);
}

static inline int iv_reqbufs(int fd, unsigned int type, unsigned int memory,
			     unsigned int count)
{
	struct v4l2_requestbuffers rb;
	int ret;

	memset(&rb, 0, sizeof(rb));
	rb.type = type;
	rb.memory = memory;
	rb.count = count;
	ret = it_ioctl(fd, VIDIOC_REQBUFS, &rb);
	return ret ? ret : (int)rb.count;
}

static inline int iv_qbuf_dmabuf(int fd, unsigned int type, unsigned int index,
				 int buf_fd, unsigned int length,
				 unsigned int bytesused)
{
	struct v4l2_buffer b;

	memset(&b, 0, sizeof(b));
	b.type = type;
	b.memory = V4L2_MEMORY_DMABUF;
	b.index = index;
	b.m.fd = buf_fd;
	b.length = length;
	b.bytesused = bytesused;
	b.field = V4L2_FIELD_ANY;
	return it_ioctl(fd, VIDIOC_QBUF, &b);
}

/* Wait (bounded) and DQBUF one buffer into *b. */
static inline int iv_dqbuf(int fd, unsigned int type, unsigned int memory,
			   struct v4l2_buffer *b)
{
	struct pollfd p = { .fd = fd };
	int ret;

	p.events = V4L2_TYPE_IS_OUTPUT(type) ? POLLOUT : POLLIN;
	do {
		ret = poll(&p, 1, IV_POLL_MS);
	} while (ret < 0 && errno == EINTR);
	if (ret == 0)
		return -ETIMEDOUT;
	if (ret < 0)
		return -errno;
	memset(b, 0, sizeof(*b));
	b->type = type;
	b->memory = memory;
	return it_ioctl(fd, VIDIOC_DQBUF, b);
}

static inline int iv_stream(int fd, unsigned int type, int on)
{
	int t = (int)type;

	return it_ioctl(fd, on ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, &t);
}

/* ------------------------------------------------------------------ */
/* ion buffers                                                         */

/**
 * struct iv_buf - one ion buffer handed to a device
 * @fd:   its dma-buf fd
 * @len:  its size
 * @map:  read/write mapping of the whole buffer
 */
struct iv_buf {
	int fd;
	size_t len;
	unsigned char *map;
};

static inline size_t iv_round_page(size_t len)
{
	size_t pg = (size_t)it_page();

	return (len + pg - 1) / pg * pg;
}

/* Allocate and map @len bytes from heap @id (fd ABI), or -errno. */
static inline int iv_buf_alloc(int ion, unsigned int id, size_t len,
			       struct iv_buf *b)
{
	void *p;

	b->len = iv_round_page(len);
	b->map = NULL;
	b->fd = it_alloc_fd(ion, b->len, 1U << id, ION_FLAG_CACHED);
	if (b->fd < 0)
		return b->fd;
	p = mmap(NULL, b->len, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (p == MAP_FAILED) {
		int e = -errno;

		close(b->fd);
		b->fd = -1;
		return e;
	}
	b->map = p;
	return 0;
}

static inline void iv_buf_free(struct iv_buf *b)
{
	if (b->map)
		munmap(b->map, b->len);
	if (b->fd >= 0)
		close(b->fd);
	b->map = NULL;
	b->fd = -1;
}

/* Fill from the CPU with @val, bracketed for the device. */
static inline int iv_buf_fill(struct iv_buf *b, int val)
{
	int ret = it_sync(b->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);

	if (ret)
		return ret;
	memset(b->map, val, b->len);
	return it_sync(b->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
}

/*
 * The kernel log, read from a point on: vb2-dma-contig says why it
 * refused a dma-buf ("contiguous chunk is too small <run>/<size>").  (The
 * physical layout of an ion buffer cannot be read from user space:
 * /proc/self/pagemap shows nothing for ion's VM_PFNMAP mappings.)
 */
static inline int iv_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* Find @what in records logged since the last call; copy the line. */
static inline int iv_kmsg_find(int fd, const char *what, char *line,
			       size_t size)
{
	char rec[1024];
	int found = 0;
	ssize_t n;

	if (fd < 0)
		return 0;
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records */
		if (n <= 0)
			break;
		rec[n] = 0;
		if (!found && strstr(rec, what)) {
			char *msg = strchr(rec, ';');

			const char *src = msg ? msg + 1 : rec;
			size_t l = strcspn(src, "\n");

			if (l >= size)
				l = size - 1;
			memcpy(line, src, l);
			line[l] = 0;
			found = 1;
		}
	}
	return found;
}

/**
 * struct iv_frame_stats - what a device left in a buffer
 * @sentinel: bytes still IV_SENTINEL
 * @zero:     zero bytes
 * @distinct: distinct byte values
 * @sum:      a checksum (FNV-1a) of the bytes
 */
struct iv_frame_stats {
	size_t sentinel;
	size_t zero;
	unsigned int distinct;
	uint32_t sum;
};

static inline void iv_stats(const unsigned char *p, size_t len,
			    struct iv_frame_stats *s)
{
	unsigned char seen[256] = { 0 };
	size_t i;

	memset(s, 0, sizeof(*s));
	s->sum = 2166136261u;
	for (i = 0; i < len; i++) {
		s->sentinel += p[i] == IV_SENTINEL;
		s->zero += !p[i];
		if (!seen[p[i]]) {
			seen[p[i]] = 1;
			s->distinct++;
		}
		s->sum = (s->sum ^ p[i]) * 16777619u;
	}
}

/*
 * A frame landed: under 10% of it is still the sentinel, it is not all
 * zeros, and it has at least 8 distinct byte values (vivid's colour bars
 * and text in YUYV have dozens).
 */
static inline int iv_frame_ok(const struct iv_frame_stats *s, size_t len)
{
	return s->sentinel * 10 < len && s->zero < len && s->distinct >= 8;
}

/* Read a buffer's bytes [0, len) after the device wrote them. */
static inline int iv_buf_stats(struct iv_buf *b, size_t len,
			       struct iv_frame_stats *s)
{
	int ret = it_sync(b->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);

	if (ret)
		return ret;
	iv_stats(b->map, len, s);
	return it_sync(b->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
}

/* The "attachments" column of the buffer's row in its heap file, or -1. */
static inline int iv_attachments(int buf_fd, const char *heap)
{
	struct it_dfs d;
	const char *v;
	int row, ret = -1;

	if (it_dfs_load_heap(&d, heap))
		return -1;
	row = it_dfs_find_ino(&d, buf_fd);
	v = row >= 0 ? it_dfs_cell(&d, row, "attachments") : NULL;
	if (v)
		ret = atoi(v);
	it_dfs_free(&d);
	return ret;
}

/* The system heap hands out scattered chunks. */
static inline int iv_heap_is_system(const struct ion_heap_data *h)
{
	return h->type == ION_HEAP_TYPE_SYSTEM;
}

/*
 * QBUF every buffer.  Each must be accepted, except that on the
 * dma-contig instance a system heap buffer may be refused, and then only
 * with EFAULT and vb2-dma-contig's "contiguous chunk is too small" in the
 * kernel log.  Returns the number queued, or -1 when a result was not one
 * of those; *refused counts the refusals.
 */
static inline int iv_queue_all(int vfd, unsigned int type, int inst,
			       const struct ion_heap_data *heap,
			       struct iv_buf *bufs, int nbuf,
			       unsigned int bytesused, int *refused)
{
	int may_refuse = inst == 1 && iv_heap_is_system(heap);
	int i, queued = 0, bad = 0, kmsg = iv_kmsg_open();
	char line[256];

	*refused = 0;
	for (i = 0; i < nbuf; i++) {
		int ret = iv_qbuf_dmabuf(vfd, type, i, bufs[i].fd,
					 bufs[i].len, bytesused);
		int said = iv_kmsg_find(kmsg, "contiguous chunk is too small",
					line, sizeof(line));

		if (!ret) {
			queued++;
			continue;
		}
		if (may_refuse && ret == -EFAULT && said) {
			tap_diag("QBUF %d refused: EFAULT, kernel: %s", i, line);
			(*refused)++;
			continue;
		}
		tap_diag("QBUF %d: %s%s%s", i, strerror(-ret),
			 said ? ", kernel: " : "", said ? line : "");
		bad++;
	}
	if (kmsg >= 0)
		close(kmsg);
	return bad ? -1 : queued;
}

#endif /* ION_INTEROP_V4L2_H */
