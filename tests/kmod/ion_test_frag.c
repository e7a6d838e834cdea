// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion_test: ION_TEST_IOC_FRAGMENT, free memory without large blocks.
 *
 * A heap that builds buffers from large chunks must fall back to smaller
 * ones when the buddy allocator has no large block free; on a freshly
 * booted guest that never happens.  This command makes it happen, for the
 * tests of that fallback, without touching the heap: see the kernel-doc of
 * struct ion_test_fragment.
 */
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ion_test_compat.h"
#include "ion_test_priv.h"

/* Free blocks only: no reclaim, no compaction, no warning, no reserves. */
#define ION_TEST_FRAG_GFP	(__GFP_NOWARN | __GFP_NOMEMALLOC)
/*
 * The same, except that the last, failing, attempt reclaims once: the
 * allocator then drains the per-CPU free lists, where single pages wait
 * that could complete a large block (as the heap's own reclaiming
 * attempt would drain them later).  No I/O, no OOM killer.
 */
#define ION_TEST_FRAG_GFP_DRAIN	(ION_TEST_FRAG_GFP | __GFP_DIRECT_RECLAIM | \
				 __GFP_NORETRY)

/*
 * The bitmap of what was taken, asked for once free memory is down to the
 * min watermark: it may dip into the reserve below (__GFP_HIGH) and reclaim,
 * but must fail rather than wake the OOM killer, whose victim would be the
 * test rig.
 */
#define ION_TEST_FRAG_GFP_BITMAP (GFP_KERNEL | __GFP_ZERO | __GFP_HIGH | \
				  __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/* Is the buddy of @page (a block of @order) held as well? */
static bool ion_test_buddy_held(struct page *page, unsigned int order,
				const unsigned long *held, unsigned long base,
				unsigned long nbits)
{
	unsigned long idx = (page_to_pfn(page) >> order) ^ 1;

	return idx >= base && idx - base < nbits && test_bit(idx - base, held);
}

/**
 * ion_test_unfragment() - give back the blocks ION_TEST_IOC_FRAGMENT holds
 * @tf: the file
 *
 * Context: Process context; the file's lock held, or its release.
 */
void ion_test_unfragment(struct ion_test_file *tf)
{
	struct page *page, *tmp;
	unsigned int order;

	list_for_each_entry_safe(page, tmp, &tf->frag, lru) {
		list_del(&page->lru);
		order = page_private(page);
		set_page_private(page, 0);
		__free_pages(page, order);
	}
	tf->frag_held = 0;
}

/* Hold @page, a block of @order. */
static void ion_test_hold(struct ion_test_file *tf, struct page *page,
			  unsigned int order)
{
	set_page_private(page, order);
	list_add(&page->lru, &tf->frag);
	tf->frag_held += 1UL << order;
}

/*
 * Hold every free block of @order (and so of all larger orders) whole:
 * what the first pass left below the min watermark it stopped at, what
 * the per-CPU lists complete once drained, and CMA's.  While any large
 * block is free anywhere, even in CMA, the kernel rates a large request
 * as "would succeed" (fragmentation index -1000), and direct compaction
 * runs whatever vm.extfrag_threshold says: it moves movable pages into
 * CMA and frees a large block for the heap.
 */
static void ion_test_hold_rest(struct ion_test_file *tf, unsigned int order)
{
	static const gfp_t gfp[] = {
		ION_TEST_FRAG_GFP_DRAIN,
		/* Then CMA's free blocks, which only movable requests get. */
		ION_TEST_FRAG_GFP_DRAIN | __GFP_MOVABLE,
	};
	struct page *page;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(gfp); i++) {
		while ((page = alloc_pages(gfp[i], order))) {
			ion_test_hold(tf, page, order);
			cond_resched();
		}
	}
}

/*
 * Take every free block of @order (down to the min watermark), then give
 * back the upper one of each pair of buddies taken, so that the lower one
 * of every pair stays held; then hold whole what is left of @order + 1.
 */
static int ion_test_fragment(struct ion_test_file *tf, unsigned int order)
{
	unsigned long min_idx = ULONG_MAX, max_idx = 0, nbits, *held;
	struct page *page, *tmp;
	LIST_HEAD(all);
	int ret = 0;

	/* Pages waiting for RCU (slabs of dentries, inodes) freed first. */
	rcu_barrier();
	while ((page = alloc_pages(ION_TEST_FRAG_GFP, order))) {
		unsigned long idx = page_to_pfn(page) >> order;

		list_add(&page->lru, &all);
		min_idx = min(min_idx, idx);
		max_idx = max(max_idx, idx);
		cond_resched();
	}
	if (list_empty(&all))
		return -ENOMEM;
	nbits = max_idx - min_idx + 1;
	held = kvmalloc_array(BITS_TO_LONGS(nbits), sizeof(*held),
			      ION_TEST_FRAG_GFP_BITMAP);
	if (!held) {
		ret = -ENOMEM;
		goto out_free;
	}
	list_for_each_entry(page, &all, lru)
		set_bit((page_to_pfn(page) >> order) - min_idx, held);
	list_for_each_entry_safe(page, tmp, &all, lru) {
		list_del(&page->lru);
		if ((page_to_pfn(page) >> order) & 1 &&
		    ion_test_buddy_held(page, order, held, min_idx, nbits))
			__free_pages(page, order);
		else
			ion_test_hold(tf, page, order);
		cond_resched();
	}
	kvfree(held);
	rcu_barrier();
	ion_test_hold_rest(tf, order + 1);
	return 0;

out_free:
	list_for_each_entry_safe(page, tmp, &all, lru) {
		list_del(&page->lru);
		__free_pages(page, order);
	}
	return ret;
}

/**
 * ion_test_ioc_fragment() - ION_TEST_IOC_FRAGMENT
 * @tf:	  the file
 * @uarg: struct ion_test_fragment
 *
 * Context: Process context; the file's lock held.
 * Return: 0 or -errno, see struct ion_test_fragment.
 */
long ion_test_ioc_fragment(struct ion_test_file *tf, void __user *uarg)
{
	struct ion_test_fragment arg;
	int ret = 0;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.reserved || arg.order > MAX_PAGE_ORDER)
		return -EINVAL;
	if (arg.order && !list_empty(&tf->frag))
		return -EINVAL;
	if (arg.order)
		ret = ion_test_fragment(tf, arg.order - 1);
	else
		ion_test_unfragment(tf);
	if (ret)
		return ret;
	arg.held = tf->frag_held;
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}
