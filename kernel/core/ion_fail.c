// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: fault injection into ion's own fallible steps, driven from
 * debugfs (/sys/kernel/debug/ion/fail/).
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/jump_label.h>
#include <linux/mutex.h>
#include <linux/random.h>

#include "ion_fail.h"
#include "ion_priv.h"

/**
 * DOC: fault injection
 *
 * Each fallible step of ion can be made to fail on purpose, so that
 * the error paths behind it run in any kernel: Debian's kernels have
 * neither FAULT_INJECTION nor FUNCTION_ERROR_INJECTION, so failslab and
 * fail_function cannot reach them there.  The steps, one directory each
 * under /sys/kernel/debug/ion/fail/:
 *
 * - ``alloc``:  a heap's allocate op (the heap is not called; -ENOMEM, and
 *   a heap mask passes the request on to its next heap, as for a real
 *   -ENOMEM)
 * - ``export``: exporting a new buffer's dma-buf (-ENOMEM, after the heap
 *   backed it: the backing is given back)
 * - ``attach``: a device attaching to a buffer (dma_buf_attach(), -ENOMEM)
 * - ``map``:    mapping an attachment for its device (-ENOMEM)
 * - ``kapi``:   ion_alloc() of the kernel API (-ENOMEM)
 * - ``refill``: a heap taking a fresh chunk from the page allocator when its
 *   pool has none (ion_chunk_get_or_alloc(): as if alloc_pages() had
 *   failed, so the system heap tries a smaller order and fails the
 *   buffer with -ENOMEM at order 0)
 * - ``uncached``: making a buffer's fresh pages write-combined in the
 *   linear map page by page (ion_cache_set_uncached(); -ENOMEM).  On x86
 *   it fails the way a split failing inside set_pages_array_wc() does:
 *   the first half of the pages already write-combined, so that the undo
 *   runs; on arm64 before any page is touched.  Whole 2 MiB blocks
 *   (set_memory_wc()) do not reach it.
 * - ``contig``: the auto heap's one contiguous range for a direct device
 *   (ion_auto_alloc_contig(): as if the DMA API had no such range, so
 *   that the choice falls back to scattered chunks, or a move is refused)
 *
 * Each directory holds three knobs, read and written as decimal numbers,
 * and a counter: ``times`` fails the next N calls of the step (counting
 * down to 0), ``interval`` fails every Nth call (0: off), ``probability``
 * fails a call with that chance in percent (0-100), ``hits`` counts the
 * failures injected so far (writable, to reset it).  A call fails when
 * any knob says so.  The knobs are checked only while some knob of some
 * step is non-zero: behind a static key, a step costs one patched-out
 * jump when injection is off.  It is compiled in always, not behind a
 * config option or module parameter, because its whole point is to run
 * in the kernels ion is shipped for; the cost when off is that jump.
 *
 * On a kernel with CONFIG_FUNCTION_ERROR_INJECTION the dma-buf attach
 * and map ops and the kernel API's ion_alloc() are also marked
 * ALLOW_ERROR_INJECTION() for fail_function (the debug kernel).
 */

/**
 * struct ion_fail_knobs - the knobs and counters of one step
 * @name:	 its directory name
 * @times:	 fail the next this many calls
 * @interval:	 fail every this-many-th call (0: off)
 * @probability: fail with this chance in percent (0: off)
 * @calls:	 calls seen while injection was on (for @interval)
 * @hits:	 failures injected
 *
 * All atomics: the steps run concurrently and the knobs change under them.
 */
struct ion_fail_knobs {
	const char *name;
	atomic_t times;
	atomic_t interval;
	atomic_t probability;
	atomic_t calls;
	atomic_t hits;
};

static struct ion_fail_knobs ion_fail_steps[ION_FAIL_NR] = {
	[ION_FAIL_ALLOC] = { .name = "alloc" },
	[ION_FAIL_EXPORT] = { .name = "export" },
	[ION_FAIL_ATTACH] = { .name = "attach" },
	[ION_FAIL_MAP] = { .name = "map" },
	[ION_FAIL_KAPI] = { .name = "kapi" },
	[ION_FAIL_REFILL] = { .name = "refill" },
	[ION_FAIL_UNCACHED] = { .name = "uncached" },
	[ION_FAIL_CONTIG] = { .name = "contig" },
};

DEFINE_STATIC_KEY_FALSE(ion_fail_key);

/* Serializes knob writes with the static key's switching. */
static DEFINE_MUTEX(ion_fail_lock);

/* Is any knob of any step set? */
static bool ion_fail_armed(void)
{
	const struct ion_fail_knobs *s;

	for (s = ion_fail_steps; s < ion_fail_steps + ION_FAIL_NR; s++)
		if (atomic_read(&s->times) > 0 || atomic_read(&s->interval) ||
		    atomic_read(&s->probability))
			return true;
	return false;
}

/**
 * __ion_fail() - should this call of @step fail?
 * @step: the step
 *
 * Called through ion_fail() only while injection is on.
 *
 * Context: Any context.
 * Return: -ENOMEM to fail the call, 0 to let it run.
 */
int __ion_fail(enum ion_fail_step step)
{
	struct ion_fail_knobs *s = &ion_fail_steps[step];
	unsigned int interval = atomic_read(&s->interval);
	unsigned int percent = atomic_read(&s->probability);
	unsigned int n = atomic_inc_return(&s->calls);

	if (atomic_dec_if_positive(&s->times) >= 0 ||
	    (interval && !(n % interval)) ||
	    (percent && get_random_u32() % 100 < percent)) {
		atomic_inc(&s->hits);
		return -ENOMEM;
	}
	return 0;
}

static int ion_fail_knob_get(void *data, u64 *val)
{
	*val = atomic_read(data);
	return 0;
}

static int ion_fail_knob_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	mutex_lock(&ion_fail_lock);
	atomic_set(data, val);
	if (ion_fail_armed())
		static_branch_enable(&ion_fail_key);
	else
		static_branch_disable(&ion_fail_key);
	mutex_unlock(&ion_fail_lock);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(ion_fail_knob_fops, ion_fail_knob_get,
			 ion_fail_knob_set, "%llu\n");

static int ion_fail_percent_set(void *data, u64 val)
{
	return val > 100 ? -EINVAL : ion_fail_knob_set(data, val);
}
DEFINE_DEBUGFS_ATTRIBUTE(ion_fail_percent_fops, ion_fail_knob_get,
			 ion_fail_percent_set, "%llu\n");

static int ion_fail_hits_set(void *data, u64 val)
{
	atomic_set(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(ion_fail_hits_fops, ion_fail_knob_get,
			 ion_fail_hits_set, "%llu\n");

/**
 * ion_fail_debugfs_init() - create /sys/kernel/debug/ion/fail/
 * @dev: the device, its debugfs root made
 *
 * The directory goes with the root (ion_debugfs_exit()).
 *
 * Context: Process context (module init).
 */
void ion_fail_debugfs_init(struct ion_device *dev)
{
	struct dentry *root = debugfs_create_dir("fail", dev->debug_root);
	struct ion_fail_knobs *s;

	for (s = ion_fail_steps; s < ion_fail_steps + ION_FAIL_NR; s++) {
		struct dentry *d = debugfs_create_dir(s->name, root);

		debugfs_create_file_unsafe("times", 0600, d, &s->times,
					   &ion_fail_knob_fops);
		debugfs_create_file_unsafe("interval", 0600, d, &s->interval,
					   &ion_fail_knob_fops);
		debugfs_create_file_unsafe("probability", 0600, d,
					   &s->probability,
					   &ion_fail_percent_fops);
		debugfs_create_file_unsafe("hits", 0600, d, &s->hits,
					   &ion_fail_hits_fops);
	}
}
