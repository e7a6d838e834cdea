// SPDX-License-Identifier: MIT
/*
 * fuzz_ioctl: the main run with ion's fault injection on
 * (/sys/kernel/debug/ion/fail/, Documentation/debugfs.rst): with
 * --fail-percent N (or $ION_FUZZ_FAIL_PERCENT), every step that the
 * fuzzer's calls reach (alloc, export, attach, map, refill, uncached)
 * fails with chance N %, and each call's expected errnos already allow the ENOMEM that
 * gives.  The failures injected are counted and reported; the knobs are
 * set back to 0 before the checks that need allocations to work.
 */
#include "fuzz_ioctl.h"
#include "it_fail.h"

static const char *const inject_steps[] = { "alloc", "export", "attach",
					    "map", "refill", "uncached" };

int fail_percent;

int inject_start(void)
{
	unsigned int i;
	int ok = 1;

	if (!fail_percent)
		return 1;
	for (i = 0; i < IT_ARRAY_SIZE(inject_steps); i++)
		ok &= !it_fail_set(inject_steps[i], "hits", 0) &&
		      !it_fail_set(inject_steps[i], "probability",
				      fail_percent);
	tap_diag("fault injection: alloc, export, attach, map, refill and "
		 "uncached fail with probability %d %%", fail_percent);
	return ok;
}

long inject_stop(void)
{
	long long hits, total = 0;
	unsigned int i;

	if (!fail_percent)
		return 0;
	for (i = 0; i < IT_ARRAY_SIZE(inject_steps); i++) {
		it_fail_set(inject_steps[i], "probability", 0);
		hits = it_fail_get(inject_steps[i], "hits");
		tap_diag("fault injection: %s failed %lld times",
			 inject_steps[i], hits);
		total += hits > 0 ? hits : 0;
	}
	return total;
}
