// SPDX-License-Identifier: MIT
/*
 * The /dev/dma_heap/ion-* nodes: one cached and one "-uncached" node per
 * heap, with the expected names and mode; DMA_HEAP_IOCTL_ALLOC gives ion
 * dma-bufs (fd flags as asked, mmap and sync, zeroed, in debugfs under the
 * caller's client and the node's heap with the node's flags); every
 * validation error, older and newer caller structs, the fd installed only
 * after the copy-back, EMFILE - each compared with mainline's
 * /dev/dma_heap/system on the same input where the kernel has that node
 * (Debian's arm64 kernel has no DMA-BUF heaps: there the comparisons are
 * skipped and the ion nodes' own cases still run); the client's lifetime;
 * and a clean unload that takes the nodes away, leaves every other
 * dma-heap node in place, a load that fails late without ever showing a
 * node (counted in uevents), and a reload that brings them back.
 *
 * "Mainline's system" is /dev/dma_heap/system only where the kernel's own
 * heap class has it (/sys/class/dma_heap/system); elsewhere that name may
 * be ion's own alias (core_heap_aliases).  core_heap_aliases includes this
 * file with CORE_HEAP_NODES_CASES defined to run the same cases on the
 * aliases: everything up to node_cases() is shared.
 */
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <linux/netlink.h>

#include <linux/dma-heap.h>

#include "fz_common.h"
#include "ion_test_util.h"

#define DH_DIR		"/dev/dma_heap"
#define DH_MAINLINE	DH_DIR "/system"
#define DH_MAINLINE_SYS	"/sys/class/dma_heap/system"
#define DH_ION_CLASS	"/sys/class/ion_dma_heap"

/* The node names the issue gives, per heap. */
static const struct {
	const char *heap;
	const char *node;
} node_names[] = {
	{ ION_SYSTEM_HEAP_NAME, "ion-system" },
	{ ION_SYSTEM_CONTIG_HEAP_NAME, "ion-system-contig" },
	{ ION_CARVEOUT_HEAP_NAME, "ion-carveout" },
	{ ION_DMA_HEAP_NAME, "ion-dma" },
};

static char me[64];	/* this process's client name */

static int dh_open(const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), DH_DIR "/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* ALLOC with the struct at @arg and command @cmd: 0 or -errno. */
static int dh_ioctl(int hfd, unsigned long cmd, void *arg)
{
	return it_ioctl(hfd, cmd, arg);
}

/* The usual ALLOC: a dma-buf fd or -errno. */
static int dh_alloc(int hfd, uint64_t len, uint32_t fd_flags)
{
	struct dma_heap_allocation_data d = { .len = len, .fd_flags = fd_flags };
	int ret = dh_ioctl(hfd, DMA_HEAP_IOCTL_ALLOC, &d);

	return ret ? ret : (int)d.fd;
}

static off_t buf_size(int fd)
{
	return lseek(fd, 0, SEEK_END);
}

static long long summary_num(const char *key)
{
	return it_dfs_file_num(IT_DEBUGFS "/summary", key);
}

/* fd flags, access mode, size, mmap, sync, zero: any dma-heap node. */
static void alloc_cases(const char *what, int hfd)
{
	size_t pg = it_page(), len = 3 * pg + 1, size = 4 * pg;
	unsigned char *p;
	int fd;

	fd = dh_alloc(hfd, len, O_RDWR);
	if (!it_expect(fd, 0, "%s: ALLOC O_RDWR", what))
		return;
	tap_ok(!(fcntl(fd, F_GETFD) & FD_CLOEXEC),
	       "%s: no O_CLOEXEC: fd not close-on-exec", what);
	tap_ok((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR,
	       "%s: file is O_RDWR", what);
	tap_ok(buf_size(fd) == (off_t)size, "%s: len 3 pages + 1 gives 4 pages",
	       what);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (tap_ok(p != MAP_FAILED, "%s: mmap read-write", what)) {
		it_expect(it_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW), 0,
			  "%s: SYNC_START", what);
		tap_ok(it_check_zero(p, size) < 0, "%s: contents zeroed", what);
		it_fill(p, size, 29);
		it_expect(it_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW), 0,
			  "%s: SYNC_END", what);
		tap_ok(it_check(p, size, 29) < 0, "%s: data reads back", what);
		munmap(p, size);
	}
	close(fd);

	fd = dh_alloc(hfd, pg, O_RDWR | O_CLOEXEC);
	if (it_expect(fd, 0, "%s: ALLOC O_RDWR | O_CLOEXEC", what)) {
		tap_ok(fcntl(fd, F_GETFD) & FD_CLOEXEC,
		       "%s: O_CLOEXEC: fd close-on-exec", what);
		close(fd);
	}
	fd = dh_alloc(hfd, pg, O_RDONLY);
	if (it_expect(fd, 0, "%s: ALLOC O_RDONLY", what)) {
		tap_ok((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY,
		       "%s: O_RDONLY: file is read-only", what);
		p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		tap_ok(p == MAP_FAILED && errno == EACCES,
		       "%s: O_RDONLY: shared writable mmap is EACCES", what);
		if (p != MAP_FAILED)
			munmap(p, pg);
		p = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 0);
		tap_ok(p != MAP_FAILED, "%s: O_RDONLY: read-only mmap works", what);
		if (p != MAP_FAILED)
			munmap(p, pg);
		close(fd);
	}
}

/* debugfs and ION import: the buffer is an ion buffer of @heap. */
static void ion_buffer_cases(const char *what, int hfd, const char *heap,
			     int cached)
{
	size_t size = 2 * it_page();
	ion_user_handle_t h = 0;
	char name[160];
	struct it_dfs d;
	const char *v;
	int fd, ion, row;

	fd = dh_alloc(hfd, size, O_RDWR | O_CLOEXEC);
	if (!it_expect(fd, 0, "%s: ALLOC for debugfs", what))
		return;
	if (!it_dfs_load_heap(&d, heap)) {
		row = it_dfs_find_ino(&d, fd);
		tap_ok(row >= 0, "%s: buffer listed in heaps/%s", what, heap);
		v = it_dfs_cell(&d, row, "owner");
		tap_ok(v && !strcmp(v, me), "%s: owner is the caller's client %s",
		       what, me);
		v = it_dfs_cell(&d, row, "flags");
		tap_ok(v && !strcmp(v, cached ? "0x1" : "0x0"),
		       "%s: flags %s", what, cached ? "0x1" : "0x0");
		v = it_dfs_cell(&d, row, "size");
		tap_ok(v && atoll(v) == (long long)size, "%s: size", what);
		it_dfs_free(&d);
	} else {
		tap_ok(0, "%s: read heaps/%s", what, heap);
	}
	ion = it_open();
	if (it_expect(ion, 0, "%s: open /dev/ion", what)) {
		it_expect(it_import(ion, fd, &h), 0,
			  "%s: ION_IOC_IMPORT takes it as an ion buffer", what);
		snprintf(name, sizeof(name), IT_DEBUGFS "/clients/%s", me);
		row = -1;
		v = NULL;
		if (!it_dfs_load(&d, name)) {
			row = it_dfs_find_ino(&d, fd);
			v = it_dfs_cell(&d, row, "heap");
			tap_ok(v && !strcmp(v, heap),
			       "%s: handle under clients/%s, heap %s", what, me,
			       heap);
			it_dfs_free(&d);
		} else {
			tap_ok(0, "%s: read clients/%s", what, me);
		}
		close(ion);
	}
	close(fd);
}

/* A validation or ABI row, run on an ion node and on mainline's. */
struct abi_row {
	const char *name;
	unsigned long cmd;	/* 0: DMA_HEAP_IOCTL_ALLOC */
	uint64_t len;
	uint32_t fd, fd_flags;
	uint64_t heap_flags;
	int null_arg;
	int expect;		/* positive errno, or 0 */
};

#define DH_SIZED(dir, sz)	_IOC(dir, 'H', 0, sz)

static const struct abi_row abi_rows[] = {
	{ "len 0", 0, 0, 0, O_RDWR, 0, 0, EINVAL },
	{ "len 2^64-1 (0 when page aligned)", 0, UINT64_MAX, 0, O_RDWR, 0, 0,
	  EINVAL },
	{ "len 2^64-4095 (0 when page aligned)", 0, -4095ULL, 0, O_RDWR, 0, 0,
	  EINVAL },
	{ "fd not 0 on input", 0, 4096, 3, O_RDWR, 0, 0, EINVAL },
	{ "fd_flags O_APPEND", 0, 4096, 0, O_RDWR | O_APPEND, 0, 0, EINVAL },
	{ "fd_flags O_NONBLOCK", 0, 4096, 0, O_NONBLOCK, 0, 0, EINVAL },
	{ "fd_flags bit 31", 0, 4096, 0, 1U << 31, 0, 0, EINVAL },
	{ "heap_flags 1", 0, 4096, 0, O_RDWR, 1, 0, EINVAL },
	{ "heap_flags bit 63", 0, 4096, 0, O_RDWR, 1ULL << 63, 0, EINVAL },
	{ "nr 1", _IOWR('H', 1, struct dma_heap_allocation_data), 4096, 0,
	  O_RDWR, 0, 0, EINVAL },
	{ "nr 255", _IOWR('H', 255, struct dma_heap_allocation_data), 4096, 0,
	  O_RDWR, 0, 0, EINVAL },
	{ "_IOR: nothing copied in, len reads 0",
	  _IOR('H', 0, struct dma_heap_allocation_data), 4096, 0, O_RDWR, 0, 0,
	  EINVAL },
	{ "_IO: no argument", _IO('H', 0), 4096, 0, O_RDWR, 0, 0, EINVAL },
	{ "NULL argument", 0, 4096, 0, O_RDWR, 0, 1, EFAULT },
	{ "magic 'I' instead of 'H' (only nr counts)",
	  _IOWR('I', 0, struct dma_heap_allocation_data), 4096, 0, O_RDWR, 0,
	  0, 0 },
	{ "len 1 (one page)", 0, 1, 0, O_RDWR, 0, 0, 0 },
	{ "fd_flags O_ACCMODE", 0, 4096, 0, O_ACCMODE | O_CLOEXEC, 0, 0, 0 },
	{ "older 16-byte struct: heap_flags beyond it not read",
	  DH_SIZED(_IOC_READ | _IOC_WRITE, 16), 4096, 0, O_RDWR, 1, 0, 0 },
};

/* Run @r on @hfd: 0 or -errno; a new fd is checked and closed. */
static int abi_run(int hfd, const struct abi_row *r)
{
	struct dma_heap_allocation_data d = {
		.len = r->len, .fd = r->fd, .fd_flags = r->fd_flags,
		.heap_flags = r->heap_flags,
	};
	struct stat st;
	int ret;

	ret = dh_ioctl(hfd, r->cmd ? r->cmd : DMA_HEAP_IOCTL_ALLOC,
		       r->null_arg ? NULL : &d);
	if (!ret) {
		if (fstat(d.fd, &st) || buf_size(d.fd) != 4096)
			ret = -EPROTO;
		close(d.fd);
	}
	return ret;
}

static void abi_cases(const char *what, int hfd, int mfd, int cmp)
{
	unsigned int i;

	/* Asked to compare, but this kernel has no mainline node. */
	if (cmp && mfd < 0)
		tap_skip("mainline system: validation rows, side by side",
			 "no " DH_MAINLINE " (CONFIG_DMABUF_HEAPS off)");
	for (i = 0; i < IT_ARRAY_SIZE(abi_rows); i++) {
		const struct abi_row *r = &abi_rows[i];
		int mret = mfd >= 0 ? abi_run(mfd, r) : 0;

		if (mfd >= 0 && -mret != r->expect)
			tap_diag("mainline system: %s gives %s", r->name,
				 strerror(-mret));
		it_expect(abi_run(hfd, r), r->expect, "%s: %s%s", what, r->name,
			  mfd >= 0 ? " (as mainline)" : "");
		if (mfd >= 0)
			it_expect(mret, r->expect, "mainline system: %s (via %s)",
				  r->name, what);
	}
}

/* A newer, larger struct with a non-zero tail: ignored, copied back. */
static int newer_struct(int hfd)
{
	struct {
		struct dma_heap_allocation_data d;
		uint64_t tail[2];
	} big = { { .len = 4096, .fd_flags = O_RDWR }, { 0xabcdef, 7 } };
	int ret;

	ret = dh_ioctl(hfd, DH_SIZED(_IOC_READ | _IOC_WRITE, sizeof(big)),
		       &big);
	if (ret)
		return ret;
	close(big.d.fd);
	return big.tail[0] == 0xabcdef && big.tail[1] == 7 ? 0 : -EPROTO;
}

/* Argument on a read-only page: EFAULT on copy-back, no fd, no buffer. */
static int readonly_arg(int hfd)
{
	struct dma_heap_allocation_data *d;
	long long b0 = summary_num("buffers");
	int fds0 = it_count_fds(), ret;

	d = mmap(NULL, it_page(), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d == MAP_FAILED)
		return -ENOMEM;
	d->len = 4096;
	d->fd_flags = O_RDWR;
	mprotect(d, it_page(), PROT_READ);
	ret = dh_ioctl(hfd, DMA_HEAP_IOCTL_ALLOC, d);
	munmap(d, it_page());
	if (ret != -EFAULT)
		return ret ? ret : -EPROTO;
	if (b0 < 0 || it_count_fds() != fds0 ||
	    summary_num("buffers") != b0) {
		tap_diag("EFAULT, but an fd or a buffer was left behind (or no debugfs summary)");
		return -EPROTO;
	}
	return -EFAULT;
}

/* RLIMIT_NOFILE reached: EMFILE, no buffer left behind. */
static int emfile(int hfd)
{
	struct rlimit old, lim;
	long long b0 = summary_num("buffers");
	int fds[64], n = 0, ret;

	getrlimit(RLIMIT_NOFILE, &old);
	lim = old;
	lim.rlim_cur = 64;
	if (setrlimit(RLIMIT_NOFILE, &lim))
		return -errno;
	while (n < 64 && (fds[n] = dup(hfd)) >= 0)
		n++;
	ret = dh_alloc(hfd, 4096, O_RDWR);
	if (ret >= 0)
		close(ret);
	while (n)
		close(fds[--n]);
	setrlimit(RLIMIT_NOFILE, &old);
	if (ret == -EMFILE && (b0 < 0 || summary_num("buffers") != b0)) {
		tap_diag("EMFILE, but a buffer was left behind (or no debugfs summary)");
		return -EPROTO;
	}
	return ret < 0 ? ret : 0;
}

static void struct_cases(const char *what, int hfd, int mfd, int cmp)
{
	const char *as = mfd >= 0 ? " (as mainline)" : "";

	it_expect(newer_struct(hfd), 0,
		  "%s: newer 32-byte struct, non-zero tail: ok, tail back%s",
		  what, as);
	it_expect(readonly_arg(hfd), EFAULT,
		  "%s: read-only argument: EFAULT, no fd, no buffer left%s",
		  what, as);
	it_expect(emfile(hfd), EMFILE, "%s: no free fd: EMFILE, no buffer left%s",
		  what, as);
	/* Not on mainline's: its system heap would wake the OOM killer. */
	it_expect(dh_alloc(hfd, 1ULL << 50, O_RDWR), ENOMEM,
		  "%s: len 1 PiB: ENOMEM, no OOM kill", what);
	if (mfd < 0) {
		if (cmp)
			tap_skip("mainline system: struct sizes, EFAULT, EMFILE, side by side",
				 "no " DH_MAINLINE " (CONFIG_DMABUF_HEAPS off)");
		return;
	}
	it_expect(newer_struct(mfd), 0, "mainline system: newer struct (via %s)",
		  what);
	it_expect(readonly_arg(mfd), EFAULT,
		  "mainline system: read-only argument (via %s)", what);
	it_expect(emfile(mfd), EMFILE, "mainline system: EMFILE (via %s)", what);
}

/*
 * @cmp: compare with mainline's node (@mfd, or -1 when this kernel has
 * none: those comparisons are then skipped, the ion node's own cases run).
 */
static void node_cases(const char *heap, const char *base, int cached,
		       int cmp, int mfd)
{
	char node[96], path[160];
	struct stat st;
	int hfd;

	snprintf(node, sizeof(node), "%s%s", base, cached ? "" : "-uncached");
	snprintf(path, sizeof(path), DH_DIR "/%s", node);
	if (!tap_ok(!stat(path, &st), "%s exists", path))
		return;
	tap_ok(S_ISCHR(st.st_mode) && (st.st_mode & 07777) == 0600 &&
	       st.st_uid == 0, "%s: char device 0600 root", node);
	hfd = dh_open(node);
	if (!it_expect(hfd, 0, "%s: open read-only", node))
		return;
	alloc_cases(node, hfd);
	ion_buffer_cases(node, hfd, heap, cached);
	abi_cases(node, hfd, cmp ? mfd : -1, cmp);
	struct_cases(node, hfd, cmp ? mfd : -1, cmp);
	close(hfd);
}

/*
 * The entries of @path named ion-* (@ion), or the others but dot files
 * (!@ion); -errno when it cannot be read.
 */
static int count_entries(const char *path, int ion)
{
	DIR *dir = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!dir)
		return -errno;
	while ((e = readdir(dir)))
		if (e->d_name[0] != '.' &&
		    (strncmp(e->d_name, "ion-", 4) == 0) == !!ion)
			n++;
	closedir(dir);
	return n;
}

/* Learn the heaps (through /dev/ion, closed again) and our client name. */
static void nodes_setup(struct it_heaps *hs)
{
	close(it_setup(hs));
	it_client_name(me, sizeof(me));
}

#ifndef CORE_HEAP_NODES_CASES

/* mainline's /dev/dma_heap/system, or -errno: not ion's alias. */
static int open_mainline(void)
{
	struct stat st;

	if (stat(DH_MAINLINE_SYS, &st))
		return -ENOENT;
	return dh_open("system");
}

static int client_file_exists(const char *name)
{
	char path[160];
	struct stat st;

	snprintf(path, sizeof(path), IT_DEBUGFS "/clients/%s", name);
	return !stat(path, &st);
}

/* The client: created by a node open, held by it, gone with the last. */
static void client_cases(const char *node)
{
	long long c0 = summary_num("clients");
	struct it_dfs d;
	int h1, h2, ion, fd = -1, row;

	tap_ok(c0 >= 0 && !client_file_exists(me),
	       "no client before any open (debugfs summary read)");
	h1 = dh_open(node);
	if (!it_expect(h1, 0, "open %s", node))
		return;
	tap_ok(client_file_exists(me) && summary_num("clients") == c0 + 1,
	       "a node open creates the caller's client %s", me);
	h2 = dh_open(node);
	ion = it_open();
	tap_ok(h2 >= 0 && ion >= 0 && summary_num("clients") == c0 + 1,
	       "a second node open and /dev/ion share that client");
	close(ion);
	close(h2);
	tap_ok(client_file_exists(me), "the client lives while a node is open");
	fd = dh_alloc(h1, 4096, O_RDWR | O_CLOEXEC);
	close(h1);
	tap_ok(c0 >= 0 && !client_file_exists(me) &&
	       summary_num("clients") == c0,
	       "closing the last node file ends the client");
	row = -1;
	if (fd >= 0 && !it_dfs_load_heap(&d, ION_SYSTEM_HEAP_NAME)) {
		row = it_dfs_find_ino(&d, fd);
		it_dfs_free(&d);
	}
	tap_ok(row >= 0, "its buffer outlives it (a dma-buf of its own)");
	if (fd >= 0)
		close(fd);
}

/* Is @name one of ion's nodes (an ion-* node or an alias)? */
static int ion_node(const char *name)
{
	char path[160];
	struct stat st;

	snprintf(path, sizeof(path), DH_ION_CLASS "/%s", name);
	return !strncmp(name, "ion-", 4) || !stat(path, &st);
}

/*
 * The entries of /dev/dma_heap that are not ion's, space-separated in
 * name order, in @buf ("" when there are none or no directory).
 */
static const char *list_other_nodes(char *buf, size_t size)
{
	struct dirent **ents;
	size_t used = 0;
	int n, i;

	buf[0] = 0;
	n = scandir(DH_DIR, &ents, NULL, alphasort);
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;

		if (name[0] != '.' && !ion_node(name) && used < size)
			used += snprintf(buf + used, size - used, "%s%s",
					 used ? " " : "", name);
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	return buf;
}

/* A socket that receives the kernel's uevents, non-blocking; or -1. */
static int uevent_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			NETLINK_KOBJECT_UEVENT);
	int size = 1 << 20;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The "add" uevents of dma-heap node devices queued on @fd; -1 on loss. */
static int uevent_node_adds(int fd)
{
	char msg[4096];
	int n = 0, add, ours;
	ssize_t len, i;

	while ((len = recv(fd, msg, sizeof(msg) - 1, 0)) > 0) {
		msg[len] = 0;
		add = !strncmp(msg, "add@", 4);
		ours = 0;
		for (i = 0; i < len; i += strlen(msg + i) + 1)
			ours |= !strcmp(msg + i, "SUBSYSTEM=ion_dma_heap");
		n += add && ours;
	}
	return len < 0 && errno == ENOBUFS ? -1 : n;
}

/*
 * A load that fails late - the carveout's parameter malformed, after the
 * DMA and auto heaps were set up - must not have shown a node meanwhile:
 * the failed load frees ion.ko's memory, and a file opened on a node in
 * that window would outlive the code behind it.  ion.ko is unloaded.
 */
/* An inotify watch on debugfs's root for created entries; fd or -1. */
static int debugfs_watch(void)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (fd >= 0 && inotify_add_watch(fd, "/sys/kernel/debug", IN_CREATE) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Entries named "ion" created under debugfs's root since the watch began. */
static int debugfs_ion_creates(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	int n = 0;
	ssize_t len;
	char *p;

	while ((len = read(fd, buf, sizeof(buf))) > 0)
		for (p = buf; p < buf + len; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			n += ev->len && !strcmp(ev->name, "ion");
		}
	close(fd);
	return n;
}

static void failed_load_case(void)
{
	int nl = uevent_open(), in = debugfs_watch(), ret, adds, dirs;

	if (!tap_ok(nl >= 0 && in >= 0, "a uevent socket and a debugfs watch"))
		return;
	ret = system("modprobe ion carveout_memmap=bogus 2>/dev/null");
	adds = uevent_node_adds(nl);
	dirs = debugfs_ion_creates(in);
	close(nl);
	if (!ret) {
		fz_unload("ion");
		tap_skip("a load that fails late shows no dma-heap node",
			 "this kernel ignores carveout_memmap= (no ZONE_DEVICE)");
		return;
	}
	tap_ok(!fz_module_loaded("ion"),
	       "a load with a malformed carveout_memmap= fails");
	tap_ok(adds == 0,
	       "and showed no dma-heap node meanwhile (%d node add uevents)",
	       adds);
	tap_ok(dirs == 0,
	       "and no debugfs file meanwhile (%d creations of debugfs ion/)",
	       dirs);
	/* the same socket sees a good load's nodes: the count is real */
	nl = uevent_open();
	in = debugfs_watch();
	ret = system("modprobe ion");
	adds = nl >= 0 ? uevent_node_adds(nl) : -1;
	dirs = in >= 0 ? debugfs_ion_creates(in) : -1;
	if (nl >= 0)
		close(nl);
	tap_ok(!ret && adds >= 2 * 2,
	       "a good load's nodes do send add uevents (%d)", adds);
	tap_ok(!ret && dirs == 1,
	       "a good load's debugfs ion/ is seen by the watch (%d)", dirs);
	if (fz_unload("ion"))
		tap_diag("rmmod ion after the good load failed");
}

/*
 * The rig's carveout_memmap= "SIZE@START" from the command line (6.1 x86),
 * START into *@base; 0 when there is none.
 */
static int cmdline_memmap(unsigned long long *base)
{
	char *cmdline = NULL, *p;
	int found;

	it_read_file("/proc/cmdline", &cmdline);
	p = cmdline ? strstr(cmdline, "ion.carveout_memmap=") : NULL;
	p = p ? strchr(p, '@') : NULL;
	found = p != NULL;
	if (p)
		*base = strtoull(p + 1, NULL, 0);
	free(cmdline);
	return found;
}

/* /proc/sys/kernel/tainted */
static unsigned long long tainted(void)
{
	char *text = NULL;
	unsigned long long v = ~0ULL;

	if (it_read_file("/proc/sys/kernel/tainted", &text) > 0)
		v = strtoull(text, NULL, 10);
	free(text);
	return v;
}

/*
 * A carveout_memmap= range not in whole 2 MiB subsections, within the
 * rig's memmap= range: refused before memremap_pages(), which WARNs on it
 * (and kept a linear mapping of the range); no taint, no log of it.
 */
static void misaligned_memmap_case(void)
{
	static const char *const splat[] = { "Misaligned", "WARNING:", NULL };
	const char *name = "carveout_memmap= of 1 MiB is refused, without a kernel warning";
	unsigned long long base, t0, t1;
	char cmd[128];
	int kmsg, ret, warned;

	if (!cmdline_memmap(&base)) {
		tap_skip(name, "no carveout_memmap= range on this kernel's command line");
		return;
	}
	kmsg = it_kmsg_open(0);
	t0 = tainted();
	snprintf(cmd, sizeof(cmd),
		 "modprobe ion carveout_memmap=1M@%#llx 2>/dev/null", base);
	ret = system(cmd);
	t1 = tainted();
	warned = it_kmsg_grep(kmsg, splat);
	if (kmsg >= 0)
		close(kmsg);
	if (!ret)
		fz_unload("ion");
	tap_diag("tainted %#llx -> %#llx, %d warning line(s)", t0, t1, warned);
	tap_ok(ret && !fz_module_loaded("ion") && t0 != ~0ULL && !((t0 ^ t1) & 512) &&
	       !warned && kmsg >= 0, "%s", name);
}

static void unload_cases(void)
{
	int hfd = dh_open("ion-system"), ret;
	int others = access(DH_MAINLINE_SYS, F_OK) ? -1 : 0;
	char before[256], after[256];

	list_other_nodes(before, sizeof(before));

	if (hfd >= 0) {
		ret = fz_unload("ion");
		tap_ok(ret == -EWOULDBLOCK || ret == -EBUSY,
		       "unload refused while a node is open");
		if (!ret && system("modprobe ion"))
			tap_diag("modprobe ion failed");
		close(hfd);
	}
	ret = fz_unload("ion");
	if (!it_expect(ret, 0, "unload once nothing is open"))
		return;
	tap_ok(it_wait_path(DH_DIR "/ion-system", 0) &&
	       it_wait_path(DH_DIR "/ion-system-uncached", 0),
	       "the nodes are gone with ion.ko");
	tap_ok(it_wait_path("/sys/class/ion_dma_heap", 0),
	       "/sys/class/ion_dma_heap is gone");
	if (others < 0)
		tap_skip("mainline's system node stays",
			 "no " DH_MAINLINE " (CONFIG_DMABUF_HEAPS off)");
	else
		tap_ok(it_wait_path(DH_MAINLINE, 1), "mainline's system node stays");
	tap_ok(!strcmp(list_other_nodes(after, sizeof(after)), before),
	       "the other dma-heap nodes stay (%s)", *before ? before : "none");
	failed_load_case();
	misaligned_memmap_case();
	tap_ok(!system("modprobe ion") && it_wait_path(DH_DIR "/ion-system", 1),
	       "modprobe ion brings the nodes back");
	hfd = dh_open("ion-system");
	ret = hfd >= 0 ? dh_alloc(hfd, 4096, O_RDWR) : hfd;
	if (it_expect(ret, 0, "the reloaded node allocates"))
		close(ret);
	if (hfd >= 0)
		close(hfd);
}

int main(void)
{
	struct it_totals t0;
	struct it_heaps hs;
	unsigned int i;
	int mfd;

	nodes_setup(&hs);
	it_totals_get(&t0);
	tap_ok(count_entries(DH_DIR, 1) == 2 * (int)hs.cnt,
	       "two ion-* nodes per registered heap, no others");
	client_cases("ion-system");

	mfd = open_mainline();
	if (mfd < 0) {
		tap_diag("no mainline %s (%s): ion's nodes are the only dma-heaps here",
			 DH_MAINLINE, strerror(-mfd));
		tap_skip("mainline system: ALLOC, fd flags, mmap, sync, zero",
			 "no " DH_MAINLINE " (CONFIG_DMABUF_HEAPS off)");
	} else {
		alloc_cases("mainline system", mfd);
	}
	for (i = 0; i < IT_ARRAY_SIZE(node_names); i++) {
		if (!it_heap_find(&hs, node_names[i].heap)) {
			tap_skip(node_names[i].node, "heap not registered");
			continue;
		}
		node_cases(node_names[i].heap, node_names[i].node, 1, !i, mfd);
		node_cases(node_names[i].heap, node_names[i].node, 0, 0, -1);
	}
	if (mfd >= 0)
		close(mfd);

	it_totals_back(&t0, "nothing left allocated");
	unload_cases();
	return tap_exit();
}

#endif /* CORE_HEAP_NODES_CASES */
