/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * ion: the ION memory allocator, user ABI.
 *
 * This header and the two beside it are the single source of ion's ABI:
 * the kernel module, libion, ionctl and the tests all include it.  They
 * are laid out as AOSP libion's kernel headers are, so a program written
 * against AOSP's libion builds unchanged (Documentation/abi-compat.rst,
 * "Headers"):
 *
 *  - <linux/ion.h> (this file): heap types and flags, and the handle ABI
 *    of Linux 3.10-4.11 and AOSP libion's legacy path (ION_IOC_ALLOC,
 *    FREE, MAP, SHARE, IMPORT, CUSTOM, SYNC): a client holds integer
 *    handles to buffers and asks for dma-buf fds;
 *  - <linux/ion_4.12.h>: the fd ABI of Linux 4.12+ (ION_IOC_NEW_ALLOC,
 *    HEAP_QUERY): allocation returns a dma-buf fd directly;
 *  - <linux/ion_4.19.h>: ION_IOC_ABI_VERSION and the heap ids of the
 *    Android common kernels 5.4/5.10.
 *
 * Each includes the others, so any one of them, in any order, declares
 * the whole ABI.  Both ALLOCs are nr 0; their structs differ in size, so
 * their numbers differ and one /dev/ion serves both without a mode.
 *
 * Names: by default the handle ABI's ALLOC is struct ion_allocation_data
 * and ION_IOC_ALLOC, and the fd ABI's struct ion_new_allocation_data and
 * ION_IOC_NEW_ALLOC, as in AOSP libion's headers and the 3.10-4.11
 * kernels.  A program written against the 4.12-5.10 staging header, where
 * struct ion_allocation_data and ION_IOC_ALLOC are the fd ABI's, defines
 * ION_UAPI_4_12_NAMES before including any of them; the handle ABI's ALLOC
 * is then struct ion_allocation_data_legacy and ION_IOC_ALLOC_LEGACY.
 * Those two and the ion_new_* names exist in both namings; ion's own code
 * uses only them.
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
 * @ION_HEAP_TYPE_AUTO:		 delayed allocation: the memory is chosen at
 *				 first use from the constraints of every
 *				 attached device (ion's own type; its heap
 *				 has id ION_HEAP_AUTO_ID, not its type)
 * @ION_NUM_HEAPS:		 AOSP's bound on heap types (no meaning to ion)
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
	ION_HEAP_TYPE_AUTO = 6,
	ION_NUM_HEAPS = 16,
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
 * The auto heap's id: 3, AOSP's chunk heap id, which ion never registers;
 * below the DMA heap's, so a mask naming several heaps tries it after the
 * DMA heap (Documentation/ion.rst, "Delayed allocation").
 */
#define ION_HEAP_AUTO_ID		3
#define ION_HEAP_AUTO_MASK		(1U << ION_HEAP_AUTO_ID)

/*
 * Allocation flags.  Without ION_FLAG_CACHED a buffer is mapped
 * write-combined (uncached) in user space and in the kernel.
 */
#define ION_FLAG_CACHED			1U
/* Cached, and the CPU must sync (DMA_BUF_IOCTL_SYNC / ION_IOC_SYNC). */
#define ION_FLAG_CACHED_NEEDS_SYNC	2U
#define ION_FLAGS_VALID			(ION_FLAG_CACHED | ION_FLAG_CACHED_NEEDS_SYNC)

/*
 * Heap names.  AOSP libdmabufheap finds the system heap on /dev/ion by the
 * name "ion_system_heap" through ION_IOC_HEAP_QUERY.
 */
#define ION_SYSTEM_HEAP_NAME		"ion_system_heap"
#define ION_SYSTEM_CONTIG_HEAP_NAME	"ion_system_contig_heap"
#define ION_CARVEOUT_HEAP_NAME		"ion_carveout_heap"
#define ION_DMA_HEAP_NAME		"ion_dma_heap"
#define ION_AUTO_HEAP_NAME		"ion_auto_heap"

/* ---------------------------------------------------------------------
 * The handle ABI (Linux 3.10-4.11)
 * ---------------------------------------------------------------------
 */

/* The handle ABI's ALLOC struct by its AOSP name, unless told otherwise. */
#ifndef ION_UAPI_4_12_NAMES
#define ion_allocation_data_legacy ion_allocation_data
#endif

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
 * Called struct ion_allocation_data unless ION_UAPI_4_12_NAMES is defined.
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

#define ION_IOC_MAGIC			'I'

/*
 * ION_IOC_ALLOC_LEGACY - allocate a buffer, get a handle (handle ABI);
 * also named ION_IOC_ALLOC (see the top).  Errors as ION_IOC_NEW_ALLOC, and
 *   -EINVAL  no heap in the mask can honour align (up to PAGE_SIZE it is
 *	      ignored, above it rounded up to a power of two, as the
 *	      kernels of this ABI gave; a heap that cannot passes the
 *	      request on to the next; -ENOMEM wins if one of them ran out
 *	      of memory)
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
 * raised (so it must be freed once more), up to 65536.
 *   -EBADF     fd is negative or not open
 *   -EINVAL    fd is not a dma-buf, or a dma-buf that ion did not export
 *   -EOVERFLOW the client's handle to that buffer has 65536 counts already
 *	        (FREE it first)
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

/* The fd ABI, ABI_VERSION, and the name of the handle ABI's ALLOC. */
#include "ion_4.19.h"

#ifdef ION_UAPI_4_12_NAMES
#define ION_IOC_ALLOC		ION_IOC_NEW_ALLOC
#else
#define ION_IOC_ALLOC		ION_IOC_ALLOC_LEGACY
#endif

#endif /* _UAPI_LINUX_ION_H */
