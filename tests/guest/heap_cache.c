// SPDX-License-Identifier: MIT
/*
 * heap_cache: cached and uncached buffers really get different memory
 * types.  For every heap, ion_test reads the cache bits of the PTE of the
 * buffer's first page in the kernel's linear map and in this process's
 * mmap: both write-back (0) for ION_FLAG_CACHED, both write-combining
 * (_PAGE_PWT, 0x8, with Linux's PAT layout) without it.  On x86 PAT keeps
 * RAM memory types in page flags, so /sys/kernel/debug/x86/pat_memtype_list
 * (shown when present) lists no ion buffer; the PTEs are the evidence.
 */
#include "heap_util.h"

#define LEN		(64 * 1024)
#define X86_PAGE_PWT	0x8ULL

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

static void attr_case(int ion, int tfd, const struct it_heap *kh,
		      unsigned int flags, const char *cname)
{
	unsigned long long want = flags & ION_FLAG_CACHED ? 0 : X86_PAGE_PWT;
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
	tap_ok(!ret && !a.kernel_err && a.kernel_bits == want,
	       "%s %s: linear map is %s", kh->name, cname,
	       want ? "write-combining" : "write-back");
	tap_ok(!ret && !a.user_err && a.user_bits == want,
	       "%s %s: user mapping is %s", kh->name, cname,
	       want ? "write-combining" : "write-back");
out:
	if (p)
		munmap(p, LEN);
	if (buf >= 0)
		close(buf);
}

int main(void)
{
	struct it_heaps hs;
	unsigned int i, c;
	int ion, tfd;

	ion = it_setup(&hs);
	tfd = ht_test_open();
	if (tfd < 0) {
		tap_ok(0, "open " HT_TEST_DEV);
		return tap_exit();
	}
	memtype_list_note();
	for (i = 0; i < IT_ARRAY_SIZE(it_known_heaps); i++) {
		const struct it_heap *kh = &it_known_heaps[i];

		if (!it_heap_find(&hs, kh->name)) {
			tap_skip(kh->name, "heap not registered");
			continue;
		}
		for (c = 0; c < IT_ARRAY_SIZE(ht_cache_modes); c++)
			attr_case(ion, tfd, kh, ht_cache_modes[c].flags,
				  ht_cache_modes[c].name);
	}
	close(tfd);
	close(ion);
	return tap_exit();
}
