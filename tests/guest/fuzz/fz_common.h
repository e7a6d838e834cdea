/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the reliability tests (fuzz_*, stress_*, exhaust_*,
 * isolation_*, unload_*): a seeded PRNG, the kernel log since the test
 * started, debugfs "everything is back to zero" checks, and the
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

#include "../ion_test_util.h"

/* ------------------------------------------------------------------ */
/* PRNG (xorshift64*), one state per thread                           */

static inline uint64_t fz_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x ? x : 0x9e3779b97f4a7c15ULL;
}

static inline uint64_t fz_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n); n > 0. */
static inline uint64_t fz_below(uint64_t *s, uint64_t n)
{
	return fz_next(s) % n;
}

/* True with probability 1/n. */
static inline int fz_one_in(uint64_t *s, uint64_t n)
{
	return fz_below(s, n) == 0;
}

/* ------------------------------------------------------------------ */
/* Kernel log                                                          */

/* Open /dev/kmsg positioned at its end: later reads see new records. */
static inline int fz_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * Count the records logged since the last call (or fz_kmsg_open()) that
 * contain one of @needles (NULL-terminated); print up to 5 of them.
 */
static inline int fz_kmsg_grep(int fd, const char *const *needles)
{
	char rec[2048];
	int n = 0, i;
	ssize_t len;

	if (fd < 0)
		return -1;
	for (;;) {
		len = read(fd, rec, sizeof(rec) - 1);
		if (len < 0 && errno == EPIPE)
			continue;	/* records overwritten: go on */
		if (len <= 0)
			break;
		rec[len] = 0;
		for (i = 0; needles[i]; i++) {
			if (!strstr(rec, needles[i]))
				continue;
			if (n++ < 5)
				tap_diag("kernel: %.*s",
					 (int)strcspn(rec, "\n"), rec);
			break;
		}
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* debugfs totals                                                      */

/*
 * Everything back to zero: summary buffers and bytes 0, every heaps/<name> file
 * "buffers: 0", and no clients/<name> file whose name starts with @prefix
 * (NULL: no check).  Prints what is left; returns 1 when clean.
 */
static inline int fz_dfs_clean(const char *prefix, int verbose)
{
	long long buffers = -1, bytes = -1;
	struct dirent *e;
	int clean = 1;
	DIR *d;

	if (it_summary(&buffers, &bytes) || buffers || bytes) {
		if (verbose)
			tap_diag("summary: buffers %lld bytes %lld", buffers,
				 bytes);
		clean = 0;
	}
	d = opendir(IT_DEBUGFS "/heaps");
	if (!d) {
		if (verbose)
			tap_diag("no %s/heaps", IT_DEBUGFS);
		return 0;
	}
	while ((e = readdir(d))) {
		char path[320];
		struct it_dfs h;
		long long n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), IT_DEBUGFS "/heaps/%.64s",
			 e->d_name);
		if (it_dfs_load(&h, path)) {
			clean = 0;
			continue;
		}
		n = it_dfs_num(&h, "buffers");
		if (n != 0) {
			if (verbose)
				tap_diag("heaps/%s: buffers %lld (%d rows)",
					 e->d_name, n, h.nrows);
			clean = 0;
		}
		it_dfs_free(&h);
	}
	closedir(d);
	if (!prefix)
		return clean;
	d = opendir(IT_DEBUGFS "/clients");
	if (!d)
		return clean;
	while ((e = readdir(d))) {
		if (!strncmp(e->d_name, prefix, strlen(prefix))) {
			if (verbose)
				tap_diag("client %s is still there", e->d_name);
			clean = 0;
		}
	}
	closedir(d);
	return clean;
}

/*
 * Wait (up to @max_ms) for fz_dfs_clean(): a dma-buf's last reference may
 * be dropped by deferred fput just after a process went.  Not a timing
 * check: the bound only keeps a leak from hanging the test.
 */
static inline int fz_dfs_wait_clean(const char *prefix, int max_ms)
{
	long long t0 = it_now_ms();

	while (!fz_dfs_clean(prefix, 0)) {
		if (it_now_ms() - t0 > max_ms)
			return fz_dfs_clean(prefix, 1);
		usleep(20000);
	}
	return 1;
}

/* "<comm>-" of this process: the prefix of its client names. */
static inline void fz_client_prefix(char *buf, size_t size)
{
	char comm[32] = "";
	FILE *f = fopen("/proc/self/comm", "r");

	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	snprintf(buf, size, "%s-", comm);
}

/* ------------------------------------------------------------------ */
/* /dev/dma_heap/ion-* nodes                                           */

#define FZ_MAX_NODES	8

struct fz_nodes {
	int cnt;
	char path[FZ_MAX_NODES][64];
};

static inline void fz_nodes_load(struct fz_nodes *n)
{
	glob_t g;
	size_t i;

	memset(n, 0, sizeof(*n));
	if (glob("/dev/dma_heap/ion-*", 0, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc && n->cnt < FZ_MAX_NODES; i++)
		snprintf(n->path[n->cnt++], sizeof(n->path[0]), "%s",
			 g.gl_pathv[i]);
	globfree(&g);
}

/* DMA_HEAP_IOCTL_ALLOC on a node fd: a dma-buf fd or -errno. */
static inline int fz_node_alloc(int node, uint64_t len)
{
	struct dma_heap_allocation_data a = {
		.len = len, .fd_flags = O_RDWR | O_CLOEXEC,
	};
	int ret = it_ioctl(node, DMA_HEAP_IOCTL_ALLOC, &a);

	return ret ? ret : (int)a.fd;
}

/* ------------------------------------------------------------------ */
/* Module loading                                                      */

static inline int fz_module_loaded(const char *name)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return !stat(path, &st);
}

/* delete_module(O_NONBLOCK): 0 or -errno. */
static inline int fz_unload(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

/* modprobe ion and wait for /dev/ion; 1 when it is there. */
static inline int fz_load_ion(void)
{
	struct stat st;
	int i;

	if (!fz_module_loaded("ion") && system("modprobe ion") != 0)
		return 0;
	for (i = 0; i < 100 && stat(IT_DEV, &st); i++)
		usleep(50000);
	return !stat(IT_DEV, &st);
}

#endif /* ION_FZ_COMMON_H */
