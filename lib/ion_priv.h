/* SPDX-License-Identifier: MIT */
/*
 * libion internals: not installed.
 */
#ifndef ION_PRIV_H
#define ION_PRIV_H

#include <ion/ion.h>

/* The library is built with -fvisibility=hidden; these are its API. */
#define ION_PUBLIC	__attribute__((visibility("default")))
#define ION_INTERNAL	__attribute__((visibility("hidden")))

/* The one ioctl helper: retries on EINTR; 0 or -errno. */
ION_INTERNAL int ion_xioctl(int fd, unsigned long req, void *arg);

/* ION_IOC_NEW_ALLOC (fd ABI): the new dma-buf's fd, or -errno. */
ION_INTERNAL int ion_ioc_alloc_fd(int fd, size_t len, unsigned int heap_mask,
				  unsigned int flags);

/*
 * The handle ABI's way to a dma-buf fd: ION_IOC_ALLOC_LEGACY, ION_IOC_SHARE,
 * then ION_IOC_FREE of the handle (the fd keeps the buffer).  The fd or
 * -errno.
 */
ION_INTERNAL int ion_ioc_alloc_shared(int fd, size_t len, size_t align,
				      unsigned int heap_mask,
				      unsigned int flags);

/* -errno for the last failed libc call (never 0). */
ION_INTERNAL int ion_neg_errno(void);

/*
 * Call @fn with the name of every entry of @dir (sorted, no dot files;
 * with @prefix non-NULL only names starting with it); stop when it
 * returns non-zero and return that value.  -errno when @dir cannot be read.
 */
ION_INTERNAL int ion_dir_foreach(const char *dir, const char *prefix,
				 int (*fn)(const char *name, void *data),
				 void *data);

#endif /* ION_PRIV_H */
