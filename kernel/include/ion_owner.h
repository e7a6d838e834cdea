/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion: a client's owner (ion_owner.c), which its buffers keep.  Included
 * only by ion_priv.h, after the limits it uses (ION_CLIENT_NAME_LEN and
 * the uapi's ION_NUM_HEAP_IDS).
 */
#ifndef _ION_OWNER_H
#define _ION_OWNER_H

#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/types.h>

struct ion_device;
struct pid;

/**
 * struct ion_owner - a client's name, shared with the buffers it allocated
 * @ref:  one reference for the client, one per buffer it allocated (a
 *	  buffer may outlive its client)
 * @name: the client's unique name, set before the client is listed and
 *	  fixed from then on
 * @kernel: a kernel client's (not limited by quotas unless quota_root)
 * @heap_bytes: bytes of live buffers it allocated, per heap id, under
 *	  &ion_device.stats_lock (ion_quota.c): they count until released,
 *	  whoever holds them
 * @gone: the client has been released (its process exited or closed
 *	  /dev/ion, or the driver destroyed it): its buffers still alive are
 *	  orphans.  Changed under &ion_device.client_lock (set when the
 *	  client goes, cleared when the process's next client adopts it),
 *	  read locklessly (READ_ONCE) by debugfs.
 * @pid:  a user client's thread group (a reference), NULL for a kernel
 *	  client's
 * @orphan: entry in &ion_device.orphans while gone with buffers alive,
 *	  under &ion_device.client_lock
 *
 * debugfs shows the owner of each buffer; sharing the name costs an
 * allocation a reference instead of a copy.  ion_owner.c, DOC: owners.
 */
struct ion_owner {
	refcount_t ref;
	char name[ION_CLIENT_NAME_LEN];
	bool kernel;
	bool gone;
	u64 heap_bytes[ION_NUM_HEAP_IDS];
	struct pid *pid;
	struct list_head orphan;
};

static inline struct ion_owner *ion_owner_get(struct ion_owner *owner)
{
	refcount_inc(&owner->ref);
	return owner;
}

/* ion_owner.c */
struct ion_owner *ion_owner_create(struct ion_device *dev, struct pid *pid,
				   const char *base);
void ion_owner_orphan(struct ion_device *dev, struct ion_owner *owner);
void ion_owner_put(struct ion_owner *owner);

#endif /* _ION_OWNER_H */
