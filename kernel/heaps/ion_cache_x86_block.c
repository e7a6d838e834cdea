// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: x86 uncached chunks cut from write-combined 2 MiB blocks.
 */

/**
 * DOC: uncached blocks (x86)
 *
 * Switching a few pages of the kernel's linear map to write-combining
 * splits the 2 MiB (or 1 GiB) page that maps them into 4 KiB pages, for
 * good: nothing merges them back when the attribute returns to
 * write-back, and every kernel access to the other 511 pages then costs
 * more TLB reach.  So the system heap does not convert its uncached
 * chunks one by one: it cuts them (orders 8, 4 and 0) out of whole 2 MiB
 * blocks (order 9 from the buddy allocator, so physically and virtually
 * 2 MiB aligned) that are converted to write-combining whole, and a block
 * returns to write-back, and to the buddy allocator, only whole, when its
 * last chunk came back.  The system-contig and DMA heaps take uncached
 * buffers of at most 2 MiB from the same blocks, a chunk of their order.
 *
 * Why a whole aligned block keeps its large page: "Uncached blocks" in
 * Documentation/ion.rst.  Each conversion flushes every CPU's TLB and
 * every line of the block: shared by all its chunks.  debugfs
 * direct_map_splits counts every conversion that found a large page and
 * left 4 KiB ones (blocks and fallback alike).
 *
 * Limits.  A caller with a DMA mask (the DMA heap) takes chunks only of
 * blocks wholly below it; new ones from ZONE_DMA (under 32 bits),
 * ZONE_DMA32 (32) or any zone (a wider mask: one above it is given back).
 *
 * Chunks.  Each block has a bitmap of its pages in use; a chunk of order
 * n is the first free aligned run of 2^n pages (first fit over the blocks
 * with room, then the highest kept empty one, then a new one).  A page
 * that came back is dirty and zeroed (through the write-combined linear
 * map: no cache line left) when handed out again.  A new block is zeroed
 * by the buddy allocator, and its conversion flushes its lines.
 *
 * Keeping.  Up to uncached_keep_blocks (default 1) empty blocks stay
 * converted for the next uncached allocation, which would otherwise pay a
 * whole block's zeroing and conversion after the pools drained.  The
 * lowest are kept (one below 4 GiB serves every mask; a caller takes the
 * highest below its limit), the others are restored and freed at once.
 * A pooled chunk keeps its block converted until the pools free it.
 *
 * Fallback.  When no order-9 block can be had (fragmented memory), the
 * heap converts the chunk alone as before (ion_cache_set_uncached()), and
 * that split is counted (uncached_fallback_chunks, direct_map_splits).
 *
 * Memory cgroups.  Uncharged callers (memcg_charge off, the root cgroup)
 * share blocks charged to none.  A caller whose chunks must be charged
 * (memcg_charge on, another cgroup) takes chunks only from blocks that
 * were allocated with __GFP_ACCOUNT by a task of its own cgroup: each
 * charged whole, 2 MiB, to that cgroup ("kernel" in memory.stat) from
 * conversion to release, however little of it is in use (one live 4 KiB
 * uncached buffer costs its cgroup 2 MiB, like 2 MiB of pooled chunks).
 * The charge is on the block's first page alone: the pools (ion_memcg.c)
 * ask ion_cache_charge_page() for it.  A block holds no reference to its
 * cgroup: folio_memcg() of that page names it at each use (the parent
 * once a removed cgroup's charge was reparented), so nothing pins a dead
 * cgroup.  A charged block is never kept empty but restored and freed
 * (uncharged) with its last chunk: a cgroup keeps only its pooled chunks,
 * which its reclaim frees through the pools' memcg-aware shrinker.  A
 * cgroup that cannot be charged 2 MiB more gets its chunk converted
 * alone, splitting the direct map (uncached_fallback_chunks).
 */
#include <linux/bitmap.h>
#include <linux/bits.h>
#include <linux/dma-mapping.h>
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <asm/set_memory.h>

#include "ion_cache.h"
#include "ion_memcg.h"

#define ION_BLOCK_ORDER		ION_CACHE_BLOCK_ORDER
#define ION_BLOCK_PAGES		BIT(ION_BLOCK_ORDER)

static unsigned int uncached_keep_blocks = 1;
static void ion_cache_blocks_trim(unsigned int keep);

/* Lowering it releases the kept blocks beyond it (the highest) at once. */
static int ion_keep_blocks_set(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_uint(val, kp);

	if (!ret)
		ion_cache_blocks_trim(READ_ONCE(uncached_keep_blocks));
	return ret;
}

static const struct kernel_param_ops ion_keep_blocks_ops = {
	.set = ion_keep_blocks_set,
	.get = param_get_uint,
};

module_param_cb(uncached_keep_blocks, &ion_keep_blocks_ops,
		&uncached_keep_blocks, 0644);
MODULE_PARM_DESC(uncached_keep_blocks,
		 "empty write-combined 2 MiB blocks kept for uncached buffers (x86)");

/**
 * struct ion_block - a 2 MiB block whose linear map is write-combined
 * @node:  on ion_blocks.room (some pages free), .empty (all free, kept,
 *	   by address; never charged), or on none (every page in use)
 * @page:  its first page (order 9), which carries a charged block's charge
 * @used:  pages handed out as chunks
 * @dirty: free pages that came back and must be zeroed before reuse
 * @nused: pages set in @used
 * @charged: charged to a memory cgroup, serving only that cgroup's tasks
 *	   (the cgroup is read from @page, see DOC)
 *
 * Made by ion_block_new(), freed by ion_block_release(); all fields but
 * @page and @charged (set before it is listed) under ion_blocks.lock.
 */
struct ion_block {
	struct list_head node;
	struct page *page;
	DECLARE_BITMAP(used, ION_BLOCK_PAGES);
	DECLARE_BITMAP(dirty, ION_BLOCK_PAGES);
	unsigned int nused;
	bool charged;
};

/*
 * struct ion_blocks - every uncached block
 * @lock:   protects @room, @empty, @nempty and every block's bitmaps,
 *	    @nused and list position; never held across a conversion or an
 *	    allocation that may reclaim
 * @room:   blocks with some pages in use and some free, charged or not
 * @empty:  wholly free blocks kept converted (uncached_keep_blocks)
 * @nempty: blocks on @empty
 * @index:  every block by first pfn >> ION_BLOCK_ORDER (own locking, RCU)
 * @held, @converted, @restored, @leaked, @chunks, @fallback,
 * @charged_held, @charged: debugfs counters, ion_cache_blocks_debug_show()
 * (Documentation/debugfs.rst says what each counts)
 */
static struct ion_blocks {
	struct mutex lock;	/* protects the lists, the blocks' bitmaps */
	struct list_head room;
	struct list_head empty;
	unsigned int nempty;
	struct xarray index;
	atomic_long_t held, converted, restored, leaked, chunks, fallback;
	atomic_long_t charged_held, charged;
} ion_blocks = {
	.lock = __MUTEX_INITIALIZER(ion_blocks.lock),
	.room = LIST_HEAD_INIT(ion_blocks.room),
	.empty = LIST_HEAD_INIT(ion_blocks.empty),
	.index = XARRAY_INIT(ion_blocks.index, 0),
};

/**
 * ion_cache_charge_page() - the page that carries a chunk's memcg charge
 * @page: a chunk's first page; the chunk is the caller's (a buffer's or a
 *	  pool's), so its block cannot go away meanwhile
 *
 * Context: Any context.
 * Return: for a chunk of a block, the block's first page (see DOC:
 * uncached blocks); otherwise @page.
 */
struct page *ion_cache_charge_page(struct page *page)
{
	unsigned long pfn = page_to_pfn(page);

	if (!xa_load(&ion_blocks.index, pfn >> ION_BLOCK_ORDER))
		return page;
	return pfn_to_page(pfn & ~(ION_BLOCK_PAGES - 1));
}

/* Back to write-back whole and to the buddy allocator, or leaked. */
static void ion_block_release(struct ion_block *blk)
{
	unsigned long addr = (unsigned long)page_address(blk->page);

	xa_erase(&ion_blocks.index, page_to_pfn(blk->page) >> ION_BLOCK_ORDER);
	atomic_long_dec(&ion_blocks.held);
	if (blk->charged)
		atomic_long_dec(&ion_blocks.charged_held);
	if (set_memory_wb(addr, ION_BLOCK_PAGES)) {
		atomic_long_inc(&ion_blocks.leaked);
		pr_warn_ratelimited("ion: cannot restore a 2 MiB uncached block to write-back, leaking it\n");
	} else {
		atomic_long_inc(&ion_blocks.restored);
		/* Uncharges a charged block's whole 2 MiB. */
		ion_cache_free_pages(blk->page, ION_BLOCK_ORDER);
	}
	kfree(blk);
}

/* Does @blk lie wholly at or below the physical address @limit? */
static bool ion_block_below(struct ion_block *blk, u64 limit)
{
	return page_to_phys(blk->page) + (ION_BLOCK_PAGES << PAGE_SHIFT) - 1 <=
	       limit;
}

/*
 * A new zeroed block below @limit (ZONE_DMA32 for a 32-bit mask, ZONE_DMA
 * for a narrower one: no ZONE_DMA32 try that may land beyond it, as in
 * dma-direct), converted whole, indexed; NULL when none.  With @charged,
 * charged whole to the caller's cgroup (never its OOM killer).
 */
static struct ion_block *ion_block_new(int nid, bool charged, u64 limit)
{
	gfp_t gfp = __GFP_ZERO | __GFP_NOWARN | __GFP_NORETRY |
		    (charged ? __GFP_ACCOUNT : 0);
	struct ion_block *blk;
	unsigned long addr;
	bool large;

	gfp |= limit < DMA_BIT_MASK(32) ? GFP_USER | GFP_DMA :
	       limit == DMA_BIT_MASK(32) ? GFP_USER | GFP_DMA32 : GFP_HIGHUSER;
	blk = kzalloc(sizeof(*blk), GFP_KERNEL);
	if (!blk)
		return NULL;
	blk->page = nid == NUMA_NO_NODE ? alloc_pages(gfp, ION_BLOCK_ORDER) :
		    alloc_pages_node(nid, gfp, ION_BLOCK_ORDER);
	if (!blk->page)
		goto err_free_blk;
	if (!ion_block_below(blk, limit))
		goto err_free_page;
	/* Charged to no one after all (kmem accounting off): a shared one. */
	blk->charged = charged && ion_memcg_page_charged(blk->page);
	if (xa_insert(&ion_blocks.index,
		      page_to_pfn(blk->page) >> ION_BLOCK_ORDER, blk,
		      GFP_KERNEL))
		goto err_free_page;
	addr = (unsigned long)page_address(blk->page);
	large = ion_cache_linear_large(addr);
	atomic_long_inc(&ion_blocks.converted);
	atomic_long_inc(&ion_blocks.held);
	if (blk->charged)
		atomic_long_inc(&ion_blocks.charged_held);
	/*
	 * Whole and aligned: the large page keeps (see DOC).  A failed
	 * set_memory_wc() may have left its first pass (UC-): back to
	 * write-back like any block, or leaked.
	 */
	if (set_memory_wc(addr, ION_BLOCK_PAGES)) {
		ion_block_release(blk);
		return NULL;
	}
	ion_cache_count_split(addr, large);
	return blk;

err_free_page:
	__free_pages(blk->page, ION_BLOCK_ORDER);
err_free_blk:
	kfree(blk);
	return NULL;
}

/* Take a free aligned run of 2^@order pages of @blk, or return -1. */
static int ion_block_take(struct ion_block *blk, unsigned int order)
{
	unsigned int n = 1U << order;
	unsigned long off;

	lockdep_assert_held(&ion_blocks.lock);
	off = bitmap_find_next_zero_area(blk->used, ION_BLOCK_PAGES, 0, n,
					 n - 1);
	if (off >= ION_BLOCK_PAGES)
		return -1;
	bitmap_set(blk->used, off, n);
	blk->nused += n;
	if (blk->nused == ION_BLOCK_PAGES)
		list_del_init(&blk->node);
	return off;
}

/*
 * A chunk of @order from a converted block below @limit that serves the
 * caller (of the kept empty ones, the highest), or -1 in *@off.
 */
static struct ion_block *ion_blocks_find(unsigned int order, bool charged,
					 u64 limit, int *off)
{
	struct ion_block *blk;

	lockdep_assert_held(&ion_blocks.lock);
	list_for_each_entry(blk, &ion_blocks.room, node) {
		if (blk->charged != charged || !ion_block_below(blk, limit) ||
		    (charged && !ion_memcg_caller_owns(blk->page)))
			continue;
		*off = ion_block_take(blk, order);
		if (*off >= 0)
			return blk;
	}
	list_for_each_entry_reverse(blk, &ion_blocks.empty, node) {
		if (charged || !ion_block_below(blk, limit))
			continue;
		ion_blocks.nempty--;
		list_move(&blk->node, &ion_blocks.room);
		*off = ion_block_take(blk, order);
		return blk;
	}
	return NULL;
}

/**
 * ion_cache_uncached_chunk() - a zeroed write-combined chunk
 * @order: the chunk's order, at most 9
 * @nid:   the node for a new block, or NUMA_NO_NODE for the caller's policy
 * @charged: the chunk must be charged to the caller's memory cgroup
 *	   (ion_memcg_caller_charged()): cut from a block charged whole to
 *	   it, a new one charged in the caller's context if none has room
 * @limit: the highest physical address the chunk may reach (a device's
 *	   DMA mask; U64_MAX: any): only blocks wholly below it serve
 *
 * Cut from a converted 2 MiB block (see DOC: uncached blocks), converting
 * a new one when no block has room.  The chunk is clean: zeroed, no line
 * in the CPU caches.  It goes back with ion_cache_uncached_chunk_put().
 *
 * Context: Process context; may sleep.
 * Return: the chunk's first page, or NULL when no block could be had
 * (none free, or the cgroup cannot be charged 2 MiB more): the caller
 * may convert a chunk of its own, ion_cache_set_uncached().
 */
struct page *ion_cache_uncached_chunk(unsigned int order, int nid,
				      bool charged, u64 limit)
{
	unsigned int n = 1U << order;
	struct ion_block *blk;
	bool dirty;
	int off;

	if (WARN_ON_ONCE(order > ION_BLOCK_ORDER))
		return NULL;
	mutex_lock(&ion_blocks.lock);
	blk = ion_blocks_find(order, charged, limit, &off);
	if (!blk) {
		mutex_unlock(&ion_blocks.lock);
		blk = ion_block_new(nid, charged, limit);
		if (!blk) {
			atomic_long_inc(&ion_blocks.fallback);
			return NULL;
		}
		mutex_lock(&ion_blocks.lock);
		list_add(&blk->node, &ion_blocks.room);
		off = ion_block_take(blk, order);
	}
	dirty = find_next_bit(blk->dirty, off + n, off) < off + n;
	bitmap_clear(blk->dirty, off, n);
	mutex_unlock(&ion_blocks.lock);
	atomic_long_inc(&ion_blocks.chunks);
	if (blk->charged)
		atomic_long_inc(&ion_blocks.charged);
	if (dirty) {
		/* Write-combined stores: no cache line to clean after. */
		memset(page_address(blk->page + off), 0, PAGE_SIZE << order);
		/* Drain the write-combining buffers before handing it out. */
		wmb();
	}
	return blk->page + off;
}

/* The highest kept empty block beyond the lowest @keep, unlisted, or NULL. */
static struct ion_block *ion_blocks_pop_beyond(unsigned int keep)
{
	struct ion_block *blk;

	lockdep_assert_held(&ion_blocks.lock);
	if (ion_blocks.nempty <= keep)
		return NULL;
	blk = list_last_entry(&ion_blocks.empty, struct ion_block, node);
	list_del(&blk->node);
	ion_blocks.nempty--;
	return blk;
}

/*
 * Keep the empty @blk (in address order); return the highest kept beyond
 * uncached_keep_blocks, maybe @blk, for release (DOC: the lowest serve all).
 */
static struct ion_block *ion_block_keep(struct ion_block *blk)
{
	struct ion_block *pos;

	lockdep_assert_held(&ion_blocks.lock);
	list_for_each_entry(pos, &ion_blocks.empty, node)
		if (page_to_pfn(pos->page) > page_to_pfn(blk->page))
			break;
	list_move_tail(&blk->node, &pos->node);
	ion_blocks.nempty++;
	return ion_blocks_pop_beyond(READ_ONCE(uncached_keep_blocks));
}

/**
 * ion_cache_uncached_chunk_put() - give a chunk back to its block
 * @page:  the chunk's first page
 * @order: its order
 *
 * The chunk may be dirty.  When its block is then empty, the block is
 * kept (up to uncached_keep_blocks; never a charged one) or restored to
 * write-back and freed (uncharged).
 *
 * Context: Process context; may sleep.
 * Return: true when the chunk was taken back, false when it is not of a
 * block (a chunk converted alone: the caller restores it itself).
 */
bool ion_cache_uncached_chunk_put(struct page *page, unsigned int order)
{
	unsigned long pfn = page_to_pfn(page);
	unsigned int n = 1U << order, off;
	struct ion_block *blk, *release = NULL;

	blk = xa_load(&ion_blocks.index, pfn >> ION_BLOCK_ORDER);
	if (!blk)
		return false;
	off = pfn & (ION_BLOCK_PAGES - 1);
	set_page_private(page, 0);
	mutex_lock(&ion_blocks.lock);
	if (WARN_ON_ONCE(find_next_zero_bit(blk->used, off + n, off) <
			 off + n)) {
		mutex_unlock(&ion_blocks.lock);
		return true;	/* not handed out: never free it twice */
	}
	if (blk->nused == ION_BLOCK_PAGES)
		list_add(&blk->node, &ion_blocks.room);
	bitmap_clear(blk->used, off, n);
	bitmap_set(blk->dirty, off, n);
	blk->nused -= n;
	if (!blk->nused && blk->charged) {
		list_del(&blk->node);
		release = blk;
	} else if (!blk->nused) {
		release = ion_block_keep(blk);
	}
	mutex_unlock(&ion_blocks.lock);
	if (release)
		ion_block_release(release);
	return true;
}

/* Release the kept empty blocks beyond the lowest @keep. */
static void ion_cache_blocks_trim(unsigned int keep)
{
	struct ion_block *blk;

	do {
		mutex_lock(&ion_blocks.lock);
		blk = ion_blocks_pop_beyond(keep);
		mutex_unlock(&ion_blocks.lock);
		if (blk)
			ion_block_release(blk);
	} while (blk);
}

/**
 * ion_cache_blocks_exit() - release every kept block (module exit)
 *
 * Every chunk must be back by now; a block still in use is left (and
 * warned about) rather than freed under its user.
 *
 * Context: Process context (module exit); sleeps.
 */
void ion_cache_blocks_exit(void)
{
	ion_cache_blocks_trim(0);
	WARN_ON_ONCE(!list_empty(&ion_blocks.room) ||
		     atomic_long_read(&ion_blocks.held));
}

/**
 * ion_cache_blocks_debug_show() - the blocks' lines of a heap's debugfs file
 * @s: the heap's debugfs file
 *
 * Context: Process context; does not sleep.
 */
void ion_cache_blocks_debug_show(struct seq_file *s)
{
	static const struct {
		const char *key;
		atomic_long_t *v;
	} keys[] = {
		{ "uncached_blocks", &ion_blocks.held },
		{ "uncached_blocks_kept", NULL },
		{ "uncached_blocks_converted", &ion_blocks.converted },
		{ "uncached_blocks_restored", &ion_blocks.restored },
		{ "uncached_blocks_leaked", &ion_blocks.leaked },
		{ "uncached_block_chunks", &ion_blocks.chunks },
		{ "uncached_fallback_chunks", &ion_blocks.fallback },
		{ "uncached_charged_blocks", &ion_blocks.charged_held },
		{ "uncached_charged_chunks", &ion_blocks.charged },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(keys); i++)
		seq_printf(s, "%s: %ld\n", keys[i].key, keys[i].v ?
			   atomic_long_read(keys[i].v) :
			   (long)READ_ONCE(ion_blocks.nempty));
	seq_printf(s, "direct_map_splits: %ld\n", ion_cache_split_count());
}
