// SPDX-License-Identifier: MIT
/*
 * fuzz_ioctl: where an argument goes (valid, NULL, unmapped, kernel,
 * read-only, straddling a page), the per-thread pools of fds and handles,
 * and the argument values (lengths, masks, flags).
 */
#include "fuzz_ioctl.h"

/* ------------------------------------------------------------------ */
/* Argument placement                                                  */

unsigned char *pa(struct thr *t)
{
	return t->scratch;
}

unsigned char *pb(struct thr *t)
{
	return t->scratch + PG;
}

unsigned char *pc(struct thr *t)
{
	return t->scratch + 2 * PG;
}

/*
 * Under the kernel's fault injection mprotect() may fail with ENOMEM (it
 * splits and merges the scratch area's VMA): try again, or page B could
 * stay read-only and the next argument copied there would crash the
 * fuzzer.
 */
void b_prot(struct thr *t, int prot)
{
	int tries = 0;

	while (mprotect(pb(t), PG, prot) && errno == ENOMEM && ++tries < 1000)
		;
}

enum mode pick_mode(struct thr *t)
{
	if (below(t, 100) < 88)
		return M_OK;
	return 1 + below(t, M_COUNT - 1);
}

/*
 * Where the argument goes: copy @size bytes of @data there and return the
 * pointer to pass.  B is left read-write except in the read-only modes.
 */
void *place(struct thr *t, const void *data, size_t size,
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

int mode_readable(enum mode m)
{
	return m == M_OK || m == M_RO || m == M_STRADDLE_RO;
}

/*
 * What a command that copies its argument in (and, if @out, back out)
 * may answer given the pointer mode, when its handler would answer
 * @handler.
 */
eset_t by_mode(enum mode m, int out, eset_t handler)
{
	if (!mode_readable(m))
		return E(EFAULT);
	if (m != M_OK && out)
		return (handler & ~OK) | E(EFAULT);
	return handler;
}

/* ------------------------------------------------------------------ */
/* Pools                                                               */

int fd_add_heap(struct thr *t, int fd, enum kind kind, size_t size,
		int heap)
{
	if (fd < 0)
		return -1;
	if (t->nfds == MAX_FDS ||
	    (kind == K_BUF && t->bytes + size > BYTES_BUDGET)) {
		count_call(t);
		close(fd);
		return -1;
	}
	t->fds[t->nfds].fd = fd;
	t->fds[t->nfds].kind = kind;
	t->fds[t->nfds].size = size;
	t->fds[t->nfds].heap = heap;
	t->fds[t->nfds].not_auto = 0;
	if (kind == K_BUF)
		t->bytes += size;
	return t->nfds++;
}

void fd_add(struct thr *t, int fd, enum kind kind, size_t size)
{
	fd_add_heap(t, fd, kind, size, -1);
}

void fd_remove(struct thr *t, int i)
{
	if (t->fds[i].kind == K_BUF)
		t->bytes -= t->fds[i].size;
	t->fds[i] = t->fds[--t->nfds];
}

/* A random fd of @kind from the pool, or -1. */
int fd_pick(struct thr *t, enum kind kind)
{
	int idx[MAX_FDS], n = 0, i;

	for (i = 0; i < t->nfds; i++)
		if (t->fds[i].kind == kind)
			idx[n++] = i;
	return n ? idx[below(t, n)] : -1;
}

/* Make room in a full pool: close a dma-buf fd. */
void fd_make_room(struct thr *t)
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
 * a process whose fd limit the fuzzer lowered itself, and ENOMEM under the
 * kernel's fault injection (kfault.c); anything else is a setup error,
 * reported with its errno.
 */
void open_failed(struct thr *t)
{
	int e = errno;

	if (e == EMFILE || e == ENFILE)
		return;
	if (kfault_armed && e == ENOMEM)	/* the kernel's injected failure */
		return;
	if (__atomic_add_fetch(&sh->setup_errors, 1, __ATOMIC_RELAXED) <= 5)
		tap_diag("pid %d: opening a device failed: %s", getpid(),
			 strerror(e));
}

int ion_fd(struct thr *t)
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

size_t buf_size(int fd)
{
	off_t end = lseek(fd, 0, SEEK_END);

	return end < 0 ? 0 : (size_t)end;
}

void handle_add(struct thr *t, int h)
{
	if (t->nhandles < MAX_HANDLES)
		t->handles[t->nhandles++] = h;
}

/* A handle id: mostly one we hold (removed if @take), else a guess. */
int pick_handle(struct thr *t, int take)
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

unsigned long long pick_len(struct thr *t, int *sane)
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

unsigned int pick_mask(struct thr *t)
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

unsigned int pick_flags(struct thr *t)
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

int len_einval(unsigned long long len)
{
	return !len || len > 0xfffffffffffff000ULL;
}

unsigned long long page_align(unsigned long long len)
{
	return (len + PG - 1) & ~(PG - 1);
}

/* After a successful allocation: the fd must be a buffer of the size. */
int new_buf(struct thr *t, const struct call *c, int fd,
	    unsigned long long len, int heap)
{
	size_t size = buf_size(fd);

	if (size != page_align(len))
		violation(t, c, 0, "the new buffer's size is not len page aligned");
	return fd_add_heap(t, fd, K_BUF, size, heap);
}
