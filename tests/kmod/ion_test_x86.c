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
 * ion_test_kernel_map_kb() - size of a page's linear-map entry
 * @page: a lowmem page
 *
 * Context: Any.
 * Return: 4, 2048 or 1048576 (KiB), 0 when not mapped.
 */
u32 ion_test_kernel_map_kb(struct page *page)
{
	unsigned int level;

	if (!lookup_address((unsigned long)page_address(page), &level))
		return 0;
	return page_level_size(level) >> 10;
}

/**
 * ion_test_prot_bits() - cache bits of a user PTE's protection
 * @prot: the protection of a present user PTE
 *
 * Context: Any.
 * Return: its _PAGE_PWT, _PAGE_PCD and _PAGE_PAT bits.
 */
u64 ion_test_prot_bits(pgprot_t prot)
{
	return pgprot_val(prot) & (_PAGE_PWT | _PAGE_PCD | _PAGE_PAT);
}
