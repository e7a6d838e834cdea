// SPDX-License-Identifier: MIT
/*
 * fuzz_ioctl: the main run with the kernel's own fault injection on
 * (Documentation/fault-injection/fault-injection.rst; only kernels built
 * with CONFIG_FAILSLAB and CONFIG_FAIL_PAGE_ALLOC, i.e. the debug kernel
 * of make check-debug).  With --kernel-faults N (or
 * $ION_FUZZ_KERNEL_FAULTS), every slab allocation and every page
 * allocation of order 1 or more made in the context of the fuzzer's
 * threads (and the children they fork) fails with chance N %, wherever
 * in the kernel it is: ion's own, dma-buf's, the file and fd tables',
 * the socket layer's.
 *
 * Order-0 pages are left alone so that the fuzzer's own page faults
 * (user pages, page tables) never fail: a failed fault inside a
 * copy_to_user() would turn into EFAULT, a behaviour of the fault, not of
 * ion.  ion's order-0 chunks still meet failslab through every kmalloc
 * around them.
 *
 * Any call may then answer ENOMEM (or ENOBUFS from the socket layer):
 * check() allows both while the run is armed.  What the run asserts is
 * everything else: no crash, no splat, every other errno documented,
 * debugfs back to zero, and (make check-debug) no kmemleak report.
 * The threads arm themselves after their setup and disarm before their
 * cleanup, so the run measures ion's failure paths, not the fuzzer's.
 */
#include <fcntl.h>

#include "fuzz_ioctl.h"
#include "it_fail.h"

#define KF_DIR		"/sys/kernel/debug/"
#define KF_TIMES	100000000LL	/* failures allowed: counts hits */

static const char *const kf_attrs[] = { "failslab", "fail_page_alloc" };

int kfault_percent;
int kfault_armed;

static int kf_write(const char *attr, const char *knob, long long val)
{
	char path[128];

	snprintf(path, sizeof(path), KF_DIR "%s/%s", attr, knob);
	return it_knob_write(path, val);
}

static long long kf_read(const char *attr, const char *knob)
{
	char path[128];

	snprintf(path, sizeof(path), KF_DIR "%s/%s", attr, knob);
	return it_knob_read(path);
}

int kfault_start(void)
{
	unsigned int i;
	int ok = 1;

	if (!kfault_percent)
		return 1;
	if (access(KF_DIR "failslab", F_OK) ||
	    access(KF_DIR "fail_page_alloc", F_OK)) {
		tap_diag("kernel fault injection: this kernel has no failslab or fail_page_alloc");
		return 0;
	}
	for (i = 0; i < IT_ARRAY_SIZE(kf_attrs); i++)
		ok &= !kf_write(kf_attrs[i], "task-filter", 1) &&
		      !kf_write(kf_attrs[i], "verbose", 0) &&
		      !kf_write(kf_attrs[i], "ignore-gfp-wait", 0) &&
		      !kf_write(kf_attrs[i], "interval", 1) &&
		      !kf_write(kf_attrs[i], "space", 0) &&
		      !kf_write(kf_attrs[i], "times", KF_TIMES) &&
		      !kf_write(kf_attrs[i], "probability", kfault_percent);
	ok &= !kf_write("fail_page_alloc", "ignore-gfp-highmem", 0) &&
	      !kf_write("fail_page_alloc", "min-order", 1);
	tap_diag("kernel fault injection: slab allocations and page allocations of order >= 1 in the fuzzer's tasks fail with probability %d %%",
		 kfault_percent);
	kfault_armed = ok;
	return ok;
}

void kfault_thread(int on)
{
	int fd;

	if (!kfault_armed)
		return;
	fd = open("/proc/thread-self/make-it-fail", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, on ? "1" : "0", 1) != 1)
		tap_diag("make-it-fail: %s", strerror(errno));
	close(fd);
}

long kfault_stop(void)
{
	long long left, total = 0;
	unsigned int i;

	if (!kfault_armed)
		return 0;
	for (i = 0; i < IT_ARRAY_SIZE(kf_attrs); i++) {
		kf_write(kf_attrs[i], "probability", 0);
		left = kf_read(kf_attrs[i], "times");
		tap_diag("kernel fault injection: %s failed %lld allocations",
			 kf_attrs[i], left >= 0 ? KF_TIMES - left : -1);
		if (left >= 0)
			total += KF_TIMES - left;
		kf_write(kf_attrs[i], "times", 1);
	}
	kfault_armed = 0;
	return total;
}
