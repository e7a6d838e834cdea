// SPDX-License-Identifier: MIT
/*
 * ion.ko cannot be unloaded while anything of it lives (an open /dev/ion,
 * a handle, a dma-buf fd, a mapping) and unloads cleanly once all are
 * gone; then it is loaded again with modprobe, as the next test expects.
 */
#include <sys/syscall.h>

#include "ion_test_util.h"

static int unload(void)
{
	return syscall(SYS_delete_module, "ion", O_NONBLOCK) ? -errno : 0;
}

static int loaded(void)
{
	struct stat st;

	return !stat("/sys/module/ion", &st);
}

static int reload(void)
{
	struct stat st;
	int i, ret = system("modprobe ion");

	for (i = 0; i < 50 && stat(IT_DEV, &st); i++)
		usleep(100000);
	return ret == 0 && !stat(IT_DEV, &st);
}

/* Expect the unload to be refused; reload at once if it was not. */
static int refused(const char *what)
{
	int ret = unload();

	if (!ret) {
		tap_diag("ion.ko unloaded while %s lives", what);
		reload();
	} else if (ret != -EWOULDBLOCK && ret != -EBUSY) {
		tap_diag("delete_module: %s", strerror(-ret));
	}
	return tap_ok(ret == -EWOULDBLOCK || ret == -EBUSY,
		      "unload refused while %s lives", what);
}

static int holders(void)
{
	DIR *d = opendir("/sys/module/ion/holders");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			tap_diag("ion.ko is used by %s", e->d_name);
			n++;
		}
	closedir(d);
	return n;
}

int main(void)
{
	size_t size = 4 * it_page();
	ion_user_handle_t h = 0;
	unsigned char *p;
	int ion, fd, ret;
	struct stat st;

	if (!loaded() && !reload()) {
		tap_ok(0, "ion.ko loaded at the start");
		return 1;
	}
	if (holders()) {
		tap_skip("module unload", "other modules use ion.ko");
		return 0;
	}

	ion = it_open();
	if (!tap_ok(ion >= 0, "open " IT_DEV))
		return tap_exit();
	refused("an open /dev/ion");
	ret = it_alloc_handle(ion, size, 0, ION_HEAP_SYSTEM_MASK, 0, &h);
	tap_ok(!ret, "ALLOC_LEGACY");
	refused("a handle");
	fd = it_share(ion, h);
	it_free(ion, h);
	close(ion);
	tap_ok(fd >= 0, "a shared buffer whose handle and /dev/ion fd are closed");
	refused("a dma-buf fd");
	p = fd >= 0 ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			   0) : MAP_FAILED;
	if (fd >= 0)
		close(fd);
	if (tap_ok(p != MAP_FAILED, "mmap, then close the last fd")) {
		it_fill(p, size, 3);
		refused("a mapping");
		tap_ok(it_check(p, size, 3) < 0, "the mapping still works");
		munmap(p, size);
	}

	ret = unload();
	if (!tap_ok(!ret, "unload succeeds once nothing holds ion"))
		tap_diag("delete_module: %s", strerror(-ret));
	else {
		tap_ok(!loaded(), "/sys/module/ion is gone");
		tap_ok(stat(IT_DEV, &st) && errno == ENOENT,
		       IT_DEV " is gone");
		tap_ok(stat(IT_DEBUGFS, &st) && errno == ENOENT,
		       IT_DEBUGFS " is gone");
	}

	if (!tap_ok(loaded() || reload(), "modprobe ion loads it again"))
		return tap_exit();
	{
		struct it_heaps hs;
		long long buffers = -1, bytes = -1;

		ion = it_open();
		tap_ok(ion >= 0 && !it_heaps_load(ion, &hs) && hs.cnt > 0,
		       "the reloaded ion answers HEAP_QUERY");
		fd = ion >= 0 ? it_alloc_fd(ion, size, ION_HEAP_SYSTEM_MASK, 0)
			      : -1;
		tap_ok(fd >= 0, "the reloaded ion allocates");
		if (fd >= 0)
			close(fd);
		if (ion >= 0)
			close(ion);
		it_summary(&buffers, &bytes);
		tap_ok(buffers == 0 && bytes == 0,
		       "the reloaded ion starts with nothing allocated");
	}
	return tap_exit();
}
