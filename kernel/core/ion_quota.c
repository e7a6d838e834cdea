// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: per-heap quotas, per user and per client.
 */
#include <linux/cred.h>
#include <linux/debugfs.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>

#include "ion_priv.h"
#include "trace/ion_trace.h"

/**
 * DOC: quotas
 *
 * Every heap has two limits on the bytes of live buffers: one per user
 * (the real uid of the allocating task) and one per client (the process,
 * or the kernel driver, that allocated them).  A buffer counts against
 * both from its allocation to its release, whoever holds it meanwhile:
 * passing the fd on does not free anyone's quota, and a process that
 * closes /dev/ion (or its heap node) keeping its buffers and opens it
 * again gets a client that still counts them (ion_owner.c, DOC: owners).
 * An allocation that
 * would go over either limit of a heap fails there with -EDQUOT (counted
 * as quota_refusals in the heap's debugfs file) and the request goes on
 * to the next heap of the mask, as it does for -ENOMEM.
 *
 * The limits are the module parameters uid_max_kb and client_max_kb,
 * arrays indexed by heap id (writable in /sys/module/ion/parameters/ and
 * settable at load, e.g. ion.uid_max_kb=-1,-1,8192: the carveout's, id 2,
 * at 8 MiB).  An entry of 0 means no limit; -1, the default, means: for
 * users, half the heap's &ion_heap.size, or half of RAM for heaps
 * without one, so that no one user takes the whole carveout; for
 * clients, no limit.  The DMA heap declares no size: on a kernel with CMA
 * its buffers come from the CMA area, whose size a module cannot learn
 * (nothing of mm/cma.c is exported), so set its entry (heap id 4) where
 * the area is small.  Root (uid 0) and kernel clients are not limited
 * unless the parameter quota_root is set; a kernel client's buffers count
 * as root's, whichever task it allocates from.  A change applies to the next
 * allocation; buffers already live stay.
 *
 * Usage is counted under &ion_device.stats_lock, so a check and its
 * charge are one step; a buffer leaves the counts as it leaves its heap's
 * buffer list on release, just before its memory goes back.  A user's
 * counter lives in the heap's &ion_heap_core.uids from the user's first
 * allocation until the heap's core state goes (the buffer keeps a
 * pointer to it, and a reference to that state).  debugfs's quota file
 * lists usage against the limits.
 */

static long uid_max_kb[ION_NUM_HEAP_IDS] = {
	[0 ... ION_NUM_HEAP_IDS - 1] = -1
};
module_param_array(uid_max_kb, long, NULL, 0644);
MODULE_PARM_DESC(uid_max_kb,
		 "per heap id: most KiB of live buffers one user may allocate (0: no limit, -1: half the heap's size or of RAM)");

static long client_max_kb[ION_NUM_HEAP_IDS] = {
	[0 ... ION_NUM_HEAP_IDS - 1] = -1
};
module_param_array(client_max_kb, long, NULL, 0644);
MODULE_PARM_DESC(client_max_kb,
		 "per heap id: most KiB of live buffers one client may allocate (0 or -1: no limit)");

static bool quota_root;
module_param(quota_root, bool, 0644);
MODULE_PARM_DESC(quota_root,
		 "limit root and kernel clients too (default: they are not limited)");

/* A user's bytes in one heap (&ion_heap_core.uids), under stats_lock. */
struct ion_quota_uid {
	u64 bytes;
};

/* The per-user limit of @heap in bytes, U64_MAX for none. */
static u64 ion_quota_uid_limit(const struct ion_heap *heap)
{
	long kb = READ_ONCE(uid_max_kb[heap->id]);
	u64 cap;

	if (kb > 0)
		return kb >= (long)(U64_MAX >> 10) ? U64_MAX : (u64)kb << 10;
	if (!kb)
		return U64_MAX;
	cap = heap->size ? heap->size : (u64)totalram_pages() << PAGE_SHIFT;
	return cap / 2;
}

static u64 ion_quota_client_limit(const struct ion_heap *heap)
{
	long kb = READ_ONCE(client_max_kb[heap->id]);

	if (kb <= 0 || kb >= (long)(U64_MAX >> 10))
		return U64_MAX;
	return (u64)kb << 10;
}

/* The counter of @uid in @core, created if missing. */
static struct ion_quota_uid *ion_quota_uid_get(struct ion_heap_core *core,
					       kuid_t uid)
{
	unsigned long index = __kuid_val(uid);
	struct ion_quota_uid *q, *old;

	q = xa_load(&core->uids, index);
	if (q)
		return q;
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return NULL;
	old = xa_cmpxchg(&core->uids, index, NULL, q, GFP_KERNEL);
	if (old) {
		kfree(q);
		return xa_is_err(old) ? NULL : old;
	}
	return q;
}

/* The ion_quota_refusal event: what was asked, what was used, the limits. */
static void ion_quota_trace_refusal(const struct ion_heap *heap,
				    const struct ion_core_buffer *buffer,
				    u64 uid_bytes, u64 client_bytes)
{
	if (!trace_ion_quota_refusal_enabled())
		return;
	trace_ion_quota_refusal(heap->name, heap->id, buffer->owner,
				__kuid_val(buffer->uid), buffer->base.size,
				uid_bytes, ion_quota_uid_limit(heap),
				client_bytes, ion_quota_client_limit(heap));
}

/**
 * ion_quota_charge() - count a buffer about to be backed by @heap
 * @heap:   the heap about to back it
 * @buffer: the buffer, with its size and owner set
 *
 * Context: Process context; may sleep (a user's first allocation from
 * @heap); takes &ion_device.stats_lock.
 * Return: 0 with the buffer counted, -EDQUOT when it would take its user
 * or its client over a limit of @heap, or -ENOMEM.
 */
int ion_quota_charge(struct ion_heap *heap, struct ion_core_buffer *buffer)
{
	struct ion_owner *owner = buffer->owner;
	u64 size = buffer->base.size;
	u64 uid_bytes, client_bytes;
	struct ion_quota_uid *q;
	bool limited;

	/* A kernel client's buffers are root's, not its caller's. */
	buffer->uid = owner->kernel ? GLOBAL_ROOT_UID : current_uid();
	q = ion_quota_uid_get(heap->core, buffer->uid);
	if (!q)
		return -ENOMEM;
	limited = READ_ONCE(quota_root) ||
		  (!owner->kernel && !uid_eq(buffer->uid, GLOBAL_ROOT_UID));

	spin_lock(&ion_dev.stats_lock);
	uid_bytes = q->bytes;
	client_bytes = owner->heap_bytes[heap->id];
	if (limited &&
	    (uid_bytes + size > ion_quota_uid_limit(heap) ||
	     client_bytes + size > ion_quota_client_limit(heap))) {
		heap->core->stats.quota_refusals++;
		spin_unlock(&ion_dev.stats_lock);
		ion_quota_trace_refusal(heap, buffer, uid_bytes, client_bytes);
		return -EDQUOT;
	}
	q->bytes += size;
	owner->heap_bytes[heap->id] += size;
	spin_unlock(&ion_dev.stats_lock);
	buffer->quota = q;
	return 0;
}

/**
 * ion_quota_uncharge_locked() - undo ion_quota_charge()
 * @heap:   the heap that was charged
 * @buffer: the buffer
 *
 * Context: &ion_device.stats_lock held.
 */
void ion_quota_uncharge_locked(struct ion_heap *heap,
			       struct ion_core_buffer *buffer)
{
	lockdep_assert_held(&ion_dev.stats_lock);
	buffer->quota->bytes -= buffer->base.size;
	buffer->owner->heap_bytes[heap->id] -= buffer->base.size;
	buffer->quota = NULL;
}

/**
 * ion_quota_uncharge() - undo ion_quota_charge()
 * @heap:   the heap that was charged
 * @buffer: the buffer
 *
 * Context: Any context that may take a spinlock.
 */
void ion_quota_uncharge(struct ion_heap *heap, struct ion_core_buffer *buffer)
{
	spin_lock(&ion_dev.stats_lock);
	ion_quota_uncharge_locked(heap, buffer);
	spin_unlock(&ion_dev.stats_lock);
}

/**
 * ion_quota_heap_exit() - free a heap's user counters
 * @core: the core state of a heap being removed
 *
 * Context: Process context.
 */
void ion_quota_heap_exit(struct ion_heap_core *core)
{
	struct ion_quota_uid *q;
	unsigned long uid;

	xa_for_each(&core->uids, uid, q)
		kfree(q);
	xa_destroy(&core->uids);
}

static void ion_quota_show_limit(struct seq_file *s, u64 limit)
{
	if (limit == U64_MAX)
		seq_puts(s, "-\n");
	else
		seq_printf(s, "%llu\n", limit);
}

/* What the quota file needs of a heap, copied under the heap lock. */
struct ion_quota_heap_view {
	char name[ION_MAX_HEAP_NAME];
	u64 client_limit;
};

/* @owner's row for each heap it uses. */
static void ion_quota_show_owner(struct seq_file *s,
				 const struct ion_owner *owner,
				 const struct ion_quota_heap_view *views)
{
	unsigned int id;
	u64 bytes;

	for (id = 0; id < ION_NUM_HEAP_IDS; id++) {
		bytes = READ_ONCE(owner->heap_bytes[id]);
		if (!bytes || !views[id].name[0])
			continue;
		seq_printf(s, "%s\tclient\t%s\t%llu\t", views[id].name,
			   owner->name, bytes);
		ion_quota_show_limit(s, views[id].client_limit);
	}
}

/*
 * Users under the heap lock (no heap goes meanwhile), then clients and
 * the owners gone user clients left (ion_owner.c; a destroyed kernel
 * client's live buffers still count in its user's row, not in a client
 * row) under the client lock: the
 * two are never held together, and neither is the allocation path's
 * spinlock.  Counters are read one by one.  Unlike the other views this
 * file holds the heap lock (read) and the client lock for a walk over
 * every user and client: heap registration, client open and close, and
 * the free of a gone client's last buffer may wait for it; allocations do
 * not.
 */
static int ion_quota_show(struct seq_file *s, void *unused)
{
	struct ion_quota_heap_view *views;
	struct ion_client *client;
	struct ion_owner *owner;
	struct ion_quota_uid *q;
	struct ion_heap *heap;
	unsigned long uid;
	u64 bytes;

	views = kcalloc(ION_NUM_HEAP_IDS, sizeof(*views), GFP_KERNEL);
	if (!views)
		return -ENOMEM;
	seq_puts(s, "heap\tkind\twho\tbytes\tlimit\n");
	percpu_down_read(&ion_dev.heap_lock);
	list_for_each_entry(heap, &ion_dev.heaps, node) {
		strscpy(views[heap->id].name, heap->name, ION_MAX_HEAP_NAME);
		views[heap->id].client_limit = ion_quota_client_limit(heap);
		xa_for_each(&heap->core->uids, uid, q) {
			bytes = READ_ONCE(q->bytes);
			if (!bytes)
				continue;
			seq_printf(s, "%s\tuid\t%lu\t%llu\t", heap->name, uid,
				   bytes);
			ion_quota_show_limit(s, ion_quota_uid_limit(heap));
		}
	}
	percpu_up_read(&ion_dev.heap_lock);

	mutex_lock(&ion_dev.client_lock);
	list_for_each_entry(client, &ion_dev.clients, node)
		ion_quota_show_owner(s, client->owner, views);
	list_for_each_entry(owner, &ion_dev.orphans, orphan)
		ion_quota_show_owner(s, owner, views);
	mutex_unlock(&ion_dev.client_lock);
	kfree(views);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ion_quota);

/**
 * ion_quota_debugfs_init() - create the quota file in ion's debugfs
 * @dev: the device, with its debugfs root
 *
 * Context: Process context (module init).
 */
void ion_quota_debugfs_init(struct ion_device *dev)
{
	debugfs_create_file("quota", 0444, dev->debug_root, dev,
			    &ion_quota_fops);
}
