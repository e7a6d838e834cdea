// SPDX-License-Identifier: MIT
/*
 * heap_dma_large: the DMA-API heap hands out physically contiguous buffers
 * larger than the buddy allocator can (MAX_PAGE_ORDER: 4 MiB), from CMA.
 *
 * With CMA (Debian arm64: CMA=y, DMA_CMA=y, a 64 MiB default area), a
 * 32 MiB buffer, cached and uncached, must: allocate; take its memory out
 * of CMA (its physical range lies in the area the kernel's boot line
 * "cma: Reserved N MiB at ADDR" names; where CMA has room for one such
 * buffer only, a second one is ENOMEM while it lives and fits again once it is
 * freed, so its memory went back); be one physically contiguous
 * segment (ion_phys() answers, the sg table has one entry); come zeroed;
 * hold a pattern written through mmap; and be reachable by a device at
 * both ends: edu reads the buffer's last bytes and writes next to them
 * (ion_test, with DMA_BUF_IOCTL_SYNC around every CPU access).  A buffer
 * larger than the CMA area is refused with ENOMEM.
 *
 * Without CMA (Debian amd64), contiguous DMA memory comes from the buddy
 * allocator, so a 32 MiB DMA-heap buffer must be refused with ENOMEM; the
 * CMA cases are skipped.
 */
#include "heap_util.h"

#define BIG	(32ULL << 20)
#define SMALL	(64 * 1024)
#define XFER	ION_TEST_MAX_XFER

static const struct it_heap *dma_heap(void)
{
	unsigned int i;

	for (i = 0; i < IT_ARRAY_SIZE(it_known_heaps); i++)
		if (it_known_heaps[i].type == ION_HEAP_TYPE_DMA)
			return &it_known_heaps[i];
	return NULL;
}

/*
 * The big buffer: its pattern everywhere, except the XFER bytes before the
 * last XFER, which edu wrote from the small buffer's second XFER bytes.
 */
static long check_big(const unsigned char *b, unsigned int seed,
		      unsigned int sseed)
{
	size_t i;

	for (i = 0; i < BIG; i++) {
		unsigned char want = it_pat(i, seed);

		if (i >= BIG - 2 * XFER && i < BIG - XFER)
			want = it_pat(i - (BIG - 2 * XFER) + XFER, sseed);
		if (b[i] != want)
			return (long)i;
	}
	return -1;
}

/* edu reads the big buffer's last bytes and writes the ones before them. */
static void dma_ends(int ion, int tfd, const struct it_heap *kh, int big,
		     unsigned char *b, unsigned int seed, const char *cname)
{
	struct ion_test_import bi, si;
	struct ion_test_dma d;
	unsigned int sseed = seed ^ 0x5a5a;
	unsigned char *s = NULL;
	long bad;
	int small, r1 = -1, r2 = -1;

	small = ht_alloc(ion, SMALL, 0, kh->id, ION_FLAG_CACHED);
	s = small < 0 ? NULL : ht_map(small, SMALL);
	if (!s || ht_import(tfd, big, ION_TEST_MODE_DMABUF, &bi)) {
		tap_ok(0, "%s 32 MiB %s: edu imports it", kh->name, cname);
		goto out;
	}
	if (ht_import(tfd, small, ION_TEST_MODE_DMABUF, &si)) {
		tap_ok(0, "%s 32 MiB %s: edu imports its partner", kh->name,
		       cname);
		ht_release(tfd, bi.slot);
		goto out;
	}
	tap_diag("%s 32 MiB %s: dma 0x%llx, %u DMA segment(s), map error %d",
		 kh->name, cname, bi.dma_addr, bi.dma_segs, bi.dma_err);
	if (bi.dma_err == -ERANGE || si.dma_err == -ERANGE) {
		/* Without an IOMMU, edu's mask may not reach where CMA is. */
		tap_skip("edu reads the buffer's last bytes",
			 "the buffer is above edu's DMA mask (ERANGE)");
		tap_skip("edu writes next to its end",
			 "the buffer is above edu's DMA mask (ERANGE)");
		goto release;
	}
	ht_cpu_begin(small);
	it_fill(s, SMALL, sseed);
	ht_cpu_end(small);
	if (!bi.dma_err && !si.dma_err) {
		memset(&d, 0, sizeof(d));
		d.src_slot = bi.slot;
		d.src_off = BIG - XFER;
		d.dst_slot = si.slot;
		d.dst_off = 0;
		d.len = XFER;
		r1 = it_ioctl(tfd, ION_TEST_IOC_DMA, &d);
		memset(&d, 0, sizeof(d));
		d.src_slot = si.slot;
		d.src_off = XFER;
		d.dst_slot = bi.slot;
		d.dst_off = BIG - 2 * XFER;
		d.len = XFER;
		r2 = it_ioctl(tfd, ION_TEST_IOC_DMA, &d);
	}
	if (r1 || r2)
		tap_diag("ION_TEST_IOC_DMA: %s / %s", strerror(-r1),
			 strerror(-r2));
	ht_cpu_begin(small);
	bad = -1;
	for (size_t i = 0; i < XFER && bad < 0; i++)
		if (s[i] != it_pat(BIG - XFER + i, seed))
			bad = (long)i;
	ht_cpu_end(small);
	tap_ok(!r1 && bad < 0,
	       "%s 32 MiB %s: edu reads the buffer's last %u bytes", kh->name,
	       cname, XFER);
	ht_cpu_begin(big);
	bad = r2 ? -2 : check_big(b, seed, sseed);
	ht_cpu_end(big);
	if (bad >= 0)
		tap_diag("first difference at %ld", bad);
	tap_ok(!r2 && bad < 0,
	       "%s 32 MiB %s: edu writes next to its end, nothing else changes",
	       kh->name, cname);
release:
	ht_release(tfd, si.slot);
	ht_release(tfd, bi.slot);
out:
	if (s)
		munmap(s, SMALL);
	if (small >= 0)
		close(small);
}

/* A second 32 MiB DMA-heap buffer: 0 when it allocated, else -errno. */
/*
 * The default CMA area, from its boot line in the kernel log (/dev/kmsg:
 * the rig clears the syslog buffer between programs, not the records).
 */
static long long cma_base = -1, cma_size;

static void cma_area(void)
{
	unsigned long long mib, base;
	char rec[IT_KMSG_REC], *p;
	int fd = it_kmsg_open(1);

	if (fd < 0)
		return;
	while (it_kmsg_next(fd, rec, sizeof(rec))) {
		p = strstr(rec, "cma: Reserved ");
		if (p && sscanf(p, "cma: Reserved %llu MiB at %llx", &mib,
				&base) == 2) {
			cma_base = (long long)base;
			cma_size = (long long)(mib << 20);
			break;
		}
	}
	close(fd);
}

static int another(int ion, const struct it_heap *kh, unsigned int flags)
{
	int fd = ht_alloc(ion, BIG, 0, kh->id, flags);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static void big_case(int ion, int tfd, const struct ion_test_info *info,
		     const struct it_heap *kh, unsigned int flags,
		     const char *cname)
{
	long long total = ht_meminfo("CmaTotal"), free0 = ht_meminfo("CmaFree");
	unsigned int seed = (unsigned int)it_now_ms();
	/* Two 32 MiB buffers cannot both fit in what CMA has free. */
	int tight = free0 < 2 * (long long)BIG;
	struct ion_test_import imp;
	unsigned char *b = NULL;
	long long free1;
	int big, ok;
	long bad;

	big = ht_alloc(ion, BIG, 0, kh->id, flags);
	if (!it_expect(big, 0, "%s 32 MiB %s: allocates", kh->name, cname))
		return;
	free1 = ht_meminfo("CmaFree");
	tap_diag("CmaTotal %lld KiB: CmaFree %lld KiB before, %lld KiB with the buffer",
		 total >> 10, free0 >> 10, free1 >> 10);
	ok = !ht_import(tfd, big, ION_TEST_MODE_CLIENT, &imp);
	if (ok) {
		tap_diag("phys 0x%llx (err %d), first page 0x%llx, %u sg entries",
			 imp.phys, imp.phys_err, imp.cpu_phys, imp.cpu_segs);
		ht_release(tfd, imp.slot);
	}
	tap_ok(ok && !imp.phys_err && imp.phys == imp.cpu_phys &&
	       imp.cpu_segs == 1 && imp.size == BIG,
	       "%s 32 MiB %s: one physically contiguous segment (ion_phys)",
	       kh->name, cname);
	/*
	 * CmaFree is no measure of where a buffer came from: movable pages
	 * borrow free CMA memory and count as used, and cma_alloc() migrates
	 * them away.  The buffer's physical range must lie in the area.
	 */
	if (cma_base < 0)
		tap_diag("no 'cma: Reserved ... at ...' line in the kernel log");
	else
		tap_diag("CMA area 0x%llx-0x%llx", cma_base,
			 cma_base + cma_size);
	tap_ok(ok && !imp.phys_err && cma_base >= 0 &&
	       imp.phys >= (unsigned long long)cma_base &&
	       imp.phys + BIG <= (unsigned long long)(cma_base + cma_size),
	       "%s 32 MiB %s: taken from the CMA area (ion_phys inside it)",
	       kh->name, cname);
	if (tight)
		it_expect(another(ion, kh, flags), ENOMEM,
			  "%s 32 MiB %s: while it lives, a second one does not fit",
			  kh->name, cname);
	else
		tap_skip("a second 32 MiB buffer does not fit",
			 "CMA has room for two");
	b = ht_map(big, BIG);
	if (!tap_ok(b != NULL, "%s 32 MiB %s: mmap", kh->name, cname))
		goto out;
	ht_cpu_begin(big);
	bad = it_check_zero(b, BIG);
	if (bad >= 0)
		tap_diag("non-zero byte at %ld", bad);
	tap_ok(bad < 0, "%s 32 MiB %s: zeroed", kh->name, cname);
	it_fill(b, BIG, seed);
	ht_cpu_end(big);
	ht_cpu_begin(big);
	tap_ok(it_check(b, BIG, seed) < 0, "%s 32 MiB %s: pattern reads back",
	       kh->name, cname);
	ht_cpu_end(big);
	if (info->has_edu)
		dma_ends(ion, tfd, kh, big, b, seed, cname);
	else
		tap_skip("edu DMA at the ends of a 32 MiB buffer",
			 "no edu device");
out:
	if (b)
		munmap(b, BIG);
	close(big);
	if (tight)
		it_expect(another(ion, kh, flags), 0,
			  "%s 32 MiB %s: after the free, its memory is back: another fits",
			  kh->name, cname);
}

int main(void)
{
	const struct it_heap *kh = dma_heap();
	long long total = ht_meminfo("CmaTotal");
	struct ion_test_info info;
	struct it_heaps hs;
	unsigned int c;
	int ion, tfd, ret;

	ion = it_setup(&hs);
	if (!kh || !it_heap_find(&hs, kh->name)) {
		tap_skip("DMA heap 32 MiB buffers", "DMA heap not registered");
		close(ion);
		return tap_exit();
	}
	tap_diag("CmaTotal %lld MiB, CmaFree %lld MiB", total >> 20,
		 ht_meminfo("CmaFree") >> 20);
	if (total < (long long)BIG) {
		/* Buddy pages only: nothing contiguous beyond 4 MiB. */
		for (c = 0; c < IT_ARRAY_SIZE(ht_cache_modes); c++) {
			ret = ht_alloc(ion, BIG, 0, kh->id,
				       ht_cache_modes[c].flags);
			if (ret >= 0)
				close(ret);
			it_expect(ret, ENOMEM,
				  "%s 32 MiB %s without a 32 MiB CMA area: ENOMEM",
				  kh->name, ht_cache_modes[c].name);
		}
		tap_skip("DMA heap 32 MiB buffers from CMA",
			 total < 0 ? "no CMA in this kernel" :
				     "CMA area smaller than 32 MiB");
		close(ion);
		return tap_exit();
	}
	cma_area();
	tfd = ht_test_open();
	if (tfd < 0 || ht_test_info(tfd, &info)) {
		tap_ok(0, "open " HT_TEST_DEV);
		close(ion);
		return tap_exit();
	}
	for (c = 0; c < IT_ARRAY_SIZE(ht_cache_modes); c++)
		big_case(ion, tfd, &info, kh, ht_cache_modes[c].flags,
			 ht_cache_modes[c].name);
	ret = ht_alloc(ion, (unsigned long long)total + (4ULL << 20), 0,
		       kh->id, ION_FLAG_CACHED);
	if (ret >= 0)
		close(ret);
	it_expect(ret, ENOMEM, "%s: a buffer larger than the CMA area: ENOMEM",
		  kh->name);
	close(tfd);
	close(ion);
	return tap_exit();
}
