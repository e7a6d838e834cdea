// SPDX-License-Identifier: MIT
/*
 * The one parser of ion's debugfs files (Documentation/debugfs.rst): the
 * "key: value" lines, an empty line, then a tab-separated table with a
 * header row.  Every lookup of a debugfs number in the tests goes through
 * it_dfs_load().
 */
#include "ion_test_util.h"

void it_dfs_free(struct it_dfs *d)
{
	free(d->text);
	free(d->cells);
	memset(d, 0, sizeof(*d));
}
int it_dfs_load(struct it_dfs *d, const char *path)
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

const char *it_dfs_get(const struct it_dfs *d, const char *key)
{
	int i;

	for (i = 0; i < d->nkeys; i++)
		if (!strcmp(d->keys[i], key))
			return d->vals[i];
	return NULL;
}

long long it_dfs_num(const struct it_dfs *d, const char *key)
{
	const char *v = it_dfs_get(d, key);

	return v ? strtoll(v, NULL, 0) : -1;
}

int it_dfs_col(const struct it_dfs *d, const char *col)
{
	int c;

	for (c = 0; c < d->ncols; c++)
		if (!strcmp(d->cols[c], col))
			return c;
	return -1;
}

const char *it_dfs_cell(const struct it_dfs *d, int row,
			const char *col)
{
	int c = it_dfs_col(d, col);

	if (c < 0 || row < 0 || row >= d->nrows)
		return NULL;
	return d->cells[row * IT_DFS_MAX_COLS + c];
}

int it_dfs_find(const struct it_dfs *d, const char *col,
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

int it_dfs_find_ino(const struct it_dfs *d, int buf_fd)
{
	char ino[32];

	snprintf(ino, sizeof(ino), "%lu", it_ino(buf_fd));
	return it_dfs_find(d, "ino", ino);
}

int it_dfs_load_heap(struct it_dfs *d, const char *heap)
{
	char path[128];

	snprintf(path, sizeof(path), IT_DEBUGFS "/heaps/%s", heap);
	return it_dfs_load(d, path);
}

long long it_dfs_file_num(const char *path, const char *key)
{
	struct it_dfs d;
	long long v;

	if (it_dfs_load(&d, path))
		return -1;
	v = it_dfs_num(&d, key);
	it_dfs_free(&d);
	return v;
}

long long it_heap_num(const char *heap, const char *key)
{
	char path[128];

	snprintf(path, sizeof(path), IT_DEBUGFS "/heaps/%s", heap);
	return it_dfs_file_num(path, key);
}

int it_summary(long long *buffers, long long *bytes)
{
	struct it_dfs d;
	int ret = it_dfs_load(&d, IT_DEBUGFS "/summary");

	*buffers = *bytes = -1;
	if (ret)
		return ret;
	*buffers = it_dfs_num(&d, "buffers");
	*bytes = it_dfs_num(&d, "bytes");
	it_dfs_free(&d);
	return (*buffers < 0 || *bytes < 0) ? -EPROTO : 0;
}

void it_totals_get(struct it_totals *t)
{
	if (it_summary(&t->buffers, &t->bytes))
		t->buffers = t->bytes = -1;
}

int it_totals_back(const struct it_totals *t, const char *what)
{
	struct it_totals now;

	if (it_summary(&now.buffers, &now.bytes))
		now.buffers = now.bytes = -2;
	if (tap_ok(now.buffers == t->buffers && now.bytes == t->bytes,
		   "%s", what))
		return 1;
	tap_diag("buffers %lld -> %lld, bytes %lld -> %lld", t->buffers,
		 now.buffers, t->bytes, now.bytes);
	return 0;
}

long long it_buffer_num_ino(unsigned long ino, const char *heap,
			    const char *col)
{
	struct it_dfs d;
	const char *v;
	long long ret = -1;
	char s[32];

	if (it_dfs_load_heap(&d, heap))
		return -1;
	snprintf(s, sizeof(s), "%lu", ino);
	v = it_dfs_cell(&d, it_dfs_find(&d, "ino", s), col);
	if (v)
		ret = strtoll(v, NULL, 0);
	it_dfs_free(&d);
	return ret;
}

long long it_buffer_num(int buf_fd, const char *heap, const char *col)
{
	return it_buffer_num_ino(it_ino(buf_fd), heap, col);
}

int it_buffer_has_device(int buf_fd, const char *heap, const char *name)
{
	char want[64], s[32], *list, *item, *save;
	const char *v;
	struct it_dfs d;
	int ret = -1;

	if (it_dfs_load_heap(&d, heap))
		return -1;
	snprintf(s, sizeof(s), "%lu", it_ino(buf_fd));
	snprintf(want, sizeof(want), "(%s)", name);
	v = it_dfs_cell(&d, it_dfs_find(&d, "ino", s), "devices");
	list = v ? strdup(v) : NULL;
	for (item = list ? strtok_r(list, ",", &save) : NULL; item;
	     item = strtok_r(NULL, ",", &save)) {
		size_t l = strlen(item), k = strlen(want), n = strlen(name);

		/* "device", "device(driver)" or "...(name)" */
		if (!strcmp(item, name) ||
		    (!strncmp(item, name, n) && item[n] == '(') ||
		    (l > k && !strcmp(item + l - k, want)))
			ret = 1;
	}
	if (list && ret < 0) {
		tap_diag("%s: devices of ino %s: %s, no %s", heap, s, v, want);
		ret = 0;
	}
	free(list);
	it_dfs_free(&d);
	return ret;
}

int it_heap_has_buffer(int buf_fd, const char *heap)
{
	char path[128], want[32], *text = NULL, *line, *save, *tok, *tsave;
	int ret, col = -1, c, found = 0, table = 0;

	snprintf(path, sizeof(path), IT_DEBUGFS "/heaps/%s", heap);
	snprintf(want, sizeof(want), "%lu", it_ino(buf_fd));
	ret = it_read_file(path, &text);
	if (ret < 0)
		return ret;
	/* Every row, however many: no IT_DFS_MAX_ROWS here. */
	for (line = strtok_r(text, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!table) {
			table = !strchr(line, ':') && strchr(line, '\t');
			if (!table)
				continue;
			for (c = 0, tok = strtok_r(line, "\t", &tsave); tok;
			     c++, tok = strtok_r(NULL, "\t", &tsave))
				if (!strcmp(tok, "ino"))
					col = c;
			if (col < 0)
				break;
			continue;
		}
		for (c = 0, tok = strtok_r(line, "\t", &tsave);
		     tok && c < col; c++)
			tok = strtok_r(NULL, "\t", &tsave);
		found = tok && !strcmp(tok, want);
	}
	free(text);
	return col < 0 ? -EPROTO : found;
}

int it_buffer_in_heap(int buf_fd, const char *heap)
{
	return it_heap_has_buffer(buf_fd, heap) == 1;
}

int it_clients_of(pid_t pid)
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

void it_buffer_heap(const struct it_heaps *hs, int buf_fd,
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
