/* SPDX-License-Identifier: MIT */
/*
 * ionctl: what its commands share.  tools/ionctl.c has main() and the
 * command line, tools/ionctl/ one file per group of commands.
 */
#ifndef IONCTL_H
#define IONCTL_H

#include <ion/ion.h>

#include "ion_debugfs_priv.h"

#define DEBUGFS_DIR	ION_DEBUGFS_DIR

/* Exit codes. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* the operation failed */
	EXIT_USAGE = 2,		/* bad command line: option, size, heap name */
	EXIT_NODEBUGFS = 3,	/* debugfs not mounted or not permitted */
	EXIT_NOION = 4,		/* /dev/ion missing (ion.ko not loaded?) */
};

/* ion's debugfs directory: --debugfs DIR, else $ION_DEBUGFS, else the above. */
extern const char *dbgdir;
/* --json: print JSON. */
extern int json;

/* util.c */
int debugfs_error(int err);
int parse_size(const char *s, unsigned long long *out);
int parse_count(const char *s, unsigned long *out);
int parse_delay(const char *s, double *out);
const char *human(const char *bytes, char *buf, size_t len);
void json_str(const char *s);
void json_val(const char *s);
void json_kv(int first, const char *k, const char *v);
void json_keys(const struct ion_dbg_file *f, int first,
	       const char *const *skip);
int open_dev(struct ion_device **dev);

/* views.c: cmd_buffers() @what */
#define BUFFERS_HOLDERS	0x1	/* --holders: processes and devices */
#define BUFFERS_ORPHANS	0x2	/* --orphans: only orphaned buffers */

/* holders.c: one process holding one dma-buf */
struct holder {
	unsigned long ino;	/* the dma-buf's inode (debugfs "ino") */
	int pid;
	unsigned int fds;	/* its fds of the dma-buf */
	unsigned int maps;	/* its mappings of it (/proc/<pid>/maps lines) */
	char comm[32];
};

struct holders {
	struct holder *h;
	size_t n, cap;
};

int holders_scan(struct holders *hs);
void holders_free(struct holders *hs);
void holders_text(const struct holders *hs, unsigned long ino, char *buf,
		  size_t len);
void holders_print(const struct holders *hs, unsigned long ino);

/* views.c */
int cmd_heaps(void);
int cmd_clients(void);
int cmd_buffers(const char *heap, unsigned int what);
int cmd_quota(void);
int cmd_stat(void);

/* alloc.c */
int cmd_alloc(const char *heap, unsigned long long size, int cached,
	      unsigned long count, int hold);

/* top.c */
int cmd_top(int batch, unsigned long frames, double delay);

/*
 * ionctl trace (tools/ionctl/trace.c): @argv[0] is "trace", its options
 * follow.  Returns an exit code.
 */
int ionctl_trace(int argc, char **argv);

#endif /* IONCTL_H */
