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

struct ion_buffer;
struct ion_heap;

int ion_system_heap_init(void);
void ion_system_heap_exit(void);
int ion_system_contig_heap_init(void);
void ion_system_contig_heap_exit(void);
int ion_carveout_heap_init(void);
void ion_carveout_heap_exit(void);
int ion_dma_heap_init(void);
void ion_dma_heap_exit(void);

/*
 * The allocate and free ops of the heaps above, named for the core's
 * ion_heap_call() only (ion_priv.h): with retpolines an indirect call is
 * dear, so the core calls these directly when a heap's op is one of them.
 * Everything else reaches them through the heaps' ops tables.
 */
int ion_system_allocate(struct ion_heap *heap, struct ion_buffer *buffer,
			unsigned long len, unsigned long align,
			unsigned long flags);
void ion_system_free(struct ion_buffer *buffer);
int ion_contig_allocate(struct ion_heap *heap, struct ion_buffer *buffer,
			unsigned long len, unsigned long align,
			unsigned long flags);
void ion_contig_free(struct ion_buffer *buffer);
int ion_carveout_allocate(struct ion_heap *heap, struct ion_buffer *buffer,
			  unsigned long len, unsigned long align,
			  unsigned long flags);
void ion_carveout_free(struct ion_buffer *buffer);
int ion_dma_allocate(struct ion_heap *heap, struct ion_buffer *buffer,
		     unsigned long len, unsigned long align, unsigned long flags);
void ion_dma_free(struct ion_buffer *buffer);

#endif /* _ION_HEAPS_H */
