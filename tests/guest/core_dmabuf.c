// SPDX-License-Identifier: MIT
/*
 * Core regression tests of the dma-buf side: a real importer (vgem, through
 * DRM PRIME) attaches to ion buffers of every heap, cached and uncached;
 * debugfs counts the attachment; CPU syncs work while it is mapped; an
 * imported buffer outlives its last fd and goes with the import.  An
 * importer with no DMA mask (ion_test's NOMASK mode: a root device, for
 * CPU access only) attaches to a buffer of every heap, its map is refused
 * with EINVAL (the DMA API would warn and map nothing), CPU syncs work
 * with it attached, and it detaches.  An attachment mapped a second time
 * while its first mapping stands gets EBUSY (ion_test's PROBE_TWICE).
 * Also mmap bounds and handle id reuse.
 */
#include <sys/wait.h>

#include "heap_util.h"
#include "vgem_util.h"

static void importer_case(int ion, int drm, const struct it_heap *h,
			  unsigned int flags)
{
	const char *kind = flags & ION_FLAG_CACHED ? "cached" : "uncached";
	size_t len = 16 * it_page();
	long long b0, y0, b1, y1;
	uint32_t gem = 0;
	unsigned char *p;
	int buf, ret;

	buf = it_alloc_fd(ion, len, 1U << h->id, flags);
	if (!tap_ok(buf >= 0, "%s %s: ALLOC", h->name, kind))
		return;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, buf, 0);
	if (p != MAP_FAILED) {
		it_fill(p, len, 7);
		munmap(p, len);
	}
	ret = vgem_import(drm, buf, &gem);
	it_expect(ret, 0, "%s %s: vgem imports the dma-buf", h->name, kind);
	if (ret) {
		close(buf);
		return;
	}
	tap_ok(it_buffer_num(buf, h->name, "attachments") == 1,
	       "%s %s: debugfs counts one attachment", h->name, kind);
	it_expect(it_sync(buf, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW), 0,
		  "%s %s: SYNC_START with a mapped attachment", h->name, kind);
	it_expect(it_sync(buf, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW), 0,
		  "%s %s: SYNC_END with a mapped attachment", h->name, kind);

	it_summary(&b0, &y0);
	close(buf);
	it_summary(&b1, &y1);
	tap_ok(b1 == b0 && y1 == y0,
	       "%s %s: the import keeps the buffer after its last fd closed",
	       h->name, kind);
	it_expect(vgem_close(drm, gem), 0, "%s %s: vgem drops the import",
		  h->name, kind);
	it_summary(&b1, &y1);
	tap_ok(b1 == b0 - 1 && y1 == y0 - (long long)len,
	       "%s %s: the buffer goes with the import", h->name, kind);
}

static void importer_cases(int ion, const struct it_heaps *hs)
{
	unsigned int i;
	int drm = open_vgem();

	for (i = 0; i < IT_ARRAY_SIZE(it_known_heaps); i++) {
		const struct it_heap *h = &it_known_heaps[i];

		if (drm < 0) {
			tap_skip(h->name, "no vgem in this guest");
			continue;
		}
		if (!it_heap_find(hs, h->name)) {
			tap_skip(h->name, "heap not registered");
			continue;
		}
		importer_case(ion, drm, h, ION_FLAG_CACHED);
		importer_case(ion, drm, h, 0);
	}
	if (drm >= 0)
		close(drm);
}

/* An importer with no DMA mask attaches to, and detaches from, @h's buffer. */
static void nomask_case(int ion, int tfd, const struct it_heap *h)
{
	const unsigned int rw = DMA_BUF_SYNC_RW;
	struct ion_test_import imp = { 0 };
	int buf, imported, ret;

	buf = it_alloc_fd(ion, 16 * it_page(), 1U << h->id, ION_FLAG_CACHED);
	imported = buf < 0 ? buf : ht_import(tfd, buf, ION_TEST_MODE_NOMASK,
					     &imp);
	ret = imported ? imported : imp.dma_err == -EINVAL ? 0 : -EIO;
	tap_diag("%s: no-mask import %d, map %d", h->name, imported,
		 imp.dma_err);
	tap_ok(!ret && it_buffer_num(buf, h->name, "attachments") == 1,
	       "%s: an importer with no DMA mask attaches (debugfs counts it), its map is refused with EINVAL",
	       h->name);
	if (!ret)
		ret = it_sync(buf, DMA_BUF_SYNC_START | rw);
	if (!ret)
		ret = it_sync(buf, DMA_BUF_SYNC_END | rw);
	it_expect(ret, 0, "%s: CPU syncs with it attached", h->name);
	if (!imported)
		ret = ht_release(tfd, imp.slot);
	tap_ok(!imported && !ret &&
	       it_buffer_num(buf, h->name, "attachments") == 0,
	       "%s: it detaches", h->name);
	if (buf >= 0)
		close(buf);
}

/* An attachment is mapped once at a time: the second map gets EBUSY. */
static void twice_case(int ion, int tfd, const struct it_heap *h)
{
	struct ion_test_import imp = { 0 };
	int buf, imported;

	buf = it_alloc_fd(ion, 16 * it_page(), 1U << h->id, ION_FLAG_CACHED);
	imported = buf < 0 ? buf : ht_import(tfd, buf,
					     ION_TEST_MODE_PROBE_TWICE, &imp);
	tap_ok(!imported && imp.dma_err == -EBUSY,
	       "%s: an attachment mapped again while mapped gets EBUSY (import %d, second map %d)",
	       h->name, imported, imp.dma_err);
	if (!imported && ht_release(tfd, imp.slot))
		tap_diag("%s: release of the import failed", h->name);
	if (buf >= 0)
		close(buf);
}

static void nomask_cases(int ion, const struct it_heaps *hs)
{
	int tfd = ht_test_open();
	unsigned int i;

	for (i = 0; i < IT_ARRAY_SIZE(it_known_heaps); i++) {
		const struct it_heap *h = &it_known_heaps[i];

		if (tfd < 0)
			tap_skip(h->name, "no ion_test");
		else if (!it_heap_find(hs, h->name))
			tap_skip(h->name, "heap not registered");
		else {
			nomask_case(ion, tfd, h);
			twice_case(ion, tfd, h);
		}
	}
	if (tfd >= 0)
		close(tfd);
}

static void mmap_bounds(int ion)
{
	size_t pg = it_page(), len = 4 * pg;
	unsigned char *p;
	int buf;

	buf = it_alloc_fd(ion, len, ION_HEAP_SYSTEM_MASK, ION_FLAG_CACHED);
	if (!tap_ok(buf >= 0, "mmap bounds: ALLOC"))
		return;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, buf, 0);
	if (tap_ok(p != MAP_FAILED, "mmap bounds: whole buffer")) {
		it_fill(p, len, 3);
		munmap(p, len);
	}
	p = mmap(NULL, pg, PROT_READ, MAP_SHARED, buf, 3 * pg);
	tap_ok(p != MAP_FAILED && p[0] == it_pat(3 * pg, 3) &&
	       p[pg - 1] == it_pat(4 * pg - 1, 3),
	       "mmap bounds: the last page at its offset");
	if (p != MAP_FAILED)
		munmap(p, pg);
	p = mmap(NULL, 2 * pg, PROT_READ, MAP_SHARED, buf, 3 * pg);
	tap_ok(p == MAP_FAILED && errno == EINVAL,
	       "mmap bounds: past the end is EINVAL");
	if (p != MAP_FAILED)
		munmap(p, 2 * pg);
	p = mmap(NULL, pg, PROT_READ, MAP_SHARED, buf, 4 * pg);
	tap_ok(p == MAP_FAILED && errno == EINVAL,
	       "mmap bounds: offset at the end is EINVAL");
	if (p != MAP_FAILED)
		munmap(p, pg);
	close(buf);
}

static void handle_ids(int ion)
{
	ion_user_handle_t a = 0, b = 0;
	int ret;

	ret = it_alloc_handle(ion, it_page(), 0, ION_HEAP_SYSTEM_MASK, 0, &a);
	if (!tap_ok(!ret && a > 0, "handle ids: first ALLOC"))
		return;
	it_free(ion, a);
	ret = it_alloc_handle(ion, it_page(), 0, ION_HEAP_SYSTEM_MASK, 0, &b);
	tap_ok(!ret && b > 0 && b != a,
	       "handle ids: a freed id is not handed out again at once");
	it_expect(it_free(ion, a), EINVAL, "handle ids: the freed id stays invalid");
	it_expect(it_free(ion, b), 0, "handle ids: FREE of the new handle");
}

int main(void)
{
	struct it_heaps hs;
	int ion = it_setup(&hs);

	importer_cases(ion, &hs);
	nomask_cases(ion, &hs);
	mmap_bounds(ion);
	handle_ids(ion);
	close(ion);
	vgem_unload();
	return tap_exit();
}
