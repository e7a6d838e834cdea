/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the interop_* guest tests: a test program's frame (ion open,
 * debugfs totals before and after, the module it loads), loading and
 * unloading Debian modules (vivid, vgem), finding vivid's video nodes, a
 * V4L2 queue of ion buffers with V4L2_MEMORY_DMABUF from open to REQBUFS 0,
 * and checks on what a device wrote into an ion buffer.
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

/* Allocate and map @len bytes from heap @id (fd ABI), or -errno. */
static inline int iv_buf_alloc(int ion, unsigned int id, size_t len,
			       struct iv_buf *b)
{
	void *p;

	b->len = it_round_page(len);
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

/* Write it_fill()'s pattern @seed over the whole buffer, bracketed. */
static inline int iv_buf_pattern(struct iv_buf *b, unsigned int seed)
{
	int ret = it_sync(b->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);

	if (ret)
		return ret;
	it_fill(b->map, b->len, seed);
	return it_sync(b->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
}

/*
 * Compare bytes [0, len) with pattern @seed, bracketed for reading: the
 * first offset that differs, or -1 when all match.
 */
static inline long iv_buf_check(struct iv_buf *b, size_t len,
				unsigned int seed)
{
	long off;

	it_sync(b->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	off = it_check(b->map, len, seed);
	it_sync(b->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	return off;
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
	return (int)it_buffer_num(buf_fd, heap, "attachments");
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

/* ------------------------------------------------------------------ */
/* A queue of ion buffers on a vivid node, open to REQBUFS 0           */

/**
 * struct iv_queue - one V4L2_MEMORY_DMABUF queue of ion buffers
 * @dir:       "capture" or "output", the first word of every case name
 * @what:      "<allocator>/<heap name>", the second
 * @heap:      the heap the buffers come from
 * @inst:      vivid instance (0 vb2-vmalloc, 1 vb2-dma-contig)
 * @type:      V4L2_BUF_TYPE_VIDEO_CAPTURE or _OUTPUT
 * @vfd:       the open video node, or -1
 * @fmt:       the format set (YUYV at vivid's default size)
 * @sizeimage: fmt's sizeimage
 * @nbuf:      buffers REQBUFS granted (and ion buffers allocated)
 * @bufs:      the ion buffers
 */
struct iv_queue {
	const char *dir;
	char what[96];
	const struct ion_heap_data *heap;
	int inst;
	unsigned int type;
	int vfd;
	struct v4l2_format fmt;
	unsigned int sizeimage;
	int nbuf;
	struct iv_buf bufs[IV_NBUF + 4];
};

/*
 * Open @node, set YUYV and REQBUFS IV_NBUF V4L2_MEMORY_DMABUF buffers: 0,
 * or -1 after a failing case (the node is closed again).
 */
static inline int iv_queue_open(struct iv_queue *q, const struct iv_node *node,
				unsigned int type, int inst,
				const struct ion_heap_data *heap)
{
	unsigned int i;
	int ret;

	memset(q, 0, sizeof(*q));
	for (i = 0; i < IT_ARRAY_SIZE(q->bufs); i++)
		q->bufs[i].fd = -1;
	q->dir = V4L2_TYPE_IS_OUTPUT(type) ? "output" : "capture";
	q->type = type;
	q->inst = inst;
	q->heap = heap;
	snprintf(q->what, sizeof(q->what), "%s/%s", iv_alloc_names[inst],
		 heap->name);
	q->vfd = open(node->path, O_RDWR | O_CLOEXEC);
	if (q->vfd < 0 || iv_set_fmt(q->vfd, type, &q->fmt)) {
		tap_ok(0, "%s %s: open %s and set YUYV", q->dir, q->what,
		       node->path);
		goto fail;
	}
	q->sizeimage = q->fmt.fmt.pix.sizeimage;
	ret = iv_reqbufs(q->vfd, type, V4L2_MEMORY_DMABUF, IV_NBUF);
	if (ret < 1 || ret > (int)IT_ARRAY_SIZE(q->bufs)) {
		tap_ok(0, "%s %s: REQBUFS V4L2_MEMORY_DMABUF", q->dir, q->what);
		tap_diag("REQBUFS: %d", ret);
		goto fail;
	}
	q->nbuf = ret;
	tap_diag("%s on %s: %ux%u %.4s sizeimage %u, %d buffers", q->what,
		 node->path, q->fmt.fmt.pix.width, q->fmt.fmt.pix.height,
		 (const char *)&q->fmt.fmt.pix.pixelformat, q->sizeimage,
		 q->nbuf);
	return 0;
fail:
	if (q->vfd >= 0)
		close(q->vfd);
	q->vfd = -1;
	return -1;
}

/*
 * Allocate and map one ion buffer of sizeimage per granted buffer, and
 * have the CPU write into buffer i either pattern @seed + i (@seed > 0,
 * for a device to read) or IV_SENTINEL (@seed == 0, for a device to
 * overwrite).  0; 1 when a contiguous heap cannot give the frame size (a
 * skipped case); -1 after a failing case.
 */
static inline int iv_queue_alloc(struct iv_queue *q, int ion,
				 unsigned int seed)
{
	int i, ret = 0;

	for (i = 0; i < q->nbuf && !ret; i++) {
		ret = iv_buf_alloc(ion, q->heap->heap_id, q->sizeimage,
				   &q->bufs[i]);
		if (!ret)
			ret = seed ? iv_buf_pattern(&q->bufs[i], seed + i) :
				     iv_buf_fill(&q->bufs[i], IV_SENTINEL);
	}
	if (ret == -ENOMEM && q->heap->type != ION_HEAP_TYPE_SYSTEM) {
		tap_skip(q->what, "heap cannot give the frame size");
		return 1;
	}
	if (!tap_ok(!ret, "%s %s: allocate, map and fill %d ion buffers of %u bytes",
		    q->dir, q->what, q->nbuf, q->sizeimage)) {
		tap_diag("alloc/map/fill: %s", strerror(-ret));
		return -1;
	}
	return 0;
}

/*
 * QBUF every buffer with @bytesused (iv_queue_all()) and report it: 1
 * when all are queued and the stream can start.  On the dma-contig
 * instance a system heap buffer may be refused (the case then is that
 * QBUF gave nothing but that refusal) and 0 is returned.
 */
static inline int iv_queue_qbuf(struct iv_queue *q, unsigned int bytesused)
{
	int refused, queued;

	queued = iv_queue_all(q->vfd, q->type, q->inst, q->heap, q->bufs,
			      q->nbuf, bytesused, &refused);
	if (q->inst == 1 && iv_heap_is_system(q->heap)) {
		tap_diag("system heap: %d of %d buffers refused as not one DMA run",
			 refused, q->nbuf);
		tap_ok(queued >= 0, "%s %s: QBUF refuses a buffer that is not one DMA run with EFAULT (and takes one that happens to be)",
		       q->dir, q->what);
		return 0;
	}
	return tap_ok(queued == q->nbuf, "%s %s: QBUF of %d ion dma-buf fds",
		      q->dir, q->what, q->nbuf);
}

/*
 * STREAMON (a case), then the debugfs attachments of a queued buffer (a
 * case): vb2-dma-contig attaches the dma-buf, vb2-vmalloc only vmaps it.
 * 1 when streaming.
 */
static inline int iv_queue_streamon(struct iv_queue *q)
{
	int ret = iv_stream(q->vfd, q->type, 1), att, want = q->inst == 1;

	if (!tap_ok(!ret, "%s %s: STREAMON", q->dir, q->what)) {
		tap_diag("STREAMON: %s", strerror(-ret));
		return 0;
	}
	att = iv_attachments(q->bufs[0].fd, q->heap->name);
	if (att != want)
		tap_diag("attachments of a queued buffer: %d", att);
	tap_ok(att == want, "%s %s: debugfs attachments of a queued buffer is %d",
	       q->dir, q->what, want);
	return 1;
}

static inline void iv_queue_streamoff(struct iv_queue *q)
{
	int ret = iv_stream(q->vfd, q->type, 0);

	if (ret)
		tap_diag("STREAMOFF: %s", strerror(-ret));
	tap_ok(!ret, "%s %s: STREAMOFF", q->dir, q->what);
}

/* REQBUFS 0 (a case: it detaches every buffer from the device). */
static inline void iv_queue_release(struct iv_queue *q)
{
	int ret = iv_reqbufs(q->vfd, q->type, V4L2_MEMORY_DMABUF, 0);
	int i, att = 0;

	for (i = 0; i < q->nbuf; i++)
		att += iv_attachments(q->bufs[i].fd, q->heap->name);
	if (ret || att)
		tap_diag("REQBUFS 0: %d, attachments left %d", ret, att);
	tap_ok(!ret && !att, "%s %s: REQBUFS 0 detaches every buffer", q->dir,
	       q->what);
}

/* Free the ion buffers and close the node. */
static inline void iv_queue_close(struct iv_queue *q)
{
	unsigned int i;

	for (i = 0; i < IT_ARRAY_SIZE(q->bufs); i++)
		iv_buf_free(&q->bufs[i]);
	if (q->vfd >= 0)
		close(q->vfd);
	q->vfd = -1;
}

/*
 * One queue from open to close: @stream runs (and starts the stream
 * itself) once every buffer is queued; output buffers are queued full
 * (bytesused = sizeimage), capture buffers empty.
 */
static inline void iv_queue_run(int ion, const struct iv_node *node,
				unsigned int type, int inst,
				const struct ion_heap_data *heap,
				unsigned int seed,
				void (*stream)(struct iv_queue *q))
{
	struct iv_queue q;

	if (iv_queue_open(&q, node, type, inst, heap))
		return;
	if (!iv_queue_alloc(&q, ion, seed)) {
		if (iv_queue_qbuf(&q, V4L2_TYPE_IS_OUTPUT(type) ? q.sizeimage : 0))
			stream(&q);
		iv_queue_release(&q);
	}
	iv_queue_close(&q);
}

/* ------------------------------------------------------------------ */
/* A test program's frame                                              */

/**
 * struct iv_prog - what every interop program sets up first
 * @ion:      /dev/ion (it_setup())
 * @hs:       the heaps HEAP_QUERY reported
 * @buffers0: debugfs summary's buffers when the program started
 * @bytes0:   and its bytes
 * @nodes, @n: vivid's video nodes, once iv_prog_vivid() loaded it
 */
struct iv_prog {
	int ion;
	struct it_heaps hs;
	long long buffers0, bytes0;
	struct iv_node nodes[IV_MAX_NODES];
	int n;
};

static inline void iv_prog_begin(struct iv_prog *p)
{
	memset(p, 0, sizeof(*p));
	setvbuf(stdout, NULL, _IOLBF, 0);
	p->ion = it_setup(&p->hs);
	it_summary(&p->buffers0, &p->bytes0);
}

/*
 * Load vivid with IV_VIVID_ARGS: 1 when it is there with every node the
 * tests need (a case, named "vivid loaded (<args>), @found"); 0 when the
 * module is missing (case @what skipped); -1 when it loaded without the
 * nodes (a failing case; vivid is unloaded again).
 */
static inline int iv_prog_vivid(struct iv_prog *p, const char *what,
				const char *found)
{
	int i, ret = iv_vivid_setup(p->nodes, &p->n);

	if (ret == -ENOENT) {
		tap_skip(what, "vivid module not available");
		return 0;
	}
	for (i = 0; i < p->n; i++)
		tap_diag("%s: vivid-%03d caps %#x", p->nodes[i].path,
			 p->nodes[i].inst, p->nodes[i].caps);
	if (!tap_ok(!ret, "vivid loaded (" IV_VIVID_ARGS "), %s", found)) {
		iv_unload("vivid");
		return -1;
	}
	return 1;
}

/*
 * iv_queue_run() on the @type node of both vivid instances, with buffers
 * from every heap in turn.
 */
static inline void iv_prog_queues(struct iv_prog *p, unsigned int type,
				  unsigned int seed,
				  void (*stream)(struct iv_queue *q))
{
	unsigned int cap = V4L2_TYPE_IS_OUTPUT(type) ? V4L2_CAP_VIDEO_OUTPUT :
						       V4L2_CAP_VIDEO_CAPTURE;
	unsigned int h;
	int inst;

	for (inst = 0; inst < 2; inst++)
		for (h = 0; h < p->hs.cnt; h++)
			iv_queue_run(p->ion, iv_node(p->nodes, p->n, inst, cap),
				     type, inst, &p->hs.h[h], seed, stream);
}

/* A case: debugfs summary's buffers and bytes are back to @p's start. */
static inline int iv_prog_summary_back(const struct iv_prog *p,
				       const char *when)
{
	long long buffers, bytes;
	int ret = it_summary(&buffers, &bytes);

	if (ret || buffers != p->buffers0 || bytes != p->bytes0)
		tap_diag("summary: buffers %lld -> %lld, bytes %lld -> %lld",
			 p->buffers0, buffers, p->bytes0, bytes);
	return tap_ok(!ret && buffers == p->buffers0 && bytes == p->bytes0,
		      "every ion buffer freed%s (debugfs summary back to %lld buffers)",
		      when, p->buffers0);
}

/*
 * The end of a program that loaded @module: it unloads (a case), nothing
 * of ion is left (a case), /dev/ion is closed.  Returns the exit status.
 */
static inline int iv_prog_end(struct iv_prog *p, const char *module)
{
	tap_ok(!iv_unload(module), "%s unloads (no reference left behind)",
	       module);
	iv_prog_summary_back(p, "");
	if (p->ion >= 0)
		close(p->ion);
	return tap_exit();
}

/*
 * The end of a program that stopped early: close /dev/ion; the exit
 * status (0 after a skip, 1 after a failing case).
 */
static inline int iv_prog_abort(struct iv_prog *p)
{
	if (p->ion >= 0)
		close(p->ion);
	return tap_exit();
}

/*
 * main() of a program that runs @stream on the @type queue of both vivid
 * instances with buffers of every heap (iv_prog_queues()); @what names
 * the case skipped without vivid.
 */
static inline int iv_prog_queue_main(const char *what, unsigned int type,
				     unsigned int seed,
				     void (*stream)(struct iv_queue *q))
{
	struct iv_prog p;
	char found[64];

	iv_prog_begin(&p);
	snprintf(found, sizeof(found), "%s nodes of both instances found",
		 V4L2_TYPE_IS_OUTPUT(type) ? "output" : "capture");
	if (iv_prog_vivid(&p, what, found) <= 0)
		return iv_prog_abort(&p);
	iv_prog_queues(&p, type, seed, stream);
	return iv_prog_end(&p, "vivid");
}

#endif /* ION_INTEROP_V4L2_H */
