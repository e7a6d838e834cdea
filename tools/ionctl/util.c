// SPDX-License-Identifier: MIT
/*
 * ionctl: what every command shares - debugfs errors, sizes and counts on
 * the command line, human sizes, JSON output, /dev/ion.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ionctl.h"

int debugfs_error(int err)
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

int parse_size(const char *s, unsigned long long *out)
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
int parse_count(const char *s, unsigned long *out)
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

/* A delay in seconds: 0.1 to 86400, fractions allowed. */
int parse_delay(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isdigit((unsigned char)*s) ||
	    !(v >= 0.1 && v <= 86400))
		return -EINVAL;
	*out = v;
	return 0;
}

const char *human(const char *bytes, char *buf, size_t len)
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

void json_str(const char *s)
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
void json_val(const char *s)
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

void json_kv(int first, const char *k, const char *v)
{
	printf("%s", first ? "" : ", ");
	json_str(k);
	printf(": ");
	json_val(v);
}

/* ---- /dev/ion ----------------------------------------------------------- */

int open_dev(struct ion_device **dev)
{
	int err = ion_device_open(dev);

	if (err == -ENOENT)
		fprintf(stderr, "ionctl: /dev/ion: %s (is ion.ko loaded?)\n",
			strerror(-err));
	else if (err)
		fprintf(stderr, "ionctl: /dev/ion: %s\n", strerror(-err));
	return err;
}

/* The key lines of @f as JSON members, but for those in @skip (NULL-ended). */
void json_keys(const struct ion_dbg_file *f, int first,
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
