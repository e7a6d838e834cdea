// SPDX-License-Identifier: MIT
/*
 * heap_carveout: the carveout heap runs full with ENOMEM, a mask with the
 * system heap then falls back to it, and the debugfs figures (used, free,
 * largest free block, fragmentation) follow what was allocated and freed.
 * Its buffers are cached: on x86 uncached ones come in whole 2 MiB blocks
 * (heap_carveout_uncached), which would hide the 1 MiB holes it makes.
 */
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
		tap_skip("carveout", "heap not registered (no reserve_mem region)");
		return tap_exit();
	}
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
