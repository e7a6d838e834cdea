// SPDX-License-Identifier: MIT
/*
 * ion-bench: ion's heaps against their peers, in one boot (issue 7).
 *
 * Implementations (each one that exists in this boot):
 *   ion-<heap>          every heap HEAP_QUERY lists, through /dev/ion's fd
 *                       ABI, ION_FLAG_CACHED (ion-system, ion-system-contig,
 *                       ion-carveout, ion-dma, ...)
 *   ion-system-uncached the system heap without ION_FLAG_CACHED
 *   ion-<x>-dmaheap     /dev/dma_heap/ion-<x> (ion's dma-heap nodes; only
 *                       ion-system-dmaheap unless -i names others)
 *   dma_heap-system     mainline's /dev/dma_heap/system, the peer
 *   udmabuf             memfd + F_SEAL_SHRINK + UDMABUF_CREATE
 *   anon                anonymous mmap, every page touched
 *   memset              memset of an already mapped buffer (the limit)
 *   memset-stosb        the same with "rep stosb", as the kernel clears pages
 *
 * Ops: alloc_free_cold, alloc_free_warm, alloc_map_touch, scaling (with,
 * for ion's heaps, "<impl>+spin" and "<impl>+dfsread" rows at the most
 * buffers live: another process spins, or reads the heap's debugfs file),
 * memset, directmap (untimed: DirectMap4k over uncached rounds,
 * "@directmap"), bounce (untimed, only when -o names it: swiotlb bytes
 * bounced for QEMU's edu, "@bounce", tools/ion-bench/bounce.c);
 * see Documentation/bench.md for what each one times.
 *
 * Helper CPUs: the system heap's helper kworkers (ion.ko's parameter
 * parallel_helpers) are set explicitly, whatever the module's default:
 * every row runs with them off (0), and alloc_free_cold of buffers of
 * more than one chunk (> 1 MiB) runs once more with them on, as
 * "<impl>+helpers" (-H N helpers, default 3; by default ion-system's
 * only).  The parameter is restored at exit.
 *
 * Memory cgroups: ion-system-memcg is ion-system run from a child cgroup
 * (/sys/fs/cgroup/ion-bench) with ion.ko's memcg_charge on, so its
 * buffers are charged to that cgroup and it reuses only that cgroup's
 * pooled chunks; ion-system-memcg-off is the same with memcg_charge off.
 * They run alloc_free_cold and alloc_free_warm only, side by side, and
 * "@mpair" rows give the paired ratio of the first to the second (issue
 * 19's cost).  The bench moves itself into the cgroup, and sets the
 * parameter, before each of their runs (untimed), and back after; the
 * parameter is restored at exit.
 *
 * Tracepoints: ion-system+trace is ion-system with every ion event
 * enabled (in a tracefs instance of the bench's own, "ion-bench", whose
 * buffer records them), alloc_free_cold and alloc_free_warm only, paired
 * with ion-system in the same rounds ("@mpair" rows: traced over not).
 * The events are switched on before each of its runs and off after
 * (untimed), and the instance is removed at exit.
 *
 * The auto heap: ion-auto (delayed allocation: alloc_free exports a
 * buffer with no memory, alloc_map_touch pays the first use) is paired
 * with ion-system in every op ("@mpair" rows: auto over system).
 *
 * Every ion and dma-heap call goes through libion, and every debugfs read
 * through its reader (udmabuf is not ion's: its ioctl stays here).
 *
 * Output on stdout: progress lines "# ...", one header line and one
 * tab-separated row per case (impl op size live median_ns p99_ns runs),
 * "@wait" rows (time the warm op waited for background work), "@mpair"
 * rows (charging on over off, see above), "@helped"
 * rows (bytes that helper CPUs allocated and zeroed for ion), "@skip"
 * lines (a case that could not run, and why), "@bounce" rows (the
 * bounce op) and "@done" at the end.
 *
 * This file holds the options and main; the parts are in
 * tools/ion-bench/, one responsibility each (ion-bench.h lists them).
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
#include "ion-bench/ion-bench.h"

uint64_t budget_ns = 1000000000ULL;
/* The cold group's: its runs are few and slow (see drain_pools()). */
uint64_t cold_budget_ns = 3000000000ULL;
int dump_samples;	/* -S: every run's time as an @sample row */
const char *only_impls, *only_ops;
size_t sizes[MAX_SIZES] = { 4 * KiB, 64 * KiB, 1 * MiB, 8 * MiB, 64 * MiB };
unsigned int nsizes = 5;
unsigned int max_live = 100000;
static int edu_bits = 28;	/* -E: ion_test's edu_dma_bits for bounce */


uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void progress(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void sleep_ns(uint64_t ns)
{
	struct timespec ts = { ns / 1000000000ULL, ns % 1000000000ULL };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Is @name in the comma-separated @list (NULL: everything is)? */
int selected(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	if (!list)
		return 1;
	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

/* ---- main -------------------------------------------------------------------- */

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end == 'K' || *end == 'k')
		v *= KiB;
	else if (*end == 'M' || *end == 'm')
		v *= MiB;
	return v;
}

static const char usage[] =
"usage: ion-bench [-b MS] [-c MS] [-i IMPL,...] [-o OP,...] [-s SIZE,...]\n"
"                 [-E BITS] [-H N] [-L N] [-R N] [-S]\n"
"  -b MS    time budget per case and implementation in ms (default\n"
"           1000); at least 7 runs each\n"
"  -c MS    the same for alloc_free_cold and memset (default 3000)\n"
"  -i LIST  only these implementations (names as in the output)\n"
"  -o LIST  only these ops (alloc_free_cold, alloc_free_warm,\n"
"           alloc_map_touch, scaling, memset, directmap; bounce only\n"
"           when named)\n"
"  -s LIST  sizes (4K,64K,1M,8M,64M)\n"
"  -H N     parallel_helpers of the +helpers rows (default 3; 0: none);\n"
"           every other row runs with 0\n"
"  -L N     scaling: stop at N live buffers (default 100000)\n"
"  -R N     directmap: N uncached rounds (default 10000)\n"
"  -S       also print every run's time (@sample rows, in run order)\n"
"  -E BITS  bounce: edu's DMA mask for ion_test when it loads it (28)\n";

int main(int argc, char **argv)
{
	uint64_t t0 = now_ns();
	struct utsname u;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "b:c:i:o:s:E:H:L:R:Sh")) != -1) {
		switch (c) {
		case 'b':
			budget_ns = strtoull(optarg, NULL, 10) * 1000000ULL;
			break;
		case 'c':
			cold_budget_ns = strtoull(optarg, NULL, 10) * 1000000ULL;
			break;
		case 'i':
			only_impls = optarg;
			break;
		case 'o':
			only_ops = optarg;
			break;
		case 's':
			nsizes = 0;
			for (char *t = strtok(optarg, ","); t && nsizes < MAX_SIZES;
			     t = strtok(NULL, ","))
				sizes[nsizes++] = parse_size(t);
			break;
		case 'H':
			helpers_on = atoi(optarg);
			break;
		case 'L':
			max_live = strtoul(optarg, NULL, 10);
			if (max_live > 10000000) {
				fprintf(stderr, "ion-bench: -L %s: at most 10000000\n",
					optarg);
				return 2;
			}
			break;
		case 'R':
			dm_rounds = strtoul(optarg, NULL, 10);
			break;
		case 'S':
			dump_samples = 1;
			break;
		case 'E':
			edu_bits = atoi(optarg);
			break;
		default:
			fputs(usage, c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	if (uname(&u) == 0)
		progress("kernel %s %s, %ld cpus, budget %llu ms per case and implementation (alloc_free_cold: %llu ms)",
			 u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN),
			 (unsigned long long)(budget_ns / 1000000),
			 (unsigned long long)(cold_budget_ns / 1000000));
	setup_helpers();
	find_impls();
	printf("impl\top\tsize\tlive\tmedian_ns\tp99_ns\truns\n");
	run_op("alloc_free_cold", op_alloc_free_cold);
	run_op("alloc_free_warm", op_alloc_free_warm);
	run_op("alloc_map_touch", op_alloc_map_touch);
	run_scaling();
	run_directmap();
	if (only_ops && selected(only_ops, "bounce"))
		run_bounce(edu_bits);
	progress("done in %.0f s", (now_ns() - t0) / 1e9);
	printf("@done\n");
	return 0;
}
