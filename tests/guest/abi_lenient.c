// SPDX-License-Identifier: MIT
/*
 * Never stricter than the historical kernel: every input field that the
 * kernels of an ABI ignored is filled with garbage (0xA5 bytes) and the
 * call must succeed, ioctl by ioctl; the 3.4 (LWN article) ABI's
 * pointer-sized handle works.  Built natively and with -m32
 * (compat/abi_lenient.c includes this file).  Documentation/abi-compat.rst
 * has the table these cases come from.
 */
#include <stddef.h>

#include "ion_test_util.h"

#define GARBAGE		0xA5
#define GARBAGE32	0xA5A5A5A5U
/* Garbage in the flag bits no ABI defines; ION_FLAG_CACHED* stay clear. */
#define GARBAGE_FLAGS	(GARBAGE32 & ~ION_FLAGS_VALID)

#if defined(__i386__)
#define ABI "m32"
#else
#define ABI "native"
#endif

/* The 3.4 ABI as the article prints it: heap mask in flags, handle a pointer. */
struct article_allocation_data {
	size_t len;
	size_t align;
	unsigned int flags;
	void *handle;
};

struct article_fd_data {
	void *handle;
	int fd;
};

struct article_handle_data {
	void *handle;
};

#define ART_IOC_ALLOC	_IOWR('I', 0, struct article_allocation_data)
#define ART_IOC_FREE	_IOWR('I', 1, struct article_handle_data)
#define ART_IOC_MAP	_IOWR('I', 2, struct article_fd_data)
#define ART_IOC_SHARE	_IOWR('I', 4, struct article_fd_data)
#define ART_IOC_IMPORT	_IOWR('I', 5, struct article_fd_data)

static off_t fd_size(int fd)
{
	return fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
}

/* fd ABI ALLOC: fd and unused were never read (4.12-5.10, Android 5.x). */
static void alloc_fd(int ion, const struct it_heap *k, unsigned int flags,
		     const char *what)
{
	struct ion_new_allocation_data a;
	int ret;

	memset(&a, GARBAGE, sizeof(a));
	a.len = 4096;
	a.heap_id_mask = 1U << k->id;
	a.flags = flags;
	ret = it_ioctl(ion, ION_IOC_NEW_ALLOC, &a);
	if (it_expect(ret, 0, ABI " %s: ALLOC, %s", k->name, what)) {
		tap_ok(fd_size((int)a.fd) == 4096,
		       ABI " %s: ALLOC, %s: a 4096-byte dma-buf", k->name, what);
		close((int)a.fd);
	}
}

/* Handle ABI ALLOC: handle is output only; align <= PAGE_SIZE was ignored. */
static void alloc_handle(int ion, const struct it_heap *k, size_t align,
			 unsigned int flags, const char *what)
{
	struct ion_allocation_data_legacy a;
	unsigned char tail[sizeof(a)];
	size_t end = offsetof(struct ion_allocation_data_legacy, handle) +
		     sizeof(a.handle);
	int ret;

	memset(&a, GARBAGE, sizeof(a));
	a.len = 4096;
	a.align = align;
	a.heap_id_mask = 1U << k->id;
	a.flags = flags;
	ret = it_ioctl(ion, ION_IOC_ALLOC_LEGACY, &a);
	if (!it_expect(ret, 0, ABI " %s: ALLOC_LEGACY, %s", k->name, what))
		return;
	memset(tail, 0, sizeof(tail));
	tap_ok(a.handle > 0 && !memcmp((unsigned char *)&a + end, tail,
				       sizeof(a) - end),
	       ABI " %s: ALLOC_LEGACY, %s: handle %d, tail padding cleared",
	       k->name, what, a.handle);
	it_expect(it_free(ion, a.handle), 0, ABI " %s: ALLOC_LEGACY, %s: FREE",
		  k->name, what);
}

/* SHARE/MAP (fd out), IMPORT (handle out), SYNC (handle unread). */
static void fd_data_cmds(int ion)
{
	static const struct {
		const char *name;
		unsigned long cmd;
	} shares[] = {
		{ "SHARE", ION_IOC_SHARE },
		{ "MAP", ION_IOC_MAP },
	};
	ion_user_handle_t h;
	struct ion_fd_data d;
	unsigned int i;
	int fd = -1, ret;

	ret = it_alloc_handle(ion, 4096, 0, ION_HEAP_SYSTEM_MASK, 0, &h);
	if (!it_expect(ret, 0, ABI " handle for SHARE/MAP/IMPORT/SYNC"))
		return;
	for (i = 0; i < IT_ARRAY_SIZE(shares); i++) {
		memset(&d, GARBAGE, sizeof(d));
		d.handle = h;
		ret = it_ioctl(ion, shares[i].cmd, &d);
		if (it_expect(ret, 0, ABI " %s: fd 0xA5..", shares[i].name) &&
		    tap_ok(fd_size(d.fd) == 4096, ABI " %s: the buffer's fd",
			   shares[i].name)) {
			if (fd >= 0)
				close(fd);
			fd = d.fd;
		}
	}
	if (fd >= 0) {
		memset(&d, GARBAGE, sizeof(d));
		d.fd = fd;
		ret = it_ioctl(ion, ION_IOC_IMPORT, &d);
		if (it_expect(ret, 0, ABI " IMPORT: handle 0xA5.."))
			tap_ok(d.handle == h, ABI " IMPORT: the same handle");
		if (!ret)
			it_free(ion, h);
		memset(&d, GARBAGE, sizeof(d));
		d.fd = fd;
		it_expect(it_ioctl(ion, ION_IOC_SYNC, &d), 0,
			  ABI " SYNC: handle 0xA5..");
		close(fd);
	}
	it_expect(it_free(ion, h), 0, ABI " FREE after SHARE/MAP/IMPORT");
}

/* HEAP_QUERY: the array's old contents, and cnt without an array. */
static void heap_query(int ion, const struct it_heaps *hs)
{
	struct ion_heap_data h[ION_NUM_HEAP_IDS];
	struct ion_heap_query q;

	memset(&q, 0, sizeof(q));
	q.cnt = GARBAGE32;
	it_expect(it_ioctl(ion, ION_IOC_HEAP_QUERY, &q), 0,
		  ABI " HEAP_QUERY: heaps 0, cnt 0xA5..");
	tap_ok(q.cnt == hs->cnt, ABI " HEAP_QUERY: heaps 0 gives the count");
	memset(h, GARBAGE, sizeof(h));
	memset(&q, 0, sizeof(q));
	q.cnt = hs->cnt;
	q.heaps = (uintptr_t)h;
	it_expect(it_ioctl(ion, ION_IOC_HEAP_QUERY, &q), 0,
		  ABI " HEAP_QUERY: array full of 0xA5");
	tap_ok(q.cnt == hs->cnt && !h[0].reserved0 && !h[0].reserved1 &&
	       !h[0].reserved2 && !strcmp(h[0].name, hs->h[0].name),
	       ABI " HEAP_QUERY: entries overwritten, reserved fields 0");
}

static void abi_version_custom(int ion)
{
	struct ion_custom_data c;
	uint32_t v = GARBAGE32;

	it_expect(it_ioctl(ion, ION_IOC_ABI_VERSION, &v), 0,
		  ABI " ABI_VERSION: buffer 0xA5..");
	tap_ok(v == ION_ABI_VERSION, ABI " ABI_VERSION: %u", v);
	/* Every historic kernel: -ENOTTY when no heap has custom commands. */
	memset(&c, GARBAGE, sizeof(c));
	it_expect(it_ioctl(ion, ION_IOC_CUSTOM, &c), ENOTTY,
		  ABI " CUSTOM: cmd and arg 0xA5..");
}

/*
 * The 3.4 ABI.  32-bit: a 16-byte ALLOC of its own.  64-bit: the 3.10
 * ALLOC's number and size; the handle comes back in the pointer's low half
 * and the high half is cleared, whatever the caller left there.
 */
static void article(int ion, int zeroed)
{
	const char *how = zeroed ? "struct zeroed" : "handle 0xA5..";
	struct article_allocation_data a;
	struct article_fd_data d, imp;
	struct article_handle_data f;
	int ret;

	memset(&a, zeroed ? 0 : GARBAGE, sizeof(a));
	a.len = 3 * 4096 - 5;
	a.align = 0;
	a.flags = ION_HEAP_SYSTEM_MASK;
	ret = it_ioctl(ion, ART_IOC_ALLOC, &a);
	if (!it_expect(ret, 0, ABI " article ALLOC (%zu bytes), %s",
		       sizeof(a), how))
		return;
	tap_ok((uintptr_t)a.handle > 0 && (uintptr_t)a.handle < 0x80000000U,
	       ABI " article ALLOC, %s: handle %p is a handle id", how,
	       a.handle);
	memset(&d, GARBAGE, sizeof(d));
	d.handle = a.handle;
	ret = it_ioctl(ion, ART_IOC_SHARE, &d);
	if (it_expect(ret, 0, ABI " article SHARE (%zu bytes), %s",
		      sizeof(d), how)) {
		tap_ok(fd_size(d.fd) == 3 * 4096,
		       ABI " article SHARE, %s: the buffer's fd", how);
		memset(&imp, GARBAGE, sizeof(imp));
		imp.fd = d.fd;
		ret = it_ioctl(ion, ART_IOC_IMPORT, &imp);
		it_expect(ret, 0, ABI " article IMPORT, %s", how);
		tap_ok(!ret && imp.handle == a.handle,
		       ABI " article IMPORT, %s: the same handle", how);
		if (!ret) {
			f.handle = imp.handle;
			it_ioctl(ion, ART_IOC_FREE, &f);
		}
		close(d.fd);
	}
	memset(&d, GARBAGE, sizeof(d));
	d.handle = a.handle;
	ret = it_ioctl(ion, ART_IOC_MAP, &d);
	if (it_expect(ret, 0, ABI " article MAP, %s", how))
		close(d.fd);
	f.handle = a.handle;
	it_expect(it_ioctl(ion, ART_IOC_FREE, &f), 0,
		  ABI " article FREE (%zu bytes), %s", sizeof(f), how);
	it_expect(it_ioctl(ion, ART_IOC_FREE, &f), EINVAL,
		  ABI " article FREE again, %s", how);
}

int main(void)
{
	const struct it_heap *k;
	struct it_heaps hs;
	unsigned int i;
	int ion;

	ion = it_setup(&hs);
	for (i = 0; (k = it_known_next(&hs, &i)); i++) {
		alloc_fd(ion, k, 0, "fd and unused 0xA5..");
		alloc_fd(ion, k, GARBAGE_FLAGS, "unknown flag bits 0xA5..");
		alloc_handle(ion, k, 0, 0, "handle 0xA5..");
		alloc_handle(ion, k, 3, 0, "align 3");
		alloc_handle(ion, k, 0, GARBAGE_FLAGS,
			     "unknown flag bits 0xA5..");
	}
	fd_data_cmds(ion);
	heap_query(ion, &hs);
	abi_version_custom(ion);
	article(ion, 1);
	article(ion, 0);
	close(ion);
	return tap_exit();
}
