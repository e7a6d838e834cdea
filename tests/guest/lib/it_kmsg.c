// SPDX-License-Identifier: MIT
/*
 * The one reader of the kernel log (/dev/kmsg) in the guest tests: one
 * record per read(), EAGAIN at the end, EPIPE when records were
 * overwritten since the last read (the reader then goes on with the
 * oldest one left).  The rig clears the syslog buffer between programs,
 * not these records.
 */
#include "ion_test_util.h"

int it_kmsg_open(int from_start)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (!from_start)
		lseek(fd, 0, SEEK_END);
	return fd;
}

int it_kmsg_next(int fd, char *rec, size_t size)
{
	ssize_t n;

	if (fd < 0)
		return 0;
	do {
		n = read(fd, rec, size - 1);
	} while (n < 0 && (errno == EPIPE || errno == EINTR));
	if (n <= 0)
		return 0;
	rec[n] = 0;
	return (int)n;
}

const char *it_kmsg_text(const char *rec)
{
	const char *msg = strchr(rec, ';');

	return msg ? msg + 1 : rec;
}

int it_kmsg_grep(int fd, const char *const *needles)
{
	char rec[IT_KMSG_REC];
	int n = 0, i;

	if (fd < 0)
		return -1;
	while (it_kmsg_next(fd, rec, sizeof(rec))) {
		for (i = 0; needles[i]; i++) {
			if (!strstr(rec, needles[i]))
				continue;
			if (n++ < 5)
				tap_diag("kernel: %.*s",
					 (int)strcspn(rec, "\n"), rec);
			break;
		}
	}
	return n;
}

int it_kmsg_find(int fd, const char *what, char *line, size_t size)
{
	char rec[IT_KMSG_REC];
	int found = 0;

	while (it_kmsg_next(fd, rec, sizeof(rec))) {
		if (!found && strstr(rec, what)) {
			it_copy_line(line, size, it_kmsg_text(rec));
			found = 1;
		}
	}
	return found;
}
