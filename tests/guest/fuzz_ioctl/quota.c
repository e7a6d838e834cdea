// SPDX-License-Identifier: MIT
/*
 * fuzz_ioctl: the quota runs.  After the main run, the same fuzzing runs
 * again in a forked process, three times: as an unprivileged user with
 * every quota off (uid_max_kb and client_max_kb 0), as that user with
 * small per-user and per-client limits, and as root with those limits and
 * quota_root set.  Allocations may answer EDQUOT only while a limit
 * applies, and then some must; each EDQUOT is a refusal counted in a
 * heap's quota_refusals; once the process is gone the quota file counts
 * nothing.  The parameters and the nodes' owners are restored after.
 */
#include <sys/stat.h>

#include "fuzz_ioctl.h"

#define QUOTA_USER	65534

int quota_set;

static const struct quota_run {
	const char *name;
	uid_t uid;
	int limits;	/* else every entry 0: no limit */
	int root;	/* quota_root */
} runs[QUOTA_RUNS] = {
	{ "unprivileged, no quota", QUOTA_USER, 0, 0 },
	{ "unprivileged, uid and client quotas", QUOTA_USER, 1, 0 },
	{ "root, quotas and quota_root", 0, 1, 1 },
};

eset_t quota_eset(void)
{
	return quota_set ? E(EDQUOT) : 0;
}

/* The parameters as they were, to put back. */
static char *saved_uid, *saved_client, *saved_root;

static char *param_get(const char *name)
{
	char path[128], *text = NULL;

	snprintf(path, sizeof(path), IT_PARAMS "%s", name);
	if (it_read_file(path, &text) < 0)
		return NULL;
	text[strcspn(text, "\n")] = 0;
	return text;
}

/* Put @name back to *@saved; 1 when it reads back so. */
static int param_restore(const char *name, char **saved)
{
	char *now;
	int same;

	if (!*saved)
		return 0;
	it_param_set(name, *saved);
	now = param_get(name);
	same = now && !strcmp(now, *saved);
	free(now);
	free(*saved);
	*saved = NULL;
	return same;
}

/*
 * Limits small against the fuzzer's buffers (up to 16 pages, 12 MiB a
 * thread): per user on the even heap ids, per client on the odd ones.
 */
static int params_set(const struct quota_run *r)
{
	long uid_kb[ION_NUM_HEAP_IDS], client_kb[ION_NUM_HEAP_IDS];
	unsigned int i;

	for (i = 0; i < ION_NUM_HEAP_IDS; i++) {
		uid_kb[i] = r->limits && !(i & 1) ? 768 : 0;
		client_kb[i] = r->limits && (i & 1) ? 384 : 0;
	}
	return it_param_set_array("uid_max_kb", uid_kb, ION_NUM_HEAP_IDS) ||
	       it_param_set_array("client_max_kb", client_kb,
				  ION_NUM_HEAP_IDS) ||
	       it_param_set("quota_root", r->root ? "Y" : "N");
}

/* Hand /dev/ion and the nodes to @uid, or back to their owners (@st). */
static void nodes_own(uid_t uid, struct stat *st)
{
	const char *path;
	int i;

	for (i = -1; i < nodes.cnt; i++) {
		path = i < 0 ? IT_DEV : nodes.path[i];
		if (uid != (uid_t)-1) {
			if (!stat(path, &st[i + 1]) && chown(path, uid, -1))
				tap_diag("chown %s: %s", path, strerror(errno));
		} else if (chown(path, st[i + 1].st_uid, st[i + 1].st_gid)) {
			tap_diag("chown %s back: %s", path, strerror(errno));
		}
	}
}

static long long refusals(void)
{
	long long n = 0, v;
	unsigned int i;

	for (i = 0; i < hs.cnt; i++) {
		v = it_heap_num(hs.h[i].name, "quota_refusals");
		if (v < 0)
			return -1;	/* a heap's count missing */
		n += v;
	}
	return n;
}

/* The quota file counts nothing (deferred fputs may lag a moment). */
static int quota_empty(void)
{
	long long t0 = it_now_ms();

	while (it_quota_bytes(NULL, NULL, NULL) != -1) {
		if (it_now_ms() - t0 > 5000)
			return 0;
		usleep(10000);
	}
	return 1;
}

/* The fuzzer's threads in a process of @r's user; its exit status. */
static int quota_fork(const struct quota_run *r, int proc, long calls)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		quota_set = r->limits;
		if (r->uid && it_become_user(r->uid, (gid_t)-1))
			_exit(3);
		per_thread = calls / nthreads;
		run_threads(proc, nthreads);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

static void quota_one(int idx, long calls)
{
	const struct quota_run *r = &runs[idx];
	struct stat st[FZ_MAX_NODES + 1];
	long long ref0 = refusals(), refs;
	int refs_read;
	int status;

	shared_reset();
	if (params_set(r)) {
		tap_ok(0, "quota run %d (%s): set the parameters", idx, r->name);
		return;
	}
	if (r->uid)
		nodes_own(r->uid, st);
	status = quota_fork(r, QUOTA_PROC + idx, calls);
	if (r->uid)
		nodes_own((uid_t)-1, st);
	refs = refusals();
	refs_read = ref0 >= 0 && refs >= 0;
	refs -= ref0;
	tap_diag("quota run %d (%s): %ld calls, %ld EDQUOT, %lld refusals",
		 idx, r->name, sh->calls, sh->edquot, refs);
	tap_ok(WIFEXITED(status) && !WEXITSTATUS(status) &&
	       !sh->child_crashes && !sh->setup_errors,
	       "quota run %d (%s): the process and its children opened their devices and exited normally",
	       idx, r->name);
	report_violations(r->name);
	if (r->limits) {
		tap_ok(sh->edquot > 0, "%s: allocations hit EDQUOT (%ld times)",
		       r->name, sh->edquot);
		tap_ok(refs_read && refs >= sh->edquot,
		       "%s: quota_refusals grew by at least that (%lld)",
		       r->name, refs);
	} else {
		tap_ok(!sh->edquot && !refs && refs_read,
		       "%s: no EDQUOT and no refusal (%ld, %lld)", r->name,
		       sh->edquot, refs);
	}
	tap_ok(quota_empty(),
	       "%s: the quota file counts nothing after the process exited",
	       r->name);
}

void quota_init(void)
{
	char *root = param_get("quota_root");

	quota_set = root && root[0] == 'Y';
	free(root);
}

void quota_runs(long calls)
{
	int i, ok;

	saved_uid = param_get("uid_max_kb");
	saved_client = param_get("client_max_kb");
	saved_root = param_get("quota_root");
	if (!saved_uid || !saved_client || !saved_root) {
		tap_skip("quota runs", "no quota parameters");
		calls = 0;
	}
	for (i = 0; calls && i < QUOTA_RUNS; i++)
		if (only_proc < 0 || only_proc == QUOTA_PROC + i)
			quota_one(i, only_proc < 0 ? calls / QUOTA_RUNS : calls);
	ok = param_restore("uid_max_kb", &saved_uid);
	ok &= param_restore("client_max_kb", &saved_client);
	ok &= param_restore("quota_root", &saved_root);
	if (calls)
		tap_ok(ok, "after the quota runs: uid_max_kb, client_max_kb and quota_root as they were");
	quota_set = 0;
}
