// SPDX-License-Identifier: MIT
/*
 * A request larger than the heap can ever give (3 GiB in a 2 GiB guest)
 * fails with ENOMEM promptly, on every heap and through both ABIs, without
 * waking the OOM killer.  Each request runs in a child so that an OOM kill
 * or a hang shows as a failed case, not as a dead test program.
 */
#include <signal.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>

#include "ion_test_util.h"

#define HUGE		(3ULL << 30)
#define PROMPT_MS	5000	/* "promptly", generous for a TCG guest */
#define HANG_S		120

struct result {
	int err;		/* positive errno, 0 for success */
	long long ms;
};

static void child(int out, unsigned long long len, unsigned int mask,
		  int legacy)
{
	struct result r;
	long long t0;
	int ion = it_open(), ret;

	t0 = it_now_ms();
	ret = ion < 0 ? ion : it_alloc_abi(ion, len, mask, 0, legacy);
	r.ms = it_now_ms() - t0;
	r.err = ret < 0 ? -ret : 0;
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(3);
	_exit(0);	/* exiting frees whatever an (unexpected) success gave */
}

/* Run one request in a child: its result, or err -1 if it died. */
static void run_child(unsigned long long len, unsigned int mask, int legacy,
		      struct result *r, int *status)
{
	int p[2];
	pid_t pid;

	r->err = -1;
	r->ms = -1;
	*status = 0;
	if (pipe(p))
		return;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		alarm(HANG_S);
		child(p[1], len, mask, legacy);
	}
	close(p[1]);
	if (read(p[0], r, sizeof(*r)) != sizeof(*r))
		r->err = -1;
	close(p[0]);
	waitpid(pid, status, 0);
	if (WIFSIGNALED(*status))
		tap_diag("child killed by signal %d", WTERMSIG(*status));
}

static void huge_case(const char *name, unsigned int mask, int legacy)
{
	long long oom0 = it_vmstat("oom_kill"), oom1;
	struct result r;
	int status;

	run_child(HUGE, mask, legacy, &r, &status);
	oom1 = it_vmstat("oom_kill");
	tap_diag("%s: %s after %lld ms", name,
		 r.err > 0 ? strerror(r.err) : r.err ? "no answer" : "success",
		 r.ms);
	tap_ok(r.err == ENOMEM, "%s: 3 GiB is ENOMEM", name);
	tap_ok(r.err >= 0 && r.ms >= 0 && r.ms < PROMPT_MS,
	       "%s: answered within %d ms", name, PROMPT_MS);
	tap_ok(WIFEXITED(status) && oom0 >= 0 && oom1 == oom0,
	       "%s: no OOM kill", name);
}

/*
 * Nearly all of RAM (9/10 of MemTotal) from the system heap: it may
 * succeed or fail with ENOMEM, but must not call the OOM killer or hang.
 */
static void near_total_case(unsigned long long total)
{
	unsigned long long len = total / 10 * 9 & ~0xfffULL;
	long long oom0 = it_vmstat("oom_kill"), oom1;
	struct result r;
	int status;

	run_child(len, ION_HEAP_SYSTEM_MASK, 0, &r, &status);
	oom1 = it_vmstat("oom_kill");
	tap_diag("%llu MiB from system: %s after %lld ms", len >> 20,
		 r.err > 0 ? strerror(r.err) : r.err ? "no answer" : "success",
		 r.ms);
	tap_ok(r.err == 0 || r.err == ENOMEM,
	       "system: 9/10 of RAM succeeds or is ENOMEM");
	tap_ok(WIFEXITED(status) && oom0 >= 0 && oom1 == oom0,
	       "system: 9/10 of RAM without an OOM kill");
}

int main(void)
{
	const struct it_heap *k;
	struct it_heaps hs;
	struct sysinfo si;
	struct it_totals t0;
	int ion = it_setup(&hs);
	unsigned int i;
	char name[96];

	if (sysinfo(&si) || (unsigned long long)si.totalram * si.mem_unit >= HUGE) {
		tap_skip("3 GiB allocation", "machine has 3 GiB of RAM or more");
		return 0;
	}
	it_totals_get(&t0);
	for (i = 0; (k = it_known_next(&hs, &i)); i++) {
		snprintf(name, sizeof(name), "%s ALLOC", k->name);
		huge_case(name, 1U << k->id, 0);
		snprintf(name, sizeof(name), "%s ALLOC_LEGACY", k->name);
		huge_case(name, 1U << k->id, 1);
	}
	huge_case("all heaps ALLOC", it_heaps_mask(&hs), 0);
	near_total_case((unsigned long long)si.totalram * si.mem_unit);
	{
		long long failures;
		struct it_dfs d;

		failures = -1;
		if (!it_dfs_load_heap(&d, ION_SYSTEM_HEAP_NAME)) {
			failures = it_dfs_num(&d, "alloc_failures");
			it_dfs_free(&d);
		}
		tap_diag("system heap alloc_failures: %lld", failures);
	}
	/* the memory is usable afterwards */
	{
		int fd = it_alloc_fd(ion, 64 << 20, ION_HEAP_SYSTEM_MASK, 0);

		it_expect(fd, 0, "64 MiB from system after the refusals");
		if (fd >= 0)
			close(fd);
	}
	close(ion);
	it_totals_back(&t0, "nothing left allocated");
	return tap_exit();
}
