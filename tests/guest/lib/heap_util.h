/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the heap_* guest tests: allocation with alignment (handle
 * ABI, then SHARE for an fd), mmap with sync, the ion_test importer
 * (tests/kmod/ion_test.h, /dev/ion_test, loaded with modprobe),
 * writing control files and reading /proc/meminfo, and the system heap's
 * debugfs keys (its pools).
 */
#ifndef ION_HEAP_UTIL_H
#define ION_HEAP_UTIL_H

#include <sys/syscall.h>
#include <sys/wait.h>

#include "ion_test_util.h"
#include "../../kmod/ion_test.h"

#define HT_TEST_DEV	"/dev/ion_test"

#define KiB	1024UL
#define MiB	(1024 * KiB)

/* Cache variants every per-heap case runs in. */
static const struct {
	const char *name;
	unsigned int flags;
} ht_cache_modes[] = {
	{ "cached", ION_FLAG_CACHED },
	{ "uncached", 0 },
};

/* A dma-buf fd of @len bytes from heap @id with @align, or -errno. */
int ht_alloc(int ion, size_t len, size_t align, unsigned int id,
	     unsigned int flags);

/* mmap a whole buffer read/write, or NULL. */
void *ht_map(int buf, size_t len);

/* DMA_BUF_IOCTL_SYNC start (read and write): 0 or -errno. */
int ht_cpu_begin(int buf);

/*
 * ht_alloc() (no alignment), ht_map() and ht_cpu_begin(): the buffer's fd
 * with its mapping in *@p, or -errno (nothing left open).
 */
int ht_alloc_map(int ion, size_t len, unsigned int id, unsigned int flags,
		 unsigned char **p);

/* DMA_BUF_IOCTL_SYNC end (read and write): 0 or -errno. */
int ht_cpu_end(int buf);

/* munmap @p (@len bytes) unless NULL, close @buf unless negative. */
void ht_buf_drop(int buf, void *p, size_t len);

/* Leave the system as found: ion_test holds ion.ko while loaded. */
void ht_test_unload(void);

/*
 * Open /dev/ion_test, loading ion_test.ko if needed (and unloading it at
 * exit then, so later tests can unload ion.ko); fd or -errno.
 */
int ht_test_open(void);

int ht_test_info(int tfd, struct ion_test_info *info);

int ht_import(int tfd, int buf, unsigned int mode,
	      struct ion_test_import *imp);

int ht_release(int tfd, unsigned int slot);

/*
 * Have edu copy @len bytes from import @src at @src_off to import @dst at
 * @dst_off (ION_TEST_IOC_DMA); @d gets the DMA addresses.  0 or -errno.
 */
int ht_edu_copy(int tfd, unsigned int src, unsigned long long src_off,
		unsigned int dst, unsigned long long dst_off, unsigned int len,
		struct ion_test_dma *d);

/* sysfs directory of the edu PCI device (1234:11e8) in @buf, or -ENOENT. */
int ht_edu_sysfs(char *buf, size_t size);

/* Physical address of a buffer's start as ion_test sees it, or 0. */
unsigned long long ht_buf_phys(int tfd, int buf);

const char *ht_mode_name(unsigned int mode);

/* Write @val to the file at @path (opened with extra @flags); -errno. */
int ht_write_str(const char *path, const char *val, int flags);

/* A /proc/meminfo value in bytes, or -1 when the key is absent. */
long long ht_meminfo(const char *key);

/*
 * Bytes on the per-CPU free lists (the "count:" of every pageset in
 * /proc/zoneinfo), or -1.  MemFree does not count them, yet they are
 * free: since 6.7 a CPU's list may grow to an eighth of its zone, and
 * order-9 frees (THP, the x86 uncached blocks) go there.
 */
long long ht_pcp_bytes(void);

/* MemFree plus ht_pcp_bytes(), or -1. */
long long ht_free_bytes(void);

#define HT_SYSTEM_HEAP_FILE	IT_DEBUGFS "/heaps/" ION_SYSTEM_HEAP_NAME

/* A number from the system heap's debugfs file, or -1. */
long long ht_system_num(const char *key);

/*
 * Is the carveout heap's region a memmap= one (debugfs region_source)?
 * Such a region is not System RAM: its mappings refuse to be split.
 * 1 or 0; 0 also without a carveout heap.
 */
int ht_carveout_memmap(void);

/* Wait until @key reads at most @max; 0, or -ETIMEDOUT after 60 s. */
int ht_system_wait(const char *key, long long max);

/* Sum of the pool_order_*_<@mode> lines of the heap file @file, or -1. */
long long ht_pool_mode_bytes(const char *file, const char *mode);

/* Wait until the system heap's deferred zeroing is done. */
int ht_wait_deferred(void);

/* Empty the pools: the deferred zeroing done, then drop_caches. */
int ht_drop_pools(void);

/* DirectMap4k of /proc/meminfo in KiB, or -1. */
long long ht_dm4k_kb(void);

/* The linear-map entry of the page at @phys (ION_TEST_IOC_PHYS_ATTR). */
int ht_phys_attr(int tfd, unsigned long long phys,
		 struct ion_test_phys_attr *a);

/*
 * A new buffer of @len from heap @id with @flags, filled with it_fill()'s
 * pattern of @seed through its mapping and freed; 0 or -errno.
 */
int ht_fill_free(int ion, size_t len, unsigned int id, unsigned int flags,
		 unsigned int seed);

/*
 * Does a new buffer of @len from heap @id with @flags read all zero?  0,
 * -EILSEQ (the first non-zero byte told with tap_diag) or -errno.
 */
int ht_new_zeroed(int ion, size_t len, unsigned int id, unsigned int flags);

/* A size from 4 KiB to 2^@max_shift bytes, even over the powers of 2. */
size_t ht_mixed_size(unsigned int *seed, unsigned int max_shift);

/*
 * @rounds rounds of uncached buffers of ht_mixed_size(@max_shift) from
 * heap @mask, four live at a time (each round frees the oldest), all freed
 * at the end.  An ENOMEM round is counted in *@enomem, or ends the rounds
 * with -ENOMEM when @enomem is NULL.  0 or -errno.
 */
int ht_mixed_rounds(int ion, unsigned int mask, unsigned int max_shift,
		    unsigned int rounds, unsigned int seed, int *enomem);

/* DirectMap4k (KiB) and the system heap's direct_map_splits. */
struct ht_dm {
	long long dm4k_kb, splits;
};

/*
 * ht_mixed_rounds() of the system heap's uncached buffers up to 8 MiB
 * (ENOMEM ends them), the deferred zeroing waited for: the direct map in
 * *@before and *@after, told with tap_diag.  0 or -errno; -ENOENT
 * without DirectMap4k (nothing run).
 */
int ht_dm_rounds(int ion, unsigned int rounds, unsigned int seed,
		 struct ht_dm *before, struct ht_dm *after);

#endif /* ION_HEAP_UTIL_H */
