/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion: fault injection into ion's fallible steps (core/ion_fail.c).
 * kernel/core/ includes this header, the chunk pools
 * (heaps/ion_chunk_pool.c) for the refill step and the per-architecture
 * cache files for the uncached step.
 */
#ifndef _ION_FAIL_H
#define _ION_FAIL_H

#include <linux/compiler.h>
#include <linux/jump_label.h>

struct ion_device;

/* The steps that can be made to fail, one debugfs directory each. */
enum ion_fail_step {
	ION_FAIL_ALLOC,		/* a heap's allocate op */
	ION_FAIL_EXPORT,	/* exporting a new buffer's dma-buf */
	ION_FAIL_ATTACH,	/* the dma-buf attach op */
	ION_FAIL_MAP,		/* the dma-buf map op */
	ION_FAIL_KAPI,		/* ion_alloc() of the kernel API */
	ION_FAIL_REFILL,	/* a heap's chunk from the page allocator */
	ION_FAIL_UNCACHED,	/* making pages write-combined (x86: part way) */
	ION_FAIL_CONTIG,	/* the auto heap's one contiguous range */
	ION_FAIL_NR
};

DECLARE_STATIC_KEY_FALSE(ion_fail_key);

int __ion_fail(enum ion_fail_step step);
void ion_fail_debugfs_init(struct ion_device *dev);

/**
 * ion_fail() - should this call of @step fail on purpose?
 * @step: the step about to run
 *
 * Context: Any context.
 * Return: -ENOMEM when a knob of /sys/kernel/debug/ion/fail/ says this
 * call fails, else 0 (always 0, at the cost of one patched-out jump,
 * while no knob is set).
 */
static inline int ion_fail(enum ion_fail_step step)
{
	if (static_branch_unlikely(&ion_fail_key))
		return __ion_fail(step);
	return 0;
}

#endif /* _ION_FAIL_H */
