/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by ion's guest tests (raw ioctls, no libion, so the -m32
 * programs in compat/ can use them too).
 *
 * Conventions: functions return 0 or a non-negative value on success and
 * -errno on failure; nothing here prints except it_diag-style helpers.
 *
 * The heap table it_known_heaps[] is what the tests iterate over: each
 * case is generated once per known heap, and a heap that ION_IOC_HEAP_QUERY
 * does not report gives a SKIP with the reason, so the case names stay the
 * same whichever heaps a kernel has.
 */
#ifndef ION_TEST_UTIL_H
#define ION_TEST_UTIL_H

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/ion.h>

#include "tap.h"

#define IT_DEV		"/dev/ion"
#define IT_DEBUGFS	"/sys/kernel/debug/ion"

#define IT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Report a case from a call returning >= 0 or -errno: expect is 0 for
 * success or the positive errno the call must fail with.
 */
#define it_expect(ret, expect, ...)					\
	({								\
		int __r = (ret), __x = (expect);			\
		int __e = __r < 0 ? -__r : 0;				\
		if (__e != __x)						\
			tap_diag("got %s (%d), expected %s (%d)",	\
				 __e ? strerror(__e) : "success", __e,	\
				 __x ? strerror(__x) : "success", __x);	\
		tap_ok(__e == __x, __VA_ARGS__);			\
	})

/* ------------------------------------------------------------------ */
/* Heaps                                                               */

/**
 * struct it_heap - a heap the tests know about
 * @name: heap name as HEAP_QUERY reports it
 * @id:   expected heap id (by default id == type)
 * @type: expected enum ion_heap_type
 * @contig: physically contiguous (limits the sizes tests ask for)
 */
struct it_heap {
	const char *name;
	unsigned int id;
	unsigned int type;
	int contig;
};

static const struct it_heap it_known_heaps[] = {
	{ ION_SYSTEM_HEAP_NAME, 0, ION_HEAP_TYPE_SYSTEM, 0 },
	{ ION_SYSTEM_CONTIG_HEAP_NAME, 1, ION_HEAP_TYPE_SYSTEM_CONTIG, 1 },
	{ ION_CARVEOUT_HEAP_NAME, 2, ION_HEAP_TYPE_CARVEOUT, 1 },
	{ ION_DMA_HEAP_NAME, 4, ION_HEAP_TYPE_DMA, 1 },
};

/* What HEAP_QUERY reported. */
struct it_heaps {
	unsigned int cnt;
	struct ion_heap_data h[ION_NUM_HEAP_IDS];
};

static inline int it_open(void)
{
	int fd = open(IT_DEV, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* ioctl returning 0 or -errno. */
static inline int it_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

static inline int it_heaps_load(int fd, struct it_heaps *hs)
{
	struct ion_heap_query q;
	int ret;

	memset(hs, 0, sizeof(*hs));
	memset(&q, 0, sizeof(q));
	ret = it_ioctl(fd, ION_IOC_HEAP_QUERY, &q);
	if (ret)
		return ret;
	if (q.cnt > ION_NUM_HEAP_IDS)
		return -E2BIG;
	q.heaps = (uintptr_t)hs->h;
	ret = it_ioctl(fd, ION_IOC_HEAP_QUERY, &q);
	if (ret)
		return ret;
	hs->cnt = q.cnt;
	return 0;
}

static inline const struct ion_heap_data *
it_heap_find(const struct it_heaps *hs, const char *name)
{
	unsigned int i;

	for (i = 0; i < hs->cnt; i++)
		if (!strncmp(hs->h[i].name, name, ION_MAX_HEAP_NAME))
			return &hs->h[i];
	return NULL;
}

/* Mask of every heap HEAP_QUERY reported. */
static inline unsigned int it_heaps_mask(const struct it_heaps *hs)
{
	unsigned int i, mask = 0;

	for (i = 0; i < hs->cnt; i++)
		mask |= 1U << hs->h[i].heap_id;
	return mask;
}

/*
 * Open /dev/ion and load the heap list, or print a failing case and exit:
 * nothing else can run without them.
 */
static inline int it_setup(struct it_heaps *hs)
{
	int fd = it_open();
	int ret;

	if (fd < 0) {
		tap_ok(0, "open " IT_DEV);
		tap_diag("open: %s", strerror(-fd));
		exit(1);
	}
	ret = it_heaps_load(fd, hs);
	if (ret) {
		tap_ok(0, "ION_IOC_HEAP_QUERY");
		tap_diag("HEAP_QUERY: %s", strerror(-ret));
		exit(1);
	}
	return fd;
}

/* ------------------------------------------------------------------ */
/* Allocation (raw ioctls)                                             */

/* fd ABI: returns a dma-buf fd or -errno. */
static inline int it_alloc_fd(int fd, uint64_t len, unsigned int mask,
			      unsigned int flags)
{
	struct ion_allocation_data a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.len = len;
	a.heap_id_mask = mask;
	a.flags = flags;
	ret = it_ioctl(fd, ION_IOC_ALLOC, &a);
	return ret ? ret : (int)a.fd;
}

/* Handle ABI. */
static inline int it_alloc_handle(int fd, size_t len, size_t align,
				  unsigned int mask, unsigned int flags,
				  ion_user_handle_t *handle)
{
	struct ion_allocation_data_legacy a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.len = len;
	a.align = align;
	a.heap_id_mask = mask;
	a.flags = flags;
	ret = it_ioctl(fd, ION_IOC_ALLOC_LEGACY, &a);
	if (!ret)
		*handle = a.handle;
	return ret;
}

static inline int it_free(int fd, ion_user_handle_t handle)
{
	struct ion_handle_data d = { .handle = handle };

	return it_ioctl(fd, ION_IOC_FREE, &d);
}

/* SHARE (or MAP with cmd == ION_IOC_MAP): returns a dma-buf fd or -errno. */
static inline int it_share_cmd(int fd, unsigned long cmd,
			       ion_user_handle_t handle)
{
	struct ion_fd_data d = { .handle = handle, .fd = -1 };
	int ret = it_ioctl(fd, cmd, &d);

	return ret ? ret : d.fd;
}

static inline int it_share(int fd, ion_user_handle_t handle)
{
	return it_share_cmd(fd, ION_IOC_SHARE, handle);
}

static inline int it_import(int fd, int buf_fd, ion_user_handle_t *handle)
{
	struct ion_fd_data d = { .fd = buf_fd };
	int ret = it_ioctl(fd, ION_IOC_IMPORT, &d);

	if (!ret)
		*handle = d.handle;
	return ret;
}

static inline int it_sync(int buf_fd, unsigned long long flags)
{
	struct dma_buf_sync s = { .flags = flags };

	return it_ioctl(buf_fd, DMA_BUF_IOCTL_SYNC, &s);
}

/* ------------------------------------------------------------------ */
/* Memory patterns                                                     */

static inline unsigned char it_pat(size_t off, unsigned int seed)
{
	return (unsigned char)((off * 131 + (off >> 12) * 7 + seed) | 1);
}

static inline void it_fill(void *p, size_t len, unsigned int seed)
{
	unsigned char *c = p;
	size_t i;

	for (i = 0; i < len; i++)
		c[i] = it_pat(i, seed);
}

/* Returns the first offset that differs, or -1 when all match. */
static inline long it_check(const void *p, size_t len, unsigned int seed)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (c[i] != it_pat(i, seed))
			return (long)i;
	return -1;
}

static inline long it_check_zero(const void *p, size_t len)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (c[i])
			return (long)i;
	return -1;
}

/* ------------------------------------------------------------------ */
/* Processes, fds, time                                                */

static inline long it_page(void)
{
	return sysconf(_SC_PAGESIZE);
}

/* @len rounded up to whole pages (what a buffer of @len really takes). */
static inline size_t it_round_page(size_t len)
{
	size_t pg = (size_t)it_page();

	return (len + pg - 1) / pg * pg;
}

static inline long long it_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Number of open fds of this process. */
static inline int it_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the DIR's own fd */
}

/* The debugfs name of this process's client: "<comm>-<tgid>". */
static inline void it_client_name(char *buf, size_t size)
{
	char comm[32] = "";
	FILE *f = fopen("/proc/self/comm", "r");

	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	snprintf(buf, size, "%s-%d", comm, (int)getpid());
}

static inline unsigned long it_ino(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (unsigned long)st.st_ino;
}

/* A value from /proc/self/fdinfo/<fd> ("key:\tvalue"), or "" */
static inline int it_fdinfo(int fd, const char *key, char *val, size_t size)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		char *v = line + klen + 1;

		while (*v == ' ' || *v == '\t')
			v++;
		size_t n = strcspn(v, "\n");

		if (n >= size)
			n = size - 1;
		memcpy(val, v, n);
		val[n] = 0;
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* A counter from /proc/vmstat, or -1. */
static inline long long it_vmstat(const char *key)
{
	char name[64];
	long long v, ret = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", name, &v) == 2)
		if (!strcmp(name, key)) {
			ret = v;
			break;
		}
	fclose(f);
	return ret;
}

/* ------------------------------------------------------------------ */
/* debugfs (Documentation/debugfs.rst)                                 */

#define IT_DFS_MAX_KEYS	64
#define IT_DFS_MAX_COLS	16
#define IT_DFS_MAX_ROWS	512

/**
 * struct it_dfs - one parsed debugfs file
 * @text: the file, modified in place
 * @keys, @vals, @nkeys: the "key: value" lines before the empty line
 * @cols, @ncols: the table's header
 * @cells, @nrows: row r column c is cells[r * ncols + c] (NULL if missing)
 */
struct it_dfs {
	char *text;
	int nkeys;
	char *keys[IT_DFS_MAX_KEYS];
	char *vals[IT_DFS_MAX_KEYS];
	int ncols;
	char *cols[IT_DFS_MAX_COLS];
	int nrows;
	char **cells;
};

static inline void it_dfs_free(struct it_dfs *d)
{
	free(d->text);
	free(d->cells);
	memset(d, 0, sizeof(*d));
}

static inline int it_read_file(const char *path, char **out)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || !buf) {
		int e = fd < 0 ? -errno : -ENOMEM;

		if (fd >= 0)
			close(fd);
		free(buf);
		return e;
	}
	for (;;) {
		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	buf[len] = 0;
	close(fd);
	*out = buf;
	return (int)len;
}

static inline int it_dfs_load(struct it_dfs *d, const char *path)
{
	char *line, *next;
	int ret, in_table = 0, header = 0;

	memset(d, 0, sizeof(*d));
	ret = it_read_file(path, &d->text);
	if (ret < 0)
		return ret;
	d->cells = calloc(IT_DFS_MAX_ROWS * IT_DFS_MAX_COLS, sizeof(char *));
	if (!d->cells) {
		free(d->text);
		return -ENOMEM;
	}
	for (line = d->text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!in_table) {
			char *colon;

			if (!*line) {
				in_table = 1;
				header = 1;
				continue;
			}
			colon = strstr(line, ": ");
			if (!colon || d->nkeys >= IT_DFS_MAX_KEYS)
				continue;
			*colon = 0;
			d->keys[d->nkeys] = line;
			d->vals[d->nkeys++] = colon + 2;
			continue;
		}
		if (!*line)
			continue;
		if (header) {
			char *tok, *save;

			header = 0;
			for (tok = strtok_r(line, "\t", &save);
			     tok && d->ncols < IT_DFS_MAX_COLS;
			     tok = strtok_r(NULL, "\t", &save))
				d->cols[d->ncols++] = tok;
			continue;
		}
		if (d->nrows < IT_DFS_MAX_ROWS) {
			char *tok, *save;
			int c = 0;

			for (tok = strtok_r(line, "\t", &save);
			     tok && c < d->ncols;
			     tok = strtok_r(NULL, "\t", &save))
				d->cells[d->nrows * IT_DFS_MAX_COLS + c++] = tok;
			d->nrows++;
		}
	}
	return 0;
}

static inline const char *it_dfs_get(const struct it_dfs *d, const char *key)
{
	int i;

	for (i = 0; i < d->nkeys; i++)
		if (!strcmp(d->keys[i], key))
			return d->vals[i];
	return NULL;
}

/* A numeric value, or -1 when the key is missing. */
static inline long long it_dfs_num(const struct it_dfs *d, const char *key)
{
	const char *v = it_dfs_get(d, key);

	return v ? strtoll(v, NULL, 0) : -1;
}

static inline int it_dfs_col(const struct it_dfs *d, const char *col)
{
	int c;

	for (c = 0; c < d->ncols; c++)
		if (!strcmp(d->cols[c], col))
			return c;
	return -1;
}

static inline const char *it_dfs_cell(const struct it_dfs *d, int row,
				      const char *col)
{
	int c = it_dfs_col(d, col);

	if (c < 0 || row < 0 || row >= d->nrows)
		return NULL;
	return d->cells[row * IT_DFS_MAX_COLS + c];
}

/* The first row whose column @col reads @value, or -1. */
static inline int it_dfs_find(const struct it_dfs *d, const char *col,
			      const char *value)
{
	int r;

	for (r = 0; r < d->nrows; r++) {
		const char *v = it_dfs_cell(d, r, col);

		if (v && !strcmp(v, value))
			return r;
	}
	return -1;
}

/* The row of the buffer behind dma-buf @buf_fd in a heap file, or -1. */
static inline int it_dfs_find_ino(const struct it_dfs *d, int buf_fd)
{
	char ino[32];

	snprintf(ino, sizeof(ino), "%lu", it_ino(buf_fd));
	return it_dfs_find(d, "ino", ino);
}

static inline int it_dfs_load_heap(struct it_dfs *d, const char *heap)
{
	char path[128];

	snprintf(path, sizeof(path), IT_DEBUGFS "/heaps/%s", heap);
	return it_dfs_load(d, path);
}

/* summary's "buffers" and "bytes", or -errno. */
static inline int it_summary(long long *buffers, long long *bytes)
{
	struct it_dfs d;
	int ret = it_dfs_load(&d, IT_DEBUGFS "/summary");

	if (ret)
		return ret;
	*buffers = it_dfs_num(&d, "buffers");
	*bytes = it_dfs_num(&d, "bytes");
	it_dfs_free(&d);
	return (*buffers < 0 || *bytes < 0) ? -EPROTO : 0;
}

/*
 * Column @col ("size", "handles", "attachments", ...) of the row of the
 * dma-buf behind @buf_fd in heap @heap's debugfs file, as a number; -1 when
 * the heap does not list that buffer or has no such column.
 */
static inline long long it_buffer_num(int buf_fd, const char *heap,
				      const char *col)
{
	struct it_dfs d;
	const char *v;
	long long ret = -1;

	if (it_dfs_load_heap(&d, heap))
		return -1;
	v = it_dfs_cell(&d, it_dfs_find_ino(&d, buf_fd), col);
	if (v)
		ret = strtoll(v, NULL, 0);
	it_dfs_free(&d);
	return ret;
}

/* Is the dma-buf behind @buf_fd listed in heap @heap's debugfs file? */
static inline int it_buffer_in_heap(int buf_fd, const char *heap)
{
	return it_buffer_num(buf_fd, heap, "ino") >= 0;
}

/*
 * Client files ("<comm>-<pid>") debugfs still has for process @pid, each
 * named in a diagnostic; -1 when the clients directory cannot be read.
 */
static inline int it_clients_of(pid_t pid)
{
	char suffix[24];
	struct dirent *e;
	DIR *d = opendir(IT_DEBUGFS "/clients");
	int n = 0;

	if (!d)
		return -1;
	snprintf(suffix, sizeof(suffix), "-%d", (int)pid);
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name), k = strlen(suffix);

		if (l > k && !strcmp(e->d_name + l - k, suffix)) {
			tap_diag("client file of pid %d: %s", (int)pid,
				 e->d_name);
			n++;
		}
	}
	closedir(d);
	return n;
}

/* Name of the heap whose debugfs file lists @buf_fd, "" if none. */
static inline void it_buffer_heap(const struct it_heaps *hs, int buf_fd,
				  char *out, size_t size)
{
	unsigned int i;

	snprintf(out, size, "%s", "");
	for (i = 0; i < hs->cnt; i++)
		if (it_buffer_in_heap(buf_fd, hs->h[i].name)) {
			snprintf(out, size, "%s", hs->h[i].name);
			return;
		}
}

#endif /* ION_TEST_UTIL_H */
