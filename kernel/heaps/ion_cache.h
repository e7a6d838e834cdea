/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: the architecture-specific part of uncached buffers.
 *
 * An uncached buffer (no ION_FLAG_CACHED) is mapped write-combined in user
 * space and in the kernel's vmap by the core.  Some architectures also need
 * the kernel's own linear-map alias of those pages to agree: x86's PAT
 * forbids mapping the same RAM with conflicting attributes and downgrades
 * such user mappings to write-back.  These two calls bring the linear map
 * in line and back; arm64 keeps a cacheable linear map and cleans and
 * invalidates the pages' cache lines instead.  The implementation lives in
 * ion_cache_<arch>.c, other architectures get the no-op stubs below.
 * Every heap gives uncached pages back through ion_cache_restore_or_leak()
 * (ion_cache.c), which leaks, with a warning, what stays write-combined.
 *
 * x86 also cuts the system heap's uncached chunks out of write-combined
 * 2 MiB blocks, so that converting them never splits a large page of the
 * linear map (ion_cache_x86_block.c); elsewhere ion_cache_uncached_chunk()
 * has none to give and the heap converts its own chunks.  Likewise x86
 * cuts the carveout's uncached buffers out of write-combined 2 MiB blocks
 * of the carveout itself (ion_cache_region_*(), ion_cache_x86_region.c);
 * elsewhere ion_cache_region_create() gives NULL and the heap converts
 * each buffer alone.
 */
#ifndef _ION_CACHE_H
#define _ION_CACHE_H

#include <linux/gfp.h>
#include <linux/kconfig.h>
#include <linux/math.h>
#include <linux/scatterlist.h>

#include "ion_compat.h"

struct gen_pool;
struct page;
struct seq_file;
struct ion_wc_region;

#if IS_ENABLED(CONFIG_X86) || IS_ENABLED(CONFIG_ARM64)
int ion_cache_set_uncached(struct sg_table *sgt);
int ion_cache_set_cached(struct sg_table *sgt);
#else
static inline int ion_cache_set_uncached(struct sg_table *sgt)
{
	return 0;
}

static inline int ion_cache_set_cached(struct sg_table *sgt)
{
	return 0;
}
#endif

/* The order of x86's write-combined blocks: 2 MiB of 4 KiB pages. */
#define ION_CACHE_BLOCK_ORDER	9

/**
 * ion_cache_uncached_span() - the pages to convert for an uncached range
 * @npages: the range's length in pages, in a block of its order (aligned
 *	    to get_order() of its length)
 *
 * On x86, from 1 MiB (order 9) on, @npages rounded up to whole 2 MiB
 * blocks, which such a block holds: ion_cache_set_uncached() converts
 * that range without splitting a large page of the linear map
 * (ion_cache_x86.c).  Smaller ranges, and every range elsewhere (nothing
 * is split there), keep @npages.
 *
 * Context: Any context.
 * Return: the pages to allocate, convert and give back together.
 */
static inline unsigned long ion_cache_uncached_span(unsigned long npages)
{
	unsigned long block = 1UL << ION_CACHE_BLOCK_ORDER;

	if (!IS_ENABLED(CONFIG_X86) || npages <= block / 2)
		return npages;
	return round_up(npages, block);
}

#if IS_ENABLED(CONFIG_X86)
struct page *ion_cache_uncached_chunk(unsigned int order, int nid,
				      bool charged, u64 limit);
bool ion_cache_uncached_chunk_put(struct page *page, unsigned int order);
void ion_cache_blocks_exit(void);
void ion_cache_blocks_debug_show(struct seq_file *s);
bool ion_cache_linear_large(unsigned long addr);
bool ion_cache_count_split(unsigned long addr, bool was_large);
long ion_cache_split_count(void);
struct page *ion_cache_charge_page(struct page *page);
struct ion_wc_region *ion_cache_region_create(struct gen_pool *pool);
void ion_cache_region_destroy(struct ion_wc_region *r);
phys_addr_t ion_cache_region_get(struct ion_wc_region *r, size_t len,
				 unsigned long align);
void ion_cache_region_put(struct ion_wc_region *r, phys_addr_t addr,
			  size_t len, unsigned long align);
void ion_cache_region_debug_show(struct ion_wc_region *r, struct seq_file *s);
#else
static inline struct page *ion_cache_uncached_chunk(unsigned int order,
						    int nid, bool charged,
						    u64 limit)
{
	return NULL;
}

static inline bool ion_cache_uncached_chunk_put(struct page *page,
						unsigned int order)
{
	return false;
}

static inline void ion_cache_blocks_exit(void)
{
}

static inline long ion_cache_split_count(void)
{
	return 0;
}

/* No blocks: each chunk carries its own charge. */
static inline struct page *ion_cache_charge_page(struct page *page)
{
	return page;
}

static inline void ion_cache_blocks_debug_show(struct seq_file *s)
{
}

/* No blocks: a heap converts (or cleans) each uncached buffer alone. */
static inline struct ion_wc_region *
ion_cache_region_create(struct gen_pool *pool)
{
	return NULL;
}

static inline void ion_cache_region_destroy(struct ion_wc_region *r)
{
}

static inline phys_addr_t ion_cache_region_get(struct ion_wc_region *r,
					       size_t len, unsigned long align)
{
	return 0;
}

static inline void ion_cache_region_put(struct ion_wc_region *r,
					phys_addr_t addr, size_t len,
					unsigned long align)
{
}

static inline void ion_cache_region_debug_show(struct ion_wc_region *r,
					       struct seq_file *s)
{
}
#endif

/*
 * Free write-back pages (a chunk, or a whole block) to the buddy allocator.
 * In a shrinker's scan they count as reclaim's progress here, where they
 * really are freed: a chunk given back to a block that stays held frees
 * nothing.  Outside reclaim the count is a no-op.
 */
static inline void ion_cache_free_pages(struct page *page, unsigned int order)
{
	__free_pages(page, order);
	mm_account_reclaimed_pages(1UL << order);
}

bool ion_cache_restore_or_leak(struct sg_table *sgt, const char *name);
void ion_cache_one_table(struct sg_table *one, struct scatterlist *sg,
			 struct page *page, unsigned long npages);
bool ion_page_chunk_release(struct page *page, unsigned int order,
			    bool cached);
void ion_page_chunk_release_or_leak(struct page *page, unsigned int order,
				    bool cached, const char *name);

#endif /* _ION_CACHE_H */
