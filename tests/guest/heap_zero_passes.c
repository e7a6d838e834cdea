// SPDX-License-Identifier: MIT
/*
 * heap_zero_passes: memory fresh from the page allocator is cleared once.
 * With init_on_alloc (Debian's default) the page allocator clears every
 * page it hands out, so a heap that clears it again pays a second pass for
 * nothing (the DMA heap once cleared its buffers three times: issue 22);
 * without it, the heap must clear the pages itself.  Either way a cold
 * cached buffer of N pages costs N page clears, not 2N.
 *
 * Counted by ion_test's zero_watch (kprobes on the kernel's page-clearing
 * routines, calls by this process), around each allocation of a buffer
 * from memory the pools do not hold.  A few more clears are allowed for
 * slab pages an allocation may refill.  A CMA allocation (the DMA heap
 * where CmaTotal is not 0: arm64, the debug kernel) also clears the pages
 * it migrates the range's movable pages to, up to one a page of the
 * buffer: there a second pass is told apart only as twice the clears or
 * more (an arm64 6.1 guest counted 291 for a 1 MiB buffer, 35 migrated).
 * What is not a page clear is not
 * counted: dma_alloc_pages()'s memset() on a non-coherent device (arm64's
 * cached DMA-heap buffers, DOC: ion DMA heap).  Where pages are cleared
 * inline (x86 from 6.19) there is nothing to probe and the test skips.
 */
#include "heap_util.h"

#define WATCH	"/sys/module/ion_test/parameters/zero_watch"
/*
 * Page clears an allocation may add for slab pages of its own: fewer than
 * the smallest size has pages, so a second pass never hides.
 */
#define SLACK	32

/* Count this process's page clears from zero: 0 or -errno. */
static int zp_start(void)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	return ht_write_str(WATCH, pid, 0);
}

/* The page clears counted since zp_start(), or -errno. */
static long zp_clears(void)
{
	char *text = NULL;
	long pid, n;
	int ret;

	ret = it_read_file(WATCH, &text);
	if (ret < 0)
		return ret;
	ret = sscanf(text, "%ld %ld", &pid, &n);
	free(text);
	return ret == 2 && pid == getpid() ? n : -EPROTO;
}

static void check(int ion, const struct it_heap *kh, size_t len)
{
	long pages = (long)(len / (size_t)it_page()), n, most;
	unsigned char *p = NULL;
	long bad = -1;
	int buf, ret;

	most = kh->type == ION_HEAP_TYPE_DMA && ht_meminfo("CmaTotal") > 0 ?
	       2 * pages - 1 : pages + SLACK - 1;

	ht_drop_pools();	/* fresh memory, not pooled chunks */
	ret = zp_start();
	buf = ret ? ret : ht_alloc(ion, len, 0, kh->id, ION_FLAG_CACHED);
	n = buf < 0 ? buf : zp_clears();
	if (n < 0) {
		tap_diag("%s: %s", kh->name, strerror((int)-n));
	} else {
		p = ht_map(buf, len);
		bad = p ? it_check_zero(p, len) : 0;
	}
	tap_ok(n >= pages && n <= most && bad < 0,
	       "%s cached %zu KiB, fresh: its %ld pages cleared once (%ld page clears, at most %ld), reads zero",
	       kh->name, len >> 10, pages, n, most);
	ht_buf_drop(buf, p, len);
}

int main(void)
{
	static const size_t sizes[] = { 256 << 10, 1 << 20 };
	const struct it_heap *kh;
	struct it_heaps hs;
	unsigned int i, s;
	int ion, ret;

	ion = it_setup(&hs);
	ret = ht_test_open();
	if (!tap_ok(ret >= 0, "ion_test loads (%d)", ret)) {
		close(ion);
		return tap_exit();
	}
	close(ret);
	ret = zp_start();
	if (ret < 0) {
		tap_diag("ion_test zero_watch: %s", strerror(-ret));
		tap_skip("fresh memory cleared once",
			 "no page-clearing routine to probe (cleared inline?)");
		close(ion);
		return tap_exit();
	}
	for (i = 0; (kh = it_known_next(&hs, &i)); i++) {
		if (kh->type == ION_HEAP_TYPE_CARVEOUT)
			continue;	/* its memory is no page allocator's */
		for (s = 0; s < IT_ARRAY_SIZE(sizes); s++)
			check(ion, kh, sizes[s]);
	}
	ht_write_str(WATCH, "0\n", 0);
	close(ion);
	return tap_exit();
}
