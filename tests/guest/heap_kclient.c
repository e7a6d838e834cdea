// SPDX-License-Identifier: MIT
/*
 * heap_kclient: a kernel client (ion_test's, one per open /dev/ion_test)
 * shows in debugfs under its name while it exists, holds the buffers it
 * imported after user space closed its fds, and drops them when it goes.
 */
#include "heap_util.h"

/* Name of a debugfs client starting with "ion_test", or "" */
static void find_kclient(char *out, size_t size)
{
	DIR *d = opendir(IT_DEBUGFS "/clients");
	struct dirent *e;

	snprintf(out, size, "%s", "");
	if (!d)
		return;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "ion_test", 8)) {
			snprintf(out, size, "%s", e->d_name);
			break;
		}
	closedir(d);
}

int main(void)
{
	long long b0, bytes0, b1, bytes1, b2, bytes2;
	struct ion_test_import imp;
	char name[256], path[512];
	struct it_heaps hs;
	struct it_dfs d;
	int ion, tfd, buf;

	ion = it_setup(&hs);
	it_summary(&b0, &bytes0);
	tfd = ht_test_open();
	if (!tap_ok(tfd >= 0, "open " HT_TEST_DEV))
		return tap_exit();
	find_kclient(name, sizeof(name));
	tap_ok(name[0], "kernel client listed in debugfs (%s)", name);
	snprintf(path, sizeof(path), IT_DEBUGFS "/clients/%s", name);
	if (name[0] && !it_dfs_load(&d, path)) {
		const char *kind = it_dfs_get(&d, "kind");

		tap_ok(kind && !strcmp(kind, "kernel"),
		       "kernel client's kind is \"kernel\" (%s)",
		       kind ? kind : "missing");
		it_dfs_free(&d);
	}

	buf = ht_alloc(ion, 65536, 0, ION_HEAP_TYPE_SYSTEM, ION_FLAG_CACHED);
	if (!tap_ok(buf >= 0 && !ht_import(tfd, buf, ION_TEST_MODE_CLIENT,
					   &imp),
		    "kernel client imports a buffer"))
		return tap_exit();
	close(buf);
	it_summary(&b1, &bytes1);
	tap_ok(b0 >= 0 && b1 == b0 + 1,
	       "buffer lives on in the kernel client after its fd closed");
	close(tfd);
	it_summary(&b2, &bytes2);
	tap_ok(b0 >= 0 && b2 == b0 && bytes2 == bytes0,
	       "closing the kernel client drops its handles (buffers %lld -> %lld)",
	       b1, b2);
	find_kclient(name, sizeof(name));
	tap_ok(!name[0], "kernel client gone from debugfs");
	close(ion);
	return tap_exit();
}
