// SPDX-License-Identifier: MIT
/*
 * Mainline's dma-heap names (Documentation/ion.rst, "Mainline's names"):
 * where the kernel has no heap of that name, /dev/dma_heap/system,
 * system-uncached, linux,cma, default_cma_region and reserved are ion's,
 * backed by the documented heap (its debugfs counters move), with the
 * ion-* nodes' major, minors of their own, and the same ABI
 * (core_heap_nodes' cases, run on each alias).  A name the kernel has
 * (x86_64: mainline's system, class dma_heap) is left alone: still
 * mainline's device, not in ion's class, and allocating there moves no
 * ion counter.  With mainline_names=0 (ion.ko reloaded) there are none;
 * the default load brings them back.
 */
#define CORE_HEAP_NODES_CASES
#include "core_heap_nodes.c"

#include <sys/sysmacros.h>

#include "fz_common.h"

#define PARAM		"/sys/module/ion/parameters/mainline_names"
#define DH_SYS_CLASS	"/sys/class/dma_heap"

/* The names the issue gives: node name = base (+ "-uncached"). */
static const struct {
	const char *base;
	int cached;
	const char *heap;
} aliases[] = {
	{ "system", 1, ION_SYSTEM_HEAP_NAME },
	{ "system", 0, ION_SYSTEM_HEAP_NAME },
	{ "linux,cma", 1, ION_DMA_HEAP_NAME },
	{ "default_cma_region", 1, ION_DMA_HEAP_NAME },
	{ "reserved", 1, ION_CARVEOUT_HEAP_NAME },
};

static const char *alias_name(unsigned int i, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s", aliases[i].base,
		 aliases[i].cached ? "" : "-uncached");
	return buf;
}

static int exists(const char *dir, const char *name)
{
	char path[200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !stat(path, &st);
}

/* st_rdev of /dev/dma_heap/@name, or 0. */
static dev_t node_rdev(const char *name)
{
	char path[200];
	struct stat st;

	snprintf(path, sizeof(path), DH_DIR "/%s", name);
	return stat(path, &st) ? 0 : st.st_rdev;
}

/* The "MAJ:MIN" of a sysfs class device as a dev_t, or 0. */
static dev_t sysfs_devt(const char *class, const char *name)
{
	char path[200], *text;
	unsigned int ma, mi;
	dev_t d = 0;

	snprintf(path, sizeof(path), "%s/%s/dev", class, name);
	if (it_read_file(path, &text) < 0)
		return 0;
	if (sscanf(text, "%u:%u", &ma, &mi) == 2)
		d = makedev(ma, mi);
	free(text);
	return d;
}

/* allocs over every ion heap. */
static long long all_allocs(const struct it_heaps *hs)
{
	long long n = 0;
	unsigned int i;

	for (i = 0; i < hs->cnt; i++)
		n += it_heap_num(hs->h[i].name, "allocs");
	return n;
}

/* The kernel's own node: its device, not ion's, and ion counts nothing. */
static void mainline_cases(const char *name, const struct it_heaps *hs)
{
	dev_t want = sysfs_devt(DH_SYS_CLASS, name);
	long long a0 = all_allocs(hs), b0, y0, b1 = -1, y1 = -1;
	int hfd, fd;

	tap_ok(!exists(DH_ION_CLASS, name),
	       "%s: the kernel's own heap, no ion alias in %s", name,
	       DH_ION_CLASS);
	tap_ok(want && node_rdev(name) == want,
	       "%s: /dev/dma_heap/%s is still the kernel's device (%u:%u)",
	       name, name, major(want), minor(want));
	tap_ok(major(want) != major(node_rdev("ion-system")),
	       "%s: not ion's major", name);
	if (it_summary(&b0, &y0))
		b0 = y0 = -1;
	hfd = dh_open(name);
	fd = hfd >= 0 ? dh_alloc(hfd, 4096, O_RDWR | O_CLOEXEC) : hfd;
	if (it_expect(fd, 0, "%s: mainline's node allocates", name)) {
		if (it_summary(&b1, &y1))
			b1 = -2;
		tap_ok(b1 == b0 && y1 == y0 && all_allocs(hs) == a0,
		       "%s: allocating there moves no ion counter", name);
		close(fd);
	}
	if (hfd >= 0)
		close(hfd);
}

/* ion's alias: its class, its major, its heap's counters move. */
static void alias_cases(const char *name, const char *base, int cached,
			const char *heap)
{
	long long n0 = it_heap_num(heap, "allocs"), b0 = it_heap_num(heap, "buffers");
	dev_t rdev = node_rdev(name);
	int hfd, fd;

	if (!tap_ok(exists(DH_ION_CLASS, name) && rdev,
		    "%s: ion's alias, in %s and /dev/dma_heap", name,
		    DH_ION_CLASS))
		return;
	tap_ok(major(rdev) == major(node_rdev("ion-system")) &&
	       sysfs_devt(DH_ION_CLASS, name) == rdev,
	       "%s: the ion-* nodes' major (%u:%u)", name, major(rdev),
	       minor(rdev));
	hfd = dh_open(name);
	fd = hfd >= 0 ? dh_alloc(hfd, 4096, O_RDWR | O_CLOEXEC) : hfd;
	if (it_expect(fd, 0, "%s: ALLOC", name)) {
		tap_ok(it_heap_num(heap, "allocs") == n0 + 1 &&
		       it_heap_num(heap, "buffers") == b0 + 1,
		       "%s: backed by %s (its allocs and buffers move)", name,
		       heap);
		close(fd);
		tap_ok(it_heap_num(heap, "buffers") == b0,
		       "%s: the buffer leaves %s when closed", name, heap);
	}
	if (hfd >= 0)
		close(hfd);
	node_cases(heap, base, cached, 0, -1);
}

/* Every node of ion's class: one major, no two with the same minor. */
static void minor_cases(void)
{
	struct dirent **ents;
	dev_t seen[64];
	int n, i, j, ok = 1, cnt = 0;

	n = scandir(DH_ION_CLASS, &ents, NULL, alphasort);
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;

		if (name[0] != '.' && cnt < (int)IT_ARRAY_SIZE(seen)) {
			seen[cnt] = sysfs_devt(DH_ION_CLASS, name);
			for (j = 0; j < cnt; j++)
				if (seen[j] == seen[cnt] ||
				    major(seen[j]) != major(seen[cnt]))
					ok = 0;
			cnt++;
		}
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	tap_ok(cnt > 0 && ok, "%d ion nodes: one major, every minor its own",
	       cnt);
}

/* Names in ion's class that are not ion-*, or -errno. */
static int count_aliases(void)
{
	return count_entries(DH_ION_CLASS, 0);
}

static int param_is(char v)
{
	char *text;
	int ret;

	if (it_read_file(PARAM, &text) < 0)
		return 0;
	ret = text[0] == v;
	free(text);
	return ret;
}

/* Unload ion.ko and load it with @args; 1 when /dev/ion is back. */
static int reload(const char *args)
{
	char cmd[128];
	int ret = fz_unload("ion");

	if (ret) {
		tap_diag("unload ion: %s", strerror(-ret));
		return 0;
	}
	it_wait_path(IT_DEV, 0);
	snprintf(cmd, sizeof(cmd), "modprobe ion %s", args);
	if (system(cmd))
		tap_diag("%s failed", cmd);
	return it_wait_path(IT_DEV, 1);
}

static void param_cases(int aliases0)
{
	int mainline = exists(DH_SYS_CLASS, "system");

	if (!tap_ok(reload("mainline_names=0"),
		    "ion.ko reloads with mainline_names=0")) {
		fz_load_ion();
		return;
	}
	tap_ok(param_is('N'), "%s reads N", PARAM);
	tap_ok(count_aliases() == 0, "mainline_names=0: no aliases");
	tap_ok(exists(DH_DIR, "ion-system"),
	       "mainline_names=0: the ion-* nodes are there");
	if (mainline)
		tap_ok(exists(DH_DIR, "system"),
		       "mainline_names=0: mainline's system stays");
	tap_ok(!exists(DH_DIR, "linux,cma") &&
	       (mainline || !exists(DH_DIR, "system")),
	       "mainline_names=0: no /dev/dma_heap/linux,cma%s",
	       mainline ? "" : " or system");
	tap_ok(reload(""), "ion.ko reloads with the default");
	tap_ok(param_is('Y'), "%s reads Y again", PARAM);
	tap_ok(count_aliases() == aliases0, "the %d aliases are back",
	       aliases0);
}

int main(void)
{
	char name[64];
	struct it_heaps hs;
	unsigned int i;
	int aliases0;

	nodes_setup(&hs);
	tap_ok(param_is('Y'), "%s is Y by default", PARAM);
	for (i = 0; i < IT_ARRAY_SIZE(aliases); i++) {
		alias_name(i, name, sizeof(name));
		if (exists(DH_SYS_CLASS, name)) {
			tap_diag("%s: the kernel has this heap", name);
			mainline_cases(name, &hs);
		} else if (!it_heap_find(&hs, aliases[i].heap)) {
			tap_ok(!exists(DH_ION_CLASS, name),
			       "%s: %s not registered, no alias", name,
			       aliases[i].heap);
		} else {
			alias_cases(name, aliases[i].base, aliases[i].cached,
				    aliases[i].heap);
		}
	}
	minor_cases();
	aliases0 = count_aliases();
	param_cases(aliases0);
	return tap_exit();
}
