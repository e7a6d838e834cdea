/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the reliability tests (fuzz_*, stress_*, exhaust_*,
 * isolation_*, unload_*): a seeded PRNG, debugfs "everything is back to zero" checks, and the
 * /dev/dma_heap/ion-* nodes.
 */
#ifndef ION_FZ_COMMON_H
#define ION_FZ_COMMON_H

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/dma-heap.h>

#include "ion_test_util.h"

/* ------------------------------------------------------------------ */
/* PRNG (xorshift64*), one state per thread                           */

uint64_t fz_mix(uint64_t x);

uint64_t fz_next(uint64_t *s);

/* Uniform in [0, n); n > 0. */
uint64_t fz_below(uint64_t *s, uint64_t n);

/* True with probability 1/n. */
int fz_one_in(uint64_t *s, uint64_t n);

/* ------------------------------------------------------------------ */
/* debugfs totals                                                      */

/*
 * Everything back to zero: summary buffers and bytes 0, every heaps/<name> file
 * "buffers: 0", and no clients/<name> file whose name starts with @prefix
 * (NULL: no check).  Prints what is left; returns 1 when clean.
 */
int fz_dfs_clean(const char *prefix, int verbose);

/*
 * Wait (up to @max_ms) for fz_dfs_clean(): a dma-buf's last reference may
 * be dropped by deferred fput just after a process went.  Not a timing
 * check: the bound only keeps a leak from hanging the test.
 */
int fz_dfs_wait_clean(const char *prefix, int max_ms);

/* "<comm>-" of this process: the prefix of its client names. */
void fz_client_prefix(char *buf, size_t size);

/* ------------------------------------------------------------------ */
/* /dev/dma_heap/ion-* nodes                                           */

#define FZ_MAX_NODES	8

struct fz_nodes {
	int cnt;
	char path[FZ_MAX_NODES][64];
};

void fz_nodes_load(struct fz_nodes *n);

/* DMA_HEAP_IOCTL_ALLOC on a node fd: a dma-buf fd or -errno. */
int fz_node_alloc(int node, uint64_t len);

/* ------------------------------------------------------------------ */
/* Module loading                                                      */

int fz_module_loaded(const char *name);

/* delete_module(O_NONBLOCK): 0 or -errno. */
int fz_unload(const char *name);

/*
 * Modules that hold module @name (/sys/module/<name>/holders), each named
 * in a diagnostic when @verbose.
 */
int fz_holders(const char *name, int verbose);

/*
 * A case: unloading ion.ko is refused (EWOULDBLOCK or EBUSY) while @what
 * lives; if it unloaded anyway, load it again at once.
 */
int fz_unload_refused(const char *what);

/* modprobe ion and wait for /dev/ion; 1 when it is there. */
int fz_load_ion(void);

#endif /* ION_FZ_COMMON_H */
