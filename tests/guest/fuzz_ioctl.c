// SPDX-License-Identifier: MIT
/*
 * ioctl fuzzer for /dev/ion and /dev/dma_heap/ion-*.
 *
 * Random sequences, from several threads in this process and in forked
 * worker processes, of every ion ioctl of both ABIs (ALLOC, ALLOC_LEGACY,
 * FREE, MAP, SHARE, IMPORT, CUSTOM, SYNC, HEAP_QUERY, ABI_VERSION), of
 * DMA_HEAP_IOCTL_ALLOC on the ion dma-heap nodes when they exist, and of
 * random command numbers in the 'I', 'H' (and, on dma-bufs, 'b') spaces
 * with random size and direction bits; arguments are valid, boundary or
 * random, and argument pointers are now and then NULL, unmapped, a kernel
 * address, read-only, or straddle the end of a page into an inaccessible
 * or read-only one.  Interleaved: close, dup, open, mmap/munmap (random
 * offsets and lengths, also past the buffer), touching the mappings,
 * DMA_BUF_IOCTL_SYNC with random flags, DMA_BUF_SET_NAME, and short-lived
 * children that do some of the same and exit with everything still open
 * (some with RLIMIT_NOFILE lowered so that fd-returning calls hit EMFILE).
 *
 * Every call's result is checked against the errnos documented for it
 * (include/uapi/linux/ion.h for ion's, the dma-buf and dma-heap core for
 * theirs), with exact expectations where the arguments decide the answer
 * (a bad pointer is EFAULT, len 0 is EINVAL, an ion dma-buf imports, a
 * mapping past the end is refused...).  Each distinct violation is a
 * failed case naming the seed, the thread and the call.  Afterwards
 * every fd is closed and debugfs must be back to zero (summary, every
 * heap, no client of ours), and a last allocation must work.
 *
 * Reproducible: every thread's sequence follows from --seed and its
 * place (process P, thread T); a violation is reported with both and
 * with the thread's call count C, and "--seed S --only P.T --iterations C"
 * runs just that sequence, in one thread, up to that call (--verbose logs
 * each call first).  --iterations is the number of calls over all
 * threads (default 200000, or $ION_FUZZ_ITERATIONS when set: the debug
 * kernel run, scripts/check-debug.sh, sets it higher; --iterations wins).
 *
 * Usage: fuzz_ioctl [--seed N] [--iterations N] [--procs N] [--threads N]
 *		     [--only P.T] [--verbose]
 */
#include <execinfo.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <ucontext.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>

#include "fz_common.h"

#define DEF_ITERATIONS	200000	/* total, over all threads */
#define DEF_PROCS	2	/* worker processes besides this one */
#define DEF_THREADS	2	/* threads per process */
#define MAX_FDS		40
#define MAX_MAPS	16
#define MAX_HANDLES	32
#define MAX_RECS	48
#define BYTES_BUDGET	(12 << 20)	/* buffers a thread keeps */
#define FORK_ONE_IN	600
#define CHILD_OPS	150
#define PG		4096UL

typedef unsigned __int128 eset_t;	/* bit 0: success, bit e: errno e */
#define E(e)		((eset_t)1 << (e))
#define OK		E(0)

/* ------------------------------------------------------------------ */
/* Shared between all processes                                        */

struct rec {
	char key[64];
	char desc[320];
	int err;
	long count;
};

struct shared {
	long long op_ns[32];	/* time spent in each kind of op */
	long calls;
	long violations;
	long children;
	long child_crashes;
	long setup_errors;
	int lock;
	int nrec;
	int dropped;
	struct rec recs[MAX_RECS];
};

static struct shared *sh;

/* ------------------------------------------------------------------ */
/* Configuration and what the setup learned                            */

static uint64_t seed;
static long iterations = DEF_ITERATIONS;
static int nprocs = DEF_PROCS, nthreads = DEF_THREADS;
static int only_proc = -1, only_thread = -1;
static int verbose;
static struct it_heaps hs;
static unsigned int heap_mask;
static unsigned long long totalram;
static struct fz_nodes nodes;
static int have_system_dma_heap;

/* ------------------------------------------------------------------ */
/* Per-thread state                                                    */

enum kind { K_ION, K_BUF, K_NODE, K_FOREIGN, K_OTHER };

struct ffd {
	int fd;
	enum kind kind;
	size_t size;		/* K_BUF, K_FOREIGN */
};

struct fmap {
	unsigned char *addr;
	size_t len;
	int prot;
};

enum mode {
	M_OK, M_NULL, M_LOW, M_KERNEL, M_NONE, M_STRADDLE_NONE, M_RO,
	M_STRADDLE_RO, M_COUNT
};

static const char *const mode_names[] = {
	"ok", "NULL", "unmapped-low", "kernel-addr", "PROT_NONE",
	"straddles-into-PROT_NONE", "read-only", "straddles-into-read-only",
};

struct thr {
	int proc, idx;
	int in_child;
	uint64_t rng;
	long iter, calls;
	pthread_t tid;
	unsigned char *scratch;	/* A (rw), B (rw or ro), C (none) */
	struct ion_heap_data *qbuf;
	struct ffd fds[MAX_FDS];
	int nfds;
	struct fmap maps[MAX_MAPS];
	int nmaps;
	int handles[MAX_HANDLES];
	int nhandles;
	size_t bytes;
};

/* One call, for the record. */
struct call {
	const char *name;
	unsigned long cmd;
	int fd_kind;
	enum mode mode;
	unsigned long long a[6];
	int na;
};

static uint64_t rnd(struct thr *t)
{
	return fz_next(&t->rng);
}

static uint64_t below(struct thr *t, uint64_t n)
{
	return fz_below(&t->rng, n);
}

static int one_in(struct thr *t, uint64_t n)
{
	return fz_one_in(&t->rng, n);
}

/* ------------------------------------------------------------------ */
/* Recording                                                           */

static void sh_lock(void)
{
	while (__atomic_exchange_n(&sh->lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void sh_unlock(void)
{
	__atomic_store_n(&sh->lock, 0, __ATOMIC_RELEASE);
}

static const char *const kind_names[] = {
	"/dev/ion fd", "ion dma-buf fd", "dma-heap node fd",
	"foreign dma-buf fd", "pipe fd",
};

static void describe(char *buf, size_t size, const struct thr *t,
		     const struct call *c, int err, const char *why)
{
	int n, i;

	n = snprintf(buf, size,
		     "seed=%llu only=%d.%d op=%ld calls=%ld%s: %s cmd=%#lx on %s, arg %s,",
		     (unsigned long long)seed, t->proc, t->idx, t->iter,
		     t->calls,
		     t->in_child ? " (in a forked child)" : "", c->name,
		     c->cmd, c->fd_kind >= 0 ? kind_names[c->fd_kind] : "-",
		     mode_names[c->mode]);
	for (i = 0; i < c->na && n > 0 && (size_t)n < size; i++)
		n += snprintf(buf + n, size - n, " %#llx", c->a[i]);
	if (n > 0 && (size_t)n < size)
		snprintf(buf + n, size - n, " -> %s%s%s",
			 err ? strerror(err) : "success", why ? ": " : "",
			 why ? why : "");
}

static void violation(struct thr *t, const struct call *c, int err,
		      const char *why)
{
	char key[64];
	int i;

	__atomic_add_fetch(&sh->violations, 1, __ATOMIC_RELAXED);
	snprintf(key, sizeof(key), "%s/%d/%s", c->name, err, why ? why : "");
	sh_lock();
	for (i = 0; i < sh->nrec; i++)
		if (!strcmp(sh->recs[i].key, key))
			break;
	if (i < sh->nrec) {
		sh->recs[i].count++;
	} else if (sh->nrec < MAX_RECS) {
		struct rec *r = &sh->recs[sh->nrec++];

		snprintf(r->key, sizeof(r->key), "%s", key);
		describe(r->desc, sizeof(r->desc), t, c, err, why);
		r->err = err;
		r->count = 1;
	} else {
		sh->dropped++;
	}
	sh_unlock();
}

/* Check @err (0 for success) against @allowed. */
static int check(struct thr *t, const struct call *c, int err, eset_t allowed,
		 const char *why)
{
	if (err >= 0 && err < 128 && (allowed & E(err)))
		return 1;
	violation(t, c, err, why ? why : "errno not in the documented set");
	return 0;
}

static void log_call(const struct thr *t, const struct call *c)
{
	char buf[400];
	int n;

	if (!verbose)
		return;
	describe(buf, sizeof(buf), t, c, 0, "(about to run)");
	n = strlen(buf);
	buf[n++] = '\n';
	if (write(2, buf, n) != n)
		return;
}

/* ------------------------------------------------------------------ */
/* System calls, counted                                               */

static int do_ioctl(struct thr *t, int fd, unsigned long cmd, void *arg)
{
	int ret;

	t->calls++;
	__atomic_add_fetch(&sh->calls, 1, __ATOMIC_RELAXED);
	ret = ioctl(fd, cmd, arg);
	return ret < 0 ? errno : 0;
}

static void count_call(struct thr *t)
{
	t->calls++;
	__atomic_add_fetch(&sh->calls, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* Argument placement                                                  */

static unsigned char *pa(struct thr *t)
{
	return t->scratch;
}

static unsigned char *pb(struct thr *t)
{
	return t->scratch + PG;
}

static unsigned char *pc(struct thr *t)
{
	return t->scratch + 2 * PG;
}

static void b_prot(struct thr *t, int prot)
{
	mprotect(pb(t), PG, prot);
}

static enum mode pick_mode(struct thr *t)
{
	if (below(t, 100) < 88)
		return M_OK;
	return 1 + below(t, M_COUNT - 1);
}

/*
 * Where the argument goes: copy @size bytes of @data there and return the
 * pointer to pass.  B is left read-write except in the read-only modes.
 */
static void *place(struct thr *t, const void *data, size_t size,
		   enum mode *mode)
{
	unsigned char *p;
	size_t k;

	if (size < 2 && (*mode == M_STRADDLE_NONE || *mode == M_STRADDLE_RO))
		*mode = M_NONE;
	if (size > PG / 2 && *mode != M_OK)
		*mode = M_NULL;
	switch (*mode) {
	case M_OK:
		k = below(t, PG - size + 1);
		if (!one_in(t, 4))
			k &= ~7UL;
		p = pa(t) + k;
		memcpy(p, data, size);
		return p;
	case M_NULL:
		return NULL;
	case M_LOW:
		return (void *)(uintptr_t)(0x1000 + below(t, 0x1000));
	case M_KERNEL:
		return (void *)(uintptr_t)(0xffff888000000000ULL +
					   below(t, 1 << 20) * 8);
	case M_NONE:
		return pc(t) + below(t, PG - size);
	case M_STRADDLE_NONE:
		k = 1 + below(t, size - 1);
		b_prot(t, PROT_READ | PROT_WRITE);
		memcpy(pc(t) - k, data, k);
		return pc(t) - k;
	case M_RO:
		k = below(t, PG - size + 1) & ~7UL;
		b_prot(t, PROT_READ | PROT_WRITE);
		memcpy(pb(t) + k, data, size);
		b_prot(t, PROT_READ);
		return pb(t) + k;
	case M_STRADDLE_RO:
		k = 1 + below(t, size - 1);
		b_prot(t, PROT_READ | PROT_WRITE);
		memcpy(pb(t) - k, data, size);
		b_prot(t, PROT_READ);
		return pb(t) - k;
	default:
		return NULL;
	}
}

static int mode_readable(enum mode m)
{
	return m == M_OK || m == M_RO || m == M_STRADDLE_RO;
}

/*
 * What a command that copies its argument in (and, if @out, back out)
 * may answer given the pointer mode, when its handler would answer
 * @handler.
 */
static eset_t by_mode(enum mode m, int out, eset_t handler)
{
	if (!mode_readable(m))
		return E(EFAULT);
	if (m != M_OK && out)
		return (handler & ~OK) | E(EFAULT);
	return handler;
}

/* ------------------------------------------------------------------ */
/* Pools                                                               */

static void fd_add(struct thr *t, int fd, enum kind kind, size_t size)
{
	if (fd < 0)
		return;
	if (t->nfds == MAX_FDS ||
	    (kind == K_BUF && t->bytes + size > BYTES_BUDGET)) {
		count_call(t);
		close(fd);
		return;
	}
	t->fds[t->nfds].fd = fd;
	t->fds[t->nfds].kind = kind;
	t->fds[t->nfds].size = size;
	if (kind == K_BUF)
		t->bytes += size;
	t->nfds++;
}

static void fd_remove(struct thr *t, int i)
{
	if (t->fds[i].kind == K_BUF)
		t->bytes -= t->fds[i].size;
	t->fds[i] = t->fds[--t->nfds];
}

/* A random fd of @kind from the pool, or -1. */
static int fd_pick(struct thr *t, enum kind kind)
{
	int idx[MAX_FDS], n = 0, i;

	for (i = 0; i < t->nfds; i++)
		if (t->fds[i].kind == kind)
			idx[n++] = i;
	return n ? idx[below(t, n)] : -1;
}

/* Make room in a full pool: close a dma-buf fd. */
static void fd_make_room(struct thr *t)
{
	int i;

	if (t->nfds < MAX_FDS)
		return;
	i = fd_pick(t, K_BUF);
	if (i < 0)
		i = below(t, t->nfds);
	count_call(t);
	close(t->fds[i].fd);
	fd_remove(t, i);
}

/*
 * A device open that failed.  EMFILE/ENFILE are the answer the kernel owes
 * a process whose fd limit the fuzzer lowered itself; anything else is a
 * setup error, reported with its errno.
 */
static void open_failed(struct thr *t)
{
	int e = errno;

	if (e == EMFILE || e == ENFILE)
		return;
	if (__atomic_add_fetch(&sh->setup_errors, 1, __ATOMIC_RELAXED) <= 5)
		tap_diag("pid %d: opening a device failed: %s", getpid(),
			 strerror(e));
}

static int ion_fd(struct thr *t)
{
	int i = fd_pick(t, K_ION), fd;

	if (i >= 0)
		return t->fds[i].fd;
	fd_make_room(t);
	count_call(t);
	fd = open(IT_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		open_failed(t);
		return -1;
	}
	fd_add(t, fd, K_ION, 0);
	return fd;
}

static size_t buf_size(int fd)
{
	off_t end = lseek(fd, 0, SEEK_END);

	return end < 0 ? 0 : (size_t)end;
}

static void handle_add(struct thr *t, int h)
{
	if (t->nhandles < MAX_HANDLES)
		t->handles[t->nhandles++] = h;
}

/* A handle id: mostly one we hold (removed if @take), else a guess. */
static int pick_handle(struct thr *t, int take)
{
	static const int odd[] = { 0, -1, INT_MIN, INT_MAX, 1, 2, 3, 1000 };
	int i, h;

	if (t->nhandles && below(t, 10) < 7) {
		i = below(t, t->nhandles);
		h = t->handles[i];
		if (take)
			t->handles[i] = t->handles[--t->nhandles];
		return h;
	}
	if (one_in(t, 2))
		return odd[below(t, IT_ARRAY_SIZE(odd))];
	return one_in(t, 2) ? (int)below(t, 200) : (int)rnd(t);
}

/* ------------------------------------------------------------------ */
/* Argument values                                                     */

static unsigned long long pick_len(struct thr *t, int *sane)
{
	static const unsigned long long odd[] = {
		0, 1, PG - 1, PG, PG + 1, 3 * PG - 7, 1ULL << 32,
		(1ULL << 32) + 1, 1ULL << 40, 1ULL << 63,
		~0ULL, ~0ULL - PG + 1, ~0ULL - PG + 2, 0xfffffffffffff000ULL,
		0x7ffffffffffff000ULL, 0xffffffff, 0x80000000,
	};
	unsigned int r = below(t, 100);

	*sane = 1;
	if (r < 60)
		return (1 + below(t, 16)) * PG - (one_in(t, 4) ? below(t, PG) : 0);
	if (r < 70)
		return 1 + below(t, PG);
	if (r < 72 && one_in(t, 8))
		return ((1 + below(t, 4)) << 20) + below(t, 2);
	if (r < 72)
		return (1 + below(t, 64)) * PG;
	if (r < 76)
		return totalram + PG * (1 + below(t, 1024));
	*sane = 0;
	return odd[below(t, IT_ARRAY_SIZE(odd))];
}

static unsigned int pick_mask(struct thr *t)
{
	unsigned int r = below(t, 12);

	switch (r) {
	case 0:
		return 0;
	case 1:
		return heap_mask;
	case 2:
		return ~0U;
	case 3:
		return (unsigned int)rnd(t);
	case 4:
		return ~heap_mask & (unsigned int)rnd(t);
	case 5:
		return heap_mask & (unsigned int)rnd(t);
	default:
		return hs.cnt ? 1U << hs.h[below(t, hs.cnt)].heap_id : 1;
	}
}

static unsigned int pick_flags(struct thr *t)
{
	static const unsigned int f[] = {
		0, 0, ION_FLAG_CACHED, ION_FLAG_CACHED,
		ION_FLAG_CACHED | ION_FLAG_CACHED_NEEDS_SYNC,
		ION_FLAG_CACHED_NEEDS_SYNC, 4, 1U << 31,
	};

	if (one_in(t, 16))
		return (unsigned int)rnd(t);
	return f[below(t, IT_ARRAY_SIZE(f))];
}

static int len_einval(unsigned long long len)
{
	return !len || len > 0xfffffffffffff000ULL;
}

static unsigned long long page_align(unsigned long long len)
{
	return (len + PG - 1) & ~(PG - 1);
}

/* After a successful allocation: the fd must be a buffer of the size. */
static void new_buf(struct thr *t, const struct call *c, int fd,
		    unsigned long long len)
{
	size_t size = buf_size(fd);

	if (size != page_align(len))
		violation(t, c, 0, "the new buffer's size is not len page aligned");
	fd_add(t, fd, K_BUF, size);
}

/* ------------------------------------------------------------------ */
/* ion ioctls                                                          */

static void op_alloc(struct thr *t)
{
	struct ion_allocation_data a = { 0 }, *p;
	struct call c = {
		.name = "ION_IOC_ALLOC", .cmd = ION_IOC_ALLOC,
		.fd_kind = K_ION,
	};
	int fd = ion_fd(t), sane, err, einval, enodev;
	eset_t ok;

	if (fd < 0)
		return;
	a.len = pick_len(t, &sane);
	a.heap_id_mask = pick_mask(t);
	a.flags = pick_flags(t);
	if (one_in(t, 20))
		a.fd = one_in(t, 2) ? 1 : (unsigned int)rnd(t);
	if (one_in(t, 20))
		a.unused = one_in(t, 2) ? 1 : (unsigned int)rnd(t);
	c.mode = pick_mode(t);
	c.a[0] = a.len;
	c.a[1] = a.heap_id_mask;
	c.a[2] = a.flags;
	c.a[3] = a.fd;
	c.a[4] = a.unused;
	c.na = 5;
	einval = a.fd || a.unused || len_einval(a.len) ||
		 (a.flags & ~ION_FLAGS_VALID);
	enodev = !(a.heap_id_mask & heap_mask);
	if (einval)
		ok = E(EINVAL) | (enodev ? E(ENODEV) : 0);
	else if (enodev)
		ok = E(ENODEV);
	else if (a.len > totalram)
		ok = E(ENOMEM);
	else
		ok = OK | E(ENOMEM) | E(EMFILE);
	ok = by_mode(c.mode, 1, ok);
	p = place(t, &a, sizeof(a), &c.mode);
	log_call(t, &c);
	err = do_ioctl(t, fd, ION_IOC_ALLOC, p);
	check(t, &c, err, ok, NULL);
	if (!err && c.mode == M_OK)
		new_buf(t, &c, p->fd, a.len);
}

static int align_einval(unsigned long long align)
{
	return align && (align & (align - 1));
}

static void op_alloc_legacy(struct thr *t)
{
	struct ion_allocation_data_legacy a = { 0 }, *p;
	struct call c = {
		.name = "ION_IOC_ALLOC_LEGACY", .cmd = ION_IOC_ALLOC_LEGACY,
		.fd_kind = K_ION,
	};
	static const unsigned long long aligns[] = {
		0, 0, 0, PG, 1 << 20, 1, 2, 3, PG + 1, 1ULL << 63, ~0ULL,
		64 << 20, 1ULL << 40,
	};
	int fd = ion_fd(t), sane, err, einval, enodev;
	eset_t ok;

	if (fd < 0)
		return;
	a.len = pick_len(t, &sane);
	a.align = aligns[below(t, IT_ARRAY_SIZE(aligns))];
	if (one_in(t, 10))
		a.align = 1ULL << below(t, 64);
	a.heap_id_mask = pick_mask(t);
	a.flags = pick_flags(t);
	a.handle = one_in(t, 4) ? (int)rnd(t) : 0;
	c.mode = pick_mode(t);
	c.a[0] = a.len;
	c.a[1] = a.align;
	c.a[2] = a.heap_id_mask;
	c.a[3] = a.flags;
	c.na = 4;
	einval = len_einval(a.len) || align_einval(a.align) ||
		 (a.flags & ~ION_FLAGS_VALID);
	enodev = !(a.heap_id_mask & heap_mask);
	if (einval)
		ok = E(EINVAL) | (enodev ? E(ENODEV) : 0);
	else if (enodev)
		ok = E(ENODEV);
	else if (a.len > totalram)
		ok = E(ENOMEM);
	else	/* a large alignment may be beyond every heap in the mask */
		ok = OK | E(ENOMEM) | (a.align > PG ? E(EINVAL) : 0);
	ok = by_mode(c.mode, 1, ok);
	p = place(t, &a, sizeof(a), &c.mode);
	log_call(t, &c);
	err = do_ioctl(t, fd, ION_IOC_ALLOC_LEGACY, p);
	check(t, &c, err, ok, NULL);
	if (!err && c.mode == M_OK) {
		if (p->handle <= 0)
			violation(t, &c, 0, "handle is not a positive id");
		handle_add(t, p->handle);
	}
}

static void op_free(struct thr *t)
{
	struct ion_handle_data d, *p;
	struct call c = {
		.name = "ION_IOC_FREE", .cmd = ION_IOC_FREE,
		.fd_kind = K_ION,
	};
	int fd = ion_fd(t), err;

	if (fd < 0)
		return;
	d.handle = pick_handle(t, 1);
	c.mode = pick_mode(t);
	c.a[0] = (unsigned int)d.handle;
	c.na = 1;
	p = place(t, &d, sizeof(d), &c.mode);
	log_call(t, &c);
	err = do_ioctl(t, fd, ION_IOC_FREE, p);
	/* (a read-only argument: the handle may be gone and EFAULT said) */
	check(t, &c, err, by_mode(c.mode, 1, OK | E(EINVAL)), NULL);
	if (d.handle <= 0 && !err)
		violation(t, &c, 0, "FREE of a handle id <= 0 succeeded");
}

static void op_share(struct thr *t)
{
	int map = one_in(t, 2), fd = ion_fd(t), err;
	struct call c = {
		.name = map ? "ION_IOC_MAP" : "ION_IOC_SHARE",
		.cmd = map ? ION_IOC_MAP : ION_IOC_SHARE,
		.fd_kind = K_ION,
	};
	struct ion_fd_data d, *p;

	if (fd < 0)
		return;
	d.handle = pick_handle(t, 0);
	d.fd = one_in(t, 4) ? (int)rnd(t) : -1;
	c.mode = pick_mode(t);
	c.a[0] = (unsigned int)d.handle;
	c.na = 1;
	p = place(t, &d, sizeof(d), &c.mode);
	log_call(t, &c);
	err = do_ioctl(t, fd, c.cmd, p);
	check(t, &c, err, by_mode(c.mode, 1, OK | E(EINVAL) | E(EMFILE)),
	      NULL);
	if (!err && d.handle <= 0)
		violation(t, &c, 0, "a handle id <= 0 was shared");
	if (!err && c.mode == M_OK)
		fd_add(t, p->fd, K_BUF, buf_size(p->fd));
}

/* An fd argument: one of ours of some kind, or a bad number. */
static int pick_fd_arg(struct thr *t, int *kind)
{
	static const enum kind kinds[] = {
		K_BUF, K_BUF, K_BUF, K_ION, K_NODE, K_FOREIGN, K_OTHER,
	};
	int i;

	if (!one_in(t, 5)) {
		i = fd_pick(t, kinds[below(t, IT_ARRAY_SIZE(kinds))]);
		if (i >= 0) {
			*kind = t->fds[i].kind;
			return t->fds[i].fd;
		}
	}
	*kind = -1;	/* not open */
	switch (below(t, 4)) {
	case 0:
		return -1;
	case 1:
		return INT_MIN;
	case 2:
		return 900 + below(t, 100);	/* never open */
	default:
		return 1 << 20;
	}
}

static void op_import(struct thr *t)
{
	struct call c = {
		.name = "ION_IOC_IMPORT", .cmd = ION_IOC_IMPORT,
		.fd_kind = K_ION,
	};
	struct ion_fd_data d, *p;
	int fd = ion_fd(t), kind, err;
	eset_t ok;

	if (fd < 0)
		return;
	d.fd = pick_fd_arg(t, &kind);
	d.handle = one_in(t, 4) ? (int)rnd(t) : 0;
	c.mode = pick_mode(t);
	c.a[0] = (unsigned int)d.fd;
	c.a[1] = kind;
	c.na = 2;
	ok = kind == K_BUF ? OK : kind < 0 ? E(EBADF) : E(EINVAL);
	p = place(t, &d, sizeof(d), &c.mode);
	log_call(t, &c);
	err = do_ioctl(t, fd, ION_IOC_IMPORT, p);
	check(t, &c, err, by_mode(c.mode, 1, ok), NULL);
	if (!err && c.mode == M_OK) {
		if (p->handle <= 0)
			violation(t, &c, 0, "handle is not a positive id");
		handle_add(t, p->handle);
	}
}

static void op_custom(struct thr *t)
{
	struct call c = {
		.name = "ION_IOC_CUSTOM", .cmd = ION_IOC_CUSTOM,
		.fd_kind = K_ION,
	};
	struct ion_custom_data d, *p;
	int fd = ion_fd(t), err;

	if (fd < 0)
		return;
	d.cmd = one_in(t, 2) ? below(t, 16) : (unsigned int)rnd(t);
	d.arg = one_in(t, 2) ? 0 : (unsigned long)rnd(t);
	c.mode = pick_mode(t);
	c.a[0] = d.cmd;
	c.a[1] = d.arg;
	c.na = 2;
	p = place(t, &d, sizeof(d), &c.mode);
	log_call(t, &c);
	err = do_ioctl(t, fd, ION_IOC_CUSTOM, p);
	/* no heap implements custom commands */
	check(t, &c, err, mode_readable(c.mode) ? E(ENOTTY) : E(EFAULT), NULL);
}

static void op_sync_ion(struct thr *t)
{
	struct call c = {
		.name = "ION_IOC_SYNC", .cmd = ION_IOC_SYNC,
		.fd_kind = K_ION,
	};
	struct ion_fd_data d, *p;
	int fd = ion_fd(t), kind, err;
	eset_t ok;

	if (fd < 0)
		return;
	d.fd = pick_fd_arg(t, &kind);
	d.handle = (int)rnd(t);
	c.mode = pick_mode(t);
	c.a[0] = (unsigned int)d.fd;
	c.a[1] = kind;
	c.na = 2;
	ok = kind == K_BUF ? OK : kind < 0 ? E(EBADF) : E(EINVAL);
	p = place(t, &d, sizeof(d), &c.mode);
	log_call(t, &c);
	err = do_ioctl(t, fd, ION_IOC_SYNC, p);
	check(t, &c, err, by_mode(c.mode, 1, ok), NULL);
}

static void op_heap_query(struct thr *t)
{
	struct call c = {
		.name = "ION_IOC_HEAP_QUERY", .cmd = ION_IOC_HEAP_QUERY,
		.fd_kind = K_ION,
	};
	static const unsigned int cnts[] = { 0, 1, 2, 3, 4, 5, 32, 0x7fffffff,
					     0xffffffff };
	struct ion_heap_query q = { 0 }, *p;
	int fd = ion_fd(t), err, amode, reserved;
	unsigned int want, i;
	eset_t ok;

	if (fd < 0)
		return;
	q.cnt = cnts[below(t, IT_ARRAY_SIZE(cnts))];
	if (q.cnt > 32 && q.cnt < 0x7fffffff)
		q.cnt = 32;
	amode = below(t, 8);	/* 0..4: our array, 5: NULL, 6: none, 7: ro */
	if (amode <= 4)
		q.heaps = (uintptr_t)t->qbuf;
	else if (amode == 6)
		q.heaps = (uintptr_t)pc(t);
	else if (amode == 7)
		q.heaps = (uintptr_t)pb(t);
	reserved = one_in(t, 10);
	if (reserved) {
		switch (below(t, 3)) {
		case 0:
			q.reserved0 = 1 + below(t, 0xffff);
			break;
		case 1:
			q.reserved1 = 1 << below(t, 32);
			break;
		default:
			q.reserved2 = (unsigned int)rnd(t) | 1;
			break;
		}
	}
	c.mode = pick_mode(t);
	c.a[0] = q.cnt;
	c.a[1] = amode;
	c.a[2] = q.reserved0;
	c.a[3] = q.reserved1;
	c.a[4] = q.reserved2;
	c.na = 5;
	if (reserved)
		ok = E(EINVAL);
	else if (!q.heaps || !q.cnt || amode <= 4)
		ok = OK;
	else
		ok = E(EFAULT);
	if (amode == 7)
		b_prot(t, PROT_READ);
	memset(t->qbuf, 0xee, 32 * sizeof(*t->qbuf));
	p = place(t, &q, sizeof(q), &c.mode);
	log_call(t, &c);
	err = do_ioctl(t, fd, ION_IOC_HEAP_QUERY, p);
	b_prot(t, PROT_READ | PROT_WRITE);
	if (!check(t, &c, err, by_mode(c.mode, 1, ok), NULL) || err ||
	    c.mode != M_OK)
		return;
	want = !q.heaps ? hs.cnt : q.cnt < hs.cnt ? q.cnt : hs.cnt;
	if (p->cnt != want)
		violation(t, &c, 0, "cnt out is not min(cnt, heaps)");
	for (i = 0; q.heaps && i < want && i < hs.cnt; i++) {
		if (memcmp(&t->qbuf[i], &hs.h[i], sizeof(hs.h[i]))) {
			violation(t, &c, 0, "an entry differs from the first HEAP_QUERY");
			break;
		}
	}
	if (q.heaps && want < 32 &&
	    ((unsigned char *)&t->qbuf[want])[0] != 0xee)
		violation(t, &c, 0, "wrote past the entries it reported");
}

static void op_abi_version(struct thr *t)
{
	struct call c = {
		.name = "ION_IOC_ABI_VERSION", .cmd = ION_IOC_ABI_VERSION,
		.fd_kind = K_ION,
	};
	__u32 v = 0, *p;
	int fd = ion_fd(t), err;

	if (fd < 0)
		return;
	c.mode = pick_mode(t);
	p = place(t, &v, sizeof(v), &c.mode);
	log_call(t, &c);
	err = do_ioctl(t, fd, ION_IOC_ABI_VERSION, p);
	check(t, &c, err, c.mode == M_OK ? OK : E(EFAULT), NULL);
	if (!err && c.mode == M_OK && *p != ION_ABI_VERSION)
		violation(t, &c, 0, "version is not ION_ABI_VERSION");
}

/* ------------------------------------------------------------------ */
/* dma-heap nodes                                                      */

static int node_fd(struct thr *t)
{
	int i = fd_pick(t, K_NODE), fd;

	if (i >= 0)
		return t->fds[i].fd;
	if (!nodes.cnt)
		return -1;
	fd_make_room(t);
	count_call(t);
	fd = open(nodes.path[below(t, nodes.cnt)], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		open_failed(t);
		return -1;
	}
	fd_add(t, fd, K_NODE, 0);
	return fd;
}

static void op_node_alloc(struct thr *t)
{
	struct call c = {
		.name = "DMA_HEAP_IOCTL_ALLOC", .cmd = DMA_HEAP_IOCTL_ALLOC,
		.fd_kind = K_NODE,
	};
	static const unsigned int fdf[] = {
		O_RDWR | O_CLOEXEC, O_RDWR | O_CLOEXEC, O_RDONLY, O_WRONLY,
		O_CLOEXEC, O_RDWR | O_NONBLOCK, 0x80000000,
	};
	struct dma_heap_allocation_data a = { 0 }, *p;
	int fd = node_fd(t), sane, err, einval;
	eset_t ok;

	if (fd < 0)
		return;
	a.len = pick_len(t, &sane);
	a.fd_flags = fdf[below(t, IT_ARRAY_SIZE(fdf))];
	if (one_in(t, 20))
		a.fd = 1 + below(t, 100);
	if (one_in(t, 20))
		a.heap_flags = 1ULL << below(t, 64);
	c.mode = pick_mode(t);
	c.a[0] = a.len;
	c.a[1] = a.fd;
	c.a[2] = a.fd_flags;
	c.a[3] = a.heap_flags;
	c.na = 4;
	einval = a.fd || a.heap_flags || len_einval(a.len) ||
		 (a.fd_flags & ~(O_CLOEXEC | O_ACCMODE));
	if (einval)
		ok = E(EINVAL);
	else if (a.len > totalram)
		ok = E(ENOMEM);
	else
		ok = OK | E(ENOMEM) | E(EMFILE);
	ok = by_mode(c.mode, 1, ok);
	p = place(t, &a, sizeof(a), &c.mode);
	log_call(t, &c);
	err = do_ioctl(t, fd, DMA_HEAP_IOCTL_ALLOC, p);
	check(t, &c, err, ok, NULL);
	if (!err && c.mode == M_OK)
		new_buf(t, &c, p->fd, a.len);
}

/* ------------------------------------------------------------------ */
/* Random command numbers                                              */

struct known {
	unsigned long cmd;
	const char *name;
	eset_t handler;		/* what the handler may answer */
	int out_fd_off, out_handle_off;	/* -1: none */
};

static const struct known ion_known[] = {
	{ ION_IOC_ALLOC, "ION_IOC_ALLOC", OK | E(ENODEV) | E(EINVAL) |
	  E(ENOMEM) | E(EMFILE), 16, -1 },
	{ ION_IOC_ALLOC_LEGACY, "ION_IOC_ALLOC_LEGACY", OK | E(ENODEV) |
	  E(EINVAL) | E(ENOMEM) | E(EMFILE), -1, 24 },
	{ ION_IOC_FREE, "ION_IOC_FREE", OK | E(EINVAL), -1, -1 },
	{ ION_IOC_MAP, "ION_IOC_MAP", OK | E(EINVAL) | E(EMFILE), 4, -1 },
	{ ION_IOC_SHARE, "ION_IOC_SHARE", OK | E(EINVAL) | E(EMFILE), 4, -1 },
	{ ION_IOC_IMPORT, "ION_IOC_IMPORT", OK | E(EBADF) | E(EINVAL), -1, 0 },
	{ ION_IOC_CUSTOM, "ION_IOC_CUSTOM", E(ENOTTY), -1, -1 },
	{ ION_IOC_SYNC, "ION_IOC_SYNC", OK | E(EBADF) | E(EINVAL), -1, -1 },
	{ ION_IOC_HEAP_QUERY, "ION_IOC_HEAP_QUERY", OK | E(EINVAL), -1, -1 },
	{ ION_IOC_ABI_VERSION, "ION_IOC_ABI_VERSION", OK, -1, -1 },
};

static const struct known buf_known[] = {
	{ DMA_BUF_IOCTL_SYNC, "DMA_BUF_IOCTL_SYNC", OK | E(EINVAL), -1, -1 },
	{ DMA_BUF_SET_NAME_A, "DMA_BUF_SET_NAME_A", OK | E(EINVAL) | E(EFAULT) |
	  E(ENOMEM), -1, -1 },
	{ DMA_BUF_SET_NAME_B, "DMA_BUF_SET_NAME_B", OK | E(EINVAL) | E(EFAULT) |
	  E(ENOMEM), -1, -1 },
	{ DMA_BUF_IOCTL_EXPORT_SYNC_FILE, "DMA_BUF_IOCTL_EXPORT_SYNC_FILE",
	  OK | E(EINVAL) | E(ENOMEM) | E(EMFILE), 4, -1 },
	{ DMA_BUF_IOCTL_IMPORT_SYNC_FILE, "DMA_BUF_IOCTL_IMPORT_SYNC_FILE",
	  OK | E(EINVAL) | E(EBADF) | E(ENOMEM), -1, -1 },
};

static unsigned long random_cmd(struct thr *t, int magic)
{
	static const unsigned int sizes[] = { 0, 4, 8, 12, 16, 20, 24, 32, 40 };
	unsigned int nr = one_in(t, 4) ? below(t, 256) : below(t, 12);
	unsigned int size = one_in(t, 3) ? below(t, 1 << 14) :
			    sizes[below(t, IT_ARRAY_SIZE(sizes))];

	return _IOC(below(t, 4), magic, nr, size);
}

static void random_bytes(struct thr *t, unsigned char *buf, size_t size)
{
	int small = one_in(t, 3);
	size_t i;

	for (i = 0; i < size; i += 4) {
		uint32_t v = small ? below(t, 8) : (uint32_t)rnd(t);

		memcpy(buf + i, &v, size - i < 4 ? size - i : 4);
	}
}

static void op_random_cmd(struct thr *t)
{
	static const int magics[] = { 'I', 'I', 'I', 'H', 'b' };
	struct call c = { .name = "random command", .fd_kind = -1 };
	unsigned char data[64];
	const struct known *k = NULL, *tab;
	int target = below(t, 10), fd, i, err, magic, ntab;
	unsigned int size;
	unsigned char *p;
	eset_t ok;

	if (target < 6) {
		fd = ion_fd(t);
		c.fd_kind = K_ION;
		tab = ion_known;
		ntab = IT_ARRAY_SIZE(ion_known);
	} else if (target < 8 && nodes.cnt) {
		fd = node_fd(t);
		c.fd_kind = K_NODE;
		tab = NULL;
		ntab = 0;
	} else {
		i = fd_pick(t, K_BUF);
		fd = i >= 0 ? t->fds[i].fd : -1;
		c.fd_kind = K_BUF;
		tab = buf_known;
		ntab = IT_ARRAY_SIZE(buf_known);
	}
	if (fd < 0)
		return;
	magic = magics[below(t, IT_ARRAY_SIZE(magics))];
	c.cmd = random_cmd(t, magic);
	/* now and then exactly a known command, with random bytes */
	if (tab && one_in(t, 3))
		c.cmd = tab[below(t, ntab)].cmd;
	for (i = 0; i < ntab; i++)
		if (tab[i].cmd == c.cmd)
			k = &tab[i];
	size = _IOC_SIZE(c.cmd);
	random_bytes(t, data, sizeof(data));
	c.mode = pick_mode(t);
	if (size > sizeof(data) && c.mode != M_OK)
		c.mode = M_NULL;
	c.a[0] = size;
	c.na = 1;
	if (c.fd_kind == K_NODE) {
		/* mainline semantics: only _IOC_NR selects; 0 is ALLOC */
		if (_IOC_NR(c.cmd) == 0)
			ok = OK | E(EINVAL) | E(ENOMEM) | E(EMFILE) | E(EFAULT) |
			     E(ENOTTY);
		else
			ok = E(EINVAL) | E(ENOTTY);
	} else if (k) {
		c.name = k->name;
		/* random bytes: pointers inside (HEAP_QUERY) may be bad */
		ok = by_mode(c.mode, _IOC_DIR(c.cmd) & _IOC_READ,
			     k->handler | E(EFAULT));
		if (!(_IOC_DIR(c.cmd) & _IOC_WRITE) &&
		    !(_IOC_DIR(c.cmd) & _IOC_READ))
			ok = k->handler;
		if (c.cmd == DMA_BUF_SET_NAME_A || c.cmd == DMA_BUF_SET_NAME_B)
			ok = k->handler;	/* the arg is the string itself */
	} else {
		ok = E(ENOTTY);
	}
	if (size <= sizeof(data)) {
		p = place(t, data, size, &c.mode);
	} else {
		/* bigger than our page: only ever a pointer, never read */
		p = c.mode == M_OK ? pa(t) : NULL;
	}
	if (c.cmd == DMA_BUF_SET_NAME_A || c.cmd == DMA_BUF_SET_NAME_B) {
		/* the argument is the name: make it a short string */
		if (c.mode == M_OK) {
			memset(pa(t), 'n', 16);
			pa(t)[16] = 0;
			p = pa(t);
		}
	}
	log_call(t, &c);
	err = do_ioctl(t, fd, c.cmd, p);
	check(t, &c, err, ok, NULL);
	if (err || c.mode != M_OK)
		return;
	/*
	 * A node reports the new fd only through an _IOC_READ command: one
	 * without it (write only) allocates too, as mainline's does, but
	 * leaves the fd unknown to us (bytes 8-11 are still our own zero,
	 * so recording them would take fd 0 for a dma-buf).
	 */
	if (c.fd_kind == K_NODE && _IOC_NR(c.cmd) == 0 && size >= 12 &&
	    (_IOC_DIR(c.cmd) & _IOC_READ)) {
		int nfd;

		memcpy(&nfd, p + 8, sizeof(nfd));
		fd_add(t, nfd, K_BUF, buf_size(nfd));
	} else if (k && k->out_fd_off >= 0 &&
		   size >= (unsigned int)k->out_fd_off + 4) {
		int nfd;

		memcpy(&nfd, p + k->out_fd_off, sizeof(nfd));
		if (c.fd_kind == K_BUF) {	/* a sync_file */
			count_call(t);
			close(nfd);
		} else {
			fd_add(t, nfd, K_BUF, buf_size(nfd));
		}
	} else if (k && k->out_handle_off >= 0) {
		int h;

		memcpy(&h, p + k->out_handle_off, sizeof(h));
		handle_add(t, h);
	}
}

/* ------------------------------------------------------------------ */
/* dma-buf ioctls                                                      */

static int dmabuf_fd(struct thr *t, int *kind)
{
	int i = fd_pick(t, one_in(t, 8) ? K_FOREIGN : K_BUF);

	if (i < 0)
		i = fd_pick(t, K_BUF);
	if (i < 0)
		return -1;
	*kind = t->fds[i].kind;
	return t->fds[i].fd;
}

static void op_dmabuf_sync(struct thr *t)
{
	struct call c = { .name = "DMA_BUF_IOCTL_SYNC", .cmd = DMA_BUF_IOCTL_SYNC };
	static const unsigned long long fl[] = {
		DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ,
		DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE,
		DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW,
		DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ,
		DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE,
		DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW,
		0, DMA_BUF_SYNC_END, 8, 1ULL << 63,
	};
	struct dma_buf_sync s, *p;
	int fd = dmabuf_fd(t, &c.fd_kind), err;
	eset_t ok;

	if (fd < 0)
		return;
	s.flags = one_in(t, 10) ? rnd(t) : fl[below(t, IT_ARRAY_SIZE(fl))];
	c.mode = pick_mode(t);
	c.a[0] = s.flags;
	c.na = 1;
	if ((s.flags & ~DMA_BUF_SYNC_VALID_FLAGS_MASK) ||
	    !(s.flags & DMA_BUF_SYNC_RW))
		ok = E(EINVAL);
	else
		ok = OK;
	p = place(t, &s, sizeof(s), &c.mode);
	log_call(t, &c);
	err = do_ioctl(t, fd, DMA_BUF_IOCTL_SYNC, p);
	check(t, &c, err, by_mode(c.mode, 0, ok), NULL);
}

static void op_set_name(struct thr *t)
{
	struct call c = { .name = "DMA_BUF_SET_NAME", .fd_kind = -1 };
	int fd = dmabuf_fd(t, &c.fd_kind), err;
	unsigned int len = below(t, 40), i;
	char name[48], *p;
	eset_t ok;

	if (fd < 0)
		return;
	c.cmd = one_in(t, 2) ? DMA_BUF_SET_NAME_A : DMA_BUF_SET_NAME_B;
	for (i = 0; i < len; i++)
		name[i] = 'a' + below(t, 26);
	name[len] = 0;
	c.mode = pick_mode(t);
	if (c.mode == M_STRADDLE_NONE || c.mode == M_STRADDLE_RO)
		c.mode = M_NONE;
	c.a[0] = len;
	c.na = 1;
	p = place(t, name, len + 1, &c.mode);
	ok = !mode_readable(c.mode) ? E(EFAULT) :
	     len >= DMA_BUF_NAME_LEN ? E(EINVAL) : OK;
	log_call(t, &c);
	err = do_ioctl(t, fd, c.cmd, p);
	check(t, &c, err, ok, NULL);
}

/* ------------------------------------------------------------------ */
/* mmap, munmap, touching, close, dup, open                            */

static void map_add(struct thr *t, void *addr, size_t len, int prot)
{
	t->maps[t->nmaps].addr = addr;
	t->maps[t->nmaps].len = len;
	t->maps[t->nmaps].prot = prot;
	t->nmaps++;
}

static void touch(struct fmap *m, size_t off)
{
	volatile unsigned char *b = m->addr + off;

	if (m->prot & PROT_READ)
		(void)*b;
	if (m->prot & PROT_WRITE)
		*b = (unsigned char)off;
}

static void op_munmap(struct thr *t)
{
	struct call c = { .name = "munmap", .fd_kind = -1 };
	struct fmap *m;
	int i, err;

	if (!t->nmaps)
		return;
	i = below(t, t->nmaps);
	m = &t->maps[i];
	count_call(t);
	if (m->len > PG && one_in(t, 3)) {
		/* unmap the first page only */
		err = munmap(m->addr, PG) ? errno : 0;
		c.a[0] = PG;
		c.na = 1;
		check(t, &c, err, OK, NULL);
		if (!err) {
			m->addr += PG;
			m->len -= PG;
		}
		return;
	}
	err = munmap(m->addr, m->len) ? errno : 0;
	c.a[0] = m->len;
	c.na = 1;
	check(t, &c, err, OK, NULL);
	t->maps[i] = t->maps[--t->nmaps];
}

static void op_mmap(struct thr *t)
{
	static const int prots[] = {
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE, PROT_READ,
		PROT_WRITE, PROT_NONE, PROT_READ | PROT_EXEC,
	};
	struct call c = { .name = "mmap", .fd_kind = -1 };
	int i = -1, fd, prot, flags, err, kind, acc;
	size_t npages, len, size;
	unsigned long long off;
	unsigned char *addr;
	eset_t ok;

	while (t->nmaps == MAX_MAPS)
		op_munmap(t);
	i = fd_pick(t, one_in(t, 10) ? (one_in(t, 2) ? K_FOREIGN : K_ION) :
		    K_BUF);
	if (i < 0)
		i = fd_pick(t, K_BUF);
	if (i < 0)
		return;
	fd = t->fds[i].fd;
	kind = t->fds[i].kind;
	size = t->fds[i].size;
	c.fd_kind = kind;
	npages = size / PG;
	switch (below(t, 8)) {
	case 0:
		off = npages ? below(t, npages) * PG : 0;
		break;
	case 1:
		off = npages * PG;
		break;
	case 2:
		off = (npages + 1 + below(t, 8)) * PG;
		break;
	case 3:
		off = one_in(t, 2) ? (1ULL << 52) : (~0ULL & ~(PG - 1));
		break;
	case 4:
		off = 1 + below(t, PG - 1);	/* not page aligned */
		break;
	default:
		off = 0;
		break;
	}
	switch (below(t, 8)) {
	case 0:
		len = 0;
		break;
	case 1:
		len = (npages + 1 + below(t, 4)) * PG;
		break;
	case 2:
		len = 1 + below(t, 3 * PG);
		break;
	case 3:
		len = 1ULL << 46;	/* only shared: no overcommit warning */
		break;
	default:
		len = npages > off / PG ? (1 + below(t, npages - off / PG)) * PG :
					  PG;
		break;
	}
	prot = prots[below(t, IT_ARRAY_SIZE(prots))];
	flags = one_in(t, 10) && len < (1ULL << 40) ? MAP_PRIVATE : MAP_SHARED;
	c.a[0] = len;
	c.a[1] = prot;
	c.a[2] = flags;
	c.a[3] = off;
	c.a[4] = size;
	c.na = 5;
	if (kind == K_ION) {
		/* misc device without mmap; read-only opens: EACCES */
		ok = E(ENODEV) | E(EINVAL) | E(EACCES) | E(EOVERFLOW) |
		     E(ENOMEM);
	} else if (!len || (off & (PG - 1))) {
		ok = E(EINVAL);
	} else if (len > size || off + page_align(len) > size ||
		   off >= size) {
		ok = E(EINVAL) | E(ENOMEM) | E(EOVERFLOW);
	} else {
		ok = OK | E(ENOMEM);
		if (flags == MAP_PRIVATE)
			ok |= E(EINVAL);
	}
	/* the fd's access mode (a node's fd_flags may be O_RDONLY, O_WRONLY) */
	acc = fcntl(fd, F_GETFL) & O_ACCMODE;
	if (kind != K_ION && len && !(off & (PG - 1)) &&
	    (acc == O_WRONLY || (flags == MAP_SHARED && (prot & PROT_WRITE) &&
				 acc != O_RDWR)))
		ok = (ok & ~(OK | E(ENOMEM))) | E(EACCES);
	count_call(t);
	addr = mmap(NULL, len, prot, flags, fd, off);
	err = addr == MAP_FAILED ? errno : 0;
	if (!check(t, &c, err, ok,
		   err ? NULL : "a mapping outside the buffer succeeded")) {
		if (!err)
			munmap(addr, len);
		return;
	}
	if (err)
		return;
	map_add(t, addr, page_align(len), prot);
	touch(&t->maps[t->nmaps - 1], 0);
	touch(&t->maps[t->nmaps - 1], page_align(len) - 1);
}

static void op_touch(struct thr *t)
{
	struct fmap *m;

	if (!t->nmaps)
		return;
	m = &t->maps[below(t, t->nmaps)];
	touch(m, below(t, m->len));
}

static void op_close(struct thr *t)
{
	struct call c = { .name = "close", .fd_kind = -1 };
	int i, err;

	if (!t->nfds)
		return;
	i = below(t, t->nfds);
	if (t->fds[i].kind == K_OTHER && !one_in(t, 8))
		return;
	c.fd_kind = t->fds[i].kind;
	count_call(t);
	err = close(t->fds[i].fd) ? errno : 0;
	check(t, &c, err, OK, NULL);
	fd_remove(t, i);
}

static void op_dup(struct thr *t)
{
	struct call c = { .name = "dup", .fd_kind = -1 };
	int i, fd;

	if (!t->nfds || t->nfds == MAX_FDS)
		return;
	i = below(t, t->nfds);
	c.fd_kind = t->fds[i].kind;
	count_call(t);
	fd = one_in(t, 2) ? dup(t->fds[i].fd) :
			    fcntl(t->fds[i].fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0) {
		check(t, &c, errno, E(EMFILE), NULL);
		return;
	}
	fd_add(t, fd, t->fds[i].kind, t->fds[i].size);
}

static void op_open(struct thr *t)
{
	struct call c = { .name = "open " IT_DEV, .cmd = 0, .fd_kind = K_ION };
	int fd;

	if (nodes.cnt && one_in(t, 3)) {
		c.name = "open a dma-heap node";
		c.fd_kind = K_NODE;
		count_call(t);
		fd = open(nodes.path[below(t, nodes.cnt)], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			check(t, &c, errno, E(EMFILE), NULL);
		else
			fd_add(t, fd, K_NODE, 0);
		return;
	}
	count_call(t);
	fd = open(IT_DEV, (one_in(t, 2) ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0)
		check(t, &c, errno, E(EMFILE), NULL);
	else
		fd_add(t, fd, K_ION, 0);
}

/* ------------------------------------------------------------------ */
/* The loop                                                            */

static void op_fork(struct thr *t);
static void op_alloc(struct thr *t);

static void op_maybe_fork(struct thr *t)
{
	if (!t->in_child && one_in(t, FORK_ONE_IN / 10))
		op_fork(t);
	else
		op_alloc(t);
}

/* The operations and their weights (per mille). */
static const struct {
	void (*fn)(struct thr *t);
	unsigned int weight;
	const char *name;
} ops[] = {
	{ op_alloc, 45, "ALLOC" },
	{ op_alloc_legacy, 35, "ALLOC_LEGACY" },
	{ op_free, 40, "FREE" },
	{ op_share, 60, "MAP/SHARE" },
	{ op_import, 60, "IMPORT" },
	{ op_custom, 30, "CUSTOM" },
	{ op_sync_ion, 55, "SYNC" },
	{ op_heap_query, 50, "HEAP_QUERY" },
	{ op_abi_version, 35, "ABI_VERSION" },
	{ op_node_alloc, 25, "DMA_HEAP_IOCTL_ALLOC" },
	{ op_random_cmd, 190, "random command" },
	{ op_dmabuf_sync, 80, "DMA_BUF_IOCTL_SYNC" },
	{ op_set_name, 35, "DMA_BUF_SET_NAME" },
	{ op_mmap, 60, "mmap" },
	{ op_munmap, 30, "munmap" },
	{ op_touch, 30, "touch a mapping" },
	{ op_close, 50, "close" },
	{ op_dup, 40, "dup" },
	{ op_open, 40, "open" },
	{ op_maybe_fork, 10, "fork" },
};

#define NOPS	IT_ARRAY_SIZE(ops)


static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void one_op(struct thr *t)
{
	unsigned int r = below(t, 1000), i;
	long long t0 = now_ns();

	for (i = 0; i < NOPS - 1 && r >= ops[i].weight; i++)
		r -= ops[i].weight;
	ops[i].fn(t);
	if (!t->in_child)
		__atomic_add_fetch(&sh->op_ns[i], now_ns() - t0,
				   __ATOMIC_RELAXED);
}

/* A child that runs a few ops and exits with everything open. */
static void op_fork(struct thr *t)
{
	int status, i;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		t->in_child = 1;
		t->rng = fz_mix(t->rng ^ 0xc41dULL);
		if (one_in(t, 3)) {
			/* no fd above the current highest: EMFILE paths */
			struct rlimit rl;
			int maxfd = 3;

			for (i = 0; i < t->nfds; i++)
				if (t->fds[i].fd >= maxfd)
					maxfd = t->fds[i].fd + 1;
			rl.rlim_cur = rl.rlim_max = maxfd;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		for (i = 0; i < CHILD_OPS; i++)
			one_op(t);
		_exit(0);
	}
	__atomic_add_fetch(&sh->children, 1, __ATOMIC_RELAXED);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		struct call c = { .name = "forked child", .fd_kind = -1 };

		c.a[0] = status;
		c.na = 1;
		__atomic_add_fetch(&sh->child_crashes, 1, __ATOMIC_RELAXED);
		violation(t, &c, 0, "the child died (status in the first argument)");
	}
}

static void thr_setup(struct thr *t)
{
	int p[2];

	t->rng = fz_mix(seed ^ ((uint64_t)t->proc << 32) ^
			((uint64_t)t->idx << 16) ^ 0x10f);
	t->scratch = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->scratch == MAP_FAILED) {
		t->scratch = NULL;
		return;
	}
	mprotect(pc(t), PG, PROT_NONE);
	t->qbuf = calloc(32, sizeof(*t->qbuf));
	ion_fd(t);
	if (!pipe2(p, O_CLOEXEC)) {
		fd_add(t, p[0], K_OTHER, 0);
		close(p[1]);
	}
	if (have_system_dma_heap) {
		int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
		int fd = heap >= 0 ? fz_node_alloc(heap, 2 * PG) : -1;

		if (fd >= 0)
			fd_add(t, fd, K_FOREIGN, 2 * PG);
		if (heap >= 0)
			close(heap);
	}
}

/* Explicit cleanup: unmap and close everything, free every handle. */
static void thr_cleanup(struct thr *t)
{
	int i, fd = -1;

	for (i = 0; i < t->nmaps; i++)
		munmap(t->maps[i].addr, t->maps[i].len);
	t->nmaps = 0;
	i = fd_pick(t, K_ION);
	if (i >= 0)
		fd = t->fds[i].fd;
	for (i = 0; fd >= 0 && i < t->nhandles; i++)
		it_free(fd, t->handles[i]);
	t->nhandles = 0;
	for (i = 0; i < t->nfds; i++)
		close(t->fds[i].fd);
	t->nfds = 0;
	munmap(t->scratch, 3 * PG);
	free(t->qbuf);
}

static long per_thread;

static void *thr_main(void *arg)
{
	struct thr *t = arg;

	thr_setup(t);
	if (!t->scratch)
		return NULL;
	for (t->iter = 0; t->calls < per_thread; t->iter++)
		one_op(t);
	/* thread 0 of each worker process exits with everything open */
	if (t->proc == 0 || t->idx != 0)
		thr_cleanup(t);
	return NULL;
}

static void run_threads(int proc, int n)
{
	struct thr *t = calloc(n, sizeof(*t));
	int i;

	for (i = 0; i < n; i++) {
		t[i].proc = proc;
		t[i].idx = only_thread >= 0 ? only_thread : i;
		pthread_create(&t[i].tid, NULL, thr_main, &t[i]);
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i].tid, NULL);
	free(t);
}

/* Close every fd above stderr except @keep. */
static void close_all(int keep)
{
	int fd;

	for (fd = 3; fd < 1024; fd++)
		if (fd != keep)
			close(fd);
}

/* A crash of the fuzzer itself: say where, for addr2line. */
/* The interrupted program counter, for the crash report. */
#if defined(__x86_64__)
#define FZ_PC(uc) ((uc)->uc_mcontext.gregs[REG_RIP])
#elif defined(__aarch64__)
#define FZ_PC(uc) ((uc)->uc_mcontext.pc)
#else
#define FZ_PC(uc) 0
#endif

static void on_crash(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	void *bt[32];
	char buf[160];
	int n;

	n = snprintf(buf, sizeof(buf),
		     "# fuzzer pid %d: signal %d at address %p, pc %#llx\n",
		     getpid(), sig, si->si_addr,
		     (unsigned long long)FZ_PC(uc));
	if (write(1, buf, n) != n)
		_exit(128 + sig);
	n = backtrace(bt, 32);
	backtrace_symbols_fd(bt, n, 1);
	_exit(128 + sig);
}

static void usage(void)
{
	fprintf(stderr, "usage: fuzz_ioctl [--seed N] [--iterations N] "
		"[--procs N] [--threads N] [--only P.T] [--verbose]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int i, ion, status, bad_procs = 0, total_threads, ok;
	long long t0, ms;
	struct sysinfo si;
	char prefix[48];
	pid_t *pids;
	struct stat st;
	char *env, *end;

	struct sigaction sa = { .sa_sigaction = on_crash,
				.sa_flags = SA_SIGINFO };

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	env = getenv("ION_FUZZ_ITERATIONS");
	if (env && *env) {
		iterations = strtol(env, &end, 0);
		if (*end || iterations < 1) {
			fprintf(stderr, "fuzz_ioctl: bad ION_FUZZ_ITERATIONS '%s'\n",
				env);
			return 2;
		}
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--iterations") && i + 1 < argc)
			iterations = strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--procs") && i + 1 < argc)
			nprocs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc &&
			 sscanf(argv[++i], "%d.%d", &only_proc, &only_thread) == 2)
			;
		else if (!strcmp(argv[i], "--verbose"))
			verbose = 1;
		else
			usage();
	}
	if (only_proc >= 0) {
		nprocs = 0;
		nthreads = 1;
	}
	if (nthreads < 1 || nprocs < 0 || iterations < 1)
		usage();
	printf("# seed=%llu\n", (unsigned long long)seed);
	total_threads = (nprocs + 1) * nthreads;
	per_thread = only_proc >= 0 ? iterations : iterations / total_threads;
	printf("# iterations=%ld%s: %d processes x %d threads, %ld calls each%s\n",
	       iterations, iterations == DEF_ITERATIONS ? " (default)" : "",
	       nprocs + 1, nthreads, per_thread,
	       only_proc >= 0 ? " (one sequence only)" : "");
	printf("# reproduce: fuzz_ioctl --seed %llu --iterations %ld"
	       " --procs %d --threads %d\n",
	       (unsigned long long)seed, iterations, nprocs, nthreads);
	fflush(stdout);

	ion = it_setup(&hs);
	heap_mask = it_heaps_mask(&hs);
	close(ion);
	if (sysinfo(&si))
		return 1;
	totalram = (unsigned long long)si.totalram * si.mem_unit;
	fz_nodes_load(&nodes);
	have_system_dma_heap = !stat("/dev/dma_heap/system", &st);
	tap_diag("%u heaps (mask %#x), %d dma-heap nodes%s", hs.cnt, heap_mask,
		 nodes.cnt, have_system_dma_heap ?
		 ", /dev/dma_heap/system for foreign dma-bufs" : "");
	if (!fz_dfs_clean(NULL, 1))
		tap_diag("debugfs was not clean before the run");

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	memset(sh, 0, sizeof(*sh));
	pids = calloc(nprocs + 1, sizeof(*pids));
	t0 = it_now_ms();
	for (i = 1; i <= nprocs; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			run_threads(i, nthreads);
			_exit(0);	/* with thread 0's things still open */
		}
	}
	run_threads(only_proc >= 0 ? only_proc : 0, nthreads);
	for (i = 1; i <= nprocs; i++) {
		waitpid(pids[i], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			tap_diag("worker process %d: status %#x", i, status);
			bad_procs++;
		}
	}
	ms = it_now_ms() - t0;
	close_all(-1);
	tap_diag("%ld calls in %lld ms, %ld forked children, %ld violations",
		 sh->calls, ms, sh->children, sh->violations);

	for (i = 0; i < (int)NOPS; i++)
		tap_diag("%-22s %6lld ms", ops[i].name,
			 sh->op_ns[i] / 1000000);
	tap_ok(sh->calls >= per_thread * total_threads,
	       "the fuzzer made %ld calls (at least %ld)", sh->calls,
	       per_thread * total_threads);
	tap_ok(!bad_procs, "every worker process exited normally");
	tap_ok(!sh->child_crashes,
	       "every forked child exited normally (%ld children)",
	       sh->children);
	tap_ok(!sh->setup_errors, "the fuzzer could always open its devices");
	for (i = 0; i < sh->nrec; i++) {
		struct rec *r = &sh->recs[i];

		tap_ok(0, "%s (%ld times)", r->desc, r->count);
	}
	if (sh->dropped)
		tap_diag("%d more kinds of violation not listed", sh->dropped);
	tap_ok(!sh->violations,
	       "every call's result was one its documentation allows (%ld violations)",
	       sh->violations);

	fz_client_prefix(prefix, sizeof(prefix));
	tap_ok(fz_dfs_wait_clean(prefix, 10000),
	       "after the run: debugfs summary, every heap and the clients"
	       " back to zero");

	/* the kernel is alive and /dev/ion still works */
	ion = it_open();
	ok = ion >= 0;
	if (ok) {
		ion_user_handle_t h;
		int fd = it_alloc_fd(ion, 64 << 10, heap_mask, 0);
		void *p = fd >= 0 ? mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE,
					 MAP_SHARED, fd, 0) : MAP_FAILED;

		ok = p != MAP_FAILED;
		if (ok) {
			it_fill(p, 64 << 10, 1);
			ok = it_check(p, 64 << 10, 1) < 0;
			munmap(p, 64 << 10);
		}
		if (fd >= 0)
			close(fd);
		ok = ok && !it_alloc_handle(ion, PG, 0, heap_mask, 0, &h) &&
		     !it_free(ion, h);
		close(ion);
	}
	tap_ok(ok, "/dev/ion still allocates, maps and frees through both ABIs");
	tap_ok(fz_dfs_wait_clean(prefix, 5000), "and debugfs is back to zero again");
	return tap_exit();
}
