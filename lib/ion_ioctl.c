// SPDX-License-Identifier: MIT
/*
 * libion: the ioctl helper every call goes through, and the other small
 * helpers the files share (errno, a sorted directory walk).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "ion_priv.h"

int ion_neg_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

int ion_xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	if (fd < 0)
		return -EBADF;
	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? ion_neg_errno() : 0;
}

int ion_dir_foreach(const char *dir, const char *prefix,
		    int (*fn)(const char *name, void *data), void *data)
{
	struct dirent **names;
	int i, n, ret = 0;

	if (!fn)
		return -EINVAL;
	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		return ion_neg_errno();
	for (i = 0; i < n; i++) {
		const char *e = names[i]->d_name;

		if (!ret && e[0] != '.' &&
		    (!prefix || !strncmp(e, prefix, strlen(prefix))))
			ret = fn(e, data);
		free(names[i]);
	}
	free(names);
	return ret;
}
