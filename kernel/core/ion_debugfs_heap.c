// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: debugfs heaps/<name>, a heap's counters and its buffers, read in
 * batches with a cursor in the heap's buffer list.
 */
#include <linux/ctype.h>
#include <linux/dma-buf.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "ion_debugfs_priv.h"

/* The DMA_BUF_SET_NAME name of @dmabuf as one field: no blanks, or "-". */
static void ion_debugfs_buffer_name(struct dma_buf *dmabuf, char *name,
				    size_t len)
{
	char *p;

	name[0] = '\0';
	spin_lock(&dmabuf->name_lock);
	if (dmabuf->name)
		strscpy(name, dmabuf->name, len);
	spin_unlock(&dmabuf->name_lock);

	for (p = name; *p; p++) {
		if (!isgraph(*p))
			*p = '_';
	}
	if (!name[0])
		strscpy(name, "-", len);
}

static void ion_heap_show_header(struct seq_file *s, void *obj)
{
	struct ion_heap *heap = obj;
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
	seq_printf(s, "quota_refusals: %llu\n", st.quota_refusals);
	if (heap->ops->debug_show)
		heap->ops->debug_show(heap, s);
	seq_putc(s, '\n');
	seq_puts(s, "buffer\tino\tsize\tflags\towner\thandles\tattachments\tname\torphan\tdevices\tdetail\n");
}

/*
 * The heap's own words on @buffer (its debug_buffer op) as one field:
 * printable, no tab, or "-".
 */
static void ion_debugfs_buffer_detail(struct ion_core_buffer *buffer,
				      char *detail, size_t len)
{
	struct ion_heap *heap = buffer->base.heap;
	char *p;

	detail[0] = '\0';
	if (heap->ops->debug_buffer)
		heap->ops->debug_buffer(heap, &buffer->base, detail, len);
	for (p = detail; *p; p++) {
		if (!isprint(*p))
			*p = '_';
	}
	if (!detail[0])
		strscpy(detail, "-", len);
}

/* Under &ion_device.stats_lock, which keeps @entry from being released. */
static void ion_heap_copy(union ion_debugfs_rec *rec, void *entry)
{
	struct ion_debugfs_buffer *r = &rec->buffer;
	struct ion_core_buffer *buffer = entry;

	r->id = buffer->id;
	r->ino = buffer->ino;
	r->size = buffer->base.size;
	r->flags = buffer->base.flags;
	r->handles = atomic_read(&buffer->handle_count);
	r->attachments = READ_ONCE(buffer->attach_count);
	strscpy(r->owner, buffer->owner->name, sizeof(r->owner));
	ion_debugfs_buffer_name(buffer->dmabuf, r->name, sizeof(r->name));
	r->orphan = READ_ONCE(buffer->owner->gone);
	ion_dmabuf_devices(buffer, r->devices, sizeof(r->devices));
	ion_debugfs_buffer_detail(buffer, r->detail, sizeof(r->detail));
}

static void ion_heap_show(struct seq_file *s, const union ion_debugfs_rec *rec)
{
	const struct ion_debugfs_buffer *r = &rec->buffer;

	seq_printf(s, "%llu\t%lu\t%zu\t0x%lx\t%s\t%d\t%u\t%s\t%d\t%s\t%s\n",
		   r->id, r->ino, r->size, r->flags, r->owner, r->handles,
		   r->attachments, r->name, r->orphan, r->devices, r->detail);
}

static const struct ion_debugfs_view ion_heap_view = {
	.header = ion_heap_show_header,
	.show = ion_heap_show,
};

/*
 * heaps/<name> walks the heap's buffer list (a list costs the allocation
 * path less than an index, see ion_charge()) with a cursor: an entry of
 * its own that stays in the list between batches, so that a batch starts
 * where the last one ended whatever came and went meanwhile.  Position n
 * is the n-th batch of this walk; position 1 starts it again from the
 * head.  Other readers' cursors are skipped: they have no dma-buf.
 */
static void ion_heap_batch(struct ion_debugfs_iter *it, bool restart)
{
	struct ion_heap *heap = it->obj;
	struct ion_heap_core *core = heap->core;
	struct list_head *pos, *cursor = &it->cursor->heap_node;
	struct ion_core_buffer *b;

	it->n = 0;
	spin_lock(&ion_dev.stats_lock);
	if (restart || list_empty(cursor))
		list_move(cursor, &core->buffers);
	for (pos = cursor->next; pos != &core->buffers &&
	     it->n < ION_DEBUGFS_BATCH; pos = pos->next) {
		b = list_entry(pos, struct ion_core_buffer, heap_node);
		if (b->dmabuf)
			ion_heap_copy(&it->recs[it->n++], b);
	}
	list_move_tail(cursor, pos);
	spin_unlock(&ion_dev.stats_lock);
}

static void *ion_heap_start(struct seq_file *s, loff_t *pos)
{
	struct ion_debugfs_iter *it = s->private;

	if (!*pos)
		return SEQ_START_TOKEN;
	if (*pos != it->batch_pos || !it->n) {
		ion_heap_batch(it, *pos == 1);
		it->batch_pos = *pos;
	}
	return it->n ? it : NULL;
}

static void *ion_heap_next(struct seq_file *s, void *v, loff_t *pos)
{
	struct ion_debugfs_iter *it = s->private;

	ion_heap_batch(it, v == SEQ_START_TOKEN);
	it->batch_pos = ++*pos;
	return it->n ? it : NULL;
}

static const struct seq_operations ion_heap_sops = {
	.start = ion_heap_start,
	.next = ion_heap_next,
	.stop = ion_debugfs_stop,
	.show = ion_debugfs_show,
};

static int ion_heap_open(struct inode *inode, struct file *file)
{
	struct ion_heap *heap = inode->i_private;
	struct ion_debugfs_iter *it;

	if (heap->owner && !try_module_get(heap->owner))
		return -ENODEV;
	it = __seq_open_private(file, &ion_heap_sops, sizeof(*it));
	if (!it)
		goto err_put_module;
	it->cursor = kzalloc(sizeof(*it->cursor), GFP_KERNEL);
	if (!it->cursor)
		goto err_release;
	INIT_LIST_HEAD(&it->cursor->heap_node);
	it->obj = heap;
	it->view = &ion_heap_view;
	ion_heap_core_get(heap);
	return 0;

err_release:
	seq_release_private(inode, file);
err_put_module:
	if (heap->owner)
		module_put(heap->owner);
	return -ENOMEM;
}

static int ion_heap_release(struct inode *inode, struct file *file)
{
	struct seq_file *s = file->private_data;
	struct ion_debugfs_iter *it = s->private;
	struct ion_heap *heap = it->obj;

	spin_lock(&ion_dev.stats_lock);
	list_del(&it->cursor->heap_node);
	spin_unlock(&ion_dev.stats_lock);
	kfree(it->cursor);
	ion_heap_core_put(heap);
	if (heap->owner)
		module_put(heap->owner);
	return seq_release_private(inode, file);
}

const struct file_operations ion_heap_fops = {
	.owner = THIS_MODULE,
	.open = ion_heap_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = ion_heap_release,
};
