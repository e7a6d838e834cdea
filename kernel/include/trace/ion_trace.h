/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion: tracepoints, event group "ion" (Documentation/ion.rst, "Tracing").
 *
 * Every event is a tracepoint: a static key, so a disabled event costs a
 * not-taken branch and nothing is computed for it.  The core's events take
 * a struct ion_core_buffer, the heaps' events plain values, so that a heap
 * including this header sees no core internals.  The events are created
 * in kernel/core/ion_trace.c, the one file that defines
 * CREATE_TRACE_POINTS.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ion

#if !defined(_ION_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _ION_TRACE_H

#include <linux/dma-direction.h>
#include <linux/tracepoint.h>
#include <linux/types.h>

#include "ion_compat.h"

struct device;
struct ion_core_buffer;
struct ion_owner;
struct sg_table;
struct vm_area_struct;

/**
 * DOC: tracepoints
 *
 * Event group ``ion``, in tracefs under ``events/ion/``:
 *
 * - ``ion_alloc``: every allocation through /dev/ion, a dma-heap node or
 *   the kernel API, refused ones included: heap (``-`` when none backed
 *   it), heap id, the mask asked for, size, flags, the client and the
 *   caller's pid, the result (0 or -errno), the buffer's id and dma-buf
 *   inode (as in debugfs) and the latency in nanoseconds, measured only
 *   while the event is enabled.
 * - ``ion_free``: a buffer's release.
 * - ``ion_attach``, ``ion_detach``: a device attaches, by dev_name().
 * - ``ion_map``, ``ion_unmap``: an attachment's DMA mapping: direction,
 *   mapped entries (nents) and table entries (orig_nents).
 * - ``ion_mmap``: a user mapping: pid, address, length, page offset.
 * - ``ion_cpu_access_begin``, ``ion_cpu_access_end``: DMA_BUF_IOCTL_SYNC
 *   and the kernel's dma_buf_begin/end_cpu_access().
 * - ``ion_quota_refusal``: a heap refused by a quota (ion_quota.c).
 * - ``ion_memcg_refusal``: a heap's -ENOMEM caused by the caller's memory
 *   cgroup limit (kernel/heaps/ion_memcg.c).
 * - ``ion_pool_refill``, ``ion_pool_drain``: a clean chunk goes into a
 *   page pool, or an allocation takes one out.
 * - ``ion_pool_shrink``: the pools' shrinker (reclaim, drop_caches) ran.
 *
 * - ``ion_backing``: a deferred heap's backing chosen (delayed
 *   allocation): ``cause=first_use`` at the first use that needs memory
 *   (map_dma), ``cause=move`` when a device attaching late moves it (with
 *   that device's name; ``dev=-`` otherwise); heap, buffer id and ino,
 *   size, the result (0 or -errno) and the latency in nanoseconds
 *   (measured only while the event is enabled), then the heap's own line
 *   on the buffer as its debugfs ``detail`` column shows it (the auto
 *   heap's: the backing chosen, the attached devices' smallest DMA mask
 *   and other constraints, why, and the constraint a failure did not
 *   meet).  The core fires it, so that a heap needs no buffer ids.
 */

TRACE_DEFINE_ENUM(DMA_BIDIRECTIONAL);
TRACE_DEFINE_ENUM(DMA_TO_DEVICE);
TRACE_DEFINE_ENUM(DMA_FROM_DEVICE);
TRACE_DEFINE_ENUM(DMA_NONE);

#define ion_show_dir(dir)						\
	__print_symbolic(dir,						\
			 { DMA_BIDIRECTIONAL, "bidirectional" },	\
			 { DMA_TO_DEVICE, "to_device" },		\
			 { DMA_FROM_DEVICE, "from_device" },		\
			 { DMA_NONE, "none" })

TRACE_EVENT(ion_alloc,
	TP_PROTO(const struct ion_core_buffer *buffer,
		 const struct ion_owner *owner, u64 len,
		 unsigned int heap_mask, unsigned int flags, u64 latency_ns),
	TP_ARGS(buffer, owner, len, heap_mask, flags, latency_ns),
	TP_STRUCT__entry(
		__string(heap, ion_trace_heap_name(buffer))
		__string(client, ion_trace_owner_name(owner))
		__field(int, heap_id)
		__field(unsigned int, heap_mask)
		__field(u64, size)
		__field(unsigned int, flags)
		__field(pid_t, pid)
		__field(int, ret)
		__field(u64, id)
		__field(unsigned long, ino)
		__field(u64, latency_ns)
	),
	TP_fast_assign(
		ion_trace_assign_str(heap, ion_trace_heap_name(buffer));
		ion_trace_assign_str(client, ion_trace_owner_name(owner));
		ion_trace_alloc_result(buffer, &__entry->heap_id,
				       &__entry->ret, &__entry->id,
				       &__entry->ino);
		__entry->heap_mask = heap_mask;
		__entry->size = len;
		__entry->flags = flags;
		__entry->pid = current->tgid;
		__entry->latency_ns = latency_ns;
	),
	TP_printk("heap=%s heap_id=%d mask=0x%x size=%llu flags=0x%x client=%s pid=%d ret=%d id=%llu ino=%lu latency_ns=%llu",
		  __get_str(heap), __entry->heap_id, __entry->heap_mask,
		  __entry->size, __entry->flags, __get_str(client),
		  __entry->pid, __entry->ret, __entry->id, __entry->ino,
		  __entry->latency_ns)
);

TRACE_EVENT(ion_free,
	TP_PROTO(const struct ion_core_buffer *buffer),
	TP_ARGS(buffer),
	TP_STRUCT__entry(
		__string(heap, ion_trace_heap_name(buffer))
		__string(client, ion_trace_buffer_owner(buffer))
		__field(u64, size)
		__field(u64, id)
		__field(unsigned long, ino)
	),
	TP_fast_assign(
		ion_trace_assign_str(heap, ion_trace_heap_name(buffer));
		ion_trace_assign_str(client, ion_trace_buffer_owner(buffer));
		ion_trace_buffer_ids(buffer, &__entry->size, &__entry->id,
				     &__entry->ino);
	),
	TP_printk("heap=%s size=%llu client=%s id=%llu ino=%lu",
		  __get_str(heap), __entry->size, __get_str(client),
		  __entry->id, __entry->ino)
);

DECLARE_EVENT_CLASS(ion_attach_class,
	TP_PROTO(const struct ion_core_buffer *buffer,
		 const struct device *dev),
	TP_ARGS(buffer, dev),
	TP_STRUCT__entry(
		__string(dev, dev_name(dev))
		__field(u64, size)
		__field(u64, id)
		__field(unsigned long, ino)
	),
	TP_fast_assign(
		ion_trace_assign_str(dev, dev_name(dev));
		ion_trace_buffer_ids(buffer, &__entry->size, &__entry->id,
				     &__entry->ino);
	),
	TP_printk("dev=%s size=%llu id=%llu ino=%lu", __get_str(dev),
		  __entry->size, __entry->id, __entry->ino)
);

DEFINE_EVENT(ion_attach_class, ion_attach,
	TP_PROTO(const struct ion_core_buffer *buffer,
		 const struct device *dev),
	TP_ARGS(buffer, dev));

DEFINE_EVENT(ion_attach_class, ion_detach,
	TP_PROTO(const struct ion_core_buffer *buffer,
		 const struct device *dev),
	TP_ARGS(buffer, dev));

DECLARE_EVENT_CLASS(ion_map_class,
	TP_PROTO(const struct ion_core_buffer *buffer,
		 const struct device *dev, enum dma_data_direction dir,
		 const struct sg_table *sgt),
	TP_ARGS(buffer, dev, dir, sgt),
	TP_STRUCT__entry(
		__string(dev, dev_name(dev))
		__field(u64, size)
		__field(u64, id)
		__field(unsigned long, ino)
		__field(int, dir)
		__field(unsigned int, nents)
		__field(unsigned int, orig_nents)
	),
	TP_fast_assign(
		ion_trace_assign_str(dev, dev_name(dev));
		ion_trace_buffer_ids(buffer, &__entry->size, &__entry->id,
				     &__entry->ino);
		__entry->dir = dir;
		__entry->nents = sgt->nents;
		__entry->orig_nents = sgt->orig_nents;
	),
	TP_printk("dev=%s dir=%s nents=%u orig_nents=%u size=%llu id=%llu ino=%lu",
		  __get_str(dev), ion_show_dir(__entry->dir), __entry->nents,
		  __entry->orig_nents, __entry->size, __entry->id,
		  __entry->ino)
);

DEFINE_EVENT(ion_map_class, ion_map,
	TP_PROTO(const struct ion_core_buffer *buffer,
		 const struct device *dev, enum dma_data_direction dir,
		 const struct sg_table *sgt),
	TP_ARGS(buffer, dev, dir, sgt));

DEFINE_EVENT(ion_map_class, ion_unmap,
	TP_PROTO(const struct ion_core_buffer *buffer,
		 const struct device *dev, enum dma_data_direction dir,
		 const struct sg_table *sgt),
	TP_ARGS(buffer, dev, dir, sgt));

TRACE_EVENT(ion_backing,
	TP_PROTO(const struct ion_core_buffer *buffer, const char *cause,
		 const struct device *dev, int ret, u64 latency_ns,
		 const char *detail),
	TP_ARGS(buffer, cause, dev, ret, latency_ns, detail),
	TP_STRUCT__entry(
		__string(heap, ion_trace_heap_name(buffer))
		__string(cause, cause)
		__string(dev, dev ? dev_name(dev) : "-")
		__string(detail, detail)
		__field(u64, size)
		__field(u64, id)
		__field(unsigned long, ino)
		__field(int, ret)
		__field(u64, latency_ns)
	),
	TP_fast_assign(
		ion_trace_assign_str(heap, ion_trace_heap_name(buffer));
		ion_trace_assign_str(cause, cause);
		ion_trace_assign_str(dev, dev ? dev_name(dev) : "-");
		ion_trace_assign_str(detail, detail);
		ion_trace_buffer_ids(buffer, &__entry->size, &__entry->id,
				     &__entry->ino);
		__entry->ret = ret;
		__entry->latency_ns = latency_ns;
	),
	TP_printk("heap=%s cause=%s dev=%s size=%llu id=%llu ino=%lu ret=%d latency_ns=%llu %s",
		  __get_str(heap), __get_str(cause), __get_str(dev),
		  __entry->size, __entry->id, __entry->ino, __entry->ret,
		  __entry->latency_ns, __get_str(detail))
);

TRACE_EVENT(ion_mmap,
	TP_PROTO(const struct ion_core_buffer *buffer,
		 const struct vm_area_struct *vma),
	TP_ARGS(buffer, vma),
	TP_STRUCT__entry(
		__field(u64, size)
		__field(u64, id)
		__field(unsigned long, ino)
		__field(pid_t, pid)
		__field(unsigned long, start)
		__field(unsigned long, len)
		__field(unsigned long, pgoff)
	),
	TP_fast_assign(
		ion_trace_buffer_ids(buffer, &__entry->size, &__entry->id,
				     &__entry->ino);
		__entry->pid = current->tgid;
		__entry->start = vma->vm_start;
		__entry->len = vma->vm_end - vma->vm_start;
		__entry->pgoff = vma->vm_pgoff;
	),
	TP_printk("pid=%d start=0x%lx len=%lu pgoff=%lu size=%llu id=%llu ino=%lu",
		  __entry->pid, __entry->start, __entry->len, __entry->pgoff,
		  __entry->size, __entry->id, __entry->ino)
);

DECLARE_EVENT_CLASS(ion_cpu_access_class,
	TP_PROTO(const struct ion_core_buffer *buffer,
		 enum dma_data_direction dir),
	TP_ARGS(buffer, dir),
	TP_STRUCT__entry(
		__field(u64, size)
		__field(u64, id)
		__field(unsigned long, ino)
		__field(pid_t, pid)
		__field(int, dir)
	),
	TP_fast_assign(
		ion_trace_buffer_ids(buffer, &__entry->size, &__entry->id,
				     &__entry->ino);
		__entry->pid = current->tgid;
		__entry->dir = dir;
	),
	TP_printk("dir=%s pid=%d size=%llu id=%llu ino=%lu",
		  ion_show_dir(__entry->dir), __entry->pid, __entry->size,
		  __entry->id, __entry->ino)
);

DEFINE_EVENT(ion_cpu_access_class, ion_cpu_access_begin,
	TP_PROTO(const struct ion_core_buffer *buffer,
		 enum dma_data_direction dir),
	TP_ARGS(buffer, dir));

DEFINE_EVENT(ion_cpu_access_class, ion_cpu_access_end,
	TP_PROTO(const struct ion_core_buffer *buffer,
		 enum dma_data_direction dir),
	TP_ARGS(buffer, dir));

TRACE_EVENT(ion_quota_refusal,
	TP_PROTO(const char *heap, unsigned int heap_id,
		 const struct ion_owner *owner, uid_t uid, u64 size,
		 u64 uid_bytes, u64 uid_limit, u64 client_bytes,
		 u64 client_limit),
	TP_ARGS(heap, heap_id, owner, uid, size, uid_bytes, uid_limit,
		client_bytes, client_limit),
	TP_STRUCT__entry(
		__string(heap, heap)
		__string(client, ion_trace_owner_name(owner))
		__field(unsigned int, heap_id)
		__field(uid_t, uid)
		__field(pid_t, pid)
		__field(u64, size)
		__field(u64, uid_bytes)
		__field(u64, uid_limit)
		__field(u64, client_bytes)
		__field(u64, client_limit)
	),
	TP_fast_assign(
		ion_trace_assign_str(heap, heap);
		ion_trace_assign_str(client, ion_trace_owner_name(owner));
		__entry->heap_id = heap_id;
		__entry->uid = uid;
		__entry->pid = current->tgid;
		__entry->size = size;
		__entry->uid_bytes = uid_bytes;
		__entry->uid_limit = uid_limit;
		__entry->client_bytes = client_bytes;
		__entry->client_limit = client_limit;
	),
	TP_printk("heap=%s heap_id=%u size=%llu uid=%u client=%s pid=%d uid_bytes=%llu uid_limit=%llu client_bytes=%llu client_limit=%llu",
		  __get_str(heap), __entry->heap_id, __entry->size,
		  __entry->uid, __get_str(client), __entry->pid,
		  __entry->uid_bytes, __entry->uid_limit,
		  __entry->client_bytes, __entry->client_limit)
);

TRACE_EVENT(ion_memcg_refusal,
	TP_PROTO(const char *heap, u64 size, u64 usage, u64 max),
	TP_ARGS(heap, size, usage, max),
	TP_STRUCT__entry(
		__string(heap, heap)
		__field(pid_t, pid)
		__field(u64, size)
		__field(u64, usage)
		__field(u64, max)
	),
	TP_fast_assign(
		ion_trace_assign_str(heap, heap);
		__entry->pid = current->tgid;
		__entry->size = size;
		__entry->usage = usage;
		__entry->max = max;
	),
	TP_printk("heap=%s size=%llu pid=%d usage=%llu max=%llu",
		  __get_str(heap), __entry->size, __entry->pid,
		  __entry->usage, __entry->max)
);

DECLARE_EVENT_CLASS(ion_pool_class,
	TP_PROTO(const char *pool, unsigned int order, bool cached,
		 bool charged, unsigned long pool_pages),
	TP_ARGS(pool, order, cached, charged, pool_pages),
	TP_STRUCT__entry(
		__string(pool, pool)
		__field(unsigned int, order)
		__field(bool, cached)
		__field(bool, charged)
		__field(unsigned long, pool_pages)
	),
	TP_fast_assign(
		ion_trace_assign_str(pool, pool);
		__entry->order = order;
		__entry->cached = cached;
		__entry->charged = charged;
		__entry->pool_pages = pool_pages;
	),
	TP_printk("pool=%s order=%u cached=%d charged=%d pool_pages=%lu",
		  __get_str(pool), __entry->order, __entry->cached,
		  __entry->charged, __entry->pool_pages)
);

DEFINE_EVENT(ion_pool_class, ion_pool_refill,
	TP_PROTO(const char *pool, unsigned int order, bool cached,
		 bool charged, unsigned long pool_pages),
	TP_ARGS(pool, order, cached, charged, pool_pages));

DEFINE_EVENT(ion_pool_class, ion_pool_drain,
	TP_PROTO(const char *pool, unsigned int order, bool cached,
		 bool charged, unsigned long pool_pages),
	TP_ARGS(pool, order, cached, charged, pool_pages));

TRACE_EVENT(ion_pool_shrink,
	TP_PROTO(const char *pool, unsigned long nr_to_scan,
		 unsigned long freed, unsigned long pool_pages),
	TP_ARGS(pool, nr_to_scan, freed, pool_pages),
	TP_STRUCT__entry(
		__string(pool, pool)
		__field(unsigned long, nr_to_scan)
		__field(unsigned long, freed)
		__field(unsigned long, pool_pages)
	),
	TP_fast_assign(
		ion_trace_assign_str(pool, pool);
		__entry->nr_to_scan = nr_to_scan;
		__entry->freed = freed;
		__entry->pool_pages = pool_pages;
	),
	TP_printk("pool=%s nr_to_scan=%lu freed=%lu pool_pages=%lu",
		  __get_str(pool), __entry->nr_to_scan, __entry->freed,
		  __entry->pool_pages)
);

#endif /* _ION_TRACE_H */

/* Out of tree: found as trace/ion_trace.h through the module's -I. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH trace
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ion_trace
#include <trace/define_trace.h>
