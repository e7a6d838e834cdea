// SPDX-License-Identifier: MIT
/*
 * Memory patterns, pages, time, this process's fds and name, and reading
 * whole files from /proc, /sys and debugfs.
 */
#include <sys/mount.h>
#include <sys/utsname.h>

#include "heap_util.h"
#include "ion_test_util.h"

unsigned char it_pat(size_t off, unsigned int seed)
{
	return (unsigned char)((off * 131 + (off >> 12) * 7 + seed) | 1);
}

void it_fill(void *p, size_t len, unsigned int seed)
{
	unsigned char *c = p;
	size_t i;

	for (i = 0; i < len; i++)
		c[i] = it_pat(i, seed);
}

long it_check(const void *p, size_t len, unsigned int seed)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (c[i] != it_pat(i, seed))
			return (long)i;
	return -1;
}

long it_check_zero(const void *p, size_t len)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (c[i])
			return (long)i;
	return -1;
}

long it_page(void)
{
	return sysconf(_SC_PAGESIZE);
}

size_t it_round_page(size_t len)
{
	size_t pg = (size_t)it_page();

	return (len + pg - 1) / pg * pg;
}

long long it_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int it_wait_path(const char *path, int present)
{
	struct stat st;
	int i;

	for (i = 0; i < 50 && (stat(path, &st) == 0) != present; i++)
		usleep(100000);
	return (stat(path, &st) == 0) == present;
}

unsigned int it_seed(void)
{
	unsigned int seed = (unsigned int)time(NULL);

	tap_diag("seed %u", seed);
	return seed;
}

int it_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the DIR's own fd */
}

void it_comm(char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/comm", "r");

	buf[0] = 0;
	if (f) {
		if (fgets(buf, size, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

void it_client_name(char *buf, size_t size)
{
	char comm[32];

	it_comm(comm, sizeof(comm));
	snprintf(buf, size, "%s-%d", comm, (int)getpid());
}

unsigned long it_ino(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (unsigned long)st.st_ino;
}

void it_copy_line(char *dst, size_t size, const char *src)
{
	size_t n = strcspn(src, "\n");

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

int it_fdinfo(int fd, const char *key, char *val, size_t size)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		char *v = line + klen + 1;

		while (*v == ' ' || *v == '\t')
			v++;
		it_copy_line(val, size, v);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

long long it_vmstat(const char *key)
{
	char name[64];
	long long v, ret = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", name, &v) == 2)
		if (!strcmp(name, key)) {
			ret = v;
			break;
		}
	fclose(f);
	return ret;
}

int it_read_file(const char *path, char **out)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || !buf) {
		int e = fd < 0 ? -errno : -ENOMEM;

		if (fd >= 0)
			close(fd);
		free(buf);
		return e;
	}
	for (;;) {
		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {	/* not a partial text taken for the whole */
			n = -errno;
			free(buf);
			close(fd);
			return (int)n;
		}
		if (!n)
			break;
		len += n;
	}
	buf[len] = 0;
	close(fd);
	*out = buf;
	return (int)len;
}

void it_diag_stack(pid_t pid, const char *who)
{
	char path[64], *text = NULL, *line, *save = NULL;

	snprintf(path, sizeof(path), "/proc/%d/stack", (int)pid);
	if (it_read_file(path, &text) >= 0)
		for (line = strtok_r(text, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			tap_diag("%s's kernel stack: %s", who, line);
	free(text);
}

long long it_cg_num(const char *cg, const char *file, const char *key)
{
	char path[160], *text, *p;
	long long v = -1;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if (it_read_file(path, &text) < 0)
		return -1;
	if (!key) {
		v = atoll(text);
	} else {
		size_t n = strlen(key);

		for (p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
			if (!strncmp(p, key, n) && p[n] == ' ')
				v = atoll(p + n + 1);
	}
	free(text);
	return v;
}

int it_cg_join(void *cg)
{
	char procs[160], pid[16];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", (const char *)cg);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return ht_write_str(procs, pid, 0);
}

int it_cg_memory(void)
{
	struct stat st;

	if (stat(IT_CG_ROOT "/cgroup.controllers", &st) &&
	    mount("none", IT_CG_ROOT, "cgroup2", 0, NULL))
		return -errno;
	return ht_write_str(IT_CG_ROOT "/cgroup.subtree_control", "+memory",
			    0);
}

void it_cg_pair_remove(const char *top, const char *a, const char *b)
{
	rmdir(a);
	rmdir(b);
	rmdir(top);
}

int it_cg_pair(const char *top, const char *a, const char *b)
{
	char path[PATH_MAX];

	it_cg_pair_remove(top, a, b);
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", top);
	if (it_cg_memory() || mkdir(top, 0755) ||
	    ht_write_str(path, "+memory", 0) || mkdir(a, 0755) ||
	    mkdir(b, 0755))
		return -EIO;
	return 0;
}

int it_memcg_pools_kernel(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major > 6 || (major == 6 && minor >= 8);
}
