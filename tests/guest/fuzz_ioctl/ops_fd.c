// SPDX-License-Identifier: MIT
/*
 * fuzz_ioctl: DMA_BUF_IOCTL_SYNC, DMA_BUF_SET_NAME, mmap and munmap,
 * touching the mappings, close, dup and open.
 */
#include <setjmp.h>

#include "fuzz_ioctl.h"

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

/*
 * Might buffer @i be the auto heap's (backed at its first use, so that
 * a fault or a SYNC START may find no memory)?  A buffer of a heap not
 * known here is looked for in the auto heap's debugfs file, once; when
 * that cannot be read (not root), the answer is the cautious yes.
 */
static int fd_maybe_auto(struct thr *t, int i)
{
	struct ffd *f = &t->fds[i];
	int ret;

	if (f->kind != K_BUF || f->heap >= 0)
		return f->kind == K_BUF && f->heap == ION_HEAP_AUTO_ID;
	if (f->not_auto)
		return 0;
	if (!it_heap_find(&hs, ION_AUTO_HEAP_NAME)) {
		f->not_auto = 1;
		return 0;
	}
	/* Not readable (not root, or no memory for it): no answer. */
	ret = it_heap_has_buffer(f->fd, ION_AUTO_HEAP_NAME);
	if (ret < 0)
		return 1;
	if (ret)
		f->heap = ION_HEAP_AUTO_ID;
	else
		f->not_auto = 1;
	return ret;
}

/* fd_maybe_auto() of the buffer @fd; 1 when the fuzzer has no such fd. */
static int fd_maybe_auto_fd(struct thr *t, int fd)
{
	int i;

	for (i = 0; i < t->nfds; i++)
		if (t->fds[i].fd == fd)
			return fd_maybe_auto(t, i);
	return 1;
}

/*
 * What DMA_BUF_IOCTL_SYNC with @flags may answer on a pool fd of @kind
 * (@heap: its heap id, -1 when not known).  A START on an auto-heap
 * buffer (or one whose heap the fuzzer does not know) may be its first
 * use, which backs it and may find no memory: ENOMEM (Documentation/
 * ion.rst, the auto heap).
 */
eset_t sync_eset(int kind, int maybe_auto, unsigned long long flags)
{
	if ((flags & ~DMA_BUF_SYNC_VALID_FLAGS_MASK) ||
	    !(flags & DMA_BUF_SYNC_RW))
		return E(EINVAL);
	if (kind == K_BUF && !(flags & DMA_BUF_SYNC_END) && maybe_auto)
		return OK | E(ENOMEM);
	return OK;
}

void op_dmabuf_sync(struct thr *t)
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
	struct dma_buf_sync s;
	int fd = dmabuf_fd(t, &c.fd_kind), err;

	if (fd < 0)
		return;
	s.flags = one_in(t, 10) ? rnd(t) : fl[below(t, IT_ARRAY_SIZE(fl))];
	c.mode = pick_mode(t);
	CALL_ARGS(&c, s.flags);
	call_placed(t, &c, fd, &s, sizeof(s), &err);
	check(t, &c, err,
	      by_mode(c.mode, 0, sync_eset(c.fd_kind, fd_maybe_auto_fd(t, fd),
			       s.flags)),
	      NULL);
}

void op_set_name(struct thr *t)
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
	CALL_ARGS(&c, len);
	p = place(t, name, len + 1, &c.mode);
	ok = !mode_readable(c.mode) ? E(EFAULT) :
	     len >= DMA_BUF_NAME_LEN ? E(EINVAL) : OK;
	err = call_ioctl(t, &c, fd, p);
	check(t, &c, err, ok, NULL);
}

/* ------------------------------------------------------------------ */
/* mmap, munmap, touching, close, dup, open                            */

static void map_add(struct thr *t, void *addr, size_t len, int prot,
		    int deferred, int kind, int heap, unsigned long long off)
{
	t->maps[t->nmaps].addr = addr;
	t->maps[t->nmaps].len = len;
	t->maps[t->nmaps].prot = prot;
	t->maps[t->nmaps].deferred = deferred;
	t->maps[t->nmaps].kind = kind;
	t->maps[t->nmaps].heap = heap;
	t->maps[t->nmaps].off = off;
	t->nmaps++;
}

/* Where touch_recover() goes back to, while touch() is in a touch. */
static __thread sigjmp_buf touch_env;
static __thread volatile sig_atomic_t touching;

void touch_recover(int sig)
{
	if (sig == SIGBUS && touching) {
		touching = 0;
		siglongjmp(touch_env, 1);
	}
}

/*
 * Read and write a byte of @m at @off.  A mapping of an auto buffer
 * before its first use is backed at this fault, and one that finds no
 * memory (injected, or the fuzzers' own use of it) is SIGBUS
 * (Documentation/ion.rst, the auto heap): counted, not a crash.  A
 * SIGBUS of any other mapping is a violation, recorded with the heap and
 * the offsets; a SIGSEGV is the crash handler's.
 */
static void touch(struct thr *t, struct fmap *m, size_t off)
{
	volatile unsigned char *b = m->addr + off;

	if (sigsetjmp(touch_env, 1)) {
		struct call c = { .name = "touching a mapping",
				  .fd_kind = m->kind };

		if (m->deferred) {
			__atomic_add_fetch(&sh->touch_sigbus, 1,
					   __ATOMIC_RELAXED);
			return;
		}
		CALL_ARGS(&c, m->heap, m->off, m->len, off, m->prot);
		violation(t, &c, 0, "SIGBUS on a mapping of no auto buffer");
		return;
	}
	touching = 1;
	if (m->prot & PROT_READ)
		(void)*b;
	if (m->prot & PROT_WRITE)
		*b = (unsigned char)off;
	touching = 0;
}

/* Does the carveout heap refuse to split mappings (a memmap= region)? */
static int carveout_whole_maps(void)
{
	static int whole = -1;

	if (whole < 0)
		whole = ht_carveout_memmap();
	return whole;
}

void op_munmap(struct thr *t)
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
		/*
		 * unmap the first page only: a carveout on a memmap= region
		 * refuses to split its mappings (Documentation/ion.rst)
		 */
		err = munmap(m->addr, PG) ? errno : 0;
		CALL_ARGS(&c, PG);
		check(t, &c, err, OK | (carveout_whole_maps() ? E(EINVAL) : 0),
		      NULL);
		if (!err) {
			m->addr += PG;
			m->len -= PG;
		}
		return;
	}
	err = munmap(m->addr, m->len) ? errno : 0;
	CALL_ARGS(&c, m->len);
	check(t, &c, err, OK, NULL);
	/*
	 * Under the kernel's fault injection munmap may answer ENOMEM (its
	 * maple tree nodes): the mapping stays, and so must its entry, or
	 * nothing unmaps it and the buffer lives until the process exits.
	 */
	if (!err)
		t->maps[i] = t->maps[--t->nmaps];
	else
		__atomic_add_fetch(&sh->munmap_failed, 1, __ATOMIC_RELAXED);
}

void op_mmap(struct thr *t)
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
	CALL_ARGS(&c, len, prot, flags, off, size);
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
	/*
	 * 7.3 (not 6.12) refuses PROT_EXEC mappings of any dma-buf, ion's
	 * and foreign ones alike, with EPERM: the answer for a file on a
	 * noexec mount.
	 */
	if (kind != K_ION && (prot & PROT_EXEC) && len && !(off & (PG - 1)))
		ok |= E(EPERM);
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
	map_add(t, addr, page_align(len), prot, fd_maybe_auto(t, i), kind,
		kind == K_BUF ? t->fds[i].heap : -1, off);
	touch(t, &t->maps[t->nmaps - 1], 0);
	touch(t, &t->maps[t->nmaps - 1], page_align(len) - 1);
}

void op_touch(struct thr *t)
{
	struct fmap *m;

	if (!t->nmaps)
		return;
	m = &t->maps[below(t, t->nmaps)];
	touch(t, m, below(t, m->len));
}

void op_close(struct thr *t)
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

void op_dup(struct thr *t)
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
	fd_add_heap(t, fd, t->fds[i].kind, t->fds[i].size, t->fds[i].heap);
}

void op_open(struct thr *t)
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
