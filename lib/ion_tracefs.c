// SPDX-License-Identifier: MIT
/*
 * libion internals: ion's tracepoints through a tracefs instance
 * (ion_tracefs_priv.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ion_tracefs_priv.h"

int ion_tracefs_write(const char *dir, const char *file, const char *val)
{
	char path[320];
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

static int ion_tracefs_has_ion(const char *root)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/events/ion", root);
	return !stat(path, &st);
}

const char *ion_tracefs_root(void)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	unsigned int i;

	if (!ion_tracefs_has_ion(roots[0]))
		mount("tracefs", roots[0], "tracefs", 0, NULL);
	for (i = 0; i < 2; i++)
		if (ion_tracefs_has_ion(roots[i]))
			return roots[i];
	return NULL;
}

int ion_tracefs_instance(const char *name, char *dir, size_t size)
{
	const char *root = ion_tracefs_root();

	if (!root)
		return -ENOENT;
	if (snprintf(dir, size, "%s/instances/%s", root, name) >= (int)size)
		return -ENAMETOOLONG;
	rmdir(dir);
	return mkdir(dir, 0755) ? -errno : 0;
}

int ion_tracefs_enable(const char *dir, int on)
{
	return ion_tracefs_write(dir, "events/ion/enable", on ? "1" : "0");
}

int ion_tracefs_instance_remove(const char *dir)
{
	ion_tracefs_enable(dir, 0);
	return rmdir(dir) ? -errno : 0;
}
