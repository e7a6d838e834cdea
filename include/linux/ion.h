/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ion: the kernel client API.
 *
 * A kernel driver gets the ion device with ion_default_device(), creates a
 * client of its own with ion_client_create(), allocates or imports
 * buffers through it and gets opaque handles back.  The calls are those
 * of the 2012 ION (LWN's "Integrating the ION memory allocator"), so a
 * driver written against them builds unchanged, plus ion_import_dma_buf()
 * and ion_share_dma_buf() for drivers that hold a struct dma_buf.  The
 * symbols are in the ION namespace: a module using them says
 * ION_MODULE_IMPORT_NS() and builds against ion's Module.symvers.
 *
 * Every call looks the handle up among the client's live handles; a
 * foreign, stale or NULL handle gives -EINVAL (or an ERR_PTR, or nothing,
 * as each call says), never a crash.  All calls may sleep.
 */
#ifndef _LINUX_ION_H
#define _LINUX_ION_H

#include <linux/module.h>
#include <linux/types.h>
#include <uapi/linux/ion.h>

/*
 * The import of the ION namespace, the same on every kernel: the argument
 * of MODULE_IMPORT_NS() is a bare word before 6.13 and a string literal
 * from 6.13 on, the import_ns tag both make is this one.
 */
#ifndef ION_MODULE_IMPORT_NS
#define ION_MODULE_IMPORT_NS()	MODULE_INFO(import_ns, "ION")
#endif

struct dma_buf;
struct ion_client;
struct ion_device;
struct ion_handle;
struct sg_table;

/*
 * A CPU physical address, as ion_phys() gives it: the article's type name
 * for phys_addr_t, which the article expected it to become.  A macro, not
 * a new typedef: the two are one type.
 */
#define ion_phys_addr_t phys_addr_t

struct ion_device *ion_default_device(void);

struct ion_client *ion_client_create(struct ion_device *dev,
				     unsigned int heap_mask,
				     const char *debug_name);
void ion_client_destroy(struct ion_client *client);

struct ion_handle *ion_alloc(struct ion_client *client, size_t len,
			     size_t align, unsigned int heap_mask,
			     unsigned int flags);
int ion_free(struct ion_client *client, struct ion_handle *handle);

struct ion_handle *ion_import_fd(struct ion_client *client, int fd);
int ion_share_fd(struct ion_client *client, struct ion_handle *handle);
struct ion_handle *ion_import_dma_buf(struct ion_client *client,
				      struct dma_buf *dmabuf);
struct dma_buf *ion_share_dma_buf(struct ion_client *client,
				  struct ion_handle *handle);

int ion_phys(struct ion_client *client, struct ion_handle *handle,
	     ion_phys_addr_t *addr, size_t *len);
struct sg_table *ion_sg_table(struct ion_client *client,
			      struct ion_handle *handle);
void *ion_map_kernel(struct ion_client *client, struct ion_handle *handle);
void ion_unmap_kernel(struct ion_client *client, struct ion_handle *handle);

#endif /* _LINUX_ION_H */
