// SPDX-License-Identifier: MIT
/*
 * ion-bench: finding the implementations: ion's heaps, the dma-heap nodes,
 * udmabuf, anon, and the +helpers, memcg and +trace twins.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/udmabuf.h>
#include <ion/ion.h>

#include "ion-bench.h"

struct impl impls[MAX_IMPLS];
int nimpls;

/* A new implementation @name, or NULL when it is not selected (-i). */
static struct impl *add_impl(const char *name, enum kind kind)
{
	struct impl *im;

	if (nimpls == MAX_IMPLS || !selected(only_impls, name))
		return NULL;
	im = &impls[nimpls++];
	memset(im, 0, sizeof(*im));
	snprintf(im->name, sizeof(im->name), "%s", name);
	im->kind = kind;
	im->fd = -1;
	return im;
}

/* "ion_system_contig_heap" -> "ion-system-contig" */
static void ion_impl_name(const char *heap, char *out, size_t n)
{
	const char *p = strncmp(heap, "ion_", 4) ? heap : heap + 4;
	size_t len;

	snprintf(out, n, "ion-%s", p);
	len = strlen(out);
	if (len > 5 && !strcmp(out + len - 5, "_heap"))
		out[len - 5] = 0;
	for (char *c = out; *c; c++)
		if (*c == '_')
			*c = '-';
}

static void set_pool_file(struct impl *im, const char *heap)
{
	char st[2048];

	snprintf(im->pool_file, sizeof(im->pool_file), HEAP_DEBUGFS "%s", heap);
	im->pooled = pool_state(im, st, sizeof(st));
	if (im->pooled)
		progress("%s: pool counters in %s: every run waits for them",
			 im->name, im->pool_file);
	if (!helper_file[0]) {
		memcpy(helper_file, im->pool_file, sizeof(helper_file));
		if (helper_bytes() < 0)
			helper_file[0] = 0;
		else
			progress("helper CPUs' bytes in %s (parallel_helper_bytes), read around every alloc_free run",
				 helper_file);
	}
}

static void add_ion_impl(const struct ion_heap_data *h, const char *name,
			 unsigned int flags)
{
	struct impl *im = add_impl(name, K_ION);

	if (!im)
		return;
	im->heap_mask = 1U << h->heap_id;
	im->flags = flags;
	set_pool_file(im, h->name);
	/* issue 20: delayed allocation against what it defers */
	if (h->type == ION_HEAP_TYPE_AUTO)
		im->pair_with = "ion-system";
}

/* A twin of ion-system @name from the system heap @h, or NULL. */
static struct impl *add_system_twin(const char *name,
				    const struct ion_heap_data *h)
{
	struct impl *tw = add_impl(name, K_ION);

	if (!tw)
		return NULL;
	tw->heap_mask = 1U << h->heap_id;
	tw->flags = ION_FLAG_CACHED;
	set_pool_file(tw, h->name);
	return tw;
}

/*
 * The memcg twins of ion-system (see the head comment), from the system
 * heap @h, when cgroup2 and the memory controller are there; selected by
 * name, whether ion-system is or not.
 */
static void add_memcg_twins(const struct ion_heap_data *h)
{
	static const char *const names[] = {
		"ion-system-memcg", "ion-system-memcg-off",
	};
	struct impl *tw;
	int i, ready = 0;

	for (i = 0; i < 2; i++) {
		if (!selected(only_impls, names[i]))
			continue;
		if (!ready && setup_memcg())
			return;
		ready = 1;
		tw = add_system_twin(names[i], h);
		if (!tw)
			return;
		tw->in_cgroup = 1;
		tw->charge = !i;
		tw->pair_with = i ? NULL : names[1];
		progress("%s: ion-system from %s, memcg_charge %s", names[i],
			 CG_BENCH, i ? "N" : "Y");
	}
}

/*
 * ion-system+trace (see the head comment), from the system heap @h, when
 * tracefs has ion's events; selected by name.
 */
static void add_trace_twin(const struct ion_heap_data *h)
{
	struct impl *tw;

	if (!selected(only_impls, "ion-system+trace") || setup_tracing())
		return;
	tw = add_system_twin("ion-system+trace", h);
	if (!tw)
		return;
	tw->traced = 1;
	tw->pair_with = "ion-system";
	progress("ion-system+trace: ion-system with ion's events on in %s",
		 trace_dir);
}

static void find_ion(void)
{
	char name[64];
	int err, n;

	err = ion_device_open(&iondev);
	if (err) {
		progress("/dev/ion: %s: no ion implementations", strerror(-err));
		return;
	}
	n = ion_device_heap_count(iondev);
	for (int i = 0; i < n; i++) {
		const struct ion_heap_data *h = ion_device_heap(iondev, i);

		progress("ion heap %s: type %u id %u", h->name, h->type,
			 h->heap_id);
		ion_impl_name(h->name, name, sizeof(name));
		add_ion_impl(h, name, ION_FLAG_CACHED);
		if (h->type != ION_HEAP_TYPE_SYSTEM)
			continue;
		snprintf(name + strlen(name), sizeof(name) - strlen(name),
			 "-uncached");
		add_ion_impl(h, name, 0);
		memcg_heap = h;
	}
}

/* /dev/dma_heap/system and ion's own nodes /dev/dma_heap/ion-*. */
static int add_dma_heap(const char *node, void *data)
{
	int ours = !strncmp(node, "ion-", 4), err, n;
	char name[300], heap[64];
	struct impl *im;
	struct stat st;

	/* "system" is mainline's only where its class has it (ion's alias else). */
	if (!ours && (strcmp(node, "system") ||
		      stat("/sys/class/dma_heap/system", &st)))
		return 0;
	snprintf(name, sizeof(name), ours ? "%s-dmaheap" : "dma_heap-%s", node);
	if (!selected(only_impls, name))
		return 0;
	/* Bounded run time: of ion's nodes only ion-system by default. */
	if (ours && !only_impls && strcmp(name, "ion-system-dmaheap")) {
		progress("dma-heap node /dev/dma_heap/%s: not timed by default (-i %s)",
			 node, name);
		return 0;
	}
	im = add_impl(name, K_HEAP);
	if (!im)
		return 0;
	err = ion_dma_heap_open(node, &im->heap);
	if (err) {
		progress("/dev/dma_heap/%s: %s", node, strerror(-err));
		nimpls--;
		return 0;
	}
	progress("dma-heap node /dev/dma_heap/%s", node);
	n = ours ? ion_device_heap_count(iondev) : 0;
	for (int i = 0; i < n; i++) {
		const struct ion_heap_data *h = ion_device_heap(iondev, i);

		ion_impl_name(h->name, heap, sizeof(heap));
		if (!strcmp(heap, node))
			set_pool_file(im, h->name);
	}
	return 0;
}

static void find_dma_heaps(void)
{
	int err = ion_dma_heap_foreach(NULL, add_dma_heap, NULL);

	if (err)
		progress("/dev/dma_heap: %s", strerror(-err));
}

/*
 * The "+helpers" twins: implementations of the heap with helper CPUs (the
 * one whose debugfs file has parallel_helper_bytes), run once more with
 * parallel_helpers on.  By default ion-system's only, to bound the run;
 * -i names others (ion-system-uncached+helpers, ...).
 */
static void add_twins(void)
{
	char name[sizeof(impls[0].name)];
	int n = nimpls;

	if (helpers_orig < 0 || !helpers_on || !helper_file[0])
		return;
	for (int i = 0; i < n; i++) {
		struct impl *tw;

		if (strcmp(impls[i].pool_file, helper_file))
			continue;
		if (strlen(impls[i].name) + 9 > sizeof(name) - 1)
			continue;
		memcpy(name, impls[i].name, strlen(impls[i].name) + 1);
		strcat(name, "+helpers");
		if (!only_impls && strcmp(name, "ion-system+helpers"))
			continue;
		tw = add_impl(name, impls[i].kind);
		if (!tw)
			continue;
		memcpy(tw, &impls[i], sizeof(*tw));
		memcpy(tw->name, name, sizeof(name));
		tw->helpers = helpers_on;
		tw->big_cold_only = 1;
		progress("%s: %s with parallel_helpers %d, alloc_free_cold above 1 MiB",
			 name, impls[i].name, helpers_on);
	}
}

void find_impls(void)
{
	struct impl *im;
	int c;

	find_ion();
	find_dma_heaps();
	for (c = 0; c < nimpls && strcmp(impls[c].name, "dma_heap-system"); c++)
		;
	if (c == nimpls)
		progress("note: no dma_heap-system: the report has no peer to compare with");
	im = add_impl("udmabuf", K_UDMABUF);
	if (im) {
		im->fd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
		if (im->fd < 0) {
			progress("/dev/udmabuf: %s", strerror(errno));
			nimpls--;
		}
	}
	add_impl("anon", K_ANON);
	add_twins();
	if (memcg_heap)
		add_memcg_twins(memcg_heap);
	if (memcg_heap)
		add_trace_twin(memcg_heap);
}
