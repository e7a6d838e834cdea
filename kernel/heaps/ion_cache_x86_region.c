// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: x86 uncached ranges of a reserved region, cut from
 * write-combined 2 MiB blocks of it.
 */

/**
 * DOC: uncached blocks of the carveout (x86)
 *
 * The carveout is RAM in the kernel's linear map like any other, so an
 * uncached carveout buffer converted alone (set_memory_wc() on its range)
 * splits the 2 MiB pages of the direct map under it whenever the range is
 * not whole aligned 2 MiB pages, for good.  The carveout heap therefore
 * hands its uncached buffers out of blocks as the system heap does
 * ("uncached blocks (x86)"; the same reading of 6.12's
 * arch/x86/mm/pat/set_memory.c applies: set_memory_wc() and set_memory_wb()
 * of a range that starts at a 2 MiB page's start and covers it whole only
 * rewrite that page's PMD), but its blocks come from the carveout itself:
 *
 * - A block is a 2 MiB aligned 2 MiB range of the carveout's gen_pool,
 *   taken by the last-fit search below, converted to write-combining
 *   whole, and kept while any chunk of it is in use.  The last chunk
 *   freed returns it to write-back, whole, and to the gen_pool at once:
 *   none is kept empty, so an idle carveout is one free extent again.
 * - An uncached buffer of at most 2 MiB (and alignment at most 2 MiB) is
 *   a run of pages of a block (first fit over the blocks, a new block
 *   when none has room), aligned within the block as asked, which is
 *   physical alignment since blocks are 2 MiB aligned.
 * - A larger buffer (or one asking for more alignment) takes whole
 *   blocks of its own: its size rounded up to 2 MiB, 2 MiB aligned (or
 *   more), converted and restored whole with the buffer.  The rounding is
 *   lost to everyone else while the buffer lives: under 2 MiB per buffer.
 * - Cached buffers come from the gen_pool only, never from a block.
 *
 * Fragmentation.  The gen_pool hands cached buffers out first fit, from
 * the bottom of the region, and blocks last fit, from the top, so the two
 * kinds do not interleave while the region has room between them.  The
 * limits: a block with one small chunk in use holds all 2 MiB of it away
 * from cached buffers and from larger uncached ones; free pages inside
 * blocks serve only uncached buffers of at most 2 MiB (their sum is
 * debugfs's uncached_block_free); and a region whose free space is
 * scattered below 2 MiB aligned extents can fail an uncached buffer that a
 * per-buffer conversion would have placed.  The ends of a region not
 * itself 2 MiB aligned serve cached buffers only.
 *
 * Zeroing is the heap's: a chunk is zeroed after it was cut, through the
 * write-combined linear map, so no line of it is left in the caches (the
 * conversion flushed whatever the range's earlier cached users left).
 *
 * All of it under one mutex per region, held across the conversions: an
 * uncached carveout allocation or free that converts waits for another's.
 */
#include <linux/bitmap.h>
#include <linux/genalloc.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <asm/set_memory.h>

#include "ion_cache.h"

#define ION_RBLOCK_PAGES	(SZ_2M >> PAGE_SHIFT)

/**
 * struct ion_region_block - a 2 MiB block of the region, write-combined
 * @node:  on ion_wc_region.blocks
 * @base:  its physical start, 2 MiB aligned
 * @used:  pages handed out as chunks
 * @nused: pages set in @used
 *
 * Lives from its first chunk to its last; under ion_wc_region.lock.
 */
struct ion_region_block {
	struct list_head node;
	phys_addr_t base;
	DECLARE_BITMAP(used, ION_RBLOCK_PAGES);
	unsigned int nused;
};

/**
 * struct ion_wc_region - the uncached blocks of one region
 * @pool:   the region's allocator, the heap's (genalloc locks itself)
 * @lock:   protects @blocks and every block's fields, held across the
 *	    conversions
 * @blocks: the blocks with chunks in use
 * @held:      blocks write-combined now (those of large buffers too)
 * @converted: blocks converted, ever
 * @restored:  blocks restored to write-back and given back, ever
 * @leaked:    blocks that stayed write-combined and were never given back
 * @chunks:    buffers handed out of blocks (or as whole blocks), ever
 * @inuse:     those of them live now
 * @splits:    conversions that left 4 KiB pages where a large page was
 * @free:      pages free inside @blocks (changed under @lock)
 *
 * Made by ion_cache_region_create(), freed by ion_cache_region_destroy().
 */
struct ion_wc_region {
	struct gen_pool *pool;
	struct mutex lock;	/* protects @blocks and the blocks' fields */
	struct list_head blocks;
	atomic_long_t held, converted, restored, leaked, chunks, inuse;
	atomic_long_t splits, free;
};

/*
 * genalloc fit callback: the highest run of @nr free bits whose address is
 * a multiple of *@data bytes.  Blocks from the top, cached buffers from the
 * bottom (see DOC).
 */
static unsigned long ion_region_last_fit(unsigned long *map,
					 unsigned long size,
					 unsigned long start, unsigned int nr,
					 void *data, struct gen_pool *pool,
					 unsigned long start_addr)
{
	unsigned long align = *(unsigned long *)data;
	unsigned long step = align >> pool->min_alloc_order;
	unsigned long first, pos;

	first = (ALIGN(start_addr + (start << pool->min_alloc_order), align) -
		 start_addr) >> pool->min_alloc_order;
	if (first >= size || size - first < nr)
		return size;
	pos = first + (size - nr - first) / step * step;
	for (;;) {
		if (find_next_bit(map, pos + nr, pos) >= pos + nr)
			return pos;
		if (pos < first + step)
			return size;
		pos -= step;
	}
}

/* Convert [@addr, +@len) to WC or back, counting a split; 0 or -errno. */
static int ion_region_convert(struct ion_wc_region *r, phys_addr_t addr,
			      size_t len, bool wc)
{
	unsigned long va = (unsigned long)phys_to_virt(addr);
	bool large = ion_cache_linear_large(va);
	int ret;

	ret = wc ? set_memory_wc(va, len >> PAGE_SHIFT) :
		   set_memory_wb(va, len >> PAGE_SHIFT);
	if (ion_cache_count_split(va, large))
		atomic_long_inc(&r->splits);
	return ret;
}

/* Take @len bytes of whole blocks from the region, write-combined. */
static phys_addr_t ion_region_take(struct ion_wc_region *r, size_t len,
				   unsigned long align)
{
	unsigned long addr;

	addr = gen_pool_alloc_algo(r->pool, len, ion_region_last_fit, &align);
	if (!addr)
		return 0;
	atomic_long_add(len / SZ_2M, &r->converted);
	atomic_long_add(len / SZ_2M, &r->held);
	if (ion_region_convert(r, addr, len, true)) {
		/* A failed set_memory_wc() may have left UC-: restore. */
		if (ion_region_convert(r, addr, len, false)) {
			atomic_long_sub(len / SZ_2M, &r->held);
			atomic_long_add(len / SZ_2M, &r->leaked);
			return 0;
		}
		atomic_long_add(len / SZ_2M, &r->restored);
		atomic_long_sub(len / SZ_2M, &r->held);
		gen_pool_free(r->pool, addr, len);
		return 0;
	}
	return addr;
}

/* Give whole blocks back: write-back, then to the region, or leaked. */
static void ion_region_give(struct ion_wc_region *r, phys_addr_t addr,
			    size_t len)
{
	atomic_long_sub(len / SZ_2M, &r->held);
	if (ion_region_convert(r, addr, len, false)) {
		atomic_long_add(len / SZ_2M, &r->leaked);
		pr_warn_ratelimited("ion: cannot restore %zu bytes of uncached carveout blocks to write-back, leaking them\n",
				    len);
		return;
	}
	atomic_long_add(len / SZ_2M, &r->restored);
	gen_pool_free(r->pool, addr, len);
}

/* Does a buffer of @len and @align take whole blocks of its own? */
static bool ion_region_whole(size_t len, unsigned long align)
{
	return len > SZ_2M || align > SZ_2M;
}

/* A run of @npages aligned to @mask + 1 pages in some block, or 0. */
static phys_addr_t ion_region_chunk(struct ion_wc_region *r,
				    unsigned int npages, unsigned long mask)
{
	struct ion_region_block *blk;
	unsigned long off;

	lockdep_assert_held(&r->lock);
	list_for_each_entry(blk, &r->blocks, node) {
		off = bitmap_find_next_zero_area(blk->used, ION_RBLOCK_PAGES,
						 0, npages, mask);
		if (off < ION_RBLOCK_PAGES) {
			bitmap_set(blk->used, off, npages);
			blk->nused += npages;
			atomic_long_sub(npages, &r->free);
			return blk->base + ((phys_addr_t)off << PAGE_SHIFT);
		}
	}
	return 0;
}

/* A new block on r->blocks, or NULL. */
static struct ion_region_block *ion_region_new_block(struct ion_wc_region *r)
{
	struct ion_region_block *blk;

	lockdep_assert_held(&r->lock);
	blk = kzalloc(sizeof(*blk), GFP_KERNEL);
	if (!blk)
		return NULL;
	blk->base = ion_region_take(r, SZ_2M, SZ_2M);
	if (!blk->base) {
		kfree(blk);
		return NULL;
	}
	list_add_tail(&blk->node, &r->blocks);
	atomic_long_add(ION_RBLOCK_PAGES, &r->free);
	return blk;
}

/**
 * ion_cache_region_get() - an uncached range of a region
 * @r:     the region's blocks (ion_cache_region_create())
 * @len:   bytes, a multiple of PAGE_SIZE
 * @align: alignment in bytes (physical), a power of two, or 0
 *
 * The range's linear map is write-combined, in whole 2 MiB blocks (see
 * DOC: uncached blocks of the carveout); its contents are not zeroed.  It
 * goes back with ion_cache_region_put() of the same @len and @align.
 *
 * Context: Process context; sleeps.
 * Return: the range's physical start, or 0 when the region has no room.
 */
phys_addr_t ion_cache_region_get(struct ion_wc_region *r, size_t len,
				 unsigned long align)
{
	unsigned long mask = align > PAGE_SIZE ? (align >> PAGE_SHIFT) - 1 : 0;
	phys_addr_t addr;

	mutex_lock(&r->lock);
	if (ion_region_whole(len, align)) {
		addr = ion_region_take(r, ALIGN(len, SZ_2M),
				       max_t(unsigned long, align, SZ_2M));
	} else {
		addr = ion_region_chunk(r, len >> PAGE_SHIFT, mask);
		if (!addr && ion_region_new_block(r))
			addr = ion_region_chunk(r, len >> PAGE_SHIFT, mask);
	}
	mutex_unlock(&r->lock);
	if (addr) {
		atomic_long_inc(&r->chunks);
		atomic_long_inc(&r->inuse);
	}
	return addr;
}

/**
 * ion_cache_region_put() - give an uncached range back
 * @r:     the region's blocks
 * @addr:  what ion_cache_region_get() returned
 * @len:   the @len given to it
 * @align: the @align given to it
 *
 * A block whose last chunk this was goes back to write-back and to the
 * region (or is leaked, warned and counted, if it cannot be restored).
 *
 * Context: Process context; sleeps.
 */
void ion_cache_region_put(struct ion_wc_region *r, phys_addr_t addr,
			  size_t len, unsigned long align)
{
	struct ion_region_block *blk;
	unsigned long off;

	atomic_long_dec(&r->inuse);
	mutex_lock(&r->lock);
	if (ion_region_whole(len, align)) {
		ion_region_give(r, addr, ALIGN(len, SZ_2M));
		goto out_unlock;
	}
	list_for_each_entry(blk, &r->blocks, node) {
		if (addr < blk->base || addr >= blk->base + SZ_2M)
			continue;
		off = (addr - blk->base) >> PAGE_SHIFT;
		bitmap_clear(blk->used, off, len >> PAGE_SHIFT);
		blk->nused -= len >> PAGE_SHIFT;
		atomic_long_add(len >> PAGE_SHIFT, &r->free);
		if (!blk->nused) {
			list_del(&blk->node);
			atomic_long_sub(ION_RBLOCK_PAGES, &r->free);
			ion_region_give(r, blk->base, SZ_2M);
			kfree(blk);
		}
		goto out_unlock;
	}
	WARN_ONCE(1, "ion: uncached range %pa not of any block\n", &addr);
out_unlock:
	mutex_unlock(&r->lock);
}

/**
 * ion_cache_region_create() - uncached blocks for a region
 * @pool: the region's allocator, page granular; outlives the result
 *
 * Context: Process context.
 * Return: the blocks' state, or NULL without memory.
 */
struct ion_wc_region *ion_cache_region_create(struct gen_pool *pool)
{
	struct ion_wc_region *r = kzalloc(sizeof(*r), GFP_KERNEL);

	if (!r)
		return NULL;
	r->pool = pool;
	mutex_init(&r->lock);
	INIT_LIST_HEAD(&r->blocks);
	return r;
}

/**
 * ion_cache_region_destroy() - free a region's block state
 * @r: from ion_cache_region_create(), or NULL
 *
 * Every range must be back (each buffer pins the module).
 *
 * Context: Process context.
 */
void ion_cache_region_destroy(struct ion_wc_region *r)
{
	if (!r)
		return;
	WARN_ON_ONCE(!list_empty(&r->blocks));
	mutex_destroy(&r->lock);
	kfree(r);
}

/**
 * ion_cache_region_debug_show() - the blocks' lines of the heap's file
 * @r: the region's blocks
 * @s: the heap's debugfs file
 *
 * Context: Process context; does not sleep.
 */
void ion_cache_region_debug_show(struct ion_wc_region *r, struct seq_file *s)
{
	static const char * const keys[] = {
		"uncached_blocks", "uncached_blocks_converted",
		"uncached_blocks_restored", "uncached_blocks_leaked",
		"uncached_block_chunks", "uncached_chunks_in_use",
		"direct_map_splits",
	};
	atomic_long_t *vals[] = {
		&r->held, &r->converted, &r->restored, &r->leaked,
		&r->chunks, &r->inuse, &r->splits,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(keys); i++)
		seq_printf(s, "%s: %ld\n", keys[i], atomic_long_read(vals[i]));
	seq_printf(s, "uncached_block_free: %ld\n",
		   atomic_long_read(&r->free) << PAGE_SHIFT);
}
