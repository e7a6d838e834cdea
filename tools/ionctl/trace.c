// SPDX-License-Identifier: MIT
/*
 * ionctl trace: ion's tracepoints (event group "ion") enabled in a tracefs
 * instance of ionctl's own, printed one line per event while ionctl runs,
 * and disabled again (the instance removed) when it stops: after -n
 * events, -t seconds, or on SIGINT, SIGTERM or SIGHUP.  An instance has
 * its own buffer and event switches, so the system's other tracing is
 * left as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ion_tracefs_priv.h"
#include "ionctl.h"

static const char trace_usage[] =
"usage: ionctl trace [-n N] [-t SECS] [--raw]\n"
"  print ion's tracepoints as they fire, until N events (-n), SECS\n"
"  seconds (-t) or a signal; --raw prints tracefs's lines unchanged\n";

static volatile sig_atomic_t trace_stop;

static void trace_on_signal(int sig)
{
	trace_stop = 1;
}

/* Fields whose value is bytes, shown with K/M/G when whole. */
static int trace_is_bytes(const char *key, size_t len)
{
	static const char *const keys[] = {
		"size", "len", "usage", "max", "uid_bytes", "uid_limit",
		"client_bytes", "client_limit",
	};
	unsigned int i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i]) == len && !strncmp(key, keys[i], len))
			return 1;
	return 0;
}

static void trace_print_bytes(unsigned long long v)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (v && !(v & 1023) && u < 3) {
		v >>= 10;
		u++;
	}
	if (u < 0)
		printf("%llu", v);
	else
		printf("%llu%c", v, units[u]);
}

/* One field "key=value" of @len bytes, made readable. */
static void trace_print_field(const char *f, size_t len)
{
	const char *eq = memchr(f, '=', len);
	unsigned long long v;
	char num[32], *end;
	size_t klen, vlen;

	if (!eq)
		goto verbatim;
	klen = eq - f;
	vlen = len - klen - 1;
	if (!vlen || vlen >= sizeof(num))
		goto verbatim;
	memcpy(num, eq + 1, vlen);
	num[vlen] = '\0';
	v = strtoull(num, &end, 10);
	if (*end || num[0] == '-')
		goto verbatim;
	if (klen == 10 && !strncmp(f, "latency_ns", 10)) {
		printf(" latency=%.1fus", v / 1000.0);
		return;
	}
	if (trace_is_bytes(f, klen) && v) {
		printf(" %.*s=", (int)klen, f);
		trace_print_bytes(v);
		return;
	}
verbatim:
	printf(" %.*s", (int)len, f);
}

/*
 * "comm-pid [cpu] flags ts: ion_x: k=v ..." as "ts comm-pid ion_x k=v",
 * sizes in K/M/G and the latency in microseconds.  Returns 1 for an
 * event, 0 for another line (shown as it is).
 */
static int trace_print_line(const char *line, int raw)
{
	const char *ev = strstr(line, ": ion_"), *p, *ts, *fields;
	size_t n;

	if (raw || !ev) {
		puts(line);
		return !!ev;
	}
	for (ts = ev; ts > line && ts[-1] != ' '; ts--)
		;
	p = line + strspn(line, " ");
	n = strcspn(p, " ");
	fields = strstr(ev + 2, ": ");
	printf("%.*s %-24.*s %-22.*s", (int)(ev - ts), ts, (int)n, p,
	       (int)((fields ? fields : ev + strlen(ev)) - ev - 2), ev + 2);
	for (p = fields ? fields + 2 : ""; *p; p += n) {
		p += strspn(p, " ");
		n = strcspn(p, " ");
		if (n)
			trace_print_field(p, n);
	}
	putchar('\n');
	return 1;
}

/* Print the complete lines in @buf[0..*len), keep the rest; events seen. */
static unsigned long trace_drain(char *buf, size_t *len, int raw,
				 unsigned long left)
{
	unsigned long events = 0;
	char *line = buf, *nl;

	while (events < left && (nl = memchr(line, '\n', buf + *len - line))) {
		*nl = '\0';
		events += trace_print_line(line, raw);
		line = nl + 1;
	}
	*len -= line - buf;
	memmove(buf, line, *len);
	fflush(stdout);
	return events;
}

/* Read the instance's trace_pipe until a limit is reached or a signal. */
static int trace_run(const char *dir, unsigned long count, long secs,
		     int raw)
{
	struct timespec start, now;
	unsigned long seen = 0;
	char path[256], buf[8192];
	size_t len = 0;
	struct pollfd pfd;
	ssize_t n;
	int ms;

	snprintf(path, sizeof(path), "%s/trace_pipe", dir);
	pfd.fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (pfd.fd < 0)
		return -errno;
	pfd.events = POLLIN;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!trace_stop && (!count || seen < count)) {
		ms = 200;
		if (secs > 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			ms = (int)(secs * 1000 - (now.tv_sec - start.tv_sec) *
				   1000 - (now.tv_nsec - start.tv_nsec) /
				   1000000);
			if (ms <= 0)
				break;
			if (ms > 200)
				ms = 200;
		}
		if (poll(&pfd, 1, ms) <= 0)
			continue;
		n = read(pfd.fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			continue;
		len += n;
		seen += trace_drain(buf, &len, raw,
				    count ? count - seen : (unsigned long)-1);
		if (len == sizeof(buf) - 1)
			len = 0;	/* a line longer than the buffer */
	}
	close(pfd.fd);
	return 0;
}

static int trace_parse(int argc, char **argv, unsigned long *count,
		       long *secs, int *raw)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "time", required_argument, NULL, 't' },
		{ "raw", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char *end;
	int opt;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "n:t:rh", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			*count = strtoul(optarg, &end, 10);
			if (*end || !*count)
				goto bad;
			break;
		case 't':
			*secs = strtol(optarg, &end, 10);
			if (*end || *secs <= 0)
				goto bad;
			break;
		case 'r':
			*raw = 1;
			break;
		case 'h':
			fputs(trace_usage, stdout);
			return EXIT_OK;
		default:
			goto usage;
		}
	}
	if (optind == argc)
		return -1;
	fprintf(stderr, "ionctl: unexpected argument '%s'\n", argv[optind]);
	goto usage;
bad:
	fprintf(stderr, "ionctl: bad value '%s'\n", optarg);
usage:
	fputs(trace_usage, stderr);
	return EXIT_USAGE;
}

int ionctl_trace(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = trace_on_signal };
	unsigned long count = 0;
	char name[32], dir[200];
	long secs = 0;
	int raw = 0, ret, err;

	ret = trace_parse(argc, argv, &count, &secs, &raw);
	if (ret >= 0)
		return ret;
	snprintf(name, sizeof(name), "ionctl-%d", (int)getpid());
	ret = ion_tracefs_instance(name, dir, sizeof(dir));
	if (ret == -ENOENT) {
		fprintf(stderr, "ionctl: no tracefs with ion's events (is ion.ko "
			"loaded, tracefs mounted, and are you root?)\n");
		return EXIT_FAIL;
	}
	if (ret) {
		fprintf(stderr, "ionctl: tracefs instance %s: %s\n", name,
			strerror(-ret));
		return EXIT_FAIL;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	ret = ion_tracefs_enable(dir, 1);
	if (!ret) {
		fprintf(stderr, "ionctl: tracing ion's events in %s\n", dir);
		ret = trace_run(dir, count, secs, raw);
	}
	err = ion_tracefs_instance_remove(dir);
	if (err)
		fprintf(stderr, "ionctl: rmdir %s: %s\n", dir, strerror(-err));
	if (ret) {
		fprintf(stderr, "ionctl: %s: %s\n", dir, strerror(-ret));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
