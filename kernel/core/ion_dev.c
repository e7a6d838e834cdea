// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: /dev/ion - the one device, its misc node and its files: a file is
 * bound to its process's client at open.
 */
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "ion_priv.h"

/**
 * DOC: locking
 *
 * From outermost to innermost; a lock is only ever taken while holding
 * locks above it in this list:
 *
 * - &ion_device.client_lock (mutex): the client list and client names;
 *   the last reference to a client is dropped under it (kref_put_mutex),
 *   so a lookup under it never finds a dying client.
 * - &ion_client.lock (mutex): a client's handle table, its
 *   buffer-to-handle tree, its accounting, and the count and kernel
 *   mappings of each of its handles.
 * - the dma-buf's reservation lock (dma-buf core, around map_dma_buf and
 *   vmap), or the caller's mmap_lock (mmap, page faults, VMA open and
 *   close), then &ion_core_buffer.lock (mutex): a buffer's attachments,
 *   its kernel mapping, the counts of what has it mapped and the lazy
 *   setup (or move, at attach) of its sg table.
 * - &ion_device.heap_lock (percpu_rw_semaphore): the heap list and each heap's
 *   dma-heap nodes; read across an allocation (so a heap cannot go while
 *   it allocates), HEAP_QUERY and CUSTOM, written by heap registration,
 *   which also creates and removes the nodes' devices under it.  Taken
 *   with no other core lock held.
 * - &ion_device.stats_lock (spinlock): all accounting, every heap's
 *   buffer list, and (with &ion_core_buffer.lock) each buffer's
 *   attachment list, taken inside that mutex by attach and detach so that
 *   debugfs can name the attached devices under the spinlock alone.
 *   Innermost; never held across anything that sleeps.
 *
 * - the xa_lock of &ion_client.handles (spinlock), inside
 *   &ion_client.lock: stores and erases in the handle table together with
 *   the client's accounting, so that debugfs sees them consistent.
 *
 * debugfs takes only spinlocks, and each for a bounded time:
 * &ion_device.stats_lock to copy counters or one batch of a heap's
 * buffers, and a client's handle table lock for one batch of its handles
 * (ion_debugfs.c, "debugfs batches").  It never holds a lock while anything allocates, frees or
 * maps memory, so reading debugfs never waits for an allocation and
 * delays one by one batch at most.  The one exception is the quota file
 * (ion_quota.c), which reads under &ion_device.heap_lock (read) and then
 * &ion_device.client_lock, never both: heap registration, client open
 * and close, and the free of a gone client's last buffer (ion_owner.c)
 * may wait for it; allocations do not.
 *
 * dma_buf_put() may run under &ion_client.lock: the last put of a dma-buf
 * file is deferred by the VFS (task work or a workqueue), so a buffer is
 * never released inside a core lock.
 */

struct ion_device ion_dev;

static int ion_open(struct inode *inode, struct file *file)
{
	struct ion_client *client;

	client = ion_client_get_user(&ion_dev);
	if (IS_ERR(client))
		return PTR_ERR(client);
	file->private_data = client;
	return stream_open(inode, file);
}

static int ion_release(struct inode *inode, struct file *file)
{
	ion_client_put(file->private_data);
	return 0;
}

static const struct file_operations ion_fops = {
	.owner = THIS_MODULE,
	.open = ion_open,
	.release = ion_release,
	.unlocked_ioctl = ion_ioctl,
	.compat_ioctl = PTR_IF(IS_ENABLED(CONFIG_COMPAT), ion_compat_ioctl),
};

/**
 * ion_device_init() - set up the device's lists and locks
 * @dev: the device
 *
 * Context: Process context (module init).
 * Return: 0 or -ENOMEM.
 */
int ion_device_init(struct ion_device *dev)
{
	dev->misc.minor = MISC_DYNAMIC_MINOR;
	dev->misc.name = "ion";
	dev->misc.fops = &ion_fops;
	dev->misc.mode = ION_DEV_MODE;
	INIT_LIST_HEAD(&dev->heaps);
	mutex_init(&dev->client_lock);
	INIT_LIST_HEAD(&dev->clients);
	INIT_LIST_HEAD(&dev->orphans);
	spin_lock_init(&dev->stats_lock);
	atomic64_set(&dev->next_buffer_id, 0);
	return percpu_init_rwsem(&dev->heap_lock);
}

/**
 * ion_device_destroy() - undo ion_device_init()
 * @dev: the device, with no client and no heap left
 *
 * Context: Process context (module exit).
 */
void ion_device_destroy(struct ion_device *dev)
{
	WARN_ON_ONCE(!list_empty(&dev->clients));
	WARN_ON_ONCE(!list_empty(&dev->orphans));
	percpu_free_rwsem(&dev->heap_lock);
}
