// SPDX-License-Identifier: MIT
/*
 * ion-bench's "bounce" op (untimed, issue 20): bytes that swiotlb bounces
 * when QEMU's edu device maps a buffer and reads all of it, for ion-auto
 * (the backing chosen at edu's first use, below edu's DMA mask) and
 * ion-system (pages wherever the page allocator put them).  One "@bounce"
 * row per implementation: impl, size, bytes mapped through swiotlb's
 * bounce slots (the size of each swiotlb_bounced event, in a tracefs
 * instance of the bench's own with that event alone) and their number,
 * and "read" when edu mapped and read the buffer, else the errno.
 *
 * It needs ion_test, the test module that drives edu (tests/kmod/; loaded
 * here when absent, with edu_dma_bits from -E, and unloaded after): edu
 * attaches first and maps (ION_TEST_MODE_EDU_FIRST).  ion-system's buffer
 * is mapped that way only where swiotlb can bounce (its debugfs
 * io_tlb_nslabs is not 0); without swiotlb, DMA-direct would warn about an
 * address beyond the mask, so ion_test's preflight (ION_TEST_MODE_DMABUF)
 * refuses it first and the row says ERANGE: what that buffer costs there.
 * Only when -o names it: the boot decides what it shows
 * (Documentation/bench.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <ion/ion.h>

#include "ion_tracefs_priv.h"
#include "../../tests/kmod/ion_test.h"
#include "ion-bench.h"

#define TEST_DEV	"/dev/ion_test"
#define NSLABS		"/sys/kernel/debug/swiotlb/io_tlb_nslabs"
#define BOUNCE_SIZE	(1UL << 20)

static char bounce_dir[200];	/* the tracefs instance */

/* Sum of size= over the swiotlb_bounced events of the instance. */
static long long bounced_bytes(long *events)
{
	char path[260], line[512], *p;
	long long sum = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", bounce_dir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	*events = 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strstr(line, "swiotlb_bounced:"))
			continue;
		p = strstr(line, " size=");
		if (p) {
			sum += strtoll(p + 6, NULL, 10);
			(*events)++;
		}
	}
	fclose(f);
	return sum;
}

static int swiotlb_active(void)
{
	char buf[32] = "";
	int fd = open(NSLABS, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	return n > 0 && strtoll(buf, NULL, 0) > 0;
}

/*
 * edu reads the import @slot: READS transfers of its largest size spread
 * over the buffer, each written back where it came from.  Not all of it:
 * QEMU's edu takes 100 ms (virtual) per DMA, and swiotlb bounces the whole
 * mapping at map and unmap whatever the device reads.
 */
#define READS	8
static int edu_read(int tfd, unsigned int slot, size_t size,
		    unsigned int max)
{
	struct ion_test_dma d = { .src_slot = slot, .dst_slot = slot,
				  .len = max };
	unsigned int i;

	for (i = 0; i < READS; i++) {
		d.src_off = size / READS * i;
		d.dst_off = d.src_off;
		if (ioctl(tfd, ION_TEST_IOC_DMA, &d))
			return -errno;
	}
	return 0;
}

/* One row: @name's buffer from @mask imported for edu in @mode. */
static void bounce_one(struct ion_device *dev, int tfd, const char *name,
		       unsigned int mask, unsigned int mode,
		       const struct ion_test_info *info)
{
	struct ion_test_import imp = { .mode = mode };
	struct ion_test_slot rel = { 0 };
	long long bytes;
	long events = 0;
	int fd, err;

	fd = ion_device_alloc(dev, BOUNCE_SIZE, mask, ION_FLAG_CACHED);
	if (fd < 0) {
		printf("@skip\t%s\tbounce\t%lu\t%s\n", name, BOUNCE_SIZE,
		       strerror(-fd));
		return;
	}
	ion_tracefs_write(bounce_dir, "trace", "");
	imp.fd = fd;
	if (ioctl(tfd, ION_TEST_IOC_IMPORT, &imp)) {
		err = errno;
	} else {
		err = -imp.dma_err;
		if (!err)
			err = -edu_read(tfd, imp.slot, BOUNCE_SIZE,
					info->max_xfer);
		rel.slot = imp.slot;
		ioctl(tfd, ION_TEST_IOC_RELEASE, &rel);	/* unmap, detach */
	}
	close(fd);
	bytes = bounced_bytes(&events);
	printf("@bounce\t%s\t%lu\t%lld\t%ld\t%s\n", name, BOUNCE_SIZE, bytes,
	       events, err ? strerror(err) : "read");
	progress("%-12s bounce %lu: %lld bytes through swiotlb in %ld mappings (%s)",
		 name, BOUNCE_SIZE, bytes, events, err ? strerror(err) : "mapped, edu read it");
}

void run_bounce(int edu_bits)
{
	struct ion_test_info info = { 0 };
	struct ion_device *dev;
	int tfd, loaded = 0, sys_id = -1, auto_id = -1, n, i;
	char cmd[96];

	tfd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	if (tfd < 0) {
		snprintf(cmd, sizeof(cmd), "modprobe ion_test edu_dma_bits=%d",
			 edu_bits);
		loaded = !system(cmd);
		tfd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	}
	if (tfd < 0 || ioctl(tfd, ION_TEST_IOC_INFO, &info) || !info.has_edu) {
		progress("bounce: no ion_test with an edu device: skipped");
		printf("@skip\t-\tbounce\t%lu\tno ion_test or no edu\n",
		       BOUNCE_SIZE);
		goto out_close;
	}
	if (ion_device_open(&dev))
		goto out_close;
	n = ion_device_heap_count(dev);
	for (i = 0; i < n; i++) {
		const struct ion_heap_data *h = ion_device_heap(dev, i);

		if (h->type == ION_HEAP_TYPE_SYSTEM)
			sys_id = h->heap_id;
		if (h->type == ION_HEAP_TYPE_AUTO)
			auto_id = h->heap_id;
	}
	if (ion_tracefs_instance("ion-bench-bounce", bounce_dir,
				 sizeof(bounce_dir)) ||
	    ion_tracefs_write(bounce_dir, "events/swiotlb/swiotlb_bounced/enable",
			      "1")) {
		progress("bounce: no swiotlb_bounced event: skipped");
		goto out_dev;
	}
	progress("bounce: edu %u-bit mask, %s, swiotlb %s", info.dma_bits,
		 info.iommu ? "IOMMU" : "direct",
		 swiotlb_active() ? "active" : "absent");
	if (auto_id >= 0)
		bounce_one(dev, tfd, "ion-auto", 1U << auto_id,
			   ION_TEST_MODE_EDU_FIRST, &info);
	if (sys_id >= 0)
		bounce_one(dev, tfd, "ion-system", 1U << sys_id,
			   swiotlb_active() || info.iommu ?
			   ION_TEST_MODE_EDU_FIRST : ION_TEST_MODE_DMABUF,
			   &info);
	ion_tracefs_instance_remove(bounce_dir);
out_dev:
	ion_device_close(dev);
out_close:
	if (tfd >= 0)
		close(tfd);
	if (loaded)
		syscall(SYS_delete_module, "ion_test", O_NONBLOCK);
}
