// SPDX-License-Identifier: MIT
/*
 * ion-bench: allocation, one function per kind of implementation, and the
 * timed ops (alloc_free_cold, alloc_free_warm, alloc_map_touch, memset),
 * each timing its own critical part.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/udmabuf.h>
#include <ion/ion.h>

#include "ion-bench.h"

struct ion_device *iondev;
const struct ion_heap_data *memcg_heap;	/* the system heap */

static int ion_dev_alloc_fd(struct impl *im, size_t size)
{
	return ion_device_alloc(iondev, size, im->heap_mask, im->flags);
}

static int heap_alloc_fd(struct impl *im, size_t size)
{
	return ion_dma_heap_alloc(im->heap, size, 0);	/* O_RDWR | O_CLOEXEC */
}

/* Not an ion device: its one ioctl stays here. */
static int udmabuf_alloc_fd(struct impl *im, size_t size)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = size };
	int memfd, fd, err = 0;

	memfd = memfd_create("ion-bench", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0)
		return -errno;
	if (ftruncate(memfd, size) || fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		err = -errno;
	c.memfd = memfd;
	fd = err ? -1 : ioctl(im->fd, UDMABUF_CREATE, &c);
	if (!err && fd < 0)
		err = -errno;
	close(memfd);	/* the udmabuf keeps the pages */
	return err ? err : fd;
}

/* Allocate: a dma-buf fd, or for anon a mapping with every page touched. */
int buf_alloc(struct impl *im, size_t size, struct buf *b)
{
	int fd;

	b->len = size;
	b->p = NULL;
	b->fd = -1;
	switch (im->kind) {
	case K_ANON:
		b->p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b->p == MAP_FAILED)
			return -errno;
		for (size_t off = 0; off < size; off += PAGE)
			((volatile char *)b->p)[off] = 1;
		return 0;
	case K_ION:
		fd = ion_dev_alloc_fd(im, size);
		break;
	case K_HEAP:
		fd = heap_alloc_fd(im, size);
		break;
	default:
		fd = udmabuf_alloc_fd(im, size);
		break;
	}
	if (fd < 0)
		return fd;
	b->fd = fd;
	return 0;
}

void buf_free(struct buf *b)
{
	if (b->p)
		munmap(b->p, b->len);
	if (b->fd >= 0)
		close(b->fd);
}

/* ---- the ops: each times its own critical part --------------------------- */

/* One allocation and its free, timed together. */
static int timed_alloc_free(struct impl *im, size_t size, struct sample *s)
{
	long long h0 = helper_bytes(), h1;
	struct buf b;
	uint64_t t0;
	int err;

	t0 = now_ns();
	err = buf_alloc(im, size, &b);
	if (err)
		return err;
	buf_free(&b);
	s->ns = now_ns() - t0;
	h1 = helper_bytes();
	s->helped = h0 >= 0 && h1 >= h0 ? h1 - h0 : 0;
	return 0;
}

/*
 * Cold: nothing pooled, no background work, for every implementation.
 * The helper setting changes (if at all) before the prelude's waits.
 */
int op_alloc_free_cold(struct impl *im, size_t size, struct sample *s)
{
	int err = set_helpers(im->helpers);

	if (err)
		return err;
	drain_pools();
	return timed_alloc_free(im, size, s);
}

/*
 * ion pools the free of a cached buffer of at most this size only when it
 * comes in a burst (kernel/heaps/ion_chunk_pool.c, DOC: isolated frees).
 */
#define WARM_PRIME_MAX	(64 * 1024)

/*
 * Up to WARM_PRIME_MAX, a free after the bench's quiet wait is isolated,
 * so the previous run's free may or may not have filled a pool depending
 * on what ran before it in the round.  Untimed, for every implementation
 * alike: two buffers freed in a row (the second free is a burst's, so
 * pooled), then the quiet wait, so that the timed run finds a chunk of
 * its size in the pools each time.
 */
static int warm_prime(struct impl *im, size_t size)
{
	struct buf a, b;
	int err;

	if (size > WARM_PRIME_MAX)
		return 0;
	err = buf_alloc(im, size, &a);
	if (err)
		return err;
	err = buf_alloc(im, size, &b);
	buf_free(&a);
	if (!err)
		buf_free(&b);
	wait_quiet();
	return err;
}

/*
 * Warm: the pools refilled by what the previous runs freed (up to
 * WARM_PRIME_MAX by warm_prime()).  The wait after the run (for every
 * implementation, see wait_quiet()) is this run's background work,
 * reported apart.
 */
int op_alloc_free_warm(struct impl *im, size_t size, struct sample *s)
{
	int err = warm_prime(im, size);

	if (!err)
		err = timed_alloc_free(im, size, s);

	s->wait_ns = wait_quiet();
	return err;
}

int op_alloc_map_touch(struct impl *im, size_t size, struct sample *s)
{
	struct buf b;
	uint64_t t0;
	char *p;
	int err;

	t0 = now_ns();
	err = buf_alloc(im, size, &b);	/* anon: mapped and touched already */
	if (err)
		return err;
	if (im->kind != K_ANON) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, b.fd, 0);
		if (p == MAP_FAILED) {
			err = -errno;
			buf_free(&b);
			return err;
		}
		err = ion_buffer_begin_cpu_access(b.fd, ION_CPU_WRITE);
		for (size_t off = 0; off < size; off += PAGE)
			((volatile char *)p)[off] = 1;
		if (!err)
			err = ion_buffer_end_cpu_access(b.fd, ION_CPU_WRITE);
		munmap(p, size);
	}
	buf_free(&b);
	s->ns = now_ns() - t0;
	return err;
}

void *memset_buf;

/* In the cold group, so with the cold prelude too: the same for all. */
int op_memset(struct impl *im, size_t size, struct sample *s)
{
	uint64_t t0;

	drain_pools();
	t0 = now_ns();

	memset(memset_buf, 0, size);
	__asm__ volatile("" : : "r"(memset_buf) : "memory");
	s->ns = now_ns() - t0;
	return 0;
}

/*
 * The kernel clears pages with "rep stosb" on x86 (clear_page_erms); under
 * TCG that is much faster than glibc's vector memset, so the bench also
 * reports it as the limit "memset-stosb".
 */
#if HAVE_STOSB
int op_memset_stosb(struct impl *im, size_t size, struct sample *s)
{
	void *dst = memset_buf;
	size_t n = size;
	uint64_t t0;

	drain_pools();
	t0 = now_ns();

	__asm__ volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(0) : "memory");
	s->ns = now_ns() - t0;
	return 0;
}
#endif
