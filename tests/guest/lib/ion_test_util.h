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
#include <stdbool.h>
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

int it_open(void);

/* ioctl returning 0 or -errno. */
int it_ioctl(int fd, unsigned long req, void *arg);

int it_heaps_load(int fd, struct it_heaps *hs);

const struct ion_heap_data *
it_heap_find(const struct it_heaps *hs, const char *name);

/*
 * The first heap of it_known_heaps[] from index *@i on that @hs has (*@i
 * its index), or NULL at the end; each known heap @hs lacks on the way is
 * a skipped case.  for (i = 0; (k = it_known_next(hs, &i)); i++) visits
 * every registered known heap.
 */
const struct it_heap *it_known_next(const struct it_heaps *hs,
				    unsigned int *i);

/* Mask of every heap HEAP_QUERY reported. */
unsigned int it_heaps_mask(const struct it_heaps *hs);

/*
 * Open /dev/ion and load the heap list, or print a failing case and exit:
 * nothing else can run without them.
 */
int it_setup(struct it_heaps *hs);

/* ------------------------------------------------------------------ */
/* Allocation (raw ioctls)                                             */

/* fd ABI: returns a dma-buf fd or -errno. */
int it_alloc_fd(int fd, uint64_t len, unsigned int mask,
		unsigned int flags);

/* Handle ABI. */
int it_alloc_handle(int fd, size_t len, size_t align,
		    unsigned int mask, unsigned int flags,
		    ion_user_handle_t *handle);

int it_free(int fd, ion_user_handle_t handle);

/*
 * ALLOC through the handle ABI (@legacy: the handle stays with the client,
 * 0 is returned) or the fd ABI (the dma-buf fd is returned); -errno.
 */
int it_alloc_abi(int fd, uint64_t len, unsigned int mask, unsigned int flags,
		 int legacy);

/* SHARE (or MAP with cmd == ION_IOC_MAP): returns a dma-buf fd or -errno. */
int it_share_cmd(int fd, unsigned long cmd,
		 ion_user_handle_t handle);

int it_share(int fd, ion_user_handle_t handle);

int it_import(int fd, int buf_fd, ion_user_handle_t *handle);

int it_sync(int buf_fd, unsigned long long flags);

/* ------------------------------------------------------------------ */
/* Memory patterns                                                     */

unsigned char it_pat(size_t off, unsigned int seed);

void it_fill(void *p, size_t len, unsigned int seed);

/* Returns the first offset that differs, or -1 when all match. */
long it_check(const void *p, size_t len, unsigned int seed);

long it_check_zero(const void *p, size_t len);

/* ------------------------------------------------------------------ */
/* Processes, fds, time                                                */

long it_page(void);

/* @len rounded up to whole pages (what a buffer of @len really takes). */
size_t it_round_page(size_t len);

/* Wait up to 5 s for @path to exist (@present) or not; 1 when it does so. */
int it_wait_path(const char *path, int present);

/* A seed for the patterns of a run, printed as a diagnostic. */
unsigned int it_seed(void);
long long it_now_ms(void);

/* Number of open fds of this process. */
int it_count_fds(void);

/* This process's name (/proc/self/comm), "" if unreadable. */
void it_comm(char *buf, size_t size);

/* The debugfs name of this process's client: "<comm>-<tgid>". */
void it_client_name(char *buf, size_t size);

unsigned long it_ino(int fd);

/* A value from /proc/self/fdinfo/<fd> ("key:\tvalue"), or "" */
int it_fdinfo(int fd, const char *key, char *val, size_t size);

/* A counter from /proc/vmstat, or -1. */
long long it_vmstat(const char *key);

/*
 * The number in cgroup @cg's @file (a path): its first one when @key is
 * NULL (memory.current), else the value of line "@key N" (memory.events,
 * memory.stat); -1 when unreadable or absent.
 */
long long it_cg_num(const char *cg, const char *file, const char *key);

/*
 * cgroup2 (it_sys.c).  it_cg_memory(): cgroup2 mounted at IT_CG_ROOT and
 * the memory controller enabled for its children; 0 or -errno.
 * it_cg_join(): this process moves into the cgroup at the path @cg (a
 * const char *; the shape of an it_worker setup); 0 or -errno.
 * it_memcg_pools_kernel(): whether the kernel has per-memcg pools
 * (list_lru items filed under a chosen cgroup, 6.8 and later; before,
 * ion never pools a charged chunk).  it_cg_pair(): the cgroup @top with
 * the memory controller enabled for its two children @a and @b (paths;
 * left over ones removed first); 0 or -EIO.  it_cg_pair_remove(): remove
 * them.
 */
#define IT_CG_ROOT	"/sys/fs/cgroup"
int it_cg_memory(void);
int it_cg_join(void *cg);
int it_cg_pair(const char *top, const char *a, const char *b);
void it_cg_pair_remove(const char *top, const char *a, const char *b);
int it_memcg_pools_kernel(void);

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

void it_dfs_free(struct it_dfs *d);

/* The first line of @src, without its newline, into @dst of @size bytes. */
void it_copy_line(char *dst, size_t size, const char *src);

int it_read_file(const char *path, char **out);

/* Each line of process @pid's kernel stack as a TAP diagnostic. */
void it_diag_stack(pid_t pid, const char *who);

/*
 * SCM_RIGHTS (it_scm.c): send @fd with the @len bytes at @data over the
 * unix socket @sock (0 or -errno); receive an fd (close-on-exec) and
 * exactly @len bytes into @data (the fd, -EIO for a short message,
 * -EPROTO for no fd).  @flags go to sendmsg()/recvmsg().
 */
int it_send_fd(int sock, int fd, const void *data, size_t len, int flags);
int it_recv_fd(int sock, void *data, size_t len, int flags);

/*
 * Quotas and other users (it_quota.c).  it_become_user(): this process
 * becomes @uid, with @group as its one supplementary group ((gid_t)-1:
 * none); 0 or -errno.  it_param_set(): write @val to ion's parameter
 * @name (in IT_PARAMS); it_param_set_array(): the @n values of @vals,
 * comma-separated; both 0 or -errno.
 * it_quota_bytes(): the bytes debugfs's quota file counts for @heap,
 * @kind ("uid" or "client") and @who (NULL: any), summed over the rows
 * that match; -1 when none does, -2 when the file cannot be read.
 */
#define IT_PARAMS	"/sys/module/ion/parameters/"
int it_become_user(uid_t uid, gid_t group);
int it_param_set(const char *name, const char *val);
int it_param_set_array(const char *name, const long *vals, unsigned int n);

/*
 * One of ion's parameters, saved to be put back after a test changed it.
 * it_param_save(): read @name's value (in IT_PARAMS) into @p, 0 or
 * -errno (then @p holds nothing).  it_param_restore(): write the saved
 * value back, with a diagnostic when that fails, and forget it (0 or
 * -errno; 0 when @p holds nothing).
 */
struct it_param {
	char name[64];
	char *val;
};
int it_param_save(struct it_param *p, const char *name);
int it_param_restore(struct it_param *p);
long long it_quota_bytes(const char *heap, const char *kind, const char *who);

/*
 * A worker process (it_worker.c): it_worker_start() forks it; it opens
 * /dev/ion as the caller, runs @setup(@arg) (non-zero: it exits), then
 * holds the buffers it allocates on command.  Each command answers how
 * many steps succeeded and the errno of the first failure.
 */
struct it_worker {
	pid_t pid;
	int cmd, res;		/* pipes to and from it */
};

struct it_reply {
	int done;		/* allocations or frees that succeeded */
	int err;		/* errno of the first failure, or 0 */
};

#define IT_WORKER_FREE_ALL	(-1)

int it_worker_start(struct it_worker *w, int (*setup)(void *arg), void *arg);
/* @count buffers of @len bytes from @mask, kept. */
struct it_reply it_worker_alloc(struct it_worker *w, int count, uint64_t len,
				unsigned int mask, unsigned int flags);
/* Close the newest @count buffers (IT_WORKER_FREE_ALL: every one). */
struct it_reply it_worker_free(struct it_worker *w, int count);
/* Close (@open false) or open again its /dev/ion, keeping its buffers. */
struct it_reply it_worker_reopen(struct it_worker *w, bool open);
/* @count rounds of allocate and free, 4 and 64 KiB, cached or not. */
struct it_reply it_worker_rounds(struct it_worker *w, int count,
				 unsigned int mask);
void it_worker_stop(struct it_worker *w);

int it_dfs_load(struct it_dfs *d, const char *path);

const char *it_dfs_get(const struct it_dfs *d, const char *key);

/* A numeric value, or -1 when the key is missing. */
long long it_dfs_num(const struct it_dfs *d, const char *key);

int it_dfs_col(const struct it_dfs *d, const char *col);

const char *it_dfs_cell(const struct it_dfs *d, int row,
			const char *col);

/* The first row whose column @col reads @value, or -1. */
int it_dfs_find(const struct it_dfs *d, const char *col,
		const char *value);

/* The row of the buffer behind dma-buf @buf_fd in a heap file, or -1. */
int it_dfs_find_ino(const struct it_dfs *d, int buf_fd);

int it_dfs_load_heap(struct it_dfs *d, const char *heap);

/* The number of "key: value" line @key of the debugfs file @path, or -1. */
long long it_dfs_file_num(const char *path, const char *key);

/* The number of "key: value" line @key of heaps/@heap, or -1. */
long long it_heap_num(const char *heap, const char *key);

/* summary's "buffers" and "bytes", or -errno. */
int it_summary(long long *buffers, long long *bytes);

/* summary's totals at the start of a test, to compare with at its end. */
struct it_totals {
	long long buffers, bytes;
};

/* The totals now (-1 each when summary cannot be read). */
void it_totals_get(struct it_totals *t);

/*
 * A case named @what: summary's totals are back to @t (a diagnostic with
 * both when not).  Returns whether they are.
 */
int it_totals_back(const struct it_totals *t, const char *what);

/*
 * Column @col ("size", "handles", "attachments", ...) of the row of the
 * dma-buf behind @buf_fd in heap @heap's debugfs file, as a number; -1 when
 * the heap does not list that buffer or has no such column.
 */
long long it_buffer_num(int buf_fd, const char *heap,
			const char *col);

/* The same for the buffer of inode @ino (its fds may all be closed). */
long long it_buffer_num_ino(unsigned long ino, const char *heap,
			    const char *col);

/*
 * Does the "devices" column (Documentation/debugfs.rst) of the row of the
 * dma-buf behind @buf_fd in heap @heap's debugfs file list a device named
 * @name (an item "@name", or "@name(driver)") or one whose driver is
 * @name (an item ending in "(@name)")?  1 yes, 0 no (a diagnostic shows the
 * column), -1 when the heap does not list the buffer.
 */
int it_buffer_has_device(int buf_fd, const char *heap, const char *name);

/*
 * Is the dma-buf behind @buf_fd listed in heap @heap's debugfs file (every
 * row)?  1 yes; 0 no, or the file could not be read whole.
 */
int it_buffer_in_heap(int buf_fd, const char *heap);

/*
 * The same, over every row however many, telling a failed read apart: 1
 * listed, 0 not, -errno when the file could not be read whole.
 */
int it_heap_has_buffer(int buf_fd, const char *heap);

/*
 * Client files ("<comm>-<pid>") debugfs still has for process @pid, each
 * named in a diagnostic; -1 when the clients directory cannot be read.
 */
int it_clients_of(pid_t pid);

/* Name of the heap whose debugfs file lists @buf_fd, "" if none. */
void it_buffer_heap(const struct it_heaps *hs, int buf_fd,
		    char *out, size_t size);

/* ------------------------------------------------------------------ */
/* Kernel log (/dev/kmsg)                                              */

#define IT_KMSG_REC	2048	/* room for one record */

/*
 * Open the kernel log: at its end (@from_start 0: later reads see only
 * records logged from now on) or at the oldest record still kept; an fd
 * or -errno.
 */
int it_kmsg_open(int from_start);

/*
 * The next record ("<prio>,<seq>,<usec>,<flags>;<text>\n...") into @rec:
 * its length, or 0 at the end (and for fd < 0).  Overwritten records are
 * skipped.
 */
int it_kmsg_next(int fd, char *rec, size_t size);

/* The text of a record, after its header. */
const char *it_kmsg_text(const char *rec);

/*
 * Count the records logged since the last read that contain one of
 * @needles (NULL-terminated); print up to 5 of them; -1 for fd < 0.
 */
int it_kmsg_grep(int fd, const char *const *needles);

/*
 * Read every record logged since the last read; 1 when one contained
 * @what, whose text (its first line) is copied to @line; else 0.
 */
int it_kmsg_find(int fd, const char *what, char *line, size_t size);

#endif /* ION_TEST_UTIL_H */
