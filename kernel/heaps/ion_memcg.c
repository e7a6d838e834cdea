// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: charging the RAM heaps' pages to memory cgroups; the
 * per-memcg lists of the pools' charged chunks are in ion_memcg_lru.c.
 * Nearly a leaf (see ion_memcg.h).
 */
#include <linux/cgroup.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/moduleparam.h>
#include <linux/page_counter.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>

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
 * memory.stat until they are freed.  At the cap a freed chunk takes the
 * place of cached pooled chunks its owner could not reuse (the shared
 * pools' for a charged chunk, other cgroups' for any; then its owner's
 * own of other orders: its cgroup's, or the shared ones for an uncharged
 * chunk) once they have been pooled
 * pool_displace_ms (DOC: free policy), so a cgroup that went idle does
 * not keep the others from pooling.  The
 * pools' shrinker is memcg-aware: reclaim in a cgroup (its memory.max,
 * or a write to its memory.reclaim) gives that cgroup's pooled chunks
 * back to the buddy allocator, and their charge with them; global
 * reclaim reaches every cgroup's lists but those it protects (below
 * memory.min, or memory.low on its first pass: pooled chunks count as the
 * cgroup's usage there), drop_caches every one.  Chunks still
 * waiting for the zeroing worker (a few milliseconds after their free,
 * longer when the CPUs are busy: it runs in SCHED_IDLE) are on no
 * cgroup's list yet: reclaim in a cgroup does not reach them (global
 * reclaim does), nor can another owner's free take their place.  So a
 * charged allocation that finds no chunk of its cgroup pooled while its
 * cgroup or an ancestor is at memory.max gives that cgroup's waiting
 * chunks (and those of the cgroups below it) back to the buddy allocator
 * itself, uncharging them (an uncached one goes back to its block, on
 * x86, whose charge goes with its last chunk), rather than wait for the
 * worker (ion_pool_zero_release_limited(), counted in
 * pool_limit_freed_bytes).  Only ion's allocations do: a page fault or a
 * slab allocation of the cgroup's tasks at memory.max reclaims without
 * them, and while the worker is starved of CPU that reclaim can fail and
 * OOM-kill in the cgroup with its freed chunks still charged (a gap: the
 * kernel offers modules no hook there; making waiting chunks reachable
 * needs them on the cgroup's own lists before they are zeroed).
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
 * ion_memcg_chunk_reusable() - could a task take @page from a pool again?
 * @page: a chunk's first page
 *
 * Uncharged chunks go to the shared pools, charged ones to their cgroup's
 * list; but a chunk charged to the root cgroup (reparented there when
 * its cgroup and every ancestor were removed) is on the root's list,
 * which no allocation takes from.
 *
 * Context: Any context.
 * Return: false for a chunk charged to the root cgroup.
 */
bool ion_memcg_chunk_reusable(struct page *page)
{
	struct mem_cgroup *memcg;
	bool reusable;

	rcu_read_lock();
	memcg = ion_memcg_of_chunk(page);
	reusable = !memcg || !ion_memcg_is_root(memcg);
	rcu_read_unlock();
	return reusable;
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
 * Return: true when the caller may take only pooled chunks charged to its
 * own cgroup, and no helpers may allocate for it.
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
 * ion_memcg_limiting_id() - which cgroup would @npages more take past
 *			     memory.max?
 * @npages: the pages the caller is about to charge
 *
 * Its memory.max or an ancestor's, read without locks: the first of them,
 * from the caller's own cgroup (its active one, else its own) up.
 *
 * Context: Process context.
 * Return: that cgroup's cgroup_id(), or 0 when @npages more take none
 * past its memory.max.
 */
u64 ion_memcg_limiting_id(unsigned long npages)
{
	struct mem_cgroup *memcg;
	u64 id = 0;

	rcu_read_lock();
	memcg = ion_memcg_limiting(npages);
	if (memcg)
		id = cgroup_id(memcg->css.cgroup);
	rcu_read_unlock();
	return id;
}

/* Is @memcg the cgroup of cgroup_id() @id or below it?  Under RCU. */
static bool ion_memcg_within(struct mem_cgroup *memcg, u64 id)
{
	for (; memcg; memcg = parent_mem_cgroup(memcg))
		if (cgroup_id(memcg->css.cgroup) == id)
			return true;
	return false;
}

/**
 * ion_memcg_split_limited() - the chunks of a cgroup at its memory.max
 * @chunks:  @n lists of chunks linked by page->lru
 * @limited: @n lists: where those of @chunks[i] charged to the cgroup of
 *	     @id or to a cgroup below it go
 * @n:	     how many lists
 * @id:	     the cgroup_id() ion_memcg_limiting_id() gave
 *
 * Context: Any context.
 */
void ion_memcg_split_limited(struct list_head *chunks,
			     struct list_head *limited, unsigned int n, u64 id)
{
	struct page *page, *tmp;
	unsigned int i;

	rcu_read_lock();
	for (i = 0; i < n; i++) {
		list_for_each_entry_safe(page, tmp, &chunks[i], lru) {
			if (ion_memcg_within(ion_memcg_of_chunk(page), id))
				list_move_tail(&page->lru, &limited[i]);
		}
	}
	rcu_read_unlock();
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
