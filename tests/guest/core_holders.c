// SPDX-License-Identifier: MIT
/*
 * Who holds a buffer, and orphans (Documentation/debugfs.rst, "orphan",
 * "Holders"), for every heap: a child allocates a buffer through the fd
 * ABI and hands its fd to us over SCM_RIGHTS; we map it.  While the child
 * lives, `ionctl buffers --holders` lists both pids (the child with its
 * fd, us with our fd and mapping) and debugfs says the buffer is no
 * orphan.  Once the child exited, debugfs marks it an orphan, `ionctl
 * buffers --orphans` lists it and the child is no holder any more; with
 * our fd closed we hold it by the mapping alone; unmapped, it is freed and
 * gone from debugfs and from the orphans.
 */
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "ion_test_util.h"

#define SIZE	(64 * 1024)

/* What `ionctl <args>` printed on the row of buffer @id, or "" */
static void ionctl_row(const char *args, long long id, char *row, size_t len)
{
	char cmd[256], line[2048];
	FILE *p;

	row[0] = '\0';
	snprintf(cmd, sizeof(cmd), "ionctl %s 2>&1", args);
	p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(line, sizeof(line), p))
		if (strtoll(line, NULL, 10) == id && isdigit(line[strspn(line, " ")]))
			it_copy_line(row, len, line);
	pclose(p);
}

/*
 * The holder item of @pid in an ionctl row ("<pid>:<comm>(<what>)"): its
 * <what> into @what, or "" when the row names no such holder.
 */
static void holder_of(const char *row, pid_t pid, char *what, size_t len)
{
	char pfx[24];
	const char *s, *open, *close;

	what[0] = '\0';
	snprintf(pfx, sizeof(pfx), " %d:", (int)pid);
	s = strstr(row, pfx);
	open = s ? strchr(s, '(') : NULL;
	close = open ? strchr(open, ')') : NULL;
	if (close)
		snprintf(what, len, "%.*s", (int)(close - open - 1), open + 1);
}

/* The child: allocate, send the fd, wait for a byte, exit. */
static void allocator(int sock, const struct it_heap *k)
{
	int ion = it_open(), fd;
	char c;

	fd = ion >= 0 ? it_alloc_fd(ion, SIZE, 1U << k->id, 0) : -1;
	if (fd < 0 || it_send_fd(sock, fd, "f", 1, 0))
		_exit(2);
	if (read(sock, &c, 1) != 1)
		_exit(3);
	_exit(0);
}

struct state {
	const struct it_heap *k;
	pid_t child;
	long long id;
	char args[128], orphans[128];
};

/* Holders of the buffer as ionctl lists them: @child's and ours. */
static void check_holders(const struct state *s, const char *when,
			  const char *want_child, const char *want_self)
{
	char row[2048], c[64], m[64];

	ionctl_row(s->args, s->id, row, sizeof(row));
	holder_of(row, s->child, c, sizeof(c));
	holder_of(row, getpid(), m, sizeof(m));
	if (strcmp(c, want_child) || strcmp(m, want_self))
		tap_diag("row: %s", row);
	tap_ok(!strcmp(c, want_child) && !strcmp(m, want_self),
	       "%s %s: ionctl buffers --holders: allocator %s, receiver %s",
	       s->k->name, when, *want_child ? want_child : "none",
	       *want_self ? want_self : "none");
}

static int listed(const char *args, long long id)
{
	char row[2048];

	ionctl_row(args, id, row, sizeof(row));
	return row[0] != '\0';
}

static void holders_case(const struct it_heap *k)
{
	struct state s = { .k = k };
	unsigned long ino;
	int sv[2], fd, status;
	void *p;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		tap_ok(0, "%s: socketpair", k->name);
		return;
	}
	s.child = fork();
	if (s.child == 0) {
		close(sv[0]);
		allocator(sv[1], k);
	}
	close(sv[1]);
	fd = it_recv_fd(sv[0], &(char){ 0 }, 1, 0);
	p = fd >= 0 ? mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, 0) : NULL;
	if (fd < 0 || p == MAP_FAILED) {
		tap_ok(0, "%s: receive and map the allocator's fd (%d)",
		       k->name, fd);
		kill(s.child, SIGKILL);
		waitpid(s.child, NULL, 0);
		close(sv[0]);
		return;
	}
	ino = it_ino(fd);
	s.id = it_buffer_num_ino(ino, k->name, "buffer");
	snprintf(s.args, sizeof(s.args), "buffers --holders --heap %s",
		 k->name);
	snprintf(s.orphans, sizeof(s.orphans), "buffers --orphans --heap %s",
		 k->name);
	tap_ok(it_buffer_num_ino(ino, k->name, "orphan") == 0,
	       "%s: allocator alive: debugfs orphan 0", k->name);
	tap_ok(!listed(s.orphans, s.id),
	       "%s: allocator alive: not in ionctl buffers --orphans", k->name);
	check_holders(&s, "after the handover", "1fd", "1fd,1map");

	/* The allocator exits. */
	if (write(sv[0], "x", 1) != 1)
		kill(s.child, SIGKILL);
	waitpid(s.child, &status, 0);
	tap_ok(WIFEXITED(status) && !WEXITSTATUS(status),
	       "%s: allocator exited cleanly", k->name);
	tap_ok(it_buffer_num_ino(ino, k->name, "orphan") == 1,
	       "%s: allocator gone: debugfs orphan 1", k->name);
	tap_ok(listed(s.orphans, s.id),
	       "%s: allocator gone: listed by ionctl buffers --orphans",
	       k->name);
	check_holders(&s, "allocator gone", "", "1fd,1map");
	close(fd);
	check_holders(&s, "fd closed", "", "1map");
	tap_ok(it_buffer_num_ino(ino, k->name, "orphan") == 1,
	       "%s: held by the mapping alone: still an orphan", k->name);

	munmap(p, SIZE);
	tap_ok(it_buffer_num_ino(ino, k->name, "buffer") == -1 &&
	       !listed(s.orphans, s.id),
	       "%s: unmapped: freed, gone from debugfs and --orphans",
	       k->name);
	close(sv[0]);
}

int main(void)
{
	struct it_totals t;
	struct it_heaps hs;
	const struct it_heap *k;
	unsigned int i;
	int ion = it_setup(&hs);

	it_totals_get(&t);
	for (i = 0; (k = it_known_next(&hs, &i)); i++)
		holders_case(k);
	close(ion);
	it_totals_back(&t, "debugfs totals back where they were");
	return tap_exit();
}
