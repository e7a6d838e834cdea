/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion: the kernel client API.
 *
 * A kernel driver using ion creates a client of its own, allocates or
 * imports buffers through it and gets opaque handles back.  The symbols
 * are in the ION namespace: a module using them says
 * MODULE_IMPORT_NS(ION) and builds against ion's Module.symvers.
 *
 * Every call checks that the handle is a live handle of that client; a
 * foreign, stale or NULL handle gives -EINVAL (or NULL, or nothing, as
 * each call says), never a crash.  All calls may sleep.
 */
#ifndef _LINUX_ION_H
#define _LINUX_ION_H

#include <linux/types.h>
#include <uapi/linux/ion.h>

struct ion_client;
struct ion_handle;
struct sg_table;

struct ion_client *ion_client_create(unsigned int heap_mask,
				     const char *name);
void ion_client_destroy(struct ion_client *client);

struct ion_handle *ion_alloc(struct ion_client *client, size_t len,
			     size_t align, unsigned int heap_mask,
			     unsigned int flags);
int ion_free(struct ion_client *client, struct ion_handle *handle);

struct ion_handle *ion_import_fd(struct ion_client *client, int fd);
int ion_share_fd(struct ion_client *client, struct ion_handle *handle);

int ion_phys(struct ion_client *client, struct ion_handle *handle,
	     phys_addr_t *addr, size_t *len);
struct sg_table *ion_sg_table(struct ion_client *client,
			      struct ion_handle *handle);
void *ion_map_kernel(struct ion_client *client, struct ion_handle *handle);
void ion_unmap_kernel(struct ion_client *client, struct ion_handle *handle);

#endif /* _LINUX_ION_H */
