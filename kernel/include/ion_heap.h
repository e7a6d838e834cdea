/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion: the heap API (<linux/ion_heap.h>) and the heaps built into ion.ko.
 */
#ifndef _ION_HEAP_H
#define _ION_HEAP_H

#include <linux/ion_heap.h>

#include "ion_compat.h"

/*
 * Heaps built into ion.ko.  Each returns 0 when registered, -ENODEV when
 * the platform offers nothing for it (the heap is then skipped), or another
 * -errno.  ion_heaps_init() calls them in priority order (highest id first)
 * and ion_heaps_exit() undoes them in reverse.
 */
int ion_heaps_init(void);
void ion_heaps_exit(void);

#endif /* _ION_HEAP_H */
