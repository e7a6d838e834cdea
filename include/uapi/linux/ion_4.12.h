/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * ion: the fd ABI of Linux 4.12+ (ION_IOC_NEW_ALLOC, ION_IOC_HEAP_QUERY),
 * under the names of AOSP libion's <linux/ion_4.12.h>.  Part of ion's ABI
 * with <linux/ion.h> and <linux/ion_4.19.h>; see the top of <linux/ion.h>.
 */
/*
 * The guard is that of AOSP's <linux/ion_4.12.h> and <linux/ion_4.19.h>, so a
 * copy of either in a program's tree and this file, in any order, declare
 * these structs once.
 */
#ifndef _UAPI_LINUX_ION_NEW_H
#define _UAPI_LINUX_ION_NEW_H

#include <linux/ioctl.h>
#include <linux/types.h>

#include "ion.h"

/* Longest heap name, including the terminating NUL. */
#define MAX_HEAP_NAME			32
#define ION_MAX_HEAP_NAME		MAX_HEAP_NAME

/* The fd ABI's ALLOC struct by its 4.12 staging name, if asked for. */
#ifdef ION_UAPI_4_12_NAMES
#define ion_new_allocation_data ion_allocation_data
#endif

/**
 * struct ion_new_allocation_data - ION_IOC_NEW_ALLOC argument
 * @len:	  in: size in bytes, rounded up to whole pages
 * @heap_id_mask: in: heaps to try, highest heap id first
 * @flags:	  in: ION_FLAG_*
 * @fd:		  out: a dma-buf fd (O_RDWR | O_CLOEXEC); ignored on input
 * @unused:	  ignored (as by the 4.12-5.10 kernels)
 *
 * 24 bytes for every caller.  Called struct ion_allocation_data as well
 * when ION_UAPI_4_12_NAMES is defined.
 */
struct ion_new_allocation_data {
	__u64 len;
	__u32 heap_id_mask;
	__u32 flags;
	__u32 fd;
	__u32 unused;
};

/**
 * struct ion_heap_data - one heap, as ION_IOC_HEAP_QUERY reports it
 * @name:      NUL-terminated heap name (ION_*_HEAP_NAME)
 * @type:      enum ion_heap_type
 * @heap_id:   bit number of the heap in a heap_id_mask
 * @reserved0: 0
 * @reserved1: 0
 * @reserved2: 0
 */
struct ion_heap_data {
	char name[MAX_HEAP_NAME];
	__u32 type;
	__u32 heap_id;
	__u32 reserved0;
	__u32 reserved1;
	__u32 reserved2;
};

/**
 * struct ion_heap_query - ION_IOC_HEAP_QUERY argument
 * @cnt:       in: entries in @heaps; out: entries filled (or, when @heaps
 *	       is 0, the number of heaps, whatever @cnt was)
 * @reserved0: must be 0
 * @heaps:     in: user pointer to an array of struct ion_heap_data
 * @reserved1: must be 0
 * @reserved2: must be 0
 */
struct ion_heap_query {
	__u32 cnt;
	__u32 reserved0;
	__u64 heaps;
	__u32 reserved1;
	__u32 reserved2;
};

/*
 * ION_IOC_NEW_ALLOC - allocate a buffer, get a dma-buf fd (fd ABI); also
 * named ION_IOC_ALLOC when ION_UAPI_4_12_NAMES is defined.
 *   -ENODEV  heap_id_mask is 0 or names no registered heap
 *   -EINVAL  len is 0 or overflows when page aligned (unknown flag bits,
 *	      fd and unused are ignored, as the kernels of this ABI did)
 *   -ENOMEM  no heap in the mask could satisfy the request
 *   -EDQUOT  every heap in the mask refused for the caller's quota, none
 *	      for memory (Documentation/ion.rst, "Quotas")
 *   -EMFILE  no free fd
 */
#define ION_IOC_NEW_ALLOC	_IOWR(ION_IOC_MAGIC, 0, \
				      struct ion_new_allocation_data)

/*
 * ION_IOC_HEAP_QUERY - list the heaps in allocation priority order
 * (highest heap id first).
 *   -EINVAL  a reserved field is not 0
 *   -EFAULT  the heaps array cannot be written
 */
#define ION_IOC_HEAP_QUERY	_IOWR(ION_IOC_MAGIC, 8, struct ion_heap_query)

#endif /* _UAPI_LINUX_ION_NEW_H */
