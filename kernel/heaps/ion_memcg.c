// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: charging the RAM heaps' pages to memory cgroups, and the
 * per-memcg lists of the pools' charged chunks.  Nearly a leaf (see
 * ion_memcg.h).
 */
#include <linux/list.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/page_counter.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/shrinker.h>
#include <linux/slab.h>

#include "ion_memcg.h"
#include "trace/ion_trace.h"

/**
 * DOC: memory cgroups
 *
 * The system and system-contig heaps take their fresh pages with
 * __GFP_ACCOUNT (module parameter memcg_charge, on by default): every
 * byte of a live buffer is charged to the memory cgroup of the task that
 * allocated it, as kernel memory ("kernel" in memory.stat, part of
 * memory.current), for the buffer's whole life, whoever holds it
 * meanwhile.  A kernel client's allocations are charged to the cgroup of
 * the task its driver calls ion_alloc() from (or to the one it set with
 * set_active_memcg()).  Over memory.max the charge fails once that
 * cgroup's own memory has been reclaimed (including its pooled ion
 * chunks, below): the heaps ask with __GFP_RETRY_MAYFAIL or
 * __GFP_NORETRY, so the cgroup's OOM killer is not invoked and the
 * allocation fails with -ENOMEM; no task outside the cgroup is affected.
 *
 * The kernel charges pages only as they are allocated, and keeps the
 * charge until they are freed.  So a freed charged chunk stays charged
 * to the cgroup that held it, as page cache does, and is pooled for that
 * cgroup alone: after the usual deferred zeroing it goes on that
 * cgroup's list of a memcg-aware list_lru (one per pool order and cache
 * mode, struct ion_memcg_pool), never on the shared lists.  A task in a
 * cgroup other than the root takes pooled chunks only from its own
 * cgroup's list; the root cgroup (and everyone with memcg_charge off)
 * uses the shared, uncharged pools.  Pooled charged chunks count in the
 * pools' cap (pool_max_mb) like any other, and in "kernel" of
 * memory.stat until they are freed.  The pools' shrinker is memcg-aware:
 * reclaim in a cgroup (its memory.max, or a write to its memory.reclaim)
 * gives that cgroup's pooled chunks back to the buddy allocator, and
 * their charge with them; global reclaim and drop_caches reach every
 * cgroup's lists.  Chunks still waiting for the zeroing worker (a few
 * milliseconds after their free) are on no cgroup's list yet: only
 * global reclaim or the worker's pooling reaches them.
 *
 * When a cgroup is removed, the kernel moves its charges to its parent
 * (the chunks' obj_cgroup then names the parent, so folio_memcg() returns
 * it) and moves its list_lru items to the parent's lists, in that order.
 * The rule "a chunk is on the list of the cgroup folio_memcg() names"
 * thus holds across removal: the chunks become the parent's, reused by
 * the parent's tasks and freed by the parent's reclaim; those reparented
 * to the root cgroup are freed by global reclaim, drop_caches or unload.
 *
 * On x86 an uncached chunk is cut from a write-combined 2 MiB block, and a
 * charged caller's from a block charged whole to its cgroup (DOC:
 * uncached blocks); the kernel records that charge on the block's first
 * page only, so here "the cgroup folio_memcg() names" is always that of
 * the page ion_cache_charge_page() gives: the chunk's own, or its
 * block's first page.  The block's charge is reparented with the rest.
 *
 * A task whose pages are charged gets no helper kworkers (ion_parallel.c),
 * whose pages would be charged to no one.  Kernels before 6.8 cannot file
 * a page under a chosen cgroup in a list_lru (ion_compat.h): there a
 * charged chunk is never pooled but freed with its buffer: a task in a
 * cgroup pays a cold allocation every time.
 */

static bool memcg_charge = true;
module_param(memcg_charge, bool, 0644);
MODULE_PARM_DESC(memcg_charge,
		 "charge system and system-contig heap buffers to the allocating task's memory cgroup (default Y)");

/*
 * A slab cache whose objects are allocated only to have the slab
 * allocator create a cgroup's lists in a list_lru (kmem_cache_alloc_lru(),
 * as for dentries and inodes), and freed at once.
 */
static struct kmem_cache *ion_memcg_lru_cache;
static unsigned int ion_memcg_lru_users;	/* protected by the mutex */
static DEFINE_MUTEX(ion_memcg_lru_mutex);	/* protects the cache */

/**
 * struct ion_memcg_walk - a walk of one list_lru
 * @chunks: where the chunks taken off go, linked by page->lru
 * @memcg:  the cgroup whose list is walked, checked against each chunk's
 *	    (under rcu_read_lock()); NULL: not checked
 */
struct ion_memcg_walk {
	struct list_head *chunks;
	struct mem_cgroup *memcg;
};

/* root_mem_cgroup is not exported: the root is the one without a parent. */
static bool ion_memcg_is_root(struct mem_cgroup *memcg)
{
	return !memcg->css.parent;
}

/* The caller's memory cgroup: its active one, else its own.  Under RCU. */
static struct mem_cgroup *ion_memcg_caller(void)
{
	struct mem_cgroup *memcg = current->active_memcg;

	return memcg ? memcg : mem_cgroup_from_task(current);
}

/*
 * The cgroup a chunk is charged to: its own page's, or for a chunk of an
 * uncached block the block's first page's (ion_cache_charge_page()).
 * Under RCU.
 */
static struct mem_cgroup *ion_memcg_of_chunk(struct page *page)
{
	return folio_memcg(page_folio(ion_cache_charge_page(page)));
}

/**
 * ion_memcg_caller_owns() - is @page charged to the caller's cgroup?
 * @page: a charged page (an uncached block's first page)
 *
 * The caller's cgroup is its active one (set_active_memcg()), else its
 * own; @page's is read now, so after a cgroup's removal it is the parent
 * the kernel moved the charge to.
 *
 * Context: Process context.
 * Return: true when both are the same cgroup.
 */
bool ion_memcg_caller_owns(struct page *page)
{
	bool owns;

	rcu_read_lock();
	owns = folio_memcg(page_folio(page)) == ion_memcg_caller();
	rcu_read_unlock();
	return owns;
}

/**
 * ion_memcg_gfp() - the GFP flag that charges a fresh chunk
 *
 * Context: Any context.
 * Return: __GFP_ACCOUNT, or 0 with memcg_charge off.
 */
gfp_t ion_memcg_gfp(void)
{
	return READ_ONCE(memcg_charge) ? __GFP_ACCOUNT : 0;
}

/**
 * ion_memcg_caller_charged() - would the caller's fresh chunks be charged?
 *
 * True when memcg_charge is on and the caller's memory cgroup (its active
 * one, set_active_memcg(), or its own) is not the root.
 *
 * Context: Process context.
 * Return: true when the caller must neither take pooled chunks nor have
 * helpers allocate for it.
 */
bool ion_memcg_caller_charged(void)
{
	struct mem_cgroup *memcg;
	bool charged;

	if (!READ_ONCE(memcg_charge) || mem_cgroup_disabled() ||
	    !memcg_kmem_online())
		return false;
	rcu_read_lock();
	memcg = ion_memcg_caller();
	charged = memcg && !ion_memcg_is_root(memcg);
	rcu_read_unlock();
	return charged;
}

/*
 * The first of the caller's cgroup and its ancestors that @npages more
 * would take past its memory.max (read without locks), or NULL.  Under
 * RCU.
 */
static struct mem_cgroup *ion_memcg_limiting(unsigned long npages)
{
	struct mem_cgroup *memcg;

	for (memcg = ion_memcg_caller(); memcg && !ion_memcg_is_root(memcg);
	     memcg = parent_mem_cgroup(memcg))
		if (page_counter_read(&memcg->memory) + npages >
		    READ_ONCE(memcg->memory.max))
			return memcg;
	return NULL;
}

/**
 * ion_memcg_caller_at_limit() - would @npages more take the caller's
 *				 cgroup past memory.max?
 * @npages: the pages about to be charged
 *
 * Its memory.max or an ancestor's, read without locks.
 *
 * Context: Process context.
 * Return: true when charging them would need reclaim in the cgroup.
 */
bool ion_memcg_caller_at_limit(unsigned long npages)
{
	bool at_limit;

	rcu_read_lock();
	at_limit = ion_memcg_limiting(npages);
	rcu_read_unlock();
	return at_limit;
}

/**
 * ion_memcg_note_refusal() - trace a heap's -ENOMEM that memory.max caused
 * @heap: the heap's name
 * @size: the buffer's size in bytes
 * @ret:  the heap's result
 *
 * A charged caller's allocation that failed with -ENOMEM while its
 * cgroup (or an ancestor) could not take @size more bytes is recorded as
 * an ion_memcg_refusal event, with that cgroup's usage and memory.max.
 * Nothing is looked at while the event is disabled.
 *
 * Context: Process context.
 * Return: @ret.
 */
int ion_memcg_note_refusal(const char *heap, u64 size, int ret)
{
	struct mem_cgroup *memcg;

	if (ret != -ENOMEM || !trace_ion_memcg_refusal_enabled() ||
	    !ion_memcg_caller_charged())
		return ret;
	rcu_read_lock();
	memcg = ion_memcg_limiting(size >> PAGE_SHIFT);
	if (memcg)
		trace_ion_memcg_refusal(heap, size,
					(u64)page_counter_read(&memcg->memory) << PAGE_SHIFT,
					(u64)READ_ONCE(memcg->memory.max) << PAGE_SHIFT);
	rcu_read_unlock();
	return ret;
}

/**
 * ion_memcg_pool_init() - per-memcg lists for one pool's charged chunks
 * @mp:       the lists
 * @shrinker: the pools' shrinker, allocated with SHRINKER_MEMCG_AWARE and
 *	      not registered yet: reclaim in a cgroup calls it for the
 *	      cgroups whose lists hold chunks
 *
 * Context: Process context (module init).
 * Return: 0, or -ENOMEM.
 */
int ion_memcg_pool_init(struct ion_memcg_pool *mp, struct shrinker *shrinker)
{
	int ret = 0;

	if (!ION_MEMCG_POOLS)
		return list_lru_init(&mp->lru);
	mutex_lock(&ion_memcg_lru_mutex);
	if (!ion_memcg_lru_users)
		ion_memcg_lru_cache = kmem_cache_create("ion_memcg_lru",
							sizeof(long), 0, 0,
							NULL);
	if (ion_memcg_lru_cache)
		ion_memcg_lru_users++;
	else
		ret = -ENOMEM;
	mutex_unlock(&ion_memcg_lru_mutex);
	if (ret)
		return ret;
	ret = list_lru_init_memcg(&mp->lru, shrinker);
	if (ret)
		ion_memcg_pool_destroy(NULL);
	return ret;
}

/**
 * ion_memcg_pool_destroy() - free the lists of ion_memcg_pool_init()
 * @mp: the lists, empty (ion_memcg_pool_isolate() with no shrink control
 *	takes every chunk off); NULL drops only the slab cache's user
 *
 * Context: Process context (module exit); sleeps.
 */
void ion_memcg_pool_destroy(struct ion_memcg_pool *mp)
{
	if (mp)
		list_lru_destroy(&mp->lru);
	if (!ION_MEMCG_POOLS)
		return;
	mutex_lock(&ion_memcg_lru_mutex);
	if (!--ion_memcg_lru_users) {
		kmem_cache_destroy(ion_memcg_lru_cache);
		ion_memcg_lru_cache = NULL;
	}
	mutex_unlock(&ion_memcg_lru_mutex);
}

/*
 * Make sure @memcg has its lists in @lru: list_lru_add() needs them (6.12
 * oopses without), and only the slab allocator creates them, for the
 * cgroup an accounted lru-aware allocation is charged to (and ancestors).
 */
static int ion_memcg_lru_prepare(struct list_lru *lru,
				 struct mem_cgroup *memcg)
{
	struct mem_cgroup *old;
	void *obj;

	if (ion_memcg_is_root(memcg) ||
	    xa_load(&lru->xa, READ_ONCE(memcg->kmemcg_id)))
		return 0;
	/* Never the cgroup's OOM killer: without the lists, no pooling. */
	old = set_active_memcg(memcg);
	obj = kmem_cache_alloc_lru(ion_memcg_lru_cache, lru,
				   GFP_KERNEL | __GFP_ACCOUNT |
				   __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	set_active_memcg(old);
	if (!obj)
		return -ENOMEM;
	kmem_cache_free(ion_memcg_lru_cache, obj);
	/* Offlining moves objcg, then kmemcg_id: maybe the parent's only. */
	return xa_load(&lru->xa, READ_ONCE(memcg->kmemcg_id)) ? 0 : -ENOMEM;
}

/**
 * ion_memcg_pool_add() - pool a clean charged chunk for its cgroup
 * @mp:   the pool's lists
 * @page: the chunk's first page, charged (ion_memcg_page_charged())
 *
 * The chunk goes on the list of the cgroup folio_memcg() names (of the
 * chunk's page, or of its uncached block's first page): the one it is
 * charged to.  Only tasks of that cgroup take it again.
 *
 * Context: Process context; may sleep (the cgroup's first chunk).
 * Return: true when pooled; false when it cannot be (no per-memcg lists
 * on this kernel, the cgroup is going away, no memory), and the caller
 * must give the chunk back to the buddy allocator.
 */
bool ion_memcg_pool_add(struct ion_memcg_pool *mp, struct page *page)
{
	struct mem_cgroup *memcg;
	bool added = false;

	if (!ION_MEMCG_POOLS)
		return false;
	rcu_read_lock();
	memcg = ion_memcg_of_chunk(page);
	if (memcg && !css_tryget(&memcg->css))
		memcg = NULL;
	rcu_read_unlock();
	if (!memcg)
		return false;
	if (!ion_memcg_lru_prepare(&mp->lru, memcg)) {
		INIT_LIST_HEAD(&page->lru);
		added = ion_list_lru_add(&mp->lru, &page->lru,
					 page_to_nid(page), memcg);
	}
	css_put(&memcg->css);
	return added;
}

static enum lru_status ion_memcg_isolate_one(struct list_head *item,
					     struct list_lru_one *list,
					     spinlock_t *lock, void *arg)
{
	struct ion_memcg_walk *walk = arg;
	struct page *page = list_entry(item, struct page, lru);

	/*
	 * The rule of the DOC: a chunk is on its own cgroup's list.  Own page
	 * first, the blocks' xarray only for a block's chunk (its own page is
	 * uncharged): warm 8 MiB on/off 1.09 -> 1.04 in instructions.
	 */
	if (walk->memcg &&
	    folio_memcg(page_folio(page)) != walk->memcg &&
	    WARN_ON_ONCE(ion_memcg_of_chunk(page) != walk->memcg))
		return LRU_SKIP;
	list_lru_isolate_move(list, item, walk->chunks);
	return LRU_REMOVED;
}

/**
 * ion_memcg_pool_take() - clean chunks charged to the caller's cgroup
 * @mp:     the pool's lists
 * @n:      the most chunks to take
 * @chunks: where they go, linked by page->lru
 *
 * One walk takes all @n: its fixed cost (the lock, the cgroup's list in
 * the list_lru's xarray) was about 500 guest instructions a chunk when an
 * 8 MiB buffer took its 8 chunks one walk each (Documentation/bench.md,
 * "Memory cgroups").  A node with no chunk on any list is not walked.
 *
 * Context: Process context; takes a spinlock.
 * Return: the number of chunks taken from the list of the caller's memory
 * cgroup (its active one, else its own); 0 when it is empty or the caller
 * is in the root cgroup.
 */
unsigned long ion_memcg_pool_take(struct ion_memcg_pool *mp, unsigned long n,
				  struct list_head *chunks)
{
	struct ion_memcg_walk walk = { .chunks = chunks };
	unsigned long taken = 0, left = n;
	int nid;

	if (!ION_MEMCG_POOLS)
		return 0;
	rcu_read_lock();
	walk.memcg = ion_memcg_caller();
	if (walk.memcg && !ion_memcg_is_root(walk.memcg)) {
		for_each_node_state(nid, N_MEMORY) {
			if (list_lru_count_node(&mp->lru, nid))
				taken += list_lru_walk_one(&mp->lru, nid,
							   walk.memcg,
							   ion_memcg_isolate_one,
							   &walk, &left);
			if (!left)
				break;
		}
	}
	rcu_read_unlock();
	return taken;
}

/**
 * ion_memcg_shrinking_cgroup() - is this reclaim in one cgroup only?
 * @sc: the shrinker's control
 *
 * Context: Any context.
 * Return: true when @sc names a cgroup other than the root: only that
 * cgroup's chunks are to be counted and freed.
 */
bool ion_memcg_shrinking_cgroup(const struct shrink_control *sc)
{
	return sc->memcg && !ion_memcg_is_root(sc->memcg);
}

/**
 * ion_memcg_pool_count() - chunks pooled for the cgroup of @sc
 * @mp: the pool's lists
 * @sc: the shrinker's control: its cgroup (the root's list, holding
 *	chunks reparented to the root, when it names the root or none)
 *
 * Context: Any context.
 * Return: the number of chunks, on every node.
 */
unsigned long ion_memcg_pool_count(struct ion_memcg_pool *mp,
				   const struct shrink_control *sc)
{
	unsigned long n = 0;
	int nid;

	for_each_node_state(nid, N_MEMORY)
		n += list_lru_count_one(&mp->lru, nid, sc->memcg);
	return n;
}

/**
 * ion_memcg_pool_isolate() - take chunks off for freeing
 * @mp:     the pool's lists
 * @sc:     the shrinker's control, whose cgroup's chunks are taken (as
 *	    ion_memcg_pool_count()); NULL: every cgroup's
 * @nr:     the most chunks to take
 * @chunks: where they go, linked by page->lru
 *
 * Context: Any context; takes a spinlock.
 * Return: the number of chunks taken off.
 */
unsigned long ion_memcg_pool_isolate(struct ion_memcg_pool *mp,
				     const struct shrink_control *sc,
				     unsigned long nr,
				     struct list_head *chunks)
{
	struct ion_memcg_walk walk = { .chunks = chunks };
	unsigned long taken = 0, left = nr;
	int nid;

	for_each_node_state(nid, N_MEMORY) {
		if (sc)
			taken += list_lru_walk_one(&mp->lru, nid, sc->memcg,
						   ion_memcg_isolate_one,
						   &walk, &left);
		else
			taken += list_lru_walk_node(&mp->lru, nid,
						    ion_memcg_isolate_one,
						    &walk, &left);
		if (!left)
			break;
	}
	return taken;
}
