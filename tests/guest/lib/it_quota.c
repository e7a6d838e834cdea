// SPDX-License-Identifier: MIT
/*
 * Quotas and other users: ion's quota parameters (and saving and putting
 * back any of ion's parameters), the debugfs quota file, and a process
 * becoming an unprivileged user.
 */
#include <grp.h>

#include "heap_util.h"
#include "ion_test_util.h"

int it_become_user(uid_t uid, gid_t group)
{
	int n = group == (gid_t)-1 ? 0 : 1;

	if (setgroups(n, n ? &group : NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

int it_param_set(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), IT_PARAMS "%s", name);
	return ht_write_str(path, val, 0);
}

int it_param_set_array(const char *name, const long *vals, unsigned int n)
{
	char val[256] = "";
	unsigned int i;

	for (i = 0; i < n; i++)
		snprintf(val + strlen(val), sizeof(val) - strlen(val), "%s%ld",
			 i ? "," : "", vals[i]);
	return it_param_set(name, val);
}

int it_param_save(struct it_param *p, const char *name)
{
	char path[128];
	int ret;

	*p = (struct it_param){ .val = NULL };
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(path, sizeof(path), IT_PARAMS "%s", name);
	ret = it_read_file(path, &p->val);
	if (ret <= 0) {
		free(p->val);
		p->val = NULL;
		return ret ? ret : -ENODATA;
	}
	p->val[strcspn(p->val, "\n")] = '\0';
	return 0;
}

int it_param_restore(struct it_param *p)
{
	int ret;

	if (!p->val)
		return 0;
	ret = it_param_set(p->name, p->val);
	if (ret)
		tap_diag("could not restore %s=%s: %s", p->name, p->val,
			 strerror(-ret));
	free(p->val);
	p->val = NULL;
	return ret;
}

long long it_quota_bytes(const char *heap, const char *kind, const char *who)
{
	const char *want[3] = { heap, kind, who };
	char *text, *line, *save, *f, *fsave;
	long long bytes = -1;
	int i;

	if (it_read_file(IT_DEBUGFS "/quota", &text) < 0)
		return -2;
	line = strtok_r(text, "\n", &save);	/* the header */
	while ((line = strtok_r(NULL, "\n", &save))) {
		f = strtok_r(line, "\t", &fsave);
		for (i = 0; i < 3 && f; i++, f = strtok_r(NULL, "\t", &fsave))
			if (want[i] && strcmp(f, want[i]))
				break;
		if (i == 3 && f)
			bytes = (bytes < 0 ? 0 : bytes) + atoll(f);
	}
	free(text);
	return bytes;
}
