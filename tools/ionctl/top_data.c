// SPDX-License-Identifier: MIT
/*
 * ionctl top: one frame's data - debugfs summary, every heap's counters
 * and buffers, every client, and the /proc scan of holders.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ionctl.h"
#include "top.h"

/* Grows @*arr (of @size-byte items) to hold one more; NULL when no memory. */
static void *push(void *arr, size_t *n, size_t *cap, size_t size)
{
	char *a = *(char **)arr;

	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;

		char *na = realloc(a, c * size);

		if (!na)
			return NULL;
		a = na;
		*(char **)arr = a;
		*cap = c;
	}
	memset(a + *n * size, 0, size);
	return a + (*n)++ * size;
}

static unsigned long long get_ull(const struct ion_dbg_file *f,
				  const char *key)
{
	unsigned long long v = 0;

	ion_dbg_get_ull(f, key, &v);
	return v;
}

static void copy_val(char *dst, size_t len, const char *val)
{
	snprintf(dst, len, "%s", val && *val ? val : "-");
}

static int add_buffers(struct top_frame *fr, const char *heap,
		       const struct ion_dbg_file *f)
{
	for (size_t r = 0; r < ion_dbg_nrows(f); r++) {
		struct top_buf *b = push(&fr->bufs, &fr->nbufs, &fr->capbufs,
					 sizeof(*b));

		if (!b)
			return -ENOMEM;
		b->id = strtoull(ion_dbg_cell_by_name(f, r, "buffer"), NULL, 10);
		b->ino = strtoul(ion_dbg_cell_by_name(f, r, "ino"), NULL, 10);
		b->size = strtoull(ion_dbg_cell_by_name(f, r, "size"), NULL, 10);
		b->orphan = !strcmp(ion_dbg_cell_by_name(f, r, "orphan"), "1");
		copy_val(b->heap, sizeof(b->heap), heap);
		copy_val(b->owner, sizeof(b->owner),
			 ion_dbg_cell_by_name(f, r, "owner"));
		copy_val(b->devices, sizeof(b->devices),
			 ion_dbg_cell_by_name(f, r, "devices"));
	}
	return 0;
}

static int read_heap(const char *name, void *data)
{
	struct top_frame *fr = data;
	struct ion_dbg_file *f;
	struct top_heap *h;
	int err;

	err = ion_dbg_read(&f, 0, "%s/heaps/%s", dbgdir, name);
	if (err == -ENOENT || err == -EIO)
		return 0;	/* went away meanwhile */
	if (err)
		return err;
	h = push(&fr->heaps, &fr->nheaps, &fr->capheaps, sizeof(*h));
	if (!h) {
		ion_dbg_free(f);
		return -ENOMEM;
	}
	copy_val(h->name, sizeof(h->name), name);
	h->bytes = get_ull(f, "bytes");
	h->buffers = get_ull(f, "buffers");
	h->allocs = get_ull(f, "allocs");
	h->fails = get_ull(f, "alloc_failures");
	h->refusals = get_ull(f, "quota_refusals");
	copy_val(h->free, sizeof(h->free), ion_dbg_get(f, "free"));
	copy_val(h->pool, sizeof(h->pool), ion_dbg_get(f, "pool_bytes"));
	err = add_buffers(fr, name, f);
	ion_dbg_free(f);
	return err;
}

static int read_client(const char *name, void *data)
{
	struct top_frame *fr = data;
	struct ion_dbg_file *f;
	struct top_client *c;
	int err;

	err = ion_dbg_read(&f, ION_DBG_KEYS_ONLY, "%s/clients/%s", dbgdir,
			   name);
	if (err == -ENOENT || err == -EIO)
		return 0;
	if (err)
		return err;
	c = push(&fr->clients, &fr->nclients, &fr->capclients, sizeof(*c));
	if (!c) {
		ion_dbg_free(f);
		return -ENOMEM;
	}
	copy_val(c->name, sizeof(c->name), name);
	copy_val(c->kind, sizeof(c->kind), ion_dbg_get(f, "kind"));
	c->pid = (int)get_ull(f, "pid");
	c->handles = get_ull(f, "handles");
	c->bytes = get_ull(f, "bytes");
	ion_dbg_free(f);
	return 0;
}

static int by_size(const void *a, const void *b)
{
	const struct top_buf *x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int by_bytes(const void *a, const void *b)
{
	const struct top_client *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

/**
 * top_read() - take one frame
 * @fr: zeroed or top_free()d; filled in
 *
 * Buffers are sorted biggest first, clients by bytes.
 *
 * Return: 0 or -errno (debugfs unreadable, no memory).
 */
int top_read(struct top_frame *fr)
{
	struct ion_dbg_file *f;
	struct timespec ts;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	fr->when = ts.tv_sec + ts.tv_nsec / 1e9;
	err = ion_dbg_read(&f, ION_DBG_KEYS_ONLY, "%s/summary", dbgdir);
	if (err)
		return err;
	fr->buffers = get_ull(f, "buffers");
	fr->bytes = get_ull(f, "bytes");
	fr->peak = get_ull(f, "peak_bytes");
	ion_dbg_free(f);
	err = ion_dbg_foreach(read_heap, fr, "%s/heaps", dbgdir);
	if (!err)
		err = ion_dbg_foreach(read_client, fr, "%s/clients", dbgdir);
	if (!err)
		err = holders_scan(&fr->hs);
	if (err)
		return err;
	qsort(fr->bufs, fr->nbufs, sizeof(*fr->bufs), by_size);
	qsort(fr->clients, fr->nclients, sizeof(*fr->clients), by_bytes);
	return 0;
}

void top_free(struct top_frame *fr)
{
	free(fr->heaps);
	free(fr->bufs);
	free(fr->clients);
	holders_free(&fr->hs);
	memset(fr, 0, sizeof(*fr));
}

/**
 * top_rate() - a heap's allocations and failures per second since @prev
 * @prev: the previous frame, or NULL
 * @h:    a heap of the current frame, taken at @now
 * @now:  the current frame's time
 * @allocs: per second, or -1 when there is no earlier frame with @h
 * @fails:  likewise
 */
void top_rate(const struct top_frame *prev, const struct top_heap *h,
	      double now, double *allocs, double *fails)
{
	*allocs = -1;
	*fails = -1;
	for (size_t i = 0; prev && i < prev->nheaps; i++) {
		const struct top_heap *p = &prev->heaps[i];
		double dt = now - prev->when;

		if (strcmp(p->name, h->name) || dt <= 0)
			continue;
		*allocs = (double)(h->allocs - p->allocs) / dt;
		*fails = (double)(h->fails - p->fails) / dt;
	}
}
