// SPDX-License-Identifier: MIT
/*
 * ionctl: look at and use ion from a shell.
 *
 * The views come from ion's debugfs files (Documentation/debugfs.rst),
 * read with libion's debugfs reader, and from the heap list; allocation
 * goes through libion (/dev/ion's fd ABI).  Every row of every table is
 * shown, however many there are.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ion/ion.h>

#include "ion_debugfs_priv.h"
#include "ionctl/ionctl.h"

#define DEBUGFS_DIR	ION_DEBUGFS_DIR

/* ion's debugfs directory: --debugfs DIR, else $ION_DEBUGFS, else the above. */
static const char *dbgdir = DEBUGFS_DIR;

static const char usage[] =
"usage: ionctl [--json] [--debugfs DIR] <command> [options]\n"
"\n"
"commands:\n"
"  heaps                    heaps in priority order: name, type, id, size,\n"
"                           used, free, largest free block\n"
"  clients                  clients (processes and kernel drivers)\n"
"  buffers [--heap H]       live buffers: id, heap, size, flags, owner,\n"
"                           handles, attachments, name\n"
"  stat                     totals\n"
"  quota                    usage against the per-heap quotas, per user\n"
"                           (uid) and per client: bytes, limit, percent\n"
"  alloc --heap H --size S [--cached] [--count N] [--hold]\n"
"                           allocate a buffer (fd ABI), or N of them;\n"
"                           --hold keeps them until ionctl is interrupted\n"
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
"  ionctl --json stat\n"
"\n"
"exit codes: 0 ok, 1 operation failed (e.g. the heap is out of memory),\n"
"2 bad command line (unknown command or option, bad size, no such heap),\n"
"3 debugfs not mounted or not permitted, 4 /dev/ion missing\n";

static int json;

/* ---- debugfs ------------------------------------------------------------ */

static int debugfs_error(int err)
{
	struct stat st;

	if (err == -EACCES || err == -EPERM)
		fprintf(stderr, "ionctl: %s: permission denied (debugfs is "
			"root-only; try as root)\n", dbgdir);
	else if (stat(dbgdir, &st))
		fprintf(stderr, "ionctl: %s not found: is debugfs mounted "
			"(mount -t debugfs none /sys/kernel/debug) and ion.ko "
			"loaded?\n", dbgdir);
	else
		fprintf(stderr, "ionctl: %s: %s\n", dbgdir, strerror(-err));
	return EXIT_NODEBUGFS;
}

/* ---- sizes -------------------------------------------------------------- */

static int parse_size(const char *s, unsigned long long *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0) || !isdigit((unsigned char)*s))
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case 'G':
		v *= 1024;
		/* fall through */
	case 'M':
		v *= 1024;
		/* fall through */
	case 'K':
		v *= 1024;
		end++;
		break;
	case 0:
		break;
	default:
		return -EINVAL;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	/* Whole bytes only: 1.5K is 1536, 0.1K is refused. */
	if (*end || v > 18e18 || (double)(unsigned long long)v != v)
		return -EINVAL;
	*out = (unsigned long long)v;
	return 0;
}

/* A count of buffers: 1 to 1 000 000. */
static int parse_count(const char *s, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || !isdigit((unsigned char)*s) ||
	    !v || v > 1000000)
		return -EINVAL;
	*out = v;
	return 0;
}

static const char *human(const char *bytes, char *buf, size_t len)
{
	static const char units[] = "BKMGT";
	double v;
	int u = 0;

	if (!bytes || !*bytes)
		return "-";
	v = strtod(bytes, NULL);
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.1f%c", v, units[u]);
	return buf;
}

/* ---- JSON output --------------------------------------------------------- */

static void json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* A value that is all digits is a JSON number, anything else a string. */
static void json_val(const char *s)
{
	const char *p = s;

	if (!s || !*s) {
		printf("null");
		return;
	}
	while (*p && isdigit((unsigned char)*p))
		p++;
	if (*p || (s[0] == '0' && s[1]))
		json_str(s);
	else
		fputs(s, stdout);
}

static void json_kv(int first, const char *k, const char *v)
{
	printf("%s", first ? "" : ", ");
	json_str(k);
	printf(": ");
	json_val(v);
}

/* ---- /dev/ion ----------------------------------------------------------- */

static int open_dev(struct ion_device **dev)
{
	int err = ion_device_open(dev);

	if (err == -ENOENT)
		fprintf(stderr, "ionctl: /dev/ion: %s (is ion.ko loaded?)\n",
			strerror(-err));
	else if (err)
		fprintf(stderr, "ionctl: /dev/ion: %s\n", strerror(-err));
	return err;
}

/* ---- commands ------------------------------------------------------------ */

/* The key lines of @f as JSON members, but for those in @skip (NULL-ended). */
static void json_keys(const struct ion_dbg_file *f, int first,
		      const char *const *skip)
{
	for (unsigned int k = 0; k < ion_dbg_nkeys(f); k++) {
		const char *key = ion_dbg_key(f, k);
		const char *const *s;

		for (s = skip; s && *s && strcmp(*s, key); s++)
			;
		if (s && *s)
			continue;
		json_kv(first, key, ion_dbg_val(f, k));
		first = 0;
	}
}

static void show_heap(const struct ion_heap_data *h,
		      const struct ion_dbg_file *f, int first)
{
	static const char *const ids[] = { "name", "type", "id", NULL };
	char b[4][32];

	if (json) {
		printf("%s{", first ? "" : ", ");
		json_kv(1, "name", h->name);
		snprintf(b[0], sizeof(b[0]), "%u", h->type);
		json_kv(0, "type", b[0]);
		snprintf(b[0], sizeof(b[0]), "%u", h->heap_id);
		json_kv(0, "id", b[0]);
		if (f)
			json_keys(f, 0, ids);
		printf("}");
		return;
	}
	printf("%-24s %4u %3u %9s %9s %9s %9s %7s\n", h->name, h->type,
	       h->heap_id,
	       human(f ? ion_dbg_get(f, "region_size") : NULL, b[0], 32),
	       human(f ? ion_dbg_get(f, "bytes") : NULL, b[1], 32),
	       human(f ? ion_dbg_get(f, "free") : NULL, b[2], 32),
	       human(f ? ion_dbg_get(f, "largest_free") : NULL, b[3], 32),
	       f ? ion_dbg_get(f, "buffers") ?: "?" : "-");
}

static int cmd_heaps(void)
{
	struct ion_device *dev;
	int n, i, dbg_err = 0;

	if (open_dev(&dev))
		return EXIT_NOION;
	n = ion_device_heap_count(dev);
	if (json)
		printf("[");
	else
		printf("%-24s %4s %3s %9s %9s %9s %9s %7s\n", "NAME", "TYPE",
		       "ID", "SIZE", "USED", "FREE", "LARGEST", "BUFFERS");
	for (i = 0; i < n; i++) {
		const struct ion_heap_data *h = ion_device_heap(dev, i);
		struct ion_dbg_file *f = NULL;
		int err;

		err = ion_dbg_read(&f, ION_DBG_KEYS_ONLY, "%s/heaps/%s",
				   dbgdir, h->name);
		if (err && !dbg_err)
			dbg_err = err;
		show_heap(h, err ? NULL : f, !i);
		ion_dbg_free(err ? NULL : f);
	}
	if (json)
		printf("]\n");
	ion_device_close(dev);
	return dbg_err ? debugfs_error(dbg_err) : EXIT_OK;
}

/* A view: called with every file of a debugfs subdirectory. */
struct view {
	const char *sub;
	void (*show)(const char *name, const struct ion_dbg_file *f,
		     struct view *v);
	const char *heap;	/* buffers --heap: only this heap's */
	int first;		/* nothing printed yet */
	int err;		/* a file could not be read for another reason */
};

static int view_file(const char *name, void *data)
{
	struct view *v = data;
	struct ion_dbg_file *f;
	int err;

	err = ion_dbg_read(&f, 0, "%s/%s/%s", dbgdir, v->sub, name);
	if (err == -ENOENT || err == -EIO)
		return 0;	/* went away meanwhile */
	if (err) {
		fprintf(stderr, "ionctl: %s/%s/%s: %s\n", dbgdir, v->sub, name,
			strerror(-err));
		v->err = err;
		return 0;
	}
	v->show(name, f, v);
	ion_dbg_free(f);
	return 0;
}

static int run_view(struct view *v)
{
	int err;

	v->first = 1;
	if (json)
		printf("[");
	err = ion_dbg_foreach(view_file, v, "%s/%s", dbgdir, v->sub);
	if (err) {
		if (json)
			printf("]\n");
		return debugfs_error(err);
	}
	if (json)
		printf("]\n");
	else if (v->first)
		printf("no %s\n", !strcmp(v->sub, "heaps") ? "buffers" : v->sub);
	return v->err ? EXIT_FAIL : EXIT_OK;
}

static void show_client(const char *name, const struct ion_dbg_file *f,
			struct view *v)
{
	char b[32];

	if (json) {
		printf("%s{", v->first ? "" : ", ");
		json_keys(f, 1, NULL);
		printf("}");
	} else {
		if (v->first)
			printf("%-28s %-6s %6s %7s %9s\n", "NAME", "KIND",
			       "PID", "HANDLES", "BYTES");
		printf("%-28s %-6s %6s %7s %9s\n", name,
		       ion_dbg_get(f, "kind") ?: "?",
		       ion_dbg_get(f, "pid") ?: "?",
		       ion_dbg_get(f, "handles") ?: "?",
		       human(ion_dbg_get(f, "bytes"), b, sizeof(b)));
	}
	v->first = 0;
}

static int cmd_clients(void)
{
	struct view v = { .sub = "clients", .show = show_client };

	return run_view(&v);
}

static void show_buffer_row(const char *heap, const struct ion_dbg_file *f,
			    size_t r, int first)
{
	char b[32];

	if (json) {
		printf("%s{", first ? "" : ", ");
		json_kv(1, "heap", heap);
		for (unsigned int c = 0; c < ion_dbg_ncols(f); c++)
			json_kv(0, ion_dbg_col(f, c), ion_dbg_cell(f, r, c));
		printf("}");
		return;
	}
	if (first)
		printf("%6s %-22s %9s %-6s %-20s %7s %7s %s\n", "BUFFER",
		       "HEAP", "SIZE", "FLAGS", "OWNER", "HANDLES", "ATTACH",
		       "NAME");
	printf("%6s %-22s %9s %-6s %-20s %7s %7s %s\n",
	       ion_dbg_cell_by_name(f, r, "buffer"), heap,
	       human(ion_dbg_cell_by_name(f, r, "size"), b, sizeof(b)),
	       ion_dbg_cell_by_name(f, r, "flags"),
	       ion_dbg_cell_by_name(f, r, "owner"),
	       ion_dbg_cell_by_name(f, r, "handles"),
	       ion_dbg_cell_by_name(f, r, "attachments"),
	       ion_dbg_cell_by_name(f, r, "name"));
}

static void show_buffers(const char *heap, const struct ion_dbg_file *f,
			 struct view *v)
{
	if (v->heap && strcmp(v->heap, heap))
		return;
	for (size_t r = 0; r < ion_dbg_nrows(f); r++) {
		show_buffer_row(heap, f, r, v->first);
		v->first = 0;
	}
}

static int cmd_buffers(const char *heap)
{
	struct view v = { .sub = "heaps", .show = show_buffers, .heap = heap };
	char path[512];
	struct stat st;

	if (heap) {
		snprintf(path, sizeof(path), "%s/heaps/%s", dbgdir, heap);
		if (stat(path, &st)) {
			if (errno != ENOENT || stat(dbgdir, &st))
				return debugfs_error(-errno);
			fprintf(stderr, "ionctl: no heap named '%s' (see ionctl heaps)\n",
				heap);
			return EXIT_USAGE;
		}
	}
	return run_view(&v);
}

/* One row of the quota file: heap, kind (uid/client), who, bytes, limit. */
static void show_quota_row(const struct ion_dbg_file *f, size_t r, int first)
{
	const char *bytes = ion_dbg_cell_by_name(f, r, "bytes");
	const char *limit = ion_dbg_cell_by_name(f, r, "limit");
	char b[32], l[32], pct[16] = "-";

	if (json) {
		printf("%s{", first ? "" : ", ");
		for (unsigned int c = 0; c < ion_dbg_ncols(f); c++)
			json_kv(!c, ion_dbg_col(f, c), ion_dbg_cell(f, r, c));
		printf("}");
		return;
	}
	if (strcmp(limit, "-") && strtoull(limit, NULL, 10))
		snprintf(pct, sizeof(pct), "%llu%%",
			 strtoull(bytes, NULL, 10) * 100 /
			 strtoull(limit, NULL, 10));
	if (first)
		printf("%-22s %-6s %-24s %9s %9s %5s\n", "HEAP", "KIND", "WHO",
		       "USED", "LIMIT", "USE%");
	printf("%-22s %-6s %-24s %9s %9s %5s\n",
	       ion_dbg_cell_by_name(f, r, "heap"),
	       ion_dbg_cell_by_name(f, r, "kind"),
	       ion_dbg_cell_by_name(f, r, "who"), human(bytes, b, sizeof(b)),
	       strcmp(limit, "-") ? human(limit, l, sizeof(l)) : "-", pct);
}

static int cmd_quota(void)
{
	struct ion_dbg_file *f;
	size_t r, n;
	int ret = ion_dbg_read(&f, 0, "%s/quota", dbgdir);

	if (ret)
		return debugfs_error(ret);
	n = ion_dbg_nrows(f);
	if (json)
		printf("[");
	for (r = 0; r < n; r++)
		show_quota_row(f, r, !r);
	if (json)
		printf("]\n");
	else if (!n)
		printf("no buffers\n");
	ion_dbg_free(f);
	return 0;
}

static int cmd_stat(void)
{
	struct ion_dbg_file *f;
	char b[32];
	int err;

	err = ion_dbg_read(&f, ION_DBG_KEYS_ONLY, "%s/summary", dbgdir);
	if (err)
		return debugfs_error(err);
	if (json) {
		printf("{");
		json_keys(f, 1, NULL);
		printf("}\n");
	}
	for (unsigned int k = 0; !json && k < ion_dbg_nkeys(f); k++) {
		const char *key = ion_dbg_key(f, k), *val = ion_dbg_val(f, k);
		int big = strstr(key, "bytes") &&
			  strtoull(val, NULL, 10) >= 1024;

		printf("%-12s %s%s%s%s\n", key, val, big ? " (" : "",
		       big ? human(val, b, sizeof(b)) : "", big ? ")" : "");
	}
	ion_dbg_free(f);
	return EXIT_OK;
}

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
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!json)
		printf("holding %s until interrupted (pid %d)\n",
		       count > 1 ? "them" : "it", getpid());
	fflush(stdout);
	while (!stop)
		pause();
}

static int cmd_alloc(const char *heap, unsigned long long size, int cached,
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

struct cmdline {
	const char *heap;
	unsigned long long size;
	unsigned long count;
	int cached, hold, have_size;
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
	struct cmdline cl = { .count = 1 };
	const char *cmd, *env = getenv("ION_DEBUGFS");
	int rc;

	if (env && *env)
		dbgdir = env;
	rc = parse_opts(argc, argv, "+jD:H:s:ckn:h", &cl);
	if (rc >= 0)
		return rc;
	if (optind >= argc) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	cmd = argv[optind++];
	if (!strcmp(cmd, "trace"))
		return ionctl_trace(argc - optind + 1, argv + optind - 1);
	rc = parse_opts(argc, argv, "jD:H:s:ckn:h", &cl);
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
		return cmd_buffers(cl.heap);
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
