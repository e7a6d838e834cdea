// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion_test: the page-table attributes of a user mapping, on the
 * architectures whose PTE bits ion_test_x86.c and ion_test_arm64.c read
 * (ion_test_prot_bits()).
 */
#include <linux/mm.h>
#include <linux/pgtable.h>

#include "ion_test_compat.h"
#include "ion_test_priv.h"

/**
 * ion_test_user_attr() - cache attributes of the PTE mapping a user address
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
			*bits = ion_test_prot_bits(args.pgprot);
			follow_pfnmap_end(&args);
		}
	}
	mmap_read_unlock(mm);
	return ret;
}
