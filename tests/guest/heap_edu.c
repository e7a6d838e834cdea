// SPDX-License-Identifier: MIT
/*
 * heap_edu: data written by the CPU through mmap goes through QEMU's edu
 * device and comes back equal, for every heap, cached and uncached, with
 * ion_test importing as an ion kernel client and as a plain dma-buf
 * importer.  Also: ion_phys answers for contiguous heaps and fails with
 * -ENODEV for the system heap; without an IOMMU a buffer beyond edu's
 * DMA mask (28 bits on x86; 40 on arm64 virt, whose RAM starts at 1 GiB,
 * so nothing is beyond it there) is refused cleanly (and left untouched)
 * and the DMA addresses are the physical ones; with an IOMMU they are
 * IOVAs, shown beside the physical ones.  Which path edu takes (direct or
 * translated, coherent or not) is reported, and checked against sysfs:
 * edu is translated exactly when it is in an IOMMU group (the rig never
 * boots an identity-mapped IOMMU).  The CPU's side of every round trip is
 * bracketed by DMA_BUF_IOCTL_SYNC, as for any device.
 *
 * The rig runs this test once more in a guest booted with swiotlb=force
 * (scripts/guest-run.sh, edu given a 32-bit mask that reaches all RAM):
 * every mapping for edu is then bounced, so the round trips check that
 * ion's map, unmap and CPU-access syncs copy the data to and from the
 * bounce buffers, for uncached buffers as well, and swiotlb's high-water
 * mark shows that the bouncing happened.  There a 1 MiB contiguous buffer
 * maps for ion_test's probe device (whose segments may be 4 GiB) in
 * segments swiotlb can bounce (256 KiB each, dma_max_mapping_size()).
 *
 * arm64: QEMU's virt describes edu (like every PCI device) dma-coherent,
 * so the round trips run a second time with ion_test's edu_noncoherent=1,
 * which puts edu on the kernel's non-coherent DMA path.  Besides the data
 * getting through, kprobe events on arch_sync_dma_for_device/_for_cpu
 * must show, for cached dma-buf imports, that mapping the source for edu
 * cleans its first page (the CPU's writes reach memory before the device
 * reads) and that SYNC_START on the destination after the transfer
 * invalidates its first page for edu (the CPU then reads what the device
 * wrote).  TCG models no caches, so the maintenance is shown to happen,
 * not to be needed.
 */

#include "heap_util.h"

#ifdef __aarch64__
#define KP_GROUP	"ion_heap_edu"
#include "heap_cache_kprobe.h"
#endif

/* Watch the cache maintenance of the round trips (non-coherent edu). */
static int nc_watch;

/* Booted with swiotlb=force: every streaming mapping is bounced. */
static int bounced;

#define LEN	(64 * 1024)
#define SRC_OFF	8192
#define DST_OFF	12288
#define XFER	ION_TEST_MAX_XFER

/* Untouched zeroes around the transferred window? */
static long check_dst(const unsigned char *d, unsigned int seed)
{
	size_t i;

	for (i = 0; i < LEN; i++) {
		if (i >= DST_OFF && i < DST_OFF + XFER) {
			if (d[i] != it_pat(i - DST_OFF + SRC_OFF, seed))
				return (long)i;
		} else if (d[i]) {
			return (long)i;
		}
	}
	return -1;
}

static void round_trip(int ion, int tfd, const struct ion_test_info *info,
		       const struct it_heap *kh, unsigned int flags,
		       const char *cname, unsigned int mode)
{
	struct ion_test_import si, di;
	struct ion_test_dma d;
	unsigned char *s = NULL, *t = NULL;
	unsigned int seed = (unsigned int)it_now_ms();
	/* Cached dma-buf imports: the core syncs edu's attachment. */
	int watch = nc_watch && mode == ION_TEST_MODE_DMABUF &&
		    (flags & ION_FLAG_CACHED);
	unsigned long long sphys = 0, dphys = 0;
	int src, dst, ret, cleans = 0, invals = 0;
	long bad;

	src = ht_alloc(ion, LEN, 0, kh->id, flags);
	dst = ht_alloc(ion, LEN, 0, kh->id, flags);
	if (src < 0 || dst < 0) {
		tap_ok(0, "%s %s %s: allocate", kh->name, cname,
		       ht_mode_name(mode));
		goto out;
	}
	s = ht_map(src, LEN);
	t = ht_map(dst, LEN);
	if (!s || !t) {
		tap_ok(0, "%s %s %s: mmap", kh->name, cname,
		       ht_mode_name(mode));
		goto out;
	}
	ht_cpu_begin(src);
	it_fill(s, LEN, seed);
	ht_cpu_end(src);

#ifdef __aarch64__
	if (watch) {
		sphys = ht_buf_phys(tfd, src);
		dphys = ht_buf_phys(tfd, dst);
		kp_clear();
	}
#endif
	ret = ht_import(tfd, src, mode, &si);
#ifdef __aarch64__
	if (watch)
		cleans = kp_read_count("clean", sphys, it_page());
#endif
	if (ret) {
		tap_ok(0, "%s %s %s: import", kh->name, cname,
		       ht_mode_name(mode));
		goto out;
	}
	if (ht_import(tfd, dst, mode, &di)) {
		tap_ok(0, "%s %s %s: import", kh->name, cname,
		       ht_mode_name(mode));
		ht_release(tfd, si.slot);
		goto out;
	}
	/* A dma-buf import that edu could map stays attached until released. */
	if (mode == ION_TEST_MODE_DMABUF && !si.dma_err)
		tap_ok(it_buffer_has_device(src, kh->name, "ion_test_edu") == 1,
		       "%s %s %s: debugfs devices names edu, driver ion_test_edu",
		       kh->name, cname, ht_mode_name(mode));
	if (si.dma_err || di.dma_err) {
		/* Only acceptable reason: out of edu's reach without IOMMU. */
		int why = si.dma_err ? si.dma_err : di.dma_err;

		tap_diag("%s: not mapped for edu: %s (phys 0x%llx / 0x%llx)",
			 kh->name, strerror(-why), si.cpu_phys, di.cpu_phys);
		ht_cpu_begin(dst);
		bad = it_check_zero(t, LEN);
		ht_cpu_end(dst);
		tap_ok(!info->iommu && why == -ERANGE && bad < 0,
		       "%s %s %s: beyond the %u-bit mask, refused cleanly",
		       kh->name, cname, ht_mode_name(mode), info->dma_bits);
		goto out_release;
	}
	ret = ht_edu_copy(tfd, si.slot, SRC_OFF, di.slot, DST_OFF, XFER, &d);
#ifdef __aarch64__
	if (watch)
		kp_clear();
#endif
	ht_cpu_begin(dst);
#ifdef __aarch64__
	if (watch)
		invals = kp_read_count("inval", dphys, it_page());
#endif
	bad = ret ? -2 : check_dst(t, seed);
	ht_cpu_end(dst);
	if (ret)
		tap_diag("ION_TEST_IOC_DMA: %s", strerror(-ret));
	else if (bad >= 0)
		tap_diag("first difference at %ld (seed %u)", bad, seed);
	tap_diag("%s: src dma 0x%llx (buffer dma 0x%llx, phys 0x%llx), dst dma 0x%llx, %s",
		 kh->name, (unsigned long long)d.src_dma, si.dma_addr,
		 si.cpu_phys, (unsigned long long)d.dst_dma,
		 info->iommu ? "IOVAs" : "physical");
	tap_ok(!ret && bad < 0, "%s %s %s: edu round trip", kh->name, cname,
	       ht_mode_name(mode));
	/*
	 * Client mode knows the pages: direct DMA uses their addresses, or
	 * with swiotlb=force those of the bounce buffers.
	 */
	if (!info->iommu && mode == ION_TEST_MODE_CLIENT && !bounced)
		tap_ok(si.dma_addr == si.cpu_phys && di.dma_addr == di.cpu_phys,
		       "%s %s %s: direct DMA addresses are the physical ones",
		       kh->name, cname, ht_mode_name(mode));
	if (!info->iommu && mode == ION_TEST_MODE_CLIENT && bounced)
		tap_ok(si.dma_addr != si.cpu_phys && di.dma_addr != di.cpu_phys,
		       "%s %s %s: swiotlb=force: the DMA addresses are bounce buffers",
		       kh->name, cname, ht_mode_name(mode));
	if (watch) {
		/*
		 * Without an IOMMU ion_test first maps a dma-buf for its
		 * probe device (non-coherent too) to check edu's reach; the
		 * DMA heap's own device syncs on SYNC_START as well.
		 */
		int want_clean = 1 + !info->iommu;
		int want = 1 + (kh->type == ION_HEAP_TYPE_DMA);

		tap_diag("%s %s: src 0x%llx: %d clean(s) at import; dst 0x%llx: %d invalidate(s) at SYNC_START",
			 kh->name, cname, sphys, cleans, dphys, invals);
		tap_ok(sphys && cleans >= want_clean,
		       "%s %s %s: mapping for edu cleans the CPU's writes to memory",
		       kh->name, cname, ht_mode_name(mode));
		tap_ok(dphys && invals >= want,
		       "%s %s %s: SYNC_START after edu wrote invalidates for edu",
		       kh->name, cname, ht_mode_name(mode));
	}
out_release:
	ht_release(tfd, di.slot);
	ht_release(tfd, si.slot);
out:
	ht_buf_drop(src, s, LEN);
	ht_buf_drop(dst, t, LEN);
}

static void phys_case(int ion, int tfd, const struct it_heap *kh)
{
	struct ion_test_import imp;
	int buf = ht_alloc(ion, LEN, 0, kh->id, ION_FLAG_CACHED);

	if (buf < 0 || ht_import(tfd, buf, ION_TEST_MODE_CLIENT, &imp)) {
		tap_ok(0, "%s: ion_phys", kh->name);
		if (buf >= 0)
			close(buf);
		return;
	}
	if (kh->contig) {
		tap_diag("%s: ion_phys 0x%llx, first page 0x%llx", kh->name,
			 imp.phys, imp.cpu_phys);
		tap_ok(!imp.phys_err && imp.phys == imp.cpu_phys &&
		       imp.cpu_segs == 1,
		       "%s: ion_phys gives the contiguous buffer's address",
		       kh->name);
	} else {
		tap_ok(imp.phys_err == -ENODEV && imp.cpu_segs >= 1,
		       "%s: ion_phys fails with ENODEV (not contiguous)",
		       kh->name);
	}
	ht_release(tfd, imp.slot);
	close(buf);
}

/* Which path edu's DMA takes, and does sysfs agree with ion_test? */
static void path_case(const struct ion_test_info *info)
{
	char dev[600], link[700], target[256];
	const char *group = NULL;
	ssize_t n;

	tap_diag("edu: %s, %u-bit DMA, %s, %s, IOMMU group %d", "bound",
		 info->dma_bits,
		 info->iommu ? "translated by an IOMMU (IOVAs)" :
			       "direct (physical addresses)",
		 info->coherent ? "DMA-coherent" : "non-coherent",
		 info->iommu_group);
	if (ht_edu_sysfs(dev, sizeof(dev))) {
		tap_ok(0, "edu found in /sys/bus/pci/devices");
		return;
	}
	snprintf(link, sizeof(link), "%s/iommu_group", dev);
	n = readlink(link, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = 0;
		group = strrchr(target, '/');
		group = group ? group + 1 : target;
	}
	tap_diag("%s: iommu_group %s", dev, group ? group : "(none)");
	tap_ok(group ? info->iommu_group == atoi(group) :
		       info->iommu_group < 0,
	       "edu's IOMMU group is the one sysfs shows");
	tap_ok(!!info->iommu == (info->iommu_group >= 0),
	       "edu is translated exactly when it has an IOMMU group (%s)",
	       info->iommu ? "translated" : "direct");
}

/* Every heap, cache mode and import mode; @suffix goes after the mode. */
static void all_round_trips(int ion, int tfd, const struct ion_test_info *info,
			    const struct it_heaps *hs, const char *suffix,
			    int with_phys)
{
	const struct it_heap *kh;
	static const unsigned int modes[] = {
		ION_TEST_MODE_CLIENT, ION_TEST_MODE_DMABUF,
	};
	unsigned int i, c, m;
	char cname[64];

	for (i = 0; (kh = it_known_next(hs, &i)); i++) {
		if (with_phys)
			phys_case(ion, tfd, kh);
		for (c = 0; c < IT_ARRAY_SIZE(ht_cache_modes); c++)
			for (m = 0; m < IT_ARRAY_SIZE(modes); m++) {
				if (!info->has_edu) {
					tap_skip(kh->name, "no edu device");
					continue;
				}
				snprintf(cname, sizeof(cname), "%s%s",
					 ht_cache_modes[c].name, suffix);
				round_trip(ion, tfd, info, kh,
					   ht_cache_modes[c].flags, cname,
					   modes[m]);
			}
	}
}

#ifdef __aarch64__
/*
 * The same round trips with edu on the non-coherent path (ion_test's
 * edu_noncoherent=1): the data must still get through with the sync
 * calls, and the kprobe events must show the cache maintenance for edu.
 * Afterwards ion_test is loaded again as usual, on *@tfd.
 */
static void noncoherent_pass(int ion, int *tfd, const struct it_heaps *hs)
{
	struct ion_test_info info;
	int ok;

	close(*tfd);
	ok = !syscall(SYS_delete_module, "ion_test", O_NONBLOCK) &&
	     !system("modprobe ion_test edu_noncoherent=1");
	*tfd = ok ? open(HT_TEST_DEV, O_RDWR | O_CLOEXEC) : -1;
	ok = *tfd >= 0 && !ht_test_info(*tfd, &info) && info.has_edu;
	if (!tap_ok(ok, "ion_test reloaded with edu_noncoherent=1, edu bound"))
		goto restore;
	tap_diag("edu: %s, %s, IOMMU group %d",
		 info.iommu ? "translated" : "direct",
		 info.coherent ? "DMA-coherent" : "non-coherent",
		 info.iommu_group);
	tap_ok(!info.coherent,
	       "edu_noncoherent=1: the kernel treats edu as non-coherent");
	if (!tap_ok(!kp_setup(KP_GROUP), "kprobe events on arch_sync_dma_for_*"))
		goto restore;
	nc_watch = 1;
	all_round_trips(ion, *tfd, &info, hs, ", non-coherent edu", 0);
	nc_watch = 0;
	kp_remove();
restore:
	if (*tfd >= 0)
		close(*tfd);
	syscall(SYS_delete_module, "ion_test", O_NONBLOCK);
	ok = !system("modprobe ion_test");
	*tfd = ok ? open(HT_TEST_DEV, O_RDWR | O_CLOEXEC) : -1;
	tap_ok(*tfd >= 0 && !ht_test_info(*tfd, &info) && info.coherent,
	       "ion_test reloaded as usual: edu is DMA-coherent again");
}
#endif

/*
 * In the rig's swiotlb boot (swiotlb=force) every one of edu's mappings
 * was bounced, so the round trips above passed only if ion's map, unmap
 * and CPU-access syncs copied the data in and out of the bounce buffers,
 * uncached buffers included.  Show that the bouncing really happened.
 */
static void swiotlb_case(void)
{
	const char *name = "swiotlb=force: edu's transfers went through bounce buffers";
	char *hiwater = NULL;

	if (!bounced) {
		tap_skip(name, "not booted with swiotlb=force");
	} else if (access("/sys/kernel/debug/swiotlb/io_tlb_used", R_OK) == 0 &&
		   access("/sys/kernel/debug/swiotlb/io_tlb_used_hiwater",
			  F_OK) != 0) {
		tap_skip(name, "this kernel's swiotlb keeps no high-water mark "
			 "(io_tlb_used_hiwater, 6.6+)");
	} else if (it_read_file("/sys/kernel/debug/swiotlb/io_tlb_used_hiwater",
				&hiwater) < 0) {
		tap_ok(0, "%s (io_tlb_used_hiwater unreadable)", name);
	} else if (!tap_ok(strtoul(hiwater, NULL, 10) > 0, "%s", name)) {
		tap_diag("io_tlb_used_hiwater: %s", hiwater);
	}
	free(hiwater);
}

/* A 1 MiB system-contig buffer maps for the probe device, bounced. */
static void swiotlb_seg_case(int ion, int tfd, const struct it_heaps *hs)
{
	struct ion_test_import imp = { 0 };
	int buf, ret;

	if (!bounced || !it_heap_find(hs, ION_SYSTEM_CONTIG_HEAP_NAME)) {
		tap_skip("a 1 MiB contiguous buffer maps under swiotlb=force",
			 bounced ? "no system-contig heap" : "not bounced");
		return;
	}
	buf = it_alloc_fd(ion, 1 << 20, ION_HEAP_SYSTEM_CONTIG_MASK,
			  ION_FLAG_CACHED);
	ret = buf < 0 ? buf : ht_import(tfd, buf, ION_TEST_MODE_PROBE, &imp);
	tap_diag("1 MiB contiguous for the probe device: %d, dma_err %d, %u segments",
		 ret, imp.dma_err, imp.dma_segs);
	tap_ok(!ret && !imp.dma_err && imp.dma_segs >= 4,
	       "swiotlb=force: a 1 MiB contiguous buffer maps in segments swiotlb can bounce");
	if (!ret)
		ht_release(tfd, imp.slot);
	if (buf >= 0)
		close(buf);
}

int main(void)
{
	struct ion_test_info info;
	struct it_heaps hs;
	char *cmdline = NULL;
	int ion, tfd;

	it_read_file("/proc/cmdline", &cmdline);
	bounced = cmdline && strstr(cmdline, "swiotlb=force");
	free(cmdline);
	ion = it_setup(&hs);
	tfd = ht_test_open();
	if (tfd < 0 || ht_test_info(tfd, &info)) {
		tap_ok(0, "open " HT_TEST_DEV);
		return tap_exit();
	}
	if (info.has_edu)
		path_case(&info);
	else
		tap_skip("edu's DMA path", "no edu device");
	all_round_trips(ion, tfd, &info, &hs, "", 1);
	if (info.has_edu)
		swiotlb_case();
	swiotlb_seg_case(ion, tfd, &hs);
#ifdef __aarch64__
	/*
	 * QEMU's virt offers no non-coherent DMA device: make edu one.  Not
	 * when bounced: the maintenance the kprobes watch for on the
	 * buffers' pages is then done on the bounce buffers.
	 */
	if (info.has_edu && info.coherent && !bounced)
		noncoherent_pass(ion, &tfd, &hs);
#endif
	close(tfd);
	close(ion);
	return tap_exit();
}
