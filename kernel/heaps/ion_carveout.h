/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion heaps: the carveout heap's region from memmap= (ion_carveout_memmap.c),
 * for ion_carveout_heap.c alone.
 */
#ifndef _ION_CARVEOUT_H
#define _ION_CARVEOUT_H

#include <linux/errno.h>
#include <linux/printk.h>
#include <linux/types.h>

#if IS_ENABLED(CONFIG_ZONE_DEVICE)
int ion_carveout_memmap_map(const char *spec, phys_addr_t *base,
			    phys_addr_t *size);
void ion_carveout_memmap_unmap(void);
void ion_carveout_memmap_abandon(void);
#else
static inline int ion_carveout_memmap_map(const char *spec, phys_addr_t *base,
					  phys_addr_t *size)
{
	pr_warn("ion: carveout_memmap=%s: this kernel has no ZONE_DEVICE to give the range pages\n",
		spec);
	return -ENODEV;
}

static inline void ion_carveout_memmap_unmap(void)
{
}

static inline void ion_carveout_memmap_abandon(void)
{
}
#endif

#endif /* _ION_CARVEOUT_H */
