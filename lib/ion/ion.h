/* SPDX-License-Identifier: MIT */
/*
 * libion: user-space access to the ION memory allocator.
 *
 * Two APIs:
 *
 *  - the classic AOSP libion functions with their classic signatures, so
 *    programs written for Android's libion build unchanged.  They take the
 *    /dev/ion fd from ion_open() and work with either kernel ABI (the
 *    handle ABI of Linux 3.10-4.11 or the fd ABI of 4.12+);
 *
 *  - a small modern API: an opaque struct ion_device that knows the heap
 *    list, allocation of dma-buf fds by heap name or mask, CPU access to
 *    any dma-buf (map, DMA_BUF_IOCTL_SYNC, DMA_BUF_SET_NAME), and the same
 *    allocation over the dma-heap nodes in /dev/dma_heap/.
 *
 * Every function returns 0 (or a non-negative fd or count) on success and
 * a negative errno on failure; errno itself is not part of the contract.
 * Nothing in the library prints.  All fds the library creates are
 * close-on-exec.  The functions are thread-safe; an ion_device or
 * ion_dma_heap may be used from several threads once opened.
 */
#ifndef ION_ION_H
#define ION_ION_H

#include <stddef.h>
#include <sys/types.h>

/*
 * The kernel ABI: <linux/ion.h> with <linux/ion_4.12.h> and
 * <linux/ion_4.19.h>, installed beside this header as AOSP's libion
 * installs its own, and with AOSP's names (Documentation/abi-compat.rst,
 * "Headers").
 */
#include <linux/ion.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Classic AOSP libion                                                 */

/* Declared, never defined, as by AOSP's <ion/ion.h>. */
struct ion_handle;

/* open("/dev/ion", O_RDONLY | O_CLOEXEC): the fd or -errno. */
int ion_open(void);
int ion_close(int fd);

/*
 * Handle ABI: allocate a buffer and get a handle.  -EINVAL when @handle is
 * NULL or the kernel has only the fd ABI.
 */
int ion_alloc(int fd, size_t len, size_t align, unsigned int heap_mask,
	      unsigned int flags, ion_user_handle_t *handle);

/*
 * Allocate a buffer and get a dma-buf fd in *handle_fd, with either ABI:
 * the fd ABI directly, the handle ABI as ALLOC, SHARE, FREE.  @align is
 * used by the handle ABI only.
 */
int ion_alloc_fd(int fd, size_t len, size_t align, unsigned int heap_mask,
		 unsigned int flags, int *handle_fd);

/*
 * Make CPU writes to the dma-buf @handle_fd visible to devices: ION_IOC_SYNC
 * on handle-ABI kernels, DMA_BUF_IOCTL_SYNC (end of RW access) otherwise.
 */
int ion_sync_fd(int fd, int handle_fd);

/* Handle ABI: drop one reference to @handle. */
int ion_free(int fd, ion_user_handle_t handle);

/*
 * ion_map() takes a 64-bit off_t on every architecture: a 32-bit caller
 * builds with -D_FILE_OFFSET_BITS=64 (pkg-config --cflags ion gives it),
 * or this does not compile.
 */
typedef char ion_off_t_must_be_64_bits[sizeof(off_t) == 8 ? 1 : -1];

/*
 * Handle ABI: get a dma-buf fd for @handle and mmap @length bytes of it at
 * @offset with @prot and @flags.  On success *ptr is the mapping and
 * *map_fd the fd (the caller munmaps and closes both).
 */
int ion_map(int fd, ion_user_handle_t handle, size_t length, int prot,
	    int flags, off_t offset, unsigned char **ptr, int *map_fd);

/* Handle ABI: a dma-buf fd for @handle in *share_fd. */
int ion_share(int fd, ion_user_handle_t handle, int *share_fd);

/* Handle ABI: a handle for the ion dma-buf @share_fd. */
int ion_import(int fd, int share_fd, ion_user_handle_t *handle);

/* Number of heaps (fd ABI kernels). */
int ion_query_heap_cnt(int fd, int *cnt);

/*
 * Fill @buffers, an array of @cnt struct ion_heap_data, with the heaps in
 * priority order.  With @buffers NULL it checks the fd and fills nothing.
 */
int ion_query_get_heaps(int fd, int cnt, void *buffers);

/*
 * 1 when the kernel serves the handle ABI (ION_IOC_FREE of handle 0 is not
 * -ENOTTY; ion's kernel serves both ABIs and is therefore legacy), 0 when
 * it has only the fd ABI.
 */
int ion_is_legacy(int fd);

/* 1 when ION_IOC_ABI_VERSION answers with a version >= 2, else 0. */
int ion_is_using_modular_heaps(int fd);

/* ------------------------------------------------------------------ */
/* Modern API: /dev/ion                                                */

/* An open /dev/ion with its heap list. */
struct ion_device;

/*
 * Open /dev/ion and read its heap list.  On a kernel without HEAP_QUERY
 * (handle ABI only) the list is empty and heap names resolve to the
 * default ids (ION_HEAP_TYPE_*).
 */
int ion_device_open(struct ion_device **dev);
void ion_device_close(struct ion_device *dev);

/* The /dev/ion fd (owned by @dev), for the classic functions. */
int ion_device_fd(const struct ion_device *dev);

/* Number of heaps, and heap @index of them in priority order (or NULL). */
int ion_device_heap_count(const struct ion_device *dev);
const struct ion_heap_data *ion_device_heap(const struct ion_device *dev,
					    unsigned int index);

/* Heap id of the heap called @name ("ion_system_heap", ...): -ENOENT. */
int ion_device_find_heap(const struct ion_device *dev, const char *name,
			 unsigned int *heap_id);

/*
 * Allocate @len bytes from the first heap of @heap_mask that can (highest
 * id first) with ION_FLAG_* @flags: a dma-buf fd (O_RDWR, close-on-exec).
 */
int ion_device_alloc(struct ion_device *dev, size_t len,
		     unsigned int heap_mask, unsigned int flags);
int ion_device_alloc_by_name(struct ion_device *dev, const char *heap_name,
			     size_t len, unsigned int flags);

/* ------------------------------------------------------------------ */
/* Modern API: any dma-buf fd                                          */

/* Size of the dma-buf @buf_fd. */
int ion_buffer_size(int buf_fd, size_t *size);

/*
 * mmap @len bytes (0: the whole buffer) of @buf_fd shared with @prot
 * (PROT_READ and/or PROT_WRITE).
 */
int ion_buffer_map(int buf_fd, size_t len, int prot, void **ptr);
int ion_buffer_unmap(void *ptr, size_t len);

/* CPU access directions for begin/end. */
#define ION_CPU_READ	1U
#define ION_CPU_WRITE	2U
#define ION_CPU_RW	(ION_CPU_READ | ION_CPU_WRITE)

/* Bracket CPU access to a mapping (DMA_BUF_IOCTL_SYNC start / end). */
int ion_buffer_begin_cpu_access(int buf_fd, unsigned int access);
int ion_buffer_end_cpu_access(int buf_fd, unsigned int access);

/* Name the buffer (DMA_BUF_SET_NAME; at most 31 bytes). */
int ion_buffer_set_name(int buf_fd, const char *name);

/* ------------------------------------------------------------------ */
/* Modern API: /dev/dma_heap/ nodes                                    */

/* An open dma-heap node. */
struct ion_dma_heap;

/*
 * Open a dma-heap by name: "ion-system" or "system" (in /dev/dma_heap/) or
 * an absolute path.
 */
int ion_dma_heap_open(const char *name, struct ion_dma_heap **heap);
void ion_dma_heap_close(struct ion_dma_heap *heap);
const char *ion_dma_heap_name(const struct ion_dma_heap *heap);

/*
 * Allocate @len bytes: a dma-buf fd.  @fd_flags is a subset of O_ACCMODE |
 * O_CLOEXEC; 0 means O_RDWR | O_CLOEXEC.
 */
int ion_dma_heap_alloc(struct ion_dma_heap *heap, size_t len,
		       unsigned int fd_flags);

/*
 * Call @fn with the name of every node in /dev/dma_heap/ (sorted), stop
 * when it returns non-zero and return that value.  @prefix (or NULL)
 * limits the walk to names starting with it, e.g. "ion-".
 */
int ion_dma_heap_foreach(const char *prefix,
			 int (*fn)(const char *name, void *data), void *data);

#ifdef __cplusplus
}
#endif

#endif /* ION_ION_H */
