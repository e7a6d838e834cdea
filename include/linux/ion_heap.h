/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion: the heap API - what a heap may see of the core.
 *
 * Heaps include this header and nothing of the core's internals, whether
 * they are built into ion.ko or live in a module of their own.  A heap is
 * a struct ion_heap with a const ops table, registered with
 * ion_device_add_heap().  The core owns buffers (lifetime, accounting,
 * dma-buf, handles); a heap only provides and releases their backing.
 * The symbols are in the ION namespace (ION_MODULE_IMPORT_NS()); a heap in
 * another module sets &ion_heap.owner to THIS_MODULE.
 */
#ifndef _LINUX_ION_HEAP_H
#define _LINUX_ION_HEAP_H

#include <linux/dma-direction.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/string.h>
#include <linux/types.h>
#include <uapi/linux/ion.h>

/* As in <linux/ion.h>: the import of the ION namespace on every kernel. */
#ifndef ION_MODULE_IMPORT_NS
#define ION_MODULE_IMPORT_NS()	MODULE_INFO(import_ns, "ION")
#endif

struct device;
struct ion_heap;
struct ion_heap_core;
struct module;
struct seq_file;

/**
 * struct ion_buffer - what a heap sees of a buffer
 * @heap:	the heap the buffer comes from (set by the core)
 * @size:	size in bytes, page aligned (set by the core)
 * @align:	requested alignment, 0 or a power of two (set by the core)
 * @flags:	ION_FLAG_* (set by the core)
 * @sg_table:	the backing as CPU pages; set by @allocate (or returned by
 *		@map_dma) and valid until @free
 * @priv_virt:	the heap's own per-buffer data
 *
 * The core embeds this in its own buffer object; heaps must not allocate
 * or free it.
 */
struct ion_buffer {
	struct ion_heap *heap;
	size_t size;
	unsigned long align;
	unsigned long flags;
	struct sg_table *sg_table;
	void *priv_virt;
};

/* The longest chunk one sg entry describes (its length is an unsigned int). */
#define ION_CHUNK_MAX	(UINT_MAX & PAGE_MASK)

struct sg_table *ion_buffer_one_chunk(struct ion_buffer *buffer,
				      struct page *page, unsigned int len);
bool ion_buffer_is_one_chunk(const struct ion_buffer *buffer);

/**
 * struct ion_heap_ops - what a heap does
 * @allocate:	     required.  Back @buffer with @buffer->size bytes (page
 *		     aligned, never 0) honouring @buffer->align and
 *		     @buffer->flags, which the core has set; set
 *		     @buffer->sg_table (or provide @map_dma).  The memory must
 *		     be zeroed.  An uncached buffer (no ION_FLAG_CACHED) must
 *		     leave no dirty CPU cache lines behind: the core maps it
 *		     for devices with DMA_ATTR_SKIP_CPU_SYNC.  Returns 0,
 *		     -ENOMEM when the heap cannot give that much now (the
 *		     core then tries the next heap in the mask), or another
 *		     -errno.  May sleep; must give up when
 *		     fatal_signal_pending().
 * @free:	     required.  Release what @allocate set up.  May sleep.
 * @phys:	     optional, contiguous heaps only.  Physical address and
 *		     length of the buffer.  Without it the core answers
 *		     -ENODEV.
 * @map_dma:	     optional.  Return the sg table of CPU pages describing
 *		     the buffer, for heaps that build it on demand; the core
 *		     calls it once, under the buffer's lock, at the first use
 *		     that needs memory (the first map of an attachment, the
 *		     first fault of a user mapping (or mmap, for a buffer
 *		     that is not deferred), vmap, begin_cpu_access, a
 *		     kernel client's sg table, ion_phys) and keeps the
 *		     result until @unmap_dma.  A
 *		     deferred heap (one with @attach that sets no sg table in
 *		     @allocate) chooses the backing here, from what @attach
 *		     recorded.
 * @unmap_dma:	     optional, pairs with @map_dma.
 * @attach:	     optional.  @dev attaches to @buffer (dma_buf_attach());
 *		     called under the buffer's lock before anything else of
 *		     the attach.  Returns 0, or a -errno that fails the attach
 *		     (a device the existing backing does not fit).  While
 *		     @buffer has no sg table yet, the core then leaves it
 *		     unbacked and builds the attachment's table at its first
 *		     map, after @map_dma: a heap with @attach may defer its
 *		     backing to first use.
 * @detach:	     optional, pairs with @attach; under the buffer's lock.
 * @move:	     optional, for a deferred heap (with @attach and @map_dma,
 *		     without @map_user).  @attach returned -ERANGE for @dev:
 *		     the backing from @map_dma does not fit it.  When nothing
 *		     has the buffer mapped (no attachment DMA-mapped, no user
 *		     or kernel mapping, no kernel client's sg table, no
 *		     address from ion_phys()) the core calls @move, under the
 *		     buffer's lock: record @dev as @attach would, back the
 *		     buffer anew with memory that fits every attached device,
 *		     copy the contents, free the old backing and return the
 *		     new table (it replaces @buffer->sg_table until
 *		     @unmap_dma); or an ERR_PTR, with the old backing kept
 *		     and @dev not recorded.  Without @move, or while the
 *		     buffer is mapped, the attach fails with -ERANGE.
 * @map_kernel:	     optional.  Map the whole buffer in the kernel; without
 *		     it the core vmaps the sg table's pages (write-combined
 *		     unless ION_FLAG_CACHED).  Returns an address or ERR_PTR.
 * @unmap_kernel:    optional, pairs with @map_kernel.
 * @map_user:	     optional.  Map the buffer into @vma (whose vm_pgoff is
 *		     the page offset into the buffer, already checked against
 *		     the size, and whose vm_page_prot the core has already
 *		     made write-combined for uncached buffers); without it the
 *		     core remaps the sg table's pages.
 * @begin_cpu_access: optional.  Extra cache maintenance before CPU access,
 *		     for heaps whose memory belongs to their own device (the
 *		     core already syncs every attachment).
 * @end_cpu_access:  optional, the counterpart of @begin_cpu_access.
 * @custom_ioctl:    optional.  ION_IOC_CUSTOM for this heap: @arg is the
 *		     caller's, usually a user pointer.  Called without the
 *		     core's locks (its page faults may stall), the heap
 *		     pinned as by a buffer, so possibly after the heap's
 *		     removal; -ENOTTY passes the command on.
 * @debug_show:	     optional.  Extra "key: value" lines for the heap's
 *		     debugfs file; must not sleep on allocation paths.
 * @debug_buffer:    optional.  The heap's state of @buffer as one line of
 *		     at most @len - 1 characters in @buf (NUL-terminated),
 *		     shown in the "detail" column of the heap's debugfs
 *		     buffer list ("-" without it; tabs and unprintable
 *		     characters become "_").  Called under a spinlock: must
 *		     not sleep or take the buffer's lock, and must read what
 *		     can change with READ_ONCE().
 */
struct ion_heap_ops {
	int (*allocate)(struct ion_heap *heap, struct ion_buffer *buffer);
	void (*free)(struct ion_buffer *buffer);
	int (*phys)(struct ion_heap *heap, struct ion_buffer *buffer,
		    phys_addr_t *addr, size_t *len);
	struct sg_table *(*map_dma)(struct ion_heap *heap,
				    struct ion_buffer *buffer);
	void (*unmap_dma)(struct ion_heap *heap, struct ion_buffer *buffer);
	int (*attach)(struct ion_heap *heap, struct ion_buffer *buffer,
		      struct device *dev);
	void (*detach)(struct ion_heap *heap, struct ion_buffer *buffer,
		       struct device *dev);
	struct sg_table *(*move)(struct ion_heap *heap,
				 struct ion_buffer *buffer, struct device *dev);
	void *(*map_kernel)(struct ion_heap *heap, struct ion_buffer *buffer);
	void (*unmap_kernel)(struct ion_heap *heap, struct ion_buffer *buffer);
	int (*map_user)(struct ion_heap *heap, struct ion_buffer *buffer,
			struct vm_area_struct *vma);
	int (*begin_cpu_access)(struct ion_heap *heap,
				struct ion_buffer *buffer,
				enum dma_data_direction dir);
	int (*end_cpu_access)(struct ion_heap *heap, struct ion_buffer *buffer,
			      enum dma_data_direction dir);
	long (*custom_ioctl)(struct ion_heap *heap, unsigned int cmd,
			     unsigned long arg);
	void (*debug_show)(struct ion_heap *heap, struct seq_file *s);
	void (*debug_buffer)(struct ion_heap *heap, struct ion_buffer *buffer,
			     char *buf, size_t len);
};

/**
 * struct ion_heap_alias - a mainline dma-heap name a heap serves
 * @name:     the node name in /dev/dma_heap/ ("system", "linux,cma", ...)
 * @uncached: the node allocates uncached buffers (as the heap's
 *	      ion-*-uncached node); otherwise cached ones
 */
struct ion_heap_alias {
	const char *name;
	bool uncached;
};

/**
 * struct ion_heap - a source of memory
 * @name:	unique name, at most ION_MAX_HEAP_NAME - 1 characters
 *		(ION_*_HEAP_NAME)
 * @type:	enum ion_heap_type
 * @id:		bit number in a heap_id_mask, unique, < ION_NUM_HEAP_IDS;
 *		by default equal to @type
 * @ops:	the heap's operations
 * @size:	optional: the most bytes the heap can ever give (a carveout's
 *		or CMA area's size), 0 when only RAM bounds it; the default
 *		per-user quota is half of it (ion_quota.c)
 * @reserved_mem: the heap's memory was set aside at boot (a carveout) and
 *		never goes back to the page allocator: freeing it relieves
 *		no memory pressure, so its buffers count in no process's
 *		RSS for the OOM killer (ion_oom.c)
 * @whole_maps:	user mappings of its buffers cannot be split: munmap() or
 *		mprotect() of part of one fails with -EINVAL.  For memory
 *		that is not System RAM (a carveout on a memmap= range): x86's
 *		PAT tracks the memory type of such a mapping by its range,
 *		and kernels before 6.17 lose track of a mapping that was split
 *		(a partial munmap() leaves a stale entry that conflicts with
 *		every later mapping or conversion of another type there)
 * @dev:	optional device the heap allocates for (DMA-API heaps); the
 *		heap's @begin_cpu_access / @end_cpu_access do the cache
 *		maintenance for it
 * @priv:	the heap's own data
 * @owner:	optional: the module providing the heap, when it is not
 *		ion.ko itself; each buffer pins it
 * @aliases:	optional: mainline dma-heap names the heap serves where the
 *		running kernel has no heap of that name, ended by an entry
 *		whose @name is NULL (Documentation/ion.rst, "mainline names")
 * @node:	core only: entry in the device's heap list
 * @core:	core only: statistics and debugfs state
 *
 * A heap is used from ion_device_add_heap() until ion_device_remove_heap()
 * and, for the buffers it backs, until the last of them is freed; each
 * buffer pins @owner, the module that registered the heap.
 */
struct ion_heap {
	const char *name;
	enum ion_heap_type type;
	unsigned int id;
	const struct ion_heap_ops *ops;
	u64 size;
	bool reserved_mem;
	bool whole_maps;
	struct device *dev;
	void *priv;
	struct module *owner;
	const struct ion_heap_alias *aliases;

	struct list_head node;
	struct ion_heap_core *core;
};

int ion_device_add_heap(struct ion_heap *heap);
void ion_device_remove_heap(struct ion_heap *heap);

#endif /* _LINUX_ION_HEAP_H */
