// SPDX-License-Identifier: MIT
/*
 * TAP output of ion's guest tests (tap.h): one line per case, "# "
 * diagnostics, and the exit status from the cases that failed.
 */
#include "tap.h"

/* Cases that failed so far, in this process (a forked child has its own). */
int tap_failed;

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	fputs(cond ? "ok - " : "not ok - ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

void tap_skip(const char *name, const char *reason)
{
	printf("ok - %s # SKIP %s\n", name, reason);
	fflush(stdout);
}

int tap_exit(void)
{
	return tap_failed ? 1 : 0;
}
