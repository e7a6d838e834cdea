// SPDX-License-Identifier: MIT
/*
 * heap_fragment: when free memory holds no block of a chunk's order, the
 * system heap builds the buffer from smaller chunks instead of failing.
 *
 * ion_test's ION_TEST_IOC_FRAGMENT takes every free block of order N - 1
 * and gives back the upper one of each pair of buddies, so that no block
 * of order N is left free (checked in /proc/pagetypeinfo, outside the
 * memory such allocations do not reach); direct compaction
 * is kept from rebuilding one (vm.extfrag_threshold 1000, proactive
 * compaction off) for the duration.  Then, cached and uncached:
 * - 1 MiB (one order-8 chunk when memory is whole) comes as 16 chunks of
 *   64 KiB with no order-8 block free;
 * - 64 KiB (one order-4 chunk) comes as 16 single pages with no order-4
 *   block free;
 * and each such buffer reads zero and holds what is written to it.  The
 * chunks are counted in ion_test's kernel-client import (the entries of
 * ion_sg_table()).  The pools are emptied before each allocation, so every
 * chunk comes from the buddy allocator.  On x86 uncached chunks are cut
 * from write-combined 2 MiB blocks: no block is kept empty for the test
 * (uncached_keep_blocks 0), so with the pools empty none is held, a new
 * one cannot be had, and the heap's fallback (chunks converted alone) is
 * what is tested there.
 */
#include "heap_util.h"

#define EXTFRAG	"/proc/sys/vm/extfrag_threshold"
#define PROACTIVE	"/proc/sys/vm/compaction_proactiveness"

static const struct {
	size_t len;
	unsigned int order;	/* of its one chunk */
	unsigned int segs;	/* chunks when no block of @order is free */
} cases[] = {
	{ 1 * MiB, 8, 16 },
	{ 64 * KiB, 4, 16 },
};

/*
 * Free blocks of @order or above, from /proc/pagetypeinfo, or -1; @desc
 * gets the counts by zone and migrate type.  CMA's count too: a free large
 * block anywhere lets direct compaction run (see ion_test_hold_rest()).
 * Isolate's do not (blocks being taken offline or by alloc_contig_range).
 * Where ZONE_DMA is not the only zone (x86: its first 16 MiB) it is left
 * out: its lowmem reserve keeps it from allocations like the heap's, and
 * ion_test's alike.
 */
static long long free_blocks_from(unsigned int order, char *desc, size_t size)
{
	FILE *f = fopen("/proc/pagetypeinfo", "r");
	char line[512], zone[32], type[32], first[32] = "", *p, *end;
	long long sum = 0, dma = 0, n, z;
	unsigned int o, zones = 0;
	size_t used = 0;
	int len, node;

	desc[0] = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d, zone %31[^,], type %31s%n", &node,
			   zone, type, &len) != 3)
			continue;
		for (p = line + len, o = 0, z = 0;; o++) {
			n = strtoll(p, &end, 10);
			if (end == p)
				break;
			if (o >= order)
				z += n;
			p = end;
		}
		if (strcmp(zone, first)) {
			snprintf(first, sizeof(first), "%s", zone);
			zones++;
		}
		if (strcmp(type, "Isolate")) {
			if (strcmp(zone, "DMA"))
				sum += z;
			else
				dma += z;
		}
		if (z && used < size)
			used += snprintf(desc + used, size - used, "%s%s %s %lld",
					 used ? ", " : "", zone, type, z);
	}
	fclose(f);
	if (!zones)
		return -1;
	if (zones == 1)
		return sum + dma;
	if (dma && used < size)
		snprintf(desc + used, size - used, "; DMA not counted");
	return sum;
}

static int fragment(int tfd, unsigned int order, unsigned long long *held)
{
	struct ion_test_fragment f = { .order = order };
	int ret = it_ioctl(tfd, ION_TEST_IOC_FRAGMENT, &f);

	*held = f.held;
	return ret;
}

/* Chunks of a new buffer (its CPU sg entries), or -errno. */
static int buffer_segs(int tfd, int buf)
{
	struct ion_test_import imp;
	int ret = ht_import(tfd, buf, ION_TEST_MODE_CLIENT, &imp);

	if (ret)
		return ret;
	ht_release(tfd, imp.slot);
	return imp.cpu_segs;
}

/* Zero when mapped, then holds a pattern: 0, or -1. */
static int check_contents(int buf, size_t len)
{
	void *p = ht_map(buf, len);
	long bad;

	if (!p)
		return -1;
	ht_cpu_begin(buf);
	bad = it_check_zero(p, len);
	if (bad < 0) {
		it_fill(p, len, 7);
		bad = it_check(p, len, 7);
		if (bad >= 0)
			tap_diag("pattern wrong at byte %ld", bad);
	} else {
		tap_diag("byte %ld not zero", bad);
	}
	ht_cpu_end(buf);
	munmap(p, len);
	return bad < 0 ? 0 : -1;
}

static void one_case(int ion, int tfd, unsigned int c, unsigned int flags,
		     const char *mode)
{
	size_t len = cases[c].len;
	unsigned int order = cases[c].order;
	unsigned long long held;
	int buf, segs, ret, try;
	long long left, pooled;
	char zones[256];

	buf = ht_alloc(ion, len, 0, ION_HEAP_TYPE_SYSTEM, flags);
	segs = buf >= 0 ? buffer_segs(tfd, buf) : buf;
	if (buf >= 0)
		close(buf);
	tap_ok(segs == 1, "%zu KiB %s, memory whole: one chunk of order %u (%d)",
	       len / KiB, mode, order, segs);

	/*
	 * One chunk of the order from fragmented memory means a block of that
	 * order came free between the check and the allocation (a per-CPU
	 * list drained, compaction): the premise failed, not the heap, which
	 * cannot take a block that is not there.  Fragment again, twice at
	 * most; what is asserted is the last attempt.
	 */
	for (try = 0;; try++) {
		if (ht_drop_pools())
			tap_diag("the pools may not be empty");
		ret = fragment(tfd, order, &held);
		left = ret ? -1 : free_blocks_from(order, zones, sizeof(zones));
		pooled = ht_system_num("pool_bytes");
		buf = ret ? -1 : ht_alloc(ion, len, 0, ION_HEAP_TYPE_SYSTEM,
					  flags);
		segs = buf >= 0 ? buffer_segs(tfd, buf) : 0;
		if (segs != 1 || try == 2)
			break;
		tap_diag("%zu KiB %s: one chunk from fragmented memory: a block "
			 "came free meanwhile; again", len / KiB, mode);
		close(buf);
		fragment(tfd, 0, &held);
	}
	if (!tap_ok(!ret, "ion_test fragments free memory for order %u (%llu MiB held)",
		    order, held * it_page() / MiB))
		return;
	tap_ok(left == 0,
	       "no free block of order %u or above left (%s)",
	       order, zones[0] ? zones : "none at all");

	if (tap_ok(buf >= 0, "%zu KiB %s allocates from fragmented memory (%d, pools held %lld bytes)",
		   len / KiB, mode, buf, pooled)) {
		free_blocks_from(order, zones, sizeof(zones));
		tap_ok(segs == (int)cases[c].segs,
		       "%zu KiB %s, fragmented: %u smaller chunks (%d; large blocks free after: %s)",
		       len / KiB, mode, cases[c].segs, segs,
		       zones[0] ? zones : "none");
		tap_ok(!check_contents(buf, len),
		       "%zu KiB %s, fragmented: reads zero, holds a pattern",
		       len / KiB, mode);
		close(buf);
	}
	ret = fragment(tfd, 0, &held);
	tap_ok(!ret && !held, "ion_test gives the blocks back (%d, %llu held)",
	       ret, held);
	if (ht_drop_pools())
		tap_diag("the pools may not be empty");
}

int main(void)
{
	char *extfrag = NULL, *proactive = NULL;
	struct it_param keep;
	struct it_heaps hs;
	unsigned int c, m;
	int ion, tfd;

	ion = it_setup(&hs);
	tfd = ht_test_open();
	if (!tap_ok(tfd >= 0, "open " HT_TEST_DEV " (%d)", tfd))
		return tap_exit();
	it_read_file(EXTFRAG, &extfrag);
	it_read_file(PROACTIVE, &proactive);
	if (!tap_ok(extfrag && !ht_write_str(EXTFRAG, "1000\n", 0),
		    "no direct compaction for the test (" EXTFRAG " 1000)"))
		return tap_exit();
	if (proactive)
		ht_write_str(PROACTIVE, "0\n", 0);
	if (!it_param_save(&keep, "uncached_keep_blocks"))
		it_param_set("uncached_keep_blocks", "0");
	if (ht_drop_pools())
		tap_diag("the pools may not be empty");

	for (c = 0; c < IT_ARRAY_SIZE(cases); c++)
		for (m = 0; m < IT_ARRAY_SIZE(ht_cache_modes); m++)
			one_case(ion, tfd, c, ht_cache_modes[m].flags,
				 ht_cache_modes[m].name);

	ht_write_str(EXTFRAG, extfrag, 0);
	if (proactive)
		ht_write_str(PROACTIVE, proactive, 0);
	it_param_restore(&keep);
	free(extfrag);
	free(proactive);
	close(tfd);
	close(ion);
	return tap_exit();
}
