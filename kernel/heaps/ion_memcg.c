// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion heaps: charging the RAM heaps' pages to memory cgroups.
 */
#include <linux/memcontrol.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>

#include "ion_memcg.h"

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
 * cgroup's own memory has been reclaimed: the heaps ask with
 * __GFP_RETRY_MAYFAIL or __GFP_NORETRY, so the cgroup's OOM killer is not
 * invoked and the allocation fails with -ENOMEM; no task outside the
 * cgroup is affected.
 *
 * The kernel charges pages only as they are allocated, and keeps the
 * charge until they are freed, so the page pools would make one cgroup
 * pay for another's buffers.  The rule is therefore: a charged chunk is
 * never pooled; it goes back to the buddy allocator when its buffer is
 * freed, and the charge with it.  A task whose pages would be charged
 * (one in a cgroup other than the root) never takes from the pools, and
 * gets no helper kworkers (ion_parallel.c), whose pages would be charged
 * to no one.  The pools thus serve the root cgroup (and everyone with
 * memcg_charge off); a task in a cgroup pays a cold allocation every
 * time, which is the price of its memory being its own.
 */

static bool memcg_charge = true;
module_param(memcg_charge, bool, 0644);
MODULE_PARM_DESC(memcg_charge,
		 "charge system and system-contig heap buffers to the allocating task's memory cgroup (default Y)");

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
	memcg = current->active_memcg;
	if (!memcg)
		memcg = mem_cgroup_from_task(current);
	charged = memcg && memcg->css.parent;
	rcu_read_unlock();
	return charged;
}
