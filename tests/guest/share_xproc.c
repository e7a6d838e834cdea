// SPDX-License-Identifier: MIT
/*
 * Sharing between processes: a dma-buf fd passed over a unix socket with
 * SCM_RIGHTS shows the same bytes on both sides, can be imported by the
 * receiver, and the buffer outlives the process that allocated it while
 * it is still shared (an fd) or only mapped elsewhere.  Afterwards
 * nothing is left in debugfs.
 */
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "ion_test_util.h"

static unsigned int seed;

static int send_fd(int sock, int fd)
{
	return it_send_fd(sock, fd, "f", 1, 0);
}

static int recv_fd(int sock)
{
	char byte;

	return it_recv_fd(sock, &byte, 1, 0);
}

static int sync_byte(int sock, char *c)
{
	return read(sock, c, 1) == 1 ? 0 : -EIO;
}

static void *map(int fd, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Receiver in a child: map the fd it gets, check seed, write seed + 1,
 * report.  Exit code: 0 ok, 1 data wrong, 2 setup failed.
 */
static void receiver(int sock, size_t size)
{
	int fd = recv_fd(sock), ion;
	ion_user_handle_t h;
	unsigned char *p;
	char ok;

	if (fd < 0)
		_exit(2);
	p = map(fd, size);
	if (!p)
		_exit(2);
	it_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
	ok = it_check(p, size, seed) < 0 ? 'y' : 'n';
	it_fill(p, size, seed + 1);
	it_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
	/* importing into this (other) client works too */
	ion = it_open();
	if (ion < 0 || it_import(ion, fd, &h))
		ok = 'i';
	else
		it_free(ion, h);
	if (write(sock, &ok, 1) != 1)
		_exit(2);
	munmap(p, size);
	close(fd);
	_exit(ok == 'y' ? 0 : 1);
}

static void live_share_case(int ion, const struct it_heap *k, size_t size)
{
	int sv[2], fd, status;
	unsigned char *p;
	pid_t pid;
	char ok = 0;

	fd = it_alloc_fd(ion, size, 1U << k->id, 0);
	p = fd >= 0 ? map(fd, size) : NULL;
	if (!p || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		tap_ok(0, "%s: setup (alloc %d)", k->name, fd);
		if (fd >= 0)
			close(fd);
		return;
	}
	it_fill(p, size, seed);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		receiver(sv[1], size);
	}
	close(sv[1]);
	send_fd(sv[0], fd);
	sync_byte(sv[0], &ok);
	waitpid(pid, &status, 0);
	tap_ok(ok == 'y' || ok == 'i',
	       "%s: receiver over SCM_RIGHTS sees the sender's bytes", k->name);
	tap_ok(ok == 'y', "%s: receiver can IMPORT the fd into its own client",
	       k->name);
	tap_ok(it_check(p, size, seed + 1) < 0,
	       "%s: sender sees the receiver's writes", k->name);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "%s: receiver exited cleanly", k->name);
	munmap(p, size);
	close(fd);
	close(sv[0]);
}

/*
 * The allocator is the child: handle ABI ALLOC, SHARE, fill, send the fd,
 * exit (without freeing: its client dies with it).  mode 0: keep the
 * received fd; mode 1: map it, close the fd, keep only the mapping.
 */
static void survive_case(const struct it_heap *k, size_t size, int mode)
{
	const char *what = mode ? "only mapped" : "shared (fd)";
	char child_client[64] = "", path[160];
	int sv[2], fd, status, ion;
	unsigned char *p = NULL;
	ion_user_handle_t h = 0;
	struct stat st;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return;
	pid = fork();
	if (pid == 0) {
		unsigned char *cp;
		int cfd;

		close(sv[0]);
		ion = it_open();
		if (ion < 0 ||
		    it_alloc_handle(ion, size, 0, 1U << k->id, 0, &h))
			_exit(2);
		cfd = it_share(ion, h);
		cp = cfd >= 0 ? map(cfd, size) : NULL;
		if (!cp)
			_exit(2);
		it_fill(cp, size, seed + 7);
		it_sync(cfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
		send_fd(sv[1], cfd);
		_exit(0);	/* handle, fd, mapping and client all go */
	}
	close(sv[1]);
	fd = recv_fd(sv[0]);
	close(sv[0]);
	if (mode == 1 && fd >= 0) {
		p = map(fd, size);
		close(fd);
		fd = -1;
	}
	waitpid(pid, &status, 0);
	snprintf(child_client, sizeof(child_client), "-%d", (int)pid);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "%s: allocator (child) exited, buffer %s", k->name, what);

	/* the child's client is gone from debugfs */
	{
		char comm[32];

		it_comm(comm, sizeof(comm));
		snprintf(path, sizeof(path), IT_DEBUGFS "/clients/%s%s", comm,
			 child_client);
		tap_ok(stat(path, &st) && errno == ENOENT,
		       "%s: the dead allocator's client is gone (%s)", k->name,
		       what);
	}

	if (mode == 0) {
		p = fd >= 0 ? map(fd, size) : NULL;
		ion = it_open();
		tap_ok(ion >= 0 && fd >= 0 && !it_import(ion, fd, &h),
		       "%s: IMPORT of a dead allocator's buffer", k->name);
		if (ion >= 0) {
			it_free(ion, h);
			close(ion);
		}
	}
	if (p && fd >= 0)
		it_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	tap_ok(p && it_check(p, size, seed + 7) < 0,
	       "%s: data intact after the allocator exited (%s)", k->name,
	       what);
	if (p)
		munmap(p, size);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	const struct it_heap *k;
	struct it_totals t0;
	struct it_heaps hs;
	int ion = it_setup(&hs);
	long pg = it_page();
	unsigned int i;

	seed = it_seed();
	signal(SIGPIPE, SIG_IGN);
	it_totals_get(&t0);
	for (i = 0; (k = it_known_next(&hs, &i)); i++) {
		size_t size = (k->contig ? 8 : 300) * pg;

		live_share_case(ion, k, size);
		survive_case(k, size, 0);
		survive_case(k, size, 1);
	}
	close(ion);
	it_totals_back(&t0,
		       "debugfs summary back to its start after all processes let go");
	return tap_exit();
}
