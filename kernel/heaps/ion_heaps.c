// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the heaps built into ion.ko, in priority order (placeholder until
 * the heaps land).
 */
#include "ion_heap.h"

int ion_heaps_init(void)
{
	return 0;
}

void ion_heaps_exit(void)
{
}
