// SPDX-License-Identifier: MIT
/*
 * A user mapping of a buffer with each kernel allocation of the mmap()
 * failed in turn (/proc/thread-self/fail-nth, the kernel's failslab and
 * fail_page_alloc): on every heap, cached and uncached, the call answers
 * ENOMEM or succeeds, nothing is left once the fd is closed (debugfs
 * summary), and the kernel says nothing (the rig's splat check).
 *
 * Each try maps at a hint in an untouched gigabyte of the address space,
 * so that the mapping must allocate its page tables (and, on the debug
 * kernel, their locks, slab objects under lockdep).  That is where 6.12's
 * remap_pfn_range() WARNed in get_pat_info() when its first page table
 * could not be had (ion_pfnmap_prepare() in kernel/include/ion_compat.h).
 * Only kernels with fault injection have fail-nth (make check-debug's):
 * elsewhere this is skipped.
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "it_fail.h"
#include "ion_test_util.h"
#include "tap.h"

#define LEN		(64 << 10)
#define MAX_NTH		400
#define HINT_BASE	0x500000000000ULL
#define HINT_STEP	(1ULL << 30)
#define FAILSLAB_WAIT	"/sys/kernel/debug/failslab/ignore-gfp-wait"
#define FAILPAGE_WAIT	"/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait"
/* Fail this thread's Nth fallible kernel call; reads 0 once it has. */
#define FAIL_NTH	"/proc/thread-self/fail-nth"

static unsigned long long next_hint = HINT_BASE;

/*
 * mmap @fd with its Nth kernel allocation failed, for N = 1, 2, ... until
 * a call makes fewer than N: every try must succeed or answer ENOMEM.
 */
static void case_heap(int ion, const struct it_heap *k, unsigned int flags)
{
	int fd = it_alloc_fd(ion, LEN, 1u << k->id, flags), n, left, err;
	int failed = 0, odd = 0, done = 0;
	long long buffers = -1, bytes = -1;
	const char *how = flags ? "cached" : "uncached";
	char why[128];
	void *p;

	if (fd < 0) {
		snprintf(why, sizeof(why), "%s %s: %s", k->name, how,
			 strerror(-fd));
		tap_ok(0, "mmap with each allocation failed: a buffer (%s)",
		       why);
		return;
	}
	for (n = 1; n <= MAX_NTH && !done; n++) {
		next_hint += HINT_STEP;
		if (it_knob_write(FAIL_NTH, n))
			break;
		p = mmap((void *)(uintptr_t)next_hint, LEN,
			 PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		err = p == MAP_FAILED ? errno : 0;
		left = it_knob_read(FAIL_NTH);
		it_knob_write(FAIL_NTH, 0);
		done = left > 0;
		if (!err) {
			((volatile char *)p)[0] = 1;
			((volatile char *)p)[LEN - 1] = 1;
			munmap(p, LEN);
		} else if (err == ENOMEM) {
			failed++;
		} else if (odd++ < 3) {
			tap_diag("%s %s: fail-nth %d: mmap answered %s",
				 k->name, how, n, strerror(err));
		}
	}
	close(fd);
	tap_ok(done && !odd && failed,
	       "%s %s: mmap with its allocations failed one by one (%d of them) answered ENOMEM (%d times) or mapped",
	       k->name, how, n - 1, failed);
	err = it_summary(&buffers, &bytes);
	tap_ok(!err && !buffers && !bytes,
	       "%s %s: nothing is left after the fd is closed (buffers %lld, bytes %lld)",
	       k->name, how, buffers, bytes);
}

int main(void)
{
	struct it_heaps hs;
	const struct it_heap *k;
	long long slab_wait, page_wait;
	unsigned int i;
	int ion;

	if (access(FAILSLAB_WAIT, F_OK) || it_knob_write(FAIL_NTH, 0)) {
		tap_skip("mmap with each allocation failed",
			 "this kernel has no failslab or fail-nth (make check-debug's has)");
		return tap_exit();
	}
	ion = it_setup(&hs);
	/* GFP_KERNEL allocations are left alone unless these are off. */
	slab_wait = it_knob_read(FAILSLAB_WAIT);
	page_wait = it_knob_read(FAILPAGE_WAIT);
	if (it_knob_write(FAILSLAB_WAIT, 0) || it_knob_write(FAILPAGE_WAIT, 0))
		tap_ok(0, "failslab and fail_page_alloc take sleeping allocations");
	for (i = 0; (k = it_known_next(&hs, &i)); i++) {
		case_heap(ion, k, ION_FLAG_CACHED);
		case_heap(ion, k, 0);
	}
	it_knob_write(FAILSLAB_WAIT, slab_wait);
	it_knob_write(FAILPAGE_WAIT, page_wait);
	close(ion);
	return tap_exit();
}
