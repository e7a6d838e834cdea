// SPDX-License-Identifier: MIT
/*
 * Helpers of the interop_* guest tests (see interop_v4l2.h): modules,
 * vivid's nodes, V4L2 queues of ion buffers with V4L2_MEMORY_DMABUF, and
 * a test program's frame.
 */
#include "interop_v4l2.h"

int iv_unload(const char *name)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "modprobe -r %s 2>/dev/null", name);
	return system(cmd) == 0 ? 0 : -EBUSY;
}

int iv_load(const char *name, const char *args)
{
	char cmd[256];

	iv_unload(name);
	snprintf(cmd, sizeof(cmd), "modprobe %s %s", name, args ? args : "");
	return system(cmd) == 0 ? 0 : -ENOENT;
}

int iv_querycap(int fd, struct v4l2_capability *cap)
{
	memset(cap, 0, sizeof(*cap));
	return it_ioctl(fd, VIDIOC_QUERYCAP, cap);
}

int iv_find_nodes(struct iv_node *nodes, int max)
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

const struct iv_node *iv_node(const struct iv_node *nodes,
			      int n, int inst, unsigned int cap)
{
	int i;

	for (i = 0; i < n; i++)
		if (nodes[i].inst == inst && (nodes[i].caps & cap))
			return &nodes[i];
	return NULL;
}

int iv_vivid_setup(struct iv_node *nodes, int *n)
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

int iv_set_fmt(int fd, unsigned int type, struct v4l2_format *f)
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

int iv_reqbufs(int fd, unsigned int type, unsigned int memory,
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

int iv_qbuf_dmabuf(int fd, unsigned int type, unsigned int index,
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

int iv_dqbuf(int fd, unsigned int type, unsigned int memory,
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

int iv_stream(int fd, unsigned int type, int on)
{
	int t = (int)type;

	return it_ioctl(fd, on ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, &t);
}

int iv_buf_alloc(int ion, unsigned int id, size_t len,
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

void iv_buf_free(struct iv_buf *b)
{
	if (b->map)
		munmap(b->map, b->len);
	if (b->fd >= 0)
		close(b->fd);
	b->map = NULL;
	b->fd = -1;
}

int iv_buf_fill(struct iv_buf *b, int val)
{
	int ret = it_sync(b->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);

	if (ret)
		return ret;
	memset(b->map, val, b->len);
	return it_sync(b->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
}

int iv_buf_pattern(struct iv_buf *b, unsigned int seed)
{
	int ret = it_sync(b->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);

	if (ret)
		return ret;
	it_fill(b->map, b->len, seed);
	return it_sync(b->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
}

long iv_buf_check(struct iv_buf *b, size_t len,
		  unsigned int seed)
{
	long off;

	it_sync(b->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	off = it_check(b->map, len, seed);
	it_sync(b->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	return off;
}

void iv_stats(const unsigned char *p, size_t len,
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

int iv_frame_ok(const struct iv_frame_stats *s, size_t len)
{
	return s->sentinel * 10 < len && s->zero < len && s->distinct >= 8;
}

int iv_buf_stats(struct iv_buf *b, size_t len,
		 struct iv_frame_stats *s)
{
	int ret = it_sync(b->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);

	if (ret)
		return ret;
	iv_stats(b->map, len, s);
	return it_sync(b->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
}

int iv_attachments(int buf_fd, const char *heap)
{
	return (int)it_buffer_num(buf_fd, heap, "attachments");
}

int iv_heap_is_system(const struct ion_heap_data *h)
{
	return h->type == ION_HEAP_TYPE_SYSTEM;
}

/* Backed at first use: let the device be the first. */
static int iv_heap_is_deferred(const struct ion_heap_data *h)
{
	return h->type == ION_HEAP_TYPE_AUTO;
}

/* What iv_queue_alloc() was asked to write into buffer @i. */
static int iv_queue_write(struct iv_queue *q, int i)
{
	return q->seed ? iv_buf_pattern(&q->bufs[i], q->seed + i) :
			 iv_buf_fill(&q->bufs[i], IV_SENTINEL);
}

int iv_queue_all(int vfd, unsigned int type, int inst,
		 const struct ion_heap_data *heap,
		 struct iv_buf *bufs, int nbuf,
		 unsigned int bytesused, int *refused)
{
	int may_refuse = inst == 1 && iv_heap_is_system(heap);
	int i, queued = 0, bad = 0, kmsg = it_kmsg_open(0);
	char line[256];

	*refused = 0;
	for (i = 0; i < nbuf; i++) {
		int ret = iv_qbuf_dmabuf(vfd, type, i, bufs[i].fd,
					 bufs[i].len, bytesused);
		int said = it_kmsg_find(kmsg, "contiguous chunk is too small",
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

int iv_queue_open(struct iv_queue *q, const struct iv_node *node,
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

int iv_queue_alloc(struct iv_queue *q, int ion,
		   unsigned int seed)
{
	int i, ret = 0;

	q->seed = seed;
	for (i = 0; i < q->nbuf && !ret; i++) {
		ret = iv_buf_alloc(ion, q->heap->heap_id, q->sizeimage,
				   &q->bufs[i]);
		if (!ret && !iv_heap_is_deferred(q->heap))
			ret = iv_queue_write(q, i);
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

int iv_queue_qbuf(struct iv_queue *q, unsigned int bytesused)
{
	int refused, queued, i, ret = 0;

	queued = iv_queue_all(q->vfd, q->type, q->inst, q->heap, q->bufs,
			      q->nbuf, bytesused, &refused);
	if (q->inst == 1 && iv_heap_is_system(q->heap)) {
		tap_diag("system heap: %d of %d buffers refused as not one DMA run",
			 refused, q->nbuf);
		tap_ok(queued >= 0, "%s %s: QBUF refuses a buffer that is not one DMA run with EFAULT (and takes one that happens to be)",
		       q->dir, q->what);
		return 0;
	}
	if (!tap_ok(queued == q->nbuf, "%s %s: QBUF of %d ion dma-buf fds",
		    q->dir, q->what, q->nbuf))
		return 0;
	if (!iv_heap_is_deferred(q->heap))
		return 1;
	for (i = 0; i < q->nbuf && !ret; i++)
		ret = iv_queue_write(q, i);
	if (ret)
		tap_diag("write after QBUF: %s", strerror(-ret));
	return tap_ok(!ret, "%s %s: buffers written after QBUF (the device used them first)",
		      q->dir, q->what);
}

int iv_queue_streamon(struct iv_queue *q)
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
	tap_ok(it_buffer_has_device(q->bufs[0].fd, q->heap->name, "vivid") ==
	       want, "%s %s: debugfs devices of a queued buffer %s vivid",
	       q->dir, q->what, want ? "names" : "does not name");
	return 1;
}

void iv_queue_streamoff(struct iv_queue *q)
{
	int ret = iv_stream(q->vfd, q->type, 0);

	if (ret)
		tap_diag("STREAMOFF: %s", strerror(-ret));
	tap_ok(!ret, "%s %s: STREAMOFF", q->dir, q->what);
}

void iv_queue_release(struct iv_queue *q)
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

void iv_queue_close(struct iv_queue *q)
{
	unsigned int i;

	for (i = 0; i < IT_ARRAY_SIZE(q->bufs); i++)
		iv_buf_free(&q->bufs[i]);
	if (q->vfd >= 0)
		close(q->vfd);
	q->vfd = -1;
}

void iv_queue_run(int ion, const struct iv_node *node,
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

void iv_prog_begin(struct iv_prog *p)
{
	memset(p, 0, sizeof(*p));
	setvbuf(stdout, NULL, _IOLBF, 0);
	p->ion = it_setup(&p->hs);
	it_summary(&p->buffers0, &p->bytes0);
}

int iv_prog_vivid(struct iv_prog *p, const char *what,
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

void iv_prog_queues(struct iv_prog *p, unsigned int type,
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

int iv_prog_summary_back(const struct iv_prog *p,
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

int iv_prog_end(struct iv_prog *p, const char *module)
{
	tap_ok(!iv_unload(module), "%s unloads (no reference left behind)",
	       module);
	iv_prog_summary_back(p, "");
	if (p->ion >= 0)
		close(p->ion);
	return tap_exit();
}

int iv_prog_abort(struct iv_prog *p)
{
	if (p->ion >= 0)
		close(p->ion);
	return tap_exit();
}

int iv_prog_queue_main(const char *what, unsigned int type,
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
