/* SPDX-License-Identifier: MIT */
/*
 * The knobs of ion's fault injection, /sys/kernel/debug/ion/fail/<step>/
 * (Documentation/debugfs.rst, "Fault injection").
 */
#ifndef ION_IT_FAIL_H
#define ION_IT_FAIL_H

#define IT_FAIL_DIR	"/sys/kernel/debug/ion/fail/"

/*
 * Write @val to @step's @knob (times, interval, probability, hits);
 * 0 or -errno.
 */
int it_fail_set(const char *step, const char *knob, long long val);

/* Read @step's @knob, or -1. */
long long it_fail_get(const char *step, const char *knob);

#endif /* ION_IT_FAIL_H */
