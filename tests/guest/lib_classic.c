// SPDX-License-Identifier: MIT
/*
 * libion's classic AOSP functions against the real module: results, the
 * -errno convention (-EBADF for a bad fd, -EINVAL for NULL out-pointers,
 * kernel errors passed through), and the ABI probe.  Written the way an
 * Android program uses <ion/ion.h>.
 */
#include <sys/wait.h>
#include <ion/ion.h>

#include "ion_test_util.h"

/* The names Android programs use must all exist. */
static const unsigned int aosp_names[] = {
	ION_HEAP_SYSTEM_MASK, ION_HEAP_TYPE_SYSTEM, ION_HEAP_TYPE_DMA,
	ION_HEAP_TYPE_DMA_MASK, ION_FLAG_CACHED, ION_FLAG_CACHED_NEEDS_SYNC,
};

static void heap_cases(int fd, const struct it_heap *k)
{
	size_t len = 8 * it_page();
	ion_user_handle_t h = 0, h2 = 0;
	unsigned char *p = NULL, *q = NULL;
	int share = -1, map_fd = -1, map2 = -1, afd = -1, ret;

	ret = ion_alloc(fd, len, 0, 1U << k->id, 0, &h);
	if (!tap_ok(ret == 0 && h > 0, "%s: ion_alloc", k->name)) {
		tap_diag("ion_alloc: %d", ret);
		return;
	}
	ret = ion_map(fd, h, len, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &p,
		      &map_fd);
	tap_ok(ret == 0 && p && map_fd >= 0, "%s: ion_map", k->name);
	if (p)
		it_fill(p, len, 9);
	ret = ion_map(fd, h, it_page(), PROT_READ, MAP_SHARED, it_page(), &q,
		      &map2);
	tap_ok(ret == 0 && p && !memcmp(q, p + it_page(), it_page()),
	       "%s: ion_map at an offset sees the same bytes", k->name);
	ret = ion_share(fd, h, &share);
	tap_ok(ret == 0 && share >= 0 && it_ino(share) == it_ino(map_fd),
	       "%s: ion_share gives the same dma-buf", k->name);
	tap_ok(ion_sync_fd(fd, share) == 0, "%s: ion_sync_fd", k->name);
	ret = ion_import(fd, share, &h2);
	tap_ok(ret == 0 && h2 == h, "%s: ion_import of own share: same handle",
	       k->name);
	tap_ok(ion_free(fd, h) == 0 && ion_free(fd, h) == 0,
	       "%s: ion_free twice after import", k->name);
	tap_ok(ion_free(fd, h) == -EINVAL, "%s: third ion_free is -EINVAL",
	       k->name);
	if (p)
		munmap(p, len);
	if (q)
		munmap(q, it_page());
	close(map_fd);
	close(map2);
	close(share);

	ret = ion_alloc_fd(fd, len, 0, 1U << k->id, ION_FLAG_CACHED, &afd);
	tap_ok(ret == 0 && afd >= 0 && lseek(afd, 0, SEEK_END) == (off_t)len &&
	       it_buffer_in_heap(afd, k->name),
	       "%s: ion_alloc_fd gives a buffer of that heap", k->name);
	if (afd >= 0) {
		p = mmap(NULL, len, PROT_READ, MAP_SHARED, afd, 0);
		tap_ok(p != MAP_FAILED && it_check_zero(p, len) < 0,
		       "%s: ion_alloc_fd buffer reads zero", k->name);
		if (p != MAP_FAILED)
			munmap(p, len);
		close(afd);
	}
}

static void error_cases(int fd)
{
	ion_user_handle_t h;
	unsigned char *p;
	int out, cnt, pipefd[2];

	it_expect(ion_alloc(fd, 4096, 0, ION_HEAP_SYSTEM_MASK, 0, NULL), EINVAL,
		  "ion_alloc with NULL handle");
	it_expect(ion_alloc_fd(fd, 4096, 0, ION_HEAP_SYSTEM_MASK, 0, NULL),
		  EINVAL, "ion_alloc_fd with NULL handle_fd");
	it_expect(ion_share(fd, 1, NULL), EINVAL, "ion_share with NULL share_fd");
	it_expect(ion_import(fd, 0, NULL), EINVAL, "ion_import with NULL handle");
	it_expect(ion_map(fd, 1, 4096, PROT_READ, MAP_SHARED, 0, NULL, &out),
		  EINVAL, "ion_map with NULL ptr");
	it_expect(ion_map(fd, 1, 4096, PROT_READ, MAP_SHARED, 0, &p, NULL),
		  EINVAL, "ion_map with NULL map_fd");
	it_expect(ion_query_heap_cnt(fd, NULL), EINVAL,
		  "ion_query_heap_cnt with NULL cnt");

	it_expect(ion_alloc(-1, 4096, 0, ION_HEAP_SYSTEM_MASK, 0, &h), EBADF,
		  "ion_alloc on fd -1");
	it_expect(ion_alloc_fd(-1, 4096, 0, ION_HEAP_SYSTEM_MASK, 0, &out),
		  EBADF, "ion_alloc_fd on fd -1");
	it_expect(ion_free(-1, 1), EBADF, "ion_free on fd -1");
	it_expect(ion_share(-1, 1, &out), EBADF, "ion_share on fd -1");
	it_expect(ion_import(-1, 0, &h), EBADF, "ion_import on fd -1");
	it_expect(ion_query_heap_cnt(-1, &cnt), EBADF,
		  "ion_query_heap_cnt on fd -1");
	it_expect(ion_query_get_heaps(-1, 0, NULL), EBADF,
		  "ion_query_get_heaps on fd -1");
	it_expect(ion_close(-1), EBADF, "ion_close on fd -1");

	it_expect(ion_alloc(fd, 4096, 0, 0, 0, &h), ENODEV,
		  "ion_alloc with mask 0 passes -ENODEV through");
	it_expect(ion_alloc_fd(fd, 0, 0, ION_HEAP_SYSTEM_MASK, 0, &out), EINVAL,
		  "ion_alloc_fd with len 0 passes -EINVAL through");
	/*
	 * align 3 is ignored, as 3.10-4.11 did, 0x3000 rounded up to 0x4000;
	 * one with no power of two above it is refused
	 */
	it_expect(ion_alloc(fd, 4096, SIZE_MAX, ION_HEAP_SYSTEM_MASK, 0, &h),
		  EINVAL, "ion_alloc with align SIZE_MAX passes -EINVAL through");
	it_expect(ion_free(fd, 0x7654321), EINVAL, "ion_free of an unknown handle");
	if (!pipe(pipefd)) {
		it_expect(ion_import(fd, pipefd[0], &h), EINVAL,
			  "ion_import of a pipe");
		close(pipefd[0]);
		close(pipefd[1]);
	}
	it_expect(ion_import(fd, -1, &h), EBADF, "ion_import of fd -1");
}

/*
 * In a child, before this process asked anything: /dev/null answers
 * ION_IOC_FREE with ENOTTY as a 4.12 kernel does, and must not teach
 * ion_is_legacy() that the kernel has the fd ABI only.  Exit 0 when
 * /dev/ion is still legacy afterwards and ion_alloc() works.
 */
static int wrong_fd_child(int fd)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ion_user_handle_t h;

	if (null < 0 || ion_is_legacy(null) != 0)
		return 3;
	if (ion_is_legacy(fd) != 1)
		return 1;
	if (ion_alloc(fd, 4096, 0, ION_HEAP_SYSTEM_MASK, 0, &h))
		return 2;
	return ion_free(fd, h) ? 4 : 0;
}

int main(void)
{
	const struct it_heap *k;
	struct ion_heap_data heaps[ION_NUM_HEAP_IDS];
	struct it_totals t0;
	int fd, cnt = -1, ret, status;
	struct it_heaps hs;
	pid_t pid;
	unsigned int i;

	tap_diag("%zu AOSP names present", IT_ARRAY_SIZE(aosp_names));
	it_totals_get(&t0);
	fd = ion_open();
	if (!tap_ok(fd >= 0, "ion_open")) {
		tap_diag("ion_open: %s", strerror(-fd));
		return tap_exit();
	}
	tap_ok(fcntl(fd, F_GETFD) & FD_CLOEXEC, "ion_open fd is close-on-exec");
	pid = fork();
	if (pid == 0)
		_exit(wrong_fd_child(fd));
	status = -1;
	if (pid > 0)
		waitpid(pid, &status, 0);
	tap_diag("wrong-fd child: status %#x", status);
	tap_ok(pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status),
	       "ion_is_legacy on /dev/null (ENOTTY) learns nothing: /dev/ion stays legacy, ion_alloc works");
	tap_ok(ion_is_legacy(fd) == 1,
	       "ion_is_legacy: 1 (ion serves the handle ABI too)");
	tap_ok(ion_is_using_modular_heaps(fd) == 1, "ion_is_using_modular_heaps: 1");
	tap_ok(ion_is_using_modular_heaps(-1) == 0,
	       "ion_is_using_modular_heaps on fd -1: 0");

	ret = ion_query_heap_cnt(fd, &cnt);
	tap_ok(ret == 0 && cnt >= 1, "ion_query_heap_cnt");
	memset(heaps, 0, sizeof(heaps));
	ret = ion_query_get_heaps(fd, cnt, heaps);
	tap_ok(ret == 0 && cnt >= 1 && heaps[0].name[0] &&
	       (cnt < 2 || heaps[0].heap_id > heaps[1].heap_id),
	       "ion_query_get_heaps fills the heaps in priority order");
	it_expect(ion_query_get_heaps(fd, cnt, NULL), 0,
		  "ion_query_get_heaps with NULL buffers succeeds");
	it_expect(ion_query_get_heaps(fd, -1, heaps), EINVAL,
		  "ion_query_get_heaps with cnt -1");

	if (it_heaps_load(fd, &hs))
		hs.cnt = 0;
	for (i = 0; (k = it_known_next(&hs, &i)); i++)
		heap_cases(fd, k);
	error_cases(fd);
	tap_ok(ion_close(fd) == 0, "ion_close");
	it_totals_back(&t0, "nothing left allocated");
	return tap_exit();
}
