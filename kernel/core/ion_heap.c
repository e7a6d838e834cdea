// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the heap registry - registration, priority order, queries and
 * custom commands.
 */
#include <linux/debugfs.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "ion_priv.h"

/**
 * DOC: heap priority
 *
 * The device keeps its heaps sorted by heap id, highest first, whatever
 * order they register in.  That one order serves everything: a mask with
 * several heaps is tried in it (dma 4, auto 3, carveout 2, system_contig
 * 1, system 0 - the 4.12+ rule, and the article's "in the order added" when
 * heaps register highest id first), ION_IOC_HEAP_QUERY lists heaps in it,
 * and ION_IOC_CUSTOM offers a command to the heaps in it.
 */

/* Why @heap cannot be registered, or NULL. */
static const char *ion_heap_check(const struct ion_heap *heap)
{
	const struct ion_heap_ops *ops = heap->ops;

	if (!heap->name || !heap->name[0] ||
	    strnlen(heap->name, ION_MAX_HEAP_NAME) >= ION_MAX_HEAP_NAME ||
	    strchr(heap->name, '/'))
		return "bad name";
	if (heap->id >= ION_NUM_HEAP_IDS)
		return "bad id";
	if (!ops || !ops->allocate || !ops->free)
		return "allocate and free are required";
	if (!ops->map_dma != !ops->unmap_dma)
		return "map_dma and unmap_dma go together";
	if (!ops->map_kernel != !ops->unmap_kernel)
		return "map_kernel and unmap_kernel go together";
	if (!ops->attach != !ops->detach)
		return "attach and detach go together";
	if (ops->move && (!ops->attach || !ops->map_dma || ops->map_user))
		return "move needs attach and map_dma, and no map_user";
	return NULL;
}

/* Insert @heap into the sorted list, or refuse a duplicate id or name. */
static int ion_heap_insert(struct ion_device *dev, struct ion_heap *heap)
{
	struct list_head *pos = &dev->heaps;
	struct ion_heap *other;

	lockdep_assert_held_write(&dev->heap_lock);
	list_for_each_entry(other, &dev->heaps, node) {
		if (other->id == heap->id || !strcmp(other->name, heap->name))
			return -EINVAL;
	}
	list_for_each_entry(other, &dev->heaps, node) {
		if (other->id < heap->id) {
			pos = &other->node;
			break;
		}
	}
	list_add_tail(&heap->node, pos);
	return 0;
}

/* Does a removed @heap's core state live on (ion_heap_core_get())? */
static bool ion_heap_busy(struct ion_device *dev, struct ion_heap *heap)
{
	bool busy;

	spin_lock(&dev->stats_lock);
	busy = heap->core;
	spin_unlock(&dev->stats_lock);
	return busy;
}

/* The last reference went: the heap is removed and nothing of it lives. */
static void ion_heap_core_release(struct kref *ref)
{
	struct ion_heap_core *core = container_of(ref, struct ion_heap_core,
						  ref);

	spin_lock(&ion_dev.stats_lock);
	core->heap->core = NULL;
	spin_unlock(&ion_dev.stats_lock);
	clear_bit(core->heap->id, ion_dev.held_ids);
	WARN_ON_ONCE(!list_empty(&core->buffers));
	ion_quota_heap_exit(core);
	kfree(core);
}

/**
 * ion_heap_core_get() - keep the core's state of @heap
 * @heap: a registered heap
 *
 * For a buffer backed by @heap, an open debugfs file of @heap, or a
 * custom_ioctl op running without the heap lock: the state (accounting,
 * buffer list, quota counters) stays until ion_heap_core_put(), even if
 * the heap is removed meanwhile.  The registration's reference is held
 * (@heap is registered), so the count never rises from zero.
 *
 * Context: Any context; @heap registered (&ion_device.heap_lock held,
 * or the heap's debugfs file being opened, which removal waits for).
 */
void ion_heap_core_get(struct ion_heap *heap)
{
	kref_get(&heap->core->ref);
}

/**
 * ion_heap_core_put() - drop a reference from ion_heap_core_get()
 * @heap: the heap, registered or removed
 *
 * Frees the core's state of a removed heap with its last reference.
 *
 * Context: Process context, &ion_device.stats_lock not held (the release
 * takes it).
 */
void ion_heap_core_put(struct ion_heap *heap)
{
	kref_put(&heap->core->ref, ion_heap_core_release);
}

/**
 * ion_device_add_heap() - register a heap
 * @heap: the heap, with name, type, id and ops set
 *
 * The heap is listed in priority order (highest id first) and gets its
 * debugfs file and its /dev/dma_heap/ nodes.  It must stay registered
 * while buffers from it live; set @heap->owner when the heap lives in
 * another module than ion.ko.
 *
 * Context: Process context; sleeps.
 * Return: 0, -EINVAL for a bad name, id or ops or a name or id already
 * registered, -EBUSY when @heap, or another heap of the same id, was
 * removed and something from before still holds its core state (a
 * buffer, an open debugfs file, a running custom op), -EEXIST when its
 * dma-heap node name is taken, -ENOMEM, or another -errno from creating
 * the nodes.
 */
int ion_device_add_heap(struct ion_heap *heap)
{
	struct ion_device *dev = &ion_dev;
	struct ion_heap_core *core;
	const char *why;
	int ret;

	why = heap ? ion_heap_check(heap) : "no heap";
	if (why) {
		pr_warn("ion: heap %s refused: %s\n",
			heap && heap->name ? heap->name : "(null)", why);
		return -EINVAL;
	}
	if (ion_heap_busy(dev, heap)) {
		pr_warn("ion: heap %s refused: buffers of its removal live\n",
			heap->name);
		return -EBUSY;
	}
	core = kzalloc(sizeof(*core), GFP_KERNEL);
	if (!core)
		return -ENOMEM;
	INIT_LIST_HEAD(&core->buffers);
	xa_init(&core->uids);
	kref_init(&core->ref);
	core->heap = heap;

	percpu_down_write(&dev->heap_lock);
	ret = test_bit(heap->id, dev->held_ids) ? -EBUSY :
	      ion_heap_insert(dev, heap);
	if (ret) {
		percpu_up_write(&dev->heap_lock);
		pr_warn("ion: heap %s refused: id %u or name taken%s\n",
			heap->name, heap->id, ret == -EBUSY ?
			" (buffers of a removed heap with that id live)" : "");
		kfree(core);
		return ret;
	}
	heap->core = core;
	ret = ion_heap_nodes_add(dev, heap);
	if (ret) {
		list_del(&heap->node);
		heap->core = NULL;
		percpu_up_write(&dev->heap_lock);
		pr_warn("ion: heap %s refused: no dma-heap nodes (%d)\n",
			heap->name, ret);
		kfree(core);
		return ret;
	}
	spin_lock(&dev->stats_lock);
	dev->heap_count++;
	spin_unlock(&dev->stats_lock);
	ion_debugfs_add_heap(dev, heap);
	percpu_up_write(&dev->heap_lock);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(ion_device_add_heap, ION);

/**
 * ion_device_remove_heap() - unregister a heap
 * @heap: a heap registered with ion_device_add_heap()
 *
 * Waits for allocations in progress.  The heap leaves the heap list (no
 * new buffer comes from it, ION_IOC_HEAP_QUERY no longer lists it), its
 * debugfs file goes, and its dma-heap nodes go: files still open on them
 * answer -ENODEV.  Buffers of the heap that still live stay valid - mmap,
 * kernel mappings, attachments, and their free all still call the heap's
 * ops - so @heap and its ops must stay valid until the last of them is
 * freed.  Each buffer pins @heap->owner, so a module calling this from
 * its exit never has live buffers; a module removing its heap earlier
 * (a device going away) must keep the heap's memory until its exit.  The
 * same holds for a custom_ioctl op that was running (ION_IOC_CUSTOM
 * calls it without the heap lock, the heap pinned as by a buffer): it may
 * still run after this returns.  The core's state of the heap goes with
 * the last buffer, op or open debugfs file of the heap; until then the
 * heap cannot be added again.
 *
 * Context: Process context; sleeps.
 */
void ion_device_remove_heap(struct ion_heap *heap)
{
	struct ion_device *dev = &ion_dev;
	struct ion_heap_core *core;

	/*
	 * The file first, without heap_lock: its removal waits for readers
	 * (one copying out to a stalled user page), which must not hold up
	 * every allocation meanwhile.  The heap stays listed until below,
	 * so its name cannot be taken again in between.
	 */
	core = READ_ONCE(heap->core);
	if (core && !READ_ONCE(core->removed))
		debugfs_remove(core->debugfs);
	percpu_down_write(&dev->heap_lock);
	core = heap->core;
	if (WARN_ON_ONCE(!core || core->removed)) {
		percpu_up_write(&dev->heap_lock);
		return;
	}
	ion_heap_nodes_remove(dev, heap);
	list_del(&heap->node);
	core->removed = true;
	set_bit(heap->id, dev->held_ids);
	spin_lock(&dev->stats_lock);
	dev->heap_count--;
	spin_unlock(&dev->stats_lock);
	percpu_up_write(&dev->heap_lock);
	ion_heap_core_put(heap);
}
EXPORT_SYMBOL_NS_GPL(ion_device_remove_heap, ION);

/**
 * ion_heap_query() - ION_IOC_HEAP_QUERY: describe the heaps
 * @dev: the device
 * @out: user array to fill, or NULL to ask for the number of heaps
 * @cnt: in: entries in @out; out: entries filled, or the number of heaps
 *	 when @out is NULL (whatever *@cnt was, as 4.12+ ion answered
 *	 libion's ion_query_get_heaps(fd, cnt, NULL))
 *
 * Heaps are listed in priority order.  The entries are gathered under
 * the heap lock and copied out after it is dropped: a user array whose
 * page faults stall must not hold up heap registration, and with it
 * every allocation.
 *
 * Context: Process context; sleeps.
 * Return: 0, -ENOMEM, or -EFAULT.
 */
int ion_heap_query(struct ion_device *dev, struct ion_heap_data __user *out,
		   u32 *cnt)
{
	struct ion_heap_data *data;
	struct ion_heap *heap;
	u32 n = 0, max;
	int ret = 0;

	if (!out) {
		percpu_down_read(&dev->heap_lock);
		*cnt = dev->heap_count;
		percpu_up_read(&dev->heap_lock);
		return 0;
	}
	/* Heap ids are unique and below ION_NUM_HEAP_IDS. */
	max = min_t(u32, *cnt, ION_NUM_HEAP_IDS);
	if (!max) {
		*cnt = 0;
		return 0;
	}
	data = kcalloc(max, sizeof(*data), GFP_KERNEL);
	if (!data)
		return -ENOMEM;
	percpu_down_read(&dev->heap_lock);
	list_for_each_entry(heap, &dev->heaps, node) {
		if (n == max)
			break;
		strscpy(data[n].name, heap->name, sizeof(data[n].name));
		data[n].type = heap->type;
		data[n].heap_id = heap->id;
		n++;
	}
	percpu_up_read(&dev->heap_lock);
	if (copy_to_user(out, data, array_size(n, sizeof(*data))))
		ret = -EFAULT;
	else
		*cnt = n;
	kfree(data);
	return ret;
}

/*
 * The next heap below id *@below, in priority order, with a custom_ioctl
 * op, pinned as a buffer pins it (its module and the core's state), its
 * id in *@below; NULL when none is left.
 */
static struct ion_heap *ion_heap_custom_next(struct ion_device *dev,
					     unsigned int *below)
{
	struct ion_heap *heap, *found = NULL;

	percpu_down_read(&dev->heap_lock);
	list_for_each_entry(heap, &dev->heaps, node) {
		if (heap->id >= *below || !heap->ops->custom_ioctl ||
		    !try_module_get(heap->owner))
			continue;
		ion_heap_core_get(heap);
		*below = heap->id;
		found = heap;
		break;
	}
	percpu_up_read(&dev->heap_lock);
	return found;
}

/**
 * ion_heap_custom_ioctl() - ION_IOC_CUSTOM: offer a command to the heaps
 * @dev: the device
 * @cmd: heap-defined command
 * @arg: heap-defined argument
 *
 * Each heap with a custom_ioctl op, in priority order, gets the command
 * until one answers something other than -ENOTTY.  The op runs without
 * the heap lock, its heap pinned: a user pointer whose fault stalls
 * (userfaultfd, a network file) must not hold up heap registration, and
 * with it every allocation.
 *
 * Context: Process context; sleeps.
 * Return: the answering heap's result, or -ENOTTY.
 */
long ion_heap_custom_ioctl(struct ion_device *dev, unsigned int cmd,
			   unsigned long arg)
{
	unsigned int below = ION_NUM_HEAP_IDS;
	struct ion_heap *heap;
	long ret = -ENOTTY;

	while (ret == -ENOTTY && (heap = ion_heap_custom_next(dev, &below))) {
		struct module *owner = heap->owner;

		ret = heap->ops->custom_ioctl(heap, cmd, arg);
		ion_heap_core_put(heap);
		module_put(owner);
	}
	return ret;
}
