// SPDX-License-Identifier: MIT
/*
 * A program written against AOSP's libion: <ion/ion.h>, <linux/ion.h> (the
 * legacy kernel header) and <linux/ion_4.12.h> included together, as
 * libion's own users do, with the legacy names (struct ion_allocation_data
 * with a handle, ION_IOC_ALLOC, ion_alloc) and the 4.12 names (struct
 * ion_new_allocation_data, ION_IOC_NEW_ALLOC, struct ion_heap_query,
 * ion_alloc_fd, ion_query_heap_cnt).  The Makefile builds it against the
 * headers and library that `make install` installed, with nothing from the
 * tree on the include path, -Wall -Wextra -Werror; in the guest it
 * allocates through both ABIs and checks the data through the other one.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ion/ion.h>
#include <linux/ion.h>
#include <linux/ion_4.12.h>

#include "../guest/lib/tap.h"

/* The legacy names are the handle ABI, the 4.12 names the fd ABI. */
_Static_assert(ION_IOC_ALLOC == (sizeof(size_t) == 8 ? 0xC0204900 : 0xC0144900),
	       "ION_IOC_ALLOC is the handle ABI's ALLOC");
_Static_assert(ION_IOC_NEW_ALLOC == 0xC0184900, "ION_IOC_NEW_ALLOC");
_Static_assert(ION_IOC_HEAP_QUERY == 0xC0184908, "ION_IOC_HEAP_QUERY");
_Static_assert(ION_IOC_FREE == 0xC0044901 && ION_IOC_SHARE == 0xC0084904,
	       "FREE and SHARE");
_Static_assert(sizeof(struct ion_heap_data) == MAX_HEAP_NAME + 20,
	       "struct ion_heap_data");
_Static_assert(ION_HEAP_TYPE_SYSTEM == 0 && ION_NUM_HEAPS == 16,
	       "enum ion_heap_type");

#define LEN (16 * 4096)

static void fill(unsigned char *p, size_t len, unsigned char seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(seed + i * 7);
}

static int same(const unsigned char *p, size_t len, unsigned char seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (unsigned char)(seed + i * 7))
			return 0;
	return 1;
}

static int zero(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

/* The system heap's id from both HEAP_QUERY paths, or -1. */
static int query_heaps(int fd)
{
	struct ion_heap_data *a, *b;
	struct ion_heap_query q;
	int cnt = 0, ret, id = -1;

	ret = ion_query_heap_cnt(fd, &cnt);
	if (!tap_ok(ret == 0 && cnt > 0, "ion_query_heap_cnt: %d heaps", cnt))
		return -1;
	a = calloc(cnt, sizeof(*a));
	b = calloc(cnt, sizeof(*b));
	if (!a || !b)
		abort();
	ret = ion_query_get_heaps(fd, cnt, a);
	tap_ok(ret == 0, "ion_query_get_heaps");
	memset(&q, 0, sizeof(q));
	q.cnt = cnt;
	q.heaps = (uintptr_t)b;
	ret = ioctl(fd, ION_IOC_HEAP_QUERY, &q);
	tap_ok(ret == 0 && q.cnt == (unsigned int)cnt &&
		!memcmp(a, b, cnt * sizeof(*a)),
		"ION_IOC_HEAP_QUERY with struct ion_heap_query: the same heaps");
	for (int i = 0; i < cnt; i++)
		if (!strncmp(a[i].name, "ion_system_heap", MAX_HEAP_NAME) &&
		    a[i].type == ION_HEAP_TYPE_SYSTEM)
			id = (int)a[i].heap_id;
	tap_ok(id == 0, "struct ion_heap_data: ion_system_heap has id 0");
	free(a);
	free(b);
	return id;
}

/* Legacy names: ALLOC, MAP, SHARE, IMPORT, SYNC, FREE by hand and by libion. */
static void legacy_raw(int fd)
{
	struct ion_allocation_data a = {
		.len = LEN, .align = 0, .heap_id_mask = ION_HEAP_SYSTEM_MASK,
		.flags = ION_FLAG_CACHED,
	};
	struct ion_fd_data m = { .fd = -1 }, s = { .fd = -1 };
	struct ion_handle_data f = { 0 };
	ion_user_handle_t h2 = 0;
	unsigned char *p = MAP_FAILED, *q = NULL;
	int share = -1, mfd = -1;

	if (!tap_ok(!ioctl(fd, ION_IOC_ALLOC, &a) && a.handle > 0,
		     "ION_IOC_ALLOC with struct ion_allocation_data: a handle"))
		return;
	m.handle = a.handle;
	if (tap_ok(!ioctl(fd, ION_IOC_MAP, &m) && m.fd >= 0,
		    "ION_IOC_MAP with struct ion_fd_data"))
		p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd, 0);
	if (tap_ok(p != MAP_FAILED, "mmap of the MAP fd"))
		fill(p, LEN, 3);
	tap_ok(!ion_share(fd, a.handle, &share) && share >= 0, "ion_share");
	tap_ok(!ion_import(fd, share, &h2) && h2 == a.handle,
		"ion_import of the share: the same handle");
	tap_ok(!ion_map(fd, h2, LEN, PROT_READ, MAP_SHARED, 0, &q, &mfd) &&
		p != MAP_FAILED && same(q, LEN, 3),
		"ion_map of the imported handle reads what the MAP fd wrote");
	tap_ok(!ion_sync_fd(fd, share), "ion_sync_fd");
	s.fd = share;
	tap_ok(!ioctl(fd, ION_IOC_SYNC, &s), "ION_IOC_SYNC");
	f.handle = a.handle;
	tap_ok(!ioctl(fd, ION_IOC_FREE, &f) && !ion_free(fd, h2),
		"ION_IOC_FREE and ion_free: once per reference");
	tap_ok(ion_free(fd, h2) == -EINVAL, "a third ion_free is -EINVAL");
	if (p != MAP_FAILED)
		munmap(p, LEN);
	if (q)
		munmap(q, LEN);
	close(m.fd);
	close(mfd);
	close(share);
}

/*
 * 4.12 names: ION_IOC_NEW_ALLOC gives a dma-buf fd; the handle ABI imports
 * it and maps it, and sees what the fd's mapping wrote.  Then libion's
 * ion_alloc + ion_map, and ion_alloc_fd.
 */
static void new_alloc(int fd, int system_id)
{
	struct ion_new_allocation_data n = {
		.len = LEN, .heap_id_mask = 1U << system_id, .flags = 0,
	};
	unsigned char *p = MAP_FAILED, *q = NULL;
	ion_user_handle_t h = 0;
	int mfd = -1, afd = -1;

	if (!tap_ok(!ioctl(fd, ION_IOC_NEW_ALLOC, &n) && (int)n.fd >= 0,
		     "ION_IOC_NEW_ALLOC with struct ion_new_allocation_data"))
		return;
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, (int)n.fd, 0);
	if (tap_ok(p != MAP_FAILED, "mmap of the NEW_ALLOC fd"))
		fill(p, LEN, 11);
	tap_ok(!ion_import(fd, (int)n.fd, &h) &&
		!ion_map(fd, h, LEN, PROT_READ, MAP_SHARED, 0, &q, &mfd) &&
		p != MAP_FAILED && same(q, LEN, 11),
		"ion_import + ion_map of a NEW_ALLOC buffer read its data");
	tap_ok(!ion_free(fd, h), "ion_free of the import");
	if (p != MAP_FAILED)
		munmap(p, LEN);
	if (q)
		munmap(q, LEN);
	close(mfd);
	close((int)n.fd);

	q = NULL;
	mfd = -1;
	tap_ok(!ion_alloc(fd, LEN, 0, ION_HEAP_SYSTEM_MASK, 0, &h) &&
		!ion_map(fd, h, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, 0,
			 &q, &mfd),
		"ion_alloc + ion_map");
	if (q) {
		fill(q, LEN, 5);
		tap_ok(same(q, LEN, 5), "ion_map'ed memory holds what was written");
		munmap(q, LEN);
	}
	tap_ok(!ion_free(fd, h), "ion_free");
	close(mfd);

	p = MAP_FAILED;
	if (tap_ok(!ion_alloc_fd(fd, LEN, 0, ION_HEAP_SYSTEM_MASK,
				  ION_FLAG_CACHED, &afd) && afd >= 0 &&
		    lseek(afd, 0, SEEK_END) == LEN, "ion_alloc_fd: a %d-byte dma-buf", LEN))
		p = mmap(NULL, LEN, PROT_READ, MAP_SHARED, afd, 0);
	tap_ok(p != MAP_FAILED && zero(p, LEN),
		"ion_alloc_fd's buffer is mapped and reads zero");
	if (p != MAP_FAILED)
		munmap(p, LEN);
	close(afd);
}

int main(void)
{
	int fd = ion_open(), id;

	if (!tap_ok(fd >= 0, "ion_open"))
		return 1;
	tap_ok(ion_is_legacy(fd) == 1,
		"ion_is_legacy: 1 (ion serves the handle ABI too)");
	id = query_heaps(fd);
	legacy_raw(fd);
	if (id >= 0)
		new_alloc(fd, id);
	tap_ok(ion_close(fd) == 0, "ion_close");
	return tap_exit();
}
