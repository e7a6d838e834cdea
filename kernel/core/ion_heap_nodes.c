// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the /dev/dma_heap/ion-* nodes - every heap as a mainline dma-heap
 * character device, speaking the DMA_HEAP_IOCTL_ALLOC ABI.
 */
#include <linux/cdev.h>
#include <linux/compat.h>
#include <linux/device.h>
#include <linux/dma-buf.h>
#include <linux/err.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <uapi/linux/dma-heap.h>

#include "ion_priv.h"

/**
 * DOC: dma-heap nodes
 *
 * Every registered heap also appears as two character devices in
 * /dev/dma_heap/, named after the heap without its "ion_" prefix and
 * "_heap" suffix, with "_" written "-": ion_system_heap gives
 * ``ion-system`` and ``ion-system-uncached``.  The plain node allocates
 * cached buffers (ION_FLAG_CACHED: what mainline's heaps give), the
 * "-uncached" node buffers without ION_FLAG_CACHED (write-combined
 * mappings, no CPU cache maintenance).  Nodes come and go with their
 * heap: ion_device_add_heap() creates them and ion_device_remove_heap()
 * removes them, both under &ion_device.heap_lock held for writing; a heap
 * registered after ion.ko loaded whose node name is taken is refused (a
 * built-in one keeps its heap without nodes, as below).  Minor numbers are 2 * heap id
 * (+ 1 for "-uncached"), the mainline-named aliases of
 * ion_heap_aliases.c have the minors above those; heap ids appear
 * nowhere in the node ABI.  While ion.ko loads, no node appears until
 * everything that can fail has succeeded (ion_heap_nodes_publish()): a
 * failed load frees the module's memory whatever files are open, so a
 * node opened in the meantime would outlive the code behind it.  The
 * nodes are mode 0600 root like /dev/ion and mainline's nodes
 * (ION_DEV_MODE); udev rules grant a group access per node.
 *
 * The ABI is mainline's (<linux/dma-heap.h>): only _IOC_NR selects the
 * command, and only nr 0, DMA_HEAP_IOCTL_ALLOC, exists (others: -EINVAL);
 * the argument is copied in and out with the size and direction of the
 * caller's command, so callers built with a smaller struct get the rest
 * zero-filled and callers with a larger one get their tail back
 * unchanged; ``fd`` must be 0, ``fd_flags`` within O_CLOEXEC | O_ACCMODE
 * (the O_ACCMODE part is the dma-buf file's access mode), ``heap_flags``
 * 0, and ``len`` is rounded up to whole pages (0 after rounding:
 * -EINVAL).  The new fd is installed only after the result was copied
 * back.
 *
 * Buffers allocated here are ordinary ion buffers from that one heap (no
 * fallback to another), owned by the calling process's client: opening a
 * node finds or creates that client and holds it, exactly as opening
 * /dev/ion does, until the file is closed.  Like the fd ABI's ALLOC, an
 * allocation keeps no handle; the buffer shows in its heap's debugfs file
 * with the client as owner.  A file still open on a node whose heap was
 * removed answers -ENODEV.
 */

/* Room for "ion-" + a heap name + "-uncached". */
#define ION_HEAP_NODE_NAME_LEN	(ION_MAX_HEAP_NAME + 16)

/**
 * struct ion_heap_node - one /dev/dma_heap/ion-* node
 * @dev:   the device; its release frees the node
 * @cdev:  the character device, a child of @dev, so an open file pins
 *	   the node
 * @heap:  the heap, under &ion_device.heap_lock; NULL once the heap is
 *	   unregistered
 * @flags: ION_FLAG_* of every buffer allocated here
 *
 * Lifetime: created by ion_heap_nodes_add(), unregistered by
 * ion_heap_nodes_remove(), freed when the last reference to @dev goes
 * (the registration's, and one per open file).
 */
struct ion_heap_node {
	struct device dev;
	struct cdev cdev;
	struct ion_heap *heap;
	unsigned int flags;
};

/**
 * struct ion_heap_node_file - one open node
 * @node:   the node, a reference to its device
 * @client: the opening process's client, a reference
 */
struct ion_heap_node_file {
	struct ion_heap_node *node;
	struct ion_client *client;
};

static dev_t ion_heap_node_devt;

static char *ion_heap_node_devnode(ION_DEVNODE_CONST struct device *dev,
				   umode_t *mode)
{
	if (mode)
		*mode = ION_DEV_MODE;
	return kasprintf(GFP_KERNEL, "dma_heap/%s", dev_name(dev));
}

static ION_CLASS_CONST struct class ion_heap_node_class = {
	.name = "ion_dma_heap",
	.devnode = ion_heap_node_devnode,
};

static int ion_heap_node_open(struct inode *inode, struct file *file)
{
	struct ion_heap_node *node = container_of(inode->i_cdev,
						  struct ion_heap_node, cdev);
	struct ion_heap_node_file *nf;
	struct ion_client *client;

	nf = kzalloc(sizeof(*nf), GFP_KERNEL);
	if (!nf)
		return -ENOMEM;
	client = ion_client_get_user(&ion_dev);
	if (IS_ERR(client)) {
		kfree(nf);
		return PTR_ERR(client);
	}
	nf->client = client;
	nf->node = node;
	get_device(&node->dev);
	file->private_data = nf;
	return nonseekable_open(inode, file);
}

static int ion_heap_node_release(struct inode *inode, struct file *file)
{
	struct ion_heap_node_file *nf = file->private_data;

	ion_client_put(nf->client);
	put_device(&nf->node->dev);
	kfree(nf);
	return 0;
}

/*
 * DMA_HEAP_IOCTL_ALLOC: validate, allocate, reserve the fd (stored in
 * @data->fd).  Returns the dma-buf (its reference goes with the fd) or an
 * ERR_PTR.
 */
static struct dma_buf *
ion_heap_node_alloc(struct ion_heap_node_file *nf,
		    struct dma_heap_allocation_data *data)
{
	struct ion_heap_node *node = nf->node;
	struct ion_core_buffer *buffer;
	u64 len;
	int fd;

	if (data->fd)
		return ERR_PTR(-EINVAL);
	if (data->fd_flags & ~DMA_HEAP_VALID_FD_FLAGS)
		return ERR_PTR(-EINVAL);
	if (data->heap_flags & ~DMA_HEAP_VALID_HEAP_FLAGS)
		return ERR_PTR(-EINVAL);
	len = PAGE_ALIGN(data->len);
	if (!len)
		return ERR_PTR(-EINVAL);

	buffer = ion_buffer_create_in(&ion_dev, nf->client->owner, len,
				      &node->heap, node->flags,
				      data->fd_flags);
	if (IS_ERR(buffer))
		return ERR_CAST(buffer);
	fd = get_unused_fd_flags(data->fd_flags);
	if (fd < 0) {
		dma_buf_put(buffer->dmabuf);
		return ERR_PTR(fd);
	}
	data->fd = fd;
	return buffer->dmabuf;
}

static long ion_heap_node_ioctl(struct file *file,
				unsigned int cmd,
				unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	struct dma_heap_allocation_data *data;
	unsigned int in = 0, out = 0, ksize;
	u64 stack_data[128 / sizeof(u64)];
	struct dma_buf *dmabuf;
	void *kdata = stack_data;
	long ret = 0;

	if (_IOC_NR(cmd) != _IOC_NR(DMA_HEAP_IOCTL_ALLOC))
		return -EINVAL;
	if (_IOC_DIR(cmd) & _IOC_WRITE)
		in = _IOC_SIZE(cmd);
	if (_IOC_DIR(cmd) & _IOC_READ)
		out = _IOC_SIZE(cmd);
	ksize = max3(in, out, (unsigned int)sizeof(*data));
	if (ksize > sizeof(stack_data)) {
		kdata = kmalloc(ksize, GFP_KERNEL);
		if (!kdata)
			return -ENOMEM;
	}
	if (copy_from_user(kdata, uarg, in)) {
		ret = -EFAULT;
		goto out_free;
	}
	memset(kdata + in, 0, ksize - in);

	data = kdata;
	dmabuf = ion_heap_node_alloc(file->private_data, data);
	if (IS_ERR(dmabuf)) {
		ret = PTR_ERR(dmabuf);
		goto out_free;
	}
	if (copy_to_user(uarg, kdata, out)) {
		put_unused_fd(data->fd);
		dma_buf_put(dmabuf);
		ret = -EFAULT;
		goto out_free;
	}
	fd_install(data->fd, dmabuf->file);
out_free:
	if (kdata != stack_data)
		kfree(kdata);
	return ret;
}

static const struct file_operations ion_heap_node_fops = {
	.owner = THIS_MODULE,
	.open = ion_heap_node_open,
	.release = ion_heap_node_release,
	.unlocked_ioctl = ion_heap_node_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static void ion_heap_node_dev_release(struct device *dev)
{
	kfree(container_of(dev, struct ion_heap_node, dev));
}

/* "system-contig" for ion_system_contig_heap, into @buf. */
static void ion_heap_node_short_name(const char *name, char *buf,
				     size_t size)
{
	const char *s = name;
	size_t len;

	if (str_has_prefix(s, "ion_") && s[4])
		s += 4;
	len = strlen(s);
	if (len > 5 && !strcmp(s + len - 5, "_heap"))
		len -= 5;
	snprintf(buf, size, "%.*s", (int)len, s);
	strreplace(buf, '_', '-');
}

/* Is @name the node name of a registered heap? */
static bool ion_heap_node_name_taken(struct ion_device *dev,
				     const char *name)
{
	struct ion_heap_core *core;
	struct ion_heap *heap;
	int i;

	lockdep_assert_held_write(&dev->heap_lock);
	list_for_each_entry(heap, &dev->heaps, node) {
		core = heap->core;
		for (i = 0; core && i < ION_HEAP_NODES; i++) {
			if (core->nodes[i] &&
			    !strcmp(dev_name(&core->nodes[i]->dev), name))
				return true;
		}
	}
	return false;
}

/**
 * ion_heap_node_create() - create one /dev/dma_heap/ node of a heap
 * @heap:  the heap
 * @name:  the node's name in /dev/dma_heap/ and in the ion_dma_heap class
 * @which: ION_HEAP_NODE_CACHED or ION_HEAP_NODE_UNCACHED
 * @minor: its minor, unique among ion's nodes (below ION_HEAP_NODE_MINORS
 *	   for the ion-* nodes, above for the aliases)
 *
 * Context: Process context; sleeps; &ion_device.heap_lock held for
 * writing.
 * Return: the node, or an ERR_PTR.
 */
struct ion_heap_node *ion_heap_node_create(struct ion_heap *heap,
					   const char *name,
					   unsigned int which,
					   unsigned int minor)
{
	struct ion_heap_node *node;
	int ret;

	node = kzalloc(sizeof(*node), GFP_KERNEL);
	if (!node)
		return ERR_PTR(-ENOMEM);
	node->heap = heap;
	node->flags = which == ION_HEAP_NODE_CACHED ? ION_FLAG_CACHED : 0;
	device_initialize(&node->dev);
	node->dev.class = &ion_heap_node_class;
	node->dev.devt = MKDEV(MAJOR(ion_heap_node_devt), minor);
	node->dev.release = ion_heap_node_dev_release;
	ret = dev_set_name(&node->dev, "%s", name);
	if (ret)
		goto err_put_device;
	cdev_init(&node->cdev, &ion_heap_node_fops);
	node->cdev.owner = THIS_MODULE;
	ret = cdev_device_add(&node->cdev, &node->dev);
	if (ret)
		goto err_put_device;
	return node;

err_put_device:
	put_device(&node->dev);
	return ERR_PTR(ret);
}

/**
 * ion_heap_node_destroy() - unregister a node from ion_heap_node_create()
 * @node: the node
 *
 * Open files keep it until they are closed, and answer -ENODEV.
 *
 * Context: Process context; sleeps; &ion_device.heap_lock held for
 * writing.
 */
void ion_heap_node_destroy(struct ion_heap_node *node)
{
	node->heap = NULL;
	cdev_device_del(&node->cdev, &node->dev);
	put_device(&node->dev);
}

/*
 * Whether nodes are created as heaps register: false while ion.ko loads,
 * until ion_heap_nodes_publish().  Under &ion_device.heap_lock.
 */
static bool ion_heap_nodes_live;

/**
 * ion_heap_nodes_add() - create a heap's /dev/dma_heap/ nodes
 * @dev:  the device
 * @heap: the heap being registered, already in the heap list, with its
 *	  &ion_heap_core
 *
 * Creates ion-<name> (cached) and ion-<name>-uncached, and the heap's
 * mainline names where it has any (ion_heap_aliases.c); while ion.ko is
 * loading, nothing yet (ion_heap_nodes_publish() does it).
 *
 * Context: Process context; sleeps; &ion_device.heap_lock held for
 * writing.
 * Return: 0, -EEXIST when another heap has the same node name, or the
 * -errno of creating a device.
 */
int ion_heap_nodes_add(struct ion_device *dev, struct ion_heap *heap)
{
	static const char *const suffix[ION_HEAP_NODES] = {
		[ION_HEAP_NODE_CACHED] = "",
		[ION_HEAP_NODE_UNCACHED] = "-uncached",
	};
	struct ion_heap_core *core = heap->core;
	char short_name[ION_MAX_HEAP_NAME];
	char name[ION_HEAP_NODE_NAME_LEN];
	struct ion_heap_node *node;
	unsigned int i;

	lockdep_assert_held_write(&dev->heap_lock);
	if (!ion_heap_nodes_live)
		return 0;
	ion_heap_node_short_name(heap->name, short_name, sizeof(short_name));
	for (i = 0; i < ION_HEAP_NODES; i++) {
		snprintf(name, sizeof(name), "ion-%s%s", short_name,
			 suffix[i]);
		if (ion_heap_node_name_taken(dev, name)) {
			node = ERR_PTR(-EEXIST);
			goto err_remove;
		}
		node = ion_heap_node_create(heap, name, i,
					    heap->id * ION_HEAP_NODES + i);
		if (IS_ERR(node))
			goto err_remove;
		core->nodes[i] = node;
	}
	ion_heap_aliases_add(dev, heap);
	return 0;

err_remove:
	ion_heap_nodes_remove(dev, heap);
	return PTR_ERR(node);
}

/**
 * ion_heap_nodes_publish() - create the nodes of the heaps ion.ko loaded
 * @dev: the device
 *
 * The last step of loading ion.ko, after everything that can fail: from
 * here on heaps get their nodes as they register.  A heap whose nodes
 * cannot be made stays, without them (said in the log), reachable
 * through /dev/ion: the load can no longer fail.  Heaps in priority
 * order, as they registered, so the same heap takes each mainline name.
 *
 * Context: Process context (module init).
 */
void ion_heap_nodes_publish(struct ion_device *dev)
{
	struct ion_heap *heap;
	int ret;

	percpu_down_write(&dev->heap_lock);
	ion_heap_nodes_live = true;
	list_for_each_entry(heap, &dev->heaps, node) {
		ret = ion_heap_nodes_add(dev, heap);
		if (ret)
			pr_warn("ion: heap %s: no dma-heap nodes (%d)\n",
				heap->name, ret);
	}
	percpu_up_write(&dev->heap_lock);
}

/**
 * ion_heap_nodes_remove() - remove a heap's /dev/dma_heap/ nodes
 * @dev:  the device
 * @heap: the heap being unregistered
 *
 * Its aliases (ion_heap_aliases.c) go first, then its ion-* nodes.
 * Files still open on the nodes answer -ENODEV from then on.
 *
 * Context: Process context; sleeps; &ion_device.heap_lock held for
 * writing.
 */
void ion_heap_nodes_remove(struct ion_device *dev, struct ion_heap *heap)
{
	struct ion_heap_core *core = heap->core;
	unsigned int i;

	lockdep_assert_held_write(&dev->heap_lock);
	ion_heap_aliases_remove(dev, heap);
	for (i = 0; i < ION_HEAP_NODES; i++) {
		if (!core->nodes[i])
			continue;
		ion_heap_node_destroy(core->nodes[i]);
		core->nodes[i] = NULL;
	}
}

/**
 * ion_heap_nodes_init() - set up the nodes' class and device numbers
 *
 * Before any heap registers.
 *
 * Context: Process context (module init).
 * Return: 0 or -errno.
 */
int ion_heap_nodes_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&ion_heap_node_devt, 0,
				  ION_HEAP_NODE_ALL_MINORS, "ion_dma_heap");
	if (ret)
		return ret;
	ret = class_register(&ion_heap_node_class);
	if (ret)
		unregister_chrdev_region(ion_heap_node_devt,
					 ION_HEAP_NODE_ALL_MINORS);
	return ret;
}

/**
 * ion_heap_nodes_exit() - undo ion_heap_nodes_init()
 *
 * After every heap is unregistered; no node file can be open, as each
 * pins ion.ko.
 *
 * Context: Process context (module exit).
 */
void ion_heap_nodes_exit(void)
{
	class_unregister(&ion_heap_node_class);
	unregister_chrdev_region(ion_heap_node_devt, ION_HEAP_NODE_ALL_MINORS);
}
