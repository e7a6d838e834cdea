// SPDX-License-Identifier: MIT
/*
 * ionctl top: a live view of heaps, clients, the biggest buffers with
 * their holders, allocation rates and quota refusals, refreshed every -d
 * seconds.
 *
 * On a terminal it draws on the alternate screen, one line per row cut
 * at the terminal's width and as many rows as fit, and quits on q, ^C or
 * any of SIGINT, SIGTERM, SIGHUP, putting the terminal back as it was.
 * With -b, --json or when stdout is no terminal it prints whole frames,
 * one after the other, nothing cut (--json: one JSON object a line).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "ionctl.h"
#include "top.h"

/* Rows of the biggest buffers a batch frame shows. */
#define TOP_BUFFERS	10

static volatile sig_atomic_t top_stop, top_resized;

static void on_stop(int sig)
{
	top_stop = 1;
}

static void on_winch(int sig)
{
	top_resized = 1;
}

/* Where a frame's lines go: the screen (cut to size) or a stream. */
struct screen {
	int tty;		/* drawing on a terminal */
	int keys;		/* stdin is a terminal in cbreak mode */
	struct termios saved;
	unsigned int cols, rows, row;
};

static void screen_size(struct screen *s)
{
	struct winsize ws;

	s->cols = 80;
	s->rows = 24;
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col && ws.ws_row) {
		s->cols = ws.ws_col;
		s->rows = ws.ws_row;
	}
}

/* One line of a frame: on a terminal cut to the width, and dropped past
 * the last row but one (the last stays empty, so nothing scrolls).
 */
static void __attribute__((format(printf, 2, 3)))
line(struct screen *s, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!s->tty) {
		puts(buf);
		return;
	}
	if (s->row + 1 >= s->rows)
		return;
	s->row++;
	if (strlen(buf) > s->cols)
		buf[s->cols] = '\0';
	printf("%s\033[K\n", buf);
}

static void fmt_rate(char *buf, size_t len, double rate)
{
	if (rate < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f", rate);
}

static void show_heaps(struct screen *s, const struct top_frame *fr,
		       const struct top_frame *prev)
{
	char u[32], f[32], p[32], n[32], ar[32], fa[32];
	double allocs, fails;

	line(s, "%-24s %9s %9s %9s %7s %8s %7s %9s %7s %7s", "HEAP", "USED",
	     "FREE", "POOL", "BUFFERS", "ALLOC/s", "FAIL/s", "ALLOCS",
	     "FAILS", "QUOTA");
	for (size_t i = 0; i < fr->nheaps; i++) {
		const struct top_heap *h = &fr->heaps[i];

		top_rate(prev, h, fr->when, &allocs, &fails);
		fmt_rate(ar, sizeof(ar), allocs);
		fmt_rate(fa, sizeof(fa), fails);
		snprintf(n, sizeof(n), "%llu", h->bytes);
		line(s, "%-24s %9s %9s %9s %7llu %8s %7s %9llu %7llu %7llu",
		     h->name,
		     human(n, u, sizeof(u)),
		     human(strcmp(h->free, "-") ? h->free : NULL, f, sizeof(f)),
		     human(strcmp(h->pool, "-") ? h->pool : NULL, p, sizeof(p)),
		     h->buffers, ar, fa,
		     h->allocs, h->fails, h->refusals);
	}
}

static void show_clients(struct screen *s, const struct top_frame *fr)
{
	char b[32], n[32];

	line(s, "%-28s %-6s %7s %7s %9s", "CLIENT", "KIND", "PID", "HANDLES",
	     "BYTES");
	for (size_t i = 0; i < fr->nclients; i++) {
		const struct top_client *c = &fr->clients[i];

		snprintf(n, sizeof(n), "%llu", c->bytes);
		line(s, "%-28s %-6s %7d %7llu %9s", c->name, c->kind, c->pid,
		     c->handles, human(n, b, sizeof(b)));
	}
}

static void show_bufs(struct screen *s, const struct top_frame *fr)
{
	char b[32], n[32], holders[1024];
	size_t max = TOP_BUFFERS;

	if (s->tty)
		max = s->rows > s->row + 3 ? s->rows - s->row - 3 : 0;
	line(s, "%6s %-22s %9s %-20s %6s %-20s %s", "BUFFER", "HEAP", "SIZE",
	     "OWNER", "ORPHAN", "DEVICES", "HOLDERS");
	for (size_t i = 0; i < fr->nbufs && i < max; i++) {
		const struct top_buf *t = &fr->bufs[i];

		snprintf(n, sizeof(n), "%llu", t->size);
		holders_text(&fr->hs, t->ino, holders, sizeof(holders));
		line(s, "%6llu %-22s %9s %-20s %6s %-20s %s", t->id, t->heap,
		     human(n, b, sizeof(b)), t->owner,
		     t->orphan ? "yes" : "no", t->devices, holders);
	}
}

static void show_text(struct screen *s, const struct top_frame *fr,
		      const struct top_frame *prev, unsigned long n)
{
	char b[32], p[32], v[32];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(v, sizeof(v), "%H:%M:%S", &tm);
	s->row = 0;
	if (s->tty)
		fputs("\033[H", stdout);
	snprintf(p, sizeof(p), "%llu", fr->bytes);
	line(s, "ionctl top - frame %lu at %s - q quits", n, v);
	line(s, "total: %llu buffers, %llu bytes (%s), peak %s, %zu clients, %zu heaps",
	     fr->buffers, fr->bytes, human(p, b, sizeof(b)),
	     (snprintf(p, sizeof(p), "%llu", fr->peak), human(p, v, sizeof(v))),
	     fr->nclients, fr->nheaps);
	line(s, "%s", "");
	show_heaps(s, fr, prev);
	line(s, "%s", "");
	show_clients(s, fr);
	line(s, "%s", "");
	show_bufs(s, fr);
	if (s->tty)
		fputs("\033[J", stdout);
	else
		line(s, "%s", "");
}

static void json_heaps(const struct top_frame *fr, const struct top_frame *prev)
{
	double allocs, fails;

	for (size_t i = 0; i < fr->nheaps; i++) {
		const struct top_heap *h = &fr->heaps[i];

		top_rate(prev, h, fr->when, &allocs, &fails);
		printf("%s{\"name\": ", i ? ", " : "");
		json_str(h->name);
		printf(", \"bytes\": %llu, \"buffers\": %llu, \"free\": ",
		       h->bytes, h->buffers);
		json_val(strcmp(h->free, "-") ? h->free : NULL);
		printf(", \"pool_bytes\": ");
		json_val(strcmp(h->pool, "-") ? h->pool : NULL);
		printf(", \"allocs\": %llu, \"alloc_failures\": %llu, \"quota_refusals\": %llu",
		       h->allocs, h->fails, h->refusals);
		if (allocs < 0)
			printf(", \"allocs_per_s\": null, \"failures_per_s\": null}");
		else
			printf(", \"allocs_per_s\": %.3f, \"failures_per_s\": %.3f}",
			       allocs, fails);
	}
}

static void show_json(const struct top_frame *fr, const struct top_frame *prev,
		      unsigned long n)
{
	printf("{\"frame\": %lu, \"buffers\": %llu, \"bytes\": %llu, "
	       "\"peak_bytes\": %llu, \"heaps\": [", n, fr->buffers, fr->bytes,
	       fr->peak);
	json_heaps(fr, prev);
	printf("], \"clients\": [");
	for (size_t i = 0; i < fr->nclients; i++) {
		const struct top_client *c = &fr->clients[i];

		printf("%s{\"name\": ", i ? ", " : "");
		json_str(c->name);
		printf(", \"kind\": ");
		json_str(c->kind);
		printf(", \"pid\": %d, \"handles\": %llu, \"bytes\": %llu}",
		       c->pid, c->handles, c->bytes);
	}
	printf("], \"biggest\": [");
	for (size_t i = 0; i < fr->nbufs && i < TOP_BUFFERS; i++) {
		const struct top_buf *t = &fr->bufs[i];

		printf("%s{\"buffer\": %llu, \"ino\": %lu, \"heap\": ",
		       i ? ", " : "", t->id, t->ino);
		json_str(t->heap);
		printf(", \"size\": %llu, \"owner\": ", t->size);
		json_str(t->owner);
		printf(", \"orphan\": %s, \"devices\": ",
		       t->orphan ? "true" : "false");
		json_str(t->devices);
		printf(", \"holders\": ");
		holders_print(&fr->hs, t->ino);
		printf("}");
	}
	printf("]}\n");
}

static void screen_open(struct screen *s, int batch)
{
	struct sigaction sa = { .sa_handler = on_stop };
	struct termios t;

	memset(s, 0, sizeof(*s));
	/* No SA_RESTART: a signal ends the wait between frames at once. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	s->tty = !batch && !json && isatty(STDOUT_FILENO);
	if (!s->tty)
		return;
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
	if (isatty(STDIN_FILENO) && !tcgetattr(STDIN_FILENO, &s->saved)) {
		t = s->saved;
		t.c_lflag &= ~(ICANON | ECHO);
		t.c_cc[VMIN] = 0;
		t.c_cc[VTIME] = 0;
		s->keys = !tcsetattr(STDIN_FILENO, TCSANOW, &t);
	}
	/* The alternate screen, cursor hidden. */
	fputs("\033[?1049h\033[?25l", stdout);
}

static void screen_close(struct screen *s)
{
	if (!s->tty)
		return;
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	if (s->keys)
		tcsetattr(STDIN_FILENO, TCSANOW, &s->saved);
}

/* Waits @delay seconds, for q, or for a signal; 1 when it is time to quit. */
static int screen_wait(struct screen *s, double delay)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	struct timespec end, now;
	int ms;
	char c;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)delay;
	end.tv_nsec += (long)((delay - (time_t)delay) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	while (!top_stop && !top_resized) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (int)((end.tv_sec - now.tv_sec) * 1000 +
			   (end.tv_nsec - now.tv_nsec) / 1000000);
		if (ms <= 0)
			break;
		if (poll(&pfd, s->keys ? 1 : 0, ms) <= 0)
			continue;
		while (read(STDIN_FILENO, &c, 1) == 1)
			if (c == 'q' || c == 'Q')
				return 1;
	}
	top_resized = 0;
	return top_stop;
}

/**
 * cmd_top() - ionctl top
 * @batch:  -b: whole frames one after the other, no terminal control
 * @frames: -n: stop after this many frames; 0 for no limit
 * @delay:  -d: seconds between frames
 *
 * Return: an exit code.
 */
int cmd_top(int batch, unsigned long frames, double delay)
{
	struct top_frame fr[2] = { 0 };
	struct screen s;
	unsigned long n;
	int cur = 0, err = 0;

	screen_open(&s, batch);
	for (n = 1; !top_stop; n++) {
		top_free(&fr[cur]);
		err = top_read(&fr[cur]);
		if (err)
			break;
		if (s.tty)
			screen_size(&s);
		if (json)
			show_json(&fr[cur], n > 1 ? &fr[!cur] : NULL, n);
		else
			show_text(&s, &fr[cur], n > 1 ? &fr[!cur] : NULL, n);
		fflush(stdout);
		if ((frames && n >= frames) || screen_wait(&s, delay))
			break;
		cur = !cur;
	}
	screen_close(&s);
	top_free(&fr[0]);
	top_free(&fr[1]);
	return err ? debugfs_error(err) : EXIT_OK;
}
