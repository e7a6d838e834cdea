/* SPDX-License-Identifier: MIT */
/*
 * Minimal TAP output for ion's guest tests.
 *
 * A guest test program prints one line per case:
 *   ok - <case name>
 *   not ok - <case name>
 *   ok - <case name> # SKIP <reason>
 * and diagnostics as lines starting with "# ".  The host harness prefixes
 * each case with the program's name and numbers them.  A program that
 * exits non-zero, crashes, times out or prints no case is a failure.
 */
#ifndef ION_TESTS_TAP_H
#define ION_TESTS_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_failed;

static inline void tap_diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

/* Report one case; returns cond so callers can chain. */
static inline int tap_ok(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline int tap_ok(int cond, const char *fmt, ...)
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

static inline void tap_skip(const char *name, const char *reason)
{
	printf("ok - %s # SKIP %s\n", name, reason);
	fflush(stdout);
}

/* Assert an errno-returning call: expect == 0 means success. */
#define tap_errno(ret, expect, ...)					\
	({								\
		int __e = (ret) < 0 ? errno : 0;			\
		if (__e != (expect))					\
			tap_diag("got %s (%d), expected %s (%d)",	\
				 __e ? strerror(__e) : "success", __e,	\
				 (expect) ? strerror(expect) : "success", \
				 (expect));				\
		tap_ok(__e == (expect), __VA_ARGS__);			\
	})

static inline int tap_exit(void)
{
	return tap_failed ? 1 : 0;
}

#endif /* ION_TESTS_TAP_H */
