// SPDX-License-Identifier: MIT
/*
 * heap_carveout: the carveout heap runs full with ENOMEM, a mask with the
 * system heap then falls back to it, and the debugfs figures (used, free,
 * largest free block, fragmentation) follow what was allocated and freed.
 * Its buffers are cached: on x86 uncached ones come in whole 2 MiB blocks
 * (heap_carveout_uncached), which would hide the 1 MiB holes it makes.
 * First, the region is the one the boot set aside: reserve_mem= (6.11+)
 * or, before, memmap=SIZE$START named by ion.carveout_memmap=SIZE@START.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "heap_util.h"

#define BLOCK		(1 << 20)
#define MAX_BLOCKS	1024

struct co_stats {
	long long size, used, free, largest, extents, frag;
};

static int co_load(struct co_stats *st)
{
	struct it_dfs d;
	int ret = it_dfs_load_heap(&d, ION_CARVEOUT_HEAP_NAME);

	if (ret)
		return ret;
	st->size = it_dfs_num(&d, "region_size");
	st->used = it_dfs_num(&d, "used");
	st->free = it_dfs_num(&d, "free");
	st->largest = it_dfs_num(&d, "largest_free");
	st->extents = it_dfs_num(&d, "free_extents");
	st->frag = it_dfs_num(&d, "fragmentation_pct");
	it_dfs_free(&d);
	tap_diag("carveout: size %lld used %lld free %lld largest %lld extents %lld fragmentation %lld%%",
		 st->size, st->used, st->free, st->largest, st->extents,
		 st->frag);
	return st->size < 0 || st->frag < 0 ? -EPROTO : 0;
}

/*
 * A memmap= region is not System RAM: its mappings cannot be split
 * (munmap or mprotect of a part: EINVAL, the mapping intact); a
 * reserve_mem= one's can.  Cached and uncached alike.
 */
static void split_case(int ion, unsigned int flags)
{
	const char *how = flags ? "cached" : "uncached";
	int whole = ht_carveout_memmap(), buf, um, mp, ok;
	unsigned char *p;

	buf = ht_alloc(ion, 4 * 4096, 0, ION_HEAP_TYPE_CARVEOUT, flags);
	p = buf >= 0 ? ht_map(buf, 4 * 4096) : NULL;
	if (!tap_ok(p != NULL, "carveout %s: a mapped buffer", how))
		goto out;
	memset(p, 0x5a, 4 * 4096);
	um = munmap(p, 4096) ? errno : 0;
	mp = mprotect(p + 3 * 4096, 4096, PROT_READ) ? errno : 0;
	ok = whole ? um == EINVAL && mp == EINVAL && p[0] == 0x5a : !um && !mp;
	tap_ok(ok, "carveout %s (%s region): munmap/mprotect of one page %s "
	       "(%s, %s)", how, whole ? "memmap" : "reserve_mem",
	       whole ? "refused with EINVAL, the mapping intact" : "work",
	       um ? strerror(um) : "ok", mp ? strerror(mp) : "ok");
	munmap(um ? p : p + 4096, um ? 4 * 4096 : 3 * 4096);
out:
	if (buf >= 0)
		close(buf);
}

/*
 * The region debugfs shows is the one the command line reserved: source,
 * base (memmap= gives it) and size.
 */
static void region_case(void)
{
	unsigned long long size = 0, base = 0;
	char *cmdline = NULL, *p, *end;
	const char *src, *want;
	struct it_dfs d;

	it_read_file("/proc/cmdline", &cmdline);
	p = cmdline ? strstr(cmdline, "ion.carveout_memmap=") : NULL;
	if (p) {
		want = "memmap";
		size = strtoull(p + strlen("ion.carveout_memmap="), &end, 0);
		size <<= *end == 'M' ? 20 : 0;
		p = strchr(end, '@');
		base = p ? strtoull(p + 1, NULL, 0) : 0;
	} else {
		want = "reserve_mem";
		p = cmdline ? strstr(cmdline, "reserve_mem=") : NULL;
		size = p ? strtoull(p + strlen("reserve_mem="), &end, 0) << 20 : 0;
	}
	free(cmdline);
	if (!tap_ok(!it_dfs_load_heap(&d, ION_CARVEOUT_HEAP_NAME),
		    "carveout: debugfs file"))
		return;
	src = it_dfs_get(&d, "region_source");
	tap_ok(src && !strcmp(src, want) &&
	       (unsigned long long)it_dfs_num(&d, "region_size") == size,
	       "carveout: the region is the %s one of the command line (%s, "
	       "%lld bytes)", want, src ? src : "no region_source",
	       it_dfs_num(&d, "region_size"));
	if (base) {
		src = it_dfs_get(&d, "region_base_hex");
		tap_ok(src && strtoull(src, NULL, 16) == base,
		       "carveout: memmap= region at %#llx (debugfs %s)", base,
		       src ? src : "-");
	}
	it_dfs_free(&d);
}

int main(void)
{
	static int bufs[MAX_BLOCKS];
	unsigned int co_mask = 1U << ION_HEAP_TYPE_CARVEOUT;
	struct co_stats st0, st;
	struct it_heaps hs;
	int ion, n = 0, i, ret, fb;
	char heap[ION_MAX_HEAP_NAME];

	ion = it_setup(&hs);
	if (!it_heap_find(&hs, ION_CARVEOUT_HEAP_NAME)) {
		tap_skip("carveout", "heap not registered (no reserve_mem or memmap region)");
		return tap_exit();
	}
	region_case();
	split_case(ion, ION_FLAG_CACHED);
	split_case(ion, 0);
	if (!tap_ok(!co_load(&st0), "carveout: debugfs figures readable"))
		return tap_exit();
	tap_ok(st0.used == 0 && st0.free == st0.size &&
	       st0.largest == st0.size && st0.frag == 0,
	       "carveout: idle region is one free block");

	for (n = 0; n < MAX_BLOCKS; n++) {
		ret = ht_alloc(ion, BLOCK, 0, ION_HEAP_TYPE_CARVEOUT,
			       ION_FLAG_CACHED);
		if (ret < 0)
			break;
		bufs[n] = ret;
	}
	it_expect(ret < 0 ? ret : 0, ENOMEM,
		  "carveout: full after %d MiB, then ENOMEM", n);
	tap_ok(n == st0.size / BLOCK, "carveout: the whole region was usable");
	co_load(&st);
	tap_ok(st.used == st0.size && st.free == 0 && st.frag == 0,
	       "carveout: full region shows no free space");

	fb = it_alloc_fd(ion, BLOCK, co_mask | ION_HEAP_SYSTEM_MASK, 0);
	it_buffer_heap(&hs, fb, heap, sizeof(heap));
	tap_ok(fb >= 0 && !strcmp(heap, ION_SYSTEM_HEAP_NAME),
	       "carveout full: mask falls back to the system heap (got %s)",
	       fb >= 0 ? heap : strerror(-fb));
	if (fb >= 0)
		close(fb);

	for (i = 0; i < n; i += 2)
		close(bufs[i]);
	co_load(&st);
	tap_ok(st.free == (long long)((n + 1) / 2) * BLOCK &&
	       st.largest == BLOCK && st.extents == (n + 1) / 2 &&
	       st.frag > 90,
	       "carveout: every other block freed: %lld free extents of 1 MiB, %lld%% fragmented",
	       st.extents, st.frag);
	ret = ht_alloc(ion, 2 * BLOCK, 0, ION_HEAP_TYPE_CARVEOUT,
		       ION_FLAG_CACHED);
	it_expect(ret < 0 ? ret : 0, ENOMEM,
		  "carveout: fragmented, 2 MiB does not fit though %lld MiB are free",
		  st.free / BLOCK);
	if (ret >= 0)
		close(ret);

	for (i = 1; i < n; i += 2)
		close(bufs[i]);
	co_load(&st);
	tap_ok(st.used == 0 && st.largest == st0.size && st.frag == 0,
	       "carveout: all freed: one free block again");
	close(ion);
	return tap_exit();
}
