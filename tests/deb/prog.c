// SPDX-License-Identifier: MIT
/*
 * make check-deb: a program a user builds against the installed libion-dev
 * with `cc prog.c $(pkg-config --cflags --libs ion)` and runs as a member
 * of the video group.  It allocates through both of libion's APIs, writes
 * a pattern through a mapping and reads it back.  Prints "prog: ok" and
 * exits 0 only if every step worked.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ion/ion.h>

#define LEN (64 * 1024)

static int fail(const char *what, int err)
{
	fprintf(stderr, "prog: %s: %s\n", what, strerror(-err));
	return 1;
}

int main(void)
{
	struct ion_device *dev;
	unsigned char *p;
	size_t size;
	void *map;
	int fd, buf, ret;

	/* Classic AOSP API: ion_open, ion_alloc_fd from the system heap. */
	fd = ion_open();
	if (fd < 0)
		return fail("ion_open", fd);
	ret = ion_alloc_fd(fd, LEN, 0, 1U << ION_HEAP_TYPE_SYSTEM, 0, &buf);
	if (ret)
		return fail("ion_alloc_fd", ret);
	ret = ion_buffer_size(buf, &size);
	if (ret || size != LEN) {
		fprintf(stderr, "prog: size %zu, not %d\n", size, LEN);
		return 1;
	}
	close(buf);
	ion_close(fd);

	/* Modern API: by heap name, mapped, written and read back. */
	ret = ion_device_open(&dev);
	if (ret)
		return fail("ion_device_open", ret);
	buf = ion_device_alloc_by_name(dev, "ion_system_heap", LEN,
				       ION_FLAG_CACHED);
	if (buf < 0)
		return fail("ion_device_alloc_by_name", buf);
	ret = ion_buffer_map(buf, 0, PROT_READ | PROT_WRITE, &map);
	if (ret)
		return fail("ion_buffer_map", ret);
	p = map;
	ret = ion_buffer_begin_cpu_access(buf, ION_CPU_RW);
	if (ret)
		return fail("ion_buffer_begin_cpu_access", ret);
	for (size_t i = 0; i < LEN; i++)
		p[i] = (unsigned char)(i * 7 + 1);
	for (size_t i = 0; i < LEN; i++) {
		if (p[i] != (unsigned char)(i * 7 + 1)) {
			fprintf(stderr, "prog: byte %zu reads %u\n", i, p[i]);
			return 1;
		}
	}
	ret = ion_buffer_end_cpu_access(buf, ION_CPU_RW);
	if (ret)
		return fail("ion_buffer_end_cpu_access", ret);
	ion_buffer_unmap(map, LEN);
	close(buf);
	ion_device_close(dev);
	puts("prog: ok");
	return 0;
}
