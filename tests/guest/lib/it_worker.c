// SPDX-License-Identifier: MIT
/*
 * A worker: a child process that opens /dev/ion, sets itself up (drops
 * privileges, joins a cgroup, ...) and then holds buffers, allocating and
 * freeing them on its parent's command, so that a test can act as other
 * users or from other cgroups, step by step.
 */
#include <signal.h>
#include <sys/wait.h>

#include "ion_test_util.h"

#define IT_WORKER_MAX_BUFS	4096

struct it_worker_cmd {
	int op;	/* 'a' allocate, 'f' free, 'r' rounds, 'c' close or 'o'
		 * open /dev/ion, 'q' quit */
	int count;
	uint64_t len;
	unsigned int mask;
	unsigned int flags;
};

/* Allocate @c->count buffers, or stop at the first failure. */
static void it_worker_alloc_bufs(int ion, const struct it_worker_cmd *c,
				 int *bufs, int *n, struct it_reply *r)
{
	int fd;

	for (; r->done < c->count; r->done++) {
		fd = *n < IT_WORKER_MAX_BUFS ?
		     it_alloc_fd(ion, c->len, c->mask, c->flags) : -ENOSPC;
		if (fd < 0) {
			r->err = -fd;
			return;
		}
		bufs[(*n)++] = fd;
	}
}

/* Allocate and free @c->count buffers of 4 or 64 KiB, cached or not. */
static void it_worker_rounds_do(int ion, const struct it_worker_cmd *c,
				struct it_reply *r)
{
	int fd;

	for (; r->done < c->count; r->done++) {
		fd = it_alloc_fd(ion, r->done & 1 ? 65536 : 4096, c->mask,
				 r->done & 2 ? ION_FLAG_CACHED : 0);
		if (fd < 0) {
			r->err = -fd;
			return;
		}
		close(fd);
	}
}

static void it_worker_loop(int ion, int cmd, int res)
{
	static int bufs[IT_WORKER_MAX_BUFS];
	struct it_worker_cmd c;
	struct it_reply r;
	int n = 0;

	while (read(cmd, &c, sizeof(c)) == sizeof(c) && c.op != 'q') {
		r.done = 0;
		r.err = 0;
		if (c.op == 'a')
			it_worker_alloc_bufs(ion, &c, bufs, &n, &r);
		else if (c.op == 'r')
			it_worker_rounds_do(ion, &c, &r);
		else if (c.op == 'c')
			r.err = ion < 0 || close(ion) ? EBADF : 0;
		else if (c.op == 'o')
			r.err = ion >= 0 ? EBUSY : 0;
		if (c.op == 'c' && !r.err)
			ion = -1;
		if (c.op == 'o' && !r.err) {
			ion = it_open();
			r.err = ion < 0 ? -ion : 0;
		}
		for (; c.op == 'f' && n && r.done != c.count; r.done++)
			close(bufs[--n]);
		if (write(res, &r, sizeof(r)) != sizeof(r))
			_exit(1);
	}
	_exit(0);
}

int it_worker_start(struct it_worker *w, int (*setup)(void *arg), void *arg)
{
	int cmd[2], res[2], ion;

	if (pipe(cmd))
		return -errno;
	if (pipe(res)) {
		close(cmd[0]);
		close(cmd[1]);
		return -errno;
	}
	w->pid = fork();
	if (w->pid < 0)
		return -errno;
	if (w->pid == 0) {
		ion = it_open();	/* before setup: as root */
		if (ion < 0 || setup(arg))
			_exit(2);
		close(cmd[1]);
		close(res[0]);
		it_worker_loop(ion, cmd[0], res[1]);
	}
	close(cmd[0]);
	close(res[1]);
	w->cmd = cmd[1];
	w->res = res[0];
	return 0;
}

static struct it_reply it_worker_do(struct it_worker *w,
				    const struct it_worker_cmd *c)
{
	struct it_reply r = { -1, EIO };

	if (write(w->cmd, c, sizeof(*c)) != sizeof(*c) ||
	    read(w->res, &r, sizeof(r)) != sizeof(r))
		r.err = EIO;
	return r;
}

struct it_reply it_worker_alloc(struct it_worker *w, int count, uint64_t len,
				unsigned int mask, unsigned int flags)
{
	struct it_worker_cmd c = { 'a', count, len, mask, flags };

	return it_worker_do(w, &c);
}

struct it_reply it_worker_free(struct it_worker *w, int count)
{
	struct it_worker_cmd c = { .op = 'f', .count = count };

	return it_worker_do(w, &c);
}

struct it_reply it_worker_reopen(struct it_worker *w, bool open)
{
	struct it_worker_cmd c = { .op = open ? 'o' : 'c' };

	return it_worker_do(w, &c);
}

struct it_reply it_worker_rounds(struct it_worker *w, int count,
				 unsigned int mask)
{
	struct it_worker_cmd c = { .op = 'r', .count = count, .mask = mask };

	return it_worker_do(w, &c);
}

void it_worker_stop(struct it_worker *w)
{
	struct it_worker_cmd c = { .op = 'q' };

	if (write(w->cmd, &c, sizeof(c)) != sizeof(c))
		kill(w->pid, SIGKILL);
	waitpid(w->pid, NULL, 0);
	close(w->cmd);
	close(w->res);
}
