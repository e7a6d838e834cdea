// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: what every heap does with uncached pages it gives back,
 * whatever the architecture (the per-architecture part is in
 * ion_cache_<arch>.c).
 */
#include <linux/printk.h>
#include <linux/scatterlist.h>

#include "ion_cache.h"

/**
 * ion_cache_restore_or_leak() - give uncached pages back to write-back, or
 *				 leak them
 * @sgt:  the pages ion_cache_set_uncached() was called on
 * @name: the heap's name, for the warning
 *
 * Pages whose linear map is still write-combined must not go back to their
 * allocator (its next user would get them write-combined): when
 * ion_cache_set_cached() fails they are leaked, with a rate-limited
 * warning giving their size.
 *
 * Context: Process context, may sleep.
 * Return: true when the pages are write-back again and may be freed, false
 * when they were leaked and must not be.
 */
bool ion_cache_restore_or_leak(struct sg_table *sgt, const char *name)
{
	unsigned long bytes = 0;
	struct scatterlist *sg;
	unsigned int i;

	if (!ion_cache_set_cached(sgt))
		return true;
	for_each_sgtable_sg(sgt, sg, i)
		bytes += sg->length;
	pr_warn_ratelimited("ion: %s: cannot restore %lu bytes to write-back, leaking them\n",
			    name, bytes);
	return false;
}
