// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the debugfs views under /sys/kernel/debug/ion/, as
 * Documentation/debugfs.rst specifies them.
 */
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/dma-buf.h>
#include <linux/pid.h>
#include <linux/limits.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <uapi/linux/dma-buf.h>

#include "ion_debugfs_priv.h"

/**
 * DOC: debugfs
 *
 * summary, heaps/<heap> and clients/<client>; see Documentation/debugfs.rst
 * for the format.  Files come and go with their heaps and clients; the
 * debugfs core makes removal wait for readers in progress, so a file's
 * heap or client is alive while it is read.  Buffers are named by their
 * id and dma-buf inode number, never by address.  Readers take only
 * spinlocks, each for a bounded time: &ion_device.stats_lock for the
 * counters (summary, the head of heaps/<name>), and the lock of the
 * xarray a long view walks to copy one batch of entries (see "debugfs
 * batches"), so reading never waits for an allocation in progress and
 * delays one by one batch of copies at most.
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

/**
 * DOC: debugfs batches
 *
 * The two long views, a heap's buffers and a client's handles, walk a
 * list or an xarray whose lock the allocation path takes too
 * (&ion_heap_core.buffers under &ion_device.stats_lock,
 * &ion_client.handles).  A reader takes that lock
 * only to copy the fields of at most %ION_DEBUGFS_BATCH entries into its
 * own buffer; it formats them after dropping the lock, then finds its
 * place again: by its cursor in the heap's list, by handle id in the
 * client's xarray.  With 100 000 live buffers an allocation thus
 * waits for one batch of copies at most, never for the walk or for the
 * formatting, and a view taken while buffers come and go shows each entry
 * that lived across the read once, in list or index order.  For the
 * client's view the seq_file position is the index a batch's search
 * starts from plus one (0 is the header), so a reader that stops between
 * read() calls resumes where it was.
 */
/* Copy the batch of entries from index @pos - 1 on; NULL when none. */
static void *ion_debugfs_batch(struct ion_debugfs_iter *it, loff_t pos)
{
	XA_STATE(xas, it->xa, pos - 1);
	void *entry;

	it->n = 0;
	xa_lock(it->xa);
	xas_for_each(&xas, entry, ULONG_MAX) {
		if (xas_retry(&xas, entry))
			continue;
		it->view->copy(&it->recs[it->n++], entry);
		if (it->n == ION_DEBUGFS_BATCH)
			break;
	}
	xa_unlock(it->xa);
	it->next = xas.xa_index + 1;
	return it->n ? it : NULL;
}

static void *ion_debugfs_start(struct seq_file *s, loff_t *pos)
{
	if (!*pos)
		return SEQ_START_TOKEN;
	if (*pos == LLONG_MAX)
		return NULL;
	return ion_debugfs_batch(s->private, *pos);
}

static void *ion_debugfs_next(struct seq_file *s, void *v, loff_t *pos)
{
	struct ion_debugfs_iter *it = s->private;

	if (v == SEQ_START_TOKEN)
		*pos = 1;
	else if (it->next && it->next < LLONG_MAX)
		*pos = it->next + 1;
	else
		*pos = LLONG_MAX;	/* the last index was taken */
	return *pos == LLONG_MAX ? NULL : ion_debugfs_batch(it, *pos);
}

static const struct seq_operations ion_debugfs_sops = {
	.start = ion_debugfs_start,
	.next = ion_debugfs_next,
	.stop = ion_debugfs_stop,
	.show = ion_debugfs_show,
};

static int ion_debugfs_open_iter(struct file *file,
				 const struct ion_debugfs_view *view,
				 void *obj, struct xarray *xa)
{
	struct ion_debugfs_iter *it;

	it = __seq_open_private(file, &ion_debugfs_sops, sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->obj = obj;
	it->xa = xa;
	it->view = view;
	return 0;
}

static void ion_client_show_header(struct seq_file *s, void *obj)
{
	struct ion_client *client = obj;
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
	xa_unlock(&client->handles);
	seq_putc(s, '\n');
	seq_puts(s, "handle\tbuffer\tino\tsize\theap\trefcount\n");
}

/* Under the handle table's lock, which keeps @entry and its buffer alive. */
static void ion_client_copy(union ion_debugfs_rec *rec, void *entry)
{
	struct ion_debugfs_handle *r = &rec->handle;
	struct ion_handle *handle = entry;
	struct ion_core_buffer *buffer = handle->buffer;

	r->id = handle->id;
	r->refcount = kref_read(&handle->ref);
	r->buffer = buffer->id;
	r->ino = buffer->ino;
	r->size = buffer->base.size;
	strscpy(r->heap, buffer->base.heap->name, sizeof(r->heap));
}

static void ion_client_show(struct seq_file *s,
			    const union ion_debugfs_rec *rec)
{
	const struct ion_debugfs_handle *r = &rec->handle;

	seq_printf(s, "%d\t%llu\t%lu\t%zu\t%s\t%u\n", r->id, r->buffer, r->ino,
		   r->size, r->heap, r->refcount);
}

static const struct ion_debugfs_view ion_client_view = {
	.header = ion_client_show_header,
	.copy = ion_client_copy,
	.show = ion_client_show,
};

static int ion_client_open(struct inode *inode, struct file *file)
{
	struct ion_client *client = inode->i_private;

	return ion_debugfs_open_iter(file, &ion_client_view, client,
				     &client->handles);
}

static const struct file_operations ion_client_fops = {
	.owner = THIS_MODULE,
	.open = ion_client_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = seq_release_private,
};

/**
 * ion_debugfs_init() - create /sys/kernel/debug/ion and its files
 * @dev: the device
 *
 * One of the last steps of loading ion.ko, after everything that can
 * fail: a failed load frees the module whatever files are open, debugfs
 * files included.  Files of the heaps and clients that came before are
 * made here; later ones as they come.
 *
 * Context: Process context (module init).
 */
void ion_debugfs_init(struct ion_device *dev)
{
	struct ion_client *client;
	struct ion_heap *heap;

	dev->debug_root = debugfs_create_dir("ion", NULL);
	debugfs_create_file("summary", 0444, dev->debug_root, dev,
			    &ion_summary_fops);
	ion_quota_debugfs_init(dev);
	percpu_down_write(&dev->heap_lock);
	dev->debug_heaps = debugfs_create_dir("heaps", dev->debug_root);
	list_for_each_entry(heap, &dev->heaps, node)
		ion_debugfs_add_heap(dev, heap);
	percpu_up_write(&dev->heap_lock);
	mutex_lock(&dev->client_lock);
	dev->debug_clients = debugfs_create_dir("clients", dev->debug_root);
	list_for_each_entry(client, &dev->clients, node)
		ion_debugfs_add_client(dev, client);
	mutex_unlock(&dev->client_lock);
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
 * ion_device_remove_heap() removes the file.  Nothing while ion.ko loads
 * (ion_debugfs_init() makes it).
 *
 * Context: Process context; &ion_device.heap_lock held for writing.
 */
void ion_debugfs_add_heap(struct ion_device *dev, struct ion_heap *heap)
{
	struct ion_heap_core *core = heap->core;

	lockdep_assert_held_write(&dev->heap_lock);
	if (!dev->debug_heaps)
		return;
	core->debugfs = debugfs_create_file(heap->name, 0444, dev->debug_heaps,
					    heap, &ion_heap_fops);
}

/**
 * ion_debugfs_add_client() - create a client's file clients/<name>
 * @dev:    the device
 * @client: the new client, already named
 *
 * The client's release removes the file.  Nothing while ion.ko loads
 * (ion_debugfs_init() makes it).
 *
 * Context: Process context; &ion_device.client_lock held.
 */
void ion_debugfs_add_client(struct ion_device *dev, struct ion_client *client)
{
	lockdep_assert_held(&dev->client_lock);
	if (!dev->debug_clients)
		return;
	client->debugfs = debugfs_create_file(client->owner->name, 0444,
					      dev->debug_clients, client,
					      &ion_client_fops);
}
