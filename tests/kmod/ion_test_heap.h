/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * ion_test_heap: user ABI of the test-only heap module.
 *
 * ion_test_heap.ko registers a heap of its own with ion through
 * <linux/ion_heap.h>, as a platform's heap driver would: name "test",
 * id ION_TEST_HEAP_ID, type ION_HEAP_TYPE_CUSTOM, backed by single pages.
 * It serves cached buffers only; an uncached request answers -EINVAL.
 *
 * Control and counters live in /sys/module/ion_test_heap/parameters/:
 * "registered" (write 0 to remove the heap, 1 to add it again) and
 * "stats" (read-only, ION_TEST_HEAP_STATS_FMT).  ION_IOC_CUSTOM with
 * ION_TEST_HEAP_CMD_STATS reaches the heap's custom_ioctl op and copies
 * a struct ion_test_heap_stats to the argument.
 */
#ifndef _UAPI_ION_TEST_HEAP_H
#define _UAPI_ION_TEST_HEAP_H

#include <linux/types.h>

#define ION_TEST_HEAP_NAME	"test"
#define ION_TEST_HEAP_ID	8
#define ION_TEST_HEAP_CMD_STATS	0x7e570001
#define ION_TEST_HEAP_MAGIC	0x10c4ea9f
/* Larger buffers answer -ENOMEM. */
#define ION_TEST_HEAP_MAX_LEN	(64 << 20)

/* The "stats" parameter: allocations, frees, bytes live. */
#define ION_TEST_HEAP_STATS_FMT	"%llu %llu %llu\n"

/**
 * struct ion_test_heap_stats - ION_TEST_HEAP_CMD_STATS result
 * @magic:	ION_TEST_HEAP_MAGIC
 * @reserved:	0
 * @allocs:	buffers the heap backed since it was loaded
 * @frees:	buffers it released since
 * @live_bytes:	bytes it backs now
 */
struct ion_test_heap_stats {
	__u32 magic;
	__u32 reserved;
	__u64 allocs;
	__u64 frees;
	__u64 live_bytes;
};

#endif /* _UAPI_ION_TEST_HEAP_H */
