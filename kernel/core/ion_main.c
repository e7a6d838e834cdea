// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: module init and exit - the device, the OOM notifier, the dma-heap
 * node class, the built-in heaps, then /dev/ion, debugfs and the heaps'
 * dma-heap nodes; and the way back.
 */
#include <linux/init.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "ion_fail.h"
#include "ion_priv.h"

static int __init ion_init(void)
{
	struct ion_device *dev = &ion_dev;
	int ret;

	ret = ion_device_init(dev);
	if (ret)
		return ret;
	ret = ion_oom_init();
	if (ret)
		goto err_device;
	ret = ion_heap_nodes_init();
	if (ret)
		goto err_oom;
	ret = ion_heaps_init();
	if (ret)
		goto err_heap_nodes;
	/*
	 * A failed load frees ion.ko whatever files are open, so what user
	 * space can open goes live last: /dev/ion, the last step that can
	 * fail, then debugfs and the heaps' /dev/dma_heap nodes (a heap
	 * whose nodes cannot be made stays, reachable through /dev/ion).
	 */
	ret = misc_register(&dev->misc);
	if (ret)
		goto err_heaps;
	ion_debugfs_init(dev);
	ion_fail_debugfs_init(dev);
	ion_heap_nodes_publish(dev);
	return 0;

err_heaps:
	ion_heaps_exit();
err_heap_nodes:
	ion_heap_nodes_exit();
err_oom:
	ion_oom_exit();
err_device:
	ion_device_destroy(dev);
	return ret;
}

static void __exit ion_exit(void)
{
	struct ion_device *dev = &ion_dev;

	misc_deregister(&dev->misc);
	ion_heaps_exit();
	ion_heap_nodes_exit();
	ion_oom_exit();
	ion_debugfs_exit(dev);
	ion_device_destroy(dev);
}

module_init(ion_init);
module_exit(ion_exit);
MODULE_DESCRIPTION("ION memory allocator on DMA-BUF");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
