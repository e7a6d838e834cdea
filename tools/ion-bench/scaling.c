// SPDX-License-Identifier: MIT
/*
 * ion-bench: the scaling op (one 4 KiB alloc/free with many buffers live,
 * also beside a spinning or debugfs-reading process) and the untimed
 * directmap op (DirectMap4k over uncached rounds).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/udmabuf.h>
#include <ion/ion.h>

#include "ion-bench.h"

static const unsigned int live_levels[] = { 1, 1000, 10000, 100000 };

static int op_alloc_free_plain(struct impl *im, size_t size, struct sample *s)
{
	struct buf b;
	uint64_t t0 = now_ns();
	int err = buf_alloc(im, size, &b);

	if (err)
		return err;
	buf_free(&b);
	s->ns = now_ns() - t0;
	return 0;
}

#define FILL_LIMIT_NS	45000000000ULL	/* fill time allowed per impl */
#define HEADROOM	16		/* buffers freed when memory ran out */

/* A child's whole life: read @path from start to end, over and over. */
static void read_forever(const char *path)
{
	static char chunk[65536];

	for (;;) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			_exit(1);
		while (read(fd, chunk, sizeof(chunk)) > 0)
			;
		close(fd);
	}
}

static volatile unsigned long spins;

/*
 * Issue 17's debugfs row: with @have buffers live, the scaling group once
 * more while a child only spins ("<impl>+spin") and once while a child
 * reads the heap's debugfs file, which walks the buffer list whose lock
 * the allocation path takes ("<impl>+dfsread"); both keep the other CPU
 * busy, so only the reads differ.  The report compares their p99s.
 */
static void run_scaling_reader(struct impl *im, unsigned int have)
{
	static const char *const suffix[2] = { "+spin", "+dfsread" };
	static struct impl twin[2];

	for (int k = 0; k < 2; k++) {
		size_t n = strlen(im->name);
		unsigned int nm = 0;
		pid_t pid;

		twin[k] = *im;
		if (n + strlen(suffix[k]) >= sizeof(twin[k].name))
			return;
		memcpy(twin[k].name + n, suffix[k], strlen(suffix[k]) + 1);
		pid = fork();
		if (pid < 0) {
			progress("%s: fork: %s", twin[k].name, strerror(errno));
			return;
		}
		if (pid == 0) {
			if (k)
				read_forever(im->pool_file);
			for (;;)
				spins++;
		}
		progress("%s scaling: %u live", twin[k].name, have);
		add_member(&nm, &twin[k], "scaling", op_alloc_free_plain);
		run_group(nm, 4 * KiB, have, budget_ns);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static void run_scaling_one(struct impl *im, struct buf *live)
{
	unsigned int have = 0, made, nm, nlev = sizeof(live_levels) / sizeof(live_levels[0]);
	uint64_t t0 = now_ns();
	const char *why = NULL;
	int err = 0;

	for (unsigned int l = 0; l < nlev && live_levels[l] <= max_live; l++) {
		unsigned int want = live_levels[l];

		while (have < want && !why) {
			if (now_ns() - t0 > FILL_LIMIT_NS)
				why = "fill time limit";
			else if ((err = buf_alloc(im, 4 * KiB, &live[have])))
				why = strerror(-err);
			else
				have++;
		}
		if (why) {
			made = have;
			/* Out of memory or fds: leave room for the timed op. */
			for (unsigned int k = 0; err && k < HEADROOM && have > 1; k++)
				buf_free(&live[--have]);
			progress("%s scaling: %u of %u buffers made live (%s), measured at %u",
				 im->name, made, want, why, have);
			printf("@skip\t%s\tscaling\t%lu\tlive %u not reached: %u made (%s), measured at %u\n",
			       im->name, 4 * KiB, want, made, why, have);
		}
		nm = 0;
		add_member(&nm, im, "scaling", op_alloc_free_plain);
		run_group(nm, 4 * KiB, have, budget_ns);
		if (why)
			break;
	}
	if (!strcmp(im->name, "ion-system"))
		run_scaling_reader(im, have);
	progress("%s scaling: freeing %u buffers", im->name, have);
	while (have)
		buf_free(&live[--have]);
}

void run_scaling(void)
{
	struct rlimit rl = { max_live + 1024, max_live + 1024 };
	struct buf *live;
	int fd;

	if (!selected(only_ops, "scaling"))
		return;
	progress("op scaling");
	if (setrlimit(RLIMIT_NOFILE, &rl))
		progress("setrlimit(RLIMIT_NOFILE, %u): %s", max_live + 1024,
			 strerror(errno));
	fd = open("/proc/sys/vm/max_map_count", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1000000\n", 8) != 8)
			progress("vm.max_map_count: %s", strerror(errno));
		close(fd);
	}
	live = calloc(max_live + 1, sizeof(*live));
	if (!live) {
		progress("scaling: out of memory");
		return;
	}
	for (int i = 0; i < nimpls; i++)
		if (!impls[i].big_cold_only && !impls[i].in_cgroup)
			run_scaling_one(&impls[i], live);
	free(live);
}

/* ---- directmap: the kernel's linear map under uncached buffers ----------- */

unsigned int dm_rounds = 10000;	/* -R */

/* DirectMap4k of /proc/meminfo in kB, or -1 (not x86). */
static long long directmap4k_kb(void)
{
	char line[128];
	long long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "DirectMap4k:", 12))
			v = strtoll(line + 12, NULL, 10);
	fclose(f);
	return v;
}

/*
 * Issue 25's row: dm_rounds uncached alloc/free rounds of random sizes
 * from 4 KiB to 8 MiB (four live, fixed seed), DirectMap4k before, after
 * and after the pools drained: "@directmap impl rounds before_kb after_kb
 * drained_kb failed".  Untimed; the first uncached implementation only.
 */
void run_directmap(void)
{
	struct buf live[4] = { { .fd = -1 }, { .fd = -1 },
				{ .fd = -1 }, { .fd = -1 } };
	long long before, after, drained;
	unsigned int seed = 25, failed = 0;
	struct impl *im = NULL;

	if (!selected(only_ops, "directmap"))
		return;
	for (int i = 0; i < nimpls && !im; i++)
		if (!strcmp(impls[i].name, "ion-system-uncached"))
			im = &impls[i];
	before = directmap4k_kb();
	if (!im || before < 0) {
		printf("@skip\tion-system-uncached\tdirectmap\t0\t%s\n",
		       im ? "no DirectMap4k" : "not selected");
		return;
	}
	progress("op directmap: %u rounds", dm_rounds);
	for (unsigned int r = 0; r < dm_rounds; r++) {
		struct buf *b = &live[r % 4];
		unsigned int shift = 12 + rand_r(&seed) % 12;
		size_t len = (size_t)1 << shift;

		len += (size_t)(rand_r(&seed) % (1U << (shift - 12))) * PAGE;
		if (len > 8 * MiB)
			len = 8 * MiB;
		if (b->fd >= 0)
			buf_free(b);
		b->fd = -1;
		if (buf_alloc(im, len, b))
			failed++;
	}
	for (int i = 0; i < 4; i++)
		if (live[i].fd >= 0)
			buf_free(&live[i]);
	wait_quiet();
	after = directmap4k_kb();
	drain_pools();
	drained = directmap4k_kb();
	printf("@directmap\t%s\t%u\t%lld\t%lld\t%lld\t%u\n", im->name,
	       dm_rounds, before, after, drained, failed);
}
