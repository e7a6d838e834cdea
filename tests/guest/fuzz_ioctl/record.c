// SPDX-License-Identifier: MIT
/*
 * fuzz_ioctl: violations, recorded once per kind in the memory all
 * processes share, the --verbose call log, and the counted system calls.
 */
#include "fuzz_ioctl.h"

static const char *const mode_names[] = {
	"ok", "NULL", "unmapped-low", "kernel-addr", "PROT_NONE",
	"straddles-into-PROT_NONE", "read-only", "straddles-into-read-only",
};

/* ------------------------------------------------------------------ */
/* Recording                                                           */

static void sh_lock(void)
{
	while (__atomic_exchange_n(&sh->lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void sh_unlock(void)
{
	__atomic_store_n(&sh->lock, 0, __ATOMIC_RELEASE);
}

static const char *const kind_names[] = {
	"/dev/ion fd", "ion dma-buf fd", "dma-heap node fd",
	"foreign dma-buf fd", "pipe fd",
};

/*
 * What @fd is now, after the call: a pool that lost track of its fds
 * (another thread closed one and the number was reused) shows as a call
 * on a file of another kind than the one the record names.
 */
static void describe_fd(char *buf, size_t size, int fd)
{
	char path[32], target[96];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	len = readlink(path, target, sizeof(target) - 1);
	if (len < 0)
		snprintf(target, sizeof(target), "%s", strerror(errno));
	else
		target[len] = 0;
	snprintf(buf, size, " (fd %d is now %s)", fd, target);
}

static void describe(char *buf, size_t size, const struct thr *t,
		     const struct call *c, int err, const char *why)
{
	int n, i;

	n = snprintf(buf, size,
		     "seed=%llu only=%d.%d op=%ld calls=%ld%s: %s cmd=%#lx on %s, arg %s,",
		     (unsigned long long)seed, t->proc, t->idx, t->iter,
		     t->calls,
		     t->in_child ? " (in a forked child)" : "", c->name,
		     c->cmd, c->fd_kind >= 0 ? kind_names[c->fd_kind] : "-",
		     mode_names[c->mode]);
	for (i = 0; i < c->na && n > 0 && (size_t)n < size; i++)
		n += snprintf(buf + n, size - n, " %#llx", c->a[i]);
	if (n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - n, " -> %s%s%s",
			      err ? strerror(err) : "success", why ? ": " : "",
			      why ? why : "");
	if (c->fd > 2 && n > 0 && (size_t)n < size)
		describe_fd(buf + n, size - n, c->fd);
}

void violation(struct thr *t, const struct call *c, int err,
	       const char *why)
{
	char key[64];
	int i;

	__atomic_add_fetch(&sh->violations, 1, __ATOMIC_RELAXED);
	snprintf(key, sizeof(key), "%s/%d/%s", c->name, err, why ? why : "");
	sh_lock();
	for (i = 0; i < sh->nrec; i++)
		if (!strcmp(sh->recs[i].key, key))
			break;
	if (i < sh->nrec) {
		sh->recs[i].count++;
	} else if (sh->nrec < MAX_RECS) {
		struct rec *r = &sh->recs[sh->nrec++];

		snprintf(r->key, sizeof(r->key), "%s", key);
		describe(r->desc, sizeof(r->desc), t, c, err, why);
		r->err = err;
		r->count = 1;
	} else {
		sh->dropped++;
	}
	sh_unlock();
}

/* Check @err (0 for success) against @allowed. */
int check(struct thr *t, const struct call *c, int err, eset_t allowed,
	  const char *why)
{
	if (kfault_armed)	/* any kernel allocation may fail */
		allowed |= E(ENOMEM) | E(ENOBUFS);
	if (err >= 0 && err < 128 && (allowed & E(err)))
		return 1;
	violation(t, c, err, why ? why : "errno not in the documented set");
	return 0;
}

void call_args(struct call *c, const unsigned long long *a, int na)
{
	int i;

	for (i = 0; i < na && i < (int)IT_ARRAY_SIZE(c->a); i++)
		c->a[i] = a[i];
	c->na = i;
}

void report_violations(const char *what)
{
	int i;

	for (i = 0; i < sh->nrec; i++) {
		struct rec *r = &sh->recs[i];

		tap_ok(0, "%s%s%s (%ld times)", what ? what : "",
		       what ? ": " : "", r->desc, r->count);
	}
	if (sh->dropped)
		tap_diag("%d more kinds of violation not listed", sh->dropped);
	tap_ok(!sh->violations,
	       "%s%severy call's result was one its documentation allows (%ld violations)",
	       what ? what : "", what ? ": " : "", sh->violations);
}

void shared_reset(void)
{
	sh_lock();
	sh->calls = 0;
	sh->violations = 0;
	sh->children = 0;
	sh->child_crashes = 0;
	sh->setup_errors = 0;
	sh->edquot = 0;
	sh->nrec = 0;
	sh->dropped = 0;
	sh_unlock();
}

void log_call(const struct thr *t, const struct call *c)
{
	char buf[400];
	int n;

	if (!verbose)
		return;
	describe(buf, sizeof(buf), t, c, 0, "(about to run)");
	n = strlen(buf);
	buf[n++] = '\n';
	if (write(2, buf, n) != n)
		return;
}

/* ------------------------------------------------------------------ */
/* System calls, counted                                               */

int call_ioctl(struct thr *t, struct call *c, int fd, void *arg)
{
	int ret;

	c->fd = fd;
	log_call(t, c);
	count_call(t);
	ret = ioctl(fd, c->cmd, arg);
	if (ret < 0 && errno == EDQUOT)
		__atomic_add_fetch(&sh->edquot, 1, __ATOMIC_RELAXED);
	return ret < 0 ? errno : 0;
}

void *call_placed(struct thr *t, struct call *c, int fd, const void *arg,
		  size_t size, int *err)
{
	void *p = place(t, arg, size, &c->mode);

	*err = call_ioctl(t, c, fd, p);
	return p;
}

void count_call(struct thr *t)
{
	t->calls++;
	__atomic_add_fetch(&sh->calls, 1, __ATOMIC_RELAXED);
}
