/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * ion: what the Android common kernels 5.4/5.10 added to the fd ABI
 * (ION_IOC_ABI_VERSION, the heap id ranges), under the names of AOSP
 * libion's <linux/ion_4.19.h>.  Part of ion's ABI with <linux/ion.h> and
 * <linux/ion_4.12.h>; see the top of <linux/ion.h>.
 */
#ifndef _UAPI_LINUX_ION_4_19_H
#define _UAPI_LINUX_ION_4_19_H

#include <linux/ioctl.h>
#include <linux/types.h>

#include "ion_4.12.h"

/**
 * enum ion_heap_type_ext - heap types beyond enum ion_heap_type
 * @ION_HEAP_TYPE_CUSTOM_EXT: first type free for vendor heaps
 * @ION_HEAP_TYPE_MAX:	      last heap type
 */
enum ion_heap_type_ext {
	ION_HEAP_TYPE_CUSTOM_EXT = 16,
	ION_HEAP_TYPE_MAX = 31,
};

/**
 * enum ion_heap_id - heap_id_mask bits the Android common kernels assign
 * @ION_HEAP_SYSTEM:	     the system heap (id 0, as on ion)
 * @ION_HEAP_SYSTEM_CONTIG:  the system-contig heap (id 1, as on ion)
 * @ION_HEAP_CARVEOUT_START: first of 5 carveout heap ids (2-6)
 * @ION_HEAP_CARVEOUT_END:   last carveout heap id
 * @ION_HEAP_CHUNK:	     the chunk heap (id 7)
 * @ION_HEAP_DMA_START:	     first of 8 DMA (CMA) heap ids (8-15)
 * @ION_HEAP_DMA_END:	     last DMA heap id
 * @ION_HEAP_CUSTOM_START:   first of 16 vendor heap ids (16-31)
 * @ION_HEAP_CUSTOM_END:     last vendor heap id
 *
 * Masks, not ids.  ion gives its heaps the ids of their types (the
 * carveout heap 2, the DMA heap 4), which only the first two and the
 * carveout start match: find a heap's id with ION_IOC_HEAP_QUERY.
 * ION_HEAP_CUSTOM_END is bit 31, which an int cannot hold: it is INT_MIN,
 * which converts to the mask 0x80000000 (AOSP's shift overflowed an int
 * to the same value).
 */
enum ion_heap_id {
	ION_HEAP_SYSTEM = (1 << ION_HEAP_TYPE_SYSTEM),
	ION_HEAP_SYSTEM_CONTIG = (ION_HEAP_SYSTEM << 1),
	ION_HEAP_CARVEOUT_START = (ION_HEAP_SYSTEM_CONTIG << 1),
	ION_HEAP_CARVEOUT_END = (ION_HEAP_CARVEOUT_START << 4),
	ION_HEAP_CHUNK = (ION_HEAP_CARVEOUT_END << 1),
	ION_HEAP_DMA_START = (ION_HEAP_CHUNK << 1),
	ION_HEAP_DMA_END = (ION_HEAP_DMA_START << 7),
	ION_HEAP_CUSTOM_START = (ION_HEAP_DMA_END << 1),
	ION_HEAP_CUSTOM_END = (int)((unsigned int)ION_HEAP_CUSTOM_START << 15),
};

/* Number of heap ids (bits of a heap_id_mask). */
#define ION_NUM_MAX_HEAPS		(32)

/* Version reported by ION_IOC_ABI_VERSION (2 as on Android common kernels). */
#define ION_ABI_VERSION			2

/* ION_IOC_ABI_VERSION - read ION_ABI_VERSION. */
#define ION_IOC_ABI_VERSION	_IOR(ION_IOC_MAGIC, 9, __u32)

#endif /* _UAPI_LINUX_ION_4_19_H */
