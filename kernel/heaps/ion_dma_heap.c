// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion: the DMA heap, memory from the DMA API for a device of ion's own.
 */

/**
 * DOC: ion DMA heap
 *
 * The heap allocates for a platform device that ion creates
 * ("ion-dma-heap", DMA mask of dma_mask_bits bits, 32 by default), so its
 * buffers suit a DMA engine with that addressing limit:
 *
 * - Uncached buffers (no ION_FLAG_CACHED) come from dma_alloc_attrs() with
 *   DMA_ATTR_WRITE_COMBINE and DMA_ATTR_NO_KERNEL_MAPPING (the core maps
 *   the pages itself when a kernel mapping is asked for).  User mappings go
 *   through dma_mmap_attrs(), the sg table through dma_get_sgtable_attrs().
 * - Cached buffers on a device whose DMA is cache coherent (x86; the
 *   device's dev_is_dma_coherent()) come from dma_alloc_attrs() with
 *   DMA_ATTR_NO_KERNEL_MAPPING too: normal cacheable memory that needs no
 *   sync, mapped through dma_mmap_attrs(), which keeps the cacheable
 *   protection on such a device; when it is DMA-direct too, such a
 *   buffer keeps nothing beside its memory (DOC: ion DMA heap, cached
 *   buffers).  On another device they come from dma_alloc_pages(), the
 *   modern form of the old non-consistent attribute: normal cacheable
 *   memory owned by the device, with dma_sync_single_for_cpu() /
 *   _for_device() in begin/end_cpu_access (DMA_BUF_IOCTL_SYNC and
 *   ION_IOC_SYNC end up there).
 *
 * Zeroing: dma_alloc_pages() memsets what it returns, on top of the page
 * allocator's init_on_alloc; dma_alloc_attrs() without a kernel mapping
 * does not, so those buffers are zeroed once, by init_on_alloc (ion
 * clears them itself only when that is off); see
 * ion_dma_zeroed_by_allocator().  A second zeroing cost the cached cold path
 * 1.16-1.20x mainline's instructions (Documentation/bench.md, "Issue 25").
 *
 * Alignment: to the page order that covers the buffer, and with CMA
 * (CONFIG_DMA_CMA, reserved area or not: the default one is not exported)
 * to at most CONFIG_CMA_ALIGNMENT's order (1 MiB): more is -EINVAL.
 *
 * Both are physically contiguous on a DMA-direct device, so phys works.
 * Without CMA (Debian's amd64 6.1 and 6.12 kernels have CONFIG_CMA off;
 * its 7.3 has CONFIG_DMA_CMA on with no area reserved, so the alignment
 * cap applies there) contiguous DMA memory comes from the buddy
 * allocator, so a buffer is at most
 * MAX_PAGE_ORDER pages (4 MiB on x86); a larger request is -ENOMEM and a
 * mask falls back to the next heap.  With CMA (arm64, make check-debug's
 * kernel) the limit is the CMA area: the heap's device has no area of its
 * own, so DMA-direct takes every allocation larger than a page from the
 * default one (cma=, CONFIG_CMA_SIZE_MBYTES) and uses the buddy allocator
 * only when that fails.
 *
 * What x86 ignores: its DMA is cache coherent, so DMA-direct drops
 * DMA_ATTR_WRITE_COMBINE (neither the allocation nor dma_mmap_attrs()
 * changes any attribute) and the dma_sync_* calls do nothing unless
 * swiotlb bounces.  The write-combining an uncached buffer really gets on
 * x86 is ion's own: the core's pgprot_writecombine() for user mappings and
 * vmap, and the linear-map switch of ion_cache_x86.c, done here as for the
 * system heaps.  The heap's device sits behind no IOMMU, so its DMA
 * addresses are physical; importers map buffers for their own devices.
 *
 * The direct map on x86: converting part of a 2 MiB page of the linear map
 * splits it into 4 KiB pages for good (DOC: uncached blocks (x86)).  So an
 * uncached buffer of at most 2 MiB is, on x86, a chunk of the
 * write-combined 2 MiB blocks the system heaps share
 * (ion_cache_uncached_chunk(), of the buffer's order, so aligned as the
 * DMA API would align it), from a block wholly below the device's
 * coherent DMA mask (a new one from ZONE_DMA32 for 32 bits, so also on a
 * machine with memory above 4 GiB); it is mapped to user space with
 * remap_pfn_range() as dma-direct would.  Not under memory encryption
 * (SEV, TDX), where dma-direct hands out decrypted memory that blocks are
 * not.  A larger buffer, or one no block serves, comes from
 * dma_alloc_attrs(), asked from 1 MiB on for whole 2 MiB blocks
 * (ion_cache_uncached_span(): dma-direct allocates the whole order anyway)
 * so that the conversion keeps the large pages.  What still splits, and is
 * counted in direct_map_splits: a buffer under 1 MiB from
 * dma_alloc_attrs() (no block to be had below the mask: rounding it to
 * 2 MiB would cost more memory than the split costs TLB reach), and a CMA
 * allocation, aligned only to CONFIG_CMA_ALIGNMENT (1 MiB by default).
 */
#include <linux/cc_platform.h>
#include <linux/dma-map-ops.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/platform_device.h>
#include <linux/sched/signal.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "ion_heap.h"
#include "ion_cache.h"
#include "ion_dma.h"
#include "ion_heaps.h"

static unsigned int dma_mask_bits = 32;
module_param(dma_mask_bits, uint, 0444);
MODULE_PARM_DESC(dma_mask_bits,
		 "DMA mask of the DMA heap's device in bits (24-64, default 32)");

#define ION_DMA_ATTRS_UNCACHED	(DMA_ATTR_WRITE_COMBINE | \
				 DMA_ATTR_NO_KERNEL_MAPPING)

/* The page order CMA aligns a DMA allocation to at most (with CMA). */
#ifdef CONFIG_DMA_CMA
#define ION_DMA_CMA_ALIGN_ORDER	CONFIG_CMA_ALIGNMENT
#else
#define ION_DMA_CMA_ALIGN_ORDER	0	/* not used */
#endif

static struct platform_device *ion_dma_pdev;
/* Cached buffers are lean (ion_dma_can_lean()); set once at init. */
static bool ion_dma_lean;

/* Uncached buffers cut from write-combined blocks, ever (debugfs). */
static atomic_long_t ion_dma_block_buffers = ATOMIC_LONG_INIT(0);

static int ion_dma_zero(struct sg_table *sgt)
{
	struct sg_page_iter iter;
	unsigned long n = 0;

	for_each_sgtable_page(sgt, &iter, 0) {
		if (!(++n % 256)) {
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
		clear_highpage(sg_page_iter_page(&iter));
	}
	return 0;
}

/*
 * Is memory fresh from the page allocator zeroed already?  With
 * init_on_alloc (Debian's default, CONFIG_INIT_ON_ALLOC_DEFAULT_ON) every
 * page leaving it, CMA's included (alloc_contig_range() ends in
 * post_alloc_hook()), is cleared, unless init_on_free cleared it at free
 * instead.  DMA_ATTR_NO_KERNEL_MAPPING memory is not promised zeroed by the
 * DMA API, but dma-direct takes it from the page allocator
 * (dma_direct_alloc_no_mapping()), and a device's own coherent pool
 * memset()s what it gives: so it needs no second clearing then.
 */
static bool ion_dma_zeroed_by_allocator(void)
{
	return want_init_on_alloc(ION_DMA_GFP) && !want_init_on_free();
}

/**
 * ion_dma_zero_fresh() - zero @sgt's memory, fresh from dma_alloc_attrs()
 * without a kernel mapping, unless the page allocator did
 * @sgt: the buffer's pages
 *
 * Context: Process context; may sleep.
 * Return: 0, or -EINTR when a fatal signal stopped it.
 */
int ion_dma_zero_fresh(struct sg_table *sgt)
{
	return ion_dma_zeroed_by_allocator() ? 0 : ion_dma_zero(sgt);
}

/*
 * An uncached buffer of @len bytes from a write-combined block (DOC
 * above), or -ENOMEM for dma_alloc_attrs() to try.
 */
static int ion_dma_get_chunk(struct device *dev, struct ion_dma_buffer *db,
			     unsigned long len)
{
	unsigned int order = get_order(len);
	struct page *page;
	int ret;

	if (order > ION_CACHE_BLOCK_ORDER ||
	    cc_platform_has(CC_ATTR_MEM_ENCRYPT))
		return -ENOMEM;
	page = ion_cache_uncached_chunk(order, dev_to_node(dev), false,
					dev->coherent_dma_mask);
	if (!page)
		return -ENOMEM;
	ret = sg_alloc_table(&db->sgt, 1, GFP_KERNEL);
	if (ret) {
		ion_cache_uncached_chunk_put(page, order);
		return ret;
	}
	sg_set_page(db->sgt.sgl, page, len, 0);
	db->chunk = page;
	atomic_long_inc(&ion_dma_block_buffers);
	return 0;
}

/*
 * The table to convert and restore: the whole @db->len of a one-entry
 * (dma-direct) buffer, @db->sgt as it is otherwise.
 */
static struct sg_table *ion_dma_conv_table(struct ion_dma_buffer *db,
					   struct sg_table *one,
					   struct scatterlist *sg)
{
	if (db->sgt.orig_nents != 1)
		return &db->sgt;
	ion_cache_one_table(one, sg, sg_page(db->sgt.sgl),
			    db->len >> PAGE_SHIFT);
	return one;
}

/*
 * A buffer from dma_alloc_attrs() without a kernel mapping: uncached
 * (write-combined, in whole 2 MiB blocks from 1 MiB on) unless a block
 * serves it, or cached on a cache-coherent device (DOC above).
 */
static int ion_dma_get_attrs(struct device *dev, struct ion_dma_buffer *db,
			     unsigned long len, bool cached)
{
	struct scatterlist one_sg;
	struct sg_table one;
	int ret;

	if (!cached && !ion_dma_get_chunk(dev, db, len))
		return 0;
	db->len = cached ? len :
		  ion_cache_uncached_span(len >> PAGE_SHIFT) << PAGE_SHIFT;
	/* Whole blocks converted through one sg entry (ion_dma_conv_table()). */
	if (db->len > ION_CHUNK_MAX)
		return -ENOMEM;
	db->attrs = cached ? DMA_ATTR_NO_KERNEL_MAPPING :
		    ION_DMA_ATTRS_UNCACHED;
	db->cookie = dma_alloc_attrs(dev, db->len, &db->dma, ION_DMA_GFP,
				     db->attrs);
	if (!db->cookie)
		return -ENOMEM;
	ret = dma_get_sgtable_attrs(dev, &db->sgt, db->cookie, db->dma, len,
				    db->attrs);
	if (ret)
		goto err_free;
	ret = ion_dma_zero_fresh(&db->sgt);
	if (ret)
		goto err_free_table;
	if (!cached) {
		ret = ion_cache_set_uncached(ion_dma_conv_table(db, &one,
								&one_sg));
		if (ret)
			goto err_free_table;
	}
	return 0;

err_free_table:
	sg_free_table(&db->sgt);
err_free:
	dma_free_attrs(dev, db->len, db->cookie, db->dma, db->attrs);
	return ret;
}

/*
 * The largest alignment a buffer of @len bytes is sure to get.  The DMA API
 * aligns an allocation to the smallest page order that covers it
 * (dma-api.rst); more than that cannot be asked for.  With CMA, DMA-direct
 * takes a buffer of more than a page from the CMA area, which aligns it to
 * that order but at most CONFIG_CMA_ALIGNMENT (cma_alloc_aligned()): a
 * larger alignment is refused rather than given short.
 */
static unsigned long ion_dma_max_align(unsigned long len)
{
	unsigned int order = get_order(len);

	if (IS_ENABLED(CONFIG_DMA_CMA) && len > PAGE_SIZE)
		order = min_t(unsigned int, order, ION_DMA_CMA_ALIGN_ORDER);
	return PAGE_SIZE << order;
}

static int ion_dma_allocate(struct ion_heap *heap, struct ion_buffer *buffer)
{
	unsigned long len = buffer->size, align = buffer->align;
	bool cached = buffer->flags & ION_FLAG_CACHED;
	struct ion_dma_buffer *db;
	int ret;

	if (align > ion_dma_max_align(len))
		return -EINVAL;
	if (len > ION_CHUNK_MAX ||	/* one sg entry for a cached buffer */
	    !ion_heap_leaves_reserve(len >> PAGE_SHIFT, NULL, false))
		return -ENOMEM;
	if (cached && ion_dma_lean)
		return ion_dma_lean_allocate(heap->priv, buffer);
	db = kzalloc(sizeof(*db), GFP_KERNEL);
	if (!db)
		return -ENOMEM;
	if (!cached || dev_is_dma_coherent(heap->priv))
		ret = ion_dma_get_attrs(heap->priv, db, len, cached);
	else
		ret = ion_dma_get_cached(heap->priv, db, len);
	if (ret) {
		kfree(db);
		return ret;
	}
	buffer->priv_virt = db;
	buffer->sg_table = &db->sgt;
	return 0;
}

static void ion_dma_free(struct ion_buffer *buffer)
{
	struct ion_dma_buffer *db = buffer->priv_virt;
	struct device *dev = buffer->heap->priv;
	struct scatterlist one_sg;
	struct sg_table one;

	if (ion_buffer_is_one_chunk(buffer)) {
		ion_dma_lean_free(dev, buffer);
		return;
	}
	if (db->page) {
		dma_free_pages(dev, buffer->size, db->page, db->dma,
			       DMA_BIDIRECTIONAL);
	} else if (db->chunk) {
		ion_cache_uncached_chunk_put(db->chunk,
					     get_order(buffer->size));
	} else if ((buffer->flags & ION_FLAG_CACHED) ||
		   ion_cache_restore_or_leak(ion_dma_conv_table(db, &one,
								&one_sg),
					     buffer->heap->name)) {
		dma_free_attrs(dev, db->len, db->cookie, db->dma, db->attrs);
	}
	sg_free_table(&db->sgt);
	kfree(db);
}

static int ion_dma_phys(struct ion_heap *heap, struct ion_buffer *buffer,
			phys_addr_t *addr, size_t *len)
{
	if (buffer->sg_table->orig_nents != 1)
		return -ENODEV;
	*addr = page_to_phys(sg_page(buffer->sg_table->sgl));
	*len = buffer->size;
	return 0;
}

static int ion_dma_map_user(struct ion_heap *heap, struct ion_buffer *buffer,
			    struct vm_area_struct *vma)
{
	struct ion_dma_buffer *db = buffer->priv_virt;
	struct device *dev = heap->priv;
	bool lean = ion_buffer_is_one_chunk(buffer);
	int ret;

	/* All but an IOMMU's or other ops' mmap remap pfns (ion_compat.h). */
	if (lean || db->page || db->chunk || ion_dma_is_direct(dev)) {
		ret = ion_pfnmap_prepare(vma);
		if (ret)
			return ret;
	}
	if (lean)
		return ion_dma_lean_mmap(dev, buffer, vma);
	if (db->page)
		return dma_mmap_pages(dev, vma, buffer->size, db->page);
	/* As dma-direct maps its own memory; the core set the WC prot. */
	if (db->chunk)
		return remap_pfn_range(vma, vma->vm_start,
				       page_to_pfn(db->chunk) + vma->vm_pgoff,
				       vma->vm_end - vma->vm_start,
				       vma->vm_page_prot);
	return dma_mmap_attrs(dev, vma, db->cookie, db->dma, buffer->size,
			      db->attrs);
}

/* The heap's struct of @buffer, or NULL for a lean one (which is coherent). */
static struct ion_dma_buffer *ion_dma_db(struct ion_buffer *buffer)
{
	return ion_buffer_is_one_chunk(buffer) ? NULL : buffer->priv_virt;
}

static int ion_dma_begin_cpu_access(struct ion_heap *heap,
				    struct ion_buffer *buffer,
				    enum dma_data_direction dir)
{
	struct ion_dma_buffer *db = ion_dma_db(buffer);

	if (db && db->page)
		dma_sync_single_for_cpu(heap->priv, db->dma, buffer->size, dir);
	return 0;
}

static int ion_dma_end_cpu_access(struct ion_heap *heap,
				  struct ion_buffer *buffer,
				  enum dma_data_direction dir)
{
	struct ion_dma_buffer *db = ion_dma_db(buffer);

	if (db && db->page)
		dma_sync_single_for_device(heap->priv, db->dma, buffer->size,
					   dir);
	return 0;
}

static void ion_dma_debug_show(struct ion_heap *heap, struct seq_file *s)
{
	struct device *dev = heap->priv;

	seq_printf(s, "device: %s\n", dev_name(dev));
	seq_printf(s, "dma_mask_bits: %u\n", dma_mask_bits);
	seq_printf(s, "cached_lean: %d\n", ion_dma_lean);
	seq_printf(s, "uncached_block_buffers: %ld\n",
		   atomic_long_read(&ion_dma_block_buffers));
	seq_printf(s, "direct_map_splits: %ld\n", ion_cache_split_count());
	/* With CMA the limit is the default area's free space. */
	if (!IS_ENABLED(CONFIG_DMA_CMA))
		seq_printf(s, "max_contiguous: %lu\n",
			   PAGE_SIZE << MAX_PAGE_ORDER);
	else
		seq_printf(s, "cma_max_align: %lu\n",
			   PAGE_SIZE << ION_DMA_CMA_ALIGN_ORDER);
}

static const struct ion_heap_ops ion_dma_heap_ops = {
	.allocate = ion_dma_allocate,
	.free = ion_dma_free,
	.phys = ion_dma_phys,
	.map_user = ion_dma_map_user,
	.begin_cpu_access = ion_dma_begin_cpu_access,
	.end_cpu_access = ion_dma_end_cpu_access,
	.debug_show = ion_dma_debug_show,
};

/*
 * Mainline's CMA heap: the default CMA area's node (named after its device
 * tree node, "linux,cma" by convention), and its 6.17+ fixed name.
 */
static const struct ion_heap_alias ion_dma_heap_aliases[] = {
	{ .name = "linux,cma" },
	{ .name = "default_cma_region" },
	{ }
};

static struct ion_heap ion_dma_heap = {
	.name = ION_DMA_HEAP_NAME,
	.type = ION_HEAP_TYPE_DMA,
	.id = ION_HEAP_TYPE_DMA,
	.ops = &ion_dma_heap_ops,
	.aliases = ion_dma_heap_aliases,
};

/**
 * ion_dma_heap_init() - create the DMA heap's device and register the heap
 *
 * Context: Process context (module init).
 * Return: 0, -EINVAL for a dma_mask_bits out of range, or the -errno of
 * creating the device or of ion_device_add_heap().
 */
int ion_dma_heap_init(void)
{
	struct platform_device_info info = {
		.name = "ion-dma-heap",
		.id = PLATFORM_DEVID_NONE,
	};
	int ret;

	if (dma_mask_bits < 24 || dma_mask_bits > 64)
		return -EINVAL;
	info.dma_mask = DMA_BIT_MASK(dma_mask_bits);
	ion_dma_pdev = platform_device_register_full(&info);
	if (IS_ERR(ion_dma_pdev))
		return PTR_ERR(ion_dma_pdev);
	ion_dma_heap.priv = &ion_dma_pdev->dev;
	ion_dma_lean = ion_dma_can_lean(&ion_dma_pdev->dev);
	ion_dma_heap.dev = &ion_dma_pdev->dev;
	ret = ion_device_add_heap(&ion_dma_heap);
	if (ret) {
		platform_device_unregister(ion_dma_pdev);
		return ret;
	}
	return 0;
}

/**
 * ion_dma_heap_exit() - unregister the DMA heap and remove its device
 *
 * Context: Process context (module exit).
 */
void ion_dma_heap_exit(void)
{
	ion_device_remove_heap(&ion_dma_heap);
	platform_device_unregister(ion_dma_pdev);
}
