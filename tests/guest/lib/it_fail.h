/* SPDX-License-Identifier: MIT */
/*
 * The knobs of ion's fault injection, /sys/kernel/debug/ion/fail/<step>/
 * (Documentation/debugfs.rst, "Fault injection"), and of the kernel's
 * (/sys/kernel/debug/failslab/, fail_page_alloc/).
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

/*
 * Write @val to, or read a number from, any fault-injection knob given
 * by its path (e.g. /sys/kernel/debug/failslab/times); as above.
 */
int it_knob_write(const char *path, long long val);
long long it_knob_read(const char *path);

#endif /* ION_IT_FAIL_H */
