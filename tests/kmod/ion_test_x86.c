// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion_test: x86 page-table cache attributes, to show what a mapping really
 * got (PAT keeps RAM types in page flags, which pat_memtype_list does not
 * show).  Built on x86 only (Kbuild).
 */
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <asm/pgtable_types.h>

#include "ion_test_priv.h"

/**
 * ion_test_kernel_attr() - cache bits of a page's linear-map PTE
 * @page: a lowmem page
 * @bits: out: _PAGE_PWT | _PAGE_PCD | _PAGE_PAT (or _PAGE_PAT_LARGE) bits
 *
 * Context: Any.
 * Return: 0, or -ENOENT when the page is not mapped in the linear map.
 */
int ion_test_kernel_attr(struct page *page, u64 *bits)
{
	unsigned int level;
	pte_t *pte;
	u64 flags, mask;

	pte = lookup_address((unsigned long)page_address(page), &level);
	if (!pte || !pte_present(*pte))
		return -ENOENT;
	flags = pte_flags(*pte);
	mask = _PAGE_PWT | _PAGE_PCD;
	mask |= level == PG_LEVEL_4K ? _PAGE_PAT : _PAGE_PAT_LARGE;
	*bits = flags & mask;
	/* Report large-page PAT in the 4K position, as for user PTEs. */
	if (level != PG_LEVEL_4K && (*bits & _PAGE_PAT_LARGE))
		*bits = (*bits & ~_PAGE_PAT_LARGE) | _PAGE_PAT;
	return 0;
}

/**
 * ion_test_user_attr() - cache bits of the PTE mapping a user address
 * @uaddr: address in the current process, in a PFN mapping
 * @bits:  out: as for ion_test_kernel_attr()
 *
 * Context: Process context; takes the mmap lock.
 * Return: 0, -EFAULT when nothing is mapped there, -EINVAL for a mapping
 * that is not a PFN mapping.
 */
int ion_test_user_attr(unsigned long uaddr, u64 *bits)
{
	struct follow_pfnmap_args args = { .address = uaddr };
	struct mm_struct *mm = current->mm;
	int ret;

	mmap_read_lock(mm);
	args.vma = vma_lookup(mm, uaddr);
	if (!args.vma) {
		ret = -EFAULT;
	} else if (!(args.vma->vm_flags & (VM_IO | VM_PFNMAP))) {
		ret = -EINVAL;
	} else {
		ret = follow_pfnmap_start(&args);
		if (!ret) {
			*bits = pgprot_val(args.pgprot) &
				(_PAGE_PWT | _PAGE_PCD | _PAGE_PAT);
			follow_pfnmap_end(&args);
		}
	}
	mmap_read_unlock(mm);
	return ret;
}
