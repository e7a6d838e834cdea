/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * ion_test: user ABI of the test-only DMA importer (/dev/ion_test).
 *
 * ion_test binds QEMU's "edu" PCI device and imports ion buffers the way a
 * real driver does: either as an ion kernel client (ion_import_fd, with
 * ion_phys and the CPU sg table visible) or as a plain dma-buf importer
 * (dma_buf_get, attach, map_attachment).  It can then DMA a range of one
 * imported buffer into the device's 4 KiB buffer and from there into a
 * range of another, and reports the addresses it used.  Each open file has
 * its own slots; closing it drops every import.
 *
 * Errors common to all commands: -EFAULT, -ENOTTY (unknown command),
 * -EINVAL (reserved field not 0, unknown mode or slot).
 */
#ifndef _UAPI_ION_TEST_H
#define _UAPI_ION_TEST_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define ION_TEST_MAX_SLOTS	8
/*
 * Largest transfer.  edu's buffer is 4 KiB, but QEMU up to at least 7.2
 * rejects (with a fatal hardware error) a transfer that ends exactly at
 * the buffer's end, so ion_test uses the first half of it.
 */
#define ION_TEST_MAX_XFER	2048

/**
 * struct ion_test_info - ION_TEST_IOC_INFO result
 * @has_edu:	  1 when an edu device is bound (DMA works), else 0
 * @dma_bits:	  DMA mask of the edu device in bits
 * @iommu:	  1 when edu's DMA goes through a translating IOMMU (DMA
 *		  addresses are IOVAs), 0 for direct DMA (physical addresses)
 * @max_xfer:	  largest ION_TEST_IOC_DMA length
 * @attr_query:	  1 when ION_TEST_IOC_ATTR reports page-table attributes
 * @coherent:	  1 when the kernel treats edu's DMA as cache coherent (no
 *		  cache maintenance on map and sync), 0 when every map and
 *		  sync for it cleans or invalidates the CPU caches
 * @iommu_group:  edu's IOMMU group number, -1 when it has none
 * @reserved:	  0
 */
struct ion_test_info {
	__u32 has_edu;
	__u32 dma_bits;
	__u32 iommu;
	__u32 max_xfer;
	__u32 attr_query;
	__u32 coherent;
	__s32 iommu_group;
	__u32 reserved;
};

#define ION_TEST_MODE_CLIENT	1	/* ion kernel client (ion_import_fd) */
#define ION_TEST_MODE_DMABUF	2	/* plain dma-buf importer */
/*
 * dma-buf importer with no preflight: edu attaches first and maps, for an
 * exporter that honours edu's constraints itself (ion's auto heap)
 */
#define ION_TEST_MODE_EDU_FIRST	3
/* as EDU_FIRST, the probe device (64-bit mask) attached before edu */
#define ION_TEST_MODE_PROBE_EDU	4
/*
 * plain dma-buf importer without edu: the probe device (64-bit mask)
 * attaches and maps, as a driver does at import; its slot is not edu's
 * (ION_TEST_IOC_EDU_COPY refuses it)
 */
#define ION_TEST_MODE_PROBE	5
/*
 * dma-buf importer for CPU access only: a device with no DMA mask (the
 * DMA API maps nothing for it) attaches, then asks for a mapping, which
 * the exporter must refuse; @dma_err is the attach's -errno, else the
 * map's result (ion: -EINVAL).  The attachment stays, unmapped.
 */
#define ION_TEST_MODE_NOMASK	6
/*
 * as PROBE, then the same attachment mapped a second time while the
 * first mapping stands: @dma_err is that second map's result (ion:
 * -EBUSY); a second mapping that succeeded is undone at once
 */
#define ION_TEST_MODE_PROBE_TWICE	7
/*
 * as PROBE, then the DMA addresses of the table this importer got are
 * changed (as CONFIG_DMABUF_DEBUG changes its page links) and the CPU
 * accesses the buffer (begin and end): the exporter must sync, and at
 * release unmap, its own table, which DMA-API debugging checks; @dma_err
 * is the CPU access's result
 */
#define ION_TEST_MODE_PROBE_SCRAMBLE	8
/*
 * the probe device attaches, maps (the buffer's first use, for an auto
 * buffer) and unmaps; the attachment stays, unmapped, as a driver's does
 * between two uses of the buffer (vb2 between DQBUF and QBUF) until the
 * release; @dma_addr, @dma_segs: that mapping's first address and its
 * segments
 */
#define ION_TEST_MODE_PROBE_IDLE	9

/**
 * struct ion_test_import - ION_TEST_IOC_IMPORT argument
 * @fd:	      in: an ion dma-buf fd
 * @mode:     in: ION_TEST_MODE_*
 * @slot:     out: slot of the import, for the other commands
 * @phys_err: out: 0 if ion_phys() answered (client mode), else its -errno
 *	      (-EOPNOTSUPP in dma-buf mode)
 * @size:     out: buffer size in bytes
 * @phys:     out: ion_phys() address when @phys_err is 0
 * @cpu_phys: out: physical address of the first page (client mode, else 0)
 * @dma_addr: out: DMA address of the buffer's start for edu (the probe
 *	      device in PROBE mode), 0 if unmapped
 * @dma_err:  out: 0 when mapped for edu (PROBE: the probe device), else
 *	      the attach's or map's -errno; -ERANGE when edu cannot reach the
 *	      memory (no IOMMU and pages above its DMA mask: refused before
 *	      anything is mapped); -ENODEV without edu (not in PROBE mode)
 * @dma_segs: out: DMA-contiguous segments of the mapping
 * @cpu_segs: out: sg entries of the CPU view (client mode, else 0)
 * @reserved: 0
 * @phys_end: out: EDU_FIRST and PROBE_EDU modes: one past the highest
 *	      physical address of the pages edu was given, and @cpu_phys
 *	      the first one's; else 0
 *
 * Errors: -EBADF (bad fd), -EINVAL (not an ion buffer, bad mode), -ENOSPC
 * (no free slot), -ENOMEM.
 */
struct ion_test_import {
	__s32 fd;
	__u32 mode;
	__u32 slot;
	__s32 phys_err;
	__u64 size;
	__u64 phys;
	__u64 cpu_phys;
	__u64 dma_addr;
	__s32 dma_err;
	__u32 dma_segs;
	__u32 cpu_segs;
	__u32 reserved;
	__u64 phys_end;
};

/**
 * struct ion_test_slot - ION_TEST_IOC_RELEASE argument
 * @slot:     a slot from ION_TEST_IOC_IMPORT
 * @reserved: 0
 */
struct ion_test_slot {
	__u32 slot;
	__u32 reserved;
};

/**
 * struct ion_test_dma - ION_TEST_IOC_DMA argument
 * @src_slot: in: import to read from (RAM to device)
 * @dst_slot: in: import to write to (device to RAM); may equal @src_slot
 * @src_off:  in: byte offset in the source buffer
 * @dst_off:  in: byte offset in the destination buffer
 * @len:      in: bytes, 1..ION_TEST_MAX_XFER
 * @flags:    in: 0
 * @src_dma:  out: DMA address edu read from (the first, if split)
 * @dst_dma:  out: DMA address edu wrote to (the first, if split)
 *
 * The caller brackets its own CPU access with DMA_BUF_IOCTL_SYNC as for any
 * device; in client mode ion_test syncs its private mapping itself.
 * Errors: -ENODEV (no edu), -ERANGE (a slot not mapped for edu, or a range
 * outside its buffer), -ETIMEDOUT (the device did not finish), -EINTR.
 */
struct ion_test_dma {
	__u32 src_slot;
	__u32 dst_slot;
	__u64 src_off;
	__u64 dst_off;
	__u32 len;
	__u32 flags;
	__u64 src_dma;
	__u64 dst_dma;
};

/**
 * struct ion_test_attr - ION_TEST_IOC_ATTR argument
 * @slot:	 in: a client-mode import (for the kernel linear map)
 * @page:	 in: which page of the buffer @kernel_bits is for (0: the first)
 * @uaddr:	 in: an address inside a user mapping of that buffer, or 0
 * @kernel_bits: out: cache-attribute bits of the linear-map PTE of the
 *		 buffer's page @page (x86: _PAGE_PWT | _PAGE_PCD | _PAGE_PAT;
 *		 0 is write-back, _PAGE_PWT alone is write-combining with
 *		 Linux's PAT layout; arm64: AttrIndx in bits 2:0 and the
 *		 MAIR_EL1 attribute byte it selects in bits 15:8, 0xff or
 *		 0xf0 (MTE tagged) Normal write-back, 0x44 Normal
 *		 non-cacheable)
 * @user_bits:	 out: the same for the PTE mapping @uaddr
 * @kernel_err:	 out: 0 or -errno for @kernel_bits
 * @user_err:	 out: 0 or -errno for @user_bits (-ENOENT when @uaddr is 0)
 *
 * Errors: -EINVAL (no such slot, not a client import, @page beyond the
 * buffer), -EOPNOTSUPP where the architecture has no such query.
 */
struct ion_test_attr {
	__u32 slot;
	__u32 page;
	__u64 uaddr;
	__u64 kernel_bits;
	__u64 user_bits;
	__s32 kernel_err;
	__s32 user_err;
};

/**
 * struct ion_test_fragment - ION_TEST_IOC_FRAGMENT argument
 * @order:    in: leave no free block of this order or above (1 to the
 *	      kernel's MAX_PAGE_ORDER), or 0 to give back what the file holds
 * @reserved: 0
 * @held:     out: pages the file now holds (0 after @order 0)
 *
 * Fragments free memory, so that an allocation of @order must be made of
 * smaller blocks: takes every free block of order @order - 1 (no reclaim,
 * no compaction: down to the min watermark), then gives back the upper
 * block of each pair of buddies it took both of, so that every aligned
 * block of @order that was free has its lower half held; last it takes
 * whole what is still free of @order and above (what the first pass left
 * below the watermark, what draining the per-CPU free lists completes:
 * its last attempt reclaims once, without I/O; and the free blocks of
 * CMA areas).  Free memory is about halved.  Direct compaction
 * could still rebuild large blocks out of movable pages elsewhere: callers
 * set vm.extfrag_threshold to 1000 for the duration.  The pages are held
 * until the same command with @order 0, or the file's release.
 *
 * Errors: -EINVAL (bad @order, or already holding pages), -ENOMEM (no
 * block of order @order - 1 at all).
 */
struct ion_test_fragment {
	__u32 order;
	__u32 reserved;
	__u64 held;
};

/**
 * struct ion_test_phys_attr - ION_TEST_IOC_PHYS_ATTR argument
 * @phys:	 in: physical address of a page of RAM (any owner: a page
 *		 an ion buffer had, after the buffer is gone)
 * @kernel_bits: out: the cache bits of that page's linear-map entry, as
 *		 &struct ion_test_attr's @kernel_bits
 * @map_kb:	 out: the size of that entry in KiB (x86: 4, 2048 or
 *		 1048576; 0 where the architecture does not say)
 * @reserved:	 0
 *
 * Errors: -EINVAL (@reserved set, or no page of RAM there), -ENOENT (not
 * in the linear map), -EOPNOTSUPP where the architecture has no such query.
 */
struct ion_test_phys_attr {
	__u64 phys;
	__u64 kernel_bits;
	__u32 map_kb;
	__u32 reserved;
};

/* ION_TEST_IOC_KAPI checks; a set bit in @failed names a failed one. */
#define ION_TEST_KAPI_IMPORT_FD		0x1	/* ion_import_fd */
#define ION_TEST_KAPI_KMAP_READ		0x2	/* vmap shows user data */
#define ION_TEST_KAPI_SHARE_DMABUF	0x4	/* ion_share_dma_buf */
#define ION_TEST_KAPI_IMPORT_DMABUF	0x8	/* ion_import_dma_buf */
#define ION_TEST_KAPI_PHYS		0x10	/* ion_phys */
#define ION_TEST_KAPI_SG_DMA		0x20	/* ion_sg_table mapped */
#define ION_TEST_KAPI_SG_OWN		0x40	/* one table per client */
#define ION_TEST_KAPI_ALLOC		0x80	/* ion_alloc, kmap write */
#define ION_TEST_KAPI_SHARE_FD		0x100	/* ion_share_fd */
#define ION_TEST_KAPI_STALE		0x200	/* freed handle refused */
#define ION_TEST_KAPI_FOREIGN		0x400	/* other client's refused */
#define ION_TEST_KAPI_FREE		0x800	/* ion_free, unmap */
#define ION_TEST_KAPI_DEAD		0x1000	/* dead client's refused */
#define ION_TEST_KAPI_KTHREAD_FD	0x2000	/* no fd for a kernel thread */

/**
 * struct ion_test_kapi - ION_TEST_IOC_KAPI argument
 * @fd:	       in: an ion dma-buf fd whose byte i user space set to
 *	       (@seed + i) & 0xff
 * @seed:      in: the pattern's seed
 * @heap_mask: in: heaps for the in-kernel ion_alloc()
 * @flags:     in: ION_FLAG_* for it
 * @len:       in: its size in bytes (at most 16 MiB)
 * @share_fd:  out: ion_share_fd() of that buffer, whose byte i ion_test
 *	       wrote through ion_map_kernel() as (@seed + 1 + i) & 0xff; -1
 *	       when it failed
 * @failed:    out: ION_TEST_KAPI_* checks that failed
 * @phys_err:  out: ion_phys() on the imported buffer: 0 (and the address
 *	       was the first page's) or its -errno
 * @sg_nents:  out: entries of the imported buffer's ion_sg_table()
 * @dma_nents: out: DMA segments after mapping it for ion_test's device
 * @ran:       in: 0; out: ION_TEST_KAPI_* checks that ran (a check whose
 *	       bit is clear here never ran: an earlier step failed)
 *
 * Runs every call of <linux/ion.h> in a client of its own, created and
 * destroyed for the command, and checks each result.  The file's own
 * client serves as the "other client".
 * Errors: -EINVAL (bad @len), -ENOMEM; a failing call only sets a bit.
 */
struct ion_test_kapi {
	__s32 fd;
	__u32 seed;
	__u32 heap_mask;
	__u32 flags;
	__u64 len;
	__s32 share_fd;
	__u32 failed;
	__s32 phys_err;
	__u32 sg_nents;
	__u32 dma_nents;
	__u32 ran;
};

#define ION_TEST_IOC_MAGIC	0xE1

#define ION_TEST_IOC_INFO	_IOR(ION_TEST_IOC_MAGIC, 0, struct ion_test_info)
#define ION_TEST_IOC_IMPORT	_IOWR(ION_TEST_IOC_MAGIC, 1, struct ion_test_import)
#define ION_TEST_IOC_RELEASE	_IOW(ION_TEST_IOC_MAGIC, 2, struct ion_test_slot)
#define ION_TEST_IOC_DMA	_IOWR(ION_TEST_IOC_MAGIC, 3, struct ion_test_dma)
#define ION_TEST_IOC_ATTR	_IOWR(ION_TEST_IOC_MAGIC, 4, struct ion_test_attr)
#define ION_TEST_IOC_FRAGMENT	_IOWR(ION_TEST_IOC_MAGIC, 5, struct ion_test_fragment)
#define ION_TEST_IOC_KAPI	_IOWR(ION_TEST_IOC_MAGIC, 6, struct ion_test_kapi)
#define ION_TEST_IOC_PHYS_ATTR	_IOWR(ION_TEST_IOC_MAGIC, 7, struct ion_test_phys_attr)

#endif /* _UAPI_ION_TEST_H */
