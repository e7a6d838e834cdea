// SPDX-License-Identifier: MIT
/*
 * fault_uncached: making an uncached buffer's fresh pages write-combined
 * fails part way (debugfs fail/uncached; on x86 the first half of the
 * pages is converted before the failure, as a page-table split failing
 * inside set_pages_array_wc() leaves them), and ion puts every page back
 * to write-back before giving it to the page allocator.
 *
 * The buffer: an auto-heap uncached buffer first used by the CPU
 * (DMA_BUF_IOCTL_SYNC), with the pools emptied first, so that its chunks
 * are fresh from the page allocator and converted page by page.  Checks:
 * the first use answers ENOMEM and the step was hit once; a cached buffer
 * of the same size then takes those pages back from the page allocator
 * (order-0 chunks, freed to and taken from the per-CPU list of the CPU the
 * test is pinned to), and every page of it is write-back in the linear
 * map (ion_test's ION_TEST_IOC_ATTR); a second first use of the failed
 * buffer succeeds and reads zeroes; nothing is left behind.  On arm64,
 * which never changes the linear map, the step fails before any page is
 * touched, and the linear-map check is skipped.  Watched
 * failing with ion_cache_pages_undo() skipped: 2 of the 4 pages came back
 * write-combined in every round.
 */
#include <linux/dma-buf.h>
#include <sched.h>

#include "heap_util.h"
#include "it_fail.h"
#include "ion_test_util.h"
#include "tap.h"

/* Order-0 chunks: freed to this CPU's list, taken back first from it. */
#define LEN	(16 << 10)
#define ROUNDS	4

static int sync_start(int buf)
{
	struct dma_buf_sync s = {
		.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW,
	};

	return ioctl(buf, DMA_BUF_IOCTL_SYNC, &s) ? -errno : 0;
}

/*
 * The pages just given back, taken again by a cached buffer of the same
 * size: how many of them are not write-back in the linear map (-1 when
 * that could not be read).
 */
static int __attribute__((unused)) reused_wb(int ion, int tfd)
{
	struct ion_test_import imp;
	struct ion_test_attr a;
	int buf, n = 0;
	unsigned int i;

	buf = ht_alloc(ion, LEN, 0, ION_HEAP_AUTO_ID, ION_FLAG_CACHED);
	if (buf < 0 || sync_start(buf) ||
	    ht_import(tfd, buf, ION_TEST_MODE_CLIENT, &imp)) {
		if (buf >= 0)
			close(buf);
		return -1;
	}
	for (i = 0; i < LEN / it_page() && n >= 0; i++) {
		memset(&a, 0, sizeof(a));
		a.slot = imp.slot;
		a.page = i;
		if (it_ioctl(tfd, ION_TEST_IOC_ATTR, &a) || a.kernel_err)
			n = -1;
		else if (a.kernel_bits)
			n++;
	}
	ht_release(tfd, imp.slot);
	close(buf);
	return n;
}

/* One round; 1 when the step was reached. */
static int round_case(int ion, int tfd, unsigned int r)
{
	long long hits;
	unsigned char *p;
	int buf, ret, n;

	if (!tap_ok(!ht_drop_pools(), "round %u: pools emptied", r))
		return 0;
	buf = ht_alloc(ion, LEN, 0, ION_HEAP_AUTO_ID, 0);
	if (!tap_ok(buf >= 0, "round %u: uncached auto buffer (%d)", r, buf))
		return 0;
	it_fail_set("uncached", "hits", 0);
	it_fail_set("uncached", "times", 1);
	ret = sync_start(buf);
	hits = it_fail_get("uncached", "hits");
	it_fail_set("uncached", "times", 0);
	if (hits != 1) {
		tap_diag("round %u: the step was not reached (hits %lld, %s)",
			 r, hits, strerror(-ret));
		close(buf);
		return 0;
	}
	tap_ok(ret == -ENOMEM, "round %u: first use failed part way: ENOMEM (%s)",
	       r, strerror(-ret));
#ifdef __x86_64__
	n = reused_wb(ion, tfd);
	tap_ok(n == 0, "round %u: the pages given back are write-back in the "
	       "linear map (%d write-combined)", r, n);
#else
	(void)tfd;
	(void)n;
	tap_skip("linear map back to write-back",
		 "arm64 keeps the linear map cacheable");
#endif
	ret = sync_start(buf);
	p = ht_map(buf, LEN);
	tap_ok(!ret && p && it_check_zero(p, LEN) < 0,
	       "round %u: the failed buffer's next first use works and reads "
	       "zeroes (%s)", r, strerror(-ret));
	if (p)
		munmap(p, LEN);
	close(buf);
	return 1;
}

int main(void)
{
	struct it_totals t0;
	struct it_heaps hs;
	cpu_set_t cpus;
	int ion, tfd, hit = 0;
	unsigned int r;

	ion = it_setup(&hs);
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	tap_ok(!sched_setaffinity(0, sizeof(cpus), &cpus), "pinned to CPU 0");
	tfd = ht_test_open();
	if (!it_heap_find(&hs, ION_AUTO_HEAP_NAME) || tfd < 0 ||
	    it_fail_get("uncached", "times") < 0) {
		tap_skip("uncached fault",
			 "no auto heap, no ion_test or no fail/uncached");
		return tap_exit();
	}
	it_totals_get(&t0);
	for (r = 0; r < ROUNDS; r++)
		hit += round_case(ion, tfd, r);
	tap_ok(hit > 0, "the step was reached (%d of %d rounds)", hit, ROUNDS);
	tap_ok(it_fail_get("uncached", "times") == 0 &&
	       it_fail_get("uncached", "probability") == 0,
	       "fail/uncached disarmed");
	it_totals_back(&t0, "fault_uncached");
	close(tfd);
	close(ion);
	return tap_exit();
}
