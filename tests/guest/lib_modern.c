// SPDX-License-Identifier: MIT
/*
 * libion's modern API against the real module: struct ion_device (heap
 * list, find by name, alloc by name or mask), CPU access to the dma-buf
 * (map, begin/end, set name), and the same over /dev/dma_heap/ nodes
 * (ion's ion-* nodes when present, and mainline's "system" heap).
 */
#include <ion/ion.h>

#include "ion_test_util.h"

static void device_cases(struct ion_device *dev, const struct it_heaps *hs)
{
	const struct ion_heap_data *h0 = ion_device_heap(dev, 0);
	unsigned int id = 99;

	tap_ok(ion_device_heap_count(dev) == (int)hs->cnt,
	       "ion_device_heap_count matches HEAP_QUERY");
	tap_ok(h0 && !strcmp(h0->name, hs->h[0].name),
	       "ion_device_heap(0) is the highest-priority heap");
	tap_ok(!ion_device_heap(dev, hs->cnt), "ion_device_heap past the end is NULL");
	tap_ok(ion_device_find_heap(dev, ION_SYSTEM_HEAP_NAME, &id) == 0 &&
	       id == 0, "ion_device_find_heap(ion_system_heap) is id 0");
	it_expect(ion_device_find_heap(dev, "no_such_heap", &id), ENOENT,
		  "ion_device_find_heap of an unknown name");
	it_expect(ion_device_find_heap(dev, NULL, &id), EINVAL,
		  "ion_device_find_heap with NULL name");
	it_expect(ion_device_alloc_by_name(dev, "no_such_heap", 4096, 0),
		  ENOENT, "ion_device_alloc_by_name of an unknown heap");
	it_expect(ion_device_alloc(dev, 4096, 0, 0), ENODEV,
		  "ion_device_alloc with mask 0");
	it_expect(ion_device_alloc(dev, 0, ION_HEAP_SYSTEM_MASK, 0), EINVAL,
		  "ion_device_alloc with len 0");
	it_expect(ion_device_alloc(NULL, 4096, ION_HEAP_SYSTEM_MASK, 0), EINVAL,
		  "ion_device_alloc with NULL device");
	tap_ok(ion_device_fd(dev) >= 0 && ion_is_legacy(ion_device_fd(dev)) >= 0,
	       "ion_device_fd works with the classic functions");
}

/* Map, bracket, write, read, name, on any dma-buf fd. */
static void buffer_cases(const char *what, int fd, size_t len,
			 const char *exp_name)
{
	char name[40], got[64] = "";
	size_t size = 0;
	void *p = NULL;
	int ret;

	tap_ok(ion_buffer_size(fd, &size) == 0 && size == len,
	       "%s: ion_buffer_size", what);
	ret = ion_buffer_map(fd, 0, PROT_READ | PROT_WRITE, &p);
	if (!tap_ok(ret == 0 && p, "%s: ion_buffer_map of the whole buffer", what))
		return;
	it_expect(ion_buffer_begin_cpu_access(fd, ION_CPU_RW), 0,
		  "%s: ion_buffer_begin_cpu_access", what);
	tap_ok(it_check_zero(p, len) < 0, "%s: new buffer reads zero", what);
	it_fill(p, len, 11);
	it_expect(ion_buffer_end_cpu_access(fd, ION_CPU_RW), 0,
		  "%s: ion_buffer_end_cpu_access", what);
	ion_buffer_begin_cpu_access(fd, ION_CPU_READ);
	tap_ok(it_check(p, len, 11) < 0, "%s: data written reads back", what);
	ion_buffer_end_cpu_access(fd, ION_CPU_READ);
	it_expect(ion_buffer_begin_cpu_access(fd, 0), EINVAL,
		  "%s: begin_cpu_access without a direction", what);
	it_expect(ion_buffer_unmap(p, len), 0, "%s: ion_buffer_unmap", what);

	snprintf(name, sizeof(name), "lib-%d", (int)getpid());
	it_expect(ion_buffer_set_name(fd, name), 0, "%s: ion_buffer_set_name",
		  what);
	it_fdinfo(fd, "name", got, sizeof(got));
	tap_ok(!strcmp(got, name), "%s: the name shows in fdinfo", what);
	it_expect(ion_buffer_set_name(fd, "0123456789012345678901234567890123"),
		  ENAMETOOLONG, "%s: ion_buffer_set_name of 34 bytes", what);
	got[0] = 0;
	it_fdinfo(fd, "exp_name", got, sizeof(got));
	tap_ok(!strcmp(got, exp_name), "%s: exporter is %s", what, exp_name);
}

static void ion_heap_cases(struct ion_device *dev, const struct it_heap *k)
{
	size_t len = 16 * it_page();
	char what[96];
	int fd;

	snprintf(what, sizeof(what), "%s by name", k->name);
	fd = ion_device_alloc_by_name(dev, k->name, len, ION_FLAG_CACHED);
	if (!it_expect(fd, 0, "%s: ion_device_alloc_by_name", what))
		return;
	tap_ok(it_buffer_in_heap(fd, k->name), "%s: buffer is in that heap", what);
	buffer_cases(what, fd, len, "ion");
	close(fd);
}

static void buffer_error_cases(void)
{
	void *p;
	size_t size;
	int pfd[2];

	it_expect(ion_buffer_map(-1, 4096, PROT_READ, &p), EBADF,
		  "ion_buffer_map of fd -1");
	it_expect(ion_buffer_map(0, 4096, PROT_READ, NULL), EINVAL,
		  "ion_buffer_map with NULL ptr");
	it_expect(ion_buffer_size(-1, &size), EBADF, "ion_buffer_size of fd -1");
	it_expect(ion_buffer_begin_cpu_access(-1, ION_CPU_RW), EBADF,
		  "ion_buffer_begin_cpu_access of fd -1");
	it_expect(ion_buffer_set_name(-1, "x"), EBADF,
		  "ion_buffer_set_name of fd -1");
	if (!pipe(pfd)) {
		it_expect(ion_buffer_begin_cpu_access(pfd[0], ION_CPU_RW),
			  ENOTTY, "ion_buffer_begin_cpu_access of a pipe");
		close(pfd[0]);
		close(pfd[1]);
	}
}

static int count_cb(const char *name, void *data)
{
	tap_diag("dma-heap node: %s", name);
	++*(int *)data;
	return 0;
}

struct node_ctx {
	const struct it_heaps *hs;
	int tested;
};

static int ion_node_cb(const char *name, void *data)
{
	struct node_ctx *c = data;
	struct ion_dma_heap *heap = NULL;
	size_t len = 8 * it_page();
	char what[96];
	int fd;

	snprintf(what, sizeof(what), "dma-heap %s", name);
	if (!it_expect(ion_dma_heap_open(name, &heap), 0, "%s: open", what))
		return 0;
	tap_ok(!strcmp(ion_dma_heap_name(heap), name), "%s: name", what);
	fd = ion_dma_heap_alloc(heap, len, 0);
	if (it_expect(fd, 0, "%s: ion_dma_heap_alloc", what)) {
		char heapname[ION_MAX_HEAP_NAME];

		tap_ok(fcntl(fd, F_GETFD) & FD_CLOEXEC,
		       "%s: fd is close-on-exec", what);
		it_buffer_heap(c->hs, fd, heapname, sizeof(heapname));
		tap_ok(heapname[0], "%s: buffer shows in ion's debugfs (%s)",
		       what, heapname);
		buffer_cases(what, fd, len, "ion");
		close(fd);
	}
	it_expect(ion_dma_heap_alloc(heap, 0, 0), EINVAL, "%s: len 0", what);
	it_expect(ion_dma_heap_alloc(heap, 4096, O_APPEND), EINVAL,
		  "%s: fd_flags O_APPEND", what);
	ion_dma_heap_close(heap);
	c->tested++;
	return 0;
}

static void dma_heap_cases(const struct it_heaps *hs)
{
	struct node_ctx c = { .hs = hs };
	struct ion_dma_heap *heap = NULL;
	int n = 0, ret, fd, alias;
	const char *what;

	ret = ion_dma_heap_foreach(NULL, count_cb, &n);
	tap_ok(ret == 0 || ret == -ENOENT, "ion_dma_heap_foreach walks /dev/dma_heap");
	heap = NULL;
	ret = ion_dma_heap_open(".", &heap);
	tap_ok(ret == -EINVAL && !heap,
	       "ion_dma_heap_open(\".\"): EINVAL, no heap (%d)", ret);
	if (!ret)
		ion_dma_heap_close(heap);
	heap = NULL;
	ion_dma_heap_foreach("ion-", ion_node_cb, &c);
	/* ion.ko always makes them (core_heap_aliases). */
	tap_ok(c.tested, "ion's /dev/dma_heap/ion-* nodes are found");

	/* Where the kernel lacks it, "system" is ion's alias (class ion_dma_heap). */
	alias = !access("/sys/class/ion_dma_heap/system", F_OK);
	what = alias ? "ion's system alias" : "mainline system";
	ret = ion_dma_heap_open("system", &heap);
	if (ret == -ENOENT) {
		tap_skip("mainline dma-heap system", "no /dev/dma_heap/system");
	} else if (it_expect(ret, 0, "ion_dma_heap_open(system)")) {
		fd = ion_dma_heap_alloc(heap, 4 * it_page(), 0);
		if (it_expect(fd, 0, "ion_dma_heap_alloc on %s", what)) {
			buffer_cases(what, fd, 4 * it_page(),
				     alias ? "ion" : "system");
			close(fd);
		}
		ion_dma_heap_close(heap);
	}
	it_expect(ion_dma_heap_open("no-such-heap", &heap), ENOENT,
		  "ion_dma_heap_open of a missing node");
	it_expect(ion_dma_heap_open("../null", &heap), EINVAL,
		  "ion_dma_heap_open of a relative path");
	it_expect(ion_dma_heap_open("system", NULL), EINVAL,
		  "ion_dma_heap_open with NULL out");
}

int main(void)
{
	const struct it_heap *k;
	struct ion_device *dev = NULL;
	struct it_totals t0;
	struct it_heaps hs;
	unsigned int i;
	int fd;

	fd = it_setup(&hs);
	close(fd);
	it_totals_get(&t0);
	if (!it_expect(ion_device_open(&dev), 0, "ion_device_open"))
		return tap_exit();
	it_expect(ion_device_open(NULL), EINVAL, "ion_device_open(NULL)");
	device_cases(dev, &hs);
	for (i = 0; (k = it_known_next(&hs, &i)); i++)
		ion_heap_cases(dev, k);
	fd = ion_device_alloc(dev, 4096, ~0U, 0);
	tap_ok(fd >= 0 && it_buffer_in_heap(fd, hs.h[0].name),
	       "ion_device_alloc with mask ~0 picks the highest id");
	if (fd >= 0)
		close(fd);
	buffer_error_cases();
	dma_heap_cases(&hs);
	ion_device_close(dev);
	ion_device_close(NULL);
	it_totals_back(&t0, "nothing left allocated");
	return tap_exit();
}
