/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion_test: kernel differences the test modules meet beyond ion's own
 * (kernel/include/ion_compat.h, included here): newer names given to
 * older kernels, as there.
 */
#ifndef _ION_TEST_COMPAT_H
#define _ION_TEST_COMPAT_H

#include <linux/err.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <linux/version.h>

#include "../../kernel/include/ion_compat.h"

/* 6.11: one BAR mapped in one call. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 11, 0)
static inline void __iomem *pcim_iomap_region(struct pci_dev *pdev, int bar,
					      const char *name)
{
	int ret = pcim_iomap_regions(pdev, BIT(bar), name);

	return ret ? IOMEM_ERR_PTR(ret) : pcim_iomap_table(pdev)[bar];
}
#endif

/* 6.12: follow_pfnmap_start() replaced follow_pte() for PFN mappings. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
struct follow_pfnmap_args {
	struct vm_area_struct *vma;
	unsigned long address;
	pgprot_t pgprot;
	pte_t *ptep;
	spinlock_t *ptl;	/* the PTE lock follow_pte() took */
};

static inline int follow_pfnmap_start(struct follow_pfnmap_args *args)
{
	int ret = follow_pte(args->vma->vm_mm, args->address, &args->ptep,
			     &args->ptl);

	if (!ret)
		args->pgprot = pte_pgprot(ptep_get(args->ptep));
	return ret;
}

static inline void follow_pfnmap_end(struct follow_pfnmap_args *args)
{
	pte_unmap_unlock(args->ptep, args->ptl);
}
#endif

/*
 * Newer kernels (7.3) have no nth_page(): the struct pages of a range
 * handed out together are contiguous, so the n-th is page + n.
 */
#ifndef nth_page
#define nth_page(page, n)	((page) + (n))
#endif

#endif /* _ION_TEST_COMPAT_H */
