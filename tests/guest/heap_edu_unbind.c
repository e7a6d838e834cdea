// SPDX-License-Identifier: MIT
/*
 * heap_edu_unbind: edu unbound from ion_test through sysfs while two ion
 * buffers are mapped for it (one as a dma-buf attachment, one through a
 * kernel client's own sg table): ion_test's remove undoes both mappings,
 * so the attachment leaves debugfs with the unbind; the imports stay, DMA
 * refuses them (ENODEV without edu, ERANGE once edu is back: not mapped
 * for it), releasing them and closing the file are clean, and edu bound
 * again maps both and copies data from one to the other.  Auto-heap
 * buffers first used by edu, so they lie within edu's reach in every
 * boot; two buffers, as with swiotlb each mapping bounces on its own.
 */
#include <libgen.h>

#include "heap_util.h"

#define LEN	(64 * 1024)
#define XFER	ION_TEST_MAX_XFER
#define DRV	"/sys/bus/pci/drivers/ion_test_edu"

/* @src as a dma-buf, @dst by the client, both mapped for edu; 0 or -1. */
static int import_both(int tfd, const int buf[2],
		       struct ion_test_import imp[2], const char *when)
{
	int rs = ht_import(tfd, buf[0], ION_TEST_MODE_EDU_FIRST, &imp[0]);
	int rd = rs ? -1 : ht_import(tfd, buf[1], ION_TEST_MODE_EDU_FIRST,
				     &imp[1]);

	/* The client import of @dst, now backed below edu's mask. */
	if (!rd) {
		ht_release(tfd, imp[1].slot);
		rd = ht_import(tfd, buf[1], ION_TEST_MODE_CLIENT, &imp[1]);
	}
	if (!rs && rd)
		ht_release(tfd, imp[0].slot);
	tap_diag("%s: dma-buf import %d (%d), client import %d (%d)", when,
		 rs, rs ? 0 : imp[0].dma_err, rd, rd ? 0 : imp[1].dma_err);
	if (!tap_ok(!rs && !rd && !imp[0].dma_err && !imp[1].dma_err,
		    "%s: one buffer imported as a dma-buf, one by the client, "
		    "both mapped for edu", when))
		return -1;
	return 0;
}

static int copy(int tfd, const struct ion_test_import imp[2])
{
	struct ion_test_dma d;

	return ht_edu_copy(tfd, imp[0].slot, 0, imp[1].slot, 0, XFER, &d);
}

/* Does edu copy the first bytes of buf[0] to buf[1]? */
static int copy_ok(int tfd, const int buf[2],
		   const struct ion_test_import imp[2], unsigned int seed)
{
	unsigned char *s = ht_map(buf[0], LEN), *t = ht_map(buf[1], LEN);
	int ret = -ENOMEM, bad = 1;

	if (s && t) {
		ht_cpu_begin(buf[0]);
		it_fill(s, XFER, seed);
		ht_cpu_end(buf[0]);
		ret = copy(tfd, imp);
		ht_cpu_begin(buf[1]);
		bad = memcmp(s, t, XFER);
		ht_cpu_end(buf[1]);
	}
	if (ret)
		tap_diag("ION_TEST_IOC_DMA: %s", strerror(-ret));
	if (s)
		munmap(s, LEN);
	if (t)
		munmap(t, LEN);
	return !ret && !bad;
}

static int attachments(int buf)
{
	return (int)it_buffer_num(buf, ION_AUTO_HEAP_NAME, "attachments");
}

static void unbind_case(int tfd, const int buf[2], const char *name)
{
	struct ion_test_import imp[2];
	struct ion_test_info info;
	int ret;

	if (import_both(tfd, buf, imp, "bound"))
		return;
	tap_ok(attachments(buf[0]) == 1 &&
	       it_buffer_has_device(buf[0], ION_AUTO_HEAP_NAME,
				    "ion_test_edu") == 1,
	       "debugfs: the dma-buf has one attachment, edu's");

	ret = ht_write_str(DRV "/unbind", name, 0);
	tap_ok(!ret && !ht_test_info(tfd, &info) && !info.has_edu,
	       "edu unbound with both mapped (%d)", ret);
	tap_ok(attachments(buf[0]) == 0 &&
	       it_buffer_has_device(buf[0], ION_AUTO_HEAP_NAME,
				    "ion_test_edu") == 0,
	       "edu's attachment went with the unbind (attachments %d)",
	       attachments(buf[0]));
	ret = copy(tfd, imp);
	tap_ok(ret == -ENODEV, "DMA without edu: ENODEV (%d)", ret);

	ret = ht_write_str(DRV "/bind", name, 0);
	tap_ok(!ret && !ht_test_info(tfd, &info) && info.has_edu,
	       "edu bound again (%d)", ret);
	ret = copy(tfd, imp);
	tap_ok(ret == -ERANGE,
	       "the imports made before are not mapped for it: ERANGE (%d)",
	       ret);
	tap_ok(!ht_release(tfd, imp[0].slot) && !ht_release(tfd, imp[1].slot),
	       "the unmapped imports release");

	if (import_both(tfd, buf, imp, "bound again"))
		return;
	tap_ok(copy_ok(tfd, buf, imp, (unsigned int)it_now_ms()),
	       "edu copies data between them again");
	ht_release(tfd, imp[0].slot);
	ht_release(tfd, imp[1].slot);
}

static void run(int ion, int tfd, const char *name)
{
	int buf[2], i;

	for (i = 0; i < 2; i++)
		buf[i] = ht_alloc(ion, LEN, 0, ION_HEAP_AUTO_ID,
				  ION_FLAG_CACHED);
	if (tap_ok(buf[0] >= 0 && buf[1] >= 0, "two auto-heap buffers"))
		unbind_case(tfd, buf, name);
	for (i = 0; i < 2; i++)
		if (buf[i] >= 0)
			close(buf[i]);
}

int main(void)
{
	struct ion_test_info info;
	struct it_totals t0;
	struct it_heaps hs;
	char dev[600];
	int ion, tfd;

	ion = it_setup(&hs);
	it_totals_get(&t0);
	tfd = ht_test_open();
	if (tfd < 0 || ht_test_info(tfd, &info) || !info.has_edu) {
		tap_skip("edu unbind", "no ion_test or no edu device");
	} else if (!it_heap_find(&hs, ION_AUTO_HEAP_NAME)) {
		tap_skip("edu unbind", "no auto heap");
	} else if (!tap_ok(!ht_edu_sysfs(dev, sizeof(dev)),
			   "edu found in sysfs")) {
		;
	} else {
		run(ion, tfd, basename(dev));
	}
	if (tfd >= 0)
		close(tfd);
	it_totals_back(&t0, "buffer and ion_test's file closed: debugfs "
		       "totals back");
	close(ion);
	return tap_exit();
}
