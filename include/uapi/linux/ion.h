/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * ion: the ION memory allocator, user ABI.
 *
 * This header is the single source of ion's ABI: the kernel module, libion,
 * ionctl and the tests all include it.  Two historic ABIs are served on the
 * same /dev/ion node; their ioctl numbers differ because their structs
 * differ in size, so a caller never has to select a mode:
 *
 *  - the handle ABI of Linux 3.10-4.11 and AOSP libion's legacy path
 *    (ION_IOC_ALLOC_LEGACY, FREE, MAP, SHARE, IMPORT, CUSTOM, SYNC): a client
 *    holds integer handles to buffers and asks for dma-buf fds;
 *  - the fd ABI of Linux 4.12+ (ION_IOC_ALLOC, HEAP_QUERY, ABI_VERSION):
 *    allocation returns a dma-buf fd directly and no handle is kept.
 *
 * Every buffer is a dma-buf.  Map it with mmap() on its fd and bracket CPU
 * access with DMA_BUF_IOCTL_SYNC (<linux/dma-buf.h>).
 *
 * Errors common to all ion ioctls:
 *   -EFAULT  the argument (or an array it points to) is not accessible
 *   -ENOTTY  unknown command
 */
#ifndef _UAPI_LINUX_ION_H
#define _UAPI_LINUX_ION_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * typedef ion_user_handle_t - a client's handle to a buffer (handle ABI)
 *
 * Small positive integers, local to the client (the process) that holds
 * them.  0 is never a valid handle.
 */
typedef int ion_user_handle_t;

/**
 * enum ion_heap_type - kind of memory a heap hands out
 * @ION_HEAP_TYPE_SYSTEM:	 non-contiguous pages
 * @ION_HEAP_TYPE_SYSTEM_CONTIG: physically contiguous pages from the buddy
 *				 allocator
 * @ION_HEAP_TYPE_CARVEOUT:	 memory set aside at boot (reserve_mem=)
 * @ION_HEAP_TYPE_CHUNK:	 fixed-size chunks of a carveout
 * @ION_HEAP_TYPE_DMA:		 memory from the DMA API (dma_alloc_attrs)
 * @ION_HEAP_TYPE_CUSTOM:	 first type free for platform heaps
 *
 * By default a heap's id equals its type, so the ION_HEAP_*_MASK values
 * below select heaps by type as old user space expects.
 */
enum ion_heap_type {
	ION_HEAP_TYPE_SYSTEM = 0,
	ION_HEAP_TYPE_SYSTEM_CONTIG = 1,
	ION_HEAP_TYPE_CARVEOUT = 2,
	ION_HEAP_TYPE_CHUNK = 3,
	ION_HEAP_TYPE_DMA = 4,
	ION_HEAP_TYPE_CUSTOM = 5,
};

/* Heap ids are bit numbers in a heap_id_mask. */
#define ION_NUM_HEAP_IDS		(sizeof(unsigned int) * 8)

#define ION_HEAP_SYSTEM_MASK		(1U << ION_HEAP_TYPE_SYSTEM)
#define ION_HEAP_SYSTEM_CONTIG_MASK	(1U << ION_HEAP_TYPE_SYSTEM_CONTIG)
#define ION_HEAP_CARVEOUT_MASK		(1U << ION_HEAP_TYPE_CARVEOUT)
#define ION_HEAP_CHUNK_MASK		(1U << ION_HEAP_TYPE_CHUNK)
#define ION_HEAP_TYPE_DMA_MASK		(1U << ION_HEAP_TYPE_DMA)
#define ION_HEAP_DMA_MASK		ION_HEAP_TYPE_DMA_MASK

/*
 * Allocation flags.  Without ION_FLAG_CACHED a buffer is mapped
 * write-combined (uncached) in user space and in the kernel.
 */
#define ION_FLAG_CACHED			1U
/* Cached, and the CPU must sync (DMA_BUF_IOCTL_SYNC / ION_IOC_SYNC). */
#define ION_FLAG_CACHED_NEEDS_SYNC	2U
#define ION_FLAGS_VALID			(ION_FLAG_CACHED | ION_FLAG_CACHED_NEEDS_SYNC)

/* Longest heap name, including the terminating NUL. */
#define ION_MAX_HEAP_NAME		32

/*
 * Heap names.  AOSP libdmabufheap finds the system heap on /dev/ion by the
 * name "ion_system_heap" through ION_IOC_HEAP_QUERY.
 */
#define ION_SYSTEM_HEAP_NAME		"ion_system_heap"
#define ION_SYSTEM_CONTIG_HEAP_NAME	"ion_system_contig_heap"
#define ION_CARVEOUT_HEAP_NAME		"ion_carveout_heap"
#define ION_DMA_HEAP_NAME		"ion_dma_heap"

/* ---------------------------------------------------------------------
 * The handle ABI (Linux 3.10-4.11)
 * ---------------------------------------------------------------------
 */

/**
 * struct ion_allocation_data_legacy - ION_IOC_ALLOC_LEGACY argument
 * @len:	  in: size in bytes, rounded up to whole pages
 * @align:	  in: alignment of the buffer's start, 0 or a power of two;
 *		  honoured by contiguous heaps, pages are always page aligned
 * @heap_id_mask: in: heaps to try, highest heap id first
 * @flags:	  in: ION_FLAG_*
 * @handle:	  out: the new handle
 *
 * 32 bytes for 64-bit callers, 20 bytes for 32-bit callers (size_t).
 */
struct ion_allocation_data_legacy {
	__kernel_size_t len;
	__kernel_size_t align;
	unsigned int heap_id_mask;
	unsigned int flags;
	ion_user_handle_t handle;
};

/**
 * struct ion_fd_data - handle and fd (MAP, SHARE, IMPORT, SYNC)
 * @handle: in (MAP, SHARE) or out (IMPORT)
 * @fd:	    out (MAP, SHARE: a new dma-buf fd, O_CLOEXEC) or in (IMPORT, SYNC)
 */
struct ion_fd_data {
	ion_user_handle_t handle;
	int fd;
};

/**
 * struct ion_handle_data - ION_IOC_FREE argument
 * @handle: the handle to drop one reference of
 */
struct ion_handle_data {
	ion_user_handle_t handle;
};

/**
 * struct ion_custom_data - ION_IOC_CUSTOM argument
 * @cmd: heap-defined command
 * @arg: heap-defined argument
 *
 * 16 bytes for 64-bit callers, 8 bytes for 32-bit callers.
 */
struct ion_custom_data {
	unsigned int cmd;
	unsigned long arg;
};

/* ---------------------------------------------------------------------
 * The fd ABI (Linux 4.12+)
 * ---------------------------------------------------------------------
 */

/**
 * struct ion_allocation_data - ION_IOC_ALLOC argument
 * @len:	  in: size in bytes, rounded up to whole pages
 * @heap_id_mask: in: heaps to try, highest heap id first
 * @flags:	  in: ION_FLAG_*
 * @fd:		  out: a dma-buf fd (O_RDWR | O_CLOEXEC); ignored on input
 * @unused:	  ignored (as by the 4.12-5.10 kernels)
 */
struct ion_allocation_data {
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
	char name[ION_MAX_HEAP_NAME];
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

/* Version reported by ION_IOC_ABI_VERSION (2 as on Android common kernels). */
#define ION_ABI_VERSION			2

#define ION_IOC_MAGIC			'I'

/*
 * ION_IOC_ALLOC - allocate a buffer, get a dma-buf fd (fd ABI)
 *   -ENODEV  heap_id_mask is 0 or names no registered heap
 *   -EINVAL  len is 0 or overflows when page aligned (unknown flag bits,
 *	      fd and unused are ignored, as the kernels of this ABI did)
 *   -ENOMEM  no heap in the mask could satisfy the request
 *   -EMFILE  no free fd
 */
#define ION_IOC_ALLOC		_IOWR(ION_IOC_MAGIC, 0, struct ion_allocation_data)

/*
 * ION_IOC_ALLOC_LEGACY - allocate a buffer, get a handle (handle ABI);
 * historically also named ION_IOC_ALLOC.  Errors as ION_IOC_ALLOC, and
 *   -EINVAL  align is above PAGE_SIZE and not a power of two (up to
 *	      PAGE_SIZE it is ignored), or no heap in the mask can honour it
 *	      (a heap that cannot passes the request on to the next; -ENOMEM
 *	      wins if one of them ran out of memory)
 */
#define ION_IOC_ALLOC_LEGACY	_IOWR(ION_IOC_MAGIC, 0, \
				      struct ion_allocation_data_legacy)

/*
 * ION_IOC_FREE - drop one reference to a handle; the handle goes when its
 * count reaches 0, the buffer when nothing else (fd, mapping, importer)
 * holds it.
 *   -EINVAL  unknown, freed, or another client's handle
 */
#define ION_IOC_FREE		_IOWR(ION_IOC_MAGIC, 1, struct ion_handle_data)

/*
 * ION_IOC_MAP, ION_IOC_SHARE - a new dma-buf fd for a handle; mmap() it to
 * map the buffer.  The two are the same call.
 *   -EINVAL  unknown, freed, or another client's handle
 *   -EMFILE  no free fd
 */
#define ION_IOC_MAP		_IOWR(ION_IOC_MAGIC, 2, struct ion_fd_data)
#define ION_IOC_SHARE		_IOWR(ION_IOC_MAGIC, 4, struct ion_fd_data)

/*
 * ION_IOC_IMPORT - a handle for a dma-buf fd that ion exported.  A client
 * that already holds the buffer gets the same handle back with its count
 * raised (so it must be freed once more).
 *   -EBADF   fd is negative or not open
 *   -EINVAL  fd is not a dma-buf, or a dma-buf that ion did not export
 */
#define ION_IOC_IMPORT		_IOWR(ION_IOC_MAGIC, 5, struct ion_fd_data)

/*
 * ION_IOC_CUSTOM - heap-specific command.
 *   -ENOTTY  no heap implements custom commands
 */
#define ION_IOC_CUSTOM		_IOWR(ION_IOC_MAGIC, 6, struct ion_custom_data)

/*
 * ION_IOC_SYNC - make CPU writes to the buffer behind fd visible to the
 * devices it is mapped for (a full DMA_BUF_SYNC_RW end of CPU access).
 *   -EBADF   fd is negative or not open
 *   -EINVAL  fd is not an ion dma-buf
 */
#define ION_IOC_SYNC		_IOWR(ION_IOC_MAGIC, 7, struct ion_fd_data)

/*
 * ION_IOC_HEAP_QUERY - list the heaps in allocation priority order
 * (highest heap id first).
 *   -EINVAL  a reserved field is not 0
 *   -EFAULT  the heaps array cannot be written
 */
#define ION_IOC_HEAP_QUERY	_IOWR(ION_IOC_MAGIC, 8, struct ion_heap_query)

/* ION_IOC_ABI_VERSION - read ION_ABI_VERSION. */
#define ION_IOC_ABI_VERSION	_IOR(ION_IOC_MAGIC, 9, __u32)

#endif /* _UAPI_LINUX_ION_H */
