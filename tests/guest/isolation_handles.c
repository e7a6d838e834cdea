// SPDX-License-Identifier: MIT
/*
 * Isolation between owners of ion memory.
 *
 * Handles: a process cannot reach another's handles by guessing ids.  The
 * parent holds a handle on every heap; a child with a client of its own
 * tries every id from 1 to ID_MAX with FREE, SHARE and MAP (all must be
 * EINVAL), then, holding one handle of its own, finds exactly that one;
 * afterwards the parent's handles are untouched (same buffers, same
 * contents, freed exactly once each).
 *
 * execve(): a process that replaced its image gets a new client, where
 * the old image's handles are unknown, even while the old client's
 * /dev/ion file is still open (here: passed to the test before the exec).
 *
 * Zeroing: a buffer is zero before its new owner sees it, on every heap
 * and through every path: the fd ABI, the handle ABI, the dma-heap nodes
 * (/dev/dma_heap/ion-*), cached and uncached, and reuse of the same memory
 * (allocate, fill, free, allocate the same size again, ROUNDS times; the
 * carveout hands the same range back), also when the previous owner was
 * another process.
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include "fz_common.h"
#include "heap_util.h"

#define ID_MAX		10000
#define ROUNDS		24

/* --------------------------------------------------------------------- */
/* Handles                                                               */

struct held {
	const struct ion_heap_data *heap;
	ion_user_handle_t h;
	size_t size;
	unsigned long ino;
	unsigned int seed;
};

/* Child: the guessing.  Exit code: number of failed checks (max 100). */
static int guess_child(const struct held *held, int nheld)
{
	int ion, id, bad = 0, own_ok = 0, fd, ret, i;
	ion_user_handle_t own;
	unsigned long cmds[] = { ION_IOC_FREE, ION_IOC_SHARE, ION_IOC_MAP };
	unsigned int c;

	/* Everything inherited belongs to the parent's client: drop it. */
	for (fd = 3; fd < 1024; fd++)
		close(fd);
	ion = it_open();
	if (ion < 0)
		return 100;
	for (id = 1; id <= ID_MAX; id++) {
		for (c = 0; c < IT_ARRAY_SIZE(cmds); c++) {
			if (cmds[c] == ION_IOC_FREE)
				ret = it_free(ion, id);
			else
				ret = it_share_cmd(ion, cmds[c], id);
			if (ret >= 0)
				close(ret);
			if (ret != -EINVAL && bad++ < 5)
				printf("# child: cmd %#lx on id %d: %s\n",
				       cmds[c], id,
				       ret < 0 ? strerror(-ret) : "success");
		}
	}
	/* One handle of its own: only its id works, and it is its buffer. */
	if (it_alloc_handle(ion, 4096, 0, ION_HEAP_SYSTEM_MASK, 0, &own))
		return 100;
	for (id = 1; id <= ID_MAX; id++) {
		fd = it_share(ion, id);
		if (id == own) {
			own_ok = fd >= 0;
			for (i = 0; fd >= 0 && i < nheld; i++)
				if (it_ino(fd) == held[i].ino)
					own_ok = 0;
		} else if (fd != -EINVAL && bad++ < 5) {
			printf("# child: SHARE of id %d next to own id %d: %s\n",
			       id, own, fd < 0 ? strerror(-fd) : "success");
		}
		if (fd >= 0)
			close(fd);
	}
	if (!own_ok) {
		printf("# child: its own handle %d did not give its own buffer\n",
		       own);
		bad++;
	}
	fflush(stdout);
	return bad > 100 ? 100 : bad;
}

static void test_handles(int ion, const struct it_heaps *hs)
{
	struct held held[ION_NUM_HEAP_IDS];
	int nheld = 0, i, status, fd;
	size_t size = 4 * it_page();
	pid_t pid;
	char client[64];
	struct it_dfs d;
	long long handles0 = -1, handles1 = -2;

	for (i = 0; i < (int)hs->cnt; i++) {
		struct held *x = &held[nheld];
		void *p;
		int ret;

		x->heap = &hs->h[i];
		x->size = size;
		x->seed = 0x51 + i;
		ret = it_alloc_handle(ion, size, 0, 1U << x->heap->heap_id,
				      ION_FLAG_CACHED, &x->h);
		if (!tap_ok(!ret, "%s: parent holds a handle", x->heap->name))
			continue;
		fd = it_share(ion, x->h);
		p = fd >= 0 ? mmap(NULL, size, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, 0) : MAP_FAILED;
		if (p != MAP_FAILED) {
			it_fill(p, size, x->seed);
			munmap(p, size);
		}
		x->ino = fd >= 0 ? it_ino(fd) : 0;
		if (fd >= 0)
			close(fd);
		nheld++;
	}
	it_client_name(client, sizeof(client));
	{
		char path[128];

		snprintf(path, sizeof(path), IT_DEBUGFS "/clients/%s", client);
		if (!it_dfs_load(&d, path)) {
			handles0 = it_dfs_num(&d, "handles");
			it_dfs_free(&d);
		}
	}

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(guess_child(held, nheld));
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "a child's FREE, SHARE and MAP of ids 1..%d are all EINVAL, its own id only gives its own buffer",
	       ID_MAX);
	if (!WIFEXITED(status))
		tap_diag("child status %#x", status);

	{
		char path[128];

		snprintf(path, sizeof(path), IT_DEBUGFS "/clients/%s", client);
		if (!it_dfs_load(&d, path)) {
			handles1 = it_dfs_num(&d, "handles");
			it_dfs_free(&d);
		}
	}
	tap_ok(handles0 == nheld && handles1 == handles0,
	       "the parent's client still has its %d handles (debugfs %lld, then %lld)",
	       nheld, handles0, handles1);
	for (i = 0; i < nheld; i++) {
		struct held *x = &held[i];
		void *p;
		int same, intact = 0;

		fd = it_share(ion, x->h);
		same = fd >= 0 && it_ino(fd) == x->ino;
		p = fd >= 0 ? mmap(NULL, x->size, PROT_READ, MAP_SHARED, fd, 0)
			    : MAP_FAILED;
		if (p != MAP_FAILED) {
			it_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
			intact = it_check(p, x->size, x->seed) < 0;
			it_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
			munmap(p, x->size);
		}
		if (fd >= 0)
			close(fd);
		tap_ok(same && intact,
		       "%s: the parent's handle still names its buffer, contents intact",
		       x->heap->name);
		tap_ok(it_free(ion, x->h) == 0 && it_free(ion, x->h) == -EINVAL,
		       "%s: the parent's handle is freed exactly once",
		       x->heap->name);
	}
}

/* --------------------------------------------------------------------- */
/* Zeroing                                                               */

enum path { PATH_FD, PATH_HANDLE, PATH_NODE };

static const char *const path_names[] = { "fd ABI", "handle ABI", "dma-heap node" };

/* A dma-buf fd from @heap (or from node fd @node), or -errno. */
static int zalloc(int ion, int node, enum path path, unsigned int id,
		  size_t size, unsigned int flags)
{
	ion_user_handle_t h;
	int fd, ret;

	switch (path) {
	case PATH_FD:
		return it_alloc_fd(ion, size, 1U << id, flags);
	case PATH_HANDLE:
		ret = it_alloc_handle(ion, size, 0, 1U << id, flags, &h);
		if (ret)
			return ret;
		fd = it_share(ion, h);
		it_free(ion, h);
		return fd;
	case PATH_NODE:
		return fz_node_alloc(node, size);
	}
	return -EINVAL;
}

/*
 * Map @fd, check that all of it reads zero, then fill it with a pattern.
 * Returns 1 when it read zero, 0 when not, -errno when it could not map.
 */
static int zero_then_fill(int fd, size_t size, unsigned int seed,
			  long *where)
{
	unsigned char *p;
	long off;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	it_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
	off = it_check_zero(p, size);
	if (off >= 0)
		*where = off;
	it_fill(p, size, seed);
	it_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
	munmap(p, size);
	return off < 0;
}

/* Rounds that read non-zero memory, rounds that failed, the last offset. */
struct zero_tally {
	int nonzero, errors;
	long where;
};

/* zero_then_fill() on the new buffer @fd, counted in @z; closes @fd. */
static int zero_round(int fd, size_t size, unsigned int seed,
		      struct zero_tally *z)
{
	int ret = zero_then_fill(fd, size, seed, &z->where);

	if (ret < 0)
		z->errors++;
	else if (!ret)
		z->nonzero++;
	close(fd);
	return ret;
}

/* /dev/ion_test, for the physical address of a buffer; or -errno. */
static int tfd = -ENODEV;

/*
 * Heaps whose zeroing is shown on memory that really comes back: the
 * system heap's pools (once the deferred zeroing has pooled the chunk)
 * and the carveout's ranges.  0 for any other heap or path.
 */
static unsigned long long reuse_phys(enum path path, const char *heap,
				     int fd)
{
	if (tfd < 0 || path == PATH_NODE ||
	    (strcmp(heap, ION_SYSTEM_HEAP_NAME) &&
	     strcmp(heap, ION_CARVEOUT_HEAP_NAME)))
		return 0;
	return ht_buf_phys(tfd, fd);
}

/* One case: ROUNDS allocate-check-fill-free rounds of the same size. */
static void zero_case(int ion, int node, enum path path,
		      const char *heap, unsigned int id, size_t size,
		      unsigned int flags)
{
	struct zero_tally z = { .where = -1 };
	unsigned long long phys, prev = 0;
	int r, fd, ret, enomem = 0, reused = 0, traced = 0;

	for (r = 0; r < ROUNDS; r++) {
		ht_wait_deferred();	/* the last round's chunks pooled */
		fd = zalloc(ion, node, path, id, size, flags);
		if (fd == -ENOMEM) {
			enomem++;
			continue;
		}
		if (fd < 0) {
			if (!z.errors++)
				tap_diag("alloc: %s", strerror(-fd));
			continue;
		}
		phys = reuse_phys(path, heap, fd);
		traced += !!phys;
		reused += phys && phys == prev;
		prev = phys;
		ret = zero_round(fd, size, 0x40 + r, &z);
		if (ret < 0 && z.errors == 1)
			tap_diag("mmap: %s", strerror(-ret));
	}
	if (z.nonzero)
		tap_diag("%d of %d rounds read non-zero memory (first at offset %ld)",
			 z.nonzero, ROUNDS, z.where);
	if (enomem)
		tap_diag("%d rounds were ENOMEM", enomem);
	tap_ok(!z.nonzero && !z.errors && enomem <= ROUNDS / 4,
	       "%s, %s, %zu KiB %s: zero on each of %d reuses",
	       heap, path_names[path], size >> 10,
	       flags & ION_FLAG_CACHED ? "cached" : "uncached", ROUNDS);
	if (!traced)
		return;
	tap_diag("the previous round's memory came back in %d of %d rounds",
		 reused, traced);
	tap_ok(reused > 0, "%s, %s, %zu KiB %s: the same memory came back",
	       heap, path_names[path], size >> 10,
	       flags & ION_FLAG_CACHED ? "cached" : "uncached");
}

/* The previous owner is another process: a child fills and frees. */
static void zero_xproc_case(int ion, const char *heap, unsigned int id,
			    size_t size)
{
	struct zero_tally z = { .where = -1 };
	int r, status, fd;
	pid_t pid;

	for (r = 0; r < ROUNDS / 4; r++) {
		pid = fork();
		if (pid == 0) {
			int cion = it_open(), cfd;
			void *p;

			cfd = cion < 0 ? -1 : it_alloc_fd(cion, size, 1U << id,
							  ION_FLAG_CACHED);
			if (cfd < 0)
				_exit(2);
			p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
				 cfd, 0);
			if (p == MAP_FAILED)
				_exit(3);
			memset(p, 0xa5, size);
			_exit(0);	/* freed by exit, still mapped */
		}
		waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			z.errors++;
		fd = it_alloc_fd(ion, size, 1U << id, ION_FLAG_CACHED);
		if (fd < 0) {
			z.errors++;
			continue;
		}
		zero_round(fd, size, 0x77, &z);
	}
	if (z.nonzero)
		tap_diag("%d rounds read the other process's data (offset %ld)",
			 z.nonzero, z.where);
	tap_ok(!z.nonzero && !z.errors,
	       "%s: zero after another process filled and exited, %d rounds",
	       heap, ROUNDS / 4);
}

static void test_zeroing(int ion, const struct it_heaps *hs)
{
	static const size_t sizes[] = { 4096, 64 << 10, 1 << 20 };
	struct fz_nodes nodes;
	unsigned int i, s, p, c;

	for (i = 0; i < hs->cnt; i++) {
		const struct ion_heap_data *h = &hs->h[i];

		for (p = PATH_FD; p <= PATH_HANDLE; p++)
			for (s = 0; s < IT_ARRAY_SIZE(sizes); s++)
				for (c = 0; c < 2; c++)
					zero_case(ion, -1, p, h->name,
						  h->heap_id, sizes[s],
						  c ? ION_FLAG_CACHED : 0);
		zero_xproc_case(ion, h->name, h->heap_id, 256 << 10);
	}
	fz_nodes_load(&nodes);
	if (!nodes.cnt)
		tap_skip("dma-heap nodes: zero on each reuse",
			 "no /dev/dma_heap/ion-* node");
	for (i = 0; i < (unsigned int)nodes.cnt; i++) {
		int node = open(nodes.path[i], O_RDONLY | O_CLOEXEC);

		if (!tap_ok(node >= 0, "open %s", nodes.path[i]))
			continue;
		for (s = 0; s < IT_ARRAY_SIZE(sizes); s++)
			zero_case(ion, node, PATH_NODE, nodes.path[i], 0,
				  sizes[s], 0);
		close(node);
	}
}

/* --------------------------------------------------------------------- */
/* execve()                                                              */

#define EXEC_PROBE	"--exec-probe"

/*
 * The image after the exec: opens /dev/ion and asks to SHARE handle @arg
 * of the image before.  Exit code: 0 refused (EINVAL: a new client), 1
 * shared (the old client's handle), 2 no /dev/ion, 3 another error.
 */
static int exec_probe(const char *arg)
{
	int ion = it_open(), fd;

	if (ion < 0)
		return 2;
	fd = it_share(ion, (ion_user_handle_t)atoi(arg));
	if (fd >= 0)
		return 1;
	return fd == -EINVAL ? 0 : 3;
}

/* Child: hold a handle, pass the /dev/ion file on @sock, exec the probe. */
static int exec_child(int sock, unsigned int mask)
{
	ion_user_handle_t h;
	char arg[16];
	int ion = it_open(), fd;

	if (ion < 0 || it_alloc_handle(ion, 4096, 0, mask, 0, &h))
		return 10;
	fd = it_share(ion, h);	/* this image reaches it, of course */
	if (fd < 0)
		return 11;
	close(fd);
	if (it_send_fd(sock, ion, "i", 1, 0))
		return 12;
	snprintf(arg, sizeof(arg), "%d", h);
	execl("/proc/self/exe", "isolation_handles", EXEC_PROBE, arg,
	      (char *)NULL);
	return 13;
}

static void test_exec(const struct it_heaps *hs)
{
	int sv[2], old = -1, status = -1;
	char c;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		tap_ok(0, "execve: a socket pair");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(exec_child(sv[1], it_heaps_mask(hs)));
	}
	close(sv[1]);
	if (pid > 0)
		old = it_recv_fd(sv[0], &c, 1, 0);
	if (pid > 0)
		waitpid(pid, &status, 0);
	tap_ok(old >= 0, "execve: the old image's /dev/ion file stays open here");
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "execve: the new image gets a new client: the old image's handle is not its (SHARE: EINVAL)");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		tap_diag("exit status %#x (1: the old client's handle was reached)",
			 status);
	if (old >= 0)
		close(old);
	close(sv[0]);
}

int main(int argc, char **argv)
{
	struct it_heaps hs;
	int ion;
	char prefix[48];

	if (argc == 3 && !strcmp(argv[1], EXEC_PROBE))
		return exec_probe(argv[2]);
	ion = it_setup(&hs);
	tap_diag("%u heaps", hs.cnt);
	test_handles(ion, &hs);
	test_exec(&hs);
	tfd = ht_test_open();
	if (tfd < 0)
		tap_diag("no ion_test (%s): reuse is not traced",
			 strerror(-tfd));
	test_zeroing(ion, &hs);
	if (tfd >= 0)
		close(tfd);
	close(ion);
	fz_client_prefix(prefix, sizeof(prefix));
	tap_ok(fz_dfs_wait_clean(prefix, 5000),
	       "nothing left allocated, no client left");
	return tap_exit();
}
