// SPDX-License-Identifier: MIT
/*
 * Unloading ion.ko.
 *
 * rmmod (delete_module with O_NONBLOCK, as rmmod does) is refused while
 * anything of ion lives, one thing at a time, each on every heap where it
 * applies: an open /dev/ion (a client), a handle, a buffer fd alone, a
 * mapping alone (fd closed), an attachment alone (vgem imported the
 * buffer through PRIME; every fd closed), a buffer fd held by another
 * process, an open /dev/dma_heap/ion-* node.  After each, once it is
 * gone, the unload succeeds.  Then LOOPS rounds of modprobe ion,
 * allocations on every heap (written and read back; new buffers read
 * zero, also on the carveout the previous load used), rmmod ion.  ion.ko
 * is left loaded.
 */
#include <limits.h>
#include <sys/socket.h>

#include "fz_common.h"
#include "vgem_util.h"

#define LOOPS	50

/* Unload must work now; then load again for the next case. */
static void unload_clean(const char *after)
{
	int ret = fz_unload("ion");

	if (ret)
		tap_diag("delete_module: %s", strerror(-ret));
	tap_ok(!ret && !fz_module_loaded("ion"),
	       "unload succeeds once %s is gone", after);
	tap_ok(fz_load_ion(), "modprobe ion after that");
}

/* A dma-buf of @size from heap @id, all ion fds closed; or -errno. */
static int lone_buffer(unsigned int id, size_t size)
{
	int ion = it_open(), fd;

	if (ion < 0)
		return ion;
	fd = it_alloc_fd(ion, size, 1U << id, ION_FLAG_CACHED);
	close(ion);
	return fd;
}

static int loaded_vgem;	/* we loaded it: unload it at the end */

/* Open a vgem node (vgem_util.h), remembering whether we loaded it. */
static int vgem_open(void)
{
	if (!fz_module_loaded("vgem"))
		loaded_vgem = 1;
	return open_vgem();
}

static void per_heap_cases(const struct ion_heap_data *h)
{
	size_t size = 16 * it_page();
	char what[128];
	int ion, fd, ret, drm;
	ion_user_handle_t handle = 0;
	void *p;
	pid_t pid;
	int sv[2], status;

	/* a handle, /dev/ion still open */
	ion = it_open();
	ret = ion < 0 ? ion : it_alloc_handle(ion, size, 0, 1U << h->heap_id,
					      0, &handle);
	snprintf(what, sizeof(what), "a %s handle", h->name);
	if (tap_ok(!ret, "%s: ALLOC_LEGACY", h->name)) {
		fz_unload_refused(what);
		it_free(ion, handle);
	}
	if (ion >= 0)
		close(ion);
	unload_clean(what);

	/* a buffer fd alone */
	fd = lone_buffer(h->heap_id, size);
	snprintf(what, sizeof(what), "a %s buffer fd (no /dev/ion open)",
		 h->name);
	if (tap_ok(fd >= 0, "%s: ALLOC, /dev/ion closed", h->name)) {
		fz_unload_refused(what);
		close(fd);
	}
	unload_clean(what);

	/* a mapping alone */
	fd = lone_buffer(h->heap_id, size);
	p = fd >= 0 ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			   0) : MAP_FAILED;
	if (fd >= 0)
		close(fd);
	snprintf(what, sizeof(what), "a %s mapping (every fd closed)",
		 h->name);
	if (tap_ok(p != MAP_FAILED, "%s: mmap, then close the fd", h->name)) {
		it_fill(p, size, 9);
		fz_unload_refused(what);
		tap_ok(it_check(p, size, 9) < 0,
		       "%s: the mapping still works after the refusal", h->name);
		munmap(p, size);
	}
	unload_clean(what);

	/* an attachment alone (vgem) */
	drm = vgem_open();
	snprintf(what, sizeof(what), "a %s attachment (every fd closed)",
		 h->name);
	if (drm < 0) {
		tap_skip(what, "no vgem");
	} else {
		unsigned long ino;
		uint32_t gem;

		fd = lone_buffer(h->heap_id, size);
		ino = fd >= 0 ? it_ino(fd) : 0;
		ret = fd >= 0 ? vgem_import(drm, fd, &gem) : fd;
		if (fd >= 0)
			close(fd);
		if (ret)
			tap_diag("PRIME_FD_TO_HANDLE: %s", strerror(-ret));
		if (tap_ok(!ret, "%s: vgem imports the buffer", h->name)) {
			long long n = it_buffer_num_ino(ino, h->name,
							"attachments");

			tap_ok(n == 1, "%s: debugfs shows 1 attachment (%lld)",
			       h->name, n);
			fz_unload_refused(what);
		}
		close(drm);
	}
	unload_clean(what);

	/* a buffer fd in another process */
	snprintf(what, sizeof(what), "a %s buffer fd in another process",
		 h->name);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		tap_ok(0, "socketpair");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char c = 0;

		close(sv[0]);
		fd = lone_buffer(h->heap_id, size);
		c = fd >= 0 ? 'y' : 'n';
		if (write(sv[1], &c, 1) != 1 || read(sv[1], &c, 1) != 1)
			_exit(2);
		_exit(0);
	}
	close(sv[1]);
	{
		char c = 0;

		if (read(sv[0], &c, 1) == 1 && c == 'y')
			fz_unload_refused(what);
		else
			tap_ok(0, "%s: the child allocated", h->name);
		c = 'x';
		if (write(sv[0], &c, 1) != 1)
			tap_diag("child went early");
		waitpid(pid, &status, 0);
		close(sv[0]);
	}
	unload_clean(what);
}

/* One round of the loop: returns 1 when every step worked. */
static int round_trip(int round, unsigned int *zero_fail)
{
	struct it_heaps hs;
	int ion, fd, ok = 1;
	unsigned int i;
	size_t size = 64 << 10;

	if (!fz_load_ion()) {
		tap_diag("round %d: modprobe ion failed", round);
		return 0;
	}
	ion = it_open();
	if (ion < 0 || it_heaps_load(ion, &hs) || !hs.cnt) {
		tap_diag("round %d: /dev/ion or HEAP_QUERY failed", round);
		if (ion >= 0)
			close(ion);
		return 0;
	}
	for (i = 0; i < hs.cnt; i++) {
		unsigned char *p;

		fd = it_alloc_fd(ion, size, 1U << hs.h[i].heap_id,
				 ION_FLAG_CACHED);
		if (fd < 0) {
			tap_diag("round %d: %s: ALLOC: %s", round,
				 hs.h[i].name, strerror(-fd));
			ok = 0;
			continue;
		}
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			tap_diag("round %d: %s: mmap: %s", round,
				 hs.h[i].name, strerror(errno));
			ok = 0;
		} else {
			if (it_check_zero(p, size) >= 0)
				(*zero_fail)++;
			it_fill(p, size, round + i);
			if (it_check(p, size, round + i) >= 0)
				ok = 0;
			munmap(p, size);
		}
		close(fd);
	}
	close(ion);
	if (system("rmmod ion") != 0) {
		tap_diag("round %d: rmmod ion failed", round);
		return 0;
	}
	if (fz_module_loaded("ion")) {
		tap_diag("round %d: ion still loaded after rmmod", round);
		return 0;
	}
	return ok;
}

int main(void)
{
	struct it_heaps hs;
	unsigned int i, zero_fail = 0;
	int ion, ret, node, good = 0, r;
	struct fz_nodes nodes;

	if (!fz_load_ion()) {
		tap_ok(0, "ion.ko loaded at the start");
		return 1;
	}
	/* A test module left loaded (ion_test) holds ion: unload it first. */
	if (fz_module_loaded("ion_test"))
		fz_unload("ion_test");
	{
		DIR *d = opendir("/sys/module/ion/holders");
		struct dirent *e;
		int n = 0;

		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.') {
				tap_diag("ion.ko is used by %s", e->d_name);
				n++;
			}
		if (d)
			closedir(d);
		if (n) {
			tap_skip("module unload", "other modules use ion.ko");
			return 0;
		}
	}

	ion = it_setup(&hs);
	fz_unload_refused("an open /dev/ion with no buffers");
	close(ion);
	unload_clean("the /dev/ion fd");

	for (i = 0; i < hs.cnt; i++)
		per_heap_cases(&hs.h[i]);

	fz_nodes_load(&nodes);
	if (!nodes.cnt)
		tap_skip("unload refused while a dma-heap node is open",
			 "no /dev/dma_heap/ion-* node");
	for (r = 0; r < nodes.cnt; r++) {
		char what[96];

		node = open(nodes.path[r], O_RDONLY | O_CLOEXEC);
		snprintf(what, sizeof(what), "an open %s", nodes.path[r]);
		if (tap_ok(node >= 0, "open %s", nodes.path[r])) {
			fz_unload_refused(what);
			ret = fz_node_alloc(node, 1 << 16);
			close(node);
			snprintf(what, sizeof(what), "a buffer from %s",
				 nodes.path[r]);
			if (tap_ok(ret >= 0, "%s: DMA_HEAP_IOCTL_ALLOC",
				   nodes.path[r])) {
				fz_unload_refused(what);
				close(ret);
			}
		}
		unload_clean(what);
	}

	/* The loop. */
	if (system("rmmod ion") != 0)
		tap_diag("rmmod ion before the loop failed");
	for (r = 0; r < LOOPS; r++)
		good += round_trip(r, &zero_fail);
	tap_ok(good == LOOPS,
	       "%d rounds of modprobe, allocate on every heap, rmmod (%d good)",
	       LOOPS, good);
	tap_ok(!zero_fail,
	       "every new buffer of every round read zero (%u did not)",
	       zero_fail);

	tap_ok(fz_load_ion(), "ion.ko is loaded at the end");
	ion = it_open();
	ret = ion < 0 ? ion : it_alloc_fd(ion, 4096, ION_HEAP_SYSTEM_MASK, 0);
	tap_ok(ret >= 0, "and it allocates");
	if (ret >= 0)
		close(ret);
	if (ion >= 0)
		close(ion);
	tap_ok(fz_dfs_wait_clean(NULL, 5000), "nothing left allocated");
	if (loaded_vgem)
		vgem_unload();
	return tap_exit();
}
