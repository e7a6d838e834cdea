// SPDX-License-Identifier: MIT
/*
 * fuzz_ioctl: random command numbers in the 'I', 'H' and 'b' spaces
 * with random size and direction bits.
 */
#include "fuzz_ioctl.h"

/* ------------------------------------------------------------------ */
/* Random command numbers                                              */

/* fuzz_ioctl runs natively on 64-bit machines only */
#define IOC_RW_ARTICLE(nr, size) \
	_IOC(_IOC_READ | _IOC_WRITE, ION_IOC_MAGIC, nr, size)

/*
 * A node's ALLOC that does not read back (no _IOC_READ, or a struct too
 * short to hold the fd) allocates, as mainline's does, but tells us
 * nothing of the new fd: it stays open and its buffer alive until the
 * worker process exits.  Enough such calls cover that path; past
 * UNKNOWN_FDS_MAX in a worker process such a command becomes
 * DMA_HEAP_IOCTL_ALLOC itself, so that a long run fills neither the fd
 * table (EMFILE everywhere) nor memory.
 */
#define UNKNOWN_FDS_MAX	64
static int unknown_fds;		/* __atomic */

/* Would @cmd on a node allocate an fd we never learn? */
static int node_alloc_unknown(unsigned long cmd)
{
	return _IOC_NR(cmd) == 0 &&
	       (!(_IOC_DIR(cmd) & _IOC_READ) || _IOC_SIZE(cmd) < 12);
}

struct known {
	unsigned long cmd;
	const char *name;
	eset_t handler;		/* what the handler may answer */
	int out_fd_off, out_handle_off;	/* -1: none */
};

static const struct known ion_known[] = {
	{ ION_IOC_NEW_ALLOC, "random ION_IOC_NEW_ALLOC", OK | E(ENODEV) |
	  E(EINVAL) | E(ENOMEM) | E(EMFILE), 16, -1 },
	{ ION_IOC_ALLOC_LEGACY, "random ION_IOC_ALLOC_LEGACY", OK | E(ENODEV) |
	  E(EINVAL) | E(ENOMEM) | E(EMFILE), -1, 24 },
	{ ION_IOC_FREE, "random ION_IOC_FREE", OK | E(EINVAL), -1, -1 },
	{ ION_IOC_MAP, "random ION_IOC_MAP", OK | E(EINVAL) | E(EMFILE),
	  4, -1 },
	{ ION_IOC_SHARE, "random ION_IOC_SHARE", OK | E(EINVAL) | E(EMFILE),
	  4, -1 },
	{ ION_IOC_IMPORT, "random ION_IOC_IMPORT", OK | E(EBADF) | E(EINVAL),
	  -1, 0 },
	{ ION_IOC_CUSTOM, "random ION_IOC_CUSTOM", E(ENOTTY), -1, -1 },
	{ ION_IOC_SYNC, "random ION_IOC_SYNC", OK | E(EBADF) | E(EINVAL),
	  -1, -1 },
	{ ION_IOC_HEAP_QUERY, "random ION_IOC_HEAP_QUERY", OK | E(EINVAL),
	  -1, -1 },
	{ ION_IOC_ABI_VERSION, "random ION_IOC_ABI_VERSION", OK, -1, -1 },
	/* the 3.4 (article) ABI's pointer-sized handle, 64-bit callers */
	{ IOC_RW_ARTICLE(1, 8), "random ION_IOC_FREE (3.4, 8 bytes)",
	  OK | E(EINVAL), -1, -1 },
	{ IOC_RW_ARTICLE(2, 16), "random ION_IOC_MAP (3.4, 16 bytes)",
	  OK | E(EINVAL) | E(EMFILE), 8, -1 },
	{ IOC_RW_ARTICLE(4, 16), "random ION_IOC_SHARE (3.4, 16 bytes)",
	  OK | E(EINVAL) | E(EMFILE), 8, -1 },
	{ IOC_RW_ARTICLE(5, 16), "random ION_IOC_IMPORT (3.4, 16 bytes)",
	  OK | E(EBADF) | E(EINVAL), -1, 0 },
};

static const struct known buf_known[] = {
	/* its handler: sync_eset() of the flags */
	{ DMA_BUF_IOCTL_SYNC, "random DMA_BUF_IOCTL_SYNC", OK | E(EINVAL),
	  -1, -1 },
	{ DMA_BUF_SET_NAME_A, "random DMA_BUF_SET_NAME_A", OK | E(EINVAL) |
	  E(EFAULT) | E(ENOMEM), -1, -1 },
	{ DMA_BUF_SET_NAME_B, "random DMA_BUF_SET_NAME_B", OK | E(EINVAL) |
	  E(EFAULT) | E(ENOMEM), -1, -1 },
	{ DMA_BUF_IOCTL_EXPORT_SYNC_FILE,
	  "random DMA_BUF_IOCTL_EXPORT_SYNC_FILE",
	  OK | E(EINVAL) | E(ENOMEM) | E(EMFILE), 4, -1 },
	{ DMA_BUF_IOCTL_IMPORT_SYNC_FILE,
	  "random DMA_BUF_IOCTL_IMPORT_SYNC_FILE",
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

void op_random_cmd(struct thr *t)
{
	static const int magics[] = { 'I', 'I', 'I', 'H', 'b' };
	struct call c = { .name = "random command", .fd_kind = -1 };
	unsigned char data[64];
	const struct known *k = NULL, *tab;
	int target = below(t, 10), fd, i, err, magic, ntab, heap = -1;
	unsigned long long word0;
	unsigned int size;
	unsigned char *p;
	eset_t ok, handler;

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
		heap = i >= 0 ? t->fds[i].heap : -1;
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
	if (c.fd_kind == K_NODE && node_alloc_unknown(c.cmd) &&
	    __atomic_load_n(&unknown_fds, __ATOMIC_RELAXED) >= UNKNOWN_FDS_MAX)
		c.cmd = DMA_HEAP_IOCTL_ALLOC;
	for (i = 0; i < ntab; i++)
		if (tab[i].cmd == c.cmd)
			k = &tab[i];
	size = _IOC_SIZE(c.cmd);
	random_bytes(t, data, sizeof(data));
	c.mode = pick_mode(t);
	if (size > sizeof(data) && c.mode != M_OK)
		c.mode = M_NULL;
	memcpy(&word0, data, sizeof(word0));
	CALL_ARGS(&c, size, word0);
	if (c.fd_kind == K_NODE) {
		/* mainline semantics: only _IOC_NR selects; 0 is ALLOC */
		if (_IOC_NR(c.cmd) == 0)
			ok = OK | E(EINVAL) | E(ENOMEM) | E(EMFILE) | E(EFAULT) |
			     E(ENOTTY) | quota_eset();
		else
			ok = E(EINVAL) | E(ENOTTY);
	} else if (k) {
		c.name = k->name;
		handler = k->handler;
		if (c.cmd == ION_IOC_NEW_ALLOC || c.cmd == ION_IOC_ALLOC_LEGACY)
			handler |= quota_eset();
		if (c.cmd == DMA_BUF_IOCTL_SYNC)	/* the flags: word0 */
			handler = sync_eset(K_BUF, heap < 0 ||
					    heap == ION_HEAP_AUTO_ID, word0);
		/* random bytes: pointers inside (HEAP_QUERY) may be bad */
		ok = by_mode(c.mode, _IOC_DIR(c.cmd) & _IOC_READ,
			     handler | E(EFAULT));
		if (!(_IOC_DIR(c.cmd) & _IOC_WRITE) &&
		    !(_IOC_DIR(c.cmd) & _IOC_READ))
			ok = handler;
		if (c.cmd == DMA_BUF_SET_NAME_A || c.cmd == DMA_BUF_SET_NAME_B)
			ok = handler;	/* the arg is the string itself */
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
	err = call_ioctl(t, &c, fd, p);
	check(t, &c, err, ok, NULL);
	if (err || c.mode != M_OK)
		return;
	/*
	 * A node reports the new fd only through an _IOC_READ command: one
	 * without it (write only) allocates too, as mainline's does, but
	 * leaves the fd unknown to us (bytes 8-11 are still our own zero,
	 * so recording them would take fd 0 for a dma-buf).
	 */
	if (c.fd_kind == K_NODE && node_alloc_unknown(c.cmd)) {
		__atomic_fetch_add(&unknown_fds, 1, __ATOMIC_RELAXED);
	} else if (c.fd_kind == K_NODE && _IOC_NR(c.cmd) == 0) {
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
