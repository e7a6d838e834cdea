// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: the page pools' shrinker, their debugfs lines, creation and
 * teardown (the allocation and free paths are in ion_page_pool.c, which
 * also documents the whole).
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <uapi/linux/sched/types.h>

#include "ion_page_pool.h"
#include "ion_page_pool_priv.h"

/*
 * Free up to @nr pages (whole chunks, so perhaps a little more) from one
 * pool.  A chunk that cannot return to write-back stays in the pool.
 */
unsigned long ion_pool_shrink_one(struct ion_page_pools *pools,
				  struct ion_page_pool *pool, bool cached,
				  unsigned long nr)
{
	unsigned long freed = 0;
	struct page *page;

	while (freed < nr) {
		page = ion_pool_take(pools, pool);
		if (!page)
			break;
		if (!ion_pool_release(page, pool->order, cached)) {
			ion_pool_add(pools, pool, page);
			break;
		}
		freed += 1UL << pool->order;
	}
	return freed;
}

/*
 * Free about @nr pooled pages: cached pools first, uncached ones only when
 * @may_block (restoring write-back sleeps), largest orders first.
 */
unsigned long ion_pool_shrink(struct ion_page_pools *pools, unsigned long nr,
			      bool may_block)
{
	unsigned long freed = 0;
	unsigned int i;
	int c;

	for (c = 1; c >= 0 && freed < nr; c--) {
		if (!c && !may_block)
			break;
		for (i = 0; i < pools->norders && freed < nr; i++)
			freed += ion_pool_shrink_one(pools, &pools->pool[c][i],
						     c, nr - freed);
	}
	return freed;
}

/**
 * ion_page_pools_debug_show() - the pools' lines of the heap's debugfs file
 * @pools: the heap's pools
 * @s:	   the heap's debugfs file
 *
 * Sizes in bytes: all pools, the cap, each pool, the chunks waiting to be
 * zeroed; then the shrinker's scans that freed pages and what they freed.
 *
 * Context: Process context; does not sleep.
 */
void ion_page_pools_debug_show(struct ion_page_pools *pools,
			       struct seq_file *s)
{
	static const char * const mode[] = { "uncached", "cached" };
	unsigned int i;
	int c;

	seq_printf(s, "pool_bytes: %lu\n",
		   atomic_long_read(&pools->pool_pages) << PAGE_SHIFT);
	seq_printf(s, "pool_max_bytes: %lu\n",
		   ion_pool_cap_pages() << PAGE_SHIFT);
	for (c = 1; c >= 0; c--) {
		for (i = 0; i < pools->norders; i++) {
			struct ion_page_pool *pool = &pools->pool[c][i];

			seq_printf(s, "pool_order_%u_%s: %lu\n", pool->order,
				   mode[c], READ_ONCE(pool->count) <<
				   (pool->order + PAGE_SHIFT));
		}
	}
	seq_printf(s, "deferred_free_bytes: %lu\n",
		   atomic_long_read(&pools->deferred_pages) << PAGE_SHIFT);
	seq_printf(s, "shrink_count: %lu\n",
		   atomic_long_read(&pools->shrink_count));
	seq_printf(s, "shrink_freed_bytes: %lu\n",
		   atomic_long_read(&pools->shrunk_pages) << PAGE_SHIFT);
}

static unsigned long ion_page_pools_count(struct shrinker *shrinker,
					  struct shrink_control *sc)
{
	struct ion_page_pools *pools = shrinker->private_data;
	unsigned long n = atomic_long_read(&pools->pool_pages) +
			  atomic_long_read(&pools->deferred_pages);

	return n ? n : SHRINK_EMPTY;
}

static unsigned long ion_page_pools_scan(struct shrinker *shrinker,
					 struct shrink_control *sc)
{
	struct ion_page_pools *pools = shrinker->private_data;
	bool may_block = gfpflags_allow_blocking(sc->gfp_mask);
	unsigned long freed;

	freed = ion_pool_shrink(pools, sc->nr_to_scan, may_block);
	if (freed < sc->nr_to_scan)
		freed += ion_pool_shrink_deferred(pools, sc->nr_to_scan - freed,
						  may_block);
	if (!freed)
		return SHRINK_STOP;
	sc->nr_scanned = freed;
	atomic_long_inc(&pools->shrink_count);
	atomic_long_add(freed, &pools->shrunk_pages);
	return freed;
}

static void ion_pools_init_lists(struct ion_page_pools *pools,
				 const unsigned int *orders)
{
	unsigned int i;
	int c;

	for (c = 0; c < 2; c++) {
		for (i = 0; i < pools->norders; i++) {
			struct ion_page_pool *pool = &pools->pool[c][i];

			spin_lock_init(&pool->lock);
			INIT_LIST_HEAD(&pool->chunks);
			pool->order = orders[i];
		}
		INIT_LIST_HEAD(&pools->deferred[c]);
	}
	init_llist_head(&pools->freed);
	spin_lock_init(&pools->deferred_lock);
	kthread_init_delayed_work(&pools->work, ion_page_pools_worker);
}

/**
 * ion_page_pools_create() - pools for a heap's chunk orders
 * @name:    short name of the heap (for the workqueue and messages)
 * @orders:  the orders of the heap's chunks, largest first
 * @norders: how many, at most 4
 *
 * Registers the pools' shrinker.
 *
 * Context: Process context (module init).
 * Return: the pools, or ERR_PTR(-EINVAL) for bad orders, ERR_PTR(-ENOMEM).
 */
struct ion_page_pools *ion_page_pools_create(const char *name,
					     const unsigned int *orders,
					     unsigned int norders)
{
	const struct sched_attr idle = {
		.size = sizeof(idle), .sched_policy = SCHED_IDLE,
	};
	struct ion_page_pools *pools;
	unsigned int i, max = 0;

	if (WARN_ON_ONCE(!norders || norders > ION_POOL_MAX_ORDERS))
		return ERR_PTR(-EINVAL);
	for (i = 0; i < norders; i++)
		max = max(max, orders[i]);
	if (WARN_ON_ONCE(max > MAX_PAGE_ORDER))
		return ERR_PTR(-EINVAL);
	pools = kzalloc(sizeof(*pools), GFP_KERNEL);
	if (!pools)
		return ERR_PTR(-ENOMEM);
	pools->name = name;
	pools->norders = norders;
	ion_pools_init_lists(pools, orders);
	pools->zero_pages = kmalloc_array(1U << max, sizeof(struct page *),
					  GFP_KERNEL);
	if (!pools->zero_pages)
		goto err_free_pools;
	pools->worker = kthread_create_worker(0, "ion_%s_pool", name);
	if (IS_ERR(pools->worker))
		goto err_free_zero_pages;
	/* Zeroing is for idle time: never preempt the tasks that allocate. */
	if (sched_setattr_nocheck(pools->worker->task, &idle))
		sched_set_normal(pools->worker->task, MAX_NICE);
	pools->shrinker = shrinker_alloc(0, "ion-%s-pool", name);
	if (!pools->shrinker)
		goto err_destroy_worker;
	pools->shrinker->count_objects = ion_page_pools_count;
	pools->shrinker->scan_objects = ion_page_pools_scan;
	pools->shrinker->seeks = DEFAULT_SEEKS;
	pools->shrinker->private_data = pools;
	shrinker_register(pools->shrinker);
	return pools;

err_destroy_worker:
	kthread_destroy_worker(pools->worker);
err_free_zero_pages:
	kfree(pools->zero_pages);
err_free_pools:
	kfree(pools);
	return ERR_PTR(-ENOMEM);
}

/**
 * ion_page_pools_destroy() - free every pooled page and the pools
 * @pools: pools from ion_page_pools_create(); no buffer may still hold
 *	   chunks that will come back to them
 *
 * Unregisters the shrinker, lets the worker finish the chunks still
 * queued, then gives every chunk back to the buddy allocator (uncached
 * ones restored to write-back; one that cannot be is leaked with a
 * warning rather than freed write-combined).
 *
 * Context: Process context (module exit); sleeps.
 */
void ion_page_pools_destroy(struct ion_page_pools *pools)
{
	unsigned long leaked = 0;
	unsigned int i;
	int c;

	shrinker_free(pools->shrinker);
	/* Run delayed work now; no free can queue it again. */
	kthread_mod_delayed_work(pools->worker, &pools->work, 0);
	kthread_destroy_worker(pools->worker);	/* flushes it first */
	for (c = 0; c < 2; c++) {
		for (i = 0; i < pools->norders; i++) {
			struct ion_page_pool *pool = &pools->pool[c][i];

			ion_pool_shrink_one(pools, pool, c, ULONG_MAX);
			leaked += pool->count << (pool->order + PAGE_SHIFT);
		}
	}
	if (leaked)
		pr_warn("ion: %s: cannot restore %lu pooled bytes to write-back, leaking them\n",
			pools->name, leaked);
	kfree(pools->zero_pages);
	kfree(pools);
}
