/* SPDX-License-Identifier: MIT */
/*
 * ion's tracepoints as guest tests read them: a tracefs instance of their
 * own with the ion events enabled, its text buffer read back, and the
 * events in it found by name and key=value fields (the TP_printk format of
 * kernel/include/trace/ion_trace.h).
 */
#ifndef ION_TRACE_UTIL_H
#define ION_TRACE_UTIL_H

#include <stddef.h>

/* An instance under tracefs's instances/: its directory. */
struct tr_inst {
	char dir[200];
};

/*
 * Where tracefs is: /sys/kernel/tracing (mounted there if it is not yet),
 * else /sys/kernel/debug/tracing; with ion's events (ion.ko loaded).  The
 * directory in @buf, or -errno: -ENOENT when the kernel has no tracefs or
 * ion has no events there.
 */
int tr_root(char *buf, size_t size);

/*
 * Has the kernel tracefs with events at all (whether ion's are there or
 * not)?  After tr_root() or tr_open() tried, which mount it if need be.
 */
int tr_kernel_has_events(void);

/* Create instance @name with every ion event enabled; 0 or -errno. */
int tr_open(struct tr_inst *t, const char *name);

/* Empty the instance's buffer; 0 or -errno. */
int tr_clear(struct tr_inst *t);

/* The instance's buffer as text (free() it), or NULL. */
char *tr_read(struct tr_inst *t);

/* Disable the events and remove the instance. */
void tr_close(struct tr_inst *t);

/*
 * The first line of @text from @from on that is event @event ("ion_alloc")
 * and has each of the NULL-terminated @fields ("size=4096") as a whole
 * field; a pointer to it, or NULL.
 */
const char *tr_find(const char *text, const char *event,
		    const char *const *fields);

/* Count such lines. */
int tr_count(const char *text, const char *event, const char *const *fields);

/* The value of field @key of @line in @val; 0 or -ENOENT. */
int tr_field(const char *line, const char *key, char *val, size_t size);

#endif /* ION_TRACE_UTIL_H */
