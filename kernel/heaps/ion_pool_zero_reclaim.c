// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: what the pools' shrinker takes back of the chunks waiting to
 * be zeroed (the reclaim hook ion_pool_zero_create() registers with the
 * pools, struct ion_page_pools_reclaim).  The worker and the lists are in
 * ion_pool_zero.c.
 */
#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/spinlock.h>

#include "ion_cache.h"
#include "ion_page_pool.h"
#include "ion_pool_zero.h"
#include "ion_pool_zero_priv.h"

/* The pools' reclaim count: pages waiting to be zeroed. */
static unsigned long ion_pool_zero_count(void *data)
{
	return ion_pool_zero_pending(data);
}

/*
 * The pools' reclaim scan: give back about @nr pages still waiting to be
 * zeroed.  The worker runs at the lowest priority, so on busy CPUs chunks
 * can wait a while; under memory pressure the shrinker takes them back
 * unzeroed, as any freed page goes back to the buddy allocator.  An
 * uncached chunk that cannot return to write-back goes back on its list.
 */
static unsigned long ion_pool_zero_scan(void *data, unsigned long nr,
					bool may_block)
{
	struct ion_pool_zero *zero = data;
	unsigned long freed = 0, n;
	struct page *page;
	bool cached;

	ion_pool_unpack(zero);
	while (freed < nr) {
		page = ion_pool_next_deferred(zero, &cached, may_block);
		if (!page)
			break;
		n = ion_pool_give_back(zero, page, cached);
		if (!n)
			break;
		freed += n;
	}
	return freed;
}

const struct ion_page_pools_reclaim ion_pool_zero_reclaim = {
	.count = ion_pool_zero_count,
	.scan = ion_pool_zero_scan,
};
