// SPDX-License-Identifier: MIT
/*
 * libion: the ioctl helper every call goes through.
 */
#include <errno.h>
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
