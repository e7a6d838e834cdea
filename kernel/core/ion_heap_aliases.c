// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: mainline's dma-heap names (/dev/dma_heap/system, linux,cma, ...)
 * for ion's heaps, where the running kernel has no heap of that name.
 */
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/namei.h>
#include <linux/path.h>
#include <linux/printk.h>
#include <linux/string.h>

#include "ion_priv.h"

/**
 * DOC: mainline names
 *
 * Programs written for mainline's DMA-BUF heaps (libcamera, codec
 * libraries, compositors) open fixed paths: /dev/dma_heap/system,
 * ``linux,cma`` or ``reserved`` (the default CMA area, named after its
 * device tree node or, set up from the command line, "reserved"),
 * ``default_cma_region`` (since 6.17), and Android's ``system-uncached``.
 * Where the running kernel has no heap of such a name, ion offers one of
 * its heaps under it, with the same file operations as its ion-* nodes
 * (ion_heap_nodes.c): the same ABI, mode, client and accounting.
 *
 * Each heap names the aliases it serves (&ion_heap.aliases): the system
 * heap ``system`` and ``system-uncached``, the DMA heap ``linux,cma`` and
 * ``default_cma_region``, the carveout ``reserved``; the core names none.
 * The first heap to claim a name gets it.
 *
 * A name is taken when /sys/class/dma_heap/<name> (mainline's heap
 * class; sysfs is authoritative) or /dev/dma_heap/<name> (anything else
 * that made a node there) exists, looked up with kern_path() when the
 * heap registers, in the mount namespace of whoever loads ion.ko.  A
 * taken name is left alone: ion never shadows, replaces or removes
 * another node.  In 6.12 mainline's heaps can only be built in (their
 * Kconfig options are bool, dma_heap_add() is not exported): they
 * register at boot, before any module loads, so the check sees them.
 * Should a later kernel register a heap of an alias's name after ion
 * loaded, it gets its sysfs device, but devtmpfs keeps ion's node under
 * that name until ion's heap goes (devtmpfs never replaces a node, nor
 * removes one of another device number).  Where
 * /sys and /dev are not mounted when ion loads, the check sees nothing;
 * devtmpfs still refuses to replace an existing node, so the alias then
 * has no node, and mainline's stays.
 *
 * The aliases are devices of class ion_dma_heap like the ion-* nodes
 * (udev rules tell them from mainline's by SUBSYSTEM), with the minors
 * after theirs.  They come and go with their heap.  The module parameter
 * ``mainline_names`` (default Y) turns them off.
 */

static bool mainline_names = true;
module_param(mainline_names, bool, 0444);
MODULE_PARM_DESC(mainline_names,
		 "offer ion's heaps under mainline's dma-heap names the kernel lacks (default Y)");

/*
 * The alias nodes: slot i has minor ION_HEAP_NODE_MINORS + i.  Under
 * &ion_device.heap_lock.
 */
static struct {
	struct ion_heap_node *node;
	struct ion_heap *heap;
	const char *name;
} ion_heap_alias_slots[ION_HEAP_ALIAS_MINORS];

/* Has one of ion's heaps an alias named @name? */
static bool ion_heap_alias_ours(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ion_heap_alias_slots); i++)
		if (ion_heap_alias_slots[i].node &&
		    !strcmp(ion_heap_alias_slots[i].name, name))
			return true;
	return false;
}

/* A free slot, or ARRAY_SIZE(ion_heap_alias_slots). */
static unsigned int ion_heap_alias_free_slot(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ion_heap_alias_slots); i++)
		if (!ion_heap_alias_slots[i].node)
			break;
	return i;
}

/*
 * Has the running kernel (or anyone else) a dma-heap node named @name?
 * Called under heap_lock: the last component is not followed (a symlink
 * there takes the name as well), so that no lookup leaves /sys and /dev
 * for a filesystem that could stall every allocation meanwhile.
 */
static bool ion_heap_alias_taken(const char *name)
{
	static const char *const where[] = {
		"/sys/class/dma_heap/%s",
		"/dev/dma_heap/%s",
	};
	char buf[64];
	struct path path;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(where); i++) {
		snprintf(buf, sizeof(buf), where[i], name);
		if (!kern_path(buf, 0, &path)) {
			path_put(&path);
			return true;
		}
	}
	return false;
}

/**
 * ion_heap_aliases_add() - create a heap's mainline-named nodes
 * @dev:  the device
 * @heap: the heap being registered, with its ion-* nodes
 *
 * Each name of @heap->aliases that neither another of ion's heaps nor the
 * kernel has gets a node.  An alias that cannot be created is reported and
 * left out; the heap still registers.
 *
 * Context: Process context; sleeps; &ion_device.heap_lock held for
 * writing.
 */
void ion_heap_aliases_add(struct ion_device *dev, struct ion_heap *heap)
{
	const struct ion_heap_alias *a;
	struct ion_heap_node *node;
	unsigned int slot;

	lockdep_assert_held_write(&dev->heap_lock);
	if (!mainline_names)
		return;
	for (a = heap->aliases; a && a->name; a++) {
		if (ion_heap_alias_ours(a->name))
			continue;
		if (ion_heap_alias_taken(a->name)) {
			pr_info("ion: /dev/dma_heap/%s exists, not offering %s there\n",
				a->name, heap->name);
			continue;
		}
		slot = ion_heap_alias_free_slot();
		if (slot == ARRAY_SIZE(ion_heap_alias_slots)) {
			pr_warn("ion: no minor left for /dev/dma_heap/%s\n",
				a->name);
			break;
		}
		node = ion_heap_node_create(heap, a->name,
					    a->uncached ? ION_HEAP_NODE_UNCACHED :
							  ION_HEAP_NODE_CACHED,
					    ION_HEAP_NODE_MINORS + slot);
		if (IS_ERR(node)) {
			pr_warn("ion: no /dev/dma_heap/%s for %s (%ld)\n",
				a->name, heap->name, PTR_ERR(node));
			continue;
		}
		ion_heap_alias_slots[slot].node = node;
		ion_heap_alias_slots[slot].heap = heap;
		ion_heap_alias_slots[slot].name = a->name;
	}
}

/**
 * ion_heap_aliases_remove() - remove a heap's mainline-named nodes
 * @dev:  the device
 * @heap: the heap being unregistered
 *
 * Files still open on them answer -ENODEV from then on.
 *
 * Context: Process context; sleeps; &ion_device.heap_lock held for
 * writing.
 */
void ion_heap_aliases_remove(struct ion_device *dev, struct ion_heap *heap)
{
	unsigned int i;

	lockdep_assert_held_write(&dev->heap_lock);
	for (i = 0; i < ARRAY_SIZE(ion_heap_alias_slots); i++) {
		if (ion_heap_alias_slots[i].heap != heap)
			continue;
		ion_heap_node_destroy(ion_heap_alias_slots[i].node);
		ion_heap_alias_slots[i].node = NULL;
		ion_heap_alias_slots[i].heap = NULL;
	}
}
