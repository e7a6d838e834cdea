/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: charging the RAM heaps' pages to memory cgroups
 * (ion_memcg.c, built with CONFIG_MEMCG).  A leaf: it calls no other
 * part of ion.
 */
#ifndef _ION_MEMCG_H
#define _ION_MEMCG_H

#include <linux/gfp.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/types.h>

#include "ion_compat.h"

#ifdef CONFIG_MEMCG
gfp_t ion_memcg_gfp(void);
bool ion_memcg_caller_charged(void);

/**
 * ion_memcg_page_charged() - is @page charged to a memory cgroup?
 * @page: the first page of a chunk the heap allocated
 *
 * Context: Any context.
 * Return: true when the chunk is charged (it must go back to the buddy
 * allocator when freed, never to a pool).
 */
static inline bool ion_memcg_page_charged(struct page *page)
{
	return folio_memcg_charged(page_folio(page));
}
#else
static inline gfp_t ion_memcg_gfp(void)
{
	return 0;
}

static inline bool ion_memcg_caller_charged(void)
{
	return false;
}

static inline bool ion_memcg_page_charged(struct page *page)
{
	return false;
}
#endif

#endif /* _ION_MEMCG_H */
