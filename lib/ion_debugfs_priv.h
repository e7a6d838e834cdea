/* SPDX-License-Identifier: MIT */
/*
 * libion internals for ion's own tools: one reader of ion's debugfs files
 * (Documentation/debugfs.rst).  Not part of libion's ABI: not installed,
 * not in libion.map, hidden in libion.so; the tools link libion.a.
 *
 * A file is "key: value" lines, then optionally a blank line and a
 * table: a line of tab-separated column names and one line per row.  The
 * reader keeps every key and every row, however many (no fixed limit).
 */
#ifndef ION_DEBUGFS_PRIV_H
#define ION_DEBUGFS_PRIV_H

#include <stddef.h>

#define ION_DEBUGFS_DIR		"/sys/kernel/debug/ion"

#define ION_DBG_HIDDEN		__attribute__((visibility("hidden")))

/* One parsed debugfs file (opaque). */
struct ion_dbg_file;

/* ion_dbg_read() flags: stop at the table (only the key lines). */
#define ION_DBG_KEYS_ONLY	1U

/*
 * Read and parse the file at the path @fmt, ... into *@fp (freed with
 * ion_dbg_free()).  0 or -errno (-ENAMETOOLONG, -ENOMEM, open's, read's).
 */
ION_DBG_HIDDEN int ion_dbg_read(struct ion_dbg_file **fp, unsigned int flags,
				const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
ION_DBG_HIDDEN void ion_dbg_free(struct ion_dbg_file *f);

/* Key lines, in file order: their count, key @i and its value. */
ION_DBG_HIDDEN unsigned int ion_dbg_nkeys(const struct ion_dbg_file *f);
ION_DBG_HIDDEN const char *ion_dbg_key(const struct ion_dbg_file *f,
				       unsigned int i);
ION_DBG_HIDDEN const char *ion_dbg_val(const struct ion_dbg_file *f,
				       unsigned int i);

/* The value of the first key line named @key, or NULL. */
ION_DBG_HIDDEN const char *ion_dbg_get(const struct ion_dbg_file *f,
				       const char *key);

/* The same as a decimal number: 0, -ENOENT (no such key) or -EINVAL. */
ION_DBG_HIDDEN int ion_dbg_get_ull(const struct ion_dbg_file *f,
				   const char *key, unsigned long long *v);

/* The table: columns, rows, and one cell ("" where a row is short). */
ION_DBG_HIDDEN unsigned int ion_dbg_ncols(const struct ion_dbg_file *f);
ION_DBG_HIDDEN const char *ion_dbg_col(const struct ion_dbg_file *f,
				       unsigned int col);
ION_DBG_HIDDEN size_t ion_dbg_nrows(const struct ion_dbg_file *f);
ION_DBG_HIDDEN const char *ion_dbg_cell(const struct ion_dbg_file *f,
					size_t row, unsigned int col);

/* Cell of @row in the column named @name ("" when there is none). */
ION_DBG_HIDDEN const char *ion_dbg_cell_by_name(const struct ion_dbg_file *f,
						size_t row, const char *name);

/*
 * Call @fn with every entry's name in the directory @fmt, ... (sorted,
 * no dot files); stop when it returns non-zero and return that value.
 * -errno when the directory cannot be read.
 */
ION_DBG_HIDDEN int ion_dbg_foreach(int (*fn)(const char *name, void *data),
				   void *data, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* ION_DEBUGFS_PRIV_H */
