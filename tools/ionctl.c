// SPDX-License-Identifier: MIT
/*
 * ionctl: look at and use ion from a shell.
 *
 * The views come from ion's debugfs files (Documentation/debugfs.rst),
 * read with libion's debugfs reader, and from the heap list; allocation
 * goes through libion (/dev/ion's fd ABI).  Every row of every table is
 * shown, however many there are.  This file has main() and the command
 * line; the commands are in tools/ionctl/.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ionctl/ionctl.h"

/* ion's debugfs directory: --debugfs DIR, else $ION_DEBUGFS, else the above. */
const char *dbgdir = DEBUGFS_DIR;

static const char usage[] =
"usage: ionctl [--json] [--debugfs DIR] <command> [options]\n"
"\n"
"commands:\n"
"  heaps                    heaps in priority order: name, type, id, size,\n"
"                           used, free, largest free block\n"
"  clients                  clients (processes and kernel drivers)\n"
"  buffers [--heap H] [--holders] [--orphans]\n"
"                           live buffers: id, heap, size, flags, owner,\n"
"                           handles, attachments, name; --holders: the\n"
"                           processes holding each (fd or mapping, found\n"
"                           in /proc) and the attached devices; --orphans:\n"
"                           only buffers whose allocator has exited\n"
"  stat                     totals\n"
"  quota                    usage against the per-heap quotas, per user\n"
"                           (uid) and per client: bytes, limit, percent\n"
"  alloc --heap H --size S [--cached] [--count N] [--hold]\n"
"                           allocate a buffer (fd ABI), or N of them;\n"
"                           --hold keeps them until ionctl is interrupted\n"
"  top [-b] [-n N] [-d SECS]\n"
"                           live view of heaps, clients, the biggest\n"
"                           buffers and their holders, allocation rates;\n"
"                           q or a signal quits; -b batch (no terminal\n"
"                           control), -n N frames, -d delay (default 2)\n"
"  trace [-n N] [-t SECS] [--raw]\n"
"                           print ion's tracepoints as they fire (tracefs),\n"
"                           until N events, SECS seconds or a signal\n"
"\n"
"Sizes are bytes, or take K, M, G suffixes (8M, 1.5G; powers of 1024).\n"
"--json prints JSON.  --debugfs DIR reads ion's debugfs files from DIR\n"
"(default: $ION_DEBUGFS, else " DEBUGFS_DIR ").\n"
"\n"
"examples:\n"
"  ionctl heaps\n"
"  ionctl alloc --heap ion_system_heap --size 8M --cached --hold &\n"
"  ionctl buffers --heap ion_system_heap\n"
"  ionctl buffers --orphans --holders\n"
"  ionctl top -b -n 2 -d 1\n"
"  ionctl --json stat\n"
"\n"
"exit codes: 0 ok, 1 operation failed (e.g. the heap is out of memory),\n"
"2 bad command line (unknown command or option, bad size, no such heap),\n"
"3 debugfs not mounted or not permitted, 4 /dev/ion missing\n";

int json;

struct cmdline {
	const char *heap;
	unsigned long long size;
	unsigned long count;
	double delay;
	unsigned int buffers;	/* BUFFERS_* */
	int cached, hold, have_size, have_count, batch;
};

static int bad_arg(const char *what, const char *arg)
{
	fprintf(stderr, "ionctl: bad %s '%s'\n", what, arg);
	return EXIT_USAGE;
}

/* Parses options (before or after the command); returns -1 to go on. */
static int parse_opts(int argc, char **argv, const char *spec,
		      struct cmdline *cl)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "debugfs", required_argument, NULL, 'D' },
		{ "heap", required_argument, NULL, 'H' },
		{ "size", required_argument, NULL, 's' },
		{ "cached", no_argument, NULL, 'c' },
		{ "hold", no_argument, NULL, 'k' },
		{ "count", required_argument, NULL, 'n' },
		{ "holders", no_argument, NULL, 'O' },
		{ "orphans", no_argument, NULL, 'o' },
		{ "batch", no_argument, NULL, 'b' },
		{ "delay", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int opt;

	while ((opt = getopt_long(argc, argv, spec, opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = 1;
			break;
		case 'D':
			dbgdir = optarg;
			break;
		case 'H':
			cl->heap = optarg;
			break;
		case 's':
			if (parse_size(optarg, &cl->size))
				return bad_arg("size", optarg);
			cl->have_size = 1;
			break;
		case 'c':
			cl->cached = 1;
			break;
		case 'k':
			cl->hold = 1;
			break;
		case 'n':
			if (parse_count(optarg, &cl->count))
				return bad_arg("count", optarg);
			cl->have_count = 1;
			break;
		case 'O':
			cl->buffers |= BUFFERS_HOLDERS;
			break;
		case 'o':
			cl->buffers |= BUFFERS_ORPHANS;
			break;
		case 'b':
			cl->batch = 1;
			break;
		case 'd':
			if (parse_delay(optarg, &cl->delay))
				return bad_arg("delay", optarg);
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_OK;
		default:
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct cmdline cl = { .count = 1, .delay = 2 };
	const char *cmd, *env = getenv("ION_DEBUGFS");
	int rc;

	if (env && *env)
		dbgdir = env;
	rc = parse_opts(argc, argv, "+jD:H:s:ckn:bd:h", &cl);
	if (rc >= 0)
		return rc;
	if (optind >= argc) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	cmd = argv[optind++];
	if (!strcmp(cmd, "trace"))
		return ionctl_trace(argc - optind + 1, argv + optind - 1);
	rc = parse_opts(argc, argv, "jD:H:s:ckn:bd:h", &cl);
	if (rc >= 0)
		return rc;
	if (optind < argc) {
		fprintf(stderr, "ionctl: unexpected argument '%s'\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	if (!strcmp(cmd, "heaps"))
		return cmd_heaps();
	if (!strcmp(cmd, "clients"))
		return cmd_clients();
	if (!strcmp(cmd, "buffers"))
		return cmd_buffers(cl.heap, cl.buffers);
	if (!strcmp(cmd, "top"))
		return cmd_top(cl.batch, cl.have_count ? cl.count : 0,
			       cl.delay);
	if (!strcmp(cmd, "stat"))
		return cmd_stat();
	if (!strcmp(cmd, "quota"))
		return cmd_quota();
	if (!strcmp(cmd, "alloc")) {
		if (!cl.heap || !cl.have_size || !cl.size) {
			fprintf(stderr, "ionctl: alloc needs --heap and a "
				"non-zero --size\n");
			return EXIT_USAGE;
		}
		return cmd_alloc(cl.heap, cl.size, cl.cached, cl.count,
				 cl.hold);
	}
	fprintf(stderr, "ionctl: unknown command '%s'\n\n%s", cmd, usage);
	return EXIT_USAGE;
}
