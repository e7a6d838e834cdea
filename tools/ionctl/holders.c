// SPDX-License-Identifier: MIT
/*
 * ionctl: which processes hold which dma-buf, found in /proc by inode
 * number (Documentation/debugfs.rst, "Holders").
 *
 * A process holds a dma-buf through an fd (/proc/<pid>/fd/<n> links to
 * "/dmabuf:<name>", and stat() through the link gives the dma-buf's inode)
 * or a mapping (a /proc/<pid>/maps line whose path starts with "/dmabuf:"
 * has the inode in its fifth field).  debugfs names each ion buffer by
 * that inode, so one pass over /proc answers for every buffer.  Processes
 * that vanish or that we may not look at are skipped.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ionctl.h"

#define DMABUF_PATH	"/dmabuf:"

/* The entry of (@ino, @pid), added if new; NULL when out of memory. */
static struct holder *holder_of(struct holders *hs, size_t first,
				unsigned long ino, int pid, const char *comm)
{
	struct holder *h;
	size_t i;

	/* One process's entries are contiguous, from @first on. */
	for (i = first; i < hs->n; i++)
		if (hs->h[i].ino == ino)
			return &hs->h[i];
	if (hs->n == hs->cap) {
		size_t cap = hs->cap ? hs->cap * 2 : 64;
		struct holder *n = realloc(hs->h, cap * sizeof(*n));

		if (!n)
			return NULL;
		hs->h = n;
		hs->cap = cap;
	}
	h = &hs->h[hs->n++];
	memset(h, 0, sizeof(*h));
	h->ino = ino;
	h->pid = pid;
	snprintf(h->comm, sizeof(h->comm), "%s", comm);
	return h;
}

static void read_comm(int pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(comm, len, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(comm, (int)len, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
	/* One field in tables: no blanks. */
	for (char *p = comm; *p; p++)
		if (!isgraph((unsigned char)*p))
			*p = '_';
}

static int scan_fds(struct holders *hs, size_t first, int pid,
		    const char *comm)
{
	char path[PATH_MAX], link[64];
	struct dirent *de;
	struct holder *h;
	struct stat st;
	DIR *d;
	int pfx, ret = 0;

	pfx = snprintf(path, sizeof(path), "/proc/%d/fd/", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		ssize_t l;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path + pfx, sizeof(path) - pfx, "%s", de->d_name);
		l = readlink(path, link, sizeof(link) - 1);
		if (l < (ssize_t)strlen(DMABUF_PATH))
			continue;
		link[l] = '\0';
		if (strncmp(link, DMABUF_PATH, strlen(DMABUF_PATH)) ||
		    stat(path, &st))
			continue;
		h = holder_of(hs, first, st.st_ino, pid, comm);
		if (!h) {
			ret = -ENOMEM;
			break;
		}
		h->fds++;
	}
	closedir(d);
	return ret;
}

static int scan_maps(struct holders *hs, size_t first, int pid,
		     const char *comm)
{
	char path[64], line[512];
	unsigned long ino;
	struct holder *h;
	int ret = 0, off;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		off = 0;
		/* address perms offset dev inode path */
		if (sscanf(line, "%*s %*s %*s %*s %lu %n", &ino, &off) != 1 ||
		    !off || strncmp(line + off, DMABUF_PATH,
				    strlen(DMABUF_PATH)))
			continue;
		h = holder_of(hs, first, ino, pid, comm);
		if (!h) {
			ret = -ENOMEM;
			break;
		}
		h->maps++;
	}
	fclose(f);
	return ret;
}

/**
 * holders_scan() - find every process's dma-buf fds and mappings
 * @hs: filled in (holders_free() it); entries are by pid, then inode
 *
 * Return: 0 or -errno (-ENOMEM; /proc not readable).
 */
int holders_scan(struct holders *hs)
{
	struct dirent *de;
	char comm[32];
	size_t first;
	int pid, ret = 0;
	DIR *d;

	memset(hs, 0, sizeof(*hs));
	d = opendir("/proc");
	if (!d)
		return -errno;
	while (!ret && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (pid == getpid())
			continue;
		read_comm(pid, comm, sizeof(comm));
		first = hs->n;
		ret = scan_fds(hs, first, pid, comm);
		if (!ret)
			ret = scan_maps(hs, first, pid, comm);
	}
	closedir(d);
	return ret;
}

void holders_free(struct holders *hs)
{
	free(hs->h);
	memset(hs, 0, sizeof(*hs));
}

/**
 * holders_text() - the holders of the dma-buf with inode @ino, as text
 * @hs:  a scan
 * @ino: the buffer's inode number (debugfs "ino")
 * @buf: gets "<pid>:<comm>(<n>fd,<n>map)" items separated by blanks, "-"
 *	 for none, cut at @len
 * @len: size of @buf
 */
void holders_text(const struct holders *hs, unsigned long ino, char *buf,
		  size_t len)
{
	size_t n = 0;

	snprintf(buf, len, "-");
	for (size_t i = 0; i < hs->n && n < len; i++) {
		const struct holder *h = &hs->h[i];

		if (h->ino != ino)
			continue;
		n += snprintf(buf + n, len - n, "%s%d:%s(%.0u%s%s%.0u%s)",
			      n ? " " : "", h->pid, h->comm, h->fds,
			      h->fds ? "fd" : "", h->fds && h->maps ? "," : "",
			      h->maps, h->maps ? "map" : "");
	}
}

/**
 * holders_print() - print the holders of the dma-buf with inode @ino
 * @hs:  a scan
 * @ino: the buffer's inode number (debugfs "ino")
 *
 * Prints a JSON array of {"pid", "comm", "fds", "maps"} with --json, else
 * holders_text().
 */
void holders_print(const struct holders *hs, unsigned long ino)
{
	char text[1024];
	int first = 1;

	if (!json) {
		holders_text(hs, ino, text, sizeof(text));
		fputs(text, stdout);
		return;
	}
	putchar('[');
	for (size_t i = 0; i < hs->n; i++) {
		const struct holder *h = &hs->h[i];

		if (h->ino != ino)
			continue;
		printf("%s{\"pid\": %d, \"comm\": ", first ? "" : ", ",
		       h->pid);
		json_str(h->comm);
		printf(", \"fds\": %u, \"maps\": %u}", h->fds, h->maps);
		first = 0;
	}
	putchar(']');
}
