/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion_test: what the files of the test module share.
 */
#ifndef _ION_TEST_PRIV_H
#define _ION_TEST_PRIV_H

#include <linux/kconfig.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/types.h>

#include "ion_test.h"
#include "ion_test_compat.h"

struct device;
struct dma_buf;
struct dma_buf_attachment;
struct ion_client;
struct ion_handle;

/**
 * struct ion_test_slot_data - one import
 * @mode:	ION_TEST_MODE_*
 * @size:	buffer size in bytes
 * @handle:	client mode: the client's handle
 * @cpu:	client mode: the handle's sg table of the buffer (ion_sg_table)
 * @copy:	client mode: private copy of the CPU sg table, mapped for edu
 *		when @mapped is set
 * @dmabuf:	dma-buf mode: the reference from dma_buf_get()
 * @attach:	dma-buf mode: edu's attachment, or NULL
 * @probe:	PROBE_EDU mode: the probe device's attachment; NOMASK mode:
 *		the mask-less device's (never mapped)
 * @dma_sgt:	the mapping for edu (&@copy or the attachment's), or NULL
 * @dma_dev:	the device @dma_sgt is mapped for (edu, or the probe
 *		device in PROBE mode), or NULL
 * @mapped:	@dma_sgt is set
 *
 * Owned by its file's slot array, under the file's lock.
 */
struct ion_test_slot_data {
	u32 mode;
	size_t size;
	struct ion_handle *handle;
	struct sg_table *cpu;
	struct sg_table copy;
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attach;
	struct dma_buf_attachment *probe;
	struct sg_table *dma_sgt;
	struct device *dma_dev;
	bool mapped;
};

/**
 * struct ion_test_file - one open /dev/ion_test
 * @lock:	 protects @slots and @frag (one ioctl at a time per file)
 * @node:	 in the list of open files (ion_test_main.c), for edu's remove
 * @client:	 the file's ion kernel client, for its whole life
 * @slots:	 imports, NULL when free
 * @frag:	 blocks held by ION_TEST_IOC_FRAGMENT (linked by page->lru,
 *		 each block's order in page_private)
 * @frag_held:	 pages in them
 */
struct ion_test_file {
	struct mutex lock; /* see the kernel-doc above */
	struct list_head node;
	struct ion_client *client;
	struct ion_test_slot_data *slots[ION_TEST_MAX_SLOTS];
	struct list_head frag;
	unsigned long frag_held;
};

/* ion_test_main.c */
size_t ion_test_sgt_size(struct sg_table *sgt);

/* ion_test_import.c: imports by slot */
struct ion_test_slot_data *ion_test_slot(struct ion_test_file *tf, u32 slot);
long ion_test_ioc_import(struct ion_test_file *tf, void __user *uarg);
long ion_test_ioc_release(struct ion_test_file *tf, void __user *uarg);
void ion_test_slot_unmap(struct ion_test_slot_data *s);
void ion_test_slot_free(struct ion_test_file *tf, struct ion_test_slot_data *s);

/* ion_test_dma.c: commands */
long ion_test_ioc_info(struct ion_test_file *tf, void __user *uarg);
long ion_test_ioc_dma(struct ion_test_file *tf, void __user *uarg);
long ion_test_ioc_attr(struct ion_test_file *tf, void __user *uarg);
long ion_test_ioc_phys_attr(struct ion_test_file *tf, void __user *uarg);

/* ion_test_kapi.c: every call of <linux/ion.h> */
long ion_test_ioc_kapi(struct ion_test_file *tf, void __user *uarg);

/* ion_test_main.c: a device reaching all memory, for DMA mapping tests */
struct device *ion_test_probe_device(void);

/* ion_test_main.c: a device with no DMA mask, for CPU-only importers */
struct device *ion_test_nomask_device(void);

/* ion_test_main.c: every file's mappings for @dev undone (its remove) */
void ion_test_unmap_device(struct device *dev);

/* ion_test_frag.c: fragmenting free memory */
long ion_test_ioc_fragment(struct ion_test_file *tf, void __user *uarg);
void ion_test_unfragment(struct ion_test_file *tf);

/* ion_test_edu.c: the edu PCI device */
int ion_test_edu_register(void);
void ion_test_edu_unregister(void);
struct device *ion_test_edu_device(void);
bool ion_test_edu_iommu(void);
bool ion_test_edu_coherent(void);
int ion_test_edu_iommu_group(void);
unsigned int ion_test_edu_dma_bits(void);
int ion_test_edu_xfer(dma_addr_t ram, u32 dev_off, u32 len, bool to_ram);

/* ion_test_zero.c: page clears of a process (the zero_watch parameter) */
void ion_test_zero_exit(void);

/*
 * ion_test_x86.c, ion_test_arm64.c: page-table attributes, and
 * ion_test_attr.c on top of them (else stubs)
 */
#if IS_ENABLED(CONFIG_X86) || IS_ENABLED(CONFIG_ARM64)
#define ION_TEST_HAVE_ATTR	1
int ion_test_kernel_attr(struct page *page, u64 *bits);
u32 ion_test_kernel_map_kb(struct page *page);
u64 ion_test_prot_bits(pgprot_t prot);
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

static inline u32 ion_test_kernel_map_kb(struct page *page)
{
	return 0;
}
#endif

#endif /* _ION_TEST_PRIV_H */
