// SPDX-License-Identifier: MIT
/*
 * Every bad input to /dev/ion with its exact errno, one case per row of
 * the table below (include/uapi/linux/ion.h documents each), and a check
 * that no error path leaked an fd, a buffer or a handle.
 */
#include <limits.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>

#include <sys/stat.h>

#include "ion_test_util.h"

enum op {
	OP_ALLOC, OP_ALLOC_LEGACY, OP_FREE, OP_MAP, OP_SHARE, OP_IMPORT,
	OP_SYNC, OP_CUSTOM, OP_QUERY, OP_VERSION, OP_RAW,
};

/* Which fd an IMPORT or SYNC row passes. */
enum fdk {
	FD_ION_BUF,	/* a dma-buf from ion: valid */
	FD_PIPE, FD_MEMFD, FD_DEVNULL, FD_ION_DEV, FD_DMA_HEAP, FD_UDMABUF,
	FD_CLOSED, FD_NEG, FD_BIG,
};

/* Which handle a FREE, MAP or SHARE row passes. */
enum hk { H_VALID, H_ZERO, H_NEVER, H_FREED, H_NEG, H_OTHER };

/* Where the argument lives. */
enum ptrk { P_OK, P_NULL, P_NONE, P_RDONLY };

struct row {
	const char *name;
	int expect;		/* errno, 0 for success */
	enum op op;
	enum ptrk ptr;
	uint64_t len, align;
	unsigned int mask;	/* MASK_ALL: every registered heap */
	unsigned int flags;
	uint32_t fd_in, unused;
	enum hk h;
	enum fdk fdk;
	uint32_t qcnt, qres[3];
	enum ptrk qheaps;
	unsigned long raw;
	int no_fds;		/* run with RLIMIT_NOFILE exhausted */
};

/* replaced at run time by the ids no registered heap has */
#define MASK_NONE	0xdead0000U
#define SYS		ION_HEAP_SYSTEM_MASK

#define IOC_RW(nr, sz)	_IOC(_IOC_READ | _IOC_WRITE, 'I', nr, sz)

static const struct row rows[] = {
	/* fd ABI ALLOC */
	{ "ALLOC: valid", 0, OP_ALLOC, .len = 4096, .mask = SYS },
	{ "ALLOC: heap_id_mask 0", ENODEV, OP_ALLOC, .len = 4096, .mask = 0 },
	{ "ALLOC: mask of unregistered ids only", ENODEV, OP_ALLOC, .len = 4096,
	  .mask = MASK_NONE },
	{ "ALLOC: len 0", EINVAL, OP_ALLOC, .len = 0, .mask = SYS },
	{ "ALLOC: len ~0 overflows page alignment", EINVAL, OP_ALLOC,
	  .len = ~0ULL, .mask = SYS },
	{ "ALLOC: len 2^64-4095 overflows page alignment", EINVAL, OP_ALLOC,
	  .len = ~0ULL - 4094, .mask = SYS },
	/* 4.12-5.10 ignored unknown flag bits, fd and unused: so does ion */
	{ "ALLOC: unknown flag bit 2 ignored", 0, OP_ALLOC, .len = 4096,
	  .mask = SYS, .flags = 1U << 2 },
	{ "ALLOC: unknown flag bit 31 ignored", 0, OP_ALLOC, .len = 4096,
	  .mask = SYS, .flags = 1U << 31 },
	{ "ALLOC: fd not 0 on input ignored", 0, OP_ALLOC, .len = 4096,
	  .mask = SYS, .fd_in = 3 },
	{ "ALLOC: unused not 0 ignored", 0, OP_ALLOC, .len = 4096,
	  .mask = SYS, .unused = 1 },
	{ "ALLOC: arg NULL", EFAULT, OP_ALLOC, .ptr = P_NULL, .len = 4096,
	  .mask = SYS },
	{ "ALLOC: arg in an inaccessible page", EFAULT, OP_ALLOC,
	  .ptr = P_NONE, .len = 4096, .mask = SYS },
	{ "ALLOC: arg read-only (result cannot be copied back)", EFAULT,
	  OP_ALLOC, .ptr = P_RDONLY, .len = 4096, .mask = SYS },
	{ "ALLOC: no free fd", EMFILE, OP_ALLOC, .len = 4096, .mask = SYS,
	  .no_fds = 1 },

	/* handle ABI ALLOC */
	{ "ALLOC_LEGACY: valid", 0, OP_ALLOC_LEGACY, .len = 4096, .mask = SYS },
	{ "ALLOC_LEGACY: heap_id_mask 0", ENODEV, OP_ALLOC_LEGACY,
	  .len = 4096, .mask = 0 },
	{ "ALLOC_LEGACY: mask of unregistered ids only", ENODEV,
	  OP_ALLOC_LEGACY, .len = 4096, .mask = MASK_NONE },
	{ "ALLOC_LEGACY: len 0", EINVAL, OP_ALLOC_LEGACY, .len = 0,
	  .mask = SYS },
	{ "ALLOC_LEGACY: len SIZE_MAX overflows page alignment", EINVAL,
	  OP_ALLOC_LEGACY, .len = SIZE_MAX, .mask = SYS },
	/* 3.10-4.11 heaps ignored an align up to PAGE_SIZE: so does ion */
	{ "ALLOC_LEGACY: align 3 ignored (below PAGE_SIZE)", 0,
	  OP_ALLOC_LEGACY, .len = 4096, .align = 3, .mask = SYS },
	/* ...and a larger one was not tested for a power of two */
	{ "ALLOC_LEGACY: align 0x3000 (no power of two) accepted", 0,
	  OP_ALLOC_LEGACY, .len = 4096, .align = 0x3000, .mask = SYS },
	{ "ALLOC_LEGACY: align above half of the address space", EINVAL,
	  OP_ALLOC_LEGACY, .len = 4096, .align = SIZE_MAX / 2 + 2,
	  .mask = SYS },
	{ "ALLOC_LEGACY: unknown flag bit 2 ignored", 0, OP_ALLOC_LEGACY,
	  .len = 4096, .mask = SYS, .flags = 1U << 2 },
	{ "ALLOC_LEGACY: arg NULL", EFAULT, OP_ALLOC_LEGACY, .ptr = P_NULL,
	  .len = 4096, .mask = SYS },
	{ "ALLOC_LEGACY: arg in an inaccessible page", EFAULT,
	  OP_ALLOC_LEGACY, .ptr = P_NONE, .len = 4096, .mask = SYS },
	{ "ALLOC_LEGACY: arg read-only", EFAULT, OP_ALLOC_LEGACY,
	  .ptr = P_RDONLY, .len = 4096, .mask = SYS },

	/* FREE */
	{ "FREE: valid handle", 0, OP_FREE, .h = H_VALID },
	{ "FREE: handle 0", EINVAL, OP_FREE, .h = H_ZERO },
	{ "FREE: handle never allocated", EINVAL, OP_FREE, .h = H_NEVER },
	{ "FREE: handle already freed", EINVAL, OP_FREE, .h = H_FREED },
	{ "FREE: negative handle", EINVAL, OP_FREE, .h = H_NEG },
	{ "FREE: another client's handle", EINVAL, OP_FREE, .h = H_OTHER },
	{ "FREE: arg NULL", EFAULT, OP_FREE, .ptr = P_NULL },

	/* MAP and SHARE */
	{ "MAP: valid handle", 0, OP_MAP, .h = H_VALID },
	{ "MAP: handle 0", EINVAL, OP_MAP, .h = H_ZERO },
	{ "MAP: handle never allocated", EINVAL, OP_MAP, .h = H_NEVER },
	{ "MAP: handle already freed", EINVAL, OP_MAP, .h = H_FREED },
	{ "MAP: another client's handle", EINVAL, OP_MAP, .h = H_OTHER },
	{ "MAP: arg NULL", EFAULT, OP_MAP, .ptr = P_NULL, .h = H_VALID },
	{ "SHARE: valid handle", 0, OP_SHARE, .h = H_VALID },
	{ "SHARE: handle 0", EINVAL, OP_SHARE, .h = H_ZERO },
	{ "SHARE: handle never allocated", EINVAL, OP_SHARE, .h = H_NEVER },
	{ "SHARE: handle already freed", EINVAL, OP_SHARE, .h = H_FREED },
	{ "SHARE: negative handle", EINVAL, OP_SHARE, .h = H_NEG },
	{ "SHARE: another client's handle", EINVAL, OP_SHARE, .h = H_OTHER },
	{ "SHARE: arg NULL", EFAULT, OP_SHARE, .ptr = P_NULL, .h = H_VALID },
	{ "SHARE: arg read-only (fd cannot be copied back)", EFAULT, OP_SHARE,
	  .ptr = P_RDONLY, .h = H_VALID },
	{ "SHARE: no free fd", EMFILE, OP_SHARE, .h = H_VALID, .no_fds = 1 },

	/* IMPORT */
	{ "IMPORT: ion dma-buf", 0, OP_IMPORT, .fdk = FD_ION_BUF },
	{ "IMPORT: pipe", EINVAL, OP_IMPORT, .fdk = FD_PIPE },
	{ "IMPORT: memfd", EINVAL, OP_IMPORT, .fdk = FD_MEMFD },
	{ "IMPORT: /dev/null", EINVAL, OP_IMPORT, .fdk = FD_DEVNULL },
	{ "IMPORT: the /dev/ion fd itself", EINVAL, OP_IMPORT,
	  .fdk = FD_ION_DEV },
	{ "IMPORT: dma-buf from /dev/dma_heap/system", EINVAL, OP_IMPORT,
	  .fdk = FD_DMA_HEAP },
	{ "IMPORT: dma-buf from udmabuf", EINVAL, OP_IMPORT,
	  .fdk = FD_UDMABUF },
	{ "IMPORT: closed fd", EBADF, OP_IMPORT, .fdk = FD_CLOSED },
	{ "IMPORT: fd -1", EBADF, OP_IMPORT, .fdk = FD_NEG },
	{ "IMPORT: fd beyond the fd table", EBADF, OP_IMPORT, .fdk = FD_BIG },
	{ "IMPORT: arg NULL", EFAULT, OP_IMPORT, .ptr = P_NULL,
	  .fdk = FD_ION_BUF },
	{ "IMPORT: arg read-only (handle cannot be copied back)", EFAULT,
	  OP_IMPORT, .ptr = P_RDONLY, .fdk = FD_ION_BUF },

	/* SYNC */
	{ "SYNC: ion dma-buf", 0, OP_SYNC, .fdk = FD_ION_BUF },
	{ "SYNC: pipe", EINVAL, OP_SYNC, .fdk = FD_PIPE },
	{ "SYNC: memfd", EINVAL, OP_SYNC, .fdk = FD_MEMFD },
	{ "SYNC: dma-buf from /dev/dma_heap/system", EINVAL, OP_SYNC,
	  .fdk = FD_DMA_HEAP },
	{ "SYNC: closed fd", EBADF, OP_SYNC, .fdk = FD_CLOSED },
	{ "SYNC: fd -1", EBADF, OP_SYNC, .fdk = FD_NEG },
	{ "SYNC: arg NULL", EFAULT, OP_SYNC, .ptr = P_NULL,
	  .fdk = FD_ION_BUF },

	/* CUSTOM */
	{ "CUSTOM: no heap implements it", ENOTTY, OP_CUSTOM, .ptr = P_OK },

	/* HEAP_QUERY */
	{ "HEAP_QUERY: count", 0, OP_QUERY, .ptr = P_OK },
	{ "HEAP_QUERY: reserved0 not 0", EINVAL, OP_QUERY,
	  .qres = { 1, 0, 0 } },
	{ "HEAP_QUERY: reserved1 not 0", EINVAL, OP_QUERY,
	  .qres = { 0, 1, 0 } },
	{ "HEAP_QUERY: reserved2 not 0", EINVAL, OP_QUERY,
	  .qres = { 0, 0, 1 } },
	{ "HEAP_QUERY: cnt 1 with heaps 0 is a count query, no EFAULT", 0, OP_QUERY,
	  .qcnt = 1, .qheaps = P_NULL },
	{ "HEAP_QUERY: heaps array inaccessible", EFAULT, OP_QUERY,
	  .qcnt = 1, .qheaps = P_NONE },
	{ "HEAP_QUERY: heaps array read-only", EFAULT, OP_QUERY, .qcnt = 1,
	  .qheaps = P_RDONLY },
	{ "HEAP_QUERY: arg NULL", EFAULT, OP_QUERY, .ptr = P_NULL },
	{ "HEAP_QUERY: arg read-only", EFAULT, OP_QUERY, .ptr = P_RDONLY },

	/* ABI_VERSION */
	{ "ABI_VERSION: valid", 0, OP_VERSION, .ptr = P_OK },
	{ "ABI_VERSION: arg NULL", EFAULT, OP_VERSION, .ptr = P_NULL },
	{ "ABI_VERSION: arg read-only", EFAULT, OP_VERSION, .ptr = P_RDONLY },

	/* unknown commands */
	{ "unknown: 'I' nr 3", ENOTTY, OP_RAW, .raw = IOC_RW(3, 8) },
	{ "unknown: 'I' nr 10", ENOTTY, OP_RAW, .raw = IOC_RW(10, 4) },
	{ "unknown: 'I' nr 0 with a 16-byte struct", ENOTTY, OP_RAW,
	  .raw = IOC_RW(0, 16) },
	{ "unknown: 'I' nr 1 without a struct", ENOTTY, OP_RAW,
	  .raw = _IO('I', 1) },
	{ "unknown: magic 'J'", ENOTTY, OP_RAW,
	  .raw = _IOC(_IOC_READ | _IOC_WRITE, 'J', 0, 24) },
};

struct ctx {
	int ion;
	struct it_heaps hs;
	void *none_page, *ro_page;
	int ion_buf;			/* a valid ion dma-buf */
	int dma_heap_buf, udma_buf;	/* foreign dma-bufs or -errno */
	ion_user_handle_t other;	/* the child's handle */
	char client[64];
};

/* What must be the same before and after an error. */
struct snap {
	int fds;
	long long buffers, bytes, handles;
};

static int snap_same(const struct snap *a, const struct snap *b)
{
	/* Every count read: a missing debugfs file must not compare equal. */
	return a->fds >= 0 && a->buffers >= 0 && a->bytes >= 0 &&
	       a->handles >= 0 &&
	       a->fds == b->fds && a->buffers == b->buffers &&
	       a->bytes == b->bytes && a->handles == b->handles;
}

static void snap_take(const struct ctx *c, struct snap *s)
{
	char path[160];
	struct it_dfs d;

	s->fds = it_count_fds();
	if (it_summary(&s->buffers, &s->bytes))
		s->buffers = s->bytes = -1;
	snprintf(path, sizeof(path), IT_DEBUGFS "/clients/%s", c->client);
	s->handles = -1;
	if (!it_dfs_load(&d, path)) {
		s->handles = it_dfs_num(&d, "handles");
		it_dfs_free(&d);
	}
}

static int foreign_dma_heap_buf(void)
{
	struct dma_heap_allocation_data a = {
		.len = 4096, .fd_flags = O_RDWR | O_CLOEXEC,
	};
	struct stat st;
	int hfd, ret;

	/* Mainline's own: on arm64 /dev/dma_heap/system is ion's alias. */
	if (stat("/sys/class/dma_heap/system", &st))
		return -ENOENT;
	hfd = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (hfd < 0)
		return -errno;
	ret = it_ioctl(hfd, DMA_HEAP_IOCTL_ALLOC, &a);
	close(hfd);
	return ret ? ret : (int)a.fd;
}

static int foreign_udmabuf(void)
{
	struct udmabuf_create u = { .offset = 0, .size = 4096 };
	int dev, mfd, ret;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	mfd = memfd_create("ion-errno", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, 4096) ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		ret = -errno;
		goto out;
	}
	u.memfd = mfd;
	ret = ioctl(dev, UDMABUF_CREATE, &u);
	if (ret < 0)
		ret = -errno;
out:
	if (mfd >= 0)
		close(mfd);
	close(dev);
	return ret;
}

/* Make an fd of the kind a row asks for; *tmp is closed afterwards. */
static int make_fd(struct ctx *c, enum fdk k, int *tmp, const char **skip)
{
	int p[2];

	*tmp = -1;
	switch (k) {
	case FD_ION_BUF:
		return c->ion_buf;
	case FD_PIPE:
		if (pipe2(p, O_CLOEXEC))
			return -1;
		close(p[1]);
		return *tmp = p[0];
	case FD_MEMFD:
		*tmp = memfd_create("ion-errno", MFD_CLOEXEC);
		if (*tmp >= 0 && ftruncate(*tmp, 4096))
			tap_diag("ftruncate: %s", strerror(errno));
		return *tmp;
	case FD_DEVNULL:
		return *tmp = open("/dev/null", O_RDWR | O_CLOEXEC);
	case FD_ION_DEV:
		return c->ion;
	case FD_DMA_HEAP:
		if (c->dma_heap_buf < 0)
			*skip = "no /dev/dma_heap/system in this kernel";
		return c->dma_heap_buf;
	case FD_UDMABUF:
		if (c->udma_buf < 0)
			*skip = "no /dev/udmabuf in this kernel";
		return c->udma_buf;
	case FD_CLOSED:
		p[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		close(p[0]);
		return p[0];
	case FD_NEG:
		return -1;
	case FD_BIG:
		return INT_MAX;
	}
	return -1;
}

static ion_user_handle_t make_handle(struct ctx *c, enum hk k, int *own)
{
	ion_user_handle_t h = 0;

	*own = 0;
	switch (k) {
	case H_VALID:
		if (!it_alloc_handle(c->ion, 4096, 0, SYS, 0, &h))
			*own = 1;
		return h;
	case H_ZERO:
		return 0;
	case H_NEVER:
		return 0x7654321;
	case H_FREED:
		if (!it_alloc_handle(c->ion, 4096, 0, SYS, 0, &h))
			it_free(c->ion, h);
		return h;
	case H_NEG:
		return -1;
	case H_OTHER:
		return c->other;
	}
	return 0;
}

static void *place(struct ctx *c, enum ptrk k, const void *arg, size_t len)
{
	switch (k) {
	case P_OK:
		return (void *)arg;
	case P_NULL:
		return NULL;
	case P_NONE:
		return c->none_page;
	case P_RDONLY:
		mprotect(c->ro_page, it_page(), PROT_READ | PROT_WRITE);
		memcpy(c->ro_page, arg, len);
		mprotect(c->ro_page, it_page(), PROT_READ);
		return c->ro_page;
	}
	return NULL;
}

static unsigned int row_mask(const struct ctx *c, unsigned int m)
{
	if (m == MASK_NONE)
		return ~it_heaps_mask(&c->hs);
	return m;
}

/* Run a row; returns 0 or -errno, and undoes what a success created. */
static int run_row(struct ctx *c, const struct row *r, const char **skip)
{
	union {
		struct ion_new_allocation_data a;
		struct ion_allocation_data_legacy l;
		struct ion_handle_data hd;
		struct ion_fd_data fd;
		struct ion_custom_data cu;
		struct ion_heap_query q;
		__u32 ver;
		char raw[64];
	} u;
	ion_user_handle_t h = 0;
	int own = 0, tmp = -1, ret;
	unsigned long cmd;
	void *arg;
	size_t len;

	memset(&u, 0, sizeof(u));
	switch (r->op) {
	case OP_ALLOC:
		cmd = ION_IOC_NEW_ALLOC;
		len = sizeof(u.a);
		u.a.len = r->len;
		u.a.heap_id_mask = row_mask(c, r->mask);
		u.a.flags = r->flags;
		u.a.fd = r->fd_in;
		u.a.unused = r->unused;
		break;
	case OP_ALLOC_LEGACY:
		cmd = ION_IOC_ALLOC_LEGACY;
		len = sizeof(u.l);
		u.l.len = r->len;
		u.l.align = r->align;
		u.l.heap_id_mask = row_mask(c, r->mask);
		u.l.flags = r->flags;
		break;
	case OP_FREE:
		cmd = ION_IOC_FREE;
		len = sizeof(u.hd);
		u.hd.handle = h = make_handle(c, r->h, &own);
		break;
	case OP_MAP:
	case OP_SHARE:
		cmd = r->op == OP_MAP ? ION_IOC_MAP : ION_IOC_SHARE;
		len = sizeof(u.fd);
		u.fd.handle = h = make_handle(c, r->h, &own);
		break;
	case OP_IMPORT:
	case OP_SYNC:
		cmd = r->op == OP_IMPORT ? ION_IOC_IMPORT : ION_IOC_SYNC;
		len = sizeof(u.fd);
		u.fd.fd = make_fd(c, r->fdk, &tmp, skip);
		if (*skip)
			return 0;
		break;
	case OP_CUSTOM:
		cmd = ION_IOC_CUSTOM;
		len = sizeof(u.cu);
		break;
	case OP_QUERY:
		cmd = ION_IOC_HEAP_QUERY;
		len = sizeof(u.q);
		u.q.cnt = r->qcnt;
		u.q.reserved0 = r->qres[0];
		u.q.reserved1 = r->qres[1];
		u.q.reserved2 = r->qres[2];
		u.q.heaps = (uintptr_t)(r->qheaps == P_NONE ? c->none_page :
					r->qheaps == P_RDONLY ? c->ro_page :
					NULL);
		if (r->qheaps == P_RDONLY)
			mprotect(c->ro_page, it_page(), PROT_READ);
		break;
	case OP_VERSION:
		cmd = ION_IOC_ABI_VERSION;
		len = sizeof(u.ver);
		break;
	default:
		cmd = r->raw;
		len = sizeof(u.raw);
		break;
	}

	arg = place(c, r->ptr, &u, len);
	if (r->no_fds) {
		struct rlimit old, lim;
		int lowest = open("/dev/null", O_RDONLY | O_CLOEXEC);

		/* no fd below the lowest free one is free */
		close(lowest);
		getrlimit(RLIMIT_NOFILE, &old);
		lim = old;
		lim.rlim_cur = lowest;
		setrlimit(RLIMIT_NOFILE, &lim);
		ret = it_ioctl(c->ion, cmd, arg);
		setrlimit(RLIMIT_NOFILE, &old);
	} else {
		ret = it_ioctl(c->ion, cmd, arg);
	}

	/* undo a success */
	if (!ret && arg == (void *)&u) {
		if (r->op == OP_ALLOC)
			close(u.a.fd);
		else if (r->op == OP_ALLOC_LEGACY)
			it_free(c->ion, u.l.handle);
		else if (r->op == OP_MAP || r->op == OP_SHARE)
			close(u.fd.fd);
		else if (r->op == OP_IMPORT)
			it_free(c->ion, u.fd.handle);
		else if (r->op == OP_FREE)
			own = 0;
	}
	if (own)
		it_free(c->ion, h);
	if (tmp >= 0)
		close(tmp);
	if (r->qheaps == P_RDONLY)
		mprotect(c->ro_page, it_page(), PROT_READ | PROT_WRITE);
	return ret;
}

/*
 * A second client (a child process) holding handles; its last handle is
 * "another client's handle" for the rows.  The child checks that handle
 * still works after the rows ran, and exits 0 if so.
 */
static pid_t start_other(struct ctx *c, int *go)
{
	int up[2], down[2];
	pid_t pid;

	if (pipe(up) || pipe(down))
		return -1;
	pid = fork();
	if (pid == 0) {
		ion_user_handle_t h = 0;
		int ion = it_open(), i, fd;
		char b;

		for (i = 0; i < 4 && ion >= 0; i++)
			it_alloc_handle(ion, 4096, 0, SYS, 0, &h);
		if (write(up[1], &h, sizeof(h)) != sizeof(h) ||
		    read(down[0], &b, 1) != 1)
			_exit(2);
		fd = it_share(ion, h);
		_exit(fd >= 0 ? 0 : 1);
	}
	close(up[1]);
	close(down[0]);
	if (read(up[0], &c->other, sizeof(c->other)) != sizeof(c->other))
		c->other = 0;
	close(up[0]);
	*go = down[1];
	tap_diag("other client's handle: %d", c->other);
	return pid;
}

int main(void)
{
	struct ctx c;
	struct snap before, after, b0, a0;
	char leaks[1024] = "";
	unsigned int i;
	pid_t other;
	int go = -1, status;

	memset(&c, 0, sizeof(c));
	c.ion = it_setup(&c.hs);
	it_client_name(c.client, sizeof(c.client));
	c.none_page = mmap(NULL, it_page(), PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c.ro_page = mmap(NULL, it_page(), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c.ion_buf = it_alloc_fd(c.ion, 4096, SYS, 0);
	c.dma_heap_buf = foreign_dma_heap_buf();
	c.udma_buf = foreign_udmabuf();
	if (c.dma_heap_buf < 0)
		tap_diag("/dev/dma_heap/system: %s", strerror(-c.dma_heap_buf));
	if (c.udma_buf < 0)
		tap_diag("udmabuf: %s", strerror(-c.udma_buf));
	if (c.ion_buf < 0) {
		tap_ok(0, "setup: ALLOC of a system buffer");
		return 1;
	}
	other = start_other(&c, &go);

	snap_take(&c, &b0);
	for (i = 0; i < IT_ARRAY_SIZE(rows); i++) {
		const struct row *r = &rows[i];
		const char *skip = NULL;
		int ret;

		snap_take(&c, &before);
		ret = run_row(&c, r, &skip);
		if (skip) {
			tap_skip(r->name, skip);
			continue;
		}
		it_expect(ret, r->expect, "%s -> %s", r->name,
			  r->expect ? strerror(r->expect) : "success");
		snap_take(&c, &after);
		if (!snap_same(&before, &after)) {
			tap_diag("'%s' leaked: fds %d->%d buffers %lld->%lld bytes %lld->%lld handles %lld->%lld",
				 r->name, before.fds, after.fds,
				 before.buffers, after.buffers, before.bytes,
				 after.bytes, before.handles, after.handles);
			if (strlen(leaks) + strlen(r->name) + 3 < sizeof(leaks)) {
				strcat(leaks, r->name);
				strcat(leaks, "; ");
			}
		}
	}
	snap_take(&c, &a0);
	tap_ok(!leaks[0] && snap_same(&a0, &b0),
	       "no row leaked an fd, a buffer or a handle");
	if (leaks[0])
		tap_diag("leaking rows: %s", leaks);

	if (write(go, "x", 1) != 1 || waitpid(other, &status, 0) != other)
		status = -1;
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "the other client's handle survived our FREE/MAP/SHARE attempts");
	close(go);

	close(c.ion_buf);
	if (c.dma_heap_buf >= 0)
		close(c.dma_heap_buf);
	if (c.udma_buf >= 0)
		close(c.udma_buf);
	close(c.ion);
	return tap_exit();
}
