/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion: the one place for differences between the kernels ion builds for.
 *
 * ion builds against Debian's 6.1, 6.12 and the newest backports kernel.
 * Each block below gives the older kernels what ion uses of the newer ones
 * under the newer name, so the rest of the code is written once, against
 * the newest API.  The version boundaries are where mainline changed; only
 * the kernels named above are built and tested.
 */
#ifndef _ION_COMPAT_H
#define _ION_COMPAT_H

#include <linux/version.h>
#include <linux/export.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/swap.h>

/* 6.2: a class's devnode() gets a const device; 6.4: classes are const. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
#define ION_DEVNODE_CONST
#else
#define ION_DEVNODE_CONST const
#endif
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 4, 0)
#define ION_CLASS_CONST
#else
#define ION_CLASS_CONST const
#endif

/*
 * 6.4 made MAX_ORDER the largest order (it was one past it), 6.8 renamed
 * it MAX_PAGE_ORDER.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 4, 0)
#define MAX_PAGE_ORDER	(MAX_ORDER - 1)
#elif LINUX_VERSION_CODE < KERNEL_VERSION(6, 8, 0)
#define MAX_PAGE_ORDER	MAX_ORDER
#endif

/* 6.3 made a VMA's flags changeable only through vm_flags_set(). */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/* 6.3 renamed memcg_kmem_enabled(); 6.12 added folio_memcg_charged(). */
#ifdef CONFIG_MEMCG
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
static inline bool memcg_kmem_online(void)
{
	return memcg_kmem_enabled();
}
#endif
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
static inline bool folio_memcg_charged(struct folio *folio)
{
	return READ_ONCE(folio->memcg_data) != 0;
}
#endif
#endif

/*
 * 6.8 gave list_lru_add() and list_lru_del() the memory cgroup to file an
 * item under (before, they derived it from a slab object's address, which
 * a struct page is not): without it there are no per-memcg pools, and a
 * charged chunk goes back to the buddy allocator when freed.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 8, 0)
#define ION_MEMCG_POOLS	0
#define ION_LRU_NEXT_LIST	LRU_SKIP	/* no LRU_STOP; never walked */
static inline bool ion_list_lru_add(struct list_lru *lru,
				    struct list_head *item, int nid,
				    struct mem_cgroup *memcg)
{
	return false;
}
#else
#define ION_MEMCG_POOLS	1
#define ion_list_lru_add	list_lru_add
/* Ends the walk of one cgroup's list; list_lru_walk_node() goes on. */
#define ION_LRU_NEXT_LIST	LRU_STOP
#endif

/*
 * 6.5 added mm_account_reclaimed_pages() for pages freed outside the LRUs
 * during reclaim; before, a shrinker added them to the reclaim state's
 * reclaimed_slab itself, as the slab allocator did.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
static inline void mm_account_reclaimed_pages(unsigned long pages)
{
	if (current->reclaim_state)
		current->reclaim_state->reclaimed_slab += pages;
}
#endif

/*
 * 6.7: shrinkers are allocated by the shrinker core (shrinker_alloc(),
 * shrinker_register(), shrinker_free()) and carry private_data.  Before,
 * the caller embedded one and named it at registration.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)
struct ion_compat_shrinker {
	struct shrinker shrinker;
	void *private_data;
	bool registered;
	char name[32];
};

#define ion_shrinker_data(s) \
	(container_of(s, struct ion_compat_shrinker, shrinker)->private_data)

static inline struct shrinker *shrinker_alloc(unsigned int flags,
					      const char *fmt,
					      const char *arg)
{
	struct ion_compat_shrinker *cs = kzalloc(sizeof(*cs), GFP_KERNEL);

	if (!cs)
		return NULL;
	cs->shrinker.flags = flags;
	snprintf(cs->name, sizeof(cs->name), fmt, arg);
	return &cs->shrinker;
}

/*
 * register_shrinker() allocates, and may fail where 6.7's cannot (its
 * shrinker_alloc() did): the pools then go unshrunk, so say so.
 */
static inline void shrinker_register(struct shrinker *s)
{
	struct ion_compat_shrinker *cs =
		container_of(s, struct ion_compat_shrinker, shrinker);

	cs->registered = !register_shrinker(s, "%s", cs->name);
	if (!cs->registered)
		pr_warn("ion: %s: no shrinker, reclaim will not shrink the pools\n",
			cs->name);
}

static inline void shrinker_free(struct shrinker *s)
{
	struct ion_compat_shrinker *cs;

	if (!s)
		return;
	cs = container_of(s, struct ion_compat_shrinker, shrinker);
	if (cs->registered)
		unregister_shrinker(s);
	kfree(cs);
}
#else
#define ion_shrinker_data(s)	((s)->private_data)
#endif

/*
 * 6.2: an mm's RSS counters became per-CPU counters.  add_mm_counter()
 * would also fire the rss_stat tracepoint, whose helper is not exported;
 * the counter itself is what the OOM killer and /proc read.
 */
static inline void ion_mm_counter_add(struct mm_struct *mm, int member,
				      long pages)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
	atomic_long_add(pages, &mm->rss_stat.count[member]);
#else
	percpu_counter_add(&mm->rss_stat[member], pages);
#endif
}

/*
 * 7.x: is_cow_mapping(vm_flags) gave way to vma_is_cow_mapping(vma).
 * Both mean a private mapping that may become writable; so does this.
 */
static inline bool ion_vma_is_cow(const struct vm_area_struct *vma)
{
	return (vma->vm_flags & (VM_SHARED | VM_MAYWRITE)) == VM_MAYWRITE;
}

/*
 * Before 6.16, remap_pfn_range() of a whole shared VMA on x86 marks it
 * VM_PAT, and when it then fails before it wrote the VMA's first PTE (its
 * page table could not be allocated), its undo looks the PAT reservation
 * up from that PTE, finds none and WARNs (get_pat_info()).  6.16 keeps
 * the tracked range instead (pfnmap_track()).  So on the older kernels
 * the page table of the VMA's first page is allocated first, by
 * inserting the zero page's pfn there (read-only, the VMA's protections
 * but write, encryption bit and all: another thread of the process may
 * store through it before the zap, and must not write the zero page) and
 * zapping it again, which leaves the table; when that allocation fails,
 * the mmap fails here, cleanly.
 * Seen under failslab on the debug kernel, whose lockdep makes each page
 * table's lock a slab allocation.  A private writable VMA is left alone:
 * the undo reads its pfn from vm_pgoff, and it cannot take single pfns.
 * For VMAs about to be remapped only: it makes the VMA VM_PFNMAP.
 */
#if defined(CONFIG_X86_PAT) && LINUX_VERSION_CODE < KERNEL_VERSION(6, 16, 0)
static inline int ion_pfnmap_prepare(struct vm_area_struct *vma)
{
	if (ion_vma_is_cow(vma))
		return 0;
	vm_flags_set(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP);
	if (vmf_insert_pfn_prot(vma, vma->vm_start, page_to_pfn(ZERO_PAGE(0)),
				vm_get_page_prot(vma->vm_flags & ~VM_WRITE)) !=
	    VM_FAULT_NOPAGE)
		return -ENOMEM;
	zap_vma_ptes(vma, vma->vm_start, PAGE_SIZE);
	return 0;
}
#else
static inline int ion_pfnmap_prepare(struct vm_area_struct *vma)
{
	return 0;
}
#endif

/* 6.11: reserve_mem= and its lookup; before, no region is ever found. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 11, 0)
#define ION_HAVE_RESERVE_MEM	0
static inline int reserve_mem_find_by_name(const char *name,
					   phys_addr_t *start,
					   phys_addr_t *size)
{
	return 0;
}
#else
#define ION_HAVE_RESERVE_MEM	1
#endif

/*
 * 6.13: list_lru walk callbacks lost their spinlock_t * argument (the
 * lock of the list walked, held around the call).  ion's callbacks keep
 * the older signature and never drop that lock themselves; on newer
 * kernels they are called through a trampoline, with NULL for it, which
 * drops it after an LRU_STOP (the walk leaves the list locked there since
 * 6.13).  Only the walks that take the lock without disabling interrupts
 * are routed.  The functions are defined before the macros that route
 * ion's calls to them.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
typedef enum lru_status (*ion_lru_walk_cb)(struct list_head *item,
					   struct list_lru_one *list,
					   spinlock_t *lock, void *arg);

struct ion_lru_walk {
	ion_lru_walk_cb isolate;
	void *arg;
};

static inline enum lru_status ion_lru_walk_call(struct list_head *item,
						struct list_lru_one *list,
						void *arg)
{
	struct ion_lru_walk *w = arg;
	enum lru_status ret = w->isolate(item, list, NULL, w->arg);

	/*
	 * The walk leaves a list at LRU_STOP without unlocking it (whatever
	 * list_lru.h says): a callback that stops drops the lock, as zswap's.
	 */
	if (ret == LRU_STOP)
		spin_unlock(&list->lock);
	return ret;
}

static inline unsigned long
ion_list_lru_walk_one(struct list_lru *lru, int nid, struct mem_cgroup *memcg,
		      ion_lru_walk_cb isolate, void *arg, unsigned long *nr)
{
	struct ion_lru_walk w = { .isolate = isolate, .arg = arg };

	return list_lru_walk_one(lru, nid, memcg, ion_lru_walk_call, &w, nr);
}

static inline unsigned long
ion_list_lru_walk_node(struct list_lru *lru, int nid, ion_lru_walk_cb isolate,
		       void *arg, unsigned long *nr)
{
	struct ion_lru_walk w = { .isolate = isolate, .arg = arg };

	return list_lru_walk_node(lru, nid, ion_lru_walk_call, &w, nr);
}

#define list_lru_walk_one	ion_list_lru_walk_one
#define list_lru_walk_node	ion_list_lru_walk_node
#endif

/*
 * 6.13: a symbol namespace is a string literal, MODULE_IMPORT_NS("DMA_BUF");
 * before, a bare identifier the macros stringified.  ion spells them the
 * old way (MODULE_IMPORT_NS(DMA_BUF), EXPORT_SYMBOL_NS_GPL(sym, ION)),
 * which these give back their old meaning on the newer kernels.  Modules
 * of other trees import ION with ION_MODULE_IMPORT_NS() of the public
 * headers instead, which needs neither spelling.  A file
 * that names a namespace includes this header (through ion_heap.h or
 * ion_test_compat.h) before it does.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#undef MODULE_IMPORT_NS
#define MODULE_IMPORT_NS(ns)	MODULE_INFO(import_ns, __stringify(ns))
#undef EXPORT_SYMBOL_NS_GPL
#define EXPORT_SYMBOL_NS_GPL(sym, ns) \
	__EXPORT_SYMBOL(sym, "GPL", __stringify(ns))
#endif

/*
 * 6.12: the DMA API calls dma-iommu directly, for a device whose
 * dma_iommu bit is set (use_dma_iommu()); before, dma-iommu was a
 * dma_map_ops like any other, so get_dma_ops() told alone.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
struct device;
static inline bool use_dma_iommu(struct device *dev)
{
	return false;
}
#else
#include <linux/device.h>
#include <linux/iommu-dma.h>
#endif

/*
 * 6.10: __assign_str() takes the source from the event's __string() and
 * no longer as a second argument.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 10, 0)
#define ion_trace_assign_str(dst, src)	__assign_str(dst, src)
#else
#define ion_trace_assign_str(dst, src)	__assign_str(dst)
#endif

/*
 * A mapped entry's DMA flags (SG_DMA_SWIOTLB from an IOMMU bouncing an
 * untrusted device, SG_DMA_BUS_ADDRESS), copied with the entry: a field
 * of CONFIG_NEED_SG_DMA_FLAGS from 6.5, of CONFIG_PCI_P2PDMA (the bus
 * address flag only, never set for RAM) before.
 */
static inline void ion_sg_dma_flags_copy(struct scatterlist *dst,
					 const struct scatterlist *src)
{
#ifdef CONFIG_NEED_SG_DMA_FLAGS
	dst->dma_flags = src->dma_flags;
#endif
}

#endif /* _ION_COMPAT_H */
