/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: the auto heap's per-buffer state, shared by its heap file
 * (ion_auto_heap.c: the ops, what each attach records) and its backing
 * (ion_auto_backing.c: collation, the choice and the memory) and its
 * scattered chunks (ion_auto_chunks.c: the heap's pools).
 */
#ifndef _ION_AUTO_H
#define _ION_AUTO_H

#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/scatterlist.h>
#include <linux/types.h>

struct device;
struct ion_buffer;
struct seq_file;

/**
 * struct ion_auto_dev - what one attached device needs of the memory
 * @node:	  entry in &ion_auto_buffer.devs
 * @dev:	  the device (a reference while listed)
 * @count:	  attachments of @dev to the buffer
 * @limit:	  highest physical address @dev reaches: its DMA mask and
 *		  bus_dma_limit, the smaller; U64_MAX when @any_backing
 * @max_seg:	  dma_get_max_seg_size()
 * @seg_boundary: dma_get_seg_boundary()
 * @any_backing:  any backing will do: its DMA goes through an IOMMU
 *		  (device_iommu_mapped(), and not DMA-direct: no passthrough
 *		  domain), or it has no DMA mask, so the DMA API maps nothing
 *		  for it (an importer for CPU access only)
 * @coherent:	  dev_is_dma_coherent(); true without a DMA mask
 */
struct ion_auto_dev {
	struct list_head node;
	struct device *dev;
	unsigned int count;
	u64 limit;
	unsigned int max_seg;
	unsigned long seg_boundary;
	bool any_backing;
	bool coherent;
};

/**
 * enum ion_auto_kind - what backs an auto buffer
 * @ION_AUTO_WAITING:	nothing yet (no first use)
 * @ION_AUTO_SYSTEM:	scattered chunks, no device attached at first use
 * @ION_AUTO_SCATTERED: scattered chunks, every attached device can take
 *			them (any backing, or every chunk within reach)
 * @ION_AUTO_CONTIG:	one contiguous range from the DMA API for the most
 *			constrained device without an IOMMU
 */
enum ion_auto_kind {
	ION_AUTO_WAITING,
	ION_AUTO_SYSTEM,
	ION_AUTO_SCATTERED,
	ION_AUTO_CONTIG,
};

/**
 * struct ion_auto_sum - the constraints of the devices attached now
 * @devs:	  attached devices
 * @direct:	  of them without an IOMMU: the rule of ion_auto_backing.c
 *		  then wants one contiguous range
 * @limit:	  the smallest &ion_auto_dev.limit of the direct devices,
 *		  U64_MAX for none
 * @max_seg:	  the smallest &ion_auto_dev.max_seg of the devices with a DMA
 *		  mask, 0 for none
 * @noncoherent: devices that are not DMA-coherent
 *
 * Recomputed under the buffer's lock at each attach, detach and move;
 * read locklessly by debugfs (ion_auto_debug_buffer()).
 */
struct ion_auto_sum {
	unsigned int devs;
	unsigned int direct;
	u64 limit;
	unsigned int max_seg;
	unsigned int noncoherent;
};

/**
 * struct ion_auto_buffer - an auto buffer (&ion_buffer.priv_virt)
 * @devs:    &struct ion_auto_dev of each attached device
 * @kind:    the backing, ION_AUTO_WAITING until the first use
 * @why:     why that backing (a constant string), or why none fitted
 * @fail:    the constraint not met at the last failed first use, late
 *	     attach or move (a constant string), or NULL; cleared by a
 *	     first use or move that succeeds, not by an attach that fits
 * @moves:   times the backing moved for a device attaching late
 * @sum:     the constraints of the devices attached now, for debugfs
 * @limit:   the smallest @limit of the attached devices at first use
 * @sgt:     the backing as CPU pages, once backed
 * @dma_dev: ION_AUTO_CONTIG: the auto heap's device the DMA API
 *	     allocated for (ion_auto_dma_dev(), lives until module exit)
 * @page:    ION_AUTO_CONTIG: its first page
 * @dma:     ION_AUTO_CONTIG: its DMA address for @dma_dev
 * @fresh:   entries of @sgt from the page allocator or the DMA API, the
 *	     first ones; scattered backings take the others from the auto
 *	     heap's pools (an uncached buffer's already write-combined)
 * @fallback: ION_AUTO_SCATTERED for a direct device, no contiguous range
 *	     of that size being had: a direct device attaching later fits
 *	     it as the first ones did, when every chunk is within its reach
 *
 * Everything here is under the buffer's lock, which the core holds
 * around the heap's attach, detach, move, map_dma and unmap_dma.  The
 * debugfs row (ion_auto_debug_buffer()) reads @kind, @why, @fail, @moves
 * and @sum without it, with READ_ONCE(): each is a word or a constant
 * string, and a row may mix two moments.  Lives from the heap's allocate
 * to its free.
 */
struct ion_auto_buffer {
	struct list_head devs;
	enum ion_auto_kind kind;
	const char *why;
	const char *fail;
	unsigned int moves;
	struct ion_auto_sum sum;
	u64 limit;
	struct sg_table sgt;
	struct device *dma_dev;
	struct page *page;
	dma_addr_t dma;
	unsigned int fresh;
	bool fallback;
};

int ion_auto_back(struct ion_buffer *buffer, struct ion_auto_buffer *ab);
int ion_auto_move(struct ion_buffer *buffer, struct ion_auto_buffer *ab,
		  bool contig_only);
void ion_auto_unback(struct ion_buffer *buffer, struct ion_auto_buffer *ab);
bool ion_auto_fits(const struct ion_auto_buffer *ab,
		   const struct ion_auto_dev *d, const char **why);
const char *ion_auto_kind_name(enum ion_auto_kind kind);

/* ion_auto_dma.c: the auto heap's DMA devices, one per mask width */
struct device *ion_auto_dma_dev(u64 limit);
void ion_auto_dma_exit(void);

/* ion_auto_chunks.c: scattered backings, from the auto heap's pools */
int ion_auto_alloc_chunks(struct ion_buffer *buffer,
			  struct ion_auto_buffer *ab, u64 limit, bool pool);
void ion_auto_put_chunks(struct ion_buffer *buffer, struct ion_auto_buffer *ab);
void ion_auto_free_chunks(struct ion_buffer *buffer, struct ion_auto_buffer *ab);
void ion_auto_chunks_show(struct seq_file *s);
unsigned long ion_auto_pooled(bool cached);
int ion_auto_chunks_init(void);
void ion_auto_chunks_exit(void);

#endif /* _ION_AUTO_H */
