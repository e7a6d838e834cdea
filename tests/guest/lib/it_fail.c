// SPDX-License-Identifier: MIT
/* The knobs of ion's and the kernel's fault injection (it_fail.h). */
#include <errno.h>
#include <stdio.h>

#include "it_fail.h"

int it_knob_write(const char *path, long long val)
{
	FILE *f;
	int ok;

	f = fopen(path, "w");
	if (!f)
		return -errno;
	ok = fprintf(f, "%lld\n", val) > 0;
	if (fclose(f) || !ok)
		return errno ? -errno : -EIO;
	return 0;
}

long long it_knob_read(const char *path)
{
	long long v = -1;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int it_fail_set(const char *step, const char *knob, long long val)
{
	char path[128];

	snprintf(path, sizeof(path), IT_FAIL_DIR "%s/%s", step, knob);
	return it_knob_write(path, val);
}

long long it_fail_get(const char *step, const char *knob)
{
	char path[128];

	snprintf(path, sizeof(path), IT_FAIL_DIR "%s/%s", step, knob);
	return it_knob_read(path);
}
