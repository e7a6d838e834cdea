// SPDX-License-Identifier: MIT
/*
 * Passing a dma-buf fd to another process over a unix socket
 * (SCM_RIGHTS), with a message beside it.
 */
#include <sys/socket.h>

#include "ion_test_util.h"

int it_send_fd(int sock, int fd, const void *data, size_t len, int flags)
{
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	memset(&u, 0, sizeof(u));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, flags) == (ssize_t)len ? 0 :
	       (errno ? -errno : -EIO);
}

int it_recv_fd(int sock, void *data, size_t len, int flags)
{
	struct iovec iov = { .iov_base = data, .iov_len = len };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	int fd;

	memset(&u, 0, sizeof(u));
	if (recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC) != (ssize_t)len)
		return -EIO;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}
