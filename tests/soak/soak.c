// SPDX-License-Identifier: MIT
/*
 * make soak: SOAK_WORKERS processes work on ion at once for SOAK_MINUTES
 * (default 10; SOAK_SECONDS overrides) in a guest with more CPUs than
 * make check's.  Six workers mix allocation on every heap (through
 * /dev/ion and the dma-heap nodes), mmap and touch with a data check,
 * free, the handle ABI's share and import, sending over a socket to a
 * child that checks the data, PRIME import into vgem and edu DMA through
 * ion_test; one forks children that allocate in a loop and kills them at
 * random; one drops caches and changes ion's run-time parameters.
 *
 * Pass: every data check held, no operation failed other than by a
 * refusal (ENOMEM or EDQUOT from a heap, ERANGE from a buffer edu cannot
 * reach), every worker exited cleanly, each operation ran, and once all
 * is closed and the pools are dropped debugfs's totals and MemFree are
 * back to where they started.  The runner then checks the kernel log
 * and that ion.ko unloads.  Operations per second and latencies (median,
 * p99) per operation end the output.
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "soak.h"

#define MEMFREE_SLACK	(32 * MiB)	/* per-CPU lists, slab, page tables */

/* Weights of the operations the six mixed workers pick from. */
static const unsigned int mix[SOAK_OPS] = {
	[SOAK_ALLOC] = 25, [SOAK_TOUCH] = 25, [SOAK_FREE] = 20,
	[SOAK_HANDLE] = 10, [SOAK_SEND] = 6, [SOAK_VGEM] = 8, [SOAK_EDU] = 6,
};

uint64_t soak_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static enum soak_op pick(struct soak_ctx *c)
{
	unsigned int total = 0, r, op;

	for (op = 0; op < SOAK_OPS; op++)
		total += mix[op];
	r = fz_below(&c->seed, total);
	for (op = 0; r >= mix[op]; op++)
		r -= mix[op];
	return op;
}

static void worker(struct soak_ctx *c, unsigned int i)
{
	/* A client of its own, as separate programs would have. */
	close(c->ion);
	c->ion = it_open();
	c->seed = fz_mix(c->seed + i);
	while (it_now_ms() < c->deadline_ms) {
		if (i == SOAK_WORKERS - 2) {
			soak_run(c, SOAK_KILL);
		} else if (i == SOAK_WORKERS - 1) {
			soak_run(c, SOAK_ADMIN);
			usleep(200 * 1000);
		} else {
			soak_run(c, pick(c));
		}
	}
	soak_drop_all();
	soak_params_restore();
	while (wait(NULL) > 0)
		;
	_exit(0);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* One line per operation; the sums over all workers into @sum. */
static void report(const struct soak_worker *w, double secs,
		   struct soak_stat *sum)
{
	static uint32_t us[SOAK_WORKERS * SOAK_SAMPLES];
	unsigned int op, i, n;

	tap_diag("%-7s %9s %9s %9s %9s %8s %7s", "op", "ops", "ops/s",
		 "p50 us", "p99 us", "refused", "errors");
	for (op = 0; op < SOAK_OPS; op++) {
		struct soak_stat *s = &sum[op];

		memset(s, 0, sizeof(*s));
		for (n = 0, i = 0; i < SOAK_WORKERS; i++) {
			s->ops += w[i].op[op].ops;
			s->enomem += w[i].op[op].enomem;
			s->errors += w[i].op[op].errors;
			s->corrupt += w[i].op[op].corrupt;
			memcpy(us + n, w[i].op[op].us,
			       w[i].op[op].nsamples * sizeof(*us));
			n += w[i].op[op].nsamples;
		}
		qsort(us, n, sizeof(*us), cmp_u32);
		tap_diag("%-7s %9llu %9.1f %9u %9u %8llu %7llu",
			 soak_op_names[op], (unsigned long long)s->ops,
			 s->ops / secs, n ? us[n / 2] : 0,
			 n ? us[(n * 99) / 100] : 0,
			 (unsigned long long)s->enomem,
			 (unsigned long long)s->errors);
	}
}

static int setup(struct soak_ctx *c)
{
	struct ion_test_info info;

	c->ion = it_setup(&c->hs);
	fz_nodes_load(&c->nodes);
	c->tfd = ht_test_open();
	c->edu = c->tfd >= 0 && !ht_test_info(c->tfd, &info) && info.has_edu;
	c->vgem = open_vgem();
	if (c->tfd < 0)
		tap_diag("no ion_test: no edu DMA (%s)", strerror(-c->tfd));
	if (c->vgem < 0)
		tap_diag("no vgem: no PRIME imports (%s)", strerror(-c->vgem));
	return 0;
}

/* Wait up to 20 s for debugfs's totals to come back to @t0. */
static void wait_totals(const struct it_totals *t0)
{
	struct it_totals t;
	int i;

	for (i = 0; i < 200; i++) {
		it_totals_get(&t);
		if (t.buffers == t0->buffers && t.bytes == t0->bytes)
			return;
		usleep(100 * 1000);
	}
}

int main(void)
{
	const char *env = getenv("SOAK_SECONDS");
	struct soak_stat sum[SOAK_OPS];
	long long secs, mem0, mem1, t_start;
	struct soak_worker *w;
	struct it_totals t0;
	struct soak_ctx c;
	unsigned int i, op, bad_exit = 0;
	uint64_t corrupt = 0, errors = 0;
	int status;
	pid_t pid;

	secs = env ? atoll(env) : 60LL * atoll(getenv("SOAK_MINUTES") ?: "10");
	memset(&c, 0, sizeof(c));
	c.seed = it_seed();
	setup(&c);
	w = mmap(NULL, SOAK_WORKERS * sizeof(*w), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED) {
		tap_ok(0, "shared counters: %s", strerror(errno));
		return tap_exit();
	}
	c.w = w;
	ht_drop_pools();
	it_totals_get(&t0);
	mem0 = ht_meminfo("MemFree");
	tap_diag("%lld s, %u workers, %ld CPUs, seed %llu, MemFree %lld MiB",
		 secs, SOAK_WORKERS, sysconf(_SC_NPROCESSORS_ONLN),
		 (unsigned long long)c.seed, mem0 / (long long)MiB);

	t_start = it_now_ms();
	c.deadline_ms = t_start + secs * 1000;
	for (i = 0; i < SOAK_WORKERS; i++) {
		pid = fork();
		if (!pid) {
			c.w = &w[i];
			worker(&c, i);
		}
		if (pid < 0)
			bad_exit++;
	}
	while ((pid = wait(&status)) > 0)
		bad_exit += !WIFEXITED(status) || WEXITSTATUS(status);
	report(w, (it_now_ms() - t_start) / 1000.0, sum);

	for (op = 0; op < SOAK_OPS; op++) {
		corrupt += sum[op].corrupt;
		errors += sum[op].errors;
	}
	for (i = 0; i < SOAK_WORKERS; i++)
		if (w[i].last_error[0])
			tap_diag("worker %u: last error: %s", i, w[i].last_error);
	tap_ok(!corrupt, "every data check held (%llu failed)",
	       (unsigned long long)corrupt);
	tap_ok(!errors, "no operation failed other than by a refusal (%llu did)",
	       (unsigned long long)errors);
	tap_ok(!bad_exit, "every worker exited cleanly");
	for (op = 0; op < SOAK_OPS; op++) {
		if ((op == SOAK_VGEM && c.vgem < 0) ||
		    (op == SOAK_EDU && !c.edu)) {
			tap_skip(soak_op_names[op], "device missing");
			continue;
		}
		tap_ok(sum[op].ops > sum[op].enomem, "%s ran and succeeded",
		       soak_op_names[op]);
	}

	if (c.vgem >= 0)
		close(c.vgem);
	if (c.tfd >= 0)
		close(c.tfd);	/* ion_test unloads at exit */
	ht_drop_pools();
	wait_totals(&t0);
	it_totals_back(&t0, "debugfs totals are back to the start");
	ht_drop_pools();
	mem1 = ht_meminfo("MemFree");
	tap_diag("MemFree %lld MiB at the start, %lld MiB at the end",
		 mem0 / (long long)MiB, mem1 / (long long)MiB);
	tap_ok(mem1 >= mem0 - (long long)MEMFREE_SLACK,
	       "MemFree is back to within %lu MiB of the start",
	       MEMFREE_SLACK / MiB);
	if (c.vgem >= 0)
		vgem_unload();
	return tap_exit();
}
