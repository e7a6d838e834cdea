// SPDX-License-Identifier: MIT
/*
 * The handle ABI (Linux 3.10-4.11) end to end on every heap:
 * ALLOC_LEGACY, MAP, SHARE, IMPORT, SYNC, FREE, CUSTOM, and the
 * one-client-per-process rule (two opens of /dev/ion are one client),
 * and the cap on a handle's count: IMPORT raises it up to 65536
 * (ION_HANDLE_MAX_COUNT), one more is EOVERFLOW (not a saturated count,
 * which the kernel warns about and leaks), a FREE makes room again, and
 * 65536 FREEs drop the handle.
 */
#include "ion_test_util.h"

struct hcase {
	const struct it_heap *heap;
	int ion;
	size_t req;	/* asked for: not page aligned on purpose */
	size_t size;	/* what the buffer must be */
};

static int map_rw(int buf_fd, size_t size, void **p)
{
	*p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, buf_fd, 0);
	return *p == MAP_FAILED ? -errno : 0;
}

static void handle_cases(struct hcase *c)
{
	const char *hn = c->heap->name;
	ion_user_handle_t h = 0, h2 = 0;
	int map_fd, share_fd, ret;
	char exp[64] = "";
	void *p = NULL, *q = NULL;
	off_t end;

	ret = it_alloc_handle(c->ion, c->req, 0, 1U << c->heap->id, 0, &h);
	if (!tap_ok(!ret && h > 0, "%s: ALLOC_LEGACY gives a positive handle",
		    hn)) {
		tap_diag("ALLOC_LEGACY: %s, handle %d", strerror(-ret), h);
		return;
	}

	map_fd = it_share_cmd(c->ion, ION_IOC_MAP, h);
	tap_ok(map_fd >= 0, "%s: MAP gives an fd", hn);
	if (map_fd < 0)
		tap_diag("MAP: %s", strerror(-map_fd));
	it_fdinfo(map_fd, "exp_name", exp, sizeof(exp));
	tap_ok(!strcmp(exp, "ion"), "%s: MAP fd is a dma-buf exported by ion",
	       hn);
	if (strcmp(exp, "ion"))
		tap_diag("exp_name '%s'", exp);
	tap_ok(map_fd >= 0 && (fcntl(map_fd, F_GETFD) & FD_CLOEXEC),
	       "%s: MAP fd is close-on-exec", hn);
	end = map_fd >= 0 ? lseek(map_fd, 0, SEEK_END) : -1;
	if (!tap_ok(end == (off_t)c->size, "%s: len %zu rounded up to %zu",
		    hn, c->req, c->size))
		tap_diag("dma-buf size %lld", (long long)end);

	ret = map_fd >= 0 ? map_rw(map_fd, c->size, &p) : -EBADF;
	if (tap_ok(!ret, "%s: mmap of the MAP fd", hn)) {
		it_fill(p, c->size, 1);
		tap_ok(it_check(p, c->size, 1) < 0, "%s: mmap write/read", hn);
	} else {
		tap_diag("mmap: %s", strerror(-ret));
		tap_skip("mmap write/read", "no mapping");
	}

	share_fd = it_share(c->ion, h);
	tap_ok(share_fd >= 0 && share_fd != map_fd,
	       "%s: SHARE gives another fd", hn);
	ret = share_fd >= 0 ? map_rw(share_fd, c->size, &q) : -EBADF;
	tap_ok(!ret && p && it_check(q, c->size, 1) < 0,
	       "%s: SHARE fd sees the bytes written through MAP fd", hn);
	tap_ok(share_fd >= 0 && it_ino(share_fd) == it_ino(map_fd),
	       "%s: MAP and SHARE fds are the same dma-buf", hn);

	/* DMA_BUF_IOCTL_SYNC and ION_IOC_SYNC on it */
	ret = it_sync(share_fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
	if (!ret)
		ret = it_sync(share_fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
	tap_ok(!ret, "%s: DMA_BUF_IOCTL_SYNC start/end", hn);
	{
		struct ion_fd_data d = { .fd = share_fd };

		tap_errno(ioctl(c->ion, ION_IOC_SYNC, &d), 0,
			  "%s: ION_IOC_SYNC on the share fd", hn);
	}

	ret = it_import(c->ion, share_fd, &h2);
	if (!tap_ok(!ret && h2 == h, "%s: IMPORT of own share gives the same handle",
		    hn))
		tap_diag("IMPORT: %s, handle %d (had %d)", strerror(-ret), h2, h);
	ret = it_free(c->ion, h);
	tap_ok(!ret, "%s: first FREE after IMPORT", hn);
	ret = it_share(c->ion, h);
	tap_ok(ret >= 0, "%s: handle still valid after first FREE", hn);
	if (ret >= 0)
		close(ret);
	ret = it_free(c->ion, h);
	tap_ok(!ret, "%s: second FREE", hn);
	ret = it_share(c->ion, h);
	tap_ok(ret == -EINVAL, "%s: handle gone after second FREE (EINVAL)", hn);
	if (ret >= 0)
		close(ret);

	/* the buffer lives on in its fds and mappings */
	tap_ok(p && it_check(p, c->size, 1) < 0,
	       "%s: mapping still valid after the handle is gone", hn);
	close(map_fd);
	tap_ok(it_buffer_in_heap(share_fd, hn),
	       "%s: debugfs lists the buffer while an fd holds it", hn);
	ret = it_import(c->ion, share_fd, &h2);
	tap_ok(!ret && h2 > 0,
	       "%s: IMPORT after FREE gives a handle again", hn);
	if (!ret)
		it_free(c->ion, h2);
	if (p)
		munmap(p, c->size);
	if (q)
		munmap(q, c->size);
	close(share_fd);
}

static void align_case(int ion, const struct it_heap *heap)
{
	ion_user_handle_t h;
	int ret = it_alloc_handle(ion, 64 * 1024, 64 * 1024, 1U << heap->id,
				  0, &h);

	tap_ok(!ret, "%s: ALLOC_LEGACY with align 64 KiB", heap->name);
	if (!ret)
		it_free(ion, h);
}

/* Two opens of /dev/ion in one process are one client. */
static void one_client_cases(int ion1)
{
	int ion2 = it_open();
	ion_user_handle_t h = 0;
	int ret, fd;

	if (!tap_ok(ion2 >= 0, "second open of " IT_DEV))
		return;
	ret = it_alloc_handle(ion1, 4096, 0, ION_HEAP_SYSTEM_MASK, 0, &h);
	tap_ok(!ret, "one client: ALLOC_LEGACY on the first fd");
	fd = it_share(ion2, h);
	tap_ok(fd >= 0, "one client: handle of the first fd SHAREd on the second");
	if (fd >= 0)
		close(fd);
	it_expect(it_free(ion2, h), 0, "one client: FREE on the second fd");
	ret = it_share(ion1, h);
	tap_ok(ret == -EINVAL, "one client: handle gone on the first fd too");
	if (ret >= 0)
		close(ret);

	ret = it_alloc_handle(ion2, 4096, 0, ION_HEAP_SYSTEM_MASK, 0, &h);
	close(ion2);
	fd = ret ? ret : it_share(ion1, h);
	tap_ok(fd >= 0, "one client: handles survive closing one of its fds");
	if (fd >= 0)
		close(fd);
	if (!ret)
		it_free(ion1, h);
}

#define HANDLE_MAX_COUNT	65536

static void import_cap_case(int ion)
{
	ion_user_handle_t h = 0, h2 = 0;
	int ret, fd, i, bad = 0;

	ret = it_alloc_handle(ion, 4096, 0, ION_HEAP_SYSTEM_MASK, 0, &h);
	fd = ret ? ret : it_share(ion, h);
	if (!tap_ok(fd >= 0, "import cap: ALLOC_LEGACY and SHARE"))
		return;
	for (i = 1; i < HANDLE_MAX_COUNT; i++)
		if (it_import(ion, fd, &h2) || h2 != h)
			bad++;
	ret = it_import(ion, fd, &h2);
	tap_diag("import cap: %d of %d IMPORTs failed, then %d", bad,
		 HANDLE_MAX_COUNT - 1, ret);
	tap_ok(!bad && ret == -EOVERFLOW,
	       "import cap: IMPORT raises a handle to %d counts, one more is EOVERFLOW",
	       HANDLE_MAX_COUNT);
	it_expect(it_free(ion, h), 0, "import cap: FREE at the cap");
	tap_ok(!it_import(ion, fd, &h2) && h2 == h,
	       "import cap: after a FREE, IMPORT succeeds again");
	close(fd);
	for (i = 0, bad = 0; i < HANDLE_MAX_COUNT; i++)
		if (it_free(ion, h))
			bad++;
	tap_ok(!bad && it_free(ion, h) == -EINVAL,
	       "import cap: %d FREEs drop the handle, the next is EINVAL",
	       HANDLE_MAX_COUNT);
}

int main(void)
{
	const struct it_heap *heap;
	struct it_heaps hs;
	int ion = it_setup(&hs);
	long pg = it_page();
	unsigned int i;

	for (i = 0; (heap = it_known_next(&hs, &i)); i++) {
		struct hcase c = {
			.heap = heap, .ion = ion,
			.req = 3 * pg + 1, .size = 4 * pg,
		};

		handle_cases(&c);
		if (heap->contig)
			align_case(ion, heap);
	}
	one_client_cases(ion);
	import_cap_case(ion);
	{
		struct ion_custom_data cd = { .cmd = 0, .arg = 0 };

		tap_errno(ioctl(ion, ION_IOC_CUSTOM, &cd), ENOTTY,
			  "CUSTOM without a heap implementing it is ENOTTY");
	}
	close(ion);
	return tap_exit();
}
