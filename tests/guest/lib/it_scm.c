// SPDX-License-Identifier: MIT
/*
 * Passing a dma-buf fd to another process over a unix socket
 * (SCM_RIGHTS), with a message beside it.
 */
#include <sys/socket.h>

#include "ion_test_util.h"

/* One message: @len bytes at @data and room for one fd. */
struct it_scm_msg {
	struct iovec iov;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg;
};

static void it_scm_init(struct it_scm_msg *m, void *data, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->iov.iov_base = data;
	m->iov.iov_len = len;
	m->msg.msg_iov = &m->iov;
	m->msg.msg_iovlen = 1;
	m->msg.msg_control = m->u.buf;
	m->msg.msg_controllen = sizeof(m->u.buf);
}

int it_send_fd(int sock, int fd, const void *data, size_t len, int flags)
{
	struct it_scm_msg m;
	struct cmsghdr *cm;

	it_scm_init(&m, (void *)data, len);
	cm = CMSG_FIRSTHDR(&m.msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m.msg, flags) == (ssize_t)len ? 0 :
	       (errno ? -errno : -EIO);
}

int it_recv_fd(int sock, void *data, size_t len, int flags)
{
	struct it_scm_msg m;
	struct cmsghdr *cm;
	int fd;

	it_scm_init(&m, data, len);
	if (recvmsg(sock, &m.msg, flags | MSG_CMSG_CLOEXEC) != (ssize_t)len)
		return -EIO;
	cm = CMSG_FIRSTHDR(&m.msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}
