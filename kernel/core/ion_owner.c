// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: a client's owner - the name and the quota counts its buffers keep,
 * which outlive the client.  Calls nothing else of ion's.
 */
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "ion_priv.h"

/**
 * DOC: owners
 *
 * Each client has an owner, shared with every buffer the client allocated:
 * its name, for debugfs, and its usage of each heap, for the per-client
 * quota (ion_quota.c).  A buffer keeps its owner as long as it lives, so a
 * client that goes (its process closed its last /dev/ion or heap node
 * file, or exited) may leave an orphaned owner behind, still counting the
 * buffers it allocated that live on (held by anyone: dma-buf fds,
 * mappings, importers), until the last of them is freed.
 *
 * A process's orphaned owner is its next client's owner: a process that
 * closes /dev/ion and opens it again (or a heap node) gets a new client
 * whose quota still counts the buffers of the old one, so reopening does
 * not start the per-client quota from zero.  Orphaned owners are listed
 * in &ion_device.orphans, by the process's thread group (a struct pid
 * reference, which no later process can share), until their last buffer
 * is freed or a new client of their process adopts them.  Only the
 * process's own buffers are counted: handing fds to other processes never
 * moved a charge, and does not now.
 */

/* Is @name the name of a live client? */
static bool ion_owner_name_taken(struct ion_device *dev, const char *name)
{
	struct ion_client *client;

	lockdep_assert_held(&dev->client_lock);
	list_for_each_entry(client, &dev->clients, node) {
		if (!strcmp(client->owner->name, name))
			return true;
	}
	return false;
}

/* Name @owner @base, or @base-<n> with the smallest free n. */
static void ion_owner_set_name(struct ion_device *dev,
			       struct ion_owner *owner, const char *base)
{
	size_t size = sizeof(owner->name);
	unsigned int n = 0;

	strscpy(owner->name, base, size - 12);
	strreplace(owner->name, '/', '_');
	while (ion_owner_name_taken(dev, owner->name)) {
		snprintf(owner->name, size, "%.*s-%u", (int)size - 12, base,
			 ++n);
		strreplace(owner->name, '/', '_');
	}
}

/* @pid's orphaned owner, with a new reference, or NULL. */
static struct ion_owner *ion_owner_adopt(struct ion_device *dev,
					 struct pid *pid)
{
	struct ion_owner *owner;

	list_for_each_entry(owner, &dev->orphans, orphan) {
		if (owner->pid != pid ||
		    ion_owner_name_taken(dev, owner->name))
			continue;
		/* Listed, so not at 0: the last put takes client_lock. */
		refcount_inc(&owner->ref);
		list_del_init(&owner->orphan);
		WRITE_ONCE(owner->gone, false);
		return owner;
	}
	return NULL;
}

/**
 * ion_owner_create() - the owner of a new client
 * @dev:  the device
 * @pid:  the client's thread group, or NULL for a kernel client
 * @base: its name; "-<n>" is appended when a live client has it
 *
 * The orphaned owner a client of @pid left with buffers still alive,
 * taken off &ion_device.orphans, when there is one whose name no live
 * client took meanwhile (DOC: owners); else a new one named @base.
 *
 * Context: Process context; &ion_device.client_lock held.
 * Return: the owner with one reference for the client, or NULL.
 */
struct ion_owner *ion_owner_create(struct ion_device *dev, struct pid *pid,
				   const char *base)
{
	struct ion_owner *owner;

	lockdep_assert_held(&dev->client_lock);
	owner = pid ? ion_owner_adopt(dev, pid) : NULL;
	if (owner)
		return owner;
	owner = kzalloc(sizeof(*owner), GFP_KERNEL);
	if (!owner)
		return NULL;
	refcount_set(&owner->ref, 1);
	owner->kernel = !pid;
	owner->pid = get_pid(pid);
	INIT_LIST_HEAD(&owner->orphan);
	ion_owner_set_name(dev, owner, base);
	return owner;
}

/**
 * ion_owner_orphan() - its client is going
 * @dev:   the device
 * @owner: the client's owner, on which the client still holds its reference
 *
 * Marks it gone; a process's owner with buffers still alive waits in
 * &ion_device.orphans for the process's next client (DOC: owners).
 *
 * Context: Process context; &ion_device.client_lock held.
 */
void ion_owner_orphan(struct ion_device *dev, struct ion_owner *owner)
{
	lockdep_assert_held(&dev->client_lock);
	WRITE_ONCE(owner->gone, true);
	if (owner->pid && refcount_read(&owner->ref) > 1)
		list_add_tail(&owner->orphan, &dev->orphans);
}

/**
 * ion_owner_put() - drop a reference to an owner
 * @owner: the owner
 *
 * The last reference frees it, off &ion_device.orphans.
 *
 * Context: Process context; may sleep; not with &ion_device.client_lock
 * held (the last reference takes it).
 */
void ion_owner_put(struct ion_owner *owner)
{
	if (!refcount_dec_and_mutex_lock(&owner->ref, &ion_dev.client_lock))
		return;
	list_del(&owner->orphan);
	mutex_unlock(&ion_dev.client_lock);
	put_pid(owner->pid);
	kfree(owner);
}
