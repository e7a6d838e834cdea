// SPDX-License-Identifier: MIT
/*
 * ionctl heaps, clients, buffers, quota, stat: the debugfs views
 * (Documentation/debugfs.rst) as tables or JSON.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ionctl.h"

static void show_heap(const struct ion_heap_data *h,
		      const struct ion_dbg_file *f, int first)
{
	static const char *const ids[] = { "name", "type", "id", NULL };
	char b[4][32];

	if (json) {
		printf("%s{", first ? "" : ", ");
		json_kv(1, "name", h->name);
		snprintf(b[0], sizeof(b[0]), "%u", h->type);
		json_kv(0, "type", b[0]);
		snprintf(b[0], sizeof(b[0]), "%u", h->heap_id);
		json_kv(0, "id", b[0]);
		if (f)
			json_keys(f, 0, ids);
		printf("}");
		return;
	}
	printf("%-24s %4u %3u %9s %9s %9s %9s %7s\n", h->name, h->type,
	       h->heap_id,
	       human(f ? ion_dbg_get(f, "region_size") : NULL, b[0], 32),
	       human(f ? ion_dbg_get(f, "bytes") : NULL, b[1], 32),
	       human(f ? ion_dbg_get(f, "free") : NULL, b[2], 32),
	       human(f ? ion_dbg_get(f, "largest_free") : NULL, b[3], 32),
	       f ? ion_dbg_get(f, "buffers") ?: "?" : "-");
}

int cmd_heaps(void)
{
	struct ion_device *dev;
	int n, i, dbg_err = 0;

	if (open_dev(&dev))
		return EXIT_NOION;
	n = ion_device_heap_count(dev);
	if (json)
		printf("[");
	else
		printf("%-24s %4s %3s %9s %9s %9s %9s %7s\n", "NAME", "TYPE",
		       "ID", "SIZE", "USED", "FREE", "LARGEST", "BUFFERS");
	for (i = 0; i < n; i++) {
		const struct ion_heap_data *h = ion_device_heap(dev, i);
		struct ion_dbg_file *f = NULL;
		int err;

		err = ion_dbg_read(&f, ION_DBG_KEYS_ONLY, "%s/heaps/%s",
				   dbgdir, h->name);
		if (err && !dbg_err)
			dbg_err = err;
		show_heap(h, err ? NULL : f, !i);
		ion_dbg_free(err ? NULL : f);
	}
	if (json)
		printf("]\n");
	ion_device_close(dev);
	return dbg_err ? debugfs_error(dbg_err) : EXIT_OK;
}

/* A view: called with every file of a debugfs subdirectory. */
struct view {
	const char *sub;
	void (*show)(const char *name, const struct ion_dbg_file *f,
		     struct view *v);
	const char *heap;	/* buffers --heap: only this heap's */
	unsigned int what;	/* buffers: BUFFERS_* */
	struct holders hs;	/* buffers --holders: the /proc scan */
	int first;		/* nothing printed yet */
	int err;		/* a file could not be read for another reason */
};

static int view_file(const char *name, void *data)
{
	struct view *v = data;
	struct ion_dbg_file *f;
	int err;

	err = ion_dbg_read(&f, 0, "%s/%s/%s", dbgdir, v->sub, name);
	if (err == -ENOENT || err == -EIO)
		return 0;	/* went away meanwhile */
	if (err) {
		fprintf(stderr, "ionctl: %s/%s/%s: %s\n", dbgdir, v->sub, name,
			strerror(-err));
		v->err = err;
		return 0;
	}
	v->show(name, f, v);
	ion_dbg_free(f);
	return 0;
}

static int run_view(struct view *v)
{
	int err;

	v->first = 1;
	if (json)
		printf("[");
	err = ion_dbg_foreach(view_file, v, "%s/%s", dbgdir, v->sub);
	if (err) {
		if (json)
			printf("]\n");
		return debugfs_error(err);
	}
	if (json)
		printf("]\n");
	else if (v->first)
		printf("no %s\n", !strcmp(v->sub, "heaps") ? "buffers" : v->sub);
	return v->err ? EXIT_FAIL : EXIT_OK;
}

static void show_client(const char *name, const struct ion_dbg_file *f,
			struct view *v)
{
	char b[32];

	if (json) {
		printf("%s{", v->first ? "" : ", ");
		json_keys(f, 1, NULL);
		printf("}");
	} else {
		if (v->first)
			printf("%-28s %-6s %6s %7s %9s\n", "NAME", "KIND",
			       "PID", "HANDLES", "BYTES");
		printf("%-28s %-6s %6s %7s %9s\n", name,
		       ion_dbg_get(f, "kind") ?: "?",
		       ion_dbg_get(f, "pid") ?: "?",
		       ion_dbg_get(f, "handles") ?: "?",
		       human(ion_dbg_get(f, "bytes"), b, sizeof(b)));
	}
	v->first = 0;
}

int cmd_clients(void)
{
	struct view v = { .sub = "clients", .show = show_client };

	return run_view(&v);
}

/* buffers --holders: owner, orphan, devices, holding processes. */
static void show_holders_row(const char *heap, const struct ion_dbg_file *f,
			     size_t r, const struct view *v)
{
	const char *ino = ion_dbg_cell_by_name(f, r, "ino");
	char b[32];

	if (v->first)
		printf("%6s %-22s %9s %-20s %6s %-24s %s\n", "BUFFER", "HEAP",
		       "SIZE", "OWNER", "ORPHAN", "DEVICES", "HOLDERS");
	printf("%6s %-22s %9s %-20s %6s %-24s ",
	       ion_dbg_cell_by_name(f, r, "buffer"), heap,
	       human(ion_dbg_cell_by_name(f, r, "size"), b, sizeof(b)),
	       ion_dbg_cell_by_name(f, r, "owner"),
	       strcmp(ion_dbg_cell_by_name(f, r, "orphan"), "1") ? "no" : "yes",
	       ion_dbg_cell_by_name(f, r, "devices"));
	holders_print(&v->hs, strtoul(ino, NULL, 10));
	putchar('\n');
}

static void show_buffer_row(const char *heap, const struct ion_dbg_file *f,
			    size_t r, const struct view *v)
{
	int first = v->first;
	char b[32];

	if (json) {
		printf("%s{", first ? "" : ", ");
		json_kv(1, "heap", heap);
		for (unsigned int c = 0; c < ion_dbg_ncols(f); c++)
			json_kv(0, ion_dbg_col(f, c), ion_dbg_cell(f, r, c));
		if (v->what & BUFFERS_HOLDERS) {
			printf(", \"holders\": ");
			holders_print(&v->hs, strtoul(ion_dbg_cell_by_name(f,
						r, "ino"), NULL, 10));
		}
		printf("}");
		return;
	}
	if (v->what & BUFFERS_HOLDERS) {
		show_holders_row(heap, f, r, v);
		return;
	}
	if (first)
		printf("%6s %-22s %9s %-6s %-20s %7s %7s %-12s %s\n", "BUFFER",
		       "HEAP", "SIZE", "FLAGS", "OWNER", "HANDLES", "ATTACH",
		       "NAME", "DETAIL");
	printf("%6s %-22s %9s %-6s %-20s %7s %7s %-12s %s\n",
	       ion_dbg_cell_by_name(f, r, "buffer"), heap,
	       human(ion_dbg_cell_by_name(f, r, "size"), b, sizeof(b)),
	       ion_dbg_cell_by_name(f, r, "flags"),
	       ion_dbg_cell_by_name(f, r, "owner"),
	       ion_dbg_cell_by_name(f, r, "handles"),
	       ion_dbg_cell_by_name(f, r, "attachments"),
	       ion_dbg_cell_by_name(f, r, "name"),
	       ion_dbg_cell_by_name(f, r, "detail"));
}

static void show_buffers(const char *heap, const struct ion_dbg_file *f,
			 struct view *v)
{
	if (v->heap && strcmp(v->heap, heap))
		return;
	for (size_t r = 0; r < ion_dbg_nrows(f); r++) {
		if ((v->what & BUFFERS_ORPHANS) &&
		    strcmp(ion_dbg_cell_by_name(f, r, "orphan"), "1"))
			continue;
		show_buffer_row(heap, f, r, v);
		v->first = 0;
	}
}

int cmd_buffers(const char *heap, unsigned int what)
{
	struct view v = { .sub = "heaps", .show = show_buffers, .heap = heap,
			  .what = what };
	char path[512];
	struct stat st;
	int ret;

	if (heap) {
		snprintf(path, sizeof(path), "%s/heaps/%s", dbgdir, heap);
		if (stat(path, &st)) {
			if (errno != ENOENT || stat(dbgdir, &st))
				return debugfs_error(-errno);
			fprintf(stderr, "ionctl: no heap named '%s' (see ionctl heaps)\n",
				heap);
			return EXIT_USAGE;
		}
	}
	if (what & BUFFERS_HOLDERS) {
		ret = holders_scan(&v.hs);
		if (ret) {
			fprintf(stderr, "ionctl: /proc: %s\n", strerror(-ret));
			holders_free(&v.hs);
			return EXIT_FAIL;
		}
	}
	ret = run_view(&v);
	holders_free(&v.hs);
	return ret;
}

/* One row of the quota file: heap, kind (uid/client), who, bytes, limit. */
static void show_quota_row(const struct ion_dbg_file *f, size_t r, int first)
{
	const char *bytes = ion_dbg_cell_by_name(f, r, "bytes");
	const char *limit = ion_dbg_cell_by_name(f, r, "limit");
	char b[32], l[32], pct[16] = "-";

	if (json) {
		printf("%s{", first ? "" : ", ");
		for (unsigned int c = 0; c < ion_dbg_ncols(f); c++)
			json_kv(!c, ion_dbg_col(f, c), ion_dbg_cell(f, r, c));
		printf("}");
		return;
	}
	if (strcmp(limit, "-") && strtoull(limit, NULL, 10))
		snprintf(pct, sizeof(pct), "%llu%%",
			 strtoull(bytes, NULL, 10) * 100 /
			 strtoull(limit, NULL, 10));
	if (first)
		printf("%-22s %-6s %-24s %9s %9s %5s\n", "HEAP", "KIND", "WHO",
		       "USED", "LIMIT", "USE%");
	printf("%-22s %-6s %-24s %9s %9s %5s\n",
	       ion_dbg_cell_by_name(f, r, "heap"),
	       ion_dbg_cell_by_name(f, r, "kind"),
	       ion_dbg_cell_by_name(f, r, "who"), human(bytes, b, sizeof(b)),
	       strcmp(limit, "-") ? human(limit, l, sizeof(l)) : "-", pct);
}

int cmd_quota(void)
{
	struct ion_dbg_file *f;
	size_t r, n;
	int ret = ion_dbg_read(&f, 0, "%s/quota", dbgdir);

	if (ret)
		return debugfs_error(ret);
	n = ion_dbg_nrows(f);
	if (json)
		printf("[");
	for (r = 0; r < n; r++)
		show_quota_row(f, r, !r);
	if (json)
		printf("]\n");
	else if (!n)
		printf("no buffers\n");
	ion_dbg_free(f);
	return 0;
}

int cmd_stat(void)
{
	struct ion_dbg_file *f;
	char b[32];
	int err;

	err = ion_dbg_read(&f, ION_DBG_KEYS_ONLY, "%s/summary", dbgdir);
	if (err)
		return debugfs_error(err);
	if (json) {
		printf("{");
		json_keys(f, 1, NULL);
		printf("}\n");
	}
	for (unsigned int k = 0; !json && k < ion_dbg_nkeys(f); k++) {
		const char *key = ion_dbg_key(f, k), *val = ion_dbg_val(f, k);
		int big = strstr(key, "bytes") &&
			  strtoull(val, NULL, 10) >= 1024;

		printf("%-12s %s%s%s%s\n", key, val, big ? " (" : "",
		       big ? human(val, b, sizeof(b)) : "", big ? ")" : "");
	}
	ion_dbg_free(f);
	return EXIT_OK;
}
