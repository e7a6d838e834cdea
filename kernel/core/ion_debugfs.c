// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the debugfs views under /sys/kernel/debug/ion/, as
 * Documentation/debugfs.rst specifies them.
 */
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/dma-buf.h>
#include <linux/pid.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <uapi/linux/dma-buf.h>

#include "ion_priv.h"

/**
 * DOC: debugfs
 *
 * summary, heaps/<heap> and clients/<client>; see Documentation/debugfs.rst
 * for the format.  Files come and go with their heaps and clients; the
 * debugfs core makes removal wait for readers in progress, so a file's
 * heap or client is alive while it is read.  Buffers are named by their
 * id and dma-buf inode number, never by address.  Readers take only
 * spinlocks: &ion_device.stats_lock (summary, heaps/<name>) or a client's
 * handle table lock (clients/<name>), each held by writers for a few
 * instructions only, so reading never sleeps and never waits for an
 * allocation in progress.
 */

static int ion_summary_show(struct seq_file *s, void *unused)
{
	struct ion_device *dev = s->private;
	unsigned int heaps;
	struct ion_stats st;

	spin_lock(&dev->stats_lock);
	st = dev->stats;
	heaps = dev->heap_count;
	spin_unlock(&dev->stats_lock);

	seq_printf(s, "heaps: %u\n", heaps);
	seq_printf(s, "clients: %u\n", READ_ONCE(dev->client_count));
	seq_printf(s, "buffers: %llu\n", st.buffers);
	seq_printf(s, "bytes: %llu\n", st.bytes);
	seq_printf(s, "peak_bytes: %llu\n", st.peak_bytes);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ion_summary);

/* The DMA_BUF_SET_NAME name of @dmabuf as one field: no blanks, or "-". */
static void ion_debugfs_buffer_name(struct seq_file *s, struct dma_buf *dmabuf)
{
	char name[DMA_BUF_NAME_LEN] = "";
	char *p;

	spin_lock(&dmabuf->name_lock);
	if (dmabuf->name)
		strscpy(name, dmabuf->name, sizeof(name));
	spin_unlock(&dmabuf->name_lock);

	for (p = name; *p; p++) {
		if (!isgraph(*p))
			*p = '_';
	}
	seq_puts(s, name[0] ? name : "-");
}

static void ion_debugfs_heap_buffers(struct seq_file *s, struct ion_heap *heap)
{
	struct ion_heap_core *core = heap->core;
	struct ion_core_buffer *buffer;

	seq_puts(s, "buffer\tino\tsize\tflags\towner\thandles\tattachments\tname\n");
	spin_lock(&ion_dev.stats_lock);
	list_for_each_entry(buffer, &core->buffers, heap_node) {
		seq_printf(s, "%llu\t%lu\t%zu\t0x%lx\t%s\t%d\t%u\t",
			   buffer->id, buffer->ino, buffer->base.size,
			   buffer->base.flags, buffer->owner->name,
			   atomic_read(&buffer->handle_count),
			   READ_ONCE(buffer->attach_count));
		ion_debugfs_buffer_name(s, buffer->dmabuf);
		seq_putc(s, '\n');
	}
	spin_unlock(&ion_dev.stats_lock);
}

static int ion_heap_show(struct seq_file *s, void *unused)
{
	struct ion_heap *heap = s->private;
	struct ion_stats st;

	ion_stats_read(&ion_dev, heap, &st);
	seq_printf(s, "name: %s\n", heap->name);
	seq_printf(s, "type: %u\n", heap->type);
	seq_printf(s, "id: %u\n", heap->id);
	seq_printf(s, "buffers: %llu\n", st.buffers);
	seq_printf(s, "bytes: %llu\n", st.bytes);
	seq_printf(s, "peak_bytes: %llu\n", st.peak_bytes);
	seq_printf(s, "allocs: %llu\n", st.allocs);
	seq_printf(s, "alloc_failures: %llu\n", st.alloc_failures);
	if (heap->ops->debug_show)
		heap->ops->debug_show(heap, s);
	seq_putc(s, '\n');
	ion_debugfs_heap_buffers(s, heap);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ion_heap);

static void ion_debugfs_client_handles(struct seq_file *s,
				       struct ion_client *client)
{
	struct ion_handle *handle;
	unsigned long id;

	lockdep_assert_held(&client->handles.xa_lock);
	seq_puts(s, "handle\tbuffer\tino\tsize\theap\trefcount\n");
	xa_for_each(&client->handles, id, handle) {
		struct ion_core_buffer *buffer = handle->buffer;

		seq_printf(s, "%d\t%llu\t%lu\t%zu\t%s\t%u\n", handle->id,
			   buffer->id, buffer->ino, buffer->base.size,
			   buffer->base.heap->name, kref_read(&handle->ref));
	}
}

static int ion_client_show(struct seq_file *s, void *unused)
{
	struct ion_client *client = s->private;
	const struct ion_client_heap_stat *st;
	int i;

	xa_lock(&client->handles);
	seq_printf(s, "name: %s\n", client->owner->name);
	seq_printf(s, "kind: %s\n", client->pid ? "user" : "kernel");
	seq_printf(s, "pid: %d\n", client->pid ? pid_nr(client->pid) : 0);
	seq_printf(s, "handles: %u\n", client->handle_count);
	seq_printf(s, "bytes: %llu\n", client->bytes);
	for (i = ION_NUM_HEAP_IDS - 1; i >= 0; i--) {
		st = &client->heap_stats[i];
		if (st->handles)
			seq_printf(s, "heap %s: %u %llu\n", st->name,
				   st->handles, st->bytes);
	}
	seq_putc(s, '\n');
	ion_debugfs_client_handles(s, client);
	xa_unlock(&client->handles);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ion_client);

/**
 * ion_debugfs_init() - create /sys/kernel/debug/ion and its summary
 * @dev: the device
 *
 * Context: Process context (module init).
 */
void ion_debugfs_init(struct ion_device *dev)
{
	dev->debug_root = debugfs_create_dir("ion", NULL);
	dev->debug_heaps = debugfs_create_dir("heaps", dev->debug_root);
	dev->debug_clients = debugfs_create_dir("clients", dev->debug_root);
	debugfs_create_file("summary", 0444, dev->debug_root, dev,
			    &ion_summary_fops);
}

/**
 * ion_debugfs_exit() - remove /sys/kernel/debug/ion
 * @dev: the device
 *
 * Context: Process context (module exit).
 */
void ion_debugfs_exit(struct ion_device *dev)
{
	debugfs_remove_recursive(dev->debug_root);
	dev->debug_root = NULL;
}

/**
 * ion_debugfs_add_heap() - create a heap's file heaps/<name>
 * @dev:  the device
 * @heap: the heap being registered
 *
 * ion_device_remove_heap() removes the file.
 *
 * Context: Process context; &ion_device.heap_lock held for writing.
 */
void ion_debugfs_add_heap(struct ion_device *dev, struct ion_heap *heap)
{
	struct ion_heap_core *core = heap->core;

	lockdep_assert_held_write(&dev->heap_lock);
	core->debugfs = debugfs_create_file(heap->name, 0444, dev->debug_heaps,
					    heap, &ion_heap_fops);
}

/**
 * ion_debugfs_add_client() - create a client's file clients/<name>
 * @dev:    the device
 * @client: the new client, already named
 *
 * The client's release removes the file.
 *
 * Context: Process context; &ion_device.client_lock held.
 */
void ion_debugfs_add_client(struct ion_device *dev, struct ion_client *client)
{
	lockdep_assert_held(&dev->client_lock);
	client->debugfs = debugfs_create_file(client->owner->name, 0444,
					      dev->debug_clients, client,
					      &ion_client_fops);
}
