/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: charging the RAM heaps' pages to memory cgroups, and the
 * per-memcg lists of charged pooled chunks (ion_memcg.c and
 * ion_memcg_lru.c, built with CONFIG_MEMCG).  Nearly a leaf: it calls no
 * other part of ion but ion_cache_charge_page() (which page of a chunk
 * carries its charge: a block's first page for a chunk of x86's uncached
 * blocks); the page pools (ion_page_pool.c) keep their charged chunks
 * here.
 */
#ifndef _ION_MEMCG_H
#define _ION_MEMCG_H

#include <linux/gfp.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/types.h>

#include "ion_cache.h"
#include "ion_compat.h"

struct list_head;
struct shrinker;
struct shrink_control;

/**
 * struct ion_memcg_pool - charged chunks of one pool, per memory cgroup
 * @lru: the chunks, linked by page->lru, each on the list of the memory
 *	 cgroup it is charged to (the list_lru's own lock protects them)
 */
struct ion_memcg_pool {
	struct list_lru lru;
};

#ifdef CONFIG_MEMCG
/* root_mem_cgroup is not exported: the root is the one without a parent. */
static inline bool ion_memcg_is_root(struct mem_cgroup *memcg)
{
	return !memcg->css.parent;
}

/* The caller's memory cgroup: its active one, else its own.  Under RCU. */
static inline struct mem_cgroup *ion_memcg_caller(void)
{
	struct mem_cgroup *memcg = current->active_memcg;

	return memcg ? memcg : mem_cgroup_from_task(current);
}

/*
 * The cgroup a chunk is charged to: its own page's, or for a chunk of an
 * uncached block the block's first page's (ion_cache_charge_page()).
 * Under RCU.
 */
static inline struct mem_cgroup *ion_memcg_of_chunk(struct page *page)
{
	return folio_memcg(page_folio(ion_cache_charge_page(page)));
}

gfp_t ion_memcg_gfp(void);
bool ion_memcg_caller_charged(void);
u64 ion_memcg_limiting_id(unsigned long npages);
void ion_memcg_split_limited(struct list_head *chunks,
			     struct list_head *limited, unsigned int n, u64 id);
int ion_memcg_note_refusal(const char *heap, u64 size, int ret);
bool ion_memcg_caller_owns(struct page *page);
bool ion_memcg_chunk_reusable(struct page *page);

/**
 * ion_memcg_page_charged() - is @page charged to a memory cgroup?
 * @page: the first page of a chunk the heap allocated
 *
 * A chunk of an uncached block is charged when its block is
 * (ion_cache_charge_page()).
 *
 * Context: Any context.
 * Return: true when the chunk is charged (it may only be pooled for its
 * own cgroup, ion_memcg_pool_add()).
 */
static inline bool ion_memcg_page_charged(struct page *page)
{
	return folio_memcg_charged(page_folio(ion_cache_charge_page(page)));
}

/**
 * ion_memcg_pools_enabled() - can charged chunks be pooled at all?
 *
 * Context: Any context.
 * Return: false on kernels without per-memcg list_lru items (ion_compat.h).
 */
static inline bool ion_memcg_pools_enabled(void)
{
	return ION_MEMCG_POOLS;
}

int ion_memcg_pool_init(struct ion_memcg_pool *mp, struct shrinker *shrinker);
void ion_memcg_pool_destroy(struct ion_memcg_pool *mp);
bool ion_memcg_pool_add(struct ion_memcg_pool *mp, struct page *page);
unsigned long ion_memcg_pool_take(struct ion_memcg_pool *mp, unsigned long n,
				  struct list_head *chunks);
bool ion_memcg_shrinking_cgroup(const struct shrink_control *sc);
unsigned long ion_memcg_pool_count(struct ion_memcg_pool *mp,
				   const struct shrink_control *sc);
unsigned long ion_memcg_pool_isolate(struct ion_memcg_pool *mp,
				     const struct shrink_control *sc,
				     unsigned long nr,
				     struct list_head *chunks);
unsigned long ion_memcg_pool_isolate_others(struct ion_memcg_pool *mp,
					    struct page *page,
					    unsigned long nr,
					    unsigned long before,
					    struct list_head *chunks);
unsigned long ion_memcg_pool_isolate_own(struct ion_memcg_pool *mp,
					 struct page *page, unsigned long nr,
					 unsigned long before,
					 struct list_head *chunks);
#else
static inline gfp_t ion_memcg_gfp(void)
{
	return 0;
}

static inline bool ion_memcg_caller_charged(void)
{
	return false;
}

static inline u64 ion_memcg_limiting_id(unsigned long npages)
{
	return 0;
}

static inline void ion_memcg_split_limited(struct list_head *chunks,
					   struct list_head *limited,
					   unsigned int n, u64 id)
{
}

static inline int ion_memcg_note_refusal(const char *heap, u64 size, int ret)
{
	return ret;
}

static inline bool ion_memcg_page_charged(struct page *page)
{
	return false;
}

static inline bool ion_memcg_caller_owns(struct page *page)
{
	return false;
}

static inline bool ion_memcg_chunk_reusable(struct page *page)
{
	return true;
}

static inline bool ion_memcg_pools_enabled(void)
{
	return false;
}

static inline int ion_memcg_pool_init(struct ion_memcg_pool *mp,
				      struct shrinker *shrinker)
{
	return 0;
}

static inline void ion_memcg_pool_destroy(struct ion_memcg_pool *mp)
{
}

static inline bool ion_memcg_pool_add(struct ion_memcg_pool *mp,
				      struct page *page)
{
	return false;
}

static inline unsigned long ion_memcg_pool_take(struct ion_memcg_pool *mp,
						unsigned long n,
						struct list_head *chunks)
{
	return 0;
}

static inline bool ion_memcg_shrinking_cgroup(const struct shrink_control *sc)
{
	return false;
}

static inline unsigned long ion_memcg_pool_count(struct ion_memcg_pool *mp,
						 const struct shrink_control *sc)
{
	return 0;
}

static inline unsigned long
ion_memcg_pool_isolate(struct ion_memcg_pool *mp,
		       const struct shrink_control *sc, unsigned long nr,
		       struct list_head *chunks)
{
	return 0;
}

static inline unsigned long
ion_memcg_pool_isolate_others(struct ion_memcg_pool *mp, struct page *page,
			      unsigned long nr, unsigned long before,
			      struct list_head *chunks)
{
	return 0;
}

static inline unsigned long
ion_memcg_pool_isolate_own(struct ion_memcg_pool *mp, struct page *page,
			   unsigned long nr, unsigned long before,
			   struct list_head *chunks)
{
	return 0;
}
#endif

#endif /* _ION_MEMCG_H */
