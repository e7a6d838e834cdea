// SPDX-License-Identifier: MIT
/*
 * heap_cache: cached and uncached buffers really get different memory
 * types, and the architecture's cache code does what it says.
 *
 * x86: for every heap, ion_test reads the cache bits of the PTE of the
 * buffer's first page in the kernel's linear map and in this process's
 * mmap: both write-back (0) for ION_FLAG_CACHED, both write-combining
 * (_PAGE_PWT, 0x8, with Linux's PAT layout) without it.  On x86 PAT keeps
 * RAM memory types in page flags, so /sys/kernel/debug/x86/pat_memtype_list
 * (shown when present) lists no ion buffer; the PTEs are the evidence.
 *
 * arm64 (kernel/heaps/ion_cache_arm64.c): ion_test reports the MAIR_EL1
 * memory type of the same two descriptors.  The user mapping is Normal
 * write-back (0xff) for cached buffers and Normal non-cacheable (0x44)
 * for uncached ones; the linear map stays Normal write-back (0xff, or 0xf0
 * tagged with MTE) for both, as arm64 has no set_memory_wc().  Instead,
 * allocating an uncached buffer cleans its pages to the point of coherency
 * and then invalidates them, through the DMA API for a non-coherent
 * device: kprobe events on arch_sync_dma_for_device() (DC CVAC) and
 * arch_sync_dma_for_cpu() (DC IVAC) must show both, in that order, over
 * the buffer's first page.  The system heap cleans only chunks fresh from
 * the buddy allocator (pooled uncached chunks were zeroed through a
 * non-cacheable alias), so its pools are drained first.  For cached
 * DMA-heap buffers DMA_BUF_IOCTL_SYNC is real cache maintenance there (its
 * device is not DMA-coherent): SYNC_START must invalidate and SYNC_END
 * clean the buffer.  QEMU's TCG models no caches, so this shows the
 * maintenance is done, not that the data would be lost without it.
 *
 * Everywhere: an uncached buffer refuses private (copy-on-write) mappings.
 */
#include "heap_util.h"

#define LEN		(64 * 1024)
#define X86_PAGE_PWT	0x8ULL

#ifdef __aarch64__
#define KP_GROUP	"ion_heap_cache"
#include "heap_cache_kprobe.h"

/* MAIR_EL1 attribute bytes (ion_test.h: bits 15:8 of the reported bits). */
#define MAIR_NORMAL		0xff
#define MAIR_NORMAL_TAGGED	0xf0
#define MAIR_NORMAL_NC		0x44
#define MAIR_OF(bits)		(((bits) >> 8) & 0xff)

static int attr_write_back(unsigned long long bits)
{
	return MAIR_OF(bits) == MAIR_NORMAL || MAIR_OF(bits) == MAIR_NORMAL_TAGGED;
}

static int attr_uncached(unsigned long long bits)
{
	return MAIR_OF(bits) == MAIR_NORMAL_NC;
}

/* Wait for the deferred zeroing, then drop the system heap's pools. */
static void pools_drain(void)
{
	long long t0 = it_now_ms(), v = -1;
	struct it_dfs d;

	while (it_now_ms() - t0 < 60000) {
		if (it_dfs_load_heap(&d, ION_SYSTEM_HEAP_NAME))
			break;
		v = it_dfs_num(&d, "deferred_free_bytes");
		it_dfs_free(&d);
		if (v <= 0)
			break;
		usleep(10000);
	}
	if (v > 0)
		tap_diag("deferred_free_bytes still %lld", v);
	ht_write_str("/proc/sys/vm/drop_caches", "3\n", 0);
}

/*
 * What allocating (and, for the DMA heap's cached buffers, syncing) does
 * to the caches, seen through the kprobe events.
 */
static void maint_case(int ion, int tfd, const struct it_heap *kh,
		       unsigned int flags, const char *cname)
{
	int cached = !!(flags & ION_FLAG_CACHED), dma = kh->type == ION_HEAP_TYPE_DMA;
	unsigned long long phys, pg = (unsigned long long)it_page();
	struct ion_test_import imp;
	char *text = NULL;
	int buf, c, i;

	if (!kp_ready) {
		tap_ok(0, "%s %s: kprobe events on arch_sync_dma_for_*",
		       kh->name, cname);
		return;
	}
	if (!cached && !strcmp(kh->name, ION_SYSTEM_HEAP_NAME))
		pools_drain();
	kp_clear();
	buf = ht_alloc(ion, LEN, 0, kh->id, flags);
	text = buf < 0 ? NULL : kp_read();
	if (!text || ht_import(tfd, buf, ION_TEST_MODE_CLIENT, &imp)) {
		tap_ok(0, "%s %s: allocate, trace and import", kh->name, cname);
		goto out;
	}
	phys = imp.cpu_phys;
	ht_release(tfd, imp.slot);
	c = kp_find(text, "clean", 1, phys, pg);
	i = kp_find(text, "inval", c + 1, phys, pg);
	tap_diag("%s %s: first page 0x%llx: clean #%d, invalidate #%d after it",
		 kh->name, cname, phys, c, i);
	if (cached)
		tap_ok(!kp_find(text, "inval", 1, phys, pg),
		       "%s %s: allocation invalidates nothing of it", kh->name,
		       cname);
	else
		tap_ok(c && i,
		       "%s %s: allocation cleans, then invalidates, its first page",
		       kh->name, cname);
	if (!cached || !dma)
		goto out;
	free(text);
	kp_clear();
	ht_cpu_begin(buf);
	text = kp_read();
	i = text ? kp_find(text, "inval", 1, phys, LEN) : 0;
	free(text);
	kp_clear();
	ht_cpu_end(buf);
	text = kp_read();
	c = text ? kp_find(text, "clean", 1, phys, LEN) : 0;
	tap_ok(i, "%s %s: SYNC_START invalidates the buffer (non-coherent device)",
	       kh->name, cname);
	tap_ok(c, "%s %s: SYNC_END cleans the buffer (non-coherent device)",
	       kh->name, cname);
out:
	free(text);
	if (buf >= 0)
		close(buf);
}
#else
static int attr_write_back(unsigned long long bits)
{
	return bits == 0;
}

static int attr_uncached(unsigned long long bits)
{
	return bits == X86_PAGE_PWT;
}
#endif

#ifndef __aarch64__
static void memtype_list_note(void)
{
	char *text = NULL;
	int n = it_read_file("/sys/kernel/debug/x86/pat_memtype_list", &text);
	int lines = 0;
	char *p;

	if (n < 0) {
		tap_diag("pat_memtype_list: %s", strerror(-n));
		return;
	}
	for (p = text; *p; p++)
		lines += *p == '\n';
	tap_diag("pat_memtype_list: %d entries (RAM is tracked in page flags, not here)",
		 lines);
	free(text);
}
#endif

/* @bits are what a cached (write-back) or an uncached buffer should get. */
static int attr_as_asked(unsigned long long bits, int cached)
{
	return cached ? attr_write_back(bits) : attr_uncached(bits);
}

static void attr_case(int ion, int tfd, const struct it_heap *kh,
		      unsigned int flags, const char *cname)
{
	int cached = !!(flags & ION_FLAG_CACHED);
	struct ion_test_import imp;
	struct ion_test_attr a;
	int buf, ret;
	char *p;

	buf = ht_alloc(ion, LEN, 0, kh->id, flags);
	p = buf < 0 ? NULL : ht_map(buf, LEN);
	if (!p || ht_import(tfd, buf, ION_TEST_MODE_CLIENT, &imp)) {
		tap_ok(0, "%s %s: allocate, map and import", kh->name, cname);
		goto out;
	}
	ht_cpu_begin(buf);
	p[0] = 1;	/* fault the first page in */
	ht_cpu_end(buf);
	memset(&a, 0, sizeof(a));
	a.slot = imp.slot;
	a.uaddr = (uintptr_t)p;
	ret = it_ioctl(tfd, ION_TEST_IOC_ATTR, &a);
	ht_release(tfd, imp.slot);
	if (ret == -EOPNOTSUPP) {
		tap_skip(kh->name, "no page-table attribute query here");
		goto out;
	}
	tap_diag("%s %s: linear map 0x%llx (%s), user 0x%llx (%s)", kh->name,
		 cname, (unsigned long long)a.kernel_bits,
		 a.kernel_err ? strerror(-a.kernel_err) : "ok",
		 (unsigned long long)a.user_bits,
		 a.user_err ? strerror(-a.user_err) : "ok");
#ifdef __aarch64__
	/* arm64 keeps a cacheable linear map (no set_memory_wc()). */
	tap_ok(!ret && !a.kernel_err && attr_write_back(a.kernel_bits),
	       "%s %s: linear map stays Normal write-back", kh->name, cname);
	tap_ok(!ret && !a.user_err && attr_as_asked(a.user_bits, cached),
	       "%s %s: user mapping is %s", kh->name, cname,
	       cached ? "Normal write-back" : "Normal non-cacheable");
#else
	tap_ok(!ret && !a.kernel_err && attr_as_asked(a.kernel_bits, cached),
	       "%s %s: linear map is %s", kh->name, cname,
	       cached ? "write-back" : "write-combining");
	tap_ok(!ret && !a.user_err && attr_as_asked(a.user_bits, cached),
	       "%s %s: user mapping is %s", kh->name, cname,
	       cached ? "write-back" : "write-combining");
#endif
out:
	if (p)
		munmap(p, LEN);
	if (buf >= 0)
		close(buf);
}

/*
 * An uncached buffer takes no private mapping (kernel/core/
 * ion_dmabuf_mmap.c, DOC): copy-on-write would give the anonymous copies
 * the write-combined protection over their cacheable linear map.  One
 * page, so that every heap's buffer is one chunk, which a private mapping
 * could map whole before.  A shared mapping of the same buffer works.
 */
static void private_case(int ion, const struct it_heap *kh)
{
	static const int prots[] = { PROT_READ | PROT_WRITE, PROT_READ };
	unsigned int i;
	void *p;
	int buf;

	buf = ht_alloc(ion, 4096, 0, kh->id, 0);
	if (!tap_ok(buf >= 0, "%s uncached: one page allocated", kh->name))
		return;
	for (i = 0; i < IT_ARRAY_SIZE(prots); i++) {
		p = mmap(NULL, 4096, prots[i], MAP_PRIVATE, buf, 0);
		tap_errno(p == MAP_FAILED ? -1 : 0, EINVAL,
			  "%s uncached: MAP_PRIVATE %s is refused", kh->name,
			  i ? "read-only (may become writable)" : "read-write");
		if (p != MAP_FAILED)
			munmap(p, 4096);
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, buf, 0);
	tap_ok(p != MAP_FAILED, "%s uncached: MAP_SHARED still maps",
	       kh->name);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	close(buf);
}

int main(void)
{
	const struct it_heap *kh;
	struct it_heaps hs;
	unsigned int i, c;
	int ion, tfd;

	ion = it_setup(&hs);
	tfd = ht_test_open();
	if (tfd < 0) {
		tap_ok(0, "open " HT_TEST_DEV);
		return tap_exit();
	}
#ifdef __aarch64__
	kp_setup(KP_GROUP);
#else
	memtype_list_note();
#endif
	for (i = 0; (kh = it_known_next(&hs, &i)); i++) {
		private_case(ion, kh);
		for (c = 0; c < IT_ARRAY_SIZE(ht_cache_modes); c++) {
			attr_case(ion, tfd, kh, ht_cache_modes[c].flags,
				  ht_cache_modes[c].name);
#ifdef __aarch64__
			maint_case(ion, tfd, kh, ht_cache_modes[c].flags,
				   ht_cache_modes[c].name);
#endif
		}
	}
#ifdef __aarch64__
	kp_remove();
#endif
	close(tfd);
	close(ion);
	return tap_exit();
}
