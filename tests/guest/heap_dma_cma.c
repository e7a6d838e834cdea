// SPDX-License-Identifier: MIT
/*
 * The DMA heap's large contiguous path, where the kernel has CMA.
 *
 * ion's DMA heap allocates through the DMA API for its own platform
 * device ("ion-dma-heap"), which has no CMA area of its own: DMA-direct
 * takes any allocation larger than a page from the default CMA area
 * (cma= on the command line, CONFIG_CMA_SIZE_MBYTES), and only falls back
 * to the buddy allocator (at most MAX_PAGE_ORDER, 4 MiB on x86) when CMA
 * cannot give it.  So with CMA a 64 MiB buffer exists, and it must come
 * out of CMA: /proc/meminfo's CmaFree drops by the buffer's size (less
 * whatever of the area was already in use: those pages may be migrated
 * out of the way to memory outside CMA; and less 1 MiB for the counter's
 * per-CPU drift) and comes back when it is freed.
 * "Comes back" is at least half of it: the kernel puts other movable
 * allocations in CMA too, and a few MiB of them landing there meanwhile
 * were seen under the debug kernel; a buffer that is not given back
 * recovers nothing.  A second 64 MiB buffer after the first is freed
 * must allocate as well.
 *
 * Where the kernel has no CMA (no CmaTotal in /proc/meminfo, or 0, as on
 * Debian's amd64 kernel), or less CMA than the buffer needs, every case is
 * a SKIP that says so; the debug kernel (make check-debug) has 128 MiB.
 *
 * For both cache modes: the buffer allocates from the DMA heap alone,
 * CmaFree drops, ion_phys() reports one contiguous range of the full size
 * (through ion_test), a CPU mapping reads zero everywhere and keeps a
 * pattern, and after the last close CmaFree recovers and debugfs is back
 * to zero.  A request larger than the whole CMA area is ENOMEM.
 */
#include "heap_util.h"

#define BIG		(64ULL << 20)
/*
 * CmaFree is a vmstat counter: each CPU folds its changes in only past a
 * threshold (up to 125 pages), so a reading may be off by that much per
 * CPU (seen: 20 kB short of the buffer's size under the debug kernel).
 */
#define VMSTAT_SLACK	(1LL << 20)

static const char *cases[] = {
	"64 MiB from the DMA heap alone",
	"CmaFree drops by the buffer's size, less the movable pages CMA held",
	"ion_phys: one contiguous range of 64 MiB",
	"the buffer reads zero",
	"the buffer keeps a pattern",
	"CmaFree gets at least half of it back after the close",
	"a second 64 MiB buffer after the close",
	"debugfs is back to zero",
};

static void skip_all(const char *reason)
{
	char name[128];
	unsigned int m, i;

	for (m = 0; m < IT_ARRAY_SIZE(ht_cache_modes); m++)
		for (i = 0; i < IT_ARRAY_SIZE(cases); i++) {
			snprintf(name, sizeof(name), "%s: %s",
				 ht_cache_modes[m].name, cases[i]);
			tap_skip(name, reason);
		}
	tap_skip("a request larger than the CMA area is ENOMEM", reason);
}

static void one_mode(int ion, int tfd, unsigned int id, const char *mode,
		     unsigned int flags, long long total)
{
	long long free0, free1, free2, used0, buffers, bytes;
	struct ion_test_import imp;
	unsigned char *p;
	char name[128];
	long bad;
	int buf, ret;

	free0 = ht_meminfo("CmaFree");
	used0 = total - free0;
	buf = ht_alloc(ion, BIG, 0, id, flags);
	if (!it_expect(buf, 0, "%s: %s", mode, cases[0])) {
		tap_diag("CmaTotal %lld kB, CmaFree %lld kB", total >> 10,
			 free0 >> 10);
		return;
	}
	free1 = ht_meminfo("CmaFree");
	tap_diag("%s: CmaFree %lld -> %lld kB (%lld kB of CMA in use before)",
		 mode, free0 >> 10, free1 >> 10, used0 >> 10);
	tap_ok(free0 - free1 > 0 &&
	       free0 - free1 >= (long long)BIG - used0 - VMSTAT_SLACK,
	       "%s: %s", mode, cases[1]);

	if (tfd < 0) {
		snprintf(name, sizeof(name), "%s: %s", mode, cases[2]);
		tap_skip(name, "ion_test.ko did not load");
	} else {
		ret = ht_import(tfd, buf, ION_TEST_MODE_CLIENT, &imp);
		if (!ret) {
			tap_diag("%s: phys_err %d phys %#llx size %llu", mode,
				 imp.phys_err, (unsigned long long)imp.phys,
				 (unsigned long long)imp.size);
			ht_release(tfd, imp.slot);
		}
		tap_ok(!ret && !imp.phys_err && imp.size == BIG &&
		       imp.cpu_phys == imp.phys, "%s: %s", mode, cases[2]);
	}

	p = ht_map(buf, BIG);
	if (!p) {
		tap_diag("mmap: %s", strerror(errno));
		tap_ok(0, "%s: %s", mode, cases[3]);
		tap_ok(0, "%s: %s", mode, cases[4]);
	} else {
		ht_cpu_begin(buf);
		bad = it_check_zero(p, BIG);
		if (bad >= 0)
			tap_diag("first non-zero byte at %ld", bad);
		tap_ok(bad < 0, "%s: %s", mode, cases[3]);
		it_fill(p, BIG, 0x64);
		ht_cpu_end(buf);
		ht_cpu_begin(buf);
		bad = it_check(p, BIG, 0x64);
		ht_cpu_end(buf);
		if (bad >= 0)
			tap_diag("pattern differs at %ld", bad);
		tap_ok(bad < 0, "%s: %s", mode, cases[4]);
		munmap(p, BIG);
	}
	close(buf);

	free2 = ht_meminfo("CmaFree");
	tap_diag("%s: CmaFree after the close %lld kB", mode, free2 >> 10);
	tap_ok(free2 - free1 >= (long long)BIG / 2, "%s: %s", mode, cases[5]);
	buf = ht_alloc(ion, BIG, 0, id, flags);
	it_expect(buf, 0, "%s: %s", mode, cases[6]);
	if (buf >= 0)
		close(buf);
	ret = it_summary(&buffers, &bytes);
	tap_ok(!ret && !buffers && !bytes, "%s: %s", mode, cases[7]);
}

int main(void)
{
	long long total = ht_meminfo("CmaTotal");
	const struct ion_heap_data *h;
	struct it_heaps hs;
	unsigned int m;
	char why[128];
	int ion, tfd, buf;

	ion = it_setup(&hs);
	h = it_heap_find(&hs, ION_DMA_HEAP_NAME);
	if (total <= 0) {
		skip_all(total < 0 ? "no CMA: no CmaTotal in /proc/meminfo" :
			 "no CMA: CmaTotal is 0");
		close(ion);
		return tap_exit();
	}
	tap_diag("CmaTotal %lld kB, CmaFree %lld kB", total >> 10,
		 ht_meminfo("CmaFree") >> 10);
	if (ht_meminfo("CmaFree") < (long long)BIG) {
		/* Debian arm64: 64 MiB in all, some of it taken at boot. */
		snprintf(why, sizeof(why),
			 "CMA has %lld MiB free (of %lld), less than 64",
			 ht_meminfo("CmaFree") >> 20, total >> 20);
		skip_all(why);
		close(ion);
		return tap_exit();
	}
	if (!h) {
		skip_all("no " ION_DMA_HEAP_NAME " in HEAP_QUERY");
		close(ion);
		return tap_exit();
	}
	tfd = ht_test_open();
	if (tfd < 0)
		tap_diag("ion_test: %s", strerror(-tfd));
	for (m = 0; m < IT_ARRAY_SIZE(ht_cache_modes); m++)
		one_mode(ion, tfd, h->heap_id, ht_cache_modes[m].name,
			 ht_cache_modes[m].flags, total);

	/* More than the whole area: neither CMA nor the buddy allocator. */
	buf = ht_alloc(ion, (size_t)total + BIG, 0, h->heap_id, 0);
	it_expect(buf, ENOMEM, "a request larger than the CMA area is ENOMEM");
	if (buf >= 0)
		close(buf);
	if (tfd >= 0)
		close(tfd);
	close(ion);
	return tap_exit();
}
