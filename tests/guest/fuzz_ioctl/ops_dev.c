// SPDX-License-Identifier: MIT
/*
 * fuzz_ioctl: real importers of the fuzzed buffers.  ion_test's edu
 * device imports (ION_TEST_IOC_IMPORT: as an ion kernel client, as a
 * dma-buf importer after its preflight, and, for auto-heap buffers, edu
 * attaching first alone or after the 64-bit probe device) and lets go
 * (ION_TEST_IOC_RELEASE: detach); vgem imports with PRIME (attach and
 * map) and lets go with GEM_CLOSE.  Interleaved with the other ops' mmap,
 * munmap, touching, CPU access and close, these make the auto heap's
 * paths run under the fuzzer: first use by a device or by the CPU, a late
 * attach that moves the backing and one refused (ERANGE) while something
 * maps the buffer.  Each thread has its own ion_test file and vgem node
 * (a forked child opens its own), so imports are per thread.
 *
 * edu attaching first (EDU_FIRST, PROBE_EDU) is only for buffers known to
 * be the auto heap's: only that heap keeps memory edu cannot reach from
 * edu's mapping; of any other heap, ion_test's preflight refuses it.
 */
#include "fuzz_ioctl.h"
#include "vgem_util.h"

struct ion_test_info edu;
int have_ion_test, have_vgem, have_auto;

static char vgem_path[32];
static int vgem_loaded_here;

/* The node of vgem's open @fd among the DRM nodes, in vgem_path. */
static void vgem_find_path(int fd)
{
	static const char *const paths[] = {
		"/dev/dri/renderD128", "/dev/dri/renderD129",
		"/dev/dri/card0", "/dev/dri/card1",
	};
	struct stat a, b;
	unsigned int i;

	if (fstat(fd, &a))
		return;
	for (i = 0; i < IT_ARRAY_SIZE(paths); i++)
		if (!stat(paths[i], &b) && b.st_rdev == a.st_rdev) {
			snprintf(vgem_path, sizeof(vgem_path), "%s", paths[i]);
			return;
		}
}

void dev_setup(void)
{
	unsigned int i;
	int fd;

	for (i = 0; i < hs.cnt; i++)
		if (hs.h[i].heap_id == ION_HEAP_AUTO_ID)
			have_auto = 1;
	fd = ht_test_open();	/* loads ion_test, unloaded at exit */
	if (fd >= 0) {
		have_ion_test = !ht_test_info(fd, &edu);
		close(fd);
	}
	vgem_loaded_here = !fz_module_loaded("vgem");
	fd = open_vgem();
	if (fd >= 0) {
		vgem_find_path(fd);
		have_vgem = vgem_path[0] != 0;
		close(fd);
	}
	tap_diag("importers: ion_test %s (edu %s, %u-bit mask, %s), vgem %s, "
		 "auto heap %s", have_ion_test ? "loaded" : "absent",
		 edu.has_edu ? "present" : "absent", edu.dma_bits,
		 edu.iommu ? "IOMMU" : "direct",
		 have_vgem ? vgem_path : "absent",
		 have_auto ? "present" : "absent");
}

void dev_teardown(void)
{
	if (have_vgem && vgem_loaded_here)
		vgem_unload();
}

void dev_thr_init(struct thr *t)
{
	t->tfd = -1;
	t->ndslots = 0;
	t->drm = -1;
	t->ngem = 0;
}

void dev_forked(struct thr *t)
{
	dev_thr_init(t);	/* the parent's files stay the parent's */
}

void dev_thr_cleanup(struct thr *t)
{
	if (t->tfd >= 0)
		close(t->tfd);
	if (t->drm >= 0)
		close(t->drm);
	dev_thr_init(t);
}

static void dev_count(enum dev_count what)
{
	__atomic_add_fetch(&sh->dev[what], 1, __ATOMIC_RELAXED);
}

/* Open @path once per thread into *@fd; -1 when there is none to be had. */
static int dev_open(struct thr *t, int *fd, const char *path)
{
	if (*fd == -1) {
		count_call(t);
		*fd = open(path, O_RDWR | O_CLOEXEC);
		if (*fd < 0)
			*fd = -2;	/* EMFILE in a child, EACCES as a user */
	}
	return *fd >= 0 ? *fd : -1;
}

/* A new auto-heap buffer in the pool: its index, or -1. */
static int new_auto(struct thr *t)
{
	struct call c = {
		.name = "ION_IOC_NEW_ALLOC (auto heap, for an importer)",
		.cmd = ION_IOC_NEW_ALLOC, .fd_kind = K_ION,
	};
	struct ion_new_allocation_data a = {
		.heap_id_mask = ION_HEAP_AUTO_MASK,
		.flags = one_in(t, 4) ? ION_FLAG_CACHED : 0,
	};
	int ion, err;

	/* mostly one chunk, now and then several (scattered when CPU-first) */
	a.len = one_in(t, 6) ? (1 + below(t, 3)) << 20 : (1 + below(t, 16)) * PG;
	fd_make_room(t);
	ion = ion_fd(t);
	if (ion < 0)
		return -1;
	CALL_ARGS(&c, a.len, a.heap_id_mask, a.flags);
	err = call_ioctl(t, &c, ion, &a);
	if (!check(t, &c, err, OK | E(ENOMEM) | E(EMFILE) | quota_eset(),
		   NULL) || err)
		return -1;
	return new_buf(t, &c, a.fd, a.len, ION_HEAP_AUTO_ID);
}

/* A buffer of the pool for an importer, auto-heap ones often; or -1. */
static int dev_buf(struct thr *t)
{
	int idx[MAX_FDS], n = 0, i;

	if (have_auto && one_in(t, 4))
		return new_auto(t);
	if (have_auto && one_in(t, 2))
		for (i = 0; i < t->nfds; i++)
			if (t->fds[i].kind == K_BUF &&
			    t->fds[i].heap == ION_HEAP_AUTO_ID)
				idx[n++] = i;
	return n ? idx[below(t, n)] : fd_pick(t, K_BUF);
}

static void dev_release_at(struct thr *t, int k)
{
	struct call c = {
		.name = "ION_TEST_IOC_RELEASE", .cmd = ION_TEST_IOC_RELEASE,
		.fd_kind = -1,
	};
	struct ion_test_slot s = { .slot = t->dslots[k].slot };
	int err;

	CALL_ARGS(&c, s.slot);
	err = call_ioctl(t, &c, t->tfd, &s);
	check(t, &c, err, OK, NULL);
	dev_count(DC_RELEASE);
	t->dslots[k] = t->dslots[--t->ndslots];
}

/* The import's DMA result: the errnos allowed, and edu below its mask. */
static void dev_check_dma(struct thr *t, const struct call *c,
			  const struct ion_test_import *imp, int is_auto)
{
	int edu_first = imp->mode == ION_TEST_MODE_EDU_FIRST ||
			imp->mode == ION_TEST_MODE_PROBE_EDU;
	int err = -imp->dma_err;

	if (!edu.has_edu) {
		check(t, c, err, E(ENODEV), "dma_err: no edu, not ENODEV");
		return;
	}
	if (!check(t, c, err, OK | E(ENOMEM) | E(ERANGE),
		   "dma_err not 0, ENOMEM or ERANGE"))
		return;
	if (!err) {
		dev_count(DC_EDU_MAPPED);
		if (is_auto && edu_first)
			dev_count(DC_AUTO_EDU);
	}
	if (err == ERANGE && is_auto && edu_first)
		dev_count(DC_REFUSED);
	/* the auto heap's promise: what edu maps, edu reaches */
	if (!err && is_auto && edu_first && !edu.iommu && edu.dma_bits < 64 &&
	    imp->phys_end > 1ULL << edu.dma_bits)
		violation(t, c, 0, "edu was given an auto buffer beyond its mask");
}

void op_dev_import(struct thr *t)
{
	struct call c = {
		.name = "ION_TEST_IOC_IMPORT", .cmd = ION_TEST_IOC_IMPORT,
		.fd_kind = K_BUF,
	};
	struct ion_test_import imp = { 0 };
	int tfd, i, k, same, err, is_auto;
	unsigned long ino;
	eset_t ok;

	if (!have_ion_test || dev_open(t, &t->tfd, HT_TEST_DEV) < 0)
		return;
	tfd = t->tfd;
	if (t->ndslots == DEV_SLOTS) {
		dev_release_at(t, below(t, t->ndslots));
		return;
	}
	i = dev_buf(t);
	if (i < 0)
		return;
	ino = it_ino(t->fds[i].fd);
	for (k = 0, same = 0; k < t->ndslots; k++)
		if (t->dslots[k].ino == ino && ++same == DEV_SAME_BUF) {
			dev_release_at(t, k);	/* DEV_SAME_BUF */
			return;
		}
	is_auto = t->fds[i].heap == ION_HEAP_AUTO_ID;
	imp.fd = t->fds[i].fd;
	/* EDU_FIRST and PROBE_EDU only for what edu may map unchecked */
	if (is_auto)
		imp.mode = 1 + below(t, ION_TEST_MODE_NOMASK);
	else
		imp.mode = one_in(t, 4) ? ION_TEST_MODE_NOMASK :
			   one_in(t, 3) ? ION_TEST_MODE_PROBE :
			   one_in(t, 2) ? ION_TEST_MODE_CLIENT :
			   ION_TEST_MODE_DMABUF;
	CALL_ARGS(&c, imp.mode, t->fds[i].size, is_auto);
	err = call_ioctl(t, &c, tfd, &imp);
	/*
	 * A kernel client's sg table is a first use: its errors; the probe
	 * device attaching late to a mapped auto buffer it cannot use: ERANGE.
	 */
	ok = OK | E(ENOMEM);
	if (imp.mode == ION_TEST_MODE_CLIENT ||
	    imp.mode == ION_TEST_MODE_PROBE_EDU)
		ok |= E(ERANGE);
	if (!check(t, &c, err, ok, NULL))
		return;
	if (err == ERANGE && imp.mode == ION_TEST_MODE_PROBE_EDU)
		dev_count(DC_REFUSED);
	if (err)
		return;
	dev_count(DC_IMPORT);
	t->dslots[t->ndslots].slot = imp.slot;
	t->dslots[t->ndslots].is_auto = is_auto;
	t->dslots[t->ndslots].ino = ino;
	t->ndslots++;
	if (imp.slot >= DEV_SLOTS)
		violation(t, &c, 0, "a slot beyond ION_TEST_MAX_SLOTS");
	/* A device with no DMA mask attaches; ion refuses its map. */
	if (imp.mode == ION_TEST_MODE_NOMASK) {
		check(t, &c, -imp.dma_err, E(EINVAL) | E(ENOMEM),
		      "no-mask dma_err not EINVAL or ENOMEM");
		return;
	}
	if (imp.mode != ION_TEST_MODE_PROBE) {
		dev_check_dma(t, &c, &imp, is_auto);
		return;
	}
	/*
	 * The probe device alone reaches all of memory, but takes no
	 * scattered table: an auto buffer (or one of a heap unknown here)
	 * backed scattered and mapped refuses it.
	 */
	ok = OK | E(ENOMEM);
	if (is_auto || t->fds[i].heap < 0)
		ok |= E(ERANGE);
	check(t, &c, -imp.dma_err, ok, "probe dma_err not an allowed one");
}

void op_dev_release(struct thr *t)
{
	struct call c = {
		.name = "ION_TEST_IOC_RELEASE (a free slot)",
		.cmd = ION_TEST_IOC_RELEASE, .fd_kind = -1,
	};
	struct ion_test_slot s = { 0 };
	int err, k;

	if (!have_ion_test || dev_open(t, &t->tfd, HT_TEST_DEV) < 0)
		return;
	if (t->ndslots && !one_in(t, 10)) {
		dev_release_at(t, below(t, t->ndslots));
		return;
	}
	/* a slot this file does not hold, or a reserved field set */
	s.slot = below(t, DEV_SLOTS + 2);
	for (k = 0; k < t->ndslots; k++)
		if (t->dslots[k].slot == s.slot)
			s.reserved = 1 + below(t, 100);
	CALL_ARGS(&c, s.slot, s.reserved);
	err = call_ioctl(t, &c, t->tfd, &s);
	check(t, &c, err, E(EINVAL), NULL);
}

/* vgem: PRIME import of a pool buffer, or GEM_CLOSE of one it holds. */
void op_vgem(struct thr *t)
{
	struct call c = { .name = "vgem PRIME_FD_TO_HANDLE", .fd_kind = K_BUF,
			  .cmd = IT_DRM_IOCTL_PRIME_FD_TO_HANDLE };
	int drm, i, k, err;
	uint32_t h;

	if (!have_vgem || dev_open(t, &t->drm, vgem_path) < 0)
		return;
	drm = t->drm;
	if (t->ngem && (t->ngem == MAX_GEM || one_in(t, 2))) {
		k = below(t, t->ngem);
		c.name = "vgem GEM_CLOSE";
		c.cmd = IT_DRM_IOCTL_GEM_CLOSE;
		c.fd_kind = -1;
		CALL_ARGS(&c, t->gem[k]);
		log_call(t, &c);
		count_call(t);
		check(t, &c, -vgem_close(drm, t->gem[k]), OK, NULL);
		dev_count(DC_VGEM_CLOSE);
		t->gem[k] = t->gem[--t->ngem];
		return;
	}
	i = dev_buf(t);
	if (i < 0)
		return;
	CALL_ARGS(&c, t->fds[i].size, t->fds[i].heap);
	log_call(t, &c);
	count_call(t);
	err = -vgem_import(drm, t->fds[i].fd, &h);
	/* ERANGE: a late attach to a mapped auto buffer that it cannot use */
	if (!check(t, &c, err, OK | E(ENOMEM) | E(ERANGE), NULL) || err)
		return;
	for (k = 0; k < t->ngem; k++)
		if (t->gem[k] == h)
			return;	/* the same dma-buf again: the same handle */
	t->gem[t->ngem++] = h;
	dev_count(DC_VGEM_IMPORT);
}
