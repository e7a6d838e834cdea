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
 * Closing /dev/ion and opening it again does not reset a process's
 * client quota.
 */
#include <sys/wait.h>

#include "ion_test_util.h"

static const uid_t user_a = 65534, user_b = 65533;
/* Worker setup: leave root for @arg's uid, /dev/ion already open. */
static int drop_to(void *arg)
{
	return it_become_user(*(const uid_t *)arg, (gid_t)-1);
}

/* Start @w as @uid, or say that it could not be. */
static int user_up(struct it_worker *w, const uid_t *uid)
{
	if (!it_worker_start(w, drop_to, (void *)uid))
		return 0;
	tap_ok(0, "an unprivileged user (uid %u) starts", (unsigned int)*uid);
	return -1;
}

/* Set entry @id of an array parameter, the others to their default -1. */
static int set_limit(const char *name, unsigned int id, long kb)
{
	long kbs[ION_NUM_HEAP_IDS];
	unsigned int i;

	for (i = 0; i < ION_NUM_HEAP_IDS; i++)
		kbs[i] = i == id ? kb : -1L;
	return it_param_set_array(name, kbs, ION_NUM_HEAP_IDS);
}

static void reset_limits(void)
{
	set_limit("uid_max_kb", 0, -1);
	set_limit("client_max_kb", 0, -1);
	it_param_set("quota_root", "N");
}

/* @limit bytes in pages succeed, one page more fails with EDQUOT. */
static void fill_to_limit(struct it_worker *u, long limit, long pg,
			  unsigned int mask, const char *what)
{
	struct it_reply r = it_worker_alloc(u, limit / pg, pg, mask, 0);

	tap_ok(r.done == limit / pg && !r.err, "%s: %ld KiB in pages succeed",
	       what, limit >> 10);
	r = it_worker_alloc(u, 1, pg, mask, 0);
	tap_ok(r.done == 0 && r.err == EDQUOT,
	       "%s: one page more fails with EDQUOT", what);
	if (r.err != EDQUOT)
		tap_diag("done %d, %s", r.done, strerror(r.err));
}

static void test_uid_limit(long pg)
{
	const unsigned int sys = ION_HEAP_SYSTEM_MASK;
	long long ref0 = it_heap_num(ION_SYSTEM_HEAP_NAME, "quota_refusals");
	struct it_worker a, b;
	struct it_reply r;
	char who[32];

	set_limit("uid_max_kb", 0, 1024);
	if (user_up(&a, &user_a) || user_up(&b, &user_b))
		return;
	fill_to_limit(&a, 1024 * 1024, pg, sys, "uid limit 1 MiB");
	tap_ok(it_heap_num(ION_SYSTEM_HEAP_NAME, "quota_refusals") == ref0 + 1,
	       "heaps/%s counts the refusal in quota_refusals",
	       ION_SYSTEM_HEAP_NAME);
	snprintf(who, sizeof(who), "%u", (unsigned int)user_a);
	tap_ok(it_quota_bytes(ION_SYSTEM_HEAP_NAME, "uid", who) == 1024 * 1024,
	       "the quota file shows the user's 1 MiB");
	r = it_worker_alloc(&b, 1024 * 1024 / pg, pg, sys, 0);
	tap_ok(r.done == 1024 * 1024 / pg && !r.err,
	       "another user is unaffected: its own 1 MiB succeeds");
	r = it_worker_free(&a, 1);
	r = it_worker_alloc(&a, 1, pg, sys, 0);
	tap_ok(r.done == 1 && !r.err, "a freed page gives its quota back");
	set_limit("uid_max_kb", 0, 2048);
	r = it_worker_alloc(&a, 1024 * 1024 / pg, pg, sys, 0);
	tap_ok(r.done == 1024 * 1024 / pg && !r.err,
	       "raising the limit to 2 MiB at run time takes effect");
	r = it_worker_alloc(&a, 1, pg, sys, 0);
	tap_ok(r.err == EDQUOT, "and 2 MiB plus a page fails with EDQUOT");
	set_limit("uid_max_kb", 0, 0);
	r = it_worker_alloc(&a, 1, pg, sys, 0);
	tap_ok(r.done == 1 && !r.err, "limit 0 means no limit");
	it_worker_stop(&a);
	it_worker_stop(&b);
	tap_ok(it_quota_bytes(ION_SYSTEM_HEAP_NAME, "uid", who) == -1,
	       "after exit the user holds nothing");
	reset_limits();
}

static void test_client_limit(long pg)
{
	const unsigned int sys = ION_HEAP_SYSTEM_MASK;
	struct it_worker a;

	set_limit("uid_max_kb", 0, 0);
	set_limit("client_max_kb", 0, 512);
	if (user_up(&a, &user_a))
		return;
	fill_to_limit(&a, 512 * 1024, pg, sys, "client limit 512 KiB");
	it_worker_stop(&a);
	reset_limits();
}

/* No setup: the worker stays root (limited with quota_root). */
static int stay_root(void *arg)
{
	(void)arg;
	return 0;
}

/*
 * A process that closes /dev/ion keeping its buffers (dma-buf fds) and
 * opens it again gets a new client, whose quota still counts them.
 */
static void test_client_reopen(long pg)
{
	const unsigned int sys = ION_HEAP_SYSTEM_MASK;
	struct it_worker a;
	struct it_reply r;
	char who[48], comm[32];

	set_limit("uid_max_kb", 0, 0);
	set_limit("client_max_kb", 0, 512);
	it_param_set("quota_root", "Y");
	if (it_worker_start(&a, stay_root, NULL)) {
		tap_ok(0, "a worker process starts");
		reset_limits();
		return;
	}
	fill_to_limit(&a, 512 * 1024, pg, sys, "reopen: client limit 512 KiB");
	it_comm(comm, sizeof(comm));	/* the worker's, a fork of ours */
	snprintf(who, sizeof(who), "%s-%d", comm, (int)a.pid);
	r = it_worker_reopen(&a, false);
	tap_ok(!r.err, "reopen: the process closes /dev/ion, keeping its fds");
	tap_ok(it_quota_bytes(ION_SYSTEM_HEAP_NAME, "client", who) ==
	       512 * 1024,
	       "reopen: the quota file still shows the gone client's 512 KiB");
	r = it_worker_reopen(&a, true);
	tap_ok(!r.err, "reopen: and opens /dev/ion again");
	r = it_worker_alloc(&a, 1, pg, sys, 0);
	tap_ok(r.done == 0 && r.err == EDQUOT,
	       "reopen: its new client counts them: one page more fails with EDQUOT");
	r = it_worker_free(&a, 1);
	r = it_worker_alloc(&a, 1, pg, sys, 0);
	tap_ok(r.done == 1 && !r.err,
	       "reopen: a freed page gives the new client its quota back");
	it_worker_stop(&a);
	tap_ok(it_quota_bytes(ION_SYSTEM_HEAP_NAME, "client", who) == -1,
	       "reopen: after exit the process holds nothing");
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
	it_param_set("quota_root", "Y");
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
	struct it_worker a;
	struct it_reply r;

	if (!contig) {
		tap_skip("quota fallback", "no system-contig heap");
		return;
	}
	both |= 1u << contig->heap_id;
	set_limit("uid_max_kb", contig->heap_id, 64);
	if (user_up(&a, &user_a))
		return;
	/* system-contig has the higher id, so it is tried first. */
	c0 = it_heap_num(ION_SYSTEM_CONTIG_HEAP_NAME, "buffers");
	r = it_worker_alloc(&a, 64 * 1024 / pg + 1, pg, both, 0);
	tap_ok(r.done == 64 * 1024 / pg + 1 && !r.err,
	       "a heap over quota passes the request on to the next heap");
	tap_ok(it_heap_num(ION_SYSTEM_CONTIG_HEAP_NAME, "buffers") ==
	       c0 + 64 * 1024 / pg,
	       "system-contig holds exactly its 64 KiB quota");
	it_worker_stop(&a);
	reset_limits();
}

static void test_default(const struct it_heaps *hs, int ion)
{
	const struct ion_heap_data *co = it_heap_find(hs, ION_CARVEOUT_HEAP_NAME);
	long long size;
	struct it_worker a;
	struct it_reply r;
	int fd;

	if (!co) {
		tap_skip("default carveout quota", "no carveout heap");
		return;
	}
	size = it_heap_num(ION_CARVEOUT_HEAP_NAME, "region_size");
	if (size <= 0) {
		tap_skip("default carveout quota", "carveout size unknown");
		return;
	}
	if (user_up(&a, &user_a))
		return;
	r = it_worker_alloc(&a, 1, size / 2, 1u << co->heap_id, 0);
	tap_ok(r.done == 1 && !r.err,
	       "by default a user may take half the carveout");
	r = it_worker_alloc(&a, 1, it_page(), 1u << co->heap_id, 0);
	tap_ok(r.err == EDQUOT, "and not a page more (EDQUOT)");
	it_worker_stop(&a);
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

	tap_ok(it_read_file(IT_PARAMS "uid_max_kb", &text) > 0 &&
	       !strncmp(text, "-1,-1,", 6),
	       "uid_max_kb is there, default -1 for every heap id");
	free(text);
	text = NULL;
	tap_ok(it_read_file(IT_PARAMS "client_max_kb", &text) > 0 &&
	       !strncmp(text, "-1,-1,", 6),
	       "client_max_kb is there, default -1 for every heap id");
	free(text);
	reset_limits();
	test_uid_limit(pg);
	test_client_limit(pg);
	test_client_reopen(pg);
	test_root(ion, pg);
	test_fallback(&hs, pg);
	test_default(&hs, ion);
	reset_limits();
	close(ion);
	return tap_exit();
}
