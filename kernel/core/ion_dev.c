// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: /dev/ion and module setup (skeleton).
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

static struct dentry *ion_debug_root;

static const struct file_operations ion_fops = {
	.owner = THIS_MODULE,
};

static struct miscdevice ion_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "ion",
	.fops = &ion_fops,
	.mode = 0666,
};

static int __init ion_init(void)
{
	int ret;

	ret = misc_register(&ion_miscdev);
	if (ret)
		return ret;
	ion_debug_root = debugfs_create_dir("ion", NULL);
	return 0;
}

static void __exit ion_exit(void)
{
	debugfs_remove_recursive(ion_debug_root);
	misc_deregister(&ion_miscdev);
}

module_init(ion_init);
module_exit(ion_exit);
MODULE_DESCRIPTION("ION memory allocator");
MODULE_LICENSE("GPL");
