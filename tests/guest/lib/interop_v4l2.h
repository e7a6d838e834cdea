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
int iv_unload(const char *name);

/* Load @name with @args after unloading any earlier instance. */
int iv_load(const char *name, const char *args);

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

int iv_querycap(int fd, struct v4l2_capability *cap);

/* vivid's video nodes; returns how many were found. */
int iv_find_nodes(struct iv_node *nodes, int max);

/* The node of instance @inst with capability @cap, or NULL. */
const struct iv_node *iv_node(const struct iv_node *nodes,
			      int n, int inst, unsigned int cap);

/*
 * Load vivid with IV_VIVID_ARGS and find its nodes: 0, or -ENOENT when the
 * module is missing (the caller skips), -ENODEV when it loaded without the
 * nodes these tests need.
 */
int iv_vivid_setup(struct iv_node *nodes, int *n);

/* ------------------------------------------------------------------ */
/* Formats and queues                                                  */

/* Read the current format and set it back; sizeimage in *size. */
int iv_set_fmt(int fd, unsigned int type, struct v4l2_format *f);

int iv_reqbufs(int fd, unsigned int type, unsigned int memory,
	       unsigned int count);

int iv_qbuf_dmabuf(int fd, unsigned int type, unsigned int index,
		   int buf_fd, unsigned int length,
		   unsigned int bytesused);

/* Wait (bounded) and DQBUF one buffer into *b. */
int iv_dqbuf(int fd, unsigned int type, unsigned int memory,
	     struct v4l2_buffer *b);

int iv_stream(int fd, unsigned int type, int on);

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
int iv_buf_alloc(int ion, unsigned int id, size_t len,
		 struct iv_buf *b);

void iv_buf_free(struct iv_buf *b);

/* Fill from the CPU with @val, bracketed for the device. */
int iv_buf_fill(struct iv_buf *b, int val);

/* Write it_fill()'s pattern @seed over the whole buffer, bracketed. */
int iv_buf_pattern(struct iv_buf *b, unsigned int seed);

/*
 * Compare bytes [0, len) with pattern @seed, bracketed for reading: the
 * first offset that differs, or -1 when all match.
 */
long iv_buf_check(struct iv_buf *b, size_t len,
		  unsigned int seed);

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

void iv_stats(const unsigned char *p, size_t len,
	      struct iv_frame_stats *s);

/*
 * A frame landed: under 10% of it is still the sentinel, it is not all
 * zeros, and it has at least 8 distinct byte values (vivid's colour bars
 * and text in YUYV have dozens).
 */
int iv_frame_ok(const struct iv_frame_stats *s, size_t len);

/* Read a buffer's bytes [0, len) after the device wrote them. */
int iv_buf_stats(struct iv_buf *b, size_t len,
		 struct iv_frame_stats *s);

/* The "attachments" column of the buffer's row in its heap file, or -1. */
int iv_attachments(int buf_fd, const char *heap);

/* The system heap hands out scattered chunks. */
int iv_heap_is_system(const struct ion_heap_data *h);

/*
 * QBUF every buffer.  Each must be accepted, except that on the
 * dma-contig instance a system heap buffer may be refused, and then only
 * with EFAULT and vb2-dma-contig's "contiguous chunk is too small" in the
 * kernel log.  Returns the number queued, or -1 when a result was not one
 * of those; *refused counts the refusals.  (The kernel log is the only
 * witness: the physical layout of an ion buffer cannot be read from user
 * space, /proc/self/pagemap shows nothing for ion's VM_PFNMAP mappings.)
 */
int iv_queue_all(int vfd, unsigned int type, int inst,
		 const struct ion_heap_data *heap,
		 struct iv_buf *bufs, int nbuf,
		 unsigned int bytesused, int *refused);

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
 * @seed:      what iv_queue_alloc() was asked to write (0: IV_SENTINEL)
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
	unsigned int seed;
};

/*
 * Open @node, set YUYV and REQBUFS IV_NBUF V4L2_MEMORY_DMABUF buffers: 0,
 * or -1 after a failing case (the node is closed again).
 */
int iv_queue_open(struct iv_queue *q, const struct iv_node *node,
		  unsigned int type, int inst,
		  const struct ion_heap_data *heap);

/*
 * Allocate and map one ion buffer of sizeimage per granted buffer, and
 * have the CPU write into buffer i either pattern @seed + i (@seed > 0,
 * for a device to read) or IV_SENTINEL (@seed == 0, for a device to
 * overwrite).  0; 1 when a contiguous heap cannot give the frame size (a
 * skipped case); -1 after a failing case.  A deferred heap's buffers (the
 * auto heap: backed at first use) are written only after QBUF, by
 * iv_queue_qbuf(), so that the device, not the CPU, is their first user.
 */
int iv_queue_alloc(struct iv_queue *q, int ion,
		   unsigned int seed);

/*
 * QBUF every buffer with @bytesused (iv_queue_all()) and report it: 1
 * when all are queued and the stream can start.  On the dma-contig
 * instance a system heap buffer may be refused (the case then is that
 * QBUF gave nothing but that refusal) and 0 is returned.  A deferred
 * heap's buffers are written now (see iv_queue_alloc()), before STREAMON.
 */
int iv_queue_qbuf(struct iv_queue *q, unsigned int bytesused);

/*
 * STREAMON (a case), then the debugfs attachments of a queued buffer (a
 * case): vb2-dma-contig attaches the dma-buf, vb2-vmalloc only vmaps it.
 * 1 when streaming.
 */
int iv_queue_streamon(struct iv_queue *q);

void iv_queue_streamoff(struct iv_queue *q);

/* REQBUFS 0 (a case: it detaches every buffer from the device). */
void iv_queue_release(struct iv_queue *q);

/* Free the ion buffers and close the node. */
void iv_queue_close(struct iv_queue *q);

/*
 * One queue from open to close: @stream runs (and starts the stream
 * itself) once every buffer is queued; output buffers are queued full
 * (bytesused = sizeimage), capture buffers empty.
 */
void iv_queue_run(int ion, const struct iv_node *node,
		  unsigned int type, int inst,
		  const struct ion_heap_data *heap,
		  unsigned int seed,
		  void (*stream)(struct iv_queue *q));

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

void iv_prog_begin(struct iv_prog *p);

/*
 * Load vivid with IV_VIVID_ARGS: 1 when it is there with every node the
 * tests need (a case, named "vivid loaded (<args>), @found"); 0 when the
 * module is missing (case @what skipped); -1 when it loaded without the
 * nodes (a failing case; vivid is unloaded again).
 */
int iv_prog_vivid(struct iv_prog *p, const char *what,
		  const char *found);

/*
 * iv_queue_run() on the @type node of both vivid instances, with buffers
 * from every heap in turn.
 */
void iv_prog_queues(struct iv_prog *p, unsigned int type,
		    unsigned int seed,
		    void (*stream)(struct iv_queue *q));

/* A case: debugfs summary's buffers and bytes are back to @p's start. */
int iv_prog_summary_back(const struct iv_prog *p,
			 const char *when);

/*
 * The end of a program that loaded @module: it unloads (a case), nothing
 * of ion is left (a case), /dev/ion is closed.  Returns the exit status.
 */
int iv_prog_end(struct iv_prog *p, const char *module);

/*
 * The end of a program that stopped early: close /dev/ion; the exit
 * status (0 after a skip, 1 after a failing case).
 */
int iv_prog_abort(struct iv_prog *p);

/*
 * main() of a program that runs @stream on the @type queue of both vivid
 * instances with buffers of every heap (iv_prog_queues()); @what names
 * the case skipped without vivid.
 */
int iv_prog_queue_main(const char *what, unsigned int type,
		       unsigned int seed,
		       void (*stream)(struct iv_queue *q));

#endif /* ION_INTEROP_V4L2_H */
