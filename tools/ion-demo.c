// SPDX-License-Identifier: MIT
/*
 * ion-demo: a narrated tour of ion for `make demo`.
 *
 * One process allocates a buffer through /dev/ion, writes into it and
 * passes it as a dma-buf fd over a unix socket to a second process, which
 * imports it into its own ion client, reads the message and answers in
 * the same memory.  The debugfs views are shown while both hold the buffer
 * and again after everything is closed.  Every ion call goes through
 * libion's classic (handle ABI) functions.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ion/ion.h>

#define DEBUGFS "/sys/kernel/debug/ion"
#define BUF_SIZE (1024 * 1024)

static void say(const char *who, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(const char *who, const char *fmt, ...)
{
	va_list ap;

	printf("[%-8s %5d] ", who, getpid());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void die(const char *what)
{
	fprintf(stderr, "ion-demo: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* A libion call that failed with @err (-errno). */
static void check(int err, const char *what)
{
	if (err < 0) {
		errno = -err;
		die(what);
	}
}

static void show_file(const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");

	printf("    --- %s\n", path);
	if (!f) {
		printf("    (cannot open: %s)\n", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f))
		printf("    | %s", line);
	fclose(f);
	fflush(stdout);
}

static void show_debugfs(void)
{
	char path[512];
	struct dirent *e;
	DIR *d;

	show_file(DEBUGFS "/summary");
	show_file(DEBUGFS "/heaps/" ION_SYSTEM_HEAP_NAME);
	d = opendir(DEBUGFS "/clients");
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), DEBUGFS "/clients/%s", e->d_name);
		show_file(path);
	}
	if (d)
		closedir(d);
}

/* A one-byte message with room for one fd (SCM_RIGHTS). */
struct fd_msg {
	char data;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg;
};

static void fd_msg_init(struct fd_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->data = 'f';
	m->iov.iov_base = &m->data;
	m->iov.iov_len = 1;
	m->msg.msg_iov = &m->iov;
	m->msg.msg_iovlen = 1;
	m->msg.msg_control = m->u.buf;
	m->msg.msg_controllen = sizeof(m->u.buf);
}

static void send_fd(int sock, int fd)
{
	struct fd_msg m;
	struct cmsghdr *c;

	fd_msg_init(&m);
	c = CMSG_FIRSTHDR(&m.msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sock, &m.msg, 0) != 1)
		die("sendmsg");
}

static int recv_fd(int sock)
{
	struct fd_msg m;
	struct cmsghdr *c;
	int fd;

	fd_msg_init(&m);
	if (recvmsg(sock, &m.msg, 0) != 1)
		die("recvmsg");
	c = CMSG_FIRSTHDR(&m.msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		die("no fd received");
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Bracket CPU access (DMA_BUF_IOCTL_SYNC start or end). */
static void cpu_access(int fd, int start, unsigned int access)
{
	check(start ? ion_buffer_begin_cpu_access(fd, access) :
		      ion_buffer_end_cpu_access(fd, access),
	      "DMA_BUF_IOCTL_SYNC");
}

static void consumer(int sock)
{
	ion_user_handle_t handle;
	char *p;
	int ion, fd;

	ion = ion_open();
	check(ion, "open /dev/ion");
	fd = recv_fd(sock);
	say("consumer", "received dma-buf fd %d over the unix socket", fd);
	check(ion_import(ion, fd, &handle), "ION_IOC_IMPORT");
	say("consumer", "ION_IOC_IMPORT: my own client now holds handle %d",
	    handle);
	p = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	cpu_access(fd, 1, ION_CPU_RW);
	say("consumer", "read from the shared pages: \"%s\"", p);
	snprintf(p + 4096, 64, "hello back from %d", getpid());
	cpu_access(fd, 0, ION_CPU_RW);
	say("consumer", "wrote an answer into the same memory");
	if (write(sock, "d", 1) != 1 || read(sock, &(char){0}, 1) != 1)
		die("sync with producer");
	munmap(p, BUF_SIZE);
	check(ion_free(ion, handle), "ION_IOC_FREE");
	close(fd);
	ion_close(ion);
	say("consumer", "freed my handle, closed everything, exiting");
}

static void producer(int sock, pid_t child)
{
	ion_user_handle_t handle;
	char *p, c;
	int ion, share_fd, status;

	ion = ion_open();
	check(ion, "open /dev/ion");
	check(ion_alloc(ion, BUF_SIZE, 0, ION_HEAP_SYSTEM_MASK,
			ION_FLAG_CACHED, &handle), "ION_IOC_ALLOC");
	say("producer", "ION_IOC_ALLOC: 1 MiB, cached, from %s -> handle %d",
	    ION_SYSTEM_HEAP_NAME, handle);
	check(ion_share(ion, handle, &share_fd), "ION_IOC_SHARE");
	say("producer", "ION_IOC_SHARE: handle %d -> dma-buf fd %d",
	    handle, share_fd);
	p = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 share_fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	cpu_access(share_fd, 1, ION_CPU_WRITE);
	snprintf(p, 64, "hello from the producer, pid %d", getpid());
	cpu_access(share_fd, 0, ION_CPU_WRITE);
	say("producer", "wrote a message and sent the fd to pid %d", child);
	send_fd(sock, share_fd);
	if (read(sock, &c, 1) != 1)
		die("sync with consumer");
	say("producer", "both processes hold the buffer now; debugfs says:");
	show_debugfs();
	cpu_access(share_fd, 1, ION_CPU_READ);
	say("producer", "the consumer answered: \"%s\"", p + 4096);
	cpu_access(share_fd, 0, ION_CPU_READ);
	if (write(sock, "k", 1) != 1)
		die("sync with consumer");
	waitpid(child, &status, 0);
	munmap(p, BUF_SIZE);
	close(share_fd);
	check(ion_free(ion, handle), "ION_IOC_FREE");
	ion_close(ion);
	say("producer", "consumer gone, handle freed, fds closed; debugfs:");
	show_file(DEBUGFS "/summary");
}

int main(void)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(sv[0]);
		consumer(sv[1]);
		return 0;
	}
	close(sv[1]);
	producer(sv[0], pid);
	return 0;
}
