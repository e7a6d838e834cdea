// SPDX-License-Identifier: MIT
/*
 * Reading ion's tracepoints back through a tracefs instance
 * (trace_util.h), made with libion's tracefs helpers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ion_test_util.h"
#include "ion_tracefs_priv.h"
#include "trace_util.h"

int tr_root(char *buf, size_t size)
{
	const char *root = ion_tracefs_root();

	if (!root)
		return -ENOENT;
	snprintf(buf, size, "%s", root);
	return 0;
}

int tr_kernel_has_events(void)
{
	return !access("/sys/kernel/tracing/events", F_OK) ||
	       !access("/sys/kernel/debug/tracing/events", F_OK);
}

int tr_open(struct tr_inst *t, const char *name)
{
	int ret = ion_tracefs_instance(name, t->dir, sizeof(t->dir));

	if (ret)
		return ret;
	ret = ion_tracefs_write(t->dir, "buffer_size_kb", "4096");
	if (!ret)
		ret = ion_tracefs_enable(t->dir, 1);
	if (ret)
		tr_close(t);
	return ret;
}

int tr_clear(struct tr_inst *t)
{
	return ion_tracefs_write(t->dir, "trace", "");
}

char *tr_read(struct tr_inst *t)
{
	char path[sizeof(t->dir) + 8], *text;

	snprintf(path, sizeof(path), "%s/trace", t->dir);
	return it_read_file(path, &text) < 0 ? NULL : text;
}

void tr_close(struct tr_inst *t)
{
	ion_tracefs_instance_remove(t->dir);
}

/* Has the line [@line, @end) the whole field @f? */
static int tr_has_field(const char *line, const char *end, const char *f)
{
	size_t n = strlen(f);
	const char *p;

	for (p = line; (p = memmem(p, end - p, f, n)); p++)
		if (p > line && p[-1] == ' ' &&
		    (p + n == end || p[n] == ' ' || p[n] == '\n'))
			return 1;
	return 0;
}

static int tr_line_is(const char *line, const char *end, const char *event,
		      const char *const *fields)
{
	char tag[64];
	const char *p;

	snprintf(tag, sizeof(tag), " %s: ", event);
	p = memmem(line, end - line, tag, strlen(tag));
	if (!p || line[0] == '#')
		return 0;
	for (; fields && *fields; fields++)
		if (!tr_has_field(p, end, *fields))
			return 0;
	return 1;
}

const char *tr_find(const char *text, const char *event,
		    const char *const *fields)
{
	const char *line, *end;

	for (line = text; line && *line; line = end + 1) {
		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		if (tr_line_is(line, end, event, fields))
			return line;
		if (!*end)
			break;
	}
	return NULL;
}

int tr_count(const char *text, const char *event, const char *const *fields)
{
	const char *line = text;
	int n = 0;

	while ((line = tr_find(line, event, fields))) {
		n++;
		line = strchr(line, '\n');
		if (!line)
			break;
		line++;
	}
	return n;
}

int tr_field(const char *line, const char *key, char *val, size_t size)
{
	const char *end = strchr(line, '\n'), *p = line;
	size_t n = strlen(key), len;

	if (!end)
		end = line + strlen(line);
	while ((p = memmem(p, end - p, key, n))) {
		if (p > line && p[-1] == ' ' && p[n] == '=') {
			p += n + 1;
			len = strcspn(p, " \n");
			if (len >= size)
				len = size - 1;
			memcpy(val, p, len);
			val[len] = '\0';
			return 0;
		}
		p++;
	}
	return -ENOENT;
}
