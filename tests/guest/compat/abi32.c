// SPDX-License-Identifier: MIT
/*
 * 32-bit callers on the 64-bit kernel (built with gcc -m32, no libion):
 * the handle ABI with its 32-bit struct sizes (ALLOC_LEGACY is 20 bytes,
 * CUSTOM 8) and the fd ABI (same layout as 64-bit, pointers in __u64),
 * end to end on every heap, with the main errno rows.
 */
#include "ion_test_util.h"

#if !defined(__i386__)
#error "build this with gcc -m32"
#endif

_Static_assert(sizeof(struct ion_allocation_data_legacy) == 20,
	       "handle-ABI ALLOC is 20 bytes for 32-bit callers");
_Static_assert(ION_IOC_ALLOC_LEGACY == 0xC0144900, "ALLOC_LEGACY number");
_Static_assert(ION_IOC_CUSTOM == 0xC0084906, "CUSTOM number");
_Static_assert(ION_IOC_NEW_ALLOC == 0xC0184900, "ALLOC number");
_Static_assert(ION_IOC_FREE == 0xC0044901, "FREE number");
_Static_assert(ION_IOC_MAP == 0xC0084902, "MAP number");
_Static_assert(ION_IOC_SHARE == 0xC0084904, "SHARE number");
_Static_assert(ION_IOC_IMPORT == 0xC0084905, "IMPORT number");
_Static_assert(ION_IOC_SYNC == 0xC0084907, "SYNC number");
_Static_assert(ION_IOC_HEAP_QUERY == 0xC0184908, "HEAP_QUERY number");
_Static_assert(ION_IOC_ABI_VERSION == 0x80044909, "ABI_VERSION number");

static void *map(int fd, size_t len, off_t off)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
}

static void handle_abi(int ion, const struct it_heap *k, size_t size)
{
	const char *hn = k->name;
	ion_user_handle_t h = 0, h2 = 0;
	unsigned char *p, *q;
	int fd, ret;
	long pg = it_page();

	ret = it_alloc_handle(ion, size - 100, 0, 1U << k->id, 0, &h);
	if (!it_expect(ret, 0, "m32 %s: ALLOC_LEGACY (20 bytes)", hn))
		return;
	tap_ok(h > 0, "m32 %s: handle is positive", hn);
	fd = it_share(ion, h);
	it_expect(fd, 0, "m32 %s: SHARE", hn);
	tap_ok(fd >= 0 && lseek(fd, 0, SEEK_END) == (off_t)size,
	       "m32 %s: size rounded up to pages", hn);
	tap_ok(fd >= 0 && it_buffer_in_heap(fd, hn),
	       "m32 %s: buffer listed in heaps/%s", hn, hn);
	p = fd >= 0 ? map(fd, size, 0) : MAP_FAILED;
	if (tap_ok(p != MAP_FAILED, "m32 %s: mmap", hn)) {
		tap_ok(it_check_zero(p, size) < 0, "m32 %s: new buffer reads zero",
		       hn);
		it_fill(p, size, 5);
		tap_ok(it_check(p, size, 5) < 0, "m32 %s: mmap write/read", hn);
		q = map(fd, pg, pg);
		tap_ok(q != MAP_FAILED && !memcmp(q, p + pg, pg),
		       "m32 %s: mmap at an offset", hn);
		if (q != MAP_FAILED)
			munmap(q, pg);
		munmap(p, size);
	}
	{
		struct ion_fd_data d = { .fd = fd };

		it_expect(it_ioctl(ion, ION_IOC_SYNC, &d), 0,
			  "m32 %s: ION_IOC_SYNC", hn);
	}
	it_expect(it_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW), 0,
		  "m32 %s: DMA_BUF_IOCTL_SYNC", hn);
	it_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
	ret = it_import(ion, fd, &h2);
	tap_ok(!ret && h2 == h, "m32 %s: IMPORT of own share: same handle", hn);
	tap_ok(!it_free(ion, h) && !it_free(ion, h),
	       "m32 %s: FREE twice after IMPORT", hn);
	it_expect(it_free(ion, h), EINVAL, "m32 %s: third FREE", hn);
	if (fd >= 0)
		close(fd);
}

static void fd_abi(int ion, const struct it_heap *k, size_t size)
{
	unsigned char *p;
	int fd = it_alloc_fd(ion, size, 1U << k->id, ION_FLAG_CACHED);

	if (!it_expect(fd, 0, "m32 %s: ALLOC (fd ABI)", k->name))
		return;
	p = map(fd, size, 0);
	tap_ok(p != MAP_FAILED && it_check_zero(p, size) < 0,
	       "m32 %s: fd-ABI buffer maps and reads zero", k->name);
	if (p != MAP_FAILED)
		munmap(p, size);
	close(fd);
}

static void errno_rows(int ion, const struct it_heaps *hs)
{
	struct ion_custom_data cd = { 0, 0 };
	ion_user_handle_t h;
	int p[2];

	it_expect(it_alloc_handle(ion, 4096, 0, 0, 0, &h), ENODEV,
		  "m32 ALLOC_LEGACY: mask 0");
	it_expect(it_alloc_handle(ion, 4096, 0, ~it_heaps_mask(hs), 0, &h),
		  ENODEV, "m32 ALLOC_LEGACY: unregistered ids only");
	it_expect(it_alloc_handle(ion, 0, 0, ION_HEAP_SYSTEM_MASK, 0, &h),
		  EINVAL, "m32 ALLOC_LEGACY: len 0");
	/* ignored as by 3.10-4.11 (Documentation/abi-compat.rst) */
	if (it_expect(it_alloc_handle(ion, 4096, 3, ION_HEAP_SYSTEM_MASK, 0,
				      &h), 0, "m32 ALLOC_LEGACY: align 3 ignored"))
		it_free(ion, h);
	if (it_expect(it_alloc_handle(ion, 4096, 0, ION_HEAP_SYSTEM_MASK, 4,
				      &h), 0,
		      "m32 ALLOC_LEGACY: unknown flag ignored"))
		it_free(ion, h);
	it_expect(it_alloc_handle(ion, 0xC0000000u, 0, ION_HEAP_SYSTEM_MASK, 0,
				  &h),
		  ENOMEM, "m32 ALLOC_LEGACY: 3 GiB");
	it_expect(it_ioctl(ion, ION_IOC_ALLOC_LEGACY, NULL), EFAULT,
		  "m32 ALLOC_LEGACY: arg NULL");
	it_expect(it_ioctl(ion, ION_IOC_ALLOC_LEGACY, (char *)mmap(NULL, 4096,
		  PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)), EFAULT,
		  "m32 ALLOC_LEGACY: arg inaccessible");
	it_expect(it_free(ion, 0), EINVAL, "m32 FREE: handle 0");
	it_expect(it_free(ion, 0x7654321), EINVAL, "m32 FREE: unknown handle");
	it_expect(it_share(ion, 0x7654321), EINVAL, "m32 SHARE: unknown handle");
	if (!pipe(p)) {
		it_expect(it_import(ion, p[0], &h), EINVAL, "m32 IMPORT: pipe");
		close(p[0]);
		close(p[1]);
	}
	it_expect(it_import(ion, -1, &h), EBADF, "m32 IMPORT: fd -1");
	it_expect(it_ioctl(ion, ION_IOC_CUSTOM, &cd), ENOTTY,
		  "m32 CUSTOM (8 bytes): ENOTTY");
	it_expect(it_alloc_fd(ion, 0, ION_HEAP_SYSTEM_MASK, 0), EINVAL,
		  "m32 ALLOC: len 0");
	it_expect(it_alloc_fd(ion, 4096, 0, 0), ENODEV, "m32 ALLOC: mask 0");
	it_expect(it_alloc_fd(ion, 3ULL << 30, ION_HEAP_SYSTEM_MASK, 0), ENOMEM,
		  "m32 ALLOC: 3 GiB");
	it_expect(it_alloc_fd(ion, ~0ULL, ION_HEAP_SYSTEM_MASK, 0), EINVAL,
		  "m32 ALLOC: len ~0 overflows");
}

int main(void)
{
	const struct it_heap *k;
	struct it_totals t0;
	struct it_heaps hs;
	int ion, ret;
	__u32 ver = 0;
	unsigned int i;

	it_totals_get(&t0);
	ion = it_setup(&hs);
	tap_ok(hs.cnt > 0 && it_heap_find(&hs, ION_SYSTEM_HEAP_NAME),
	       "m32 HEAP_QUERY lists the system heap");
	ret = it_ioctl(ion, ION_IOC_ABI_VERSION, &ver);
	tap_ok(!ret && ver == ION_ABI_VERSION, "m32 ABI_VERSION");
	for (i = 0; (k = it_known_next(&hs, &i)); i++) {
		size_t size = (k->contig ? 4 : 64) * it_page();

		handle_abi(ion, k, size);
		fd_abi(ion, k, size);
	}
	errno_rows(ion, &hs);
	close(ion);
	it_totals_back(&t0, "m32: nothing left allocated");
	return tap_exit();
}
