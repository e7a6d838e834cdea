/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion: what the debugfs views share (ion_debugfs.c, ion_debugfs_heap.c):
 * the records a long view copies under its lock and shows after it, and
 * the reader's iterator.
 */
#ifndef _ION_DEBUGFS_PRIV_H
#define _ION_DEBUGFS_PRIV_H

#include <linux/dma-buf.h>
#include <linux/seq_file.h>
#include <uapi/linux/dma-buf.h>

#include "ion_priv.h"

#define ION_DEBUGFS_BATCH	16
/* The devices column of heaps/<name>: longer lists end in "...". */
#define ION_DEBUGFS_DEVICES_LEN	128
/* Longest "detail" of a buffer row (a heap's debug_buffer op), with NUL. */
#define ION_DEBUGFS_DETAIL_LEN	256

/* A heap's buffer, as heaps/<name> shows it. */
struct ion_debugfs_buffer {
	u64 id;
	unsigned long ino;
	size_t size;
	unsigned long flags;
	int handles;
	unsigned int attachments;
	char owner[ION_CLIENT_NAME_LEN];
	char name[DMA_BUF_NAME_LEN];
	bool orphan;
	char devices[ION_DEBUGFS_DEVICES_LEN];
	char detail[ION_DEBUGFS_DETAIL_LEN];
};

/* A client's handle, as clients/<name> shows it. */
struct ion_debugfs_handle {
	int id;
	unsigned int refcount;
	u64 buffer;
	unsigned long ino;
	size_t size;
	char heap[ION_MAX_HEAP_NAME];
};

union ion_debugfs_rec {
	struct ion_debugfs_buffer buffer;
	struct ion_debugfs_handle handle;
};

/**
 * struct ion_debugfs_view - what a long view shows
 * @header: prints the view's head (counters, column names)
 * @copy:   copies an entry of the xarray into a record, under its lock
 *	    (xarray views only)
 * @show:   prints one record
 */
struct ion_debugfs_view {
	void (*header)(struct seq_file *s, void *obj);
	void (*copy)(union ion_debugfs_rec *rec, void *entry);
	void (*show)(struct seq_file *s, const union ion_debugfs_rec *rec);
};

/**
 * struct ion_debugfs_iter - a reader of a long view
 * @obj:   the heap or client the file shows
 * @xa:	   the xarray walked
 * @view:  what it shows
 * @next:  index of the entry after the batch in @recs
 * @n:	   records in @recs
 * @cursor: heaps/<name>: a buffer that is no buffer (no dma-buf), kept in
 *	   the heap's list just after the batch in @recs
 * @batch_pos: heaps/<name>: the seq_file position of the batch in @recs
 * @recs:  the batch, copied under @xa's lock and shown after it
 */
struct ion_debugfs_iter {
	void *obj;
	struct xarray *xa;
	const struct ion_debugfs_view *view;
	unsigned long next;
	unsigned int n;
	struct ion_core_buffer *cursor;
	loff_t batch_pos;
	union ion_debugfs_rec recs[ION_DEBUGFS_BATCH];
};

static inline void ion_debugfs_stop(struct seq_file *s, void *v)
{
}

static inline int ion_debugfs_show(struct seq_file *s, void *v)
{
	struct ion_debugfs_iter *it = s->private;
	unsigned int i;

	if (v == SEQ_START_TOKEN) {
		it->view->header(s, it->obj);
		return 0;
	}
	for (i = 0; i < it->n; i++)
		it->view->show(s, &it->recs[i]);
	return 0;
}

/* heaps/<name> (ion_debugfs_heap.c) */
extern const struct file_operations ion_heap_fops;

#endif /* _ION_DEBUGFS_PRIV_H */
