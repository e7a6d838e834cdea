// SPDX-License-Identifier: MIT
/*
 * The soak's operations (soak.h).  Each worker is a process with its own
 * few live buffers (statics here are per process); every buffer carries
 * a pattern from its own seed, written through mmap and checked wherever
 * the data is seen again: after the write, in the child it is sent to,
 * after edu copied part of it.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "soak.h"

const char *const soak_op_names[SOAK_OPS] = {
	"alloc", "touch", "free", "handle", "send", "vgem", "edu", "kill",
	"admin",
};

#define LIVE		4
#define MAX_LEN		(4 * MiB)
#define CONTIG_LEN	MiB	/* contiguous heaps: at most this */
#define SEND_LEN	(64 * KiB)
#define EDU_XFER	1024

struct live_buf {
	int fd;
	size_t len;
	unsigned int seed;	/* 0: no pattern written yet */
};

/* What op_send sends with a buffer's fd. */
struct send_msg {
	size_t len;
	unsigned int seed;
};

static struct live_buf live[LIVE];
static int nlive;
static int send_sock = -1;

/* A length of 1 page to @max, spread evenly over the powers of two. */
static size_t rand_len(struct soak_ctx *c, size_t max)
{
	unsigned int shift = fz_below(&c->seed, 11);	/* 4 KiB .. 4 MiB */
	size_t len = (size_t)it_page() << shift;

	len += fz_below(&c->seed, len) & ~(size_t)(it_page() - 1);
	return len > max ? max : len;
}

static int contiguous(const struct ion_heap_data *h)
{
	return h->type == ION_HEAP_TYPE_SYSTEM_CONTIG ||
	       h->type == ION_HEAP_TYPE_DMA || h->type == ION_HEAP_TYPE_CARVEOUT;
}

/* A new buffer from a random heap (/dev/ion) or node; fd or -errno. */
static int new_buf(struct soak_ctx *c, size_t *len)
{
	const struct ion_heap_data *h;
	unsigned int flags;

	if (c->nodes.cnt && fz_one_in(&c->seed, 2)) {
		const char *path = c->nodes.path[fz_below(&c->seed, c->nodes.cnt)];
		int node = open(path, O_RDWR | O_CLOEXEC), fd;

		if (node < 0)
			return -errno;
		*len = rand_len(c, CONTIG_LEN);
		fd = fz_node_alloc(node, *len);
		close(node);
		return fd;
	}
	h = &c->hs.h[fz_below(&c->seed, c->hs.cnt)];
	flags = fz_one_in(&c->seed, 4) ? 0 : ION_FLAG_CACHED;
	*len = rand_len(c, contiguous(h) ? CONTIG_LEN : MAX_LEN);
	return it_alloc_fd(c->ion, *len, 1U << h->heap_id, flags);
}

static int op_alloc(struct soak_ctx *c)
{
	size_t len = 0;
	int fd;

	if (nlive == LIVE) {
		close(live[0].fd);
		live[0] = live[--nlive];
	}
	fd = new_buf(c, &len);
	if (fd < 0)
		return fd;
	live[nlive++] = (struct live_buf){ .fd = fd, .len = len };
	return 0;
}

/*
 * Write a new pattern into @b and read it back; 1 when it differs.  The
 * first SYNC START may be an auto buffer's first use: when it finds no
 * memory (-ENOMEM, a refusal) the mapping is not touched, whose fault
 * would be SIGBUS then (Documentation/ion.rst).
 */
static int fill_check(struct soak_ctx *c, struct live_buf *b)
{
	unsigned char *p = ht_map(b->fd, b->len);
	long bad;
	int ret;

	if (!p)
		return -errno;
	ret = it_sync(b->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
	if (ret) {
		munmap(p, b->len);
		return ret;
	}
	b->seed = (unsigned int)fz_next(&c->seed) | 1;
	it_fill(p, b->len, b->seed);
	it_sync(b->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
	it_sync(b->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	bad = it_check(p, b->len, b->seed);
	it_sync(b->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	munmap(p, b->len);
	return bad >= 0;
}

/* A live buffer (one is allocated when there is none), or NULL. */
static struct live_buf *some_buf(struct soak_ctx *c, int *err)
{
	*err = nlive ? 0 : op_alloc(c);
	return *err ? NULL : &live[fz_below(&c->seed, nlive)];
}

static int op_touch(struct soak_ctx *c)
{
	struct live_buf *b;
	int ret;

	b = some_buf(c, &ret);
	return b ? fill_check(c, b) : ret;
}

/* In a new child: its parent's buffers are not its to hold. */
static void drop_inherited(void)
{
	while (nlive)
		close(live[--nlive].fd);
}

static int op_free(struct soak_ctx *c)
{
	unsigned int i;

	if (!nlive)
		return 0;
	i = fz_below(&c->seed, nlive);
	close(live[i].fd);
	live[i] = live[--nlive];
	return 0;
}

static int op_handle(struct soak_ctx *c)
{
	const struct ion_heap_data *h = &c->hs.h[fz_below(&c->seed, c->hs.cnt)];
	ion_user_handle_t h1, h2;
	size_t len = rand_len(c, contiguous(h) ? CONTIG_LEN : MAX_LEN);
	int ret, fd;

	ret = it_alloc_handle(c->ion, len, 0, 1U << h->heap_id,
			      ION_FLAG_CACHED, &h1);
	if (ret)
		return ret;
	fd = it_share(c->ion, h1);
	ret = fd < 0 ? fd : it_import(c->ion, fd, &h2);
	if (!ret)
		ret = it_free(c->ion, h2);
	if (fd >= 0)
		close(fd);
	it_free(c->ion, h1);
	return ret;
}

/* The child of op_send: map what arrives, check it, answer 0 or 1. */
static void receiver(int sock)
{
	struct send_msg m;
	unsigned char *p;
	char bad;
	int fd;

	while ((fd = it_recv_fd(sock, &m, sizeof(m), 0)) >= 0) {
		p = ht_map(fd, m.len);
		bad = 1;
		if (p) {
			it_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
			bad = it_check(p, m.len, m.seed) >= 0;
			it_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
			munmap(p, m.len);
		}
		close(fd);
		if (write(sock, &bad, 1) != 1)
			break;
	}
	_exit(0);
}

static int op_send(struct soak_ctx *c)
{
	struct send_msg m = { .len = SEND_LEN };
	struct live_buf b = { .len = SEND_LEN };
	int sv[2], ret;
	char bad;

	if (send_sock < 0) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
			return -errno;
		if (!fork()) {
			close(sv[0]);
			drop_inherited();
			receiver(sv[1]);
		}
		close(sv[1]);
		send_sock = sv[0];
	}
	b.fd = it_alloc_fd(c->ion, SEND_LEN, it_heaps_mask(&c->hs),
			   ION_FLAG_CACHED);
	if (b.fd < 0)
		return b.fd;
	ret = fill_check(c, &b);
	m.seed = b.seed;
	if (!ret)
		ret = it_send_fd(send_sock, b.fd, &m, sizeof(m), 0);
	close(b.fd);
	if (ret)
		return ret;
	return read(send_sock, &bad, 1) == 1 ? bad : -EPIPE;
}

static int op_vgem(struct soak_ctx *c)
{
	struct live_buf *b;
	uint32_t handle;
	int ret;

	if (c->vgem < 0)
		return 0;
	b = some_buf(c, &ret);
	if (!b)
		return ret;
	ret = vgem_import(c->vgem, b->fd, &handle);
	return ret ? ret : vgem_close(c->vgem, handle);
}

/*
 * edu copies the first EDU_XFER bytes of a buffer EDU_XFER further on.
 * A buffer above edu's DMA mask is refused with ERANGE (counted as a
 * refusal, as ENOMEM is: ion_test says so before anything is mapped).
 */
static int op_edu(struct soak_ctx *c)
{
	struct ion_test_import imp;
	struct ion_test_dma d = { .len = EDU_XFER, .dst_off = EDU_XFER };
	struct live_buf *b;
	unsigned char *p;
	int ret;

	if (c->tfd < 0 || !c->edu)
		return 0;
	b = some_buf(c, &ret);
	if (!b)
		return ret;
	ret = fill_check(c, b);
	if (ret)
		return ret;
	ret = ht_import(c->tfd, b->fd, ION_TEST_MODE_DMABUF, &imp);
	if (ret)
		return ret;
	if (imp.dma_err) {
		ht_release(c->tfd, imp.slot);
		return imp.dma_err == -ERANGE ? -ENOMEM : imp.dma_err;
	}
	d.src_slot = d.dst_slot = imp.slot;
	p = ht_map(b->fd, b->len);
	if (!p) {
		ret = -errno;
		goto out_release;
	}
	/*
	 * The pattern repeats every 1 KiB within a page: the destination is
	 * cleared first, so that only the copy makes it match the source.
	 */
	it_sync(b->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
	memset(p + EDU_XFER, 0, EDU_XFER);
	it_sync(b->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
	ret = it_ioctl(c->tfd, ION_TEST_IOC_DMA, &d);
	if (!ret) {
		it_sync(b->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
		ret = memcmp(p, p + EDU_XFER, EDU_XFER) != 0;
		it_sync(b->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	}
	munmap(p, b->len);
out_release:
	ht_release(c->tfd, imp.slot);
	b->seed = 0;	/* no longer the pattern of one seed */
	return ret;
}

/* A child allocating and touching in a loop, killed 1-100 ms in. */
static int op_kill(struct soak_ctx *c)
{
	unsigned int ms = 1 + fz_below(&c->seed, 100);
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		drop_inherited();
		c->seed = fz_mix(c->seed + getpid());
		for (;;) {
			op_alloc(c);
			op_touch(c);
		}
	}
	usleep(ms * 1000);
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : -ECHILD;
}

/* Parameters the admin changes, with values to pick from. */
static const struct {
	const char *name;
	const char *values[4];
} params_init[] = {
	{ "pool_max_mb", { "0", "4", "64", "256" } },
	{ "pool_displace_ms", { "0", "100", "1000", "5000" } },
	{ "parallel_helpers", { "0", "1", "3", "0" } },
	{ "memcg_charge", { "Y", "N", "Y", "Y" } },
	{ "oom_charge", { "Y", "N", "Y", "Y" } },
};

static char saved[IT_ARRAY_SIZE(params_init)][32];

static int op_admin(struct soak_ctx *c)
{
	unsigned int i = fz_below(&c->seed, IT_ARRAY_SIZE(params_init) + 1);
	char path[128], *val;

	if (i == IT_ARRAY_SIZE(params_init))
		return ht_write_str("/proc/sys/vm/drop_caches", "3", 0);
	if (!saved[i][0]) {
		snprintf(path, sizeof(path), IT_PARAMS "%s", params_init[i].name);
		if (it_read_file(path, &val) < 0)
			return 0;	/* an older kernel's ion lacks it */
		it_copy_line(saved[i], sizeof(saved[i]), val);
		free(val);
	}
	return it_param_set(params_init[i].name,
			    params_init[i].values[fz_below(&c->seed, 4)]);
}

void soak_drop_all(void)
{
	drop_inherited();
	if (send_sock >= 0)
		close(send_sock);	/* the receiver sees EOF and exits */
	send_sock = -1;
}

void soak_params_restore(void)
{
	unsigned int i;

	for (i = 0; i < IT_ARRAY_SIZE(params_init); i++)
		if (saved[i][0])
			it_param_set(params_init[i].name, saved[i]);
}

static int (*const ops[SOAK_OPS])(struct soak_ctx *c) = {
	op_alloc, op_touch, op_free, op_handle, op_send, op_vgem, op_edu,
	op_kill, op_admin,
};

void soak_run(struct soak_ctx *c, enum soak_op op)
{
	struct soak_stat *s = &c->w->op[op];
	uint64_t t0 = soak_now_us();
	int ret = ops[op](c);
	uint64_t us = soak_now_us() - t0;

	if (s->nsamples < SOAK_SAMPLES)
		s->us[s->nsamples++] = us > UINT32_MAX ? UINT32_MAX : us;
	else if (fz_below(&c->seed, s->ops + 1) < SOAK_SAMPLES)
		s->us[fz_below(&c->seed, SOAK_SAMPLES)] = us;	/* reservoir */
	s->ops++;
	if (ret == -ENOMEM || ret == -EDQUOT) {
		s->enomem++;
	} else if (ret > 0) {
		s->corrupt++;
		snprintf(c->w->last_error, sizeof(c->w->last_error),
			 "%s: data check failed", soak_op_names[op]);
	} else if (ret < 0) {
		s->errors++;
		snprintf(c->w->last_error, sizeof(c->w->last_error), "%s: %s",
			 soak_op_names[op], strerror(-ret));
	}
}
