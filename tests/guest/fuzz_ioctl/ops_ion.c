// SPDX-License-Identifier: MIT
/*
 * fuzz_ioctl: the ion ioctls of both ABIs and DMA_HEAP_IOCTL_ALLOC on
 * the /dev/dma_heap/ion-* nodes, each checked against its documented errnos.
 */
#include "fuzz_ioctl.h"

/* ------------------------------------------------------------------ */
/* ion ioctls                                                          */

/*
 * What an allocation may answer: EINVAL for an argument it refuses (ENODEV
 * too when @enodev, a mask without our heaps), else ENODEV for such a mask,
 * ENOMEM for more than all of RAM, else @fine, or EDQUOT while a quota
 * applies.
 */
static eset_t alloc_ok(int einval, int enodev, unsigned long long len,
		       eset_t fine)
{
	if (einval)
		return E(EINVAL) | (enodev ? E(ENODEV) : 0);
	if (enodev)
		return E(ENODEV);
	if (len > totalram)
		return E(ENOMEM);
	return fine | quota_eset();
}

/* The heap of a mask naming one of ours alone, else -1. */
static int one_heap(unsigned int mask)
{
	if (!mask || (mask & (mask - 1)) || !(mask & heap_mask))
		return -1;
	return __builtin_ctz(mask);
}

void op_alloc(struct thr *t)
{
	struct ion_new_allocation_data a = { 0 }, *p;
	struct call c = {
		.name = "ION_IOC_NEW_ALLOC", .cmd = ION_IOC_NEW_ALLOC,
		.fd_kind = K_ION,
	};
	int fd = ion_fd(t), sane, err;
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
	if (one_in(t, 4)) {	/* the lenient form: 4.12-5.10 read neither */
		a.fd = LENIENT_GARBAGE;
		a.unused = LENIENT_GARBAGE;
		a.flags |= LENIENT_GARBAGE & ~ION_FLAGS_VALID;
	}
	c.mode = pick_mode(t);
	CALL_ARGS(&c, a.len, a.heap_id_mask, a.flags, a.fd, a.unused);
	/* fd, unused and unknown flag bits are ignored (abi-compat.rst) */
	ok = alloc_ok(len_einval(a.len), !(a.heap_id_mask & heap_mask), a.len,
		      OK | E(ENOMEM) | E(EMFILE));
	p = call_placed(t, &c, fd, &a, sizeof(a), &err);
	check(t, &c, err, by_mode(c.mode, 1, ok), NULL);
	if (!err && c.mode == M_OK)
		new_buf(t, &c, p->fd, a.len, one_heap(a.heap_id_mask));
}

/*
 * An align up to PAGE_SIZE is ignored, as the 3.10-4.11 heaps did; a
 * larger one is rounded up to a power of two, which an align above half
 * of the address space has none of.
 */
static int align_einval(unsigned long long align)
{
	return align > (1ULL << 63);
}

void op_alloc_legacy(struct thr *t)
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
	int fd = ion_fd(t), sane, err;
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
	if (one_in(t, 4)) {	/* the lenient form: handle is output only */
		a.handle = (int)LENIENT_GARBAGE;
		a.flags |= LENIENT_GARBAGE & ~ION_FLAGS_VALID;
	}
	c.mode = pick_mode(t);
	CALL_ARGS(&c, a.len, a.align, a.heap_id_mask, a.flags);
	/* a large alignment may be beyond every heap in the mask */
	ok = alloc_ok(len_einval(a.len) || align_einval(a.align),
		      !(a.heap_id_mask & heap_mask), a.len,
		      OK | E(ENOMEM) | (a.align > PG ? E(EINVAL) : 0));
	p = call_placed(t, &c, fd, &a, sizeof(a), &err);
	check(t, &c, err, by_mode(c.mode, 1, ok), NULL);
	if (!err && c.mode == M_OK) {
		if (p->handle <= 0)
			violation(t, &c, 0, "handle is not a positive id");
		handle_add(t, p->handle);
	}
}

void op_free(struct thr *t)
{
	struct ion_handle_data d;
	struct call c = {
		.name = "ION_IOC_FREE", .cmd = ION_IOC_FREE,
		.fd_kind = K_ION,
	};
	int fd = ion_fd(t), err;

	if (fd < 0)
		return;
	d.handle = pick_handle(t, 1);
	c.mode = pick_mode(t);
	CALL_ARGS(&c, (unsigned int)d.handle);
	call_placed(t, &c, fd, &d, sizeof(d), &err);
	/* (a read-only argument: the handle may be gone and EFAULT said) */
	check(t, &c, err, by_mode(c.mode, 1, OK | E(EINVAL)), NULL);
	if (d.handle <= 0 && !err)
		violation(t, &c, 0, "FREE of a handle id <= 0 succeeded");
}

void op_share(struct thr *t)
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
	d.fd = one_in(t, 4) ? (int)rnd(t) : (int)LENIENT_GARBAGE;
	c.mode = pick_mode(t);
	CALL_ARGS(&c, (unsigned int)d.handle);
	p = call_placed(t, &c, fd, &d, sizeof(d), &err);
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

/*
 * IMPORT and SYNC: an ion_fd_data whose fd is the argument (one of ours of
 * some kind, or a bad number) and whose handle is output only (garbage in,
 * one time in @rnd_one_in random garbage).  Makes and checks the call;
 * returns the argument passed, *@err the call's errno.
 */
static struct ion_fd_data *fd_arg_call(struct thr *t, struct call *c, int fd,
				       uint64_t rnd_one_in, int *err)
{
	struct ion_fd_data d, *p;
	int kind;
	eset_t ok;

	d.fd = pick_fd_arg(t, &kind);
	d.handle = one_in(t, rnd_one_in) ? (int)rnd(t) : (int)LENIENT_GARBAGE;
	c->mode = pick_mode(t);
	CALL_ARGS(c, (unsigned int)d.fd, kind);
	ok = kind == K_BUF ? OK : kind < 0 ? E(EBADF) : E(EINVAL);
	p = call_placed(t, c, fd, &d, sizeof(d), err);
	check(t, c, *err, by_mode(c->mode, 1, ok), NULL);
	return p;
}

void op_import(struct thr *t)
{
	struct call c = {
		.name = "ION_IOC_IMPORT", .cmd = ION_IOC_IMPORT,
		.fd_kind = K_ION,
	};
	struct ion_fd_data *p;
	int fd = ion_fd(t), err;

	if (fd < 0)
		return;
	p = fd_arg_call(t, &c, fd, 4, &err);
	if (!err && c.mode == M_OK) {
		if (p->handle <= 0)
			violation(t, &c, 0, "handle is not a positive id");
		handle_add(t, p->handle);
	}
}

void op_custom(struct thr *t)
{
	struct call c = {
		.name = "ION_IOC_CUSTOM", .cmd = ION_IOC_CUSTOM,
		.fd_kind = K_ION,
	};
	struct ion_custom_data d;
	int fd = ion_fd(t), err;

	if (fd < 0)
		return;
	d.cmd = one_in(t, 2) ? below(t, 16) : (unsigned int)rnd(t);
	d.arg = one_in(t, 2) ? 0 : (unsigned long)rnd(t);
	c.mode = pick_mode(t);
	CALL_ARGS(&c, d.cmd, d.arg);
	call_placed(t, &c, fd, &d, sizeof(d), &err);
	/* no heap implements custom commands */
	check(t, &c, err, mode_readable(c.mode) ? E(ENOTTY) : E(EFAULT), NULL);
}

void op_sync_ion(struct thr *t)
{
	struct call c = {
		.name = "ION_IOC_SYNC", .cmd = ION_IOC_SYNC,
		.fd_kind = K_ION,
	};
	int fd = ion_fd(t), err;

	if (fd >= 0)
		fd_arg_call(t, &c, fd, 2, &err);
}

void op_heap_query(struct thr *t)
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
	CALL_ARGS(&c, q.cnt, amode, q.reserved0, q.reserved1, q.reserved2);
	if (reserved)
		ok = E(EINVAL);
	else if (!q.heaps || !q.cnt || amode <= 4)
		ok = OK;
	else
		ok = E(EFAULT);
	if (amode == 7)
		b_prot(t, PROT_READ);
	memset(t->qbuf, 0xee, 32 * sizeof(*t->qbuf));
	p = call_placed(t, &c, fd, &q, sizeof(q), &err);
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

void op_abi_version(struct thr *t)
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
	p = call_placed(t, &c, fd, &v, sizeof(v), &err);
	check(t, &c, err, c.mode == M_OK ? OK : E(EFAULT), NULL);
	if (!err && c.mode == M_OK && *p != ION_ABI_VERSION)
		violation(t, &c, 0, "version is not ION_ABI_VERSION");
}

/* ------------------------------------------------------------------ */
/* dma-heap nodes                                                      */

int node_fd(struct thr *t)
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

void op_node_alloc(struct thr *t)
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
	CALL_ARGS(&c, a.len, a.fd, a.fd_flags, a.heap_flags);
	einval = a.fd || a.heap_flags || len_einval(a.len) ||
		 (a.fd_flags & ~(O_CLOEXEC | O_ACCMODE));
	ok = alloc_ok(einval, 0, a.len, OK | E(ENOMEM) | E(EMFILE));
	p = call_placed(t, &c, fd, &a, sizeof(a), &err);
	check(t, &c, err, by_mode(c.mode, 1, ok), NULL);
	if (!err && c.mode == M_OK)
		new_buf(t, &c, p->fd, a.len, -1);
}
