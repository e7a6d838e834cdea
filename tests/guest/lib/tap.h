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

/* Cases that failed so far in this process. */
extern int tap_failed;

/* A "# " diagnostic line. */
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Report one case; returns cond so callers can chain. */
int tap_ok(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void tap_skip(const char *name, const char *reason);

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

/* The exit status: 1 when a case failed, else 0. */
int tap_exit(void);

#endif /* ION_TESTS_TAP_H */
