// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion_test_heap: a heap in a module of its own, registered through
 * <linux/ion_heap.h> the way a platform's heap driver does it, with the
 * install-kapi files alone (no header of ion's tree).  The user
 * ABI (heap name and id, the custom command, the parameters) is in
 * ion_test_heap.h.
 */
#include <linux/atomic.h>
#include <linux/gfp.h>
#include <linux/ion_heap.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>

#include "ion_test_heap.h"

static atomic64_t ion_test_heap_allocs;
static atomic64_t ion_test_heap_frees;
static atomic64_t ion_test_heap_live;

/* Serialises adding and removing the heap; protects the flag. */
static DEFINE_MUTEX(ion_test_heap_lock);
static bool ion_test_heap_registered;

static void ion_test_heap_put_pages(struct sg_table *table)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_sg(table, sg, i)
		if (sg_page(sg))
			__free_page(sg_page(sg));
	sg_free_table(table);
	kfree(table);
}

/* One page per sg entry: the core's scattered-buffer paths get used. */
static int ion_test_heap_allocate(struct ion_heap *heap,
				  struct ion_buffer *buffer)
{
	struct sg_table *table;
	struct scatterlist *sg;
	unsigned int i;
	int ret;

	if (!(buffer->flags & ION_FLAG_CACHED) || buffer->align > PAGE_SIZE)
		return -EINVAL;
	if (buffer->size > ION_TEST_HEAP_MAX_LEN)
		return -ENOMEM;
	table = kzalloc(sizeof(*table), GFP_KERNEL);
	if (!table)
		return -ENOMEM;
	ret = sg_alloc_table(table, buffer->size >> PAGE_SHIFT, GFP_KERNEL);
	if (ret) {
		kfree(table);
		return ret;
	}
	for_each_sgtable_sg(table, sg, i) {
		struct page *page;

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_put;
		}
		page = alloc_page(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN);
		if (!page) {
			ret = -ENOMEM;
			goto err_put;
		}
		sg_set_page(sg, page, PAGE_SIZE, 0);
	}
	buffer->sg_table = table;
	atomic64_inc(&ion_test_heap_allocs);
	atomic64_add(buffer->size, &ion_test_heap_live);
	return 0;

err_put:
	ion_test_heap_put_pages(table);
	return ret;
}

static void ion_test_heap_free(struct ion_buffer *buffer)
{
	ion_test_heap_put_pages(buffer->sg_table);
	buffer->sg_table = NULL;
	atomic64_sub(buffer->size, &ion_test_heap_live);
	atomic64_inc(&ion_test_heap_frees);
}

static long ion_test_heap_custom(struct ion_heap *heap, unsigned int cmd,
				 unsigned long arg)
{
	struct ion_test_heap_stats st = {
		.magic = ION_TEST_HEAP_MAGIC,
		.allocs = atomic64_read(&ion_test_heap_allocs),
		.frees = atomic64_read(&ion_test_heap_frees),
		.live_bytes = atomic64_read(&ion_test_heap_live),
	};

	if (cmd != ION_TEST_HEAP_CMD_STATS)
		return -ENOTTY;
	if (copy_to_user((void __user *)arg, &st, sizeof(st)))
		return -EFAULT;
	return 0;
}

static void ion_test_heap_show(struct ion_heap *heap, struct seq_file *s)
{
	seq_printf(s, "test_allocs: %lld\n",
		   (long long)atomic64_read(&ion_test_heap_allocs));
}

static const struct ion_heap_ops ion_test_heap_ops = {
	.allocate = ion_test_heap_allocate,
	.free = ion_test_heap_free,
	.custom_ioctl = ion_test_heap_custom,
	.debug_show = ion_test_heap_show,
};

static struct ion_heap ion_test_heap = {
	.name = ION_TEST_HEAP_NAME,
	.type = ION_HEAP_TYPE_CUSTOM,
	.id = ION_TEST_HEAP_ID,
	.ops = &ion_test_heap_ops,
	.owner = THIS_MODULE,
};

/*
 * Another heap with the test heap's id and ops, registered only on
 * request (the twin parameter): the core must refuse it while buffers of
 * the removed test heap live, whose per-id counts it would share.
 */
static struct ion_heap ion_test_heap_twin = {
	.name = ION_TEST_HEAP_NAME "-twin",
	.type = ION_HEAP_TYPE_CUSTOM,
	.id = ION_TEST_HEAP_ID,
	.ops = &ion_test_heap_ops,
	.owner = THIS_MODULE,
};

static bool ion_test_heap_twin_registered;

/*
 * Add or remove @heap, registered while *@registered; 0 or the -errno of
 * ion_device_add_heap().
 */
static int ion_test_heap_set_one(struct ion_heap *heap, bool *registered,
				 bool want)
{
	int ret = 0;

	mutex_lock(&ion_test_heap_lock);
	if (want && !*registered) {
		ret = ion_device_add_heap(heap);
		WRITE_ONCE(*registered, !ret);
	} else if (!want && *registered) {
		ion_device_remove_heap(heap);
		WRITE_ONCE(*registered, false);
	}
	mutex_unlock(&ion_test_heap_lock);
	return ret;
}

static int ion_test_heap_set(bool want)
{
	return ion_test_heap_set_one(&ion_test_heap, &ion_test_heap_registered,
				     want);
}

static int ion_test_heap_param_set(const char *val,
				   const struct kernel_param *kp)
{
	bool want;
	int ret;

	ret = kstrtobool(val, &want);
	if (ret)
		return ret;
	if (kp->arg)
		return ion_test_heap_set_one(&ion_test_heap_twin,
					     &ion_test_heap_twin_registered,
					     want);
	return ion_test_heap_set(want);
}

static int ion_test_heap_param_get(char *buf, const struct kernel_param *kp)
{
	bool on = kp->arg ? READ_ONCE(ion_test_heap_twin_registered) :
			    READ_ONCE(ion_test_heap_registered);

	return sysfs_emit(buf, "%c\n", on ? 'Y' : 'N');
}

static const struct kernel_param_ops ion_test_heap_registered_ops = {
	.set = ion_test_heap_param_set,
	.get = ion_test_heap_param_get,
};
module_param_cb(registered, &ion_test_heap_registered_ops, NULL, 0600);
MODULE_PARM_DESC(registered,
		 "Y while the heap is registered; write N to remove it, Y to add it again (run time only)");
module_param_cb(twin, &ion_test_heap_registered_ops,
		&ion_test_heap_twin_registered, 0600);
MODULE_PARM_DESC(twin,
		 "Y while a second heap with the test heap's id is registered; write Y to add it, N to remove it (run time only)");

static int ion_test_heap_stats_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, ION_TEST_HEAP_STATS_FMT,
			  (unsigned long long)atomic64_read(&ion_test_heap_allocs),
			  (unsigned long long)atomic64_read(&ion_test_heap_frees),
			  (unsigned long long)atomic64_read(&ion_test_heap_live));
}

static const struct kernel_param_ops ion_test_heap_stats_ops = {
	.get = ion_test_heap_stats_get,
};
module_param_cb(stats, &ion_test_heap_stats_ops, NULL, 0400);
MODULE_PARM_DESC(stats, "buffers allocated, buffers freed, bytes live");

static int __init ion_test_heap_init(void)
{
	return ion_test_heap_set(true);
}

/* Each buffer pins the module: none lives by now. */
static void __exit ion_test_heap_exit(void)
{
	ion_test_heap_set_one(&ion_test_heap_twin,
			      &ion_test_heap_twin_registered, false);
	ion_test_heap_set(false);
}

module_init(ion_test_heap_init);
module_exit(ion_test_heap_exit);
MODULE_DESCRIPTION("ion test heap registered from a module of its own");
MODULE_LICENSE("GPL");
ION_MODULE_IMPORT_NS();
