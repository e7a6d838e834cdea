// SPDX-License-Identifier: MIT
/*
 * ionctl alloc: allocate buffers through libion (/dev/ion's fd ABI) and
 * hold them until interrupted.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ionctl.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/*
 * Room for @count more open files: raise RLIMIT_NOFILE's soft limit, and
 * the hard one where allowed (root).  Returns 0 or -errno.
 */
static int room_for_fds(unsigned long count)
{
	struct rlimit rl;
	rlim_t want = count + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= want)
		return 0;
	rl.rlim_cur = want;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want)
		rl.rlim_max = want;
	return setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0;
}

static void print_alloc(const char *heap, unsigned long long size, int cached,
			const int *fds, unsigned long count)
{
	struct stat st;

	fstat(fds[0], &st);
	if (json) {
		printf("{\"heap\": ");
		json_str(heap);
		printf(", \"size\": %llu, \"cached\": %s, \"count\": %lu, "
		       "\"fd\": %d, \"ino\": %lu, \"pid\": %d}\n", size,
		       cached ? "true" : "false", count, fds[0],
		       (unsigned long)st.st_ino, (int)getpid());
	} else if (count == 1) {
		printf("allocated %llu bytes from %s (%s): dma-buf fd %d, "
		       "ino %lu\n", size, heap, cached ? "cached" : "uncached",
		       fds[0], (unsigned long)st.st_ino);
	} else {
		printf("allocated %lu buffers of %llu bytes from %s (%s): "
		       "dma-buf fds %d-%d, first ino %lu\n", count, size, heap,
		       cached ? "cached" : "uncached", fds[0], fds[count - 1],
		       (unsigned long)st.st_ino);
	}
}

static void alloc_failed(const char *heap, unsigned long long size, int err,
			 unsigned long made, unsigned long count)
{
	char which[64] = "";

	if (count > 1)
		snprintf(which, sizeof(which), " (buffer %lu of %lu)",
			 made + 1, count);
	fprintf(stderr, "ionctl: allocating %llu bytes from %s: %s%s\n", size,
		heap, strerror(-err), which);
}

static void hold_until_signal(unsigned long count)
{
	sigset_t block, old;

	/* Blocked until sigsuspend(): none lands between the test and it. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!json)
		printf("holding %s until interrupted (pid %d)\n",
		       count > 1 ? "them" : "it", getpid());
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

int cmd_alloc(const char *heap, unsigned long long size, int cached,
		     unsigned long count, int hold)
{
	struct ion_device *dev;
	unsigned long made = 0;
	unsigned int id;
	int fd, rc = EXIT_FAIL, *fds;

	if (open_dev(&dev))
		return EXIT_NOION;
	if (ion_device_find_heap(dev, heap, &id)) {
		fprintf(stderr, "ionctl: no heap named '%s' (see ionctl heaps)\n",
			heap);
		ion_device_close(dev);
		return EXIT_USAGE;
	}
	fds = calloc(count, sizeof(*fds));
	if (!fds || room_for_fds(count)) {
		fprintf(stderr, "ionctl: no room for %lu buffers' fds\n", count);
		goto out;
	}
	for (made = 0; made < count; made++) {
		fd = size > SIZE_MAX ? -ENOMEM :
		     ion_device_alloc(dev, (size_t)size, 1U << id,
				      cached ? ION_FLAG_CACHED : 0);
		if (fd < 0) {
			alloc_failed(heap, size, fd, made, count);
			goto out;
		}
		fds[made] = fd;
	}
	print_alloc(heap, size, cached, fds, count);
	fflush(stdout);
	if (hold)
		hold_until_signal(count);
	rc = EXIT_OK;
out:
	while (made)
		close(fds[--made]);
	free(fds);
	ion_device_close(dev);
	return rc;
}
