/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: the heaps built into ion.ko, as ion_heaps.c lists them.
 *
 * Each init returns 0 once its heap is registered, -ENODEV when the
 * platform has nothing for it (ion_heaps_init() then skips it), or another
 * -errno.  Each exit undoes a successful init.
 */
#ifndef _ION_HEAPS_H
#define _ION_HEAPS_H

#include <linux/types.h>

int ion_system_heap_init(void);
void ion_system_heap_exit(void);
int ion_system_contig_heap_init(void);
void ion_system_contig_heap_exit(void);
int ion_carveout_heap_init(void);
void ion_carveout_heap_exit(void);
int ion_dma_heap_init(void);
void ion_dma_heap_exit(void);
int ion_auto_heap_init(void);
void ion_auto_heap_exit(void);

/* ion_reserve.c: the memory a heap leaves to the rest of the system. */
bool ion_heap_leaves_reserve(unsigned long want,
			     unsigned long (*pooled)(bool cached), bool cached);

#endif /* _ION_HEAPS_H */
