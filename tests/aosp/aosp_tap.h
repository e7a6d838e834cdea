/* SPDX-License-Identifier: MIT */
/*
 * TAP lines for the programs of tests/aosp/.  They are built against the
 * installed headers only (no -I into the tree), so they cannot use the test
 * library of tests/guest/lib/: this is its one function they need.
 */
#ifndef AOSP_TAP_H
#define AOSP_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int aosp_failed;

/* One TAP line for case @fmt; returns @cond. */
static inline int __attribute__((format(printf, 2, 3)))
aosp_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	fputs(cond ? "ok - " : "not ok - ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	aosp_failed += !cond;
	return cond;
}

#endif /* AOSP_TAP_H */
