// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the memory reserve every heap of the page allocator leaves to the
 * rest of the system.
 */
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/vmstat.h>

#include "ion_heap.h"
#include "ion_heaps.h"

/**
 * ion_heap_leaves_reserve() - may a buffer of @want pages be allocated?
 * @want:   pages the buffer needs
 * @pooled: the pages a heap's own pools could give it without the page
 *	    allocator (of its cache mode, and that the caller's memory
 *	    cgroup may take), asked only when free memory is short; NULL:
 *	    none
 * @cached: the buffer's cache mode, for @pooled
 *
 * A buffer may not take the memory the rest of the system needs to run
 * and to reclaim: when what it asks for (beyond what the pools hold) would
 * leave less than 1/16 of RAM available, it is refused with -ENOMEM
 * rather than pushing the kernel's own allocations into the OOM killer
 * (__GFP_RETRY_MAYFAIL keeps the heap's own allocation from invoking it,
 * not the allocations of others that come after it).  The system,
 * system-contig, DMA and auto heaps ask this before allocating.
 *
 * si_mem_available() walks zones and node counters; it is only asked when
 * the free pages alone (one counter) do not leave the reserve twice over,
 * which covers the watermarks that MemAvailable subtracts from them.  So
 * a small buffer on a machine with memory to spare pays one read.
 *
 * Free CMA pages count in neither: they serve only movable allocations,
 * not the kernel's own that the reserve is for.  With 128 MiB of CMA (more
 * than 1/16 of a 2 GiB guest) the reserve was all CMA, and a kernel
 * allocation after ion's last buffer woke the OOM killer.
 *
 * Context: Any context that may read the vm counters.
 * Return: true when the buffer leaves the reserve.
 */
bool ion_heap_leaves_reserve(unsigned long want,
			     unsigned long (*pooled)(bool cached), bool cached)
{
	unsigned long reserve = totalram_pages() / 16, free, cma, have = 0;
	unsigned long need;
	long avail;

	if (want > totalram_pages())
		return false;
	free = global_zone_page_state(NR_FREE_PAGES);
	cma = min(global_zone_page_state(NR_FREE_CMA_PAGES), free);
	free -= cma;
	if (free >= want + 2 * reserve)
		return true;
	if (pooled)
		have = pooled(cached);
	if (want <= have)
		return true;
	need = want - have + reserve;
	if (free >= need + reserve)
		return true;
	avail = si_mem_available() - cma;
	return avail > 0 && need <= avail;
}
