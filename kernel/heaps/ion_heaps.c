// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the heaps built into ion.ko, in priority order.
 *
 * The core orders registered heaps by id, highest first, whatever order
 * they register in (ion_heap.c); this table lists them in that order too,
 * so that registration and unwinding read the same way as allocation
 * tries them.  A heap whose init answers -ENODEV has nothing to offer on
 * this machine (no carveout region, say) and is
 * skipped with one info line; any other error unwinds what was registered.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/printk.h>

#include "ion_heap.h"
#include "ion_heaps.h"

struct ion_heap_entry {
	const char *name;
	int (*init)(void);
	void (*exit)(void);
};

static const struct ion_heap_entry ion_heap_table[] = {
	{ "dma", ion_dma_heap_init, ion_dma_heap_exit },
	{ "auto", ion_auto_heap_init, ion_auto_heap_exit },
	{ "carveout", ion_carveout_heap_init, ion_carveout_heap_exit },
	{ "system_contig", ion_system_contig_heap_init,
	  ion_system_contig_heap_exit },
	{ "system", ion_system_heap_init, ion_system_heap_exit },
};

/* Which entries of ion_heap_table are registered; written at init only. */
static bool ion_heap_up[ARRAY_SIZE(ion_heap_table)];

/**
 * ion_heaps_init() - register the built-in heaps
 *
 * Context: Process context (module init), after the core is up.
 * Return: 0 (even if every heap was skipped), or the first -errno other
 * than -ENODEV, with the heaps registered so far removed again.
 */
int ion_heaps_init(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(ion_heap_table); i++) {
		ret = ion_heap_table[i].init();
		if (ret == -ENODEV) {
			pr_info("ion: %s heap: nothing to offer, not registered\n",
				ion_heap_table[i].name);
			continue;
		}
		if (ret) {
			pr_err("ion: %s heap: init failed (%d)\n",
			       ion_heap_table[i].name, ret);
			ion_heaps_exit();
			return ret;
		}
		ion_heap_up[i] = true;
	}
	return 0;
}

/**
 * ion_heaps_exit() - unregister the built-in heaps, in reverse order
 *
 * Context: Process context (module exit, or a failed ion_heaps_init()).
 */
void ion_heaps_exit(void)
{
	unsigned int i = ARRAY_SIZE(ion_heap_table);

	while (i--) {
		if (!ion_heap_up[i])
			continue;
		ion_heap_table[i].exit();
		ion_heap_up[i] = false;
	}
}
