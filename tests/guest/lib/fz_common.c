// SPDX-License-Identifier: MIT
/*
 * Helpers of the reliability tests (see fz_common.h): PRNG, debugfs
 * "back to zero" checks, /dev/dma_heap/ion-* nodes, module loading.
 */
#include "fz_common.h"

uint64_t fz_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x ? x : 0x9e3779b97f4a7c15ULL;
}

uint64_t fz_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

uint64_t fz_below(uint64_t *s, uint64_t n)
{
	return fz_next(s) % n;
}

int fz_one_in(uint64_t *s, uint64_t n)
{
	return fz_below(s, n) == 0;
}

/* Print up to @max lines of @path (a buffer left behind: who holds it). */
static void fz_dump_file(const char *path, int max)
{
	char line[512];
	FILE *f = fopen(path, "re");
	int n = 0;

	if (!f)
		return;
	while (n < max && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		tap_diag("%s: %s", path, line);
		n++;
	}
	fclose(f);
}

/* Print @pid's mappings of dma-bufs, up to *@n in all. */
static void fz_dump_maps(const char *pid, int *n)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%.16s/maps", pid);
	f = fopen(path, "re");
	while (f && *n < 10 && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "dmabuf"))
			continue;
		line[strcspn(line, "\n")] = 0;
		tap_diag("pid %s maps: %s", pid, line);
		(*n)++;
	}
	if (f)
		fclose(f);
}

/* Print the processes that still hold a dma-buf fd or mapping, up to 10. */
static void fz_dump_holders(void)
{
	char path[300], target[128];
	struct dirent *p, *f;
	int n = 0;
	ssize_t len;
	DIR *pd, *fd;

	pd = opendir("/proc");
	while (pd && n < 10 && (p = readdir(pd))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		fz_dump_maps(p->d_name, &n);
		snprintf(path, sizeof(path), "/proc/%.16s/fd", p->d_name);
		fd = opendir(path);
		while (fd && n < 10 && (f = readdir(fd))) {
			snprintf(path, sizeof(path), "/proc/%.16s/fd/%.16s",
				 p->d_name, f->d_name);
			len = readlink(path, target, sizeof(target) - 1);
			if (len <= 0)
				continue;
			target[len] = 0;
			if (strstr(target, "dmabuf")) {
				tap_diag("pid %s fd %s: %s", p->d_name,
					 f->d_name, target);
				n++;
			}
		}
		if (fd)
			closedir(fd);
	}
	if (pd)
		closedir(pd);
}

int fz_dfs_clean(const char *prefix, int verbose)
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
			if (verbose) {	/* who holds what was left */
				fz_dump_file(path, 40);
				fz_dump_file("/sys/kernel/debug/dma_buf/bufinfo",
					     40);
				fz_dump_holders();
			}
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

int fz_dfs_wait_clean(const char *prefix, int max_ms)
{
	long long t0 = it_now_ms();

	while (!fz_dfs_clean(prefix, 0)) {
		if (it_now_ms() - t0 > max_ms)
			return fz_dfs_clean(prefix, 1);
		usleep(20000);
	}
	return 1;
}

void fz_client_prefix(char *buf, size_t size)
{
	char comm[32];

	it_comm(comm, sizeof(comm));
	snprintf(buf, size, "%s-", comm);
}

void fz_nodes_load(struct fz_nodes *n)
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

int fz_node_alloc(int node, uint64_t len)
{
	struct dma_heap_allocation_data a = {
		.len = len, .fd_flags = O_RDWR | O_CLOEXEC,
	};
	int ret = it_ioctl(node, DMA_HEAP_IOCTL_ALLOC, &a);

	return ret ? ret : (int)a.fd;
}

int fz_module_loaded(const char *name)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return !stat(path, &st);
}

int fz_unload(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

int fz_holders(const char *name, int verbose)
{
	char path[128];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/sys/module/%s/holders", name);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			if (verbose)
				tap_diag("%s.ko is used by %s", name, e->d_name);
			n++;
		}
	closedir(d);
	return n;
}

int fz_unload_refused(const char *what)
{
	int ret = fz_unload("ion");

	if (!ret) {
		tap_diag("ion.ko unloaded while %s lives", what);
		fz_load_ion();
	} else if (ret != -EWOULDBLOCK && ret != -EBUSY) {
		tap_diag("delete_module: %s", strerror(-ret));
	}
	return tap_ok(ret == -EWOULDBLOCK || ret == -EBUSY,
		      "unload refused while %s lives", what);
}

int fz_load_ion(void)
{
	if (!fz_module_loaded("ion") && system("modprobe ion") != 0)
		return 0;
	return it_wait_path(IT_DEV, 1);
}
