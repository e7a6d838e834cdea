/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion: the core's own objects.  Only kernel/core/ includes this header;
 * heaps see ion_heap.h and nothing else.
 */
#ifndef _ION_PRIV_H
#define _ION_PRIV_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/percpu-rwsem.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>

#include "ion_heap.h"

struct dentry;
struct dma_buf;
struct file;
struct ion_heap_node;
struct ion_quota_uid;
struct mm_struct;
struct pid;
struct vm_area_struct;

/*
 * The mode of /dev/ion and of every /dev/dma_heap/ion-* node: mainline's
 * for dma-heap nodes, root only.  Allocating pins memory, so who else may
 * is the administrator's choice: udev/60-ion.rules grants it per node to
 * a group (Documentation/ion.rst, "Who may allocate").
 */
#define ION_DEV_MODE		0600

/* Longest client name, including the terminating NUL. */
#define ION_CLIENT_NAME_LEN	64

/**
 * struct ion_stats - allocation accounting of one heap or of the device
 * @buffers:	    live buffers
 * @bytes:	    bytes in live buffers
 * @peak_bytes:	    high-water mark of @bytes
 * @allocs:	    successful allocations so far
 * @alloc_failures: failed allocation attempts so far
 * @quota_refusals: allocations refused for a quota (ion_quota.c)
 *
 * Protected by &ion_device.stats_lock; changed only in ion_buffer.c and,
 * for @quota_refusals, ion_quota.c.
 */
struct ion_stats {
	u64 buffers;
	u64 bytes;
	u64 peak_bytes;
	u64 allocs;
	u64 alloc_failures;
	u64 quota_refusals;
};

/*
 * The /dev/dma_heap/ion-* nodes of one heap (ion_heap_nodes.c): the plain
 * node allocates cached buffers, the "-uncached" one uncached buffers.
 */
#define ION_HEAP_NODE_CACHED	0
#define ION_HEAP_NODE_UNCACHED	1
#define ION_HEAP_NODES		2

/*
 * Minors of the ion_dma_heap major: two per heap id for the ion-* nodes,
 * then one per mainline name ion may offer (ion_heap_aliases.c).
 */
#define ION_HEAP_NODE_MINORS	(ION_NUM_HEAP_IDS * ION_HEAP_NODES)
#define ION_HEAP_ALIAS_MINORS	8
#define ION_HEAP_NODE_ALL_MINORS (ION_HEAP_NODE_MINORS + ION_HEAP_ALIAS_MINORS)

/**
 * struct ion_heap_core - the core's per-heap state (&ion_heap.core)
 * @stats:   the heap's accounting, under &ion_device.stats_lock
 * @buffers: live buffers from this heap (&ion_core_buffer.heap_node), in
 *	     the order they went live, and the cursors of debugfs readers;
 *	     under &ion_device.stats_lock, taken with the counters anyway.
 *	     A buffer leaves it before it is freed, so a debugfs reader
 *	     holding the lock may look at the buffers it finds; readers hold
 *	     it for a bounded batch of entries only (ion_debugfs_heap.c)
 * @uids:    bytes of live buffers per user (uid -> struct ion_quota_uid),
 *	     counters under &ion_device.stats_lock (ion_quota.c)
 * @debugfs: the heap's file in heaps/
 * @nodes:   the heap's /dev/dma_heap/ nodes, indexed by
 *	     ION_HEAP_NODE_CACHED / ION_HEAP_NODE_UNCACHED; set and cleared
 *	     under &ion_device.heap_lock held for writing
 * @ref:     held by the heap's registration, by each buffer backed by the
 *	     heap and not yet given back (from the heap's allocate to its
 *	     free), by each open debugfs file of the heap and by each
 *	     ION_IOC_CUSTOM call in its op (ion_heap_core_get())
 * @heap:    the heap this is the state of
 * @removed: ion_device_remove_heap() ran, under &ion_device.heap_lock
 *
 * Lives from ion_device_add_heap() until the heap is removed and the
 * last of @ref's other holders is gone: the last reference frees it, and
 * clears &ion_heap.core under &ion_device.stats_lock (ion_heap_core_put()).
 */
struct ion_heap_core {
	struct ion_stats stats;
	struct list_head buffers;
	struct xarray uids;
	struct dentry *debugfs;
	struct ion_heap_node *nodes[ION_HEAP_NODES];
	struct kref ref;
	struct ion_heap *heap;
	bool removed;
};

/**
 * struct ion_device - the one ion device behind /dev/ion
 * @misc:	  the misc device
 * @heap_lock:	  protects @heaps and @heap_count; read for allocation,
 *		  queries and custom ioctls, written by heap add/remove (a
 *		  per-CPU rw semaphore: taking it for reading is a per-CPU
 *		  increment, while writers, rare, wait for an RCU grace period)
 * @heaps:	  registered heaps, sorted by id, highest first (priority
 *		  order), under @heap_lock
 * @heap_count:	  entries in @heaps; written under @heap_lock and
 *		  @stats_lock, so either one is enough to read it
 * @held_ids:	  ids of removed heaps whose core state lives on (their
 *		  buffers): no other heap takes such an id meanwhile, as
 *		  per-id counts (a client's) would mix the two heaps; set at
 *		  removal under @heap_lock, cleared with the core
 * @client_lock:  protects @clients, @client_count, @orphans and client
 *		  names; the last reference of a client, and of an owner, is
 *		  dropped under it
 * @clients:	  every live client, user and kernel
 * @client_count: entries in @clients
 * @orphans:	  owners of gone user clients with buffers still alive, for
 *		  their process's next client (ion_owner.c), under
 *		  @client_lock
 * @stats_lock:	  protects @stats and every heap's &ion_heap_core.stats
 *		  and buffer list; a spinlock that is never held across
 *		  anything that sleeps
 * @stats:	  totals over all heaps
 * @next_buffer_id: last buffer id handed out
 * @debug_root:	  /sys/kernel/debug/ion
 * @debug_heaps:  .../heaps
 * @debug_clients: .../clients
 */
struct ion_device {
	struct miscdevice misc;

	struct percpu_rw_semaphore heap_lock;	/* the heap list */
	struct list_head heaps;
	unsigned int heap_count;
	DECLARE_BITMAP(held_ids, ION_NUM_HEAP_IDS);

	struct mutex client_lock;	/* clients, names, last client put */
	struct list_head clients;
	unsigned int client_count;
	struct list_head orphans;

	spinlock_t stats_lock;		/* accounting, heap buffer lists */
	struct ion_stats stats;
	atomic64_t next_buffer_id;

	struct dentry *debug_root;
	struct dentry *debug_heaps;
	struct dentry *debug_clients;
};

/* The device; there is exactly one (ion_dev.c). */
extern struct ion_device ion_dev;

/* ion_dev.c */
int ion_device_init(struct ion_device *dev);
void ion_device_destroy(struct ion_device *dev);

/* ion_ioctl.c: the file operations' ioctls of /dev/ion (ion_dev.c) */
long ion_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
long ion_compat_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/**
 * struct ion_core_buffer - a buffer: the heap's view plus the core's state
 * @base:	  what the heap sees (ion_heap.h); @base.sg_table is the
 *		  backing as CPU pages
 * @dev:	  the device
 * @id:		  global buffer id, shown in debugfs
 * @heap_node:	  entry in &ion_heap_core.buffers, under
 *		  &ion_device.stats_lock
 * @dmabuf:	  the one dma-buf of this buffer
 * @ino:	  inode number of the dma-buf's file, shown in debugfs
 * @owner:	  name of the client that allocated it (a reference: the
 *		  buffer may outlive the client)
 * @handle_count: clients holding a handle to this buffer
 * @lock:	  protects @attachments, @attach_count, @kmap_count, @vaddr,
 *		  @map_count, @mmap_count, @pin_count, @phys_pinned and the
 *		  lazy setup (or move) of @base.sg_table through the heap
 * @attachments:  &struct ion_attachment of every attached device; changed
 *		  under @lock and &ion_device.stats_lock both, so either is
 *		  enough to walk it (debugfs walks it under the spinlock)
 * @attach_count: entries in @attachments (read locklessly by debugfs and
 *		  by the CPU access of an uncached buffer)
 * @kmap_count:	  users of the kernel mapping @vaddr
 * @vaddr:	  the kernel mapping, while @kmap_count > 0
 * @map_count:	  attachments DMA-mapped, or being mapped or unmapped
 * @mmap_count:	  user mappings (VMAs) of the buffer
 * @pin_count:	  kernel clients' handles holding a copy of the sg table
 * @phys_pinned:  ion_phys() gave the physical address out (for good)
 * @heap_mapped_dma: @base.sg_table came from the heap's map_dma
 * @uid:	  the user charged for the buffer (ion_quota.c)
 * @quota:	  that user's counter in the heap (ion_quota.c), which lives
 *		  as long as the heap's &ion_heap_core
 * @oom_mm:	  the address space whose RSS counts the buffer, or NULL
 *		  (ion_oom.c); a reference (mmgrab()) while set
 * @one_table:	  the table of a single-chunk buffer, see
 *		  ion_buffer_one_chunk(): heaps with one chunk per buffer
 *		  allocate no table of their own
 * @one_sg:	  its one entry
 *
 * Lifetime: a buffer lives exactly as long as its dma-buf.  It is created
 * by ion_buffer_create() together with the dma-buf and freed only by the
 * dma-buf's release op, when the last reference to the dma-buf file goes
 * (fds, handles, attachments and mappings all hold one).  Each buffer
 * pins its heap's module, and through the dma-buf, ion.ko.
 */
struct ion_core_buffer {
	struct ion_buffer base;
	struct ion_device *dev;
	u64 id;
	struct list_head heap_node;
	struct dma_buf *dmabuf;
	unsigned long ino;
	struct ion_owner *owner;
	atomic_t handle_count;

	struct mutex lock;		/* attachments, kernel mapping */
	struct list_head attachments;
	unsigned int attach_count;
	unsigned int kmap_count;
	void *vaddr;
	unsigned int map_count;
	unsigned int mmap_count;
	unsigned int pin_count;
	bool phys_pinned;
	bool heap_mapped_dma;
	kuid_t uid;
	struct ion_quota_uid *quota;
	struct mm_struct *oom_mm;
	struct sg_table one_table;
	struct scatterlist one_sg;
};

static inline bool ion_buffer_cached(const struct ion_core_buffer *buffer)
{
	return buffer->base.flags & ION_FLAG_CACHED;
}

static inline struct ion_core_buffer *to_core_buffer(struct ion_buffer *b)
{
	return container_of(b, struct ion_core_buffer, base);
}

/**
 * struct ion_client_heap_stat - what a client holds of one heap
 * @name:    the heap's name, valid while @handles > 0 (a handle pins a
 *	     buffer, which pins its heap)
 * @handles: handles to buffers of this heap
 * @bytes:   size of the buffers behind them
 */
struct ion_client_heap_stat {
	const char *name;
	unsigned int handles;
	u64 bytes;
};

#include "ion_owner.h"

/**
 * struct ion_client - a user process or a kernel driver using ion
 * @ref:	the client's references: one per /dev/ion file of the
 *		process, or the kernel driver's one from ion_client_create()
 * @dev:	the device
 * @node:	entry in &ion_device.clients, under &ion_device.client_lock
 * @pid:	thread group of a user client (a reference), NULL for kernel
 *		clients
 * @mm:		a user client's address space (mmgrab(), compared only):
 *		with @pid, which process image it serves (a new one after
 *		execve()), NULL for kernel clients
 * @heap_mask:	heaps this client may allocate from
 * @owner:	its unique name: "<comm>-<tgid>" or the driver's name, with
 *		"-<n>" appended when taken
 * @debugfs:	the client's file in clients/
 * @lock:	protects @handles, @next_id, @serials, @by_buffer,
 *		@heap_stats, @handle_count, @bytes and the count and kernel
 *		mappings of every handle
 * @handles:	handle id -> &struct ion_handle, ids from 1; its xa_lock is
 *		also held to change it and @heap_stats, @handle_count and
 *		@bytes, so debugfs reads all of them under that spinlock
 * @next_id:	where the cyclic search for a free handle id starts
 * @serials:	handles the client ever made (each one's &ion_handle.serial)
 * @by_buffer:	&struct ion_handle by buffer, so a client never holds two
 *		handles to one buffer
 * @handle_count: entries in @handles
 * @bytes:	size of the buffers behind @handles
 * @heap_stats:	@handle_count and @bytes per heap id
 *
 * Lifetime: a user client is found by its thread group at open and lives
 * until the last /dev/ion file bound to it is closed; a kernel client
 * until ion_client_destroy().  Its handles go with it.
 */
struct ion_client {
	struct kref ref;
	struct ion_device *dev;
	struct list_head node;
	struct pid *pid;
	struct mm_struct *mm;
	unsigned int heap_mask;
	struct ion_owner *owner;
	struct dentry *debugfs;

	struct mutex lock;		/* handles and their counts */
	struct xarray handles;
	u32 next_id;
	u64 serials;
	struct rb_root by_buffer;
	unsigned int handle_count;
	u64 bytes;
	struct ion_client_heap_stat heap_stats[ION_NUM_HEAP_IDS];
};

/**
 * struct ion_handle - a client's counted reference to a buffer
 * @ref:	 the handle's count: raised by importing a buffer the client
 *		 already holds, dropped by FREE / ion_free()
 * @client:	 the client holding it
 * @buffer:	 the buffer; the handle holds one reference to its dma-buf
 * @id:		 the id user space sees, > 0
 * @serial:	 unique in its client, unlike @id (cyclic, reused after a
 *		 wrap): tells a handle from a later one with its id
 * @node:	 entry in &ion_client.by_buffer
 * @kmap_count:	 ion_map_kernel() calls not yet undone
 * @sgt:	 the handle's own copy of the buffer's sg table
 *		 (ion_sg_table()), or NULL; freed with the handle
 *
 * Everything here is under &ion_client.lock.  The handle goes when its
 * count drops to 0 or its client dies, and takes its kernel mappings, its
 * sg table and its dma-buf reference with it.
 */
struct ion_handle {
	struct kref ref;
	struct ion_client *client;
	struct ion_core_buffer *buffer;
	int id;
	u64 serial;
	struct rb_node node;
	unsigned int kmap_count;
	struct sg_table *sgt;
};

/* ion_buffer.c, ion_buffer_access.c */
struct ion_core_buffer *ion_buffer_create(struct ion_device *dev,
					  struct ion_owner *owner, u64 len,
					  unsigned long align,
					  unsigned int heap_mask,
					  unsigned int flags);
struct ion_core_buffer *ion_buffer_create_in(struct ion_device *dev,
					     struct ion_owner *owner, u64 len,
					     struct ion_heap *const *heap,
					     unsigned int flags,
					     unsigned int file_flags);
void ion_buffer_release(struct dma_buf *dmabuf);
struct sg_table *__ion_buffer_sg_table(struct ion_core_buffer *buffer);
struct sg_table *ion_buffer_sg_table(struct ion_core_buffer *buffer);
bool ion_buffer_mapped(struct ion_core_buffer *buffer);
struct sg_table *ion_buffer_sg_table_copy(struct ion_core_buffer *buffer);
void ion_buffer_sg_table_put(struct ion_core_buffer *buffer,
			     struct sg_table *sgt);
int ion_buffer_move(struct ion_core_buffer *buffer, struct device *dev);
int ion_buffer_back_lazy(struct ion_core_buffer *buffer);
void *ion_buffer_kmap(struct ion_core_buffer *buffer);
void ion_buffer_kunmap(struct ion_core_buffer *buffer);
int ion_buffer_phys(struct ion_core_buffer *buffer, phys_addr_t *addr,
		    size_t *len);
void ion_stats_read(struct ion_device *dev, struct ion_heap *heap,
		    struct ion_stats *out);

/* ion_quota.c */
int ion_quota_charge(struct ion_heap *heap, struct ion_core_buffer *buffer);
void ion_quota_uncharge(struct ion_heap *heap, struct ion_core_buffer *buffer);
void ion_quota_uncharge_locked(struct ion_heap *heap,
			       struct ion_core_buffer *buffer);
void ion_quota_heap_exit(struct ion_heap_core *core);
void ion_quota_debugfs_init(struct ion_device *dev);

/* ion_oom.c */
void ion_oom_charge(struct ion_core_buffer *buffer);
void ion_oom_uncharge(struct ion_core_buffer *buffer);
int ion_oom_init(void);
void ion_oom_exit(void);

/* ion_heap.c */
void ion_heap_core_get(struct ion_heap *heap);
void ion_heap_core_put(struct ion_heap *heap);
int ion_heap_query(struct ion_device *dev, struct ion_heap_data __user *out,
		   u32 *cnt);
long ion_heap_custom_ioctl(struct ion_device *dev, unsigned int cmd,
			   unsigned long arg);

/* ion_dmabuf.c: the ops of every dma-buf ion exports (ion_buffer.c) */
extern const struct dma_buf_ops ion_dmabuf_ops;
struct ion_core_buffer *ion_dmabuf_to_buffer(struct dma_buf *dmabuf);
int ion_dmabuf_sync_fd(int fd);
void ion_dmabuf_devices(struct ion_core_buffer *buffer, char *buf,
			size_t len);

void ion_dmabuf_drop_tables(struct ion_core_buffer *buffer);
/* ion_dmabuf_mmap.c: dma_buf_ops.mmap (ion_dmabuf.c) */
int ion_dmabuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma);

/*
 * ION_IOC_IMPORT (and the kernel API's imports) raise a client's handle to
 * a buffer it holds at most to this count: beyond, -EOVERFLOW.
 */
#define ION_HANDLE_MAX_COUNT	65536

/**
 * struct ion_handle_tag - a handle as its creator saw it, under the lock
 * @id:	    &ion_handle.id, for user space
 * @serial: &ion_handle.serial, to find that very handle again by @id
 */
struct ion_handle_tag {
	int id;
	u64 serial;
};

/* ion_client.c */
struct ion_client *ion_client_get_user(struct ion_device *dev);
struct ion_client *ion_client_new(struct ion_device *dev,
				  unsigned int heap_mask, const char *name);
void ion_client_put(struct ion_client *client);
struct ion_handle *ion_handle_add(struct ion_client *client,
				  struct ion_core_buffer *buffer,
				  struct ion_handle_tag *tag);
struct ion_handle *ion_handle_find(struct ion_client *client, int id);
struct sg_table *ion_handle_sg_table(struct ion_handle *handle);
void ion_handle_put(struct ion_handle *handle);
struct ion_handle *ion_client_alloc(struct ion_client *client, u64 len,
				    unsigned long align,
				    unsigned int heap_mask,
				    unsigned int flags,
				    struct ion_handle_tag *tag);
struct ion_handle *ion_client_import(struct ion_client *client, int fd,
				     struct ion_handle_tag *tag);

/* ion_dmabuf_sg.c */
int ion_sg_table_dup(const struct sg_table *src, struct sg_table *dst,
		     struct device *dev);
int ion_sg_table_export(const struct sg_table *mapped, struct sg_table *out);

/* ion_heap_nodes.c */
int ion_heap_nodes_init(void);
void ion_heap_nodes_exit(void);
int ion_heap_nodes_add(struct ion_device *dev, struct ion_heap *heap);
void ion_heap_nodes_publish(struct ion_device *dev);
void ion_heap_nodes_remove(struct ion_device *dev, struct ion_heap *heap);
struct ion_heap_node *ion_heap_node_create(struct ion_heap *heap,
					   const char *name,
					   unsigned int which,
					   unsigned int minor);
void ion_heap_node_destroy(struct ion_heap_node *node);

/* ion_heap_aliases.c */
void ion_heap_aliases_add(struct ion_device *dev, struct ion_heap *heap);
void ion_heap_aliases_remove(struct ion_device *dev, struct ion_heap *heap);

/* ion_debugfs.c */
void ion_debugfs_init(struct ion_device *dev);
void ion_debugfs_exit(struct ion_device *dev);
void ion_debugfs_add_heap(struct ion_device *dev, struct ion_heap *heap);
void ion_debugfs_add_client(struct ion_device *dev,
			    struct ion_client *client);

#endif /* _ION_PRIV_H */
