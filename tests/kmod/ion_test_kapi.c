// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion_test: ION_TEST_IOC_KAPI - every call of <linux/ion.h>, each with its
 * effect checked, in a kernel client made for the command.
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/fdtable.h>
#include <linux/ion.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "ion_test.h"
#include "ion_test_priv.h"

/**
 * struct ion_test_kapi_run - one ION_TEST_IOC_KAPI
 * @arg:    the command's argument, results go there
 * @client: the client made for the command
 * @other:  another client (the file's)
 * @handle: @client's import of @arg->fd, or NULL
 * @dmabuf: the dma-buf of @arg->fd (a reference)
 */
struct ion_test_kapi_run {
	struct ion_test_kapi *arg;
	struct ion_client *client;
	struct ion_client *other;
	struct ion_handle *handle;
	struct dma_buf *dmabuf;
};

static void ion_test_kapi_check(struct ion_test_kapi *arg, u32 bit, bool ok)
{
	arg->ran |= bit;
	if (!ok) {
		arg->failed |= bit;
		pr_debug("ion_test: kapi check %#x failed\n", bit);
	}
}

static bool ion_test_kapi_pattern_ok(const u8 *p, size_t len, u32 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (u8)(seed + i))
			return false;
	return true;
}

/* ion_import_fd, then read through ion_map_kernel what user space wrote. */
static void ion_test_kapi_import(struct ion_test_kapi_run *r)
{
	struct ion_test_kapi *arg = r->arg;
	bool ok = false;
	void *vaddr;

	r->handle = ion_import_fd(r->client, arg->fd);
	ion_test_kapi_check(arg, ION_TEST_KAPI_IMPORT_FD,
			    !IS_ERR_OR_NULL(r->handle));
	if (IS_ERR_OR_NULL(r->handle)) {
		r->handle = NULL;
		return;
	}
	vaddr = ion_map_kernel(r->client, r->handle);
	if (!IS_ERR_OR_NULL(vaddr)) {
		dma_buf_begin_cpu_access(r->dmabuf, DMA_BIDIRECTIONAL);
		ok = ion_test_kapi_pattern_ok(vaddr, r->dmabuf->size, arg->seed);
		dma_buf_end_cpu_access(r->dmabuf, DMA_BIDIRECTIONAL);
		ion_unmap_kernel(r->client, r->handle);
	}
	ion_test_kapi_check(arg, ION_TEST_KAPI_KMAP_READ, ok);
}

/* ion_share_dma_buf gives the fd's dma-buf; importing it again is @handle. */
static void ion_test_kapi_dmabuf(struct ion_test_kapi_run *r)
{
	struct dma_buf *dmabuf = ion_share_dma_buf(r->client, r->handle);
	struct ion_handle *h;

	ion_test_kapi_check(r->arg, ION_TEST_KAPI_SHARE_DMABUF,
			    dmabuf == r->dmabuf);
	if (!IS_ERR(dmabuf))
		dma_buf_put(dmabuf);
	h = ion_import_dma_buf(r->client, r->dmabuf);
	ion_test_kapi_check(r->arg, ION_TEST_KAPI_IMPORT_DMABUF,
			    h == r->handle && !IS_ERR(h));
	if (!IS_ERR_OR_NULL(h))
		ion_free(r->client, h);
}

/*
 * ion_phys answers with the first page's address, or -ENODEV from a heap
 * without a phys op (user space checks which heap should answer).
 */
static void ion_test_kapi_phys(struct ion_test_kapi_run *r,
			       struct sg_table *sgt)
{
	struct ion_test_kapi *arg = r->arg;
	ion_phys_addr_t addr;
	size_t len;
	bool ok;

	arg->phys_err = ion_phys(r->client, r->handle, &addr, &len);
	if (!arg->phys_err)
		ok = addr == sg_phys(sgt->sgl) && len == r->dmabuf->size;
	else
		ok = arg->phys_err == -ENODEV;
	ion_test_kapi_check(arg, ION_TEST_KAPI_PHYS, ok);
}

/*
 * Another client's table of the same buffer is another table, mapped at
 * the same time; and that client's handle means nothing to @r->client.
 */
static void ion_test_kapi_other(struct ion_test_kapi_run *r,
				struct sg_table *sgt, struct device *dev)
{
	struct ion_handle *oh = ion_import_dma_buf(r->other, r->dmabuf);
	struct sg_table *osgt;
	ion_phys_addr_t addr;
	size_t len;
	bool ok;

	if (IS_ERR_OR_NULL(oh)) {
		ion_test_kapi_check(r->arg, ION_TEST_KAPI_SG_OWN, false);
		return;
	}
	/*
	 * The same memory mapped twice at once: without SKIP_CPU_SYNC the
	 * DMA-API debugging of the debug kernel reports "overlapping
	 * mappings aren't supported" (cache maintenance of one mapping would
	 * disturb the other on a non-coherent system); nothing is synced
	 * through this second mapping.
	 */
	osgt = ion_sg_table(r->other, oh);
	ok = !IS_ERR_OR_NULL(osgt) && osgt != sgt &&
	     !dma_map_sgtable(dev, osgt, DMA_BIDIRECTIONAL,
			      DMA_ATTR_SKIP_CPU_SYNC);
	if (ok)
		dma_unmap_sgtable(dev, osgt, DMA_BIDIRECTIONAL,
				  DMA_ATTR_SKIP_CPU_SYNC);
	ion_test_kapi_check(r->arg, ION_TEST_KAPI_SG_OWN, ok);
	ion_test_kapi_check(r->arg, ION_TEST_KAPI_FOREIGN,
			    ion_phys(r->client, oh, &addr, &len) == -EINVAL);
	ion_free(r->other, oh);
}

/* ion_sg_table: the handle's own table, DMA-mappable for a device. */
static void ion_test_kapi_sg(struct ion_test_kapi_run *r)
{
	struct device *dev = ion_test_probe_device();
	struct ion_test_kapi *arg = r->arg;
	struct sg_table *sgt;
	int ret;

	sgt = ion_sg_table(r->client, r->handle);
	if (IS_ERR_OR_NULL(sgt)) {
		ion_test_kapi_check(arg, ION_TEST_KAPI_SG_DMA, false);
		return;
	}
	arg->sg_nents = sgt->orig_nents;
	ion_test_kapi_phys(r, sgt);
	ret = dma_map_sgtable(dev, sgt, DMA_BIDIRECTIONAL, 0);
	ion_test_kapi_check(arg, ION_TEST_KAPI_SG_DMA,
			    !ret && sgt == ion_sg_table(r->client, r->handle) &&
			    ion_test_sgt_size(sgt) == r->dmabuf->size);
	ion_test_kapi_other(r, sgt, dev);
	if (!ret) {
		arg->dma_nents = sgt->nents;
		dma_unmap_sgtable(dev, sgt, DMA_BIDIRECTIONAL, 0);
	}
}

/* ion_share_fd() called from a work item, on the system workqueue. */
struct ion_test_kapi_work {
	struct work_struct work;
	struct ion_client *client;
	struct ion_handle *handle;
	int fd;
};

static void ion_test_kapi_work_fn(struct work_struct *work)
{
	struct ion_test_kapi_work *w =
		container_of(work, struct ion_test_kapi_work, work);

	w->fd = ion_share_fd(w->client, w->handle);
	if (w->fd >= 0)	/* in the kernel threads' table: take it out */
		close_fd(w->fd);
}

/* A kernel thread gets no fd: kernel threads share one file table. */
static bool ion_test_kapi_kthread_refused(struct ion_client *client,
					  struct ion_handle *h)
{
	struct ion_test_kapi_work w = { .client = client, .handle = h };

	INIT_WORK_ONSTACK(&w.work, ion_test_kapi_work_fn);
	schedule_work(&w.work);
	flush_work(&w.work);
	destroy_work_on_stack(&w.work);
	return w.fd == -EINVAL;
}

/* ion_alloc, write through ion_map_kernel, ion_share_fd for user space. */
static void ion_test_kapi_alloc(struct ion_test_kapi_run *r)
{
	struct ion_test_kapi *arg = r->arg;
	struct dma_buf *dmabuf;
	struct ion_handle *h;
	u8 *vaddr;
	size_t i;

	h = ion_alloc(r->client, arg->len, 0, arg->heap_mask, arg->flags);
	if (IS_ERR_OR_NULL(h)) {
		ion_test_kapi_check(arg, ION_TEST_KAPI_ALLOC, false);
		return;
	}
	vaddr = ion_map_kernel(r->client, h);
	dmabuf = ion_share_dma_buf(r->client, h);
	if (!IS_ERR_OR_NULL(vaddr) && !IS_ERR(dmabuf)) {
		dma_buf_begin_cpu_access(dmabuf, DMA_BIDIRECTIONAL);
		for (i = 0; i < dmabuf->size; i++)
			vaddr[i] = arg->seed + 1 + i;
		dma_buf_end_cpu_access(dmabuf, DMA_BIDIRECTIONAL);
	}
	ion_test_kapi_check(arg, ION_TEST_KAPI_ALLOC,
			    !IS_ERR_OR_NULL(vaddr) && !IS_ERR(dmabuf) &&
			    dmabuf->size == PAGE_ALIGN(arg->len));
	if (!IS_ERR(dmabuf))
		dma_buf_put(dmabuf);
	if (!IS_ERR_OR_NULL(vaddr))
		ion_unmap_kernel(r->client, h);
	arg->share_fd = ion_share_fd(r->client, h);
	ion_test_kapi_check(arg, ION_TEST_KAPI_SHARE_FD, arg->share_fd >= 0);
	ion_test_kapi_check(arg, ION_TEST_KAPI_KTHREAD_FD,
			    ion_test_kapi_kthread_refused(r->client, h));
	ion_test_kapi_check(arg, ION_TEST_KAPI_FREE, !ion_free(r->client, h));
}

/* Does every call of @client refuse @h with -EINVAL? */
static bool ion_test_kapi_refused(struct ion_client *client,
				  struct ion_handle *h)
{
	ion_phys_addr_t addr;
	size_t len;
	bool ok;

	ok = ion_phys(client, h, &addr, &len) == -EINVAL &&
	     PTR_ERR(ion_map_kernel(client, h)) == -EINVAL &&
	     PTR_ERR(ion_sg_table(client, h)) == -EINVAL &&
	     PTR_ERR(ion_share_dma_buf(client, h)) == -EINVAL &&
	     ion_share_fd(client, h) == -EINVAL &&
	     ion_free(client, h) == -EINVAL;
	ion_unmap_kernel(client, h);
	return ok;
}

/*
 * A freed handle is refused by every call, also once the next ion_alloc()
 * got a new handle (whose memory is likely the freed one's).  The new
 * handle is left, with its sg table, for ion_client_destroy().
 */
static void ion_test_kapi_stale(struct ion_test_kapi_run *r)
{
	struct ion_test_kapi *arg = r->arg;
	struct ion_handle *stale, *fresh;
	bool ok;

	stale = ion_alloc(r->client, PAGE_SIZE, 0, arg->heap_mask, arg->flags);
	if (IS_ERR_OR_NULL(stale) || ion_free(r->client, stale)) {
		ion_test_kapi_check(arg, ION_TEST_KAPI_STALE, false);
		return;
	}
	fresh = ion_alloc(r->client, PAGE_SIZE, 0, arg->heap_mask, arg->flags);
	ok = !IS_ERR_OR_NULL(fresh) && fresh != stale &&
	     !IS_ERR(ion_sg_table(r->client, fresh)) &&
	     ion_test_kapi_refused(r->client, stale) &&
	     ion_free(r->client, NULL) == -EINVAL;
	ion_test_kapi_check(arg, ION_TEST_KAPI_STALE, ok);
}

/*
 * A handle that outlived its client names nothing in a client created
 * after it (kernel handle ids are unique among all kernel clients), nor
 * in a client that lived before: every call refuses it, and the new
 * client's first handle is another one.  Both clients go here.
 */
static void ion_test_kapi_dead(struct ion_test_kapi_run *r)
{
	struct ion_test_kapi *arg = r->arg;
	struct ion_handle *stale, *fresh;
	struct ion_client *dead, *next;
	bool ok;

	dead = ion_client_create(ion_default_device(), ~0U, "ion_test_dead");
	if (IS_ERR_OR_NULL(dead)) {
		ion_test_kapi_check(arg, ION_TEST_KAPI_DEAD, false);
		return;
	}
	stale = ion_alloc(dead, PAGE_SIZE, 0, arg->heap_mask, arg->flags);
	ion_client_destroy(dead);
	next = ion_client_create(ion_default_device(), ~0U, "ion_test_next");
	if (IS_ERR_OR_NULL(next)) {
		ion_test_kapi_check(arg, ION_TEST_KAPI_DEAD, false);
		return;
	}
	fresh = ion_alloc(next, PAGE_SIZE, 0, arg->heap_mask, arg->flags);
	ok = !IS_ERR_OR_NULL(stale) && !IS_ERR_OR_NULL(fresh) &&
	     fresh != stale && ion_test_kapi_refused(next, stale) &&
	     ion_test_kapi_refused(r->client, stale);
	ion_test_kapi_check(arg, ION_TEST_KAPI_DEAD, ok);
	ion_client_destroy(next);
}

static void ion_test_kapi_run(struct ion_test_kapi_run *r)
{
	ion_test_kapi_import(r);
	if (r->handle) {
		ion_test_kapi_dmabuf(r);
		ion_test_kapi_sg(r);
		ion_test_kapi_check(r->arg, ION_TEST_KAPI_FREE,
				    !ion_free(r->client, r->handle));
	}
	ion_test_kapi_alloc(r);
	ion_test_kapi_stale(r);
	ion_test_kapi_dead(r);
}

/**
 * ion_test_ioc_kapi() - ION_TEST_IOC_KAPI
 * @tf:	  the file, its lock held
 * @uarg: struct ion_test_kapi
 *
 * Context: Process context, under @tf->lock.
 * Return: 0 (the checks' results are in the argument), or -errno.
 */
long ion_test_ioc_kapi(struct ion_test_file *tf, void __user *uarg)
{
	struct ion_test_kapi arg;
	struct ion_test_kapi_run r = { .arg = &arg, .other = tf->client };
	long ret = 0;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.ran || !arg.len || arg.len > SZ_16M)
		return -EINVAL;
	arg.share_fd = -1;
	arg.failed = 0;
	arg.phys_err = 0;
	arg.sg_nents = 0;
	arg.dma_nents = 0;
	r.dmabuf = dma_buf_get(arg.fd);
	if (IS_ERR(r.dmabuf))
		return PTR_ERR(r.dmabuf);
	r.client = ion_client_create(ion_default_device(), ~0U,
				     "ion_test_kapi");
	if (IS_ERR_OR_NULL(r.client)) {
		ret = r.client ? PTR_ERR(r.client) : -ENOMEM;
		goto out_put;
	}
	ion_test_kapi_run(&r);
	ion_client_destroy(r.client);
	if (copy_to_user(uarg, &arg, sizeof(arg))) {
		if (arg.share_fd >= 0)
			close_fd(arg.share_fd);
		ret = -EFAULT;
	}
out_put:
	dma_buf_put(r.dmabuf);
	return ret;
}
