// SPDX-License-Identifier: MIT
/*
 * ion-bench: running a case: its implementations round-robin in a shuffled
 * order, the statistics (median, p99, paired ratios) and the rows.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/udmabuf.h>
#include <ion/ion.h>

#include "ion-bench.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median and p99 (nearest rank) of @n values, sorted in place. */
static void stats(uint64_t *v, unsigned int n, uint64_t *med, uint64_t *p99)
{
	unsigned int r = (99 * n + 99) / 100;

	qsort(v, n, sizeof(*v), cmp_u64);
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*p99 = v[(r ? r : 1) - 1];
}

/* Repetitions: at least MIN_REPS, more as the budget allows, capped by size. */
#define MIN_REPS	7

static unsigned int max_reps(size_t size)
{
	if (size <= 4 * KiB)
		return MAX_REPS;
	if (size <= 64 * KiB)
		return 2000;
	if (size <= 1 * MiB)
		return 500;
	if (size <= 8 * MiB)
		return 100;
	return 40;
}

void skip(const char *impl, const char *op, size_t size,
		 const char *why)
{
	progress("%s %s %zu: skipped: %s", impl, op, size, why);
	printf("@skip\t%s\t%s\t%zu\t%s\n", impl, op, size, why);
}

/* Every implementation and the two memset limits of the cold group. */
#define MAX_MEMBERS	(MAX_IMPLS + 2)

static struct member members[MAX_MEMBERS];

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Paired ratios: run i of every member of a group is in round i, next to
 * its peer's run i in time, so the median of the per-round ratios cancels
 * load that drifts between rounds (the ratio of medians does not).
 * Returns the rounds compared (0: none) and the median in *ratio.
 */
static unsigned int paired_median(const struct member *m,
				  const struct member *peer, double *ratio)
{
	static double r[MAX_REPS];
	unsigned int k, n = m->n < peer->n ? m->n : peer->n;

	if (!n)
		return 0;
	for (k = 0; k < n; k++)
		r[k] = peer->s[k].ns ? (double)m->s[k].ns / peer->s[k].ns : 0;
	qsort(r, n, sizeof(*r), cmp_double);
	*ratio = n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
	return n;
}

static const struct member *find_member(unsigned int nm, const char *name)
{
	for (unsigned int i = 0; name && i < nm; i++)
		if (!strcmp(members[i].im->name, name))
			return &members[i];
	return NULL;
}

/*
 * "@pair impl op size live median_ratio rounds": every member's paired
 * ratio to dma_heap-system; "@mpair impl peer op size live median_ratio
 * rounds": that of each member with a pair_with to that member (charging
 * on over off).
 */
static void report_pairs(unsigned int nm, size_t size, unsigned int live)
{
	const struct member *base = find_member(nm, "dma_heap-system");
	unsigned int i, n;
	double ratio;

	for (i = 0; i < nm; i++) {
		const struct member *m = &members[i];
		const struct member *peer = find_member(nm, m->im->pair_with);

		n = base && m != base ? paired_median(m, base, &ratio) : 0;
		if (n)
			printf("@pair\t%s\t%s\t%zu\t%u\t%.4f\t%u\n",
			       m->im->name, m->op, size, live, ratio, n);
		n = peer ? paired_median(m, peer, &ratio) : 0;
		if (n)
			printf("@mpair\t%s\t%s\t%s\t%zu\t%u\t%.4f\t%u\n",
			       m->im->name, peer->im->name, m->op, size, live,
			       ratio, n);
	}
}

/* What helper CPUs did for a case's runs, when they did anything. */
static void report_helped(const struct member *m, size_t size)
{
	long long sum = 0;
	unsigned int i, runs = 0;

	for (i = 0; i < m->n; i++) {
		sum += m->s[i].helped;
		runs += m->s[i].helped > 0;
	}
	if (!sum)
		return;
	printf("@helped\t%s\t%s\t%zu\t%lld\t%llu\t%u\t%u\n", m->im->name,
	       m->op, size, sum, (unsigned long long)size * m->n, runs, m->n);
	progress("%-20s %-16s %9zu  helper CPUs allocated %.0f %% of the bytes (in %u of %u runs)",
		 m->im->name, m->op, size, 100.0 * sum / ((double)size * m->n),
		 runs, m->n);
}

void report(const struct member *m, size_t size, unsigned int live)
{
	uint64_t v[MAX_REPS], med, p99, wmed, wp99;

	if (!m->n) {
		skip(m->im->name, m->op, size, strerror(-m->err));
		return;
	}
	if (m->err)
		progress("%s %s %zu: stopped after %u runs: %s", m->im->name,
			 m->op, size, m->n, strerror(-m->err));
	for (unsigned int i = 0; i < m->n; i++) {
		v[i] = m->s[i].ns;
		if (dump_samples)
			printf("@sample\t%s\t%s\t%zu\t%u\t%u\t%llu\n",
			       m->im->name, m->op, size, live, i,
			       (unsigned long long)v[i]);
	}
	stats(v, m->n, &med, &p99);
	printf("%s\t%s\t%zu\t%u\t%llu\t%llu\t%u\n", m->im->name, m->op, size,
	       live, (unsigned long long)med, (unsigned long long)p99, m->n);
	progress("%-20s %-16s %9zu %6u  median %10.1f us  p99 %10.1f us  (%u runs)",
		 m->im->name, m->op, size, live, med / 1e3, p99 / 1e3, m->n);
	report_helped(m, size);
	if (m->fn != op_alloc_free_warm)
		return;
	for (unsigned int i = 0; i < m->n; i++)
		v[i] = m->s[i].wait_ns;
	stats(v, m->n, &wmed, &wp99);
	printf("@wait\t%s\t%s\t%zu\t%llu\t%llu\t%u\n", m->im->name, m->op, size,
	       (unsigned long long)wmed, (unsigned long long)wp99, m->n);
	progress("%-20s %-16s %9zu  waited for background work after: median %.1f us, p99 %.1f us",
		 m->im->name, m->op, size, wmed / 1e3, wp99 / 1e3);
}

/* xorshift64: the members' order in each round, the same in every run. */
static uint64_t order_state = 0x9e3779b97f4a7c15ULL;

static unsigned int order_rand(unsigned int n)
{
	order_state ^= order_state << 13;
	order_state ^= order_state >> 7;
	order_state ^= order_state << 17;
	return order_state % n;
}

/* A new order of @nm members for the next round (Fisher-Yates). */
static void shuffle(unsigned int *order, unsigned int nm)
{
	unsigned int i, j, t;

	for (i = 0; i < nm; i++)
		order[i] = i;
	for (i = nm - 1; i > 0; i--) {
		j = order_rand(i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
}

/*
 * Run @nm members round-robin, one repetition each per round, so that the
 * load of this shared machine weighs on all of them alike, in an order
 * shuffled every round: what ran just before changes the state a run
 * starts from (caches, the page and slab allocators' lists) by a few per
 * cent, so no member may always follow the same one.  Stops when every
 * member has its MIN_REPS runs and the group used its budget (@budget per
 * case times @nm), or when every member reached the cap for @size.
 */
void run_group(unsigned int nm, size_t size, unsigned int live,
		      uint64_t budget)
{
	unsigned int cap = max_reps(size), i, busy, short_of_min;
	unsigned int order[MAX_MEMBERS];
	uint64_t t0 = now_ns();

	if (!nm)
		return;
	for (;;) {
		busy = short_of_min = 0;
		shuffle(order, nm);
		for (i = 0; i < nm; i++) {
			struct member *m = &members[order[i]];

			if (m->err || m->n >= cap)
				continue;
			busy++;
			m->s[m->n].wait_ns = 0;
			m->s[m->n].helped = 0;
			m->err = set_context(m->im);
			if (!m->err)
				m->err = m->fn(m->im, size, &m->s[m->n]);
			if (!m->err)
				m->n++;
			if (!m->err && m->n < MIN_REPS)
				short_of_min++;
		}
		if (!busy || (!short_of_min && now_ns() - t0 >= budget * nm))
			break;
	}
	for (i = 0; i < nm; i++)
		report(&members[i], size, live);
	report_pairs(nm, size, live);
	move_cgroup(0);
	fflush(stdout);
}

void add_member(unsigned int *nm, struct impl *im, const char *op,
		       op_fn fn)
{
	struct member *m;

	if (*nm == MAX_MEMBERS) {
		progress("%s %s: no room for another member, left out",
			 im->name, op);
		return;
	}
	m = &members[(*nm)++];
	m->im = im;
	m->op = op;
	m->fn = fn;
	m->n = 0;
	m->err = 0;
}

static struct impl memset_impl = { .name = "memset", .fd = -1, .kind = K_ANON };
static struct impl stosb_impl = { .name = "memset-stosb", .fd = -1, .kind = K_ANON };

/*
 * One op over every size.  The memset limit runs in the alloc_free_cold
 * group (as its own op "memset"), anon only with alloc_map_touch.
 */
void run_op(const char *op, op_fn fn)
{
	int with_memset = fn == op_alloc_free_cold &&
		selected(only_ops, "memset") &&
		(selected(only_impls, "memset") || selected(only_impls, "memset-stosb"));
	int with_op = selected(only_ops, op);
	unsigned int nm;
	struct buf b;

	if (!with_op && !with_memset)
		return;
	progress("op %s%s", with_op ? op : "", with_memset ? " memset" : "");
	for (unsigned int z = 0; z < nsizes; z++) {
		nm = 0;
		memset_buf = NULL;
		if (with_memset) {
			memset_buf = mmap(NULL, sizes[z], PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS |
					  MAP_POPULATE, -1, 0);
			if (memset_buf == MAP_FAILED) {
				skip("memset", "memset", sizes[z], strerror(errno));
				memset_buf = NULL;
			} else {
				memset(memset_buf, 1, sizes[z]);
				if (selected(only_impls, "memset"))
					add_member(&nm, &memset_impl, "memset",
						   op_memset);
				if (HAVE_STOSB && selected(only_impls, "memset-stosb"))
					add_member(&nm, &stosb_impl, "memset",
						   op_memset_stosb);
			}
		}
		for (int i = 0; with_op && i < nimpls; i++) {
			struct impl *im = &impls[i];

			if (im->kind == K_ANON && fn != op_alloc_map_touch)
				continue;
			/* helpers take a buffer only above one chunk */
			if (im->big_cold_only &&
			    (fn != op_alloc_free_cold || sizes[z] <= MiB))
				continue;
			if ((im->in_cgroup || im->traced) &&
			    fn != op_alloc_free_cold && fn != op_alloc_free_warm)
				continue;
			if (fn == op_alloc_free_warm && !set_context(im) &&
			    buf_alloc(im, sizes[z], &b) == 0)
				buf_free(&b);	/* let a pool fill */
			add_member(&nm, im, op, fn);
		}
		move_cgroup(0);
		if (fn == op_alloc_free_warm)
			wait_quiet();	/* the first runs start quiet too */
		run_group(nm, sizes[z], 0,
			  fn == op_alloc_free_cold ? cold_budget_ns : budget_ns);
		set_helpers(0);	/* a twin may have run last */
		if (memset_buf)
			munmap(memset_buf, sizes[z]);
	}
}
