// SPDX-License-Identifier: MIT
/*
 * heap_kapi: every call of <linux/ion.h> on every heap, cached and
 * uncached, through ion_test's ION_TEST_IOC_KAPI: a kernel client imports
 * a buffer user space filled through mmap and reads it back through
 * ion_map_kernel, shares and re-imports its dma-buf, gets its physical
 * address (contiguous heaps) and its own sg table, which it maps for a
 * device, and another client's handle is refused; it allocates a buffer,
 * writes it through ion_map_kernel and shares it as an fd that user space
 * reads here; a freed handle is refused once the next allocation reused
 * its memory; a handle whose client was destroyed is refused by a client
 * created after it, whose own first handle is another.
 */
#include "heap_util.h"

#define LEN	(64 * 1024)

static const struct {
	unsigned int bit;
	const char *what;
} checks[] = {
	{ ION_TEST_KAPI_IMPORT_FD, "ion_import_fd" },
	{ ION_TEST_KAPI_KMAP_READ, "ion_map_kernel reads what mmap wrote" },
	{ ION_TEST_KAPI_SHARE_DMABUF, "ion_share_dma_buf is the fd's dma-buf" },
	{ ION_TEST_KAPI_IMPORT_DMABUF, "ion_import_dma_buf finds the handle" },
	{ ION_TEST_KAPI_PHYS, "ion_phys: first page, or ENODEV if scattered" },
	{ ION_TEST_KAPI_SG_DMA, "ion_sg_table covers the buffer, DMA-mapped" },
	{ ION_TEST_KAPI_SG_OWN, "another client gets another table" },
	{ ION_TEST_KAPI_FOREIGN, "another client's handle is refused" },
	{ ION_TEST_KAPI_ALLOC, "ion_alloc and a write through ion_map_kernel" },
	{ ION_TEST_KAPI_SHARE_FD, "ion_share_fd" },
	{ ION_TEST_KAPI_KTHREAD_FD,
	  "ion_share_fd from a work item (a kernel thread): EINVAL" },
	{ ION_TEST_KAPI_STALE, "a freed handle is refused by every call" },
	{ ION_TEST_KAPI_FREE, "ion_free and ion_unmap_kernel" },
	{ ION_TEST_KAPI_DEAD,
	  "a handle that outlived its client is refused by later clients" },
};

/* User space fills a buffer, ion_test runs the calls; 0 or -errno. */
static int run(int ion, int tfd, const struct it_heap *kh, unsigned int flags,
	       unsigned int seed, struct ion_test_kapi *k)
{
	unsigned char *p;
	size_t i;
	int buf, ret;

	buf = ht_alloc_map(ion, LEN, kh->id, flags, &p);
	if (buf < 0)
		return buf;
	for (i = 0; i < LEN; i++)
		p[i] = (unsigned char)(seed + i);
	ht_cpu_end(buf);
	munmap(p, LEN);
	memset(k, 0, sizeof(*k));
	k->fd = buf;
	k->seed = seed;
	k->heap_mask = 1U << kh->id;
	k->flags = flags;
	k->len = LEN;
	ret = it_ioctl(tfd, ION_TEST_IOC_KAPI, k);
	close(buf);
	return ret;
}

/* Does the fd ion_share_fd gave hold what ion_test wrote? */
static int shared_ok(const struct ion_test_kapi *k)
{
	unsigned char *p;
	int ok = 1;
	size_t i;

	if (k->share_fd < 0)
		return 0;
	p = ht_map(k->share_fd, LEN);
	if (!p)
		return 0;
	ht_cpu_begin(k->share_fd);
	for (i = 0; i < LEN && ok; i++)
		ok = p[i] == (unsigned char)(k->seed + 1 + i);
	ht_cpu_end(k->share_fd);
	munmap(p, LEN);
	return ok;
}

static void one(int ion, int tfd, const struct it_heap *kh, unsigned int c,
		unsigned int seed)
{
	const char *mode = ht_cache_modes[c].name;
	struct ion_test_kapi k;
	unsigned int i;
	int ret;

	ret = run(ion, tfd, kh, ht_cache_modes[c].flags, seed, &k);
	if (!tap_ok(!ret, "%s %s: ION_TEST_IOC_KAPI runs (%s)", kh->name, mode,
		    ret ? strerror(-ret) : "ok"))
		return;
	tap_diag("%s %s: phys_err %d, %u sg entries, %u DMA segments",
		 kh->name, mode, k.phys_err, k.sg_nents, k.dma_nents);
	for (i = 0; i < IT_ARRAY_SIZE(checks); i++) {
		if (!(k.ran & checks[i].bit))
			tap_diag("%s: never ran", checks[i].what);
		tap_ok(!(k.failed & checks[i].bit) && (k.ran & checks[i].bit),
		       "%s %s: %s", kh->name, mode, checks[i].what);
	}
	tap_ok((k.ran & ION_TEST_KAPI_PHYS) &&
	       (kh->contig ? k.phys_err == 0 : k.phys_err == -ENODEV),
	       "%s %s: ion_phys %s", kh->name, mode,
	       kh->contig ? "answers" : "refuses with ENODEV");
	tap_ok(shared_ok(&k), "%s %s: user space reads through the shared fd "
	       "what the kernel wrote through ion_map_kernel", kh->name, mode);
	if (k.share_fd >= 0)
		close(k.share_fd);
}

int main(void)
{
	const struct it_heap *kh;
	unsigned int i, c, seed;
	long long b0, bytes0, b1, bytes1;
	struct it_heaps hs;
	int ion, tfd;

	ion = it_setup(&hs);
	seed = it_seed();
	tfd = ht_test_open();
	if (!tap_ok(tfd >= 0, "open " HT_TEST_DEV))
		return tap_exit();
	it_summary(&b0, &bytes0);
	for (i = 0; (kh = it_known_next(&hs, &i)); i++) {
		for (c = 0; c < IT_ARRAY_SIZE(ht_cache_modes); c++)
			one(ion, tfd, kh, c, seed + i * 2 + c);
	}
	it_summary(&b1, &bytes1);
	tap_ok(b0 >= 0 && b1 == b0 && bytes1 == bytes0,
	       "nothing left behind (buffers %lld -> %lld)", b0, b1);
	close(tfd);
	close(ion);
	return tap_exit();
}
