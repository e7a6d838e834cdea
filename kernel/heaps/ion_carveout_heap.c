// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the carveout heap, memory set aside at boot.
 *
 * The region comes from the boot parameter reserve_mem=SIZE:ALIGN:NAME;
 * the module parameter carveout_region names it (default "ion_carveout",
 * empty for none).  The memory is ordinary RAM that memblock kept from the
 * page allocator, so it has struct pages in the linear map: buffers are
 * described by those pages like any other, no memremap needed.  Kernels
 * before 6.11 have no reserve_mem=: there the module parameter
 * carveout_memmap=SIZE@START names a range the boot parameter
 * memmap=SIZE$START reserved (x86), and ion_carveout_memmap.c gives it
 * pages; it wins over carveout_region when set.  Without a region the heap
 * is not registered.
 *
 * Space is handed out by a genalloc pool with page granularity, first fit,
 * honouring the requested alignment (relative to physical addresses).
 * Buffers are contiguous (phys works, one sg entry) and zeroed when
 * allocated, so nothing of a previous user (or of the firmware) survives
 * reuse.  A full region is -ENOMEM, so a heap mask falls back to the next
 * heap.  The heap's debugfs file shows the region, its use, the largest
 * free block and the fragmentation of the free space.
 *
 * Uncached buffers: on x86 they are cut from write-combined 2 MiB blocks
 * of the region (ion_cache_region_*(), "uncached blocks of the carveout"
 * in ion_cache_x86_region.c), so converting them never splits a large
 * page of the direct map; elsewhere (arm64: the cache lines are cleaned,
 * the linear map stays cacheable) each buffer is converted alone.
 */
#include <linux/genalloc.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pfn.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "ion_heap.h"
#include "ion_cache.h"
#include "ion_carveout.h"
#include "ion_heaps.h"

static char *carveout_region = "ion_carveout";
module_param(carveout_region, charp, 0444);
MODULE_PARM_DESC(carveout_region,
		 "reserve_mem= region backing the carveout heap (empty: none)");

static char *carveout_memmap = "";
module_param(carveout_memmap, charp, 0444);
MODULE_PARM_DESC(carveout_memmap,
		 "SIZE@START of a range booted with memmap=SIZE$START, backing the carveout heap instead (x86; for kernels without reserve_mem=)");

/* Zero this many pages between checks for a fatal signal. */
#define ION_CARVEOUT_ZERO_BATCH	256

/**
 * struct ion_carveout - the carveout heap
 * @heap: the registered heap
 * @pool: allocator of the region; genalloc does its own locking
 * @base: physical start of the region
 * @size: size of the region in bytes
 * @wc:   the region's write-combined blocks for uncached buffers (x86), or
 *	  NULL: then each uncached buffer is converted alone
 *
 * Lives from ion_carveout_heap_init() to ion_carveout_heap_exit(); its
 * buffers pin the module, so none outlives it.
 */
struct ion_carveout {
	struct ion_heap heap;
	struct gen_pool *pool;
	phys_addr_t base;
	phys_addr_t size;
	struct ion_wc_region *wc;
};

static struct ion_carveout *ion_carveout;

static bool ion_carveout_memmap(void)
{
	return carveout_memmap && *carveout_memmap;
}

/* Where the region came from, and its name there (debugfs, log). */
static const char *ion_carveout_source(void)
{
	return ion_carveout_memmap() ? "memmap" : "reserve_mem";
}

static const char *ion_carveout_name(void)
{
	return ion_carveout_memmap() ? carveout_memmap : carveout_region;
}

/* Free-space figures of the pool, from its bitmaps. */
struct ion_carveout_stats {
	size_t largest;
	unsigned long extents;
};

static int ion_carveout_zero(struct page *page, unsigned long npages)
{
	unsigned long i;

	for (i = 0; i < npages; i++) {
		if (!(i % ION_CARVEOUT_ZERO_BATCH)) {
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
		clear_highpage(page + i);
	}
	return 0;
}

static unsigned long ion_carveout_get(struct ion_carveout *co,
				      unsigned long len, unsigned long align)
{
	struct genpool_data_align data;

	if (align <= PAGE_SIZE)
		return gen_pool_alloc(co->pool, len);
	data.align = align;
	return gen_pool_alloc_algo(co->pool, len, gen_pool_first_fit_align,
				   &data);
}

/* Is @buffer one of the region's write-combined blocks (x86, uncached)? */
static bool ion_carveout_wc(struct ion_buffer *buffer)
{
	struct ion_carveout *co = buffer->heap->priv;

	return co->wc && !(buffer->flags & ION_FLAG_CACHED);
}

/* Give @buffer's range at @addr back to where it came from. */
static void ion_carveout_put(struct ion_buffer *buffer, phys_addr_t addr)
{
	struct ion_carveout *co = buffer->heap->priv;

	if (ion_carveout_wc(buffer))
		ion_cache_region_put(co->wc, addr, buffer->size,
				     buffer->align);
	else
		gen_pool_free(co->pool, addr, buffer->size);
}

static int ion_carveout_allocate(struct ion_heap *heap,
				 struct ion_buffer *buffer)
{
	unsigned long len = buffer->size, align = buffer->align;
	struct ion_carveout *co = heap->priv;
	bool wc = ion_carveout_wc(buffer);
	struct sg_table *sgt;
	struct page *page;
	unsigned long addr;
	int ret;

	if (align > co->size || align > INT_MAX)
		return -EINVAL;
	if (len > co->size || len > ION_CHUNK_MAX)	/* one sg entry */
		return -ENOMEM;
	/* No aligned address of the region has room: never, not "now". */
	if (align && ALIGN(co->base, align) - co->base > co->size - len)
		return -EINVAL;
	if (wc)
		addr = ion_cache_region_get(co->wc, len, align);
	else
		addr = ion_carveout_get(co, len, align);
	if (!addr)
		return -ENOMEM;
	page = pfn_to_page(PHYS_PFN(addr));
	/* Through the linear map: write-combined already for a block's chunk. */
	ret = ion_carveout_zero(page, len >> PAGE_SHIFT);
	if (ret)
		goto err_put_range;
	sgt = ion_buffer_one_chunk(buffer, page, len);
	if (wc) {
		/* Drain the write-combining buffers before handing it out. */
		wmb();
	} else if (!(buffer->flags & ION_FLAG_CACHED)) {
		ret = ion_cache_set_uncached(sgt);
		if (ret)
			goto err_put_range;
	}
	return 0;

err_put_range:
	ion_carveout_put(buffer, addr);
	return ret;
}

static void ion_carveout_free(struct ion_buffer *buffer)
{
	struct sg_table *sgt = buffer->sg_table;
	struct scatterlist *sg = sgt->sgl;

	if (ion_carveout_wc(buffer) || (buffer->flags & ION_FLAG_CACHED) ||
	    ion_cache_restore_or_leak(sgt, buffer->heap->name))
		ion_carveout_put(buffer, page_to_phys(sg_page(sg)));
}

static int ion_carveout_phys(struct ion_heap *heap, struct ion_buffer *buffer,
			     phys_addr_t *addr, size_t *len)
{
	struct scatterlist *sg = buffer->sg_table->sgl;

	*addr = page_to_phys(sg_page(sg));
	*len = sg->length;
	return 0;
}

static void ion_carveout_chunk_stats(struct gen_pool *pool,
				     struct gen_pool_chunk *chunk, void *data)
{
	unsigned long nbits, start, end;
	struct ion_carveout_stats *st = data;
	int order = pool->min_alloc_order;

	nbits = (chunk->end_addr - chunk->start_addr + 1) >> order;
	start = find_first_zero_bit(chunk->bits, nbits);
	while (start < nbits) {
		end = find_next_bit(chunk->bits, nbits, start);
		st->largest = max_t(size_t, st->largest,
				    (end - start) << order);
		st->extents++;
		start = find_next_zero_bit(chunk->bits, nbits, end);
	}
}

/*
 * fragmentation_pct is the share of free space outside the largest free
 * block: 0 when the free space is one block (or there is none), near 100
 * when it is scattered in small pieces.  Figures are a snapshot taken
 * without stopping allocations.
 */
static void ion_carveout_debug_show(struct ion_heap *heap, struct seq_file *s)
{
	struct ion_carveout *co = heap->priv;
	struct ion_carveout_stats st = { 0 };
	size_t avail = gen_pool_avail(co->pool);

	gen_pool_for_each_chunk(co->pool, ion_carveout_chunk_stats, &st);
	seq_printf(s, "region: %s\n", ion_carveout_name());
	seq_printf(s, "region_source: %s\n", ion_carveout_source());
	seq_printf(s, "region_base_hex: %pa\n", &co->base);
	seq_printf(s, "region_size: %llu\n", (unsigned long long)co->size);
	seq_printf(s, "used: %zu\n", gen_pool_size(co->pool) - avail);
	seq_printf(s, "free: %zu\n", avail);
	seq_printf(s, "largest_free: %zu\n", st.largest);
	seq_printf(s, "free_extents: %lu\n", st.extents);
	/* Frees between the two reads can make largest exceed avail. */
	seq_printf(s, "fragmentation_pct: %zu\n",
		   avail ? 100 - min(st.largest, avail) * 100 / avail : 0);
	if (co->wc)
		ion_cache_region_debug_show(co->wc, s);
}

static const struct ion_heap_ops ion_carveout_heap_ops = {
	.allocate = ion_carveout_allocate,
	.free = ion_carveout_free,
	.phys = ion_carveout_phys,
	.debug_show = ion_carveout_debug_show,
};

/*
 * Mainline's heap of a reserved region, which is contiguous memory set
 * aside at boot too (the default CMA area when the command line made it).
 */
static const struct ion_heap_alias ion_carveout_heap_aliases[] = {
	{ .name = "reserved" },
	{ }
};

/*
 * Find the region and check that it is page-backed RAM we can use; a
 * carveout_memmap= range is given its pages here.
 */
static int ion_carveout_find(phys_addr_t *base, phys_addr_t *size)
{
	if (ion_carveout_memmap())
		return ion_carveout_memmap_map(carveout_memmap, base, size);
	if (!carveout_region || !*carveout_region)
		return -ENODEV;
	if (!ION_HAVE_RESERVE_MEM) {
		pr_info("ion: carveout heap off: this kernel has no reserve_mem= (6.11+); see carveout_memmap=\n");
		return -ENODEV;
	}
	if (!reserve_mem_find_by_name(carveout_region, base, size))
		return -ENODEV;
	if (!PAGE_ALIGNED(*base) || !PAGE_ALIGNED(*size) || !*size) {
		pr_warn("ion: reserve_mem region %s is not page aligned\n",
			carveout_region);
		return -ENODEV;
	}
	if (!pfn_valid(PHYS_PFN(*base)) ||
	    !pfn_valid(PHYS_PFN(*base + *size - 1))) {
		pr_warn("ion: reserve_mem region %s has no struct pages\n",
			carveout_region);
		return -ENODEV;
	}
	return 0;
}

/**
 * ion_carveout_heap_init() - register the carveout heap, if there is a region
 *
 * Context: Process context (module init).
 * Return: 0, -ENODEV when no usable region is configured, -ENOMEM, or the
 * -errno of ion_device_add_heap().
 */
int ion_carveout_heap_init(void)
{
	struct ion_carveout *co;
	phys_addr_t base, size;
	int ret;

	ret = ion_carveout_find(&base, &size);
	if (ret)
		return ret;
	co = kzalloc(sizeof(*co), GFP_KERNEL);
	if (!co) {
		ret = -ENOMEM;
		goto err_unmap;
	}
	co->base = base;
	co->size = size;
	co->pool = gen_pool_create(PAGE_SHIFT, NUMA_NO_NODE);
	if (!co->pool) {
		ret = -ENOMEM;
		goto err_free_co;
	}
	ret = gen_pool_add(co->pool, base, size, NUMA_NO_NODE);
	if (ret)
		goto err_destroy_pool;
	/* NULL off x86: uncached buffers are converted alone. */
	co->wc = ion_cache_region_create(co->pool);

	co->heap.name = ION_CARVEOUT_HEAP_NAME;
	co->heap.size = size;
	co->heap.reserved_mem = true;
	/* Not System RAM: see ion_carveout_memmap.c. */
	co->heap.whole_maps = ion_carveout_memmap();
	co->heap.type = ION_HEAP_TYPE_CARVEOUT;
	co->heap.id = ION_HEAP_TYPE_CARVEOUT;
	co->heap.ops = &ion_carveout_heap_ops;
	co->heap.aliases = ion_carveout_heap_aliases;
	co->heap.priv = co;
	ret = ion_device_add_heap(&co->heap);
	if (ret)
		goto err_destroy_region;
	ion_carveout = co;
	pr_info("ion: carveout heap: %pa + %llu bytes from %s %s\n",
		&co->base, (unsigned long long)co->size,
		ion_carveout_source(), ion_carveout_name());
	return 0;

err_destroy_region:
	ion_cache_region_destroy(co->wc);
err_destroy_pool:
	gen_pool_destroy(co->pool);
err_free_co:
	kfree(co);
err_unmap:
	ion_carveout_memmap_unmap();
	return ret;
}

/**
 * ion_carveout_heap_exit() - unregister the carveout heap
 *
 * Context: Process context (module exit).  No buffer of the heap is alive
 * (each pins the module).
 */
void ion_carveout_heap_exit(void)
{
	struct ion_carveout *co = ion_carveout;

	ion_device_remove_heap(&co->heap);
	ion_cache_region_destroy(co->wc);
	/*
	 * A range left write-combined (see ion_carveout_free()) stays
	 * allocated, and gen_pool_destroy() BUG()s on allocated bits: then
	 * the pool is kept, with the leak (and a memmap= range keeps its
	 * pages).
	 */
	if (gen_pool_avail(co->pool) == gen_pool_size(co->pool)) {
		gen_pool_destroy(co->pool);
		ion_carveout_memmap_unmap();
	} else {
		pr_warn("ion: %s: %zu bytes leaked write-combined, keeping the pool\n",
			co->heap.name,
			gen_pool_size(co->pool) - gen_pool_avail(co->pool));
		ion_carveout_memmap_abandon();
	}
	kfree(co);
	ion_carveout = NULL;
}
