/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion_test: what the files of the test module share.
 */
#ifndef _ION_TEST_PRIV_H
#define _ION_TEST_PRIV_H

#include <linux/kconfig.h>
#include <linux/mm_types.h>
#include <linux/types.h>

struct device;

/* ion_test_edu.c: the edu PCI device */
int ion_test_edu_register(void);
void ion_test_edu_unregister(void);
struct device *ion_test_edu_device(void);
bool ion_test_edu_iommu(void);
unsigned int ion_test_edu_dma_bits(void);
int ion_test_edu_xfer(dma_addr_t ram, u32 dev_off, u32 len, bool to_ram);

/* ion_test_x86.c: page-table attributes (stubs elsewhere) */
#if IS_ENABLED(CONFIG_X86)
#define ION_TEST_HAVE_ATTR	1
int ion_test_kernel_attr(struct page *page, u64 *bits);
int ion_test_user_attr(unsigned long uaddr, u64 *bits);
#else
#define ION_TEST_HAVE_ATTR	0
static inline int ion_test_kernel_attr(struct page *page, u64 *bits)
{
	return -EOPNOTSUPP;
}

static inline int ion_test_user_attr(unsigned long uaddr, u64 *bits)
{
	return -EOPNOTSUPP;
}
#endif

#endif /* _ION_TEST_PRIV_H */
