// SPDX-License-Identifier: MIT
/*
 * ionctl: look at and use ion from a shell.
 *
 * The views come from ion's debugfs files (Documentation/debugfs.rst) and
 * from ION_IOC_HEAP_QUERY; allocation goes through /dev/ion's fd ABI.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/ion.h>

#define DEBUGFS_DIR	"/sys/kernel/debug/ion"

/* ion's debugfs directory: --debugfs DIR, else $ION_DEBUGFS, else the above. */
static const char *dbgdir = DEBUGFS_DIR;

/* Exit codes. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* the operation failed */
	EXIT_USAGE = 2,		/* bad command line: option, size, heap name */
	EXIT_NODEBUGFS = 3,	/* debugfs not mounted or not permitted */
	EXIT_NOION = 4,		/* /dev/ion missing (ion.ko not loaded?) */
};

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
"  alloc --heap H --size S [--cached] [--count N] [--hold]\n"
"                           allocate a buffer (fd ABI), or N of them;\n"
"                           --hold keeps them until ionctl is interrupted\n"
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

/* ---- parsing debugfs files --------------------------------------------- */

#define MAX_KV		32
#define MAX_COLS	12
#define MAX_ROWS	4096

/* One debugfs file: "key: value" lines, a blank line, an optional table. */
struct dbg_file {
	int nkv;
	char *key[MAX_KV], *val[MAX_KV];
	int ncols, nrows;
	char *col[MAX_COLS];
	char *cell[MAX_ROWS][MAX_COLS];
	char *text;
};

static int split_tabs(char *line, char **out, int max)
{
	int n = 0;
	char *save, *tok;

	for (tok = strtok_r(line, "\t", &save); tok && n < max;
	     tok = strtok_r(NULL, "\t", &save))
		out[n++] = tok;
	return n;
}

/* Returns 0, or -errno when the file cannot be read. */
static int dbg_read(const char *path, struct dbg_file *f)
{
	char *line, *save, *p;
	size_t cap = 0, len = 0, n;
	int in_table = 0, err;
	FILE *fp;

	memset(f, 0, sizeof(*f));
	fp = fopen(path, "r");
	if (!fp)
		return -errno;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			char *t = realloc(f->text, cap + 8192);

			if (!t) {
				fclose(fp);
				free(f->text);
				return -ENOMEM;
			}
			f->text = t;
			cap += 8192;
		}
		n = fread(f->text + len, 1, 4096, fp);
		len += n;
		if (n < 4096)
			break;
	}
	err = ferror(fp) ? -EIO : 0;
	fclose(fp);
	f->text[len] = 0;
	if (err) {
		free(f->text);
		return err;
	}
	for (line = strtok_r(f->text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!in_table && (p = strstr(line, ": ")) && !strchr(line, '\t')) {
			if (f->nkv < MAX_KV) {
				*p = 0;
				f->key[f->nkv] = line;
				f->val[f->nkv++] = p + 2;
			}
			continue;
		}
		if (!in_table) {
			f->ncols = split_tabs(line, f->col, MAX_COLS);
			in_table = 1;
			continue;
		}
		if (f->nrows < MAX_ROWS) {
			memset(f->cell[f->nrows], 0, sizeof(f->cell[0]));
			split_tabs(line, f->cell[f->nrows], MAX_COLS);
			f->nrows++;
		}
	}
	return 0;
}

static void dbg_free(struct dbg_file *f)
{
	free(f->text);
}

static const char *dbg_get(const struct dbg_file *f, const char *key)
{
	for (int i = 0; i < f->nkv; i++)
		if (!strcmp(f->key[i], key))
			return f->val[i];
	return NULL;
}

static const char *dbg_cell(const struct dbg_file *f, int row, const char *col)
{
	for (int i = 0; i < f->ncols; i++)
		if (!strcmp(f->col[i], col))
			return f->cell[row][i] ? f->cell[row][i] : "";
	return "";
}

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

static int ion_open_dev(void)
{
	int fd = open("/dev/ion", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "ionctl: /dev/ion: %s%s\n", strerror(errno),
			errno == ENOENT ? " (is ion.ko loaded?)" : "");
	return fd;
}

static int query_heaps(int fd, struct ion_heap_data **out)
{
	struct ion_heap_query q = { 0 };
	struct ion_heap_data *h;

	if (ioctl(fd, ION_IOC_HEAP_QUERY, &q))
		return -errno;
	h = calloc(q.cnt ? q.cnt : 1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	q.heaps = (unsigned long)h;
	if (ioctl(fd, ION_IOC_HEAP_QUERY, &q)) {
		free(h);
		return -errno;
	}
	*out = h;
	return (int)q.cnt;
}

/* ---- commands ------------------------------------------------------------ */

static int cmd_heaps(void)
{
	struct ion_heap_data *h;
	char path[256], b[4][32];
	int fd, n, i, dbg_err = 0;

	fd = ion_open_dev();
	if (fd < 0)
		return EXIT_NOION;
	n = query_heaps(fd, &h);
	close(fd);
	if (n < 0) {
		fprintf(stderr, "ionctl: ION_IOC_HEAP_QUERY: %s\n", strerror(-n));
		return EXIT_FAIL;
	}
	if (json)
		printf("[");
	else
		printf("%-24s %4s %3s %9s %9s %9s %9s %7s\n", "NAME", "TYPE",
		       "ID", "SIZE", "USED", "FREE", "LARGEST", "BUFFERS");
	for (i = 0; i < n; i++) {
		struct dbg_file f;
		int err;

		snprintf(path, sizeof(path), "%s/heaps/%s", dbgdir, h[i].name);
		err = dbg_read(path, &f);
		if (err && !dbg_err)
			dbg_err = err;
		if (json) {
			printf("%s{", i ? ", " : "");
			json_kv(1, "name", h[i].name);
			snprintf(b[0], sizeof(b[0]), "%u", h[i].type);
			json_kv(0, "type", b[0]);
			snprintf(b[0], sizeof(b[0]), "%u", h[i].heap_id);
			json_kv(0, "id", b[0]);
			for (int k = 0; !err && k < f.nkv; k++)
				if (strcmp(f.key[k], "name") &&
				    strcmp(f.key[k], "type") &&
				    strcmp(f.key[k], "id"))
					json_kv(0, f.key[k], f.val[k]);
			printf("}");
		} else {
			printf("%-24s %4u %3u %9s %9s %9s %9s %7s\n", h[i].name,
			       h[i].type, h[i].heap_id,
			       human(err ? NULL : dbg_get(&f, "region_size"),
				     b[0], 32),
			       human(err ? NULL : dbg_get(&f, "bytes"), b[1], 32),
			       human(err ? NULL : dbg_get(&f, "free"), b[2], 32),
			       human(err ? NULL : dbg_get(&f, "largest_free"),
				     b[3], 32),
			       err ? "-" : dbg_get(&f, "buffers"));
		}
		if (!err)
			dbg_free(&f);
	}
	if (json)
		printf("]\n");
	free(h);
	return dbg_err ? debugfs_error(dbg_err) : EXIT_OK;
}

/* Calls fn on every file of a debugfs subdirectory. */
static int for_each_dbg(const char *sub,
			void (*fn)(const char *name, struct dbg_file *f,
				   void *arg, int *first),
			void *arg)
{
	char path[512];
	struct dirent *e;
	int first = 1, err;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", dbgdir, sub);
	d = opendir(path);
	if (!d)
		return debugfs_error(-errno);
	while ((e = readdir(d))) {
		struct dbg_file f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", dbgdir, sub,
			 e->d_name);
		err = dbg_read(path, &f);
		if (err)
			continue;	/* went away meanwhile */
		fn(e->d_name, &f, arg, &first);
		dbg_free(&f);
	}
	closedir(d);
	if (first && !json)
		printf("no %s\n", !strcmp(sub, "heaps") ? "buffers" : sub);
	return EXIT_OK;
}

static void show_client(const char *name, struct dbg_file *f, void *arg,
			int *first)
{
	char b[32];

	if (json) {
		printf("%s{", *first ? "" : ", ");
		for (int k = 0; k < f->nkv; k++)
			json_kv(!k, f->key[k], f->val[k]);
		printf("}");
	} else {
		if (*first)
			printf("%-28s %-6s %6s %7s %9s\n", "NAME", "KIND",
			       "PID", "HANDLES", "BYTES");
		printf("%-28s %-6s %6s %7s %9s\n", name,
		       dbg_get(f, "kind") ?: "?", dbg_get(f, "pid") ?: "?",
		       dbg_get(f, "handles") ?: "?",
		       human(dbg_get(f, "bytes"), b, sizeof(b)));
	}
	*first = 0;
}

static int cmd_clients(void)
{
	int rc;

	if (json)
		printf("[");
	rc = for_each_dbg("clients", show_client, NULL);
	if (json)
		printf("]\n");
	return rc;
}

static void show_buffers(const char *heap, struct dbg_file *f, void *arg,
			 int *first)
{
	const char *want = arg;
	char b[32];

	if (want && strcmp(want, heap))
		return;
	for (int r = 0; r < f->nrows; r++) {
		if (json) {
			printf("%s{", *first ? "" : ", ");
			json_kv(1, "heap", heap);
			for (int c = 0; c < f->ncols; c++)
				json_kv(0, f->col[c], f->cell[r][c]);
			printf("}");
		} else {
			if (*first)
				printf("%6s %-22s %9s %-6s %-20s %7s %7s %s\n",
				       "BUFFER", "HEAP", "SIZE", "FLAGS",
				       "OWNER", "HANDLES", "ATTACH", "NAME");
			printf("%6s %-22s %9s %-6s %-20s %7s %7s %s\n",
			       dbg_cell(f, r, "buffer"), heap,
			       human(dbg_cell(f, r, "size"), b, sizeof(b)),
			       dbg_cell(f, r, "flags"), dbg_cell(f, r, "owner"),
			       dbg_cell(f, r, "handles"),
			       dbg_cell(f, r, "attachments"),
			       dbg_cell(f, r, "name"));
		}
		*first = 0;
	}
}

static int cmd_buffers(const char *heap)
{
	char path[512];
	struct stat st;
	int rc;

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
	if (json)
		printf("[");
	rc = for_each_dbg("heaps", show_buffers, (void *)heap);
	if (json)
		printf("]\n");
	return rc;
}

static int cmd_stat(void)
{
	struct dbg_file f;
	char b[32], path[512];
	int err;

	snprintf(path, sizeof(path), "%s/summary", dbgdir);
	err = dbg_read(path, &f);
	if (err)
		return debugfs_error(err);
	if (json) {
		printf("{");
		for (int k = 0; k < f.nkv; k++)
			json_kv(!k, f.key[k], f.val[k]);
		printf("}\n");
	} else {
		for (int k = 0; k < f.nkv; k++) {
			int big = strstr(f.key[k], "bytes") &&
				  strtoull(f.val[k], NULL, 10) >= 1024;

			printf("%-12s %s%s%s%s\n", f.key[k], f.val[k],
			       big ? " (" : "",
			       big ? human(f.val[k], b, sizeof(b)) : "",
			       big ? ")" : "");
		}
	}
	dbg_free(&f);
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

static int cmd_alloc(const char *heap, unsigned long long size, int cached,
		     unsigned long count, int hold)
{
	struct ion_allocation_data a = { .len = size };
	struct ion_heap_data *h;
	unsigned long made = 0;
	int fd, n, i, rc = EXIT_FAIL, *fds;

	fd = ion_open_dev();
	if (fd < 0)
		return EXIT_NOION;
	n = query_heaps(fd, &h);
	if (n < 0) {
		fprintf(stderr, "ionctl: ION_IOC_HEAP_QUERY: %s\n", strerror(-n));
		close(fd);
		return EXIT_FAIL;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(h[i].name, heap))
			a.heap_id_mask = 1U << h[i].heap_id;
	free(h);
	if (!a.heap_id_mask) {
		fprintf(stderr, "ionctl: no heap named '%s' (see ionctl heaps)\n",
			heap);
		close(fd);
		return EXIT_USAGE;
	}
	a.flags = cached ? ION_FLAG_CACHED : 0;
	fds = calloc(count, sizeof(*fds));
	if (!fds || room_for_fds(count)) {
		fprintf(stderr, "ionctl: no room for %lu buffers' fds\n", count);
		goto out;
	}
	for (made = 0; made < count; made++) {
		a.fd = 0;	/* an input too: must be 0 */
		if (ioctl(fd, ION_IOC_ALLOC, &a)) {
			fprintf(stderr, "ionctl: allocating %llu bytes from %s: "
				"%s", size, heap, strerror(errno));
			fprintf(stderr, count > 1 ? " (buffer %lu of %lu)\n" :
				"\n", made + 1, count);
			goto out;
		}
		fds[made] = (int)a.fd;
	}
	print_alloc(heap, size, cached, fds, count);
	fflush(stdout);
	if (hold) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		if (!json)
			printf("holding %s until interrupted (pid %d)\n",
			       count > 1 ? "them" : "it", getpid());
		fflush(stdout);
		while (!stop)
			pause();
	}
	rc = EXIT_OK;
out:
	while (made)
		close(fds[--made]);
	free(fds);
	close(fd);
	return rc;
}

struct cmdline {
	const char *heap;
	unsigned long long size;
	unsigned long count;
	int cached, hold, have_size;
};

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
			if (parse_size(optarg, &cl->size)) {
				fprintf(stderr, "ionctl: bad size '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			cl->have_size = 1;
			break;
		case 'c':
			cl->cached = 1;
			break;
		case 'k':
			cl->hold = 1;
			break;
		case 'n':
			if (parse_count(optarg, &cl->count)) {
				fprintf(stderr, "ionctl: bad count '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
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
