// SPDX-License-Identifier: MIT
/*
 * Per-heap quotas (ion_quota.c, Documentation/ion.rst "Quotas"): exact
 * per-user and per-client limits that answer EDQUOT, counted in debugfs;
 * another user unaffected; limits changed at run time take effect; freed
 * buffers give the quota back; root is limited only with quota_root; a
 * heap over quota passes the request on to the next heap of the mask; by
 * default no ordinary user takes more than half the carveout.  The
 * ordinary users are processes that opened /dev/ion as root and then
 * dropped to an unprivileged uid: they keep only what their quota allows.
 */
#include <grp.h>
#include <sys/wait.h>

#include "ion_test_util.h"

#define PARAMS		"/sys/module/ion/parameters/"
#define USER_A		65534
#define USER_B		65533
#define MAX_BUFS	4096

/* A process allocating on command, as @uid, through /dev/ion. */
struct user {
	pid_t pid;
	int cmd, res;		/* pipes to and from it */
};

struct reply {
	int done;		/* allocations or frees that succeeded */
	int err;		/* errno of the first failure, or 0 */
};

struct command {
	int op;			/* 'a': allocate, 'f': free, 'q': quit */
	int count;
	uint64_t len;
	unsigned int mask;
};

static void user_loop(int ion, int cmd, int res)
{
	static int bufs[MAX_BUFS];
	struct command c;
	struct reply r;
	int n = 0;

	while (read(cmd, &c, sizeof(c)) == sizeof(c) && c.op != 'q') {
		r.done = 0;
		r.err = 0;
		for (; r.done < c.count && !r.err; r.done++) {
			if (c.op == 'f') {
				if (n)
					close(bufs[--n]);
				continue;
			}
			int fd = n < MAX_BUFS ?
				 it_alloc_fd(ion, c.len, c.mask, 0) : -ENOSPC;

			if (fd < 0) {
				r.err = -fd;
				break;
			}
			bufs[n++] = fd;
		}
		if (write(res, &r, sizeof(r)) != sizeof(r))
			_exit(1);
	}
	_exit(0);
}

static int user_start(struct user *u, uid_t uid)
{
	int cmd[2], res[2], ion;

	if (pipe(cmd) || pipe(res))
		return -1;
	u->pid = fork();
	if (u->pid < 0)
		return -1;
	if (u->pid == 0) {
		ion = it_open();	/* as root, then drop */
		if (ion < 0 || setgroups(0, NULL) ||
		    setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(2);
		close(cmd[1]);
		close(res[0]);
		user_loop(ion, cmd[0], res[1]);
	}
	close(cmd[0]);
	close(res[1]);
	u->cmd = cmd[1];
	u->res = res[0];
	return 0;
}

/* Start @u as @uid, or say that it could not be. */
static int user_up(struct user *u, uid_t uid)
{
	if (!user_start(u, uid))
		return 0;
	tap_ok(0, "an unprivileged user (uid %u) starts", (unsigned int)uid);
	return -1;
}

static struct reply user_do(struct user *u, int op, int count, uint64_t len,
			    unsigned int mask)
{
	struct command c = { op, count, len, mask };
	struct reply r = { -1, EIO };

	if (write(u->cmd, &c, sizeof(c)) != sizeof(c) ||
	    read(u->res, &r, sizeof(r)) != sizeof(r))
		r.err = EIO;
	return r;
}

static void user_stop(struct user *u)
{
	struct command c = { .op = 'q' };

	if (write(u->cmd, &c, sizeof(c)) != sizeof(c))
		kill(u->pid, SIGKILL);
	waitpid(u->pid, NULL, 0);
	close(u->cmd);
	close(u->res);
}

static int write_param(const char *name, const char *val)
{
	char path[128];
	int fd, ok;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -EIO;
}

/* Set entry @id of an array parameter, the others to their default -1. */
static int set_limit(const char *name, unsigned int id, long kb)
{
	char val[256] = "";
	unsigned int i;

	for (i = 0; i < ION_NUM_HEAP_IDS; i++)
		snprintf(val + strlen(val), sizeof(val) - strlen(val), "%s%ld",
			 i ? "," : "", i == id ? kb : -1L);
	return write_param(name, val);
}

static void reset_limits(void)
{
	set_limit("uid_max_kb", 0, -1);
	set_limit("client_max_kb", 0, -1);
	write_param("quota_root", "N");
}

/* A number from the head of heaps/<heap>, or -1. */
static long long heap_num(const char *heap, const char *key)
{
	char path[128];

	snprintf(path, sizeof(path), IT_DEBUGFS "/heaps/%s", heap);
	return it_dfs_file_num(path, key);
}

/* The bytes the quota file gives for (heap, kind, who), or -1. */
static long long quota_bytes(const char *heap, const char *kind,
			     const char *who)
{
	char *text, *line, *save, want[192];
	long long bytes = -1;

	if (it_read_file(IT_DEBUGFS "/quota", &text) < 0)
		return -1;
	snprintf(want, sizeof(want), "%s\t%s\t%s\t", heap, kind, who);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, want, strlen(want)))
			bytes = atoll(line + strlen(want));
	free(text);
	return bytes;
}

/* @limit bytes in pages succeed, one page more fails with EDQUOT. */
static void fill_to_limit(struct user *u, long limit, long pg,
			  unsigned int mask, const char *what)
{
	struct reply r = user_do(u, 'a', limit / pg, pg, mask);

	tap_ok(r.done == limit / pg && !r.err, "%s: %ld KiB in pages succeed",
	       what, limit >> 10);
	r = user_do(u, 'a', 1, pg, mask);
	tap_ok(r.done == 0 && r.err == EDQUOT,
	       "%s: one page more fails with EDQUOT", what);
	if (r.err != EDQUOT)
		tap_diag("done %d, %s", r.done, strerror(r.err));
}

static void test_uid_limit(long pg)
{
	const unsigned int sys = ION_HEAP_SYSTEM_MASK;
	long long ref0 = heap_num(ION_SYSTEM_HEAP_NAME, "quota_refusals");
	struct user a, b;
	struct reply r;
	char who[32];

	set_limit("uid_max_kb", 0, 1024);
	if (user_up(&a, USER_A) || user_up(&b, USER_B))
		return;
	fill_to_limit(&a, 1024 * 1024, pg, sys, "uid limit 1 MiB");
	tap_ok(heap_num(ION_SYSTEM_HEAP_NAME, "quota_refusals") == ref0 + 1,
	       "heaps/%s counts the refusal in quota_refusals",
	       ION_SYSTEM_HEAP_NAME);
	snprintf(who, sizeof(who), "%d", USER_A);
	tap_ok(quota_bytes(ION_SYSTEM_HEAP_NAME, "uid", who) == 1024 * 1024,
	       "the quota file shows the user's 1 MiB");
	r = user_do(&b, 'a', 1024 * 1024 / pg, pg, sys);
	tap_ok(r.done == 1024 * 1024 / pg && !r.err,
	       "another user is unaffected: its own 1 MiB succeeds");
	r = user_do(&a, 'f', 1, 0, 0);
	r = user_do(&a, 'a', 1, pg, sys);
	tap_ok(r.done == 1 && !r.err, "a freed page gives its quota back");
	set_limit("uid_max_kb", 0, 2048);
	r = user_do(&a, 'a', 1024 * 1024 / pg, pg, sys);
	tap_ok(r.done == 1024 * 1024 / pg && !r.err,
	       "raising the limit to 2 MiB at run time takes effect");
	r = user_do(&a, 'a', 1, pg, sys);
	tap_ok(r.err == EDQUOT, "and 2 MiB plus a page fails with EDQUOT");
	set_limit("uid_max_kb", 0, 0);
	r = user_do(&a, 'a', 1, pg, sys);
	tap_ok(r.done == 1 && !r.err, "limit 0 means no limit");
	user_stop(&a);
	user_stop(&b);
	tap_ok(quota_bytes(ION_SYSTEM_HEAP_NAME, "uid", who) == -1,
	       "after exit the user holds nothing");
	reset_limits();
}

static void test_client_limit(long pg)
{
	const unsigned int sys = ION_HEAP_SYSTEM_MASK;
	struct user a;

	set_limit("uid_max_kb", 0, 0);
	set_limit("client_max_kb", 0, 512);
	if (user_up(&a, USER_A))
		return;
	fill_to_limit(&a, 512 * 1024, pg, sys, "client limit 512 KiB");
	user_stop(&a);
	reset_limits();
}

static void test_root(int ion, long pg)
{
	int fd;

	set_limit("uid_max_kb", 0, 1024);
	fd = it_alloc_fd(ion, 2 * 1024 * 1024, ION_HEAP_SYSTEM_MASK, 0);
	tap_ok(fd >= 0, "root is not limited by default (2 MiB over 1 MiB)");
	if (fd >= 0)
		close(fd);
	write_param("quota_root", "Y");
	fd = it_alloc_fd(ion, 2 * 1024 * 1024, ION_HEAP_SYSTEM_MASK, 0);
	it_expect(fd < 0 ? fd : 0, EDQUOT, "with quota_root, root is limited");
	if (fd >= 0)
		close(fd);
	reset_limits();
}

static void test_fallback(const struct it_heaps *hs, long pg)
{
	const struct ion_heap_data *contig =
		it_heap_find(hs, ION_SYSTEM_CONTIG_HEAP_NAME);
	unsigned int both = ION_HEAP_SYSTEM_MASK;
	long long c0;
	struct user a;
	struct reply r;

	if (!contig) {
		tap_skip("quota fallback", "no system-contig heap");
		return;
	}
	both |= 1u << contig->heap_id;
	set_limit("uid_max_kb", contig->heap_id, 64);
	if (user_up(&a, USER_A))
		return;
	/* system-contig has the higher id, so it is tried first. */
	c0 = heap_num(ION_SYSTEM_CONTIG_HEAP_NAME, "buffers");
	r = user_do(&a, 'a', 64 * 1024 / pg + 1, pg, both);
	tap_ok(r.done == 64 * 1024 / pg + 1 && !r.err,
	       "a heap over quota passes the request on to the next heap");
	tap_ok(heap_num(ION_SYSTEM_CONTIG_HEAP_NAME, "buffers") ==
	       c0 + 64 * 1024 / pg,
	       "system-contig holds exactly its 64 KiB quota");
	user_stop(&a);
	reset_limits();
}

static void test_default(const struct it_heaps *hs, int ion)
{
	const struct ion_heap_data *co = it_heap_find(hs, ION_CARVEOUT_HEAP_NAME);
	long long size;
	struct user a;
	struct reply r;
	int fd;

	if (!co) {
		tap_skip("default carveout quota", "no carveout heap");
		return;
	}
	size = heap_num(ION_CARVEOUT_HEAP_NAME, "region_size");
	if (size <= 0) {
		tap_skip("default carveout quota", "carveout size unknown");
		return;
	}
	if (user_up(&a, USER_A))
		return;
	r = user_do(&a, 'a', 1, size / 2, 1u << co->heap_id);
	tap_ok(r.done == 1 && !r.err,
	       "by default a user may take half the carveout");
	r = user_do(&a, 'a', 1, it_page(), 1u << co->heap_id);
	tap_ok(r.err == EDQUOT, "and not a page more (EDQUOT)");
	user_stop(&a);
	fd = it_alloc_fd(ion, size / 2 + it_page(), 1u << co->heap_id, 0);
	tap_ok(fd >= 0, "root may take more than half");
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	struct it_heaps hs;
	long pg = it_page();
	int ion = it_setup(&hs);
	char *text = NULL;

	tap_ok(it_read_file(PARAMS "uid_max_kb", &text) > 0 &&
	       !strncmp(text, "-1,-1,", 6),
	       "uid_max_kb is there, default -1 for every heap id");
	free(text);
	text = NULL;
	tap_ok(it_read_file(PARAMS "client_max_kb", &text) > 0 &&
	       !strncmp(text, "-1,-1,", 6),
	       "client_max_kb is there, default -1 for every heap id");
	free(text);
	reset_limits();
	test_uid_limit(pg);
	test_client_limit(pg);
	test_root(ion, pg);
	test_fallback(&hs, pg);
	test_default(&hs, ion);
	reset_limits();
	close(ion);
	return tap_exit();
}
