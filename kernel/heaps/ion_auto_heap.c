// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the auto heap - delayed allocation.  A buffer is exported with no
 * memory behind it; each attach records what the device needs; the first
 * use that needs memory collates that and chooses the backing
 * (ion_auto_backing.c).
 */
#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/dma-map-ops.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/iommu.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "ion_heap.h"
#include "ion_auto.h"
#include "ion_heaps.h"

/**
 * DOC: auto heap
 *
 * The auto heap (ION_AUTO_HEAP_NAME, id ION_HEAP_AUTO_ID, type
 * ION_HEAP_TYPE_AUTO, /dev/dma_heap/ion-auto) is a deferred heap: its
 * allocate op only records the buffer, so an allocation costs the dma-buf
 * export and zeroes nothing.  Its attach op records the device's
 * constraints (&struct ion_auto_dev); its map_dma op, which the core calls
 * at the first use that needs memory, chooses the backing from them.
 *
 * A device attaching once the buffer is backed must fit that backing
 * (ion_auto_fits()).  One that does not gets -ERANGE from the attach op;
 * the core then calls the move op when nothing has the buffer mapped,
 * which backs it anew for every attached device and copies the contents
 * (ion_auto_move()), and otherwise fails the attach with -ERANGE: the
 * backing is never moved under a mapping and DMA is never silently
 * bounced.
 *
 * Deferred buffers could promise more memory than there is: the heap
 * refuses (-ENOMEM) a buffer that would take the bytes promised by its
 * live buffers beyond auto_commit_pct percent of RAM.
 */

static unsigned int auto_commit_pct = 100;
module_param(auto_commit_pct, uint, 0644);
MODULE_PARM_DESC(auto_commit_pct,
		 "auto heap: live buffers may promise at most this percentage of RAM (default 100)");

/*
 * The heap's figures for debugfs: atomics, changed by buffers of any
 * client; @ion_auto_fail_lock protects the last failure's text.
 */
static atomic64_t ion_auto_committed;
static atomic64_t ion_auto_backed_bytes;
static atomic_t ion_auto_backed_kind[ION_AUTO_CONTIG + 1];
static atomic64_t ion_auto_failures;
static atomic64_t ion_auto_moves;
static DEFINE_SPINLOCK(ion_auto_fail_lock);	/* ion_auto_last_failure */
static char ion_auto_last_failure[96];

static void ion_auto_note_failure(const char *why, int err)
{
	atomic64_inc(&ion_auto_failures);
	spin_lock(&ion_auto_fail_lock);
	snprintf(ion_auto_last_failure, sizeof(ion_auto_last_failure),
		 "%s (%d)", why, err);
	spin_unlock(&ion_auto_fail_lock);
}

static int ion_auto_allocate(struct ion_heap *heap, struct ion_buffer *buffer)
{
	u64 max = div_u64((u64)totalram_pages() * auto_commit_pct, 100);
	struct ion_auto_buffer *ab;

	max <<= PAGE_SHIFT;
	if (atomic64_add_return(buffer->size, &ion_auto_committed) > max) {
		atomic64_sub(buffer->size, &ion_auto_committed);
		return -ENOMEM;
	}
	ab = kzalloc(sizeof(*ab), GFP_KERNEL);
	if (!ab) {
		atomic64_sub(buffer->size, &ion_auto_committed);
		return -ENOMEM;
	}
	INIT_LIST_HEAD(&ab->devs);
	ab->why = "no first use yet";
	ab->sum.limit = U64_MAX;
	buffer->priv_virt = ab;
	return 0;
}

static void ion_auto_free(struct ion_buffer *buffer)
{
	struct ion_auto_buffer *ab = buffer->priv_virt;

	WARN_ON_ONCE(!list_empty(&ab->devs));
	atomic64_sub(buffer->size, &ion_auto_committed);
	kfree(ab);
}

static struct sg_table *ion_auto_map_dma(struct ion_heap *heap,
					 struct ion_buffer *buffer)
{
	struct ion_auto_buffer *ab = buffer->priv_virt;
	int ret;

	ret = ion_auto_back(buffer, ab);
	if (ret) {
		ab->fail = ab->why;
		ion_auto_note_failure(ab->why, ret);
		return ERR_PTR(ret);
	}
	ab->fail = NULL;
	atomic64_add(buffer->size, &ion_auto_backed_bytes);
	atomic_inc(&ion_auto_backed_kind[ab->kind]);
	return &ab->sgt;
}

static void ion_auto_unmap_dma(struct ion_heap *heap,
			       struct ion_buffer *buffer)
{
	struct ion_auto_buffer *ab = buffer->priv_virt;

	atomic64_sub(buffer->size, &ion_auto_backed_bytes);
	atomic_dec(&ion_auto_backed_kind[ab->kind]);
	ion_auto_unback(buffer, ab);
}

/* What @dev needs of memory it does DMA to. */
static void ion_auto_record(struct ion_auto_dev *d, struct device *dev)
{
	d->dev = get_device(dev);
	d->count = 1;
	/*
	 * An IOMMU group alone is not translation: a passthrough (identity)
	 * domain's device uses DMA-direct, its mask and all.  A device with
	 * no DMA mask never maps (the core refuses it): it must not make the
	 * backing contiguous or low.
	 */
	d->any_backing = !dev->dma_mask ||
			 (device_iommu_mapped(dev) &&
			  (get_dma_ops(dev) || use_dma_iommu(dev)));
	d->coherent = !dev->dma_mask || dev_is_dma_coherent(dev);
	d->max_seg = dma_get_max_seg_size(dev);
	d->seg_boundary = dma_get_seg_boundary(dev);
	d->limit = d->any_backing ? U64_MAX :
		   min_not_zero(dma_get_mask(dev), dev->bus_dma_limit);
}

/* Collate the attached devices' constraints for debugfs. */
static void ion_auto_summarize(struct ion_auto_buffer *ab)
{
	struct ion_auto_sum sum = { .limit = U64_MAX };
	struct ion_auto_dev *d;

	list_for_each_entry(d, &ab->devs, node) {
		sum.devs++;
		sum.noncoherent += !d->coherent;
		if (d->dev->dma_mask &&
		    (!sum.max_seg || d->max_seg < sum.max_seg))
			sum.max_seg = d->max_seg;	/* of devices that map */
		if (d->any_backing)
			continue;
		sum.direct++;
		sum.limit = min(sum.limit, d->limit);
	}
	WRITE_ONCE(ab->sum.devs, sum.devs);
	WRITE_ONCE(ab->sum.direct, sum.direct);
	WRITE_ONCE(ab->sum.limit, sum.limit);
	WRITE_ONCE(ab->sum.max_seg, sum.max_seg);
	WRITE_ONCE(ab->sum.noncoherent, sum.noncoherent);
}

static struct ion_auto_dev *ion_auto_find(struct ion_auto_buffer *ab,
					  struct device *dev)
{
	struct ion_auto_dev *d;

	list_for_each_entry(d, &ab->devs, node)
		if (d->dev == dev)
			return d;
	return NULL;
}

static int ion_auto_attach(struct ion_heap *heap, struct ion_buffer *buffer,
			   struct device *dev)
{
	struct ion_auto_buffer *ab = buffer->priv_virt;
	const char *why;
	struct ion_auto_dev *d = ion_auto_find(ab, dev);

	if (d) {
		d->count++;
		return 0;
	}
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	ion_auto_record(d, dev);
	if (ab->kind != ION_AUTO_WAITING && !ion_auto_fits(ab, d, &why)) {
		ab->fail = why;
		ion_auto_note_failure(why, -ERANGE);
		put_device(d->dev);
		kfree(d);
		return -ERANGE;
	}
	list_add_tail(&d->node, &ab->devs);
	ion_auto_summarize(ab);
	return 0;
}

static void ion_auto_detach(struct ion_heap *heap, struct ion_buffer *buffer,
			    struct device *dev)
{
	struct ion_auto_buffer *ab = buffer->priv_virt;
	struct ion_auto_dev *d = ion_auto_find(ab, dev);

	if (WARN_ON_ONCE(!d) || --d->count)
		return;
	list_del(&d->node);
	put_device(d->dev);
	kfree(d);
	ion_auto_summarize(ab);
}

/*
 * @dev did not fit the backing and nothing has the buffer mapped: list it
 * and move the backing (ion_auto_move()).
 */
static struct sg_table *ion_auto_move_op(struct ion_heap *heap,
					 struct ion_buffer *buffer,
					 struct device *dev)
{
	struct ion_auto_buffer *ab = buffer->priv_virt;
	enum ion_auto_kind old = ab->kind;
	/*
	 * A direct device attached before @dev maps a one-entry backing (a
	 * range, or one chunk of any kind) as one segment: keep it so.
	 */
	bool contig_only = ab->sgt.orig_nents == 1 && ab->sum.direct;
	struct ion_auto_dev *d;
	int ret;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return ERR_PTR(-ENOMEM);
	ion_auto_record(d, dev);
	list_add_tail(&d->node, &ab->devs);
	ret = ion_auto_move(buffer, ab, contig_only);
	if (ret) {
		ion_auto_note_failure(ab->fail, ret);
		list_del(&d->node);
		put_device(d->dev);
		kfree(d);
		return ERR_PTR(ret);
	}
	ab->fail = NULL;
	WRITE_ONCE(ab->moves, ab->moves + 1);
	ion_auto_summarize(ab);
	atomic64_inc(&ion_auto_moves);
	atomic_dec(&ion_auto_backed_kind[old]);
	atomic_inc(&ion_auto_backed_kind[ab->kind]);
	return &ab->sgt;
}

static int ion_auto_phys(struct ion_heap *heap, struct ion_buffer *buffer,
			 phys_addr_t *addr, size_t *len)
{
	struct ion_auto_buffer *ab = buffer->priv_virt;

	if (ab->kind != ION_AUTO_CONTIG)
		return -ENODEV;
	*addr = page_to_phys(ab->page);
	*len = buffer->size;
	return 0;
}

static void ion_auto_debug_show(struct ion_heap *heap, struct seq_file *s)
{
	enum ion_auto_kind k;

	seq_printf(s, "auto_committed_bytes: %lld\n",
		   atomic64_read(&ion_auto_committed));
	seq_printf(s, "auto_backed_bytes: %lld\n",
		   atomic64_read(&ion_auto_backed_bytes));
	for (k = ION_AUTO_SYSTEM; k <= ION_AUTO_CONTIG; k++)
		seq_printf(s, "auto_backed_%s: %d\n", ion_auto_kind_name(k),
			   atomic_read(&ion_auto_backed_kind[k]));
	seq_printf(s, "auto_failures: %lld\n",
		   atomic64_read(&ion_auto_failures));
	seq_printf(s, "auto_moves: %lld\n", atomic64_read(&ion_auto_moves));
	spin_lock(&ion_auto_fail_lock);
	seq_printf(s, "auto_last_failure: %s\n",
		   ion_auto_last_failure[0] ? ion_auto_last_failure : "none");
	spin_unlock(&ion_auto_fail_lock);
	ion_auto_chunks_show(s);
}

/*
 * A buffer's row in debugfs: its state and backing, the constraints of
 * the devices attached now (their number, those without an IOMMU, the
 * smallest DMA mask of those, whether one contiguous range is needed,
 * the smallest segment, the non-coherent ones), the moves, why that
 * backing and the constraint the last failure could not meet.
 */
static void ion_auto_debug_buffer(struct ion_heap *heap,
				  struct ion_buffer *buffer, char *buf,
				  size_t len)
{
	const struct ion_auto_buffer *ab = buffer->priv_virt;
	enum ion_auto_kind kind = READ_ONCE(ab->kind);
	const char *fail = READ_ONCE(ab->fail);
	u64 limit = READ_ONCE(ab->sum.limit);
	unsigned int direct = READ_ONCE(ab->sum.direct);
	struct device *dma_dev = READ_ONCE(ab->dma_dev);
	char mask[24] = "none";

	if (limit != U64_MAX)
		snprintf(mask, sizeof(mask), "%#llx", limit);
	snprintf(buf, len,
		 "state=%s backing=%s devs=%u direct=%u mask=%s contig=%s seg=%u noncoherent=%u moves=%u alloc_dev=%s | why: %s | failed: %s",
		 kind == ION_AUTO_WAITING ? "waiting" : "backed",
		 kind == ION_AUTO_WAITING ? "-" : ion_auto_kind_name(kind),
		 READ_ONCE(ab->sum.devs), direct, mask, direct ? "yes" : "no",
		 READ_ONCE(ab->sum.max_seg), READ_ONCE(ab->sum.noncoherent),
		 READ_ONCE(ab->moves), dma_dev ? dev_name(dma_dev) : "-",
		 READ_ONCE(ab->why), fail ? fail : "-");
}

static const struct ion_heap_ops ion_auto_heap_ops = {
	.allocate = ion_auto_allocate,
	.free = ion_auto_free,
	.phys = ion_auto_phys,
	.map_dma = ion_auto_map_dma,
	.unmap_dma = ion_auto_unmap_dma,
	.attach = ion_auto_attach,
	.detach = ion_auto_detach,
	.move = ion_auto_move_op,
	.debug_show = ion_auto_debug_show,
	.debug_buffer = ion_auto_debug_buffer,
};

static struct ion_heap ion_auto_heap = {
	.name = ION_AUTO_HEAP_NAME,
	.type = ION_HEAP_TYPE_AUTO,
	.id = ION_HEAP_AUTO_ID,
	.ops = &ion_auto_heap_ops,
};

/**
 * ion_auto_heap_init() - register the auto heap
 *
 * Creates the heap's page pools first.
 *
 * Context: Process context (module init).
 * Return: 0, or the -errno of ion_chunk_pool_create() or
 * ion_device_add_heap().
 */
int ion_auto_heap_init(void)
{
	int ret;

	ret = ion_auto_chunks_init();
	if (ret)
		return ret;
	ret = ion_device_add_heap(&ion_auto_heap);
	if (ret)
		ion_auto_chunks_exit();
	return ret;
}

/**
 * ion_auto_heap_exit() - unregister the auto heap, free its pools
 *
 * Context: Process context (module exit).
 */
void ion_auto_heap_exit(void)
{
	ion_device_remove_heap(&ion_auto_heap);
	ion_auto_dma_exit();
	ion_auto_chunks_exit();
}
