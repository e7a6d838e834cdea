/* SPDX-License-Identifier: MIT */
/*
 * ionctl top: a frame (top_data.c reads it, top.c shows it).
 */
#ifndef IONCTL_TOP_H
#define IONCTL_TOP_H

#include "ionctl.h"

struct top_heap {
	char name[64];
	unsigned long long bytes, buffers, allocs, fails;
	unsigned long long refusals;	/* quota refusals (debugfs) */
	char free[24];		/* "-" where the heap has no such key */
	char pool[24];
};

struct top_buf {
	unsigned long long id, size;
	unsigned long ino;
	int orphan;
	char heap[64];
	char owner[64];
	char devices[160];
};

struct top_client {
	char name[64];
	char kind[8];
	int pid;
	unsigned long long handles, bytes;
};

struct top_frame {
	double when;		/* CLOCK_MONOTONIC, seconds */
	unsigned long long buffers, bytes, peak;	/* summary */
	struct top_heap *heaps;
	size_t nheaps, capheaps;
	struct top_buf *bufs;	/* biggest first */
	size_t nbufs, capbufs;
	struct top_client *clients;	/* most bytes first */
	size_t nclients, capclients;
	struct holders hs;
};

int top_read(struct top_frame *fr);
void top_free(struct top_frame *fr);
void top_rate(const struct top_frame *prev, const struct top_heap *h,
	      double now, double *allocs, double *fails);

#endif /* IONCTL_TOP_H */
