// SPDX-License-Identifier: MIT
/*
 * Fault injection: every step of /sys/kernel/debug/ion/fail/ failed once
 * (Documentation/debugfs.rst, "fail/").
 *
 * alloc and export, on every heap, through the fd ABI, the handle ABI and
 * the heap's /dev/dma_heap/ion-* node: the call answers ENOMEM (the
 * mask names that heap alone), the step's hits counter moved by one and
 * its times knob is back to 0, no fd, handle or buffer is left (fd table,
 * the client's handles, the debugfs summary), and the next allocation of
 * the same size from that heap, where a buffer full of a pattern was just
 * freed, is all zeroes.  attach through vgem's PRIME import and through
 * ion_test's probe device, map through the probe device (a driver that
 * maps at import; vgem does not on 7.x): ENOMEM, no attachment left, the
 * next import works.  kapi through
 * ion_test's ION_TEST_IOC_KAPI: only its ion_alloc() check fails, and
 * nothing is left.  refill (a heap's fresh chunk from the page allocator)
 * failing for every chunk of one allocation, the pools emptied first, on
 * each heap that reaches it (the system heap must, in all three ways):
 * ENOMEM, nothing left, the next allocation zeroed.  Last, with every
 * knob back to 0, the static key is
 * off again and allocations succeed.
 */
#include <linux/dma-heap.h>

#include "fz_common.h"
#include "heap_util.h"
#include "interop_v4l2.h"
#include "it_fail.h"
#include "ion_test_util.h"
#include "tap.h"
#include "vgem_util.h"

#define LEN		(64 << 10)

static const char *const steps[] = { "alloc", "export", "attach", "map",
				     "kapi", "refill" };

/* Arm @step to fail its next call, with a fresh hits counter. */
static int arm_once(const char *step)
{
	return it_fail_set(step, "hits", 0) || it_fail_set(step, "times", 1);
}

/* "ion-system-contig" for ion_system_contig_heap. */
static void node_path(const char *heap, char *buf, size_t size)
{
	const char *s = strncmp(heap, "ion_", 4) ? heap : heap + 4;
	size_t len = strlen(s), i, n;

	if (len > 5 && !strcmp(s + len - 5, "_heap"))
		len -= 5;
	n = snprintf(buf, size, "/dev/dma_heap/ion-%.*s", (int)len, s);
	for (i = n - len; i < n; i++)
		if (buf[i] == '_')
			buf[i] = '-';
}

/* The three ways to allocate: a dma-buf fd or -errno. */
static int way_fd(int ion, const struct it_heap *kh)
{
	return it_alloc_fd(ion, LEN, 1U << kh->id, ION_FLAG_CACHED);
}

static int way_handle(int ion, const struct it_heap *kh)
{
	return ht_alloc(ion, LEN, 0, kh->id, ION_FLAG_CACHED);
}

static int way_node(int ion, const struct it_heap *kh)
{
	char path[96];
	int node, fd;

	node_path(kh->name, path, sizeof(path));
	node = open(path, O_RDONLY | O_CLOEXEC);
	if (node < 0)
		return -errno;
	fd = fz_node_alloc(node, LEN);
	fd = fd < 0 ? -errno : fd;
	close(node);
	return fd;
}

static const struct {
	const char *name;
	int (*alloc)(int ion, const struct it_heap *kh);
} ways[] = {
	{ "fd ABI", way_fd },
	{ "handle ABI", way_handle },
	{ "dma-heap node", way_node },
};

/* Allocate, fill with a pattern and free: pages the next one may reuse. */
static void dirty(int ion, const struct it_heap *kh)
{
	int buf = way_fd(ion, kh);
	void *p = buf >= 0 ? ht_map(buf, LEN) : NULL;

	if (p) {
		ht_cpu_begin(buf);
		memset(p, 0xa5, LEN);
		ht_cpu_end(buf);
		munmap(p, LEN);
	}
	if (buf >= 0)
		close(buf);
}

/* The next allocation from @kh is zeroed. */
static int next_zeroed(int ion, const struct it_heap *kh)
{
	int buf = way_fd(ion, kh), ok;
	void *p = buf >= 0 ? ht_map(buf, LEN) : NULL;

	ok = p != NULL;
	if (p) {
		ht_cpu_begin(buf);
		ok = it_check_zero(p, LEN) < 0;
		ht_cpu_end(buf);
		munmap(p, LEN);
	}
	if (buf >= 0)
		close(buf);
	return ok;
}

struct snap {
	int fds;
	long long buffers, bytes, handles;
};

static void snap(struct snap *s)
{
	char path[160], name[64];

	it_client_name(name, sizeof(name));
	snprintf(path, sizeof(path), "/sys/kernel/debug/ion/clients/%s", name);
	s->fds = it_count_fds();
	it_summary(&s->buffers, &s->bytes);
	s->handles = it_dfs_file_num(path, "handles");
}

/* One step, armed once, hit by one way of allocating from one heap. */
static void alloc_case(int ion, const char *step, const struct it_heap *kh,
		       unsigned int w)
{
	struct snap a, b;
	int ret;

	dirty(ion, kh);
	snap(&a);
	if (!tap_ok(!arm_once(step), "%s %s %s: armed", step, kh->name,
		    ways[w].name))
		return;
	ret = ways[w].alloc(ion, kh);
	if (ret >= 0)
		close(ret);
	tap_ok(ret == -ENOMEM, "%s %s %s: the allocation fails with ENOMEM "
	       "(%s)", step, kh->name, ways[w].name,
	       ret >= 0 ? "succeeded" : strerror(-ret));
	tap_ok(it_fail_get(step, "hits") == 1 && it_fail_get(step, "times") == 0,
	       "%s %s %s: one failure injected, times back to 0", step,
	       kh->name, ways[w].name);
	snap(&b);
	tap_ok(a.fds == b.fds && a.buffers == b.buffers &&
	       a.bytes == b.bytes && a.handles == b.handles,
	       "%s %s %s: no fd, buffer or handle left (fds %d->%d, buffers "
	       "%lld->%lld, handles %lld->%lld)", step, kh->name,
	       ways[w].name, a.fds, b.fds, a.buffers, b.buffers, a.handles,
	       b.handles);
	tap_ok(next_zeroed(ion, kh), "%s %s %s: the next allocation of the "
	       "same size is zeroed", step, kh->name, ways[w].name);
}

/*
 * refill: every fresh chunk a heap takes from the page allocator fails
 * (probability 100 while one allocation runs, the pools emptied first),
 * so the heap runs out of orders to try.  Heaps that take no chunk from
 * the pools at allocation (contiguous, DMA, carveout, the auto heap
 * before first use) never reach the step: 1 when @kh did.
 */
static int refill_case(int ion, const struct it_heap *kh, unsigned int w)
{
	struct snap a, b;
	long long hits;
	int ret;

	dirty(ion, kh);
	ht_drop_pools();
	snap(&a);
	if (!tap_ok(!it_fail_set("refill", "hits", 0) &&
		    !it_fail_set("refill", "probability", 100),
		    "refill %s %s: armed", kh->name, ways[w].name))
		return 0;
	ret = ways[w].alloc(ion, kh);
	it_fail_set("refill", "probability", 0);
	hits = it_fail_get("refill", "hits");
	if (ret >= 0)
		close(ret);
	if (hits <= 0)
		return 0;
	tap_ok(ret == -ENOMEM, "refill %s %s: the allocation fails with ENOMEM (%s; %lld chunks refused)",
	       kh->name, ways[w].name,
	       ret >= 0 ? "succeeded" : strerror(-ret), hits);
	snap(&b);
	tap_ok(a.fds == b.fds && a.buffers == b.buffers &&
	       a.bytes == b.bytes && a.handles == b.handles,
	       "refill %s %s: no fd, buffer or handle left (fds %d->%d, buffers %lld->%lld, handles %lld->%lld)",
	       kh->name, ways[w].name, a.fds, b.fds, a.buffers, b.buffers,
	       a.handles, b.handles);
	tap_ok(next_zeroed(ion, kh),
	       "refill %s %s: the next allocation of the same size is zeroed",
	       kh->name, ways[w].name);
	return 1;
}

/*
 * Importers that attach and map a buffer at import: 0 or -errno, and a
 * token to release it by.  vgem's PRIME import maps it up to 6.x (7.x
 * maps on first use); ion_test's probe device always does.
 */
static int imp_vgem(int drm, int buf, unsigned int *tok)
{
	return vgem_import(drm, buf, tok);
}

static void rel_vgem(int drm, unsigned int tok)
{
	vgem_close(drm, tok);
}

static int imp_probe(int tfd, int buf, unsigned int *tok)
{
	struct ion_test_import imp;
	int ret = ht_import(tfd, buf, ION_TEST_MODE_PROBE, &imp);

	if (ret)
		return ret;
	*tok = imp.slot;
	if (imp.dma_err)
		ht_release(tfd, imp.slot);
	return imp.dma_err;
}

static void rel_probe(int tfd, unsigned int tok)
{
	ht_release(tfd, tok);
}

struct importer {
	const char *name;
	int (*import)(int dev, int buf, unsigned int *tok);
	void (*release)(int dev, unsigned int tok);
};

static const struct importer vgem = { "vgem's import", imp_vgem, rel_vgem };
static const struct importer probe = { "ion_test's probe import", imp_probe,
				       rel_probe };

/* attach or map through @im's import (on @dev) of a buffer of @kh. */
static void import_case(int ion, int dev, const struct importer *im,
			const char *step, const struct it_heap *kh)
{
	unsigned int tok;
	int buf, ret;

	buf = way_fd(ion, kh);
	if (!tap_ok(buf >= 0, "%s %s: a buffer to import", step, kh->name))
		return;
	if (!tap_ok(!arm_once(step), "%s %s: armed", step, kh->name))
		goto out_close;
	ret = im->import(dev, buf, &tok);
	if (!ret)
		im->release(dev, tok);
	tap_ok(ret == -ENOMEM, "%s %s: %s fails with ENOMEM (%s)", step,
	       kh->name, im->name, ret ? strerror(-ret) : "succeeded");
	tap_ok(it_fail_get(step, "hits") == 1 && it_fail_get(step, "times") == 0,
	       "%s %s: one failure injected, times back to 0", step,
	       kh->name);
	tap_ok(iv_attachments(buf, kh->name) == 0,
	       "%s %s: no attachment left (debugfs)", step, kh->name);
	ret = im->import(dev, buf, &tok);
	tap_ok(!ret, "%s %s: the next import works (%s)", step, kh->name,
	       ret ? strerror(-ret) : "ok");
	if (!ret)
		im->release(dev, tok);
out_close:
	close(buf);
}

/* ion_alloc() of the kernel API, through ion_test. */
static void kapi_case(int ion, const struct it_heap *kh)
{
	struct ion_test_kapi k = { .fd = -1 };
	long long b0, by0, b1, by1;
	unsigned char *p;
	int tfd, ret, i;

	tfd = ht_test_open();
	if (!tap_ok(tfd >= 0, "kapi %s: open " HT_TEST_DEV, kh->name))
		return;
	/* ion_test checks its import reads byte i as i & 0xff (seed 0). */
	k.fd = ht_alloc_map(ion, LEN, kh->id, ION_FLAG_CACHED, &p);
	if (k.fd >= 0) {
		for (i = 0; i < LEN; i++)
			p[i] = (unsigned char)i;
		ht_cpu_end(k.fd);
		munmap(p, LEN);
	}
	k.heap_mask = 1U << kh->id;
	k.len = LEN;
	it_summary(&b0, &by0);
	ret = arm_once("kapi") ?: it_ioctl(tfd, ION_TEST_IOC_KAPI, &k);
	tap_ok(!ret && k.failed == ION_TEST_KAPI_ALLOC,
	       "kapi %s: ion_alloc() fails, nothing else does (ret %d, "
	       "failed %#x)", kh->name, ret, k.failed);
	tap_ok(it_fail_get("kapi", "hits") == 1 && it_fail_get("kapi", "times") == 0,
	       "kapi %s: one failure injected, times back to 0", kh->name);
	if (!ret && k.share_fd >= 0)
		close(k.share_fd);
	it_summary(&b1, &by1);
	tap_ok(b0 == b1 && by0 == by1, "kapi %s: no buffer left (%lld->%lld)",
	       kh->name, b0, b1);
	if (k.fd >= 0)
		close(k.fd);
	close(tfd);
}

int main(void)
{
	const struct it_heap *kh;
	struct it_heaps hs;
	unsigned int i, s, w;
	int ion, drm, tfd, ok;

	ion = it_setup(&hs);
	if (access(IT_FAIL_DIR, F_OK)) {
		tap_ok(0, IT_FAIL_DIR " exists");
		return tap_exit();
	}
	for (s = 0; s < 2; s++)
		for (i = 0; (kh = it_known_next(&hs, &i)); i++)
			for (w = 0; w < IT_ARRAY_SIZE(ways); w++)
				alloc_case(ion, steps[s], kh, w);
	for (i = 0, ok = 0; (kh = it_known_next(&hs, &i)); i++) {
		int hit = 0;

		for (w = 0; w < IT_ARRAY_SIZE(ways); w++)
			hit += refill_case(ion, kh, w);
		if (!strcmp(kh->name, "ion_system_heap"))
			ok = hit == (int)IT_ARRAY_SIZE(ways);
		else if (!hit)
			tap_diag("refill %s: never reached (no pooled chunks at allocation)",
				 kh->name);
	}
	tap_ok(ok, "refill: the system heap reached the step in every way of allocating");
	/* attach: vgem and the probe device; map: the probe device. */
	drm = open_vgem();
	tfd = ht_test_open();
	for (i = 0; (kh = it_known_next(&hs, &i)); i++) {
		if (drm < 0)
			tap_skip("attach", "no vgem");
		else
			import_case(ion, drm, &vgem, "attach", kh);
		if (!tap_ok(tfd >= 0, "open " HT_TEST_DEV))
			continue;
		import_case(ion, tfd, &probe, "attach", kh);
		import_case(ion, tfd, &probe, "map", kh);
	}
	if (tfd >= 0)
		close(tfd);
	if (drm >= 0) {
		close(drm);
		vgem_unload();
	}
	i = 0;
	kh = it_known_next(&hs, &i);
	if (kh)
		kapi_case(ion, kh);

	for (s = 0, ok = 1; s < IT_ARRAY_SIZE(steps); s++)
		ok &= !it_fail_set(steps[s], "times", 0) &&
		      !it_fail_set(steps[s], "hits", 0);
	kh = it_known_next(&hs, &(unsigned int){ 0 });
	tap_ok(ok && kh && next_zeroed(ion, kh),
	       "every knob back to 0: allocations succeed again");
	tap_ok(fz_dfs_wait_clean(NULL, 5000), "debugfs back to zero");
	close(ion);
	return tap_exit();
}
