// SPDX-License-Identifier: MIT
/*
 * Who may allocate (Documentation/ion.rst, "Who may allocate"): /dev/ion
 * and every dma-heap node of ion's (the ion-* nodes and the mainline-named
 * aliases: every entry of /sys/class/ion_dma_heap) are 0600 root, so an
 * ordinary user is refused (EACCES); udev/60-ion.rules, which make install ships, covers
 * every node, and once a node has the group and mode its rule sets, a
 * member of that group may open it and allocate while other users are
 * still refused.  The guest has no udev: the test applies the rules'
 * GROUP and MODE itself, as udevd would, and restores the nodes after.
 */
#include <dirent.h>
#include <grp.h>
#include <linux/dma-heap.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ion_test_util.h"

#define RULES		"/etc/udev/rules.d/60-ion.rules"
#define DH_DIR		"/dev/dma_heap"
#define DH_CLASS	"/sys/class/ion_dma_heap"
#define USER		65534
#define MAX_NODES	32

struct node {
	char path[300];
	char group[32];
	mode_t mode;
	int ruled;
};

static struct node nodes[MAX_NODES];
static int nnodes;

static void add_node(const char *path)
{
	if (nnodes < MAX_NODES)
		snprintf(nodes[nnodes++].path, sizeof(nodes[0].path), "%s",
			 path);
}

/* /dev/ion and ion's dma-heap nodes: mainline's are not in its class. */
static void find_nodes(void)
{
	struct dirent *e;
	DIR *d = opendir(DH_CLASS);
	char path[300];

	add_node(IT_DEV);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), DH_DIR "/%s", e->d_name);
		add_node(path);
	}
	if (d)
		closedir(d);
}

/* The value of KEY=="..." or KEY="..." in @line, into @out. */
static int rule_value(const char *line, const char *key, char *out,
		      size_t size)
{
	const char *p = strstr(line, key);
	size_t n;

	if (!p)
		return -1;
	p += strlen(key);
	p += strspn(p, "=");
	if (*p++ != '"')
		return -1;
	n = strcspn(p, "\"");
	snprintf(out, size, "%.*s", (int)n, p);
	return 0;
}

static int load_rules(void)
{
	char *text, *line, *save, kernel[64], mode[16], path[300];
	int i, lines = 0;

	if (it_read_file(RULES, &text) < 0)
		return -1;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || rule_value(line, "KERNEL", kernel,
						 sizeof(kernel)))
			continue;
		snprintf(path, sizeof(path), "%s/%s",
			 strcmp(kernel, "ion") ? DH_DIR : "/dev", kernel);
		for (i = 0; i < nnodes; i++) {
			if (strcmp(nodes[i].path, path))
				continue;
			if (rule_value(line, "GROUP", nodes[i].group,
				       sizeof(nodes[i].group)) ||
			    rule_value(line, "MODE", mode, sizeof(mode)))
				break;
			nodes[i].mode = strtoul(mode, NULL, 8);
			nodes[i].ruled = 1;
			lines++;
		}
	}
	free(text);
	return lines;
}

/* The gid of @name from /etc/group, or Debian's static gid for it. */
static gid_t group_id(const char *name)
{
	char *text, *line, *save, want[40];
	long gid = -1;

	snprintf(want, sizeof(want), "%s:", name);
	if (it_read_file("/etc/group", &text) >= 0) {
		for (line = strtok_r(text, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			char *p = line + strlen(want);

			if (strncmp(line, want, strlen(want)))
				continue;
			p = strchr(p, ':');	/* past the password */
			gid = p ? atol(p + 1) : -1;
		}
		free(text);
	}
	if (gid < 0 && !strcmp(name, "video"))
		gid = 44;	/* base-passwd's fixed gid */
	return (gid_t)gid;
}

/*
 * In a child running as USER with supplementary group @gid (or none when
 * -1): 0 when @path opens and allocates 4 KiB, else the errno.
 */
static int try_as_user(const char *path, gid_t gid)
{
	int status, fd, ret;
	pid_t pid = fork();

	if (pid == 0) {
		if (it_become_user(USER, gid))
			_exit(200);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(errno);
		if (!strcmp(path, IT_DEV)) {
			ret = it_alloc_fd(fd, 4096, ION_HEAP_SYSTEM_MASK, 0);
		} else {
			struct dma_heap_allocation_data d = {
				.len = 4096, .fd_flags = O_RDWR,
			};

			ret = it_ioctl(fd, DMA_HEAP_IOCTL_ALLOC, &d);
		}
		_exit(ret < 0 ? -ret : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int main(void)
{
	struct it_heaps hs;
	int i, ion = it_setup(&hs), ruled = 0, ret;
	struct stat st;

	close(ion);
	find_nodes();
	tap_ok(nnodes >= 3, "/dev/ion and its dma-heap nodes are there (%d)",
	       nnodes);
	for (i = 0; i < nnodes; i++) {
		tap_ok(!stat(nodes[i].path, &st) &&
		       (st.st_mode & 07777) == 0600 && st.st_uid == 0 &&
		       st.st_gid == 0, "%s is 0600 root:root", nodes[i].path);
		it_expect(-try_as_user(nodes[i].path, (gid_t)-1), EACCES,
			  "%s: an ordinary user is refused", nodes[i].path);
	}

	tap_ok(load_rules() > 0, "%s is there", RULES);
	for (i = 0; i < nnodes; i++)
		ruled += nodes[i].ruled;
	tap_ok(ruled == nnodes, "its rules cover every node (%d of %d)", ruled,
	       nnodes);

	for (i = 0; i < nnodes; i++) {
		gid_t gid;

		if (!nodes[i].ruled)
			continue;
		gid = group_id(nodes[i].group);
		if (gid == (gid_t)-1 || chown(nodes[i].path, 0, gid) ||
		    chmod(nodes[i].path, nodes[i].mode)) {
			tap_ok(0, "%s: apply its rule", nodes[i].path);
			continue;
		}
		ret = try_as_user(nodes[i].path, gid);
		it_expect(-ret, 0, "%s: with its rule (group %s, mode %04o) a member allocates",
			  nodes[i].path, nodes[i].group, nodes[i].mode);
		it_expect(-try_as_user(nodes[i].path, (gid_t)-1), EACCES,
			  "%s: a user outside group %s is still refused",
			  nodes[i].path, nodes[i].group);
		if (chown(nodes[i].path, 0, 0) || chmod(nodes[i].path, 0600))
			tap_diag("%s: could not restore 0600 root", nodes[i].path);
	}
	return tap_exit();
}
