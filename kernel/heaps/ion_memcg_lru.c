// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: the per-memcg lists of the pools' charged chunks (DOC:
 * memory cgroups, in ion_memcg.c, says the rules).  A leaf beside
 * ion_memcg.c: the page pools (ion_page_pool.c, ion_pool_shrink.c) keep
 * their charged chunks here.
 */
#include <linux/cgroup.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/shrinker.h>
#include <linux/slab.h>

#include "ion_memcg.h"

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
 *	    (under rcu_read_lock()); NULL: not checked.  For a displacement
 *	    of other cgroups' chunks: the cgroup whose chunks are left alone
 *	    (NULL: none)
 * @want:   for a displacement of other cgroups' chunks, the chunks still
 *	    to take
 * @nr_to_walk: for such a displacement, the walk's budget: set to 0 once
 *	    @want is, so that the walk stops
 * @before: for a displacement, the latest pooling time (jiffies) of a
 *	    chunk it may take
 * @aged:   a walk of one cgroup's list that takes only chunks pooled at or
 *	    before @before (the list is oldest first: it stops at the first
 *	    younger one)
 */
struct ion_memcg_walk {
	struct list_head *chunks;
	struct mem_cgroup *memcg;
	unsigned long want;
	unsigned long *nr_to_walk;
	unsigned long before;
	bool aged;
};

/*
 * Most lists a displacement's walk leaves on a node at the first chunk it
 * does not take (the owner's own, and any chunk pooled too recently),
 * beyond the chunks it takes: each costs one step of its budget.
 */
#define ION_MEMCG_PASS_LISTS	64

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
 * charged to.  Only tasks of that cgroup take it again.  While it is
 * listed, its page_private is the time it was pooled at, in jiffies
 * (0 again once taken off); a cgroup's list is in that order, oldest
 * first (but after the kernel moved a removed child's chunks to it).
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
		set_page_private(page, jiffies);
		/*
		 * Not for a cgroup going offline: once its lists moved to the
		 * parent, an add files the chunk there but sets the shrinker
		 * bit of the dead cgroup, which reclaim never visits.  Its
		 * offlining waits for a grace period after it is marked dying.
		 */
		rcu_read_lock();
		if (!css_is_dying(&memcg->css))
			added = ion_list_lru_add(&mp->lru, &page->lru,
						 page_to_nid(page), memcg);
		rcu_read_unlock();
		if (!added)
			set_page_private(page, 0);
	}
	css_put(&memcg->css);
	return added;
}

/*
 * The cgroup of a chunk on the lists (ion_memcg_of_chunk()), its own
 * page's first: the blocks' xarray is looked up only for a chunk of an
 * uncached block, whose own page is uncharged (warm 8 MiB on/off 1.09 ->
 * 1.04 in instructions when the take stopped looking up every chunk).
 * Under RCU.
 */
static struct mem_cgroup *ion_memcg_of_listed(struct page *page)
{
	struct mem_cgroup *memcg = folio_memcg(page_folio(page));

	return memcg ? memcg : ion_memcg_of_chunk(page);
}

static enum lru_status ion_memcg_isolate_one(struct list_head *item,
					     struct list_lru_one *list,
					     spinlock_t *lock, void *arg)
{
	struct ion_memcg_walk *walk = arg;
	struct page *page = list_entry(item, struct page, lru);

	/*
	 * The rule of the DOC: a chunk is on its own cgroup's list.  But a
	 * displacement's cgroup (the freed chunk's, not the caller's) may be
	 * going offline meanwhile, its chunks moving to its parent's list:
	 * not ours to take.
	 */
	if (walk->memcg && ion_memcg_of_listed(page) != walk->memcg) {
		WARN_ON_ONCE(!walk->aged);
		return walk->aged ? ION_LRU_NEXT_LIST : LRU_SKIP;
	}
	if (walk->aged && time_after(page_private(page), walk->before))
		return ION_LRU_NEXT_LIST;	/* and so is the rest */
	list_lru_isolate_move(list, item, walk->chunks);
	set_page_private(page, 0);
	return LRU_REMOVED;
}

/*
 * Up to @nr chunks off @walk->memcg's lists, oldest first, on every node
 * that has any chunk listed: on each, a walk's budget is what is still
 * wanted (an aged walk that stops at a young chunk has taken all it
 * could there).  Under RCU.
 */
static unsigned long ion_memcg_take_own(struct ion_memcg_pool *mp,
					struct ion_memcg_walk *walk,
					unsigned long nr)
{
	unsigned long taken = 0, left;
	int nid;

	for_each_node_state(nid, N_MEMORY) {
		left = nr - taken;
		if (list_lru_count_node(&mp->lru, nid))
			taken += list_lru_walk_one(&mp->lru, nid, walk->memcg,
						   ion_memcg_isolate_one,
						   walk, &left);
		if (taken >= nr)
			break;
	}
	return taken;
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
	unsigned long taken = 0;

	if (!ION_MEMCG_POOLS)
		return 0;
	rcu_read_lock();
	walk.memcg = ion_memcg_caller();
	if (walk.memcg && !ion_memcg_is_root(walk.memcg))
		taken = ion_memcg_take_own(mp, &walk, n);
	rcu_read_unlock();
	return taken;
}

/**
 * ion_memcg_pool_isolate_own() - take off idle chunks of @page's own cgroup
 * @mp:     the lists of a pool of another order than @page's
 * @page:   a charged chunk about to be pooled
 * @nr:     the most chunks to take
 * @before: the latest pooling time (jiffies) of a chunk to take
 * @chunks: where they go, linked by page->lru
 *
 * For a displacement at the pools' cap: the chunks of the cgroup @page
 * is charged to, pooled at or before @before, the oldest first: sizes
 * that cgroup has not been asking for again (DOC: free policy, "Caps").
 * None for an uncharged @page, one charged to the root cgroup, or one
 * whose cgroup is being removed (its chunks are moving to its parent).
 * The walk of a node's list stops at its first chunk pooled after
 * @before: after a removed child's chunks were moved to the head of its
 * parent's list, older chunks behind a younger one of the child's wait
 * for it to age.
 *
 * Context: Any context; takes a spinlock.
 * Return: the number of chunks taken off.
 */
unsigned long ion_memcg_pool_isolate_own(struct ion_memcg_pool *mp,
					 struct page *page, unsigned long nr,
					 unsigned long before,
					 struct list_head *chunks)
{
	struct ion_memcg_walk walk = {
		.chunks = chunks, .before = before, .aged = true,
	};
	unsigned long taken = 0;

	if (!ION_MEMCG_POOLS || !nr)
		return 0;
	rcu_read_lock();
	walk.memcg = ion_memcg_of_chunk(page);
	/* Not dying now: its offlining waits for this RCU read section. */
	if (walk.memcg && !ion_memcg_is_root(walk.memcg) &&
	    !css_is_dying(&walk.memcg->css))
		taken = ion_memcg_take_own(mp, &walk, nr);
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

static enum lru_status ion_memcg_isolate_other(struct list_head *item,
					       struct list_lru_one *list,
					       spinlock_t *lock, void *arg)
{
	struct ion_memcg_walk *walk = arg;
	struct page *page = list_entry(item, struct page, lru);

	/*
	 * The DOC's rule: every chunk on this list is the owner's.  On to the
	 * next cgroup's list, however many the owner has pooled; and so too
	 * when this one was pooled too recently, as the rest of its list.
	 */
	if (ion_memcg_of_listed(page) == walk->memcg ||
	    time_after(page_private(page), walk->before))
		return ION_LRU_NEXT_LIST;
	list_lru_isolate_move(list, item, walk->chunks);
	set_page_private(page, 0);
	if (!--walk->want)
		*walk->nr_to_walk = 0;
	return LRU_REMOVED;
}

/**
 * ion_memcg_pool_isolate_others() - take off chunks @page's owner cannot use
 * @mp:     the pool's lists
 * @page:   a chunk about to be pooled (charged or not): the chunks of the
 *	    cgroup it is charged to are left alone
 * @nr:     the most chunks to take
 * @before: the latest pooling time (jiffies) of a chunk to take
 * @chunks: where they go, linked by page->lru
 *
 * For a displacement at the pools' cap: the chunks of every cgroup but
 * @page's (of every cgroup when @page is uncharged; those reparented to
 * the root cgroup included) pooled at or before @before; the cgroups in
 * the list_lru's order (of their kmemcg ids), each one's oldest first.
 * On each node the walk leaves the owner's list at its first chunk, and
 * any list at its first chunk pooled after @before, so it looks at most
 * at @nr + ION_MEMCG_PASS_LISTS chunks a node (the list_lru's lock taken
 * for one cgroup's list at a time); a node that holds only the owner's
 * chunks is not walked.  A cgroup whose list comes after more than
 * ION_MEMCG_PASS_LISTS lists so left is not reached: with that many
 * cgroups freeing at the cap, its chunks wait for reclaim.
 *
 * Context: Any context; takes a spinlock.
 * Return: the number of chunks taken off.
 */
unsigned long ion_memcg_pool_isolate_others(struct ion_memcg_pool *mp,
					    struct page *page,
					    unsigned long nr,
					    unsigned long before,
					    struct list_head *chunks)
{
	unsigned long own = 0, walk_nr;
	struct ion_memcg_walk walk = {
		.chunks = chunks, .want = nr, .nr_to_walk = &walk_nr,
		.before = before,
	};
	int nid;

	if (!nr)
		return 0;
	rcu_read_lock();
	walk.memcg = ion_memcg_of_chunk(page);
	for_each_node_state(nid, N_MEMORY) {
		if (walk.memcg)
			own = list_lru_count_one(&mp->lru, nid, walk.memcg);
		if (list_lru_count_node(&mp->lru, nid) <= own)
			continue;
		walk_nr = walk.want + ION_MEMCG_PASS_LISTS;
		list_lru_walk_node(&mp->lru, nid, ion_memcg_isolate_other,
				   &walk, &walk_nr);
		if (!walk.want)
			break;
	}
	rcu_read_unlock();
	return nr - walk.want;
}
