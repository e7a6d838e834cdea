/* SPDX-License-Identifier: MIT */
/*
 * ionctl: what its command files (tools/ionctl.c and the files beside
 * this one) share.
 */
#ifndef IONCTL_H
#define IONCTL_H

/* Exit codes. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* the operation failed */
	EXIT_USAGE = 2,		/* bad command line: option, size, heap name */
	EXIT_NODEBUGFS = 3,	/* debugfs not mounted or not permitted */
	EXIT_NOION = 4,		/* /dev/ion missing (ion.ko not loaded?) */
};

/*
 * ionctl trace (tools/ionctl/trace.c): @argv[0] is "trace", its options
 * follow.  Returns an exit code.
 */
int ionctl_trace(int argc, char **argv);

#endif /* IONCTL_H */
