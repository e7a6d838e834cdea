// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the tracepoints' definitions (kernel/include/trace/ion_trace.h),
 * and what their records read of a buffer.
 */
#include <linux/device.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/scatterlist.h>

#include "ion_priv.h"

/* What the events read, for an alloc's ERR_PTR too; only under the key. */
static const char *ion_trace_heap_name(const struct ion_core_buffer *buffer)
{
	return IS_ERR(buffer) ? "-" : buffer->base.heap->name;
}

static const char *ion_trace_owner_name(const struct ion_owner *owner)
{
	return owner ? owner->name : "-";
}

static const char *
ion_trace_buffer_owner(const struct ion_core_buffer *buffer)
{
	return ion_trace_owner_name(buffer->owner);
}

static void ion_trace_buffer_ids(const struct ion_core_buffer *buffer,
				 u64 *size, u64 *id, unsigned long *ino)
{
	*size = buffer->base.size;
	*id = buffer->id;
	*ino = buffer->ino;
}

static void ion_trace_alloc_result(const struct ion_core_buffer *buffer,
				   int *heap_id, int *ret, u64 *id,
				   unsigned long *ino)
{
	u64 size;

	if (IS_ERR(buffer)) {
		*heap_id = -1;
		*ret = PTR_ERR(buffer);
		*id = 0;
		*ino = 0;
		return;
	}
	*heap_id = buffer->base.heap->id;
	*ret = 0;
	ion_trace_buffer_ids(buffer, &size, id, ino);
}

#define CREATE_TRACE_POINTS
#include "trace/ion_trace.h"
