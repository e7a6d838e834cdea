/* SPDX-License-Identifier: MIT */
/*
 * kprobe events on arm64's DMA-direct cache maintenance, for the guest
 * tests that show what a cache clean or invalidate reached:
 * arch_sync_dma_for_device() cleans a physical range to the point of
 * coherency (DC CVAC), arch_sync_dma_for_cpu() invalidates it (DC IVAC),
 * whoever calls them (DMA-direct and iommu-dma, for every device the
 * kernel does not treat as DMA-coherent).  The events are "clean" and
 * "inval" in the group the test names to kp_setup() (one per test, so two
 * never meet); they record paddr, size and dir.  kp_setup() adds and
 * enables them, kp_remove() takes them away again (every test leaves the
 * system as found).
 */
#ifndef ION_HEAP_CACHE_KPROBE_H
#define ION_HEAP_CACHE_KPROBE_H

#include "heap_util.h"

#define TRACING		"/sys/kernel/debug/tracing"

/* 1 between a kp_setup() that succeeded and kp_remove(). */
extern int kp_ready;

/* Take the events of the last kp_setup()'s group away. */
void kp_remove(void);

/* Add and enable "clean" and "inval" in kprobe group @group: 0 or -errno. */
int kp_setup(const char *group);

/* Empty the trace buffer. */
int kp_clear(void);

/*
 * The first event @what ("clean" or "inval") with sequence number @from or
 * later (our events counted from 1, in trace order) whose range covers
 * [@phys, @phys + @len): its sequence number, or 0.
 */
int kp_find(const char *trace, const char *what, int from,
	    unsigned long long phys, unsigned long long len);

char *kp_read(void);

/* How many @what events cover [@phys, @phys + @len). */
int kp_count(const char *trace, const char *what,
	     unsigned long long phys, unsigned long long len);

/* kp_count() over the trace as it is now (kp_read()); 0 when unreadable. */
int kp_read_count(const char *what, unsigned long long phys,
		  unsigned long long len);

#endif /* ION_HEAP_CACHE_KPROBE_H */
