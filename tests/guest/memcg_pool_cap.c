// SPDX-License-Identifier: MIT
/*
 * memcg_pool_cap: at the pools' cap, a freed chunk takes the place of
 * cached pooled chunks its owner could not reuse
 * (kernel/heaps/ion_chunk_pool.c, DOC: free policy, "Caps"), so a cgroup
 * that freed a lot and went idle does not keep every other user from
 * pooling.  With pool_max_mb=4, tasks in cgroups a and b and in the root
 * cgroup each allocate four 1 MiB cached system-heap buffers and free
 * them in a burst (so they are pooled):
 *
 * - a fills the cap (4 MiB pooled, charged to a), then b's chunks take
 *   the place of a's: 4 MiB pooled, charged; a's memory.current drops by
 *   about 4 MiB, b's keeps them, and b's next four buffers reuse them
 *   (its memory.current does not grow by 4 MiB);
 * - from empty pools, b, then the root cgroup: the root's (uncharged)
 *   chunks take the place of b's, and b's memory.current drops;
 * - from empty pools, the root, then a: a's charged chunks take the
 *   place of the uncharged ones, and a's memory.current keeps them;
 * - with pool_max_mb=32, one cgroup pools 127 chunks of 64 KiB (its first
 *   free is isolated, not pooled), the other frees 384 and then 128 more:
 *   those take the place of the first cgroup's, though it has 383 of its
 *   own pooled, whichever of the two cgroups' lists the walk visits first
 *   (before, it left the owner's list only after 256 of its chunks, and
 *   failed); each way round.
 *
 * Those cases run with pool_displace_ms=0.  At 3000, with 2 MiB the root
 * cgroup pooled over 3 s before 2 MiB more, a's four freed chunks
 * displace the older 2 MiB only (the others were pooled less than 3 s
 * before), taking the oldest of the shared list first (taking the
 * newest, they displaced nothing).  With it at a minute, chunks
 * pooled a moment ago are not displaced: after a (or the root cgroup)
 * filled the cap, b's (or a's) freed chunks go to the buddy allocator and
 * the first owner keeps its pooled chunks (and is still charged them);
 * with it back at 0 the next frees displace them (before the parameter,
 * every free at the cap displaced others' chunks at once, so that owners
 * freeing in turn had the zeroing worker zero chunks that were given back
 * before anyone reused them).
 *
 * With the cap full of a's 1 MiB chunks, a's 64 KiB frees are not pooled
 * while those were pooled less than pool_displace_ms ago; at 0 one of
 * them gives way and the frees are pooled for a.
 *
 * With the cap full of a's 1 MiB and 64 KiB chunks, b's 64 KiB frees
 * displace a's 64 KiB chunks, one each (best fit), and a's 1 MiB chunks
 * stay for its next buffers.
 *
 * Before, each of these frees went to the buddy allocator and the pools
 * kept a's first chunks until memory ran short.  SKIP before 6.8 (no
 * per-memcg pools) or without cgroup2's memory controller.
 */
#include "heap_util.h"

#define CG_TOP		IT_CG_ROOT "/ion-pool-cap"
#define CG_A		CG_TOP "/a"
#define CG_B		CG_TOP "/b"
#define CAP_MB		4
#define CAP		(CAP_MB * (long long)MiB)
#define NBUF		CAP_MB		/* 1 MiB buffers that fill the cap */
/* Per-CPU charge batches the kernel may hold for a cgroup, and rounding. */
#define SLACK		(1 * (long long)MiB)
/* pool_displace_ms in oldest_case() */
#define OLD_MS		3000

static long long cur(const char *cg)
{
	return it_cg_num(cg, "memory.current", NULL);
}

struct pools {
	long long charged, uncharged;
};

/* The system heap's pooled bytes, once the deferred zeroing is done. */
static struct pools pooled(void)
{
	struct pools p = { -1, -1 };

	if (ht_wait_deferred())
		return p;
	p.charged = ht_system_num("pool_charged_bytes");
	p.uncharged = ht_system_num("pool_bytes") - p.charged;
	return p;
}

/*
 * @w allocates NBUF cached 1 MiB buffers and frees them in a row; then
 * the zeroing worker pools them (chunks waiting for it are on no list
 * yet, so nothing can take their place).
 */
static int fill_free(struct it_worker *w)
{
	struct it_reply r;

	r = it_worker_alloc(w, NBUF, MiB, ION_HEAP_SYSTEM_MASK,
			    ION_FLAG_CACHED);
	it_worker_free(w, IT_WORKER_FREE_ALL);
	if (ht_wait_deferred())
		return -EIO;
	if (r.done == NBUF)
		return 0;
	tap_diag("%d of %d buffers allocated: %s", r.done, NBUF,
		 strerror(r.err));
	return -EIO;
}

/* The cap's counters: bytes displaced, bytes freed for want of room. */
struct cap_counts {
	long long displaced, cap_freed;
};

static struct cap_counts cap_counts(void)
{
	struct cap_counts c = {
		ht_system_num("pool_displaced_bytes"),
		ht_system_num("pool_cap_freed_bytes"),
	};

	return c;
}

/* Did the counters grow by @displaced and @cap_freed since @c0? */
static int cap_grew(struct cap_counts c0, long long displaced,
		    long long cap_freed)
{
	struct cap_counts c = cap_counts();

	tap_diag("pool_displaced_bytes +%lld, pool_cap_freed_bytes +%lld (expected +%lld, +%lld)",
		 c.displaced - c0.displaced, c.cap_freed - c0.cap_freed,
		 displaced, cap_freed);
	return c0.displaced >= 0 && c0.cap_freed >= 0 &&
	       c.displaced - c0.displaced == displaced &&
	       c.cap_freed - c0.cap_freed == cap_freed;
}

static void diag(const char *when, struct pools p)
{
	tap_diag("%s: pooled %lld KiB charged, %lld KiB uncharged; memory.current a %lld KiB, b %lld KiB",
		 when, p.charged / KiB, p.uncharged / KiB, cur(CG_A) / KiB,
		 cur(CG_B) / KiB);
}

/* Cgroup b's chunks take the place of a's, and b reuses them. */
static void cgroup_case(struct it_worker *a, struct it_worker *b)
{
	long long a0, b0, b1;
	struct cap_counts c0;
	struct it_reply r;
	struct pools p;

	ht_drop_pools();
	fill_free(a);
	p = pooled();
	tap_ok(p.charged == CAP && p.uncharged == 0,
	       "a's freed chunks fill the cap, charged");
	a0 = cur(CG_A);
	b0 = cur(CG_B);
	c0 = cap_counts();
	fill_free(b);
	p = pooled();
	diag("a, then b", p);
	tap_ok(p.charged == CAP && a0 - cur(CG_A) >= CAP - SLACK,
	       "b's freed chunks take the place of a's: a is uncharged them");
	tap_ok(cap_grew(c0, CAP, 0),
	       "debugfs counts %d MiB displaced, none freed for want of room",
	       NBUF);
	b1 = cur(CG_B);
	tap_ok(b1 - b0 >= CAP - SLACK, "b's stay pooled, charged to b");
	r = it_worker_alloc(b, NBUF, MiB, ION_HEAP_SYSTEM_MASK,
			    ION_FLAG_CACHED);
	tap_ok(r.done == NBUF && cur(CG_B) - b1 < SLACK &&
	       pooled().charged == 0,
	       "b's next %d MiB reuse them", NBUF);
	it_worker_free(b, IT_WORKER_FREE_ALL);
}

/* Uncharged chunks take the place of b's, charged ones of uncharged. */
static void root_cases(struct it_worker *a, struct it_worker *b,
		       struct it_worker *root)
{
	long long a0, b0;
	struct pools p;

	ht_drop_pools();
	fill_free(b);
	b0 = cur(CG_B);
	fill_free(root);
	p = pooled();
	diag("b, then the root", p);
	tap_ok(p.charged == 0 && p.uncharged == CAP &&
	       b0 - cur(CG_B) >= CAP - SLACK,
	       "the root cgroup's uncharged chunks take the place of b's");

	ht_drop_pools();
	fill_free(root);
	a0 = cur(CG_A);
	fill_free(a);
	p = pooled();
	diag("the root, then a", p);
	tap_ok(p.charged == CAP && p.uncharged == 0 &&
	       cur(CG_A) - a0 >= CAP - SLACK,
	       "a's charged chunks take the place of the uncharged ones");
}

/*
 * With pool_displace_ms at a minute, the chunks @first (in cgroup @fcg,
 * NULL: the root) pooled are not displaced by @second's; at 0 they are.
 */
static void young_case(struct it_worker *first, struct it_worker *second,
		       const char *fcg, const char *what)
{
	long long f0, f1, f2;
	struct cap_counts c0;
	struct pools p, q;

	if (it_param_set("pool_displace_ms", "60000")) {
		tap_ok(0, "pool_displace_ms can be set");
		return;
	}
	ht_drop_pools();
	fill_free(first);
	f0 = fcg ? cur(fcg) : 0;
	c0 = cap_counts();
	fill_free(second);
	p = pooled();
	f1 = fcg ? cur(fcg) : 0;
	diag(what, p);
	tap_ok(fcg ? p.charged == CAP && p.uncharged == 0 && f0 - f1 < SLACK :
		     p.uncharged == CAP && p.charged == 0,
	       "%s: pool_displace_ms=60000 keeps the first owner's chunks pooled a moment ago",
	       what);
	tap_ok(cap_grew(c0, 0, CAP),
	       "%s: debugfs counts none displaced, %d MiB freed for want of room",
	       what, NBUF);
	it_param_set("pool_displace_ms", "0");
	c0 = cap_counts();
	fill_free(second);
	q = pooled();
	f2 = fcg ? cur(fcg) : 0;
	diag(what, q);
	tap_ok(fcg ? q.charged == CAP && f1 - f2 >= CAP - SLACK :
		     q.uncharged == 0 && q.charged == CAP,
	       "%s: with pool_displace_ms=0 the next frees displace them",
	       what);
	tap_ok(cap_grew(c0, CAP, 0),
	       "%s: debugfs counts %d MiB displaced, none freed for want of room",
	       what, NBUF);
}

/*
 * pool_displace_ms=OLD_MS: the root cgroup frees half of its NBUF
 * buffers, and the other half over OLD_MS after they were pooled (had it
 * allocated them then, it would have taken the first half from the
 * pools); a's NBUF freed at the cap displace only the first half (the
 * oldest of the shared pools), and the rest of a's go back.  The second
 * half must still be younger than OLD_MS when a frees: a few seconds
 * leave room for a slow, loaded host (at one second, a's allocation and
 * free could take that long).
 */
static void oldest_case(struct it_worker *a, struct it_worker *root)
{
	const long long half = NBUF / 2 * (long long)MiB;
	struct it_reply r;
	struct cap_counts c0;
	struct pools p;
	long long t;
	char ms[16];

	snprintf(ms, sizeof(ms), "%d", OLD_MS);
	if (it_param_set("pool_displace_ms", ms)) {
		tap_ok(0, "pool_displace_ms can be set");
		return;
	}
	ht_drop_pools();
	r = it_worker_alloc(root, NBUF, MiB, ION_HEAP_SYSTEM_MASK,
			    ION_FLAG_CACHED);
	it_worker_free(root, NBUF / 2);
	ht_wait_deferred();
	usleep((OLD_MS + 500) * 1000);
	it_worker_free(root, IT_WORKER_FREE_ALL);
	ht_wait_deferred();
	c0 = cap_counts();
	t = it_now_ms();
	fill_free(a);
	p = pooled();
	tap_diag("a's allocation and free took %lld ms", it_now_ms() - t);
	diag("the root twice, seconds apart, then a", p);
	tap_ok(r.done == NBUF && p.charged == half && p.uncharged == half,
	       "pool_displace_ms=%d: a's chunks displace the root's older half only, the oldest first",
	       OLD_MS);
	tap_ok(cap_grew(c0, half, half),
	       "debugfs counts %d MiB displaced, %d MiB freed for want of room",
	       NBUF / 2, NBUF / 2);
	it_param_set("pool_displace_ms", "0");
}

#define SMALL_N		16	/* 64 KiB buffers: a 1 MiB chunk's worth */
#define SMALL_LEN	(64 * (long long)KiB)

/*
 * a allocates SMALL_N 64 KiB buffers and frees them in a burst (a free
 * that comes over ION_POOL_DELAY_MS after the one before, the first one
 * say, is isolated: not pooled, nor counted at the cap).  0, or -1 when
 * the buffers could not be had.
 */
static int small_frees(struct it_worker *a, struct pools *p,
		       struct cap_counts *c0)
{
	struct it_reply r;

	*c0 = cap_counts();
	r = it_worker_alloc(a, SMALL_N, SMALL_LEN, ION_HEAP_SYSTEM_MASK,
			    ION_FLAG_CACHED);
	it_worker_free(a, IT_WORKER_FREE_ALL);
	*p = pooled();
	diag("a's 64 KiB frees", *p);
	return r.done == SMALL_N ? 0 : -1;
}

/*
 * A cgroup's idle chunks of one order give way to its frees of another:
 * a's 1 MiB chunks pooled a moment ago stay (pool_displace_ms a minute)
 * and its 64 KiB frees go back; at 0 one 1 MiB chunk is displaced and the
 * frees are pooled, charged to a, and serve its next 64 KiB buffers.
 * Before, a charged chunk displaced only other owners' chunks, and a pool
 * full of a cgroup's 1 MiB chunks pooled none of its 64 KiB frees until
 * reclaim.
 */
static void own_order_case(struct it_worker *a)
{
	/* a's 1 MiB chunks, less one */
	const long long lo = CAP - (long long)MiB;
	struct cap_counts c0, c1;
	struct pools p, q;
	int ret;

	ht_drop_pools();
	if (it_param_set("pool_displace_ms", "60000") || fill_free(a)) {
		tap_ok(0, "a fills the cap with pool_displace_ms=60000");
		it_param_set("pool_displace_ms", "0");
		return;
	}
	ret = small_frees(a, &p, &c0);
	c1 = cap_counts();
	tap_diag("pool_displaced_bytes +%lld, pool_cap_freed_bytes +%lld",
		 c1.displaced - c0.displaced, c1.cap_freed - c0.cap_freed);
	tap_ok(!ret && p.charged == CAP && p.uncharged == 0,
	       "at the cap, a's 1 MiB chunks pooled a moment ago stay, its 64 KiB frees are not pooled");
	tap_ok(c1.displaced == c0.displaced &&
	       c1.cap_freed - c0.cap_freed > 0 &&
	       c1.cap_freed - c0.cap_freed <= SMALL_N * SMALL_LEN &&
	       (c1.cap_freed - c0.cap_freed) % SMALL_LEN == 0,
	       "debugfs counts its 64 KiB frees freed for want of room, none displaced");
	it_param_set("pool_displace_ms", "0");
	ret = small_frees(a, &p, &c0);
	tap_ok(cap_grew(c0, MiB, 0),
	       "pool_displace_ms=0: debugfs counts one 1 MiB chunk displaced, nothing freed for want of room");
	/* Its next 64 KiB buffers take those (1 MiB chunks would not do). */
	if (!ret && it_worker_alloc(a, SMALL_N, SMALL_LEN,
				    ION_HEAP_SYSTEM_MASK,
				    ION_FLAG_CACHED).done != SMALL_N)
		ret = -1;
	q = pooled();
	diag("a's next 64 KiB buffers", q);
	it_worker_free(a, IT_WORKER_FREE_ALL);
	tap_ok(!ret && p.uncharged == 0 && p.charged > lo &&
	       p.charged <= lo + SMALL_N * SMALL_LEN && q.charged == lo,
	       "a's idle 1 MiB chunks gave way to its 64 KiB frees, pooled for a: its next 64 KiB buffers reuse them");
}

#define FIT_BIG		(NBUF - 1)	/* a's 1 MiB buffers, and one's */
#define FIT_SMALL	16		/* worth of 64 KiB ones fill the cap */
#define FIT_B		8		/* b's 64 KiB frees */

/*
 * Best fit: with the cap full of a's chunks, three of 1 MiB and sixteen
 * of 64 KiB, b's 64 KiB frees displace a's 64 KiB chunks, one each (its
 * first free may be isolated, not pooled), and a's 1 MiB chunks stay: a's
 * next three 1 MiB buffers reuse them.  Before, the largest orders went
 * first: b's first pooled free gave back a whole 1 MiB chunk of a's.
 */
static void fit_case(struct it_worker *a, struct it_worker *b)
{
	struct cap_counts c0, c1;
	struct it_reply r1, r2;
	long long grew, a0;
	struct pools p;
	int ok;

	ht_drop_pools();
	/* the 64 KiB ones first: the 1 MiB ones are freed first, none isolated */
	r1 = it_worker_alloc(a, FIT_SMALL, SMALL_LEN, ION_HEAP_SYSTEM_MASK,
			     ION_FLAG_CACHED);
	r2 = it_worker_alloc(a, FIT_BIG, MiB, ION_HEAP_SYSTEM_MASK,
			     ION_FLAG_CACHED);
	it_worker_free(a, IT_WORKER_FREE_ALL);
	p = pooled();
	diag("a's 1 MiB and 64 KiB frees", p);
	tap_ok(r1.done == FIT_SMALL && r2.done == FIT_BIG &&
	       p.charged == CAP && p.uncharged == 0,
	       "a's %d MiB and %d x 64 KiB fill the cap, pooled for a",
	       FIT_BIG, FIT_SMALL);
	c0 = cap_counts();
	ok = it_worker_alloc(b, FIT_B, SMALL_LEN, ION_HEAP_SYSTEM_MASK,
			     ION_FLAG_CACHED).done == FIT_B;
	it_worker_free(b, IT_WORKER_FREE_ALL);
	diag("b's 64 KiB frees", pooled());
	c1 = cap_counts();
	grew = c1.displaced - c0.displaced;
	tap_diag("pool_displaced_bytes +%lld KiB, pool_cap_freed_bytes +%lld KiB",
		 grew / KiB, (c1.cap_freed - c0.cap_freed) / KiB);
	tap_ok(ok && (grew == FIT_B * SMALL_LEN ||
		      grew == (FIT_B - 1) * SMALL_LEN) &&
	       c1.cap_freed == c0.cap_freed,
	       "b's 64 KiB frees displace a's 64 KiB chunks, one each, best fit");
	a0 = cur(CG_A);
	r2 = it_worker_alloc(a, FIT_BIG, MiB, ION_HEAP_SYSTEM_MASK,
			     ION_FLAG_CACHED);
	tap_diag("a's next %d MiB: memory.current %lld -> %lld KiB", FIT_BIG,
		 a0 / KiB, cur(CG_A) / KiB);
	tap_ok(r2.done == FIT_BIG && cur(CG_A) - a0 < (long long)MiB / 2,
	       "a's 1 MiB chunks stayed pooled: its next %d MiB reuse them",
	       FIT_BIG);
	it_worker_free(a, IT_WORKER_FREE_ALL);
}

#define MANY_CAP_MB	32		/* as written to pool_max_mb */
#define MANY_CAP	(MANY_CAP_MB * (long long)MiB)
#define MANY_LEN	(64 * KiB)
#define MANY_N		((int)(MANY_CAP / MANY_LEN))	/* fill the cap */
#define MANY_OTHER	(MANY_N / 4)

/*
 * @x frees MANY_N chunks at a cap @y holds MANY_OTHER of (less its first
 * free's, isolated): the last of them once the pools list hundreds of
 * @x's (in a burst, most would still wait for the zeroing worker).  @y
 * is uncharged the chunks they displace, and its next buffers are fresh.
 */
static void many_case(struct it_worker *x, struct it_worker *y,
		      const char *xname, const char *yname)
{
	long long charged, y0, y1;
	struct it_reply rx, ry;
	char ycg[96];

	snprintf(ycg, sizeof(ycg), CG_TOP "/%s", yname);
	ht_drop_pools();
	ry = it_worker_alloc(y, MANY_OTHER, MANY_LEN, ION_HEAP_SYSTEM_MASK,
			     ION_FLAG_CACHED);
	it_worker_free(y, IT_WORKER_FREE_ALL);
	tap_diag("%s: %lld KiB pooled, charged", yname, pooled().charged / KiB);
	rx = it_worker_alloc(x, MANY_N, MANY_LEN, ION_HEAP_SYSTEM_MASK,
			     ION_FLAG_CACHED);
	/* its first frees fill the cap and are listed before the others */
	it_worker_free(x, MANY_N - MANY_OTHER);
	ht_wait_deferred();
	y0 = cur(ycg);
	it_worker_free(x, IT_WORKER_FREE_ALL);
	ht_wait_deferred();
	y1 = cur(ycg);
	/* y's chunks, if still pooled, serve y's next buffers */
	ry.done += it_worker_alloc(y, MANY_OTHER, MANY_LEN,
				   ION_HEAP_SYSTEM_MASK, ION_FLAG_CACHED).done;
	charged = pooled().charged;
	tap_diag("%s, then %s: %s's memory.current %lld -> %lld KiB; %lld KiB pooled, charged, after %s's next %d",
		 yname, xname, yname, y0 / KiB, y1 / KiB, charged / KiB, yname,
		 MANY_OTHER);
	tap_ok(rx.done == MANY_N && ry.done == 2 * MANY_OTHER &&
	       y0 - y1 >= (long long)(MANY_OTHER * MANY_LEN / 2) &&
	       charged > MANY_CAP - 4 * (long long)MiB,
	       "%s's last chunks take the place of %s's, with hundreds of its own pooled",
	       xname, yname);
	it_worker_free(y, IT_WORKER_FREE_ALL);
}

/* Every exit after it_cg_pair() leaves the module and cgroups as found. */
static void cleanup(struct it_param *old, struct it_param *age)
{
	it_param_restore(old);
	it_param_restore(age);
	ht_drop_pools();
	it_cg_pair_remove(CG_TOP, CG_A, CG_B);
}

int main(void)
{
	static const char *const cg[] = { CG_A, CG_B, IT_CG_ROOT };
	struct it_worker w[IT_ARRAY_SIZE(cg)];
	struct it_param old = { .val = NULL }, age = { .val = NULL };
	unsigned int n;
	int ion;

	ion = it_open();
	if (ion < 0)
		return tap_ok(0, "open " IT_DEV), tap_exit();
	if (!it_memcg_pools_kernel()) {
		tap_skip("displacement at the pool cap",
			 "kernel before 6.8: charged chunks are not pooled");
		return tap_exit();
	}
	if (it_cg_pair(CG_TOP, CG_A, CG_B)) {
		tap_skip("displacement at the pool cap",
			 "no cgroup2 memory controller");
		cleanup(&old, &age);
		return tap_exit();
	}
	if (it_param_save(&old, "pool_max_mb") ||
	    it_param_set("pool_max_mb", "4") ||
	    it_param_save(&age, "pool_displace_ms") ||
	    it_param_set("pool_displace_ms", "0")) {
		tap_ok(0, "pool_max_mb and pool_displace_ms can be set");
		goto out;
	}
	for (n = 0; n < IT_ARRAY_SIZE(cg); n++)
		if (it_worker_start(&w[n], it_cg_join, (void *)cg[n]))
			break;
	if (n == IT_ARRAY_SIZE(cg)) {
		cgroup_case(&w[0], &w[1]);
		root_cases(&w[0], &w[1], &w[2]);
		young_case(&w[0], &w[1], CG_A, "a, then b");
		young_case(&w[2], &w[0], NULL, "the root, then a");
		oldest_case(&w[0], &w[2]);
		own_order_case(&w[0]);
		fit_case(&w[0], &w[1]);
		if (it_param_set("pool_max_mb", "32")) {
			tap_ok(0, "pool_max_mb can be set to %d", MANY_CAP_MB);
		} else {
			many_case(&w[0], &w[1], "a", "b");
			many_case(&w[1], &w[0], "b", "a");
		}
	} else {
		tap_ok(0, "tasks in cgroups a, b and the root");
	}
	while (n--)
		it_worker_stop(&w[n]);
out:
	cleanup(&old, &age);
	close(ion);
	return tap_exit();
}
