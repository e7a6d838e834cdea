// SPDX-License-Identifier: MIT
/*
 * ion's dma-buf mappings under DMA-API debugging (CONFIG_DMA_API_DEBUG,
 * the debug kernel of make check-debug).
 *
 * The DMA API debug code prints only its first report and counts the rest
 * (/sys/kernel/debug/dma-api/error_count), so this test watches the count:
 * for every heap, cached and uncached, a real importer (vgem, through DRM
 * PRIME) maps a buffer, the CPU brackets an access with DMA_BUF_IOCTL_SYNC,
 * a second importer maps it at the same time (ion_test's PROBE import: a
 * platform device reaching all of memory maps it) and all let go; each
 * step must succeed, and none of that may add to the count.  And an
 * importer that changes the table it got (ion_test's PROBE_SCRAMBLE, as
 * the dma-buf core changes its page links under CONFIG_DMABUF_DEBUG)
 * changes nothing ion syncs or unmaps: ion gives each importer a copy of
 * its mapped table.  What it caught: every cached buffer mapped while
 * other mappings of it existed was a "cacheline tracking EEXIST,
 * overlapping mappings aren't supported" report - each DMA-heap buffer
 * (its own device holds a DMA-API allocation of it) and a second importer
 * of any cached buffer - because ion mapped cached buffers without
 * DMA_ATTR_SKIP_CPU_SYNC; it now maps them with the attribute and syncs
 * them itself (kernel/core/ion_dmabuf.c).  And each chunk was handed to
 * importers as one segment, while a device without dma_parms (vgem's and
 * ion_test's platform devices) takes at most 64 KiB: "mapping sg segment
 * longer than device claims to support"; the buffers here
 * are 4 MiB, and ion now splits each attachment's table for its device.
 *
 * Since only the first report is printed, the test also checks that no
 * error was counted before it started (by the programs that ran before
 * it), and then sets dma-api/all_errors so that every later report is
 * printed and fails the program during which it happened.
 *
 * Without DMA-API debugging every case is a SKIP that says so.
 */
#include "heap_util.h"
#include "vgem_util.h"

#define DMA_API_ERRORS	"/sys/kernel/debug/dma-api/error_count"
#define DMA_API_ALL	"/sys/kernel/debug/dma-api/all_errors"
/* Chunks of 1 MiB (system heap) or one 4 MiB chunk: beyond 64 KiB. */
#define LEN		(4 << 20)

static long long dma_api_errors(void)
{
	long long n = -1;
	FILE *f = fopen(DMA_API_ERRORS, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

static const char *const cases[] = {
	"vgem maps it",
	"CPU access brackets",
	"a second importer maps it meanwhile",
	"an importer's change to its table changes nothing ion syncs or unmaps",
	"all let go",
};

/* A step's case: it succeeded and the error count stayed at *n0. */
static void step(int ok, long long *n0, const struct it_heap *h,
		 const char *mode, const char *what)
{
	long long n = dma_api_errors();

	if (n != *n0)
		tap_diag("DMA-API error count %lld -> %lld", *n0, n);
	tap_ok(ok && n == *n0, "%s %s: %s", h->name, mode, what);
	*n0 = n;
}

/*
 * ion_test's PROBE_SCRAMBLE import changes the DMA addresses of the table
 * it got, as the dma-buf core (CONFIG_DMABUF_DEBUG) changes its page
 * links, then brackets a CPU access; its release unmaps.  ion must sync
 * and unmap its own table, not the importer's: DMA-API debugging reports
 * an unmap of addresses never mapped (on the old module, at the release;
 * a sync of them it skips), and with the page links, for a non-coherent
 * device behind an IOMMU, the sync would maintain a wild address.
 */
static void scramble_case(int tfd, int buf, long long *n0,
			  const struct it_heap *h, const char *mode)
{
	struct ion_test_import imp = { 0 };
	char name[160];
	int ret;

	if (tfd < 0) {
		snprintf(name, sizeof(name), "%s %s: %s", h->name, mode,
			 cases[3]);
		tap_skip(name, "ion_test.ko did not load");
		return;
	}
	ret = ht_import(tfd, buf, ION_TEST_MODE_PROBE_SCRAMBLE, &imp);
	if (!ret && ht_release(tfd, imp.slot))
		ret = -EIO;
	if (ret || imp.dma_err)
		tap_diag("scramble import %d, CPU access %d", ret, imp.dma_err);
	step(!ret && !imp.dma_err, n0, h, mode, cases[3]);
}

/* One heap and cache mode: every step must leave the error count alone. */
static void heap_case(int ion, int drm, int tfd, const struct it_heap *h,
		      const char *mode, unsigned int flags)
{
	struct ion_test_import imp;
	uint32_t gem;
	long long n0;
	int buf, ret, imported, sync, let_go;

	buf = ht_alloc(ion, LEN, 0, h->id, flags);
	if (buf < 0) {
		tap_diag("%s %s: allocation: %s", h->name, mode,
			 strerror(-buf));
		tap_ok(0, "%s %s: %s", h->name, mode, cases[0]);
		return;
	}
	n0 = dma_api_errors();
	ret = vgem_import(drm, buf, &gem);
	if (ret)
		tap_diag("PRIME_FD_TO_HANDLE: %s", strerror(-ret));
	step(!ret, &n0, h, mode, cases[0]);

	sync = ht_cpu_begin(buf);
	sync = sync ? sync : ht_cpu_end(buf);
	if (sync)
		tap_diag("DMA_BUF_IOCTL_SYNC: %s", strerror(-sync));
	step(!sync, &n0, h, mode, cases[1]);

	/* PROBE: its device reaches all memory and maps, edu or not. */
	imported = tfd >= 0 && !ht_import(tfd, buf, ION_TEST_MODE_PROBE, &imp);
	if (tfd < 0) {
		char name[128];

		snprintf(name, sizeof(name), "%s %s: %s", h->name, mode,
			 cases[2]);
		tap_skip(name, "ion_test.ko did not load");
	} else {
		if (imported && imp.dma_err)
			tap_diag("ion_test import: dma_err %d", imp.dma_err);
		step(imported && !imp.dma_err, &n0, h, mode, cases[2]);
	}

	scramble_case(tfd, buf, &n0, h, mode);

	let_go = imported ? ht_release(tfd, imp.slot) : 0;
	if (!ret)
		let_go |= vgem_close(drm, gem);
	let_go |= close(buf);
	if (let_go)
		tap_diag("a release, GEM_CLOSE or close failed");
	step(!let_go, &n0, h, mode, cases[4]);
}

static void skip_all(const char *reason)
{
	unsigned int i, m, k;
	char name[160];

	for (i = 0; i < IT_ARRAY_SIZE(it_known_heaps); i++)
		for (m = 0; m < IT_ARRAY_SIZE(ht_cache_modes); m++)
			for (k = 0; k < IT_ARRAY_SIZE(cases); k++) {
				snprintf(name, sizeof(name), "%s %s: %s",
					 it_known_heaps[i].name,
					 ht_cache_modes[m].name, cases[k]);
				tap_skip(name, reason);
			}
}

int main(void)
{
	struct it_heaps hs;
	unsigned int i, m;
	int ion, drm, tfd, ret = 0;
	long long errors;
	FILE *f;

	ion = it_setup(&hs);
	if (dma_api_errors() < 0) {
		skip_all("no DMA-API debugging: no " DMA_API_ERRORS);
		tap_skip("no DMA-API error before this program",
			 "no DMA-API debugging");
		close(ion);
		return tap_exit();
	}
	errors = dma_api_errors();
	if (errors)
		tap_diag("%lld DMA-API errors before this program; the kernel log shows the first", errors);
	tap_ok(!errors, "no DMA-API error before this program");
	f = fopen(DMA_API_ALL, "w");
	if (f) {
		ret = fputs("1\n", f) < 0;
		ret |= fclose(f) != 0;
	}
	if (!f || ret)
		tap_diag("cannot set " DMA_API_ALL ": %s", strerror(errno));
	else
		tap_diag("DMA-API debugging now prints every error");
	drm = open_vgem();
	if (drm < 0) {
		skip_all("no vgem in this guest");
		close(ion);
		return tap_exit();
	}
	tfd = ht_test_open();
	if (tfd < 0)
		tap_diag("ion_test: %s", strerror(-tfd));
	tap_diag("DMA-API errors before: %lld", dma_api_errors());
	for (i = 0; i < IT_ARRAY_SIZE(it_known_heaps); i++) {
		const struct it_heap *h = &it_known_heaps[i];

		for (m = 0; m < IT_ARRAY_SIZE(ht_cache_modes); m++) {
			if (!it_heap_find(&hs, h->name)) {
				char name[160];
				unsigned int k;

				for (k = 0; k < IT_ARRAY_SIZE(cases); k++) {
					snprintf(name, sizeof(name),
						 "%s %s: %s", h->name,
						 ht_cache_modes[m].name,
						 cases[k]);
					tap_skip(name, "heap not registered");
				}
				continue;
			}
			heap_case(ion, drm, tfd, h, ht_cache_modes[m].name,
				  ht_cache_modes[m].flags);
		}
	}
	if (tfd >= 0)
		close(tfd);
	close(drm);
	close(ion);
	vgem_unload();
	return tap_exit();
}
