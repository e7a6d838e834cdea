// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: the carveout's region from memmap=SIZE$START, for kernels
 * without reserve_mem= (6.1).  A leaf of ion_carveout_heap.c.
 */

/**
 * DOC: carveout region from memmap=
 *
 * reserve_mem= (6.11+) leaves ordinary RAM in the linear map with its
 * struct pages.  Before 6.11 (Debian 12's 6.1) the one boot-time
 * reservation a module can use on x86 is memmap=SIZE$START: the firmware
 * memory map then calls the range reserved, so it never reaches the page
 * allocator, but it has no usable struct pages and no linear map either.
 * Given the same range in the module parameter carveout_memmap=SIZE@START,
 * the carveout heap asks memremap_pages() (MEMORY_DEVICE_GENERIC) to give
 * it both: ZONE_DEVICE struct pages, each with its reference held from the
 * start (so nothing ever frees them to an allocator), and the range
 * mapped write-back in the linear map.  From then on the heap treats the
 * region as it treats a reserve_mem= one: page_address(), sg_set_page(),
 * remap_pfn_range() and the DMA API work on those pages alike.
 *
 * memremap_pages() records the whole range as write-back in x86's PAT
 * memtype tree (it is not System RAM, so its memory types are tracked
 * there, not in the page flags).  That entry would make every later
 * request for another type of part of the range conflict: the
 * write-combined blocks of uncached buffers (set_memory_wc()) and their
 * write-combined user mappings.  ion owns the range and keeps its
 * mappings coherent itself (ion_cache_x86_region.c), so it drops that one
 * entry once the pages exist (arch_io_free_memtype_wc() frees the entry
 * of exactly that range, whatever its type) and puts one back before
 * memunmap_pages(), which frees it.  In between each user mapping and
 * each converted block reserves its own range's type, as for any other
 * memory the tree tracks.  One more thing the tree needs: a user mapping
 * must go whole.  Before 6.17 the kernel frees a mapping's entry by the
 * range of the piece unmapped, so a munmap() of part of one finds no entry
 * of that range and leaves the old one behind, for good, conflicting with
 * every later mapping or conversion of another type there (and with the
 * entry put back at unload).  So the heap sets &ion_heap.whole_maps: the
 * core refuses to split its buffers' mappings.
 *
 * Needs CONFIG_ZONE_DEVICE (Debian's amd64 kernels have it; its arm64 6.1
 * does not, and arm64 has no memmap= anyway): without it the parameter is
 * refused at load, with the reason in the kernel log.
 */
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/memremap.h>
#include <linux/mm.h>
#include <linux/numa.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "ion_carveout.h"

/*
 * The range given pages, or NULL.  Allocated, not static: when the heap
 * must leave its range mapped at unload (ion_carveout_memmap_abandon()),
 * the kernel keeps pointing at it (each page's pgmap) after ion.ko's own
 * memory is gone.
 */
static struct dev_pagemap *ion_carveout_pgmap;

/*
 * "SIZE@START", as memparse() reads sizes: 64M@0x70000000.  Both in whole
 * memory subsections (2 MiB on x86): memremap_pages() adds no less, and
 * refuses a misaligned range only after a kernel WARN, leaving a linear
 * mapping of it behind.
 */
static int ion_carveout_memmap_parse(const char *spec, phys_addr_t *base,
				     phys_addr_t *size)
{
	char *end;

	*size = memparse(spec, &end);
	if (*end != '@')
		return -EINVAL;
	*base = memparse(end + 1, &end);
	if (*end && *end != '\n')
		return -EINVAL;
	if (!*size || !IS_ALIGNED(*base | *size, memremap_compat_align()) ||
	    *base + *size < *base)
		return -EINVAL;
	return 0;
}

/**
 * ion_carveout_memmap_map() - give the range @spec names struct pages
 * @spec: carveout_memmap's value, "SIZE@START"
 * @base: out: physical start of the range
 * @size: out: its size in bytes
 *
 * The range must be what memmap=SIZE$START reserved: none of it System
 * RAM.  Undone by ion_carveout_memmap_unmap().
 *
 * Context: Process context (module init).
 * Return: 0, -EINVAL for a malformed @spec, -EBUSY when some of the range
 * is System RAM, or memremap_pages()'s -errno; each said in the log.
 */
int ion_carveout_memmap_map(const char *spec, phys_addr_t *base,
			    phys_addr_t *size)
{
	struct dev_pagemap *pgmap;
	void *addr;
	int ret;

	ret = ion_carveout_memmap_parse(spec, base, size);
	if (ret) {
		pr_warn("ion: carveout_memmap=%s: want SIZE@START, both multiples of %lu KiB\n",
			spec, memremap_compat_align() >> 10);
		return ret;
	}
	if (region_intersects(*base, *size, IORESOURCE_SYSTEM_RAM,
			      IORES_DESC_NONE) != REGION_DISJOINT) {
		pr_warn("ion: carveout_memmap=%s: the range is System RAM; boot with memmap=%s$%pa\n",
			spec, spec, base);
		return -EBUSY;
	}
	pgmap = kzalloc(sizeof(*pgmap), GFP_KERNEL);
	if (!pgmap)
		return -ENOMEM;
	pgmap->type = MEMORY_DEVICE_GENERIC;
	pgmap->range.start = *base;
	pgmap->range.end = *base + *size - 1;
	pgmap->nr_range = 1;
	addr = memremap_pages(pgmap, NUMA_NO_NODE);
	if (IS_ERR(addr)) {
		ret = PTR_ERR(addr);
		pr_warn("ion: carveout_memmap=%s: memremap_pages: %d\n", spec,
			ret);
		kfree(pgmap);
		return ret;
	}
	arch_io_free_memtype_wc(*base, *size);
	ion_carveout_pgmap = pgmap;
	return 0;
}

/**
 * ion_carveout_memmap_unmap() - undo ion_carveout_memmap_map()
 *
 * Context: Process context (module exit or init's unwinding).  No page
 * of the range is in use.
 */
void ion_carveout_memmap_unmap(void)
{
	struct dev_pagemap *pgmap = ion_carveout_pgmap;

	if (!pgmap)
		return;
	/* The entry memunmap_pages() frees (see the DOC above). */
	if (arch_io_reserve_memtype_wc(pgmap->range.start,
				       range_len(&pgmap->range)))
		pr_warn("ion: carveout_memmap: memtype of %pa not restored\n",
			&pgmap->range.start);
	memunmap_pages(pgmap);
	kfree(pgmap);
	ion_carveout_pgmap = NULL;
}

/**
 * ion_carveout_memmap_abandon() - leave the range mapped, for good
 *
 * For an unload that must keep some of the range allocated (left
 * write-combined): its pages keep their pgmap, which is left allocated,
 * leaked with the range.
 *
 * Context: Process context (module exit).
 */
void ion_carveout_memmap_abandon(void)
{
	ion_carveout_pgmap = NULL;
}
