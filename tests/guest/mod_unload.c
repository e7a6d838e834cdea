// SPDX-License-Identifier: MIT
/*
 * ion.ko cannot be unloaded while anything of it lives (an open /dev/ion,
 * a handle, a dma-buf fd, a mapping) and unloads cleanly once all are
 * gone; then it is loaded again with modprobe, as the next test expects.
 */
#include "fz_common.h"

int main(void)
{
	size_t size = 4 * it_page();
	ion_user_handle_t h = 0;
	unsigned char *p;
	int ion, fd, ret;
	struct stat st;

	if (!fz_module_loaded("ion") && !fz_load_ion()) {
		tap_ok(0, "ion.ko loaded at the start");
		return 1;
	}
	if (fz_holders("ion", 1)) {
		tap_skip("module unload", "other modules use ion.ko");
		return 0;
	}

	ion = it_open();
	if (!tap_ok(ion >= 0, "open " IT_DEV))
		return tap_exit();
	fz_unload_refused("an open /dev/ion");
	ret = it_alloc_handle(ion, size, 0, ION_HEAP_SYSTEM_MASK, 0, &h);
	tap_ok(!ret, "ALLOC_LEGACY");
	fz_unload_refused("a handle");
	fd = it_share(ion, h);
	it_free(ion, h);
	close(ion);
	tap_ok(fd >= 0, "a shared buffer whose handle and /dev/ion fd are closed");
	fz_unload_refused("a dma-buf fd");
	p = fd >= 0 ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			   0) : MAP_FAILED;
	if (fd >= 0)
		close(fd);
	if (tap_ok(p != MAP_FAILED, "mmap, then close the last fd")) {
		it_fill(p, size, 3);
		fz_unload_refused("a mapping");
		tap_ok(it_check(p, size, 3) < 0, "the mapping still works");
		munmap(p, size);
	}

	ret = fz_unload("ion");
	if (!tap_ok(!ret, "unload succeeds once nothing holds ion"))
		tap_diag("delete_module: %s", strerror(-ret));
	else {
		tap_ok(!fz_module_loaded("ion"), "/sys/module/ion is gone");
		tap_ok(stat(IT_DEV, &st) && errno == ENOENT,
		       IT_DEV " is gone");
		tap_ok(stat(IT_DEBUGFS, &st) && errno == ENOENT,
		       IT_DEBUGFS " is gone");
	}

	if (!tap_ok(fz_load_ion(), "modprobe ion loads it again"))
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
