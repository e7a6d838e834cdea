// SPDX-License-Identifier: MIT
/*
 * libion: the one reader of ion's debugfs files, for ion's tools
 * (ionctl, ion-bench, ion-camera-demo).  Internal: declared in
 * ion_debugfs_priv.h, hidden, not in libion.map.
 *
 * The whole file is read into one buffer and split in place; the key,
 * column and cell arrays grow as the file needs, so nothing is dropped
 * (a debugfs table has a row per live buffer or handle: thousands).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ion_debugfs_priv.h"
#include "ion_priv.h"

/**
 * struct ion_dbg_file - one parsed debugfs file
 * @text:   the file, NUL-terminated and split in place; every string below
 *          points into it
 * @kv:     @nkeys key lines, key and value (@kv_cap entries allocated)
 * @col:    @ncols column names of the table (0: no table)
 * @cell:   @nrows rows of @ncols cells, row-major (@row_cap rows
 *          allocated); a cell a short row lacks is NULL
 *
 * Owned by whoever ion_dbg_read() returned it to; never shared.
 */
struct ion_dbg_file {
	char *text;
	struct ion_dbg_kv {
		char *key, *val;
	} *kv;
	size_t nkeys, kv_cap;
	char **col;
	unsigned int ncols;
	char **cell;
	size_t nrows, row_cap;
};

/* The whole file at @path in *@out (NUL-terminated): 0 or -errno. */
static int ion_dbg_slurp(const char *path, char **out)
{
	size_t cap = 16384, len = 0;
	char *buf = NULL, *t;
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ion_neg_errno();
	for (;;) {
		if (!buf || cap - len < 4096 + 1) {
			cap = buf ? cap * 2 : cap;
			t = realloc(buf, cap);
			if (!t) {
				ret = -ENOMEM;
				break;
			}
			buf = t;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			ret = ion_neg_errno();
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (ret) {
		free(buf);
		return ret;
	}
	buf[len] = 0;
	*out = buf;
	return 0;
}

/*
 * @arr with room for element @used of @size (doubling *@cap as needed):
 * @arr itself, its reallocation, or NULL when out of memory (@arr is
 * still valid then).
 */
static void *ion_dbg_grow(void *arr, size_t *cap, size_t used, size_t size)
{
	size_t ncap;
	void *t;

	if (arr && used < *cap)
		return arr;
	ncap = *cap ? *cap * 2 : 16;
	if (!size || ncap > SIZE_MAX / size)
		return NULL;
	t = realloc(arr, ncap * size);
	if (t)
		*cap = ncap;
	return t;
}

static int ion_dbg_add_kv(struct ion_dbg_file *f, char *line, char *sep)
{
	struct ion_dbg_kv *kv;

	kv = ion_dbg_grow(f->kv, &f->kv_cap, f->nkeys, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	f->kv = kv;
	*sep = 0;
	kv[f->nkeys].key = line;
	kv[f->nkeys++].val = sep + 2;
	return 0;
}

/*
 * Split @line at tabs into @out[0..@n): the last cell takes the rest of
 * the line (a buffer name may hold a tab); cells the line lacks are NULL.
 */
static void ion_dbg_split(char *line, char **out, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		out[i] = line;
		if (line && i + 1 < n) {
			line = strchr(line, '\t');
			if (line)
				*line++ = 0;
		}
	}
}

static int ion_dbg_add_header(struct ion_dbg_file *f, char *line)
{
	const char *p;

	f->ncols = 1;
	for (p = line; (p = strchr(p, '\t')); p++)
		f->ncols++;
	f->col = calloc(f->ncols, sizeof(*f->col));
	if (!f->col)
		return -ENOMEM;
	ion_dbg_split(line, f->col, f->ncols);
	return 0;
}

static int ion_dbg_add_row(struct ion_dbg_file *f, char *line)
{
	char **cell;

	cell = ion_dbg_grow(f->cell, &f->row_cap, f->nrows,
			    f->ncols * sizeof(*cell));
	if (!cell)
		return -ENOMEM;
	f->cell = cell;
	ion_dbg_split(line, &f->cell[f->nrows++ * f->ncols], f->ncols);
	return 0;
}

/*
 * Key lines ("key: value", no tab) until the first other line, which is
 * the table's header; every later non-empty line is a row.
 */
static int ion_dbg_parse(struct ion_dbg_file *f, unsigned int flags)
{
	char *line, *next, *sep;
	int ret = 0;

	for (line = f->text; line && !ret; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!*line)
			continue;
		if (!f->ncols && !strchr(line, '\t') &&
		    (sep = strstr(line, ": ")))
			ret = ion_dbg_add_kv(f, line, sep);
		else if (flags & ION_DBG_KEYS_ONLY)
			break;
		else if (!f->ncols)
			ret = ion_dbg_add_header(f, line);
		else
			ret = ion_dbg_add_row(f, line);
	}
	return ret;
}

ION_INTERNAL void ion_dbg_free(struct ion_dbg_file *f)
{
	if (!f)
		return;
	free(f->cell);
	free(f->col);
	free(f->kv);
	free(f->text);
	free(f);
}

/* @fmt, @ap into @path: 0 or -ENAMETOOLONG. */
static int ion_dbg_path(char *path, size_t len, const char *fmt, va_list ap)
{
	int n = vsnprintf(path, len, fmt, ap);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

ION_INTERNAL int ion_dbg_read(struct ion_dbg_file **fp, unsigned int flags,
			      const char *fmt, ...)
{
	struct ion_dbg_file *f;
	char path[PATH_MAX];
	va_list ap;
	int ret;

	if (!fp || !fmt)
		return -EINVAL;
	va_start(ap, fmt);
	ret = ion_dbg_path(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (ret)
		return ret;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	ret = ion_dbg_slurp(path, &f->text);
	if (!ret)
		ret = ion_dbg_parse(f, flags);
	if (ret) {
		ion_dbg_free(f);
		return ret;
	}
	*fp = f;
	return 0;
}

ION_INTERNAL unsigned int ion_dbg_nkeys(const struct ion_dbg_file *f)
{
	return (unsigned int)f->nkeys;
}

ION_INTERNAL const char *ion_dbg_key(const struct ion_dbg_file *f,
				     unsigned int i)
{
	return i < f->nkeys ? f->kv[i].key : NULL;
}

ION_INTERNAL const char *ion_dbg_val(const struct ion_dbg_file *f,
				     unsigned int i)
{
	return i < f->nkeys ? f->kv[i].val : NULL;
}

ION_INTERNAL const char *ion_dbg_get(const struct ion_dbg_file *f,
				     const char *key)
{
	size_t i;

	for (i = 0; i < f->nkeys; i++)
		if (!strcmp(f->kv[i].key, key))
			return f->kv[i].val;
	return NULL;
}

ION_INTERNAL int ion_dbg_get_ull(const struct ion_dbg_file *f,
				 const char *key, unsigned long long *v)
{
	const char *s = ion_dbg_get(f, key);
	char *end;

	if (!s)
		return -ENOENT;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

ION_INTERNAL unsigned int ion_dbg_ncols(const struct ion_dbg_file *f)
{
	return f->ncols;
}

ION_INTERNAL const char *ion_dbg_col(const struct ion_dbg_file *f,
				     unsigned int col)
{
	return col < f->ncols ? f->col[col] : NULL;
}

ION_INTERNAL size_t ion_dbg_nrows(const struct ion_dbg_file *f)
{
	return f->nrows;
}

ION_INTERNAL const char *ion_dbg_cell(const struct ion_dbg_file *f,
				      size_t row, unsigned int col)
{
	const char *c;

	if (row >= f->nrows || col >= f->ncols)
		return "";
	c = f->cell[row * f->ncols + col];
	return c ? c : "";
}

ION_INTERNAL const char *ion_dbg_cell_by_name(const struct ion_dbg_file *f,
					      size_t row, const char *name)
{
	unsigned int i;

	for (i = 0; i < f->ncols; i++)
		if (!strcmp(f->col[i], name))
			return ion_dbg_cell(f, row, i);
	return "";
}

ION_INTERNAL int ion_dbg_foreach(int (*fn)(const char *name, void *data),
				 void *data, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = ion_dbg_path(path, sizeof(path), fmt, ap);
	va_end(ap);
	return ret ? ret : ion_dir_foreach(path, NULL, fn, data);
}
