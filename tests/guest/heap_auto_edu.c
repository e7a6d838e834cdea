// SPDX-License-Identifier: MIT
/*
 * heap_auto_edu: the auto heap (delayed allocation).  A buffer is backed
 * at its first use, from the constraints of the devices attached then:
 *
 * - allocated and never used, it holds no memory (debugfs, MemFree);
 *   mmap alone does not back it, its first fault does;
 * - first used by the CPU (mmap), it gets the system heap's kind of
 *   backing, zeroed;
 * - first used by QEMU's edu (28-bit DMA mask on x86) without an IOMMU,
 *   it lies below edu's mask in one contiguous range (physical addresses
 *   through ion_test), zeroed, and an edu round trip is data-checked; no
 *   swiotlb slot is used for it (the high-water mark stays 0 in the plain
 *   boot), where a system-heap buffer beside it is out of edu's reach
 *   (ERANGE) or bounced;
 * - ion_test's probe device (64-bit mask) and edu attached together: the
 *   smaller mask wins;
 * - an importer with no DMA mask (ion_test's NOMASK mode, for CPU access
 *   only) is counted in debugfs but constrains nothing: no direct device,
 *   no mask, and the first use (SYNC_START) backs the buffer with
 *   scattered chunks, not one range below a default 32-bit mask;
 * - in the plain x86 boot the low 256 MiB are first filled with held
 *   system-heap buffers, 1 MiB then 64 KiB ones (until the page allocator
 *   gives one above edu's mask), so "below the mask" is a choice ion made,
 *   not luck;
 * - edu attaching late to a scattered CPU-first buffer that is mmapped is
 *   refused with ERANGE (never moved, never bounced), and debugfs says
 *   why; once nothing maps it, the same attach moves it below edu's mask
 *   (contents kept, an edu round trip data-checked);
 * - a buffer the probe device (direct) backed with one range and stays
 *   attached to is not moved to scattered chunks when edu attaches late
 *   and no range below edu's mask is to be had (debugfs fail/contig):
 *   edu's attach fails with ENOMEM, the probe maps it again in one piece;
 * - behind an IOMMU (the rig's IOMMU boot) edu's buffers are scattered
 *   chunks and the round trip still works;
 * - without an IOMMU, an 8 MiB buffer (no contiguous range that large, no
 *   CMA) first used by edu falls back to scattered chunks below its mask,
 *   and the probe device, direct too, maps the same chunks while edu has
 *   them mapped (before, a direct device attaching late to a scattered
 *   backing was refused with ERANGE even when it was that fallback); SKIP
 *   when no fresh chunks below edu's 28-bit mask were to be had;
 * - auto_commit_pct bounds what live buffers may promise.
 *
 * The rig runs it in the plain, IOMMU and swiotlb=force boots (its name
 * matches both patterns).
 */
#include <sys/resource.h>

#include "heap_util.h"
#include "it_fail.h"

#define AUTO		ION_AUTO_HEAP_NAME
#define AUTO_FILE	IT_DEBUGFS "/heaps/" ION_AUTO_HEAP_NAME
#define LEN		(64 * 1024)
#define FALLBACK_LEN	(8 << 20)	/* above x86's 4 MiB largest block */
#define SRC_OFF		8192
#define DST_OFF		12288
#define XFER		ION_TEST_MAX_XFER
#define HIWATER		"/sys/kernel/debug/swiotlb/io_tlb_used_hiwater"

static int bounced;

static long long auto_num(const char *key)
{
	return it_heap_num(AUTO, key);
}

static int auto_alloc(int ion, size_t len, unsigned int flags)
{
	return ht_alloc(ion, len, 0, ION_HEAP_AUTO_ID, flags);
}

/*
 * Does the "detail" cell of @buf's row in the auto heap's file hold each
 * of @want (up to four strings, "" for none)?  Prints the cell.
 */
static int detail_has(int buf, const char *w0, const char *w1,
		      const char *w2, const char *w3)
{
	const char *want[] = { w0, w1, w2, w3 };
	const char *cell;
	struct it_dfs d;
	int row, ok = 0;
	unsigned int i;

	if (it_dfs_load_heap(&d, AUTO) < 0)
		return 0;
	row = it_dfs_find_ino(&d, buf);
	cell = row < 0 ? NULL : it_dfs_cell(&d, row, "detail");
	if (cell) {
		tap_diag("detail: %s", cell);
		ok = 1;
		for (i = 0; i < IT_ARRAY_SIZE(want); i++)
			ok &= strstr(cell, want[i]) != NULL;
	}
	it_dfs_free(&d);
	return ok;
}

static void heap_case(const struct it_heaps *hs)
{
	const struct ion_heap_data *h = it_heap_find(hs, AUTO);

	tap_ok(h && h->heap_id == ION_HEAP_AUTO_ID &&
	       h->type == ION_HEAP_TYPE_AUTO,
	       "HEAP_QUERY lists the auto heap, id %d, type %d",
	       ION_HEAP_AUTO_ID, ION_HEAP_TYPE_AUTO);
	tap_ok(access("/dev/dma_heap/ion-auto", F_OK) == 0,
	       "/dev/dma_heap/ion-auto exists");
}

/* A never-used buffer holds no memory. */
static void unused_case(int ion)
{
	const size_t len = 128 << 20;
	long long free0, free1, backed0 = auto_num("auto_backed_bytes");
	unsigned char *p;
	int buf;

	free0 = ht_meminfo("MemFree");
	buf = auto_alloc(ion, len, ION_FLAG_CACHED);
	if (!tap_ok(buf >= 0, "128 MiB auto buffer allocated"))
		return;
	free1 = ht_meminfo("MemFree");
	tap_diag("MemFree %lld -> %lld KiB, committed %lld, backed %lld",
		 free0 >> 10, free1 >> 10, auto_num("auto_committed_bytes"),
		 auto_num("auto_backed_bytes"));
	tap_ok(auto_num("auto_backed_bytes") == backed0,
	       "never used: debugfs auto_backed_bytes unchanged");
	tap_ok(auto_num("auto_committed_bytes") >= (long long)len,
	       "never used: debugfs counts it as committed");
	tap_ok(free0 - free1 < (long long)len / 4,
	       "never used: MemFree drops by less than a quarter of its size");
	tap_ok(it_buffer_in_heap(buf, AUTO) == 1,
	       "listed in the auto heap's debugfs file");
	tap_ok(detail_has(buf, "state=waiting backing=- devs=0 direct=0 mask=none",
			  "why: no first use yet | failed: -", "", ""),
	       "never used: debugfs detail says waiting, no device");
	p = ht_map(buf, len);
	tap_ok(p && auto_num("auto_backed_bytes") == backed0,
	       "mmap alone backs nothing");
	if (p) {
		p[len - 1] = 1;
		tap_ok(auto_num("auto_backed_bytes") == backed0 + (long long)len,
		       "the first fault backs it");
		munmap(p, len);
	}
	close(buf);
}

/*
 * A private writable mapping of a buffer not yet backed: copy-on-write
 * cannot take pages one fault at a time, so mmap backs it at once; it
 * reads zeroes, and a write stays in the private copy.
 */
static void private_map_case(int ion)
{
	const size_t len = 1 << 20;
	long long backed0 = auto_num("auto_backed_bytes");
	unsigned char *p, *q;
	int buf;

	buf = auto_alloc(ion, len, ION_FLAG_CACHED);
	if (!tap_ok(buf >= 0, "private mapping: auto buffer allocated"))
		return;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, buf, 0);
	if (!tap_ok(p != MAP_FAILED, "MAP_PRIVATE of an unbacked buffer: %s",
		    p == MAP_FAILED ? strerror(errno) : "mapped"))
		goto out;
	tap_ok(auto_num("auto_backed_bytes") == backed0 + (long long)len,
	       "MAP_PRIVATE backs the buffer at mmap");
	tap_ok(it_check_zero(p, len) < 0, "MAP_PRIVATE: reads zeroed memory");
	p[0] = 0x5a;
	q = ht_map(buf, len);
	tap_ok(q && q[0] == 0, "MAP_PRIVATE: a write stays private");
	if (q)
		munmap(q, len);
	munmap(p, len);
out:
	close(buf);
}

/* An importer with no DMA mask maps nothing: it constrains nothing. */
static void nomask_case(int ion, int tfd)
{
	const unsigned int rw = DMA_BUF_SYNC_RW;
	struct ion_test_import imp = { 0 };
	int buf, imported, ret;

	buf = auto_alloc(ion, LEN, ION_FLAG_CACHED);
	imported = buf < 0 ? buf : ht_import(tfd, buf, ION_TEST_MODE_NOMASK,
					     &imp);
	ret = imported ? imported : imp.dma_err == -EINVAL ? 0 : -EIO;
	tap_diag("no-mask import %d, map %d", imported, imp.dma_err);
	tap_ok(!ret && detail_has(buf, "state=waiting",
				  "devs=1 direct=0 mask=none", "", ""),
	       "no-mask importer: attached and counted, no DMA constraint, its map refused");
	if (!ret)
		ret = it_sync(buf, DMA_BUF_SYNC_START | rw);
	tap_ok(!ret && detail_has(buf, "state=backed backing=scattered",
				  "devs=1 direct=0 mask=none", "", ""),
	       "no-mask importer: the first use backs it with scattered chunks");
	if (!ret)
		it_sync(buf, DMA_BUF_SYNC_END | rw);
	if (!imported && ht_release(tfd, imp.slot))
		tap_diag("could not release the no-mask import");
	if (buf >= 0)
		close(buf);
}

/* CPU first: system backing, zeroed; edu attaching late is refused. */
static void cpu_first_case(int ion, int tfd, const struct ion_test_info *info,
			   const char *cname, unsigned int flags)
{
	const size_t len = (1 << 20) + LEN;	/* two chunks at least */
	long long sys0 = auto_num("auto_backed_system");
	struct ion_test_import imp;
	unsigned char *p;
	int buf, ret;

	buf = ht_alloc_map(ion, len, ION_HEAP_AUTO_ID, flags, &p);
	if (!tap_ok(buf >= 0, "%s: CPU-first buffer allocated and mapped",
		    cname))
		return;
	tap_ok(it_check_zero(p, len) < 0, "%s: CPU first: zeroed", cname);
	it_fill(p, len, 7);
	ht_cpu_end(buf);
	tap_ok(auto_num("auto_backed_system") == sys0 + 1,
	       "%s: CPU first: system backing (debugfs)", cname);
	tap_ok(detail_has(buf, "state=backed backing=system devs=0",
			  "why: no device attached at first use (CPU first)",
			  "", ""),
	       "%s: CPU first: debugfs detail says backed, system, why", cname);
	if (!info->has_edu) {
		tap_skip("late edu attach", "no edu device");
		goto out;
	}
	ret = ht_import(tfd, buf, ION_TEST_MODE_EDU_FIRST, &imp);
	if (!tap_ok(!ret, "%s: late edu import", cname))
		goto out;
	tap_diag("late edu attach: %s", strerror(-imp.dma_err));
	if (info->iommu)
		tap_ok(!imp.dma_err,
		       "%s: late edu attach behind an IOMMU fits", cname);
	else
		tap_ok(imp.dma_err == -ERANGE,
		       "%s: late edu attach to scattered memory: ERANGE",
		       cname);
	ht_release(tfd, imp.slot);
	/* A fresh mapping: the old one would show the old pages after a move. */
	munmap(p, len);
	p = ht_map(buf, len);
	ht_cpu_begin(buf);
	tap_ok(p && it_check(p, len, 7) < 0,
	       "%s: contents untouched after the late attach", cname);
out:
	if (p)
		munmap(p, len);
	close(buf);
}

static long long hiwater(void)
{
	char *s = NULL;
	long long v = -1;

	if (it_read_file(HIWATER, &s) >= 0)
		v = strtoll(s, NULL, 10);
	free(s);
	return v;
}

/* Import @buf for edu in @mode and check where its memory lies. */
static int edu_import(int tfd, int buf, unsigned int mode,
		      const struct ion_test_info *info, const char *what,
		      struct ion_test_import *imp)
{
	unsigned long long top = 1ULL << info->dma_bits;

	if (!tap_ok(!ht_import(tfd, buf, mode, imp) && !imp->dma_err,
		    "%s: mapped for edu", what)) {
		tap_diag("dma_err %d", imp->dma_err);
		return -1;
	}
	tap_diag("%s: phys 0x%llx..0x%llx, dma 0x%llx, %u segment(s)", what,
		 imp->cpu_phys, imp->phys_end, imp->dma_addr, imp->dma_segs);
	if (info->iommu)
		return 0;
	tap_ok(imp->phys_end && imp->phys_end <= top,
	       "%s: all of it below edu's %u-bit mask", what, info->dma_bits);
	tap_ok(imp->dma_segs == 1, "%s: one contiguous segment", what);
	return 0;
}

/*
 * No contiguous range of FALLBACK_LEN (above the page allocator's largest
 * block, no CMA): edu's first use falls back to scattered chunks below its
 * mask.  The probe device, direct too and reaching them, then maps the
 * same chunks while edu has them mapped: no refusal, no move.
 */
static void fallback_case(int ion, int tfd)
{
	struct ion_test_import e = { 0 }, p = { 0 };
	int buf, ei, pi = -1;

	buf = auto_alloc(ion, FALLBACK_LEN, ION_FLAG_CACHED);
	ei = buf < 0 ? buf : ht_import(tfd, buf, ION_TEST_MODE_EDU_FIRST, &e);
	if (!ei && e.dma_err == -ERANGE &&
	    detail_has(buf, "failed: no memory below the smallest DMA mask",
		       "", "", "")) {
		/* Fresh chunks come from all of ZONE_DMA32: luck, not ion. */
		tap_skip("scattered fallback", "no chunks below edu's mask");
		tap_skip("scattered fallback shared", "no fallback");
		goto out;
	}
	tap_ok(!ei && !e.dma_err &&
	       detail_has(buf, "backing=scattered", "devs=1 direct=1",
			  "why: direct device, no contiguous range", ""),
	       "%d MiB first used by edu: scattered chunks below its mask",
	       FALLBACK_LEN >> 20);
	if (!ei && !e.dma_err)
		pi = ht_import(tfd, buf, ION_TEST_MODE_PROBE, &p);
	tap_diag("probe import %d, dma_err %d", pi, p.dma_err);
	tap_ok(!pi && !p.dma_err &&
	       detail_has(buf, "backing=scattered", "devs=2 direct=2",
			  "moves=0", "failed: -"),
	       "while edu maps it, the probe device (direct too) maps the same chunks");
	if (!pi)
		ht_release(tfd, p.slot);
out:
	if (!ei)
		ht_release(tfd, e.slot);
	if (buf >= 0)
		close(buf);
}

/* edu first: round trip, data checked, zeroed, no bounce. */
static void edu_first_case(int ion, int tfd, const struct ion_test_info *info,
			   const char *cname, unsigned int flags,
			   unsigned int mode)
{
	const char *how = mode == ION_TEST_MODE_PROBE_EDU ?
			  "probe (64-bit) and edu" : "edu first";
	struct ion_test_import si, di;
	struct ion_test_dma d;
	unsigned char *s = NULL, *t = NULL;
	const char *kind = info->iommu && mode == ION_TEST_MODE_EDU_FIRST ?
			   "scattered" : "contiguous";
	char what[96], key[64];
	long long hw0, n0;
	int src, dst, ok = 0;

	src = auto_alloc(ion, LEN, flags);
	dst = auto_alloc(ion, LEN, flags);
	if (!tap_ok(src >= 0 && dst >= 0, "%s %s: allocate", cname, how))
		goto out;
	snprintf(key, sizeof(key), "auto_backed_%s", kind);
	n0 = auto_num(key);
	hw0 = bounced ? -1 : hiwater();
	if (hw0 > 0)
		ht_write_str(HIWATER, "0", 0);
	snprintf(what, sizeof(what), "%s %s: source", cname, how);
	if (edu_import(tfd, src, mode, info, what, &si))
		goto out;
	snprintf(what, sizeof(what), "%s %s: destination", cname, how);
	if (edu_import(tfd, dst, mode, info, what, &di))
		goto out_src;
	tap_ok(auto_num(key) == n0 + 2, "%s %s: %s backing (%s; debugfs)",
	       cname, how, kind, info->iommu ? "IOMMU" : "direct");
	s = ht_map(src, LEN);
	t = ht_map(dst, LEN);
	if (!tap_ok(s && t, "%s %s: mmap after the first use", cname, how))
		goto out_dst;
	ht_cpu_begin(src);
	tap_ok(it_check_zero(s, LEN) < 0, "%s %s: zeroed", cname, how);
	it_fill(s, LEN, 11);
	ht_cpu_end(src);
	if (!ht_edu_copy(tfd, si.slot, SRC_OFF, di.slot, DST_OFF, XFER, &d)) {
		ht_cpu_begin(dst);
		ok = it_check_zero(t, DST_OFF) < 0 &&
		     !memcmp(t + DST_OFF, s + SRC_OFF, XFER) &&
		     it_check_zero(t + DST_OFF + XFER,
				   LEN - DST_OFF - XFER) < 0;
		ht_cpu_end(dst);
	}
	tap_ok(ok, "%s %s: edu round trip, data checked", cname, how);
	if (bounced)
		tap_skip("no bounce", "swiotlb=force bounces everything");
	else if (hw0 < 0)
		tap_skip("no bounce", "no swiotlb in this boot");
	else
		tap_ok(hiwater() == 0, "%s %s: no swiotlb slot used", cname,
		       how);
out_dst:
	ht_release(tfd, di.slot);
out_src:
	ht_release(tfd, si.slot);
out:
	ht_buf_drop(src, s, LEN);
	ht_buf_drop(dst, t, LEN);
}

#define HOLD_MAX	3000

static int held[HOLD_MAX];
static int nheld;

/*
 * Hold system-heap buffers of @len bytes while they land below @top, so
 * that the page allocator's next blocks of that size lie above it; the
 * physical address of the first one above, or 0 when none came.
 */
static unsigned long long hold_low(int ion, int tfd, unsigned long long top,
				   size_t len)
{
	struct ion_test_import imp;
	int buf;

	while (nheld < HOLD_MAX) {
		buf = ht_alloc(ion, len, 0, ION_HEAP_TYPE_SYSTEM,
			       ION_FLAG_CACHED);
		if (buf < 0)
			return 0;
		if (ht_import(tfd, buf, ION_TEST_MODE_CLIENT, &imp)) {
			close(buf);
			return 0;
		}
		ht_release(tfd, imp.slot);
		if (imp.cpu_phys + len > top) {
			close(buf);
			return imp.cpu_phys;
		}
		held[nheld++] = buf;
	}
	return 0;
}

static void release_held(void)
{
	while (nheld)
		close(held[--nheld]);
}

/*
 * The CPU's first use of @buf: a write through a shared mapping, which
 * backs it with system memory (one chunk for 1 MiB on a fresh guest).
 */
static int cpu_first_use(int buf, size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, buf, 0);

	if (p == MAP_FAILED)
		return -errno;
	p[0] = 1;
	munmap(p, len);
	return 0;
}

/*
 * A move away from one entry that a direct device still uses: the probe
 * device (direct, 64-bit) backs a buffer with one range (or, @cpu_first,
 * finds the one chunk the CPU's first use took and fits it), maps it once
 * and stays attached, as a driver between two uses; edu attaching late
 * needs a range below its mask, and none is to be had there (debugfs
 * fail/contig): the attach fails with ENOMEM and the probe's entry stays,
 * instead of a move to scattered chunks that a device needing one segment
 * could not map again.
 */
static void keep_contig_case(int ion, int tfd,
			     const struct ion_test_info *info,
			     unsigned int cpu_first)
{
	const char *kind = cpu_first ? "backing=system" : "backing=contiguous";
	const char *c = cpu_first ? "keep chunk" : "keep range";
	const size_t len = 1 << 20;
	unsigned long long top = 1ULL << info->dma_bits;
	long long moves0 = auto_num("auto_moves");
	struct ion_test_import pr = { 0 }, e = { 0 }, again = { 0 };
	int buf, ret, pi, ei = -1, i;

	/* Room in the fd table, which the held buffers may fill. */
	for (i = 0; i < 8 && nheld; i++)
		close(held[--nheld]);
	for (i = 0; i < 512; i++) {
		buf = auto_alloc(ion, len, ION_FLAG_CACHED);
		pi = buf < 0 ? buf : cpu_first ? cpu_first_use(buf, len) : 0;
		if (!pi)
			pi = ht_import(tfd, buf, ION_TEST_MODE_PROBE_IDLE, &pr);
		/* A chunk below edu's mask is held: the next is above. */
		if (!cpu_first || pi || pr.dma_err ||
		    pr.dma_addr + len > top || nheld == HOLD_MAX)
			break;
		ht_release(tfd, pr.slot);
		held[nheld++] = buf;
	}
	tap_diag("%s: probe import %d, dma_err %d, %u segment(s), %d held",
		 c, pi, pr.dma_err, pr.dma_segs, i);
	if (cpu_first && pi && i) {
		/* All RAM below edu's mask (arm64), or no fd left to hold. */
		tap_skip(c, "no chunk above edu's mask found");
		goto out;
	}
	if (cpu_first && !pi && !pr.dma_err &&
	    !detail_has(buf, kind, "moves=0", "", "")) {
		/* The probe refuses a backing of several chunks: a move. */
		tap_skip(c, "the CPU's first use took more than one chunk");
		goto out;
	}
	/* Segments: the probe device's largest one (64 KiB without dma_parms). */
	if (!tap_ok(!pi && !pr.dma_err &&
		    detail_has(buf, kind, "devs=1 direct=1", "moves=0", ""),
		    "%s: %s, the probe device maps it once", c,
		    cpu_first ? "the CPU's first use: one chunk" :
				"the probe device's first use: one range"))
		goto out;
	/*
	 * Its DMA address is the physical one (no IOMMU, not bounced); not
	 * ion_phys(), after which the backing never moves.
	 */
	tap_diag("%s: the probe's range at 0x%llx", c, pr.dma_addr);
	if (pr.dma_addr + len <= top) {
		tap_skip(c, "the probe's range is below edu's mask already");
		goto out;
	}
	/*
	 * The low memory held so far goes back to the page allocator (the
	 * system heap's pools emptied): chunks below edu's mask are to be
	 * had, which a move to scattered chunks would take.
	 */
	release_held();
	ht_drop_pools();
	it_fail_set("contig", "hits", 0);
	it_fail_set("contig", "times", 1);
	ei = ht_import(tfd, buf, ION_TEST_MODE_EDU_FIRST, &e);
	it_fail_set("contig", "times", 0);
	tap_diag("%s: edu's attach %d, dma_err %d, %u segment(s)", c, ei,
		 e.dma_err, e.dma_segs);
	tap_ok(!ei && e.dma_err == -ENOMEM && it_fail_get("contig", "hits") == 1,
	       "%s: edu attaching late, no range below its mask: ENOMEM", c);
	tap_ok(auto_num("auto_moves") == moves0 &&
	       detail_has(buf, kind, "moves=0",
			  "failed: move: no contiguous range", ""),
	       "%s: not moved, debugfs says why", c);
	ret = ht_import(tfd, buf, ION_TEST_MODE_PROBE, &again);
	tap_diag("%s: the probe maps 0x%llx, %u segment(s)", c,
		 again.dma_addr, again.dma_segs);
	tap_ok(!ret && !again.dma_err && again.dma_addr == pr.dma_addr &&
	       again.dma_segs == pr.dma_segs,
	       "%s: the probe device maps the same range again", c);
	if (!ret)
		ht_release(tfd, again.slot);
out:
	if (!ei)
		ht_release(tfd, e.slot);
	if (!pi)
		ht_release(tfd, pr.slot);
	if (buf >= 0)
		close(buf);
}

/*
 * A system-heap buffer for edu, as today: found one beyond the mask (the
 * ones below are held meanwhile), it is refused with ERANGE without an
 * IOMMU; behind an IOMMU or with swiotlb=force it maps.
 */
static void system_side_case(int ion, int tfd, const struct ion_test_info *info)
{
	unsigned long long top = 1ULL << info->dma_bits;
	struct ion_test_import imp;
	int buf = -1, first = nheld, ret;

	while (nheld < HOLD_MAX) {
		buf = ht_alloc(ion, LEN, 0, ION_HEAP_TYPE_SYSTEM,
			       ION_FLAG_CACHED);
		if (buf < 0 || ht_import(tfd, buf, ION_TEST_MODE_CLIENT, &imp))
			break;
		if (imp.cpu_phys + LEN > top || info->iommu || bounced)
			break;
		ht_release(tfd, imp.slot);
		held[nheld++] = buf;
		buf = -1;
	}
	tap_diag("system heap: held %d more, phys 0x%llx, edu: %s",
		 nheld - first, imp.cpu_phys,
		 buf < 0 ? "-" : imp.dma_err ? strerror(-imp.dma_err) : "mapped");
	if (buf < 0) {
		tap_skip("system heap beside", "no system-heap buffer found");
		return;
	}
	ret = imp.dma_err;
	if (info->iommu || bounced)
		tap_ok(!ret, "system heap beside: mapped (IOMMU or bounced)");
	else
		tap_ok(imp.cpu_phys + LEN > top && ret == -ERANGE,
		       "system heap beside: beyond edu's %u-bit mask, ERANGE",
		       info->dma_bits);
	ht_release(tfd, imp.slot);
	close(buf);
}

/*
 * edu attaching late to a CPU-first buffer of two chunks (scattered, and
 * in the plain boot often above edu's mask): refused with ERANGE while the
 * buffer is mmapped; once unmapped, the backing moves below edu's mask in
 * one range, the contents kept, and an edu round trip is data-checked.
 */
static void move_case(int tfd, const struct ion_test_info *info, int ion,
		      const char *cname, unsigned int flags, int high)
{
	const size_t len = LEN + 4096;	/* a 64 KiB chunk and a 4 KiB one */
	unsigned long long top = 1ULL << info->dma_bits;
	long long moves0 = auto_num("auto_moves");
	struct ion_test_import imp, cl;
	struct ion_test_dma d;
	unsigned char *p, *exp;
	char mask[64];
	int buf, ret;

	buf = ht_alloc_map(ion, len, ION_HEAP_AUTO_ID, flags, &p);
	if (!tap_ok(buf >= 0, "%s move: CPU-first buffer mapped", cname))
		return;
	it_fill(p, len, 23);
	ht_cpu_end(buf);
	ret = ht_import(tfd, buf, ION_TEST_MODE_CLIENT, &cl);
	if (!ret)
		ht_release(tfd, cl.slot);
	tap_diag("%s move: CPU-first backing at 0x%llx, %u chunk(s)", cname,
		 cl.cpu_phys, cl.cpu_segs);
	tap_ok(!ret && cl.cpu_segs == 2, "%s move: CPU first: two chunks",
	       cname);
	/*
	 * Scattered is what edu (no IOMMU) cannot take; where the system
	 * heap put the chunks (above or below edu's mask) varies with the
	 * run before, so it is only told.
	 */
	if (high)
		tap_diag("%s move: first chunk %s edu's mask", cname,
			 cl.cpu_phys + LEN > top ? "above" : "below");
	ret = ht_import(tfd, buf, ION_TEST_MODE_EDU_FIRST, &imp);
	if (!ret)
		ht_release(tfd, imp.slot);
	tap_ok(!ret && imp.dma_err == -ERANGE &&
	       auto_num("auto_moves") == moves0,
	       "%s move: edu attaching while mmapped: ERANGE, not moved",
	       cname);
	tap_ok(detail_has(buf, "backing=system devs=0", "moves=0",
			  "failed: late attach: backing ", ""),
	       "%s move: debugfs detail names the constraint not met", cname);
	munmap(p, len);
	p = NULL;
	ret = ht_import(tfd, buf, ION_TEST_MODE_EDU_FIRST, &imp);
	if (!tap_ok(!ret && !imp.dma_err,
		    "%s move: edu attaching once unmapped: mapped (%d)", cname,
		    ret ? ret : imp.dma_err))
		goto out;
	tap_diag("%s move: now 0x%llx..0x%llx, %u segment(s)", cname,
		 imp.cpu_phys, imp.phys_end, imp.dma_segs);
	tap_ok(auto_num("auto_moves") == moves0 + 1,
	       "%s move: moved (debugfs auto_moves)", cname);
	snprintf(mask, sizeof(mask), "mask=%#llx contig=yes", top - 1);
	tap_ok(detail_has(buf, "state=backed backing=contiguous devs=1 direct=1",
			  mask, "moves=1", "failed: -"),
	       "%s move: debugfs detail: contiguous, edu's constraints, moved",
	       cname);
	snprintf(mask, sizeof(mask), "alloc_dev=ion-auto.%u ", info->dma_bits);
	tap_ok(detail_has(buf, "backing=contiguous", mask, "", ""),
	       "%s move: the DMA API allocated it for ion's own %u-bit device, "
	       "not edu", cname, info->dma_bits);
	tap_ok(imp.phys_end && imp.phys_end <= top &&
	       imp.phys_end - imp.cpu_phys == len,
	       "%s move: now one range below edu's %u-bit mask", cname,
	       info->dma_bits);
	p = ht_map(buf, len);
	exp = malloc(len);
	if (!tap_ok(p && exp, "%s move: mapped again", cname))
		goto out_release;
	it_fill(exp, len, 23);
	ht_cpu_begin(buf);
	tap_ok(!memcmp(p, exp, len), "%s move: contents preserved", cname);
	ht_cpu_end(buf);
	ret = ht_edu_copy(tfd, imp.slot, SRC_OFF, imp.slot, DST_OFF, XFER, &d);
	memcpy(exp + DST_OFF, exp + SRC_OFF, XFER);
	ht_cpu_begin(buf);
	tap_ok(!ret && !memcmp(p, exp, len),
	       "%s move: edu round trip in the moved buffer, data checked",
	       cname);
	ht_cpu_end(buf);
out_release:
	free(exp);
	ht_release(tfd, imp.slot);
out:
	ht_buf_drop(buf, p, len);
}

/* auto_commit_pct bounds the bytes live buffers promise. */
static void commit_case(int ion)
{
	struct it_param saved;
	int buf;

	if (it_param_save(&saved, "auto_commit_pct") ||
	    it_param_set("auto_commit_pct", "1")) {
		tap_skip("auto_commit_pct", "parameter not writable");
		it_param_restore(&saved);
		return;
	}
	buf = auto_alloc(ion, 256 << 20, ION_FLAG_CACHED);
	it_expect(buf < 0 ? buf : 0, ENOMEM,
		  "auto_commit_pct=1: a 256 MiB auto buffer is refused");
	if (buf >= 0)
		close(buf);
	it_param_restore(&saved);
}

int main(void)
{
	struct ion_test_info info;
	struct it_totals tot;
	unsigned long long above = 0;
	struct it_heaps hs;
	char *cmdline = NULL;
	unsigned int m;
	int ion, tfd;

	it_read_file("/proc/cmdline", &cmdline);
	bounced = cmdline && strstr(cmdline, "swiotlb=force");
	free(cmdline);
	ion = it_setup(&hs);
	if (!it_heap_find(&hs, AUTO)) {
		tap_skip("auto heap", "not registered");
		return tap_exit();
	}
	it_totals_get(&tot);
	tfd = ht_test_open();
	if (tfd < 0 || ht_test_info(tfd, &info)) {
		tap_ok(0, "open /dev/ion_test");
		return tap_exit();
	}
	tap_diag("edu %s, %u-bit mask, %s", info.has_edu ? "present" : "absent",
		 info.dma_bits, info.iommu ? "IOMMU" : "direct");
	heap_case(&hs);
	unused_case(ion);
	private_map_case(ion);
	for (m = 0; m < IT_ARRAY_SIZE(ht_cache_modes); m++)
		cpu_first_case(ion, tfd, &info, ht_cache_modes[m].name,
			       ht_cache_modes[m].flags);
	nomask_case(ion, tfd);
	if (!info.has_edu) {
		tap_skip("edu first", "no edu device");
		goto out;
	}
	if (!info.iommu && !bounced && info.dma_bits < 32) {
		struct rlimit rl = { HOLD_MAX + 64, HOLD_MAX + 64 };

		/* 1 MiB blocks first, then the 64 KiB ones an auto buffer takes. */
		setrlimit(RLIMIT_NOFILE, &rl);
		above = hold_low(ion, tfd, 1ULL << info.dma_bits, 1 << 20);
		if (above)
			above = hold_low(ion, tfd, 1ULL << info.dma_bits, LEN);
		tap_diag("held %d system-heap buffers below edu's mask; next system chunk at 0x%llx",
			 nheld, above);
		tap_ok(above, "the system heap now gives memory above edu's mask");
	}
	for (m = 0; m < IT_ARRAY_SIZE(ht_cache_modes); m++) {
		const char *cname = ht_cache_modes[m].name;
		unsigned int flags = ht_cache_modes[m].flags;

		edu_first_case(ion, tfd, &info, cname, flags,
			       ION_TEST_MODE_EDU_FIRST);
		edu_first_case(ion, tfd, &info, cname, flags,
			       ION_TEST_MODE_PROBE_EDU);
	}
	/* Before system_side_case(), whose held buffers may take every fd. */
	for (m = 0; m < IT_ARRAY_SIZE(ht_cache_modes) && !info.iommu; m++)
		move_case(tfd, &info, ion, ht_cache_modes[m].name,
			  ht_cache_modes[m].flags, above != 0);
	if (info.iommu)
		tap_skip("late attach moves", "edu behind an IOMMU fits any backing");
	system_side_case(ion, tfd, &info);
	if (info.iommu || bounced)
		tap_skip("keep range", info.iommu ?
			 "edu behind an IOMMU fits any backing" :
			 "swiotlb=force: edu reaches all of RAM");
	else
		for (m = 0; m < 2; m++)
			keep_contig_case(ion, tfd, &info, m);
	release_held();
	if (info.iommu)
		tap_skip("scattered fallback shared", "edu behind an IOMMU");
	else if (ht_meminfo("CmaTotal") > 0)
		tap_skip("scattered fallback shared", "CMA gives one range");
	else
		fallback_case(ion, tfd);
out:
	commit_case(ion);
	tap_diag("last failure: auto_failures %lld",
		 auto_num("auto_failures"));
	close(tfd);
	close(ion);
	it_totals_back(&tot, "every buffer freed");
	return tap_exit();
}
