// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: mainline's dma-heap names (/dev/dma_heap/system, linux,cma, ...)
 * for ion's heaps, where the running kernel has no heap of that name.
 */
#include <linux/build_bug.h>
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
 * ``system`` is the system heap with cached buffers, ``system-uncached``
 * the same heap uncached, ``linux,cma`` and ``default_cma_region`` the
 * DMA heap (CMA where the kernel has it), ``reserved`` the carveout heap
 * while it is registered (ion_heap_aliases[]).
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

/**
 * struct ion_heap_alias - one mainline name
 * @name:  the node name in /dev/dma_heap/
 * @heap:  the ion heap that backs it (ION_*_HEAP_NAME)
 * @which: ION_HEAP_NODE_CACHED or ION_HEAP_NODE_UNCACHED
 */
struct ion_heap_alias {
	const char *name;
	const char *heap;
	unsigned int which;
};

static const struct ion_heap_alias ion_heap_aliases[] = {
	{ "system", ION_SYSTEM_HEAP_NAME, ION_HEAP_NODE_CACHED },
	{ "system-uncached", ION_SYSTEM_HEAP_NAME, ION_HEAP_NODE_UNCACHED },
	{ "linux,cma", ION_DMA_HEAP_NAME, ION_HEAP_NODE_CACHED },
	{ "default_cma_region", ION_DMA_HEAP_NAME, ION_HEAP_NODE_CACHED },
	{ "reserved", ION_CARVEOUT_HEAP_NAME, ION_HEAP_NODE_CACHED },
};

static_assert(ARRAY_SIZE(ion_heap_aliases) <= ION_HEAP_ALIAS_MINORS);

/* The node of each alias, or NULL; under &ion_device.heap_lock. */
static struct ion_heap_node *ion_heap_alias_nodes[ARRAY_SIZE(ion_heap_aliases)];

/* Has the running kernel (or anyone else) a dma-heap node named @name? */
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
		if (!kern_path(buf, LOOKUP_FOLLOW, &path)) {
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
 * Each name of ion_heap_aliases[] backed by @heap and not taken gets a
 * node.  An alias that cannot be created is reported and left out; the
 * heap still registers.
 *
 * Context: Process context; sleeps; &ion_device.heap_lock held for
 * writing.
 */
void ion_heap_aliases_add(struct ion_device *dev, struct ion_heap *heap)
{
	const struct ion_heap_alias *a;
	struct ion_heap_node *node;
	unsigned int i;

	lockdep_assert_held_write(&dev->heap_lock);
	if (!mainline_names)
		return;
	for (i = 0; i < ARRAY_SIZE(ion_heap_aliases); i++) {
		a = &ion_heap_aliases[i];
		if (strcmp(a->heap, heap->name) || ion_heap_alias_nodes[i])
			continue;
		if (ion_heap_alias_taken(a->name)) {
			pr_info("ion: /dev/dma_heap/%s exists, not offering %s there\n",
				a->name, heap->name);
			continue;
		}
		node = ion_heap_node_create(heap, a->name, a->which,
					    ION_HEAP_NODE_MINORS + i);
		if (IS_ERR(node)) {
			pr_warn("ion: no /dev/dma_heap/%s for %s (%ld)\n",
				a->name, heap->name, PTR_ERR(node));
			continue;
		}
		ion_heap_alias_nodes[i] = node;
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
	for (i = 0; i < ARRAY_SIZE(ion_heap_aliases); i++) {
		if (!ion_heap_alias_nodes[i] ||
		    strcmp(ion_heap_aliases[i].heap, heap->name))
			continue;
		ion_heap_node_destroy(ion_heap_alias_nodes[i]);
		ion_heap_alias_nodes[i] = NULL;
	}
}
