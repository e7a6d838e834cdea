/* SPDX-License-Identifier: MIT */
/*
 * libion internals for ion's own tools and tests: ion's tracepoints
 * (event group "ion") through tracefs, in an instance of the caller's own
 * so that the system's other tracing is left alone.  Not part of libion's
 * ABI: not installed, not in libion.map, hidden in libion.so; the tools
 * link libion.a.
 */
#ifndef ION_TRACEFS_PRIV_H
#define ION_TRACEFS_PRIV_H

#include <stddef.h>

#define ION_TRACEFS_HIDDEN	__attribute__((visibility("hidden")))

/*
 * Where tracefs has ion's events: /sys/kernel/tracing (tracefs mounted
 * there first if it is not), else /sys/kernel/debug/tracing; NULL when
 * neither has them (no tracefs, ion.ko not loaded, not root).
 */
ION_TRACEFS_HIDDEN const char *ion_tracefs_root(void);

/* Write @val to @dir/@file (truncating it); 0 or -errno. */
ION_TRACEFS_HIDDEN int ion_tracefs_write(const char *dir, const char *file,
					 const char *val);

/*
 * Create instance @name (a stale one of that name is removed first) and
 * put its directory in @dir; ion's events are left off.  0 or -errno
 * (-ENOENT: no tracefs with ion's events).
 */
ION_TRACEFS_HIDDEN int ion_tracefs_instance(const char *name, char *dir,
					    size_t size);

/* Switch ion's events of the instance at @dir on or off; 0 or -errno. */
ION_TRACEFS_HIDDEN int ion_tracefs_enable(const char *dir, int on);

/* Switch the events off and remove the instance; 0 or -errno. */
ION_TRACEFS_HIDDEN int ion_tracefs_instance_remove(const char *dir);

#endif /* ION_TRACEFS_PRIV_H */
