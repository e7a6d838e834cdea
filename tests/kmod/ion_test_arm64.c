// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion_test: arm64 page-table memory attributes, to show what a mapping
 * really got.  A stage-1 descriptor names its memory type by an index
 * (AttrIndx, bits 4:2) into MAIR_EL1; the attribute byte there is the type
 * itself (0xff Normal write-back, 0xf0 Normal write-back tagged (MTE),
 * 0x44 Normal non-cacheable, 0x00/0x04 Device).  Both are reported, as
 * AttrIndx | MAIR byte << 8.  Built on arm64 only (Kbuild).
 *
 * The kernel's page tables are walked from TTBR1_EL1 (swapper_pg_dir and
 * init_mm are not exported); the walk uses the kernel's own accessors, so
 * it follows the folded levels the running kernel chose (4 or 5 levels
 * with 52-bit VA) and stops at block mappings.
 */
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <asm/sysreg.h>

#include "ion_test_priv.h"

/* The kernel's top-level table, from TTBR1_EL1's base address field. */
static pgd_t *ion_test_kernel_pgd(void)
{
	u64 ttbr = read_sysreg(ttbr1_el1);
	phys_addr_t base;

#if IS_ENABLED(CONFIG_ARM64_PA_BITS_52)
	/* PA[51:48] live in TTBR bits 5:2 (phys_to_ttbr()). */
	base = (ttbr & GENMASK_ULL(47, 6)) | ((ttbr & GENMASK_ULL(5, 2)) << 46);
#else
	base = ttbr & GENMASK_ULL(47, 1);
#endif
	return (pgd_t *)__va(base);
}

/* The descriptor (block or page) that maps kernel address @addr. */
static int ion_test_kernel_desc(unsigned long addr, u64 *desc)
{
	pgd_t *pgdp = pgd_offset_pgd(ion_test_kernel_pgd(), addr);
	p4d_t *p4dp;
	pud_t *pudp, pud;
	pmd_t *pmdp, pmd;
	pte_t pte;

	if (pgd_none(READ_ONCE(*pgdp)))
		return -ENOENT;
	p4dp = p4d_offset(pgdp, addr);
	if (p4d_none(READ_ONCE(*p4dp)))
		return -ENOENT;
	pudp = pud_offset(p4dp, addr);
	pud = READ_ONCE(*pudp);
	if (pud_none(pud))
		return -ENOENT;
	if (pud_leaf(pud)) {
		*desc = pud_val(pud);
		return 0;
	}
	pmdp = pmd_offset(pudp, addr);
	pmd = READ_ONCE(*pmdp);
	if (pmd_none(pmd))
		return -ENOENT;
	if (pmd_leaf(pmd)) {
		*desc = pmd_val(pmd);
		return 0;
	}
	pte = READ_ONCE(*pte_offset_kernel(pmdp, addr));
	if (!pte_valid(pte))
		return -ENOENT;
	*desc = pte_val(pte);
	return 0;
}

/* AttrIndx of @desc and the MAIR_EL1 byte it selects. */
static u64 ion_test_attr_bits(u64 desc)
{
	u64 idx = (desc & PTE_ATTRINDX_MASK) >> 2;
	u64 mair = read_sysreg(mair_el1);

	return idx | ((mair >> (idx * 8)) & 0xff) << 8;
}

/**
 * ion_test_kernel_attr() - memory type of a page's linear-map descriptor
 * @page: a page of RAM
 * @bits: out: AttrIndx | MAIR attribute byte << 8
 *
 * Context: Any.
 * Return: 0, or -ENOENT when the page is not mapped in the linear map.
 */
int ion_test_kernel_attr(struct page *page, u64 *bits)
{
	u64 desc;
	int ret;

	ret = ion_test_kernel_desc((unsigned long)page_address(page), &desc);
	if (!ret)
		*bits = ion_test_attr_bits(desc);
	return ret;
}

/**
 * ion_test_kernel_map_kb() - size of a page's linear-map entry
 * @page: a page of RAM
 *
 * Not reported on arm64 (its linear map never changes attributes).
 *
 * Context: Any.
 * Return: 0.
 */
u32 ion_test_kernel_map_kb(struct page *page)
{
	return 0;
}

/**
 * ion_test_prot_bits() - memory type of a user PTE's protection
 * @prot: the protection of a present user PTE
 *
 * Context: Any.
 * Return: as ion_test_kernel_attr()'s bits.
 */
u64 ion_test_prot_bits(pgprot_t prot)
{
	return ion_test_attr_bits(pgprot_val(prot));
}
