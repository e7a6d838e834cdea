// SPDX-License-Identifier: MIT
/*
 * debugfs (Documentation/debugfs.rst) before, during and after: summary,
 * heaps/<name> and clients/<name> show our buffers, handles, owners,
 * refcounts and DMA_BUF_SET_NAME names; totals return to where they were
 * after close; no file shows a kernel pointer.
 */
#include <sys/wait.h>

#include "ion_test_util.h"

static const char *const heap_cols[] = {
	"buffer", "ino", "size", "flags", "owner", "handles", "attachments",
	"name", "orphan", "devices", "detail",
};

static const char *const client_cols[] = {
	"handle", "buffer", "ino", "size", "heap", "refcount",
};

static int cols_are(const struct it_dfs *d, const char *const *cols, int n)
{
	int i;

	if (d->ncols != n)
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(d->cols[i], cols[i]))
			return 0;
	return 1;
}

struct totals {
	long long heaps, clients, buffers, bytes, peak;
};

static int totals(struct totals *t)
{
	struct it_dfs d;
	int ret = it_dfs_load(&d, IT_DEBUGFS "/summary");

	if (ret)
		return ret;
	t->heaps = it_dfs_num(&d, "heaps");
	t->clients = it_dfs_num(&d, "clients");
	t->buffers = it_dfs_num(&d, "buffers");
	t->bytes = it_dfs_num(&d, "bytes");
	t->peak = it_dfs_num(&d, "peak_bytes");
	it_dfs_free(&d);
	return 0;
}

static int client_path(char *buf, size_t size)
{
	char name[64];

	it_client_name(name, sizeof(name));
	return snprintf(buf, size, IT_DEBUGFS "/clients/%s", name);
}

/* A cell of the heap-file row of @buf_fd, or "" */
static const char *heap_cell(struct it_dfs *d, const char *heap, int buf_fd,
			     const char *col)
{
	const char *v;

	it_dfs_free(d);
	if (it_dfs_load_heap(d, heap))
		return "";
	v = it_dfs_cell(d, it_dfs_find_ino(d, buf_fd), col);
	return v ? v : "";
}

/* Scan one file for something that looks like a kernel address. */
static int has_pointer(const char *path)
{
	char *text = NULL, *p;
	int found = 0;

	if (it_read_file(path, &text) < 0)
		return 0;
	for (p = text; (p = strstr(p, "ffff")); p += 4) {
		int n = 0;

		while (isxdigit((unsigned char)p[n]))
			n++;
		if (n >= 12)
			found = 1;
	}
	free(text);
	return found;
}

static int scan_pointers(const char *dir)
{
	char path[512];
	struct dirent *e;
	struct stat st;
	int found = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			found |= scan_pointers(path);
		else if (has_pointer(path)) {
			tap_diag("%s looks like it shows a pointer", path);
			found = 1;
		}
	}
	closedir(d);
	return found;
}

static void static_cases(const struct it_heaps *hs)
{
	struct totals t;
	unsigned int i;

	tap_ok(!totals(&t) && t.heaps == hs->cnt && t.buffers >= 0 &&
	       t.bytes >= 0 && t.peak >= t.bytes && t.clients >= 0,
	       "summary: heaps, clients, buffers, bytes, peak_bytes");
	for (i = 0; i < hs->cnt; i++) {
		const struct ion_heap_data *h = &hs->h[i];
		struct it_dfs d;
		const char *name;

		if (it_dfs_load_heap(&d, h->name)) {
			tap_ok(0, "heaps/%s exists", h->name);
			continue;
		}
		name = it_dfs_get(&d, "name");
		tap_ok(name && !strcmp(name, h->name) &&
		       it_dfs_num(&d, "type") == h->type &&
		       it_dfs_num(&d, "id") == h->heap_id &&
		       it_dfs_num(&d, "buffers") >= 0 &&
		       it_dfs_num(&d, "bytes") >= 0 &&
		       it_dfs_num(&d, "peak_bytes") >= it_dfs_num(&d, "bytes") &&
		       it_dfs_num(&d, "allocs") >= 0 &&
		       it_dfs_num(&d, "alloc_failures") >= 0,
		       "heaps/%s: name, type, id and counters as HEAP_QUERY",
		       h->name);
		tap_ok(cols_are(&d, heap_cols, IT_ARRAY_SIZE(heap_cols)),
		       "heaps/%s: table columns", h->name);
		it_dfs_free(&d);
	}
}

/* Another process imports @buf_fd while we look at the heap file. */
static void second_importer_case(const char *heap, int buf_fd)
{
	int up[2], down[2], status;
	struct it_dfs d = { 0 };
	const char *v;
	pid_t pid;
	char b;

	if (pipe(up) || pipe(down))
		return;
	pid = fork();
	if (pid == 0) {
		ion_user_handle_t h;
		int ion = it_open();

		b = (ion >= 0 && !it_import(ion, buf_fd, &h)) ? 'y' : 'n';
		if (write(up[1], &b, 1) != 1 || read(down[0], &b, 1) != 1)
			_exit(2);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	if (read(up[0], &b, 1) != 1)
		b = 'n';
	v = heap_cell(&d, heap, buf_fd, "handles");
	tap_ok(b == 'y' && !strcmp(v, "2"),
	       "heaps/%s: handles is 2 while a second process imported it",
	       heap);
	if (strcmp(v, "2"))
		tap_diag("handles '%s'", v);
	if (write(down[1], "x", 1) != 1)
		tap_diag("child gone");
	waitpid(pid, &status, 0);
	v = heap_cell(&d, heap, buf_fd, "handles");
	tap_ok(!strcmp(v, "1"),
	       "heaps/%s: handles back to 1 after that process exited", heap);
	it_dfs_free(&d);
	close(up[0]);
	close(down[1]);
}

static void live_cases(const struct it_heaps *hs)
{
	const char *sys = ION_SYSTEM_HEAP_NAME;
	const char *other = hs->cnt > 1 ? hs->h[0].name : NULL;
	struct totals t0, t1, t2;
	struct it_dfs d = { 0 }, hd0 = { 0 };
	char cpath[160], me[64], buf[64];
	ion_user_handle_t h1 = 0, h2 = 0, h3 = 0;
	int ion, fd1 = -1, fd3, ret, row;
	long long allocs0;
	const char *v;
	struct stat st;

	it_client_name(me, sizeof(me));
	client_path(cpath, sizeof(cpath));
	totals(&t0);
	it_dfs_load_heap(&hd0, sys);
	allocs0 = it_dfs_num(&hd0, "allocs");

	ion = it_open();
	totals(&t1);
	tap_ok(t1.clients == t0.clients + 1, "summary: clients +1 after open");
	ret = it_dfs_load(&d, cpath);
	tap_ok(!ret && !strcmp(it_dfs_get(&d, "kind") ?: "", "user") &&
	       it_dfs_num(&d, "pid") == getpid() &&
	       !strcmp(it_dfs_get(&d, "name") ?: "", me) &&
	       it_dfs_num(&d, "handles") == 0 && it_dfs_num(&d, "bytes") == 0,
	       "clients/%s: kind user, our pid, no handles", me);
	tap_ok(!ret && cols_are(&d, client_cols, IT_ARRAY_SIZE(client_cols)),
	       "clients/<name>: table columns");
	it_dfs_free(&d);

	/* two handles: 8 KiB cached on system, 4 KiB on the top heap */
	it_alloc_handle(ion, 8192, 0, ION_HEAP_SYSTEM_MASK, ION_FLAG_CACHED,
			&h1);
	if (other && strcmp(other, sys))
		it_alloc_handle(ion, 4096, 0, 1U << hs->h[0].heap_id, 0, &h2);
	fd1 = it_share(ion, h1);
	/* a third buffer through the fd ABI: no handle */
	fd3 = it_alloc_fd(ion, 16384, ION_HEAP_SYSTEM_MASK, 0);

	ret = it_dfs_load(&d, cpath);
	tap_ok(!ret && it_dfs_num(&d, "handles") == (h2 ? 2 : 1) &&
	       it_dfs_num(&d, "bytes") == (h2 ? 12288 : 8192),
	       "clients/<name>: handles and bytes count our handles only");
	snprintf(buf, sizeof(buf), "heap %s", sys);
	tap_ok(!strcmp(it_dfs_get(&d, buf) ?: "", "1 8192"),
	       "clients/<name>: 'heap %s: 1 8192'", sys);
	snprintf(buf, sizeof(buf), "%d", h1);
	row = it_dfs_find(&d, "handle", buf);
	snprintf(buf, sizeof(buf), "%lu", it_ino(fd1));
	tap_ok(row >= 0 && !strcmp(it_dfs_cell(&d, row, "size") ?: "", "8192") &&
	       !strcmp(it_dfs_cell(&d, row, "heap") ?: "", sys) &&
	       !strcmp(it_dfs_cell(&d, row, "ino") ?: "", buf) &&
	       !strcmp(it_dfs_cell(&d, row, "refcount") ?: "", "1"),
	       "clients/<name>: row of the handle (size, heap, ino, refcount 1)");
	snprintf(buf, sizeof(buf), "%s", it_dfs_cell(&d, row, "buffer") ?: "?");
	it_dfs_free(&d);

	v = heap_cell(&d, sys, fd1, "buffer");
	tap_ok(!strcmp(v, buf), "heaps/%s and clients/<name> agree on the buffer id",
	       sys);
	tap_ok(!strcmp(heap_cell(&d, sys, fd1, "size"), "8192") &&
	       !strcmp(heap_cell(&d, sys, fd1, "flags"), "0x1") &&
	       !strcmp(heap_cell(&d, sys, fd1, "owner"), me) &&
	       !strcmp(heap_cell(&d, sys, fd1, "handles"), "1") &&
	       !strcmp(heap_cell(&d, sys, fd1, "attachments"), "0") &&
	       !strcmp(heap_cell(&d, sys, fd1, "name"), "-"),
	       "heaps/%s: row of the handle's buffer (size, flags 0x1, owner, handles 1, attachments 0, no name)",
	       sys);
	tap_ok(fd3 >= 0 && !strcmp(heap_cell(&d, sys, fd3, "owner"), me) &&
	       !strcmp(heap_cell(&d, sys, fd3, "handles"), "0") &&
	       !strcmp(heap_cell(&d, sys, fd3, "size"), "16384"),
	       "heaps/%s: fd-ABI buffer listed with us as owner, no handle", sys);

	/* import of our own share: same handle, refcount 2 */
	it_import(ion, fd1, &h3);
	ret = it_dfs_load(&d, cpath);
	snprintf(buf, sizeof(buf), "%d", h1);
	row = it_dfs_find(&d, "handle", buf);
	tap_ok(h3 == h1 && !strcmp(it_dfs_cell(&d, row, "refcount") ?: "", "2") &&
	       it_dfs_num(&d, "handles") == (h2 ? 2 : 1),
	       "clients/<name>: import of own share raises refcount to 2");
	tap_ok(!strcmp(heap_cell(&d, sys, fd1, "handles"), "1"),
	       "heaps/%s: still one client holds a handle", sys);
	it_free(ion, h3);
	second_importer_case(sys, fd1);

	/* DMA_BUF_SET_NAME */
	ret = it_ioctl(fd3, DMA_BUF_SET_NAME_B, (void *)"ion-test-name");
	tap_ok(!ret && !strcmp(heap_cell(&d, sys, fd3, "name"), "ion-test-name"),
	       "heaps/%s: DMA_BUF_SET_NAME shows in the name column", sys);
	buf[0] = 0;
	it_fdinfo(fd3, "name", buf, sizeof(buf));
	tap_ok(!strcmp(buf, "ion-test-name"), "fdinfo shows the name too");

	totals(&t2);
	tap_ok(t2.buffers == t0.buffers + (h2 ? 3 : 2) &&
	       t2.bytes == t0.bytes + 8192 + 16384 + (h2 ? 4096 : 0) &&
	       t2.peak >= t2.bytes,
	       "summary: buffers and bytes count our buffers, peak >= bytes");
	it_dfs_free(&d);
	it_dfs_load_heap(&d, sys);
	tap_ok(it_dfs_num(&d, "allocs") >= allocs0 + 2 &&
	       it_dfs_num(&d, "bytes") >= 8192 + 16384 &&
	       it_dfs_num(&d, "peak_bytes") >= it_dfs_num(&d, "bytes"),
	       "heaps/%s: allocs, bytes, peak_bytes", sys);
	it_dfs_free(&d);

	tap_ok(!scan_pointers(IT_DEBUGFS), "no debugfs file shows a kernel pointer");

	/* FREE the handle: the buffer stays while fd1 holds it */
	it_free(ion, h1);
	tap_ok(!strcmp(heap_cell(&d, sys, fd1, "handles"), "0"),
	       "heaps/%s: handles 0 after FREE, buffer kept by its fd", sys);
	close(fd1);
	close(fd3);
	if (h2)
		it_free(ion, h2);
	ret = it_dfs_load(&d, cpath);
	tap_ok(!ret && it_dfs_num(&d, "handles") == 0 &&
	       it_dfs_num(&d, "bytes") == 0 && d.nrows == 0,
	       "clients/<name>: empty after FREE");
	it_dfs_free(&d);
	close(ion);

	tap_ok(stat(cpath, &st) && errno == ENOENT,
	       "clients/<name> gone after the last fd closed");
	totals(&t2);
	tap_ok(t2.clients == t0.clients && t2.buffers == t0.buffers &&
	       t2.bytes == t0.bytes,
	       "summary: clients, buffers and bytes back to the start");
	tap_diag("start: clients %lld buffers %lld bytes %lld", t0.clients,
		 t0.buffers, t0.bytes);
	it_dfs_load_heap(&d, sys);
	tap_ok(it_dfs_num(&d, "buffers") == it_dfs_num(&hd0, "buffers") &&
	       it_dfs_num(&d, "bytes") == it_dfs_num(&hd0, "bytes") &&
	       d.nrows == hd0.nrows,
	       "heaps/%s: back to the start", sys);
	it_dfs_free(&d);
	it_dfs_free(&hd0);
}

int main(void)
{
	struct it_heaps hs;
	int ion = it_setup(&hs);

	/* the heap list is all we need from this fd */
	close(ion);
	static_cases(&hs);
	live_cases(&hs);
	return tap_exit();
}
