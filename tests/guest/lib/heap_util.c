// SPDX-License-Identifier: MIT
/*
 * Helpers of the heap_* guest tests: allocation with alignment, mmap with
 * sync, the ion_test importer (/dev/ion_test), control files,
 * /proc/meminfo and the system heap's debugfs numbers.
 */
#include <dirent.h>

#include "heap_util.h"

int ht_alloc(int ion, size_t len, size_t align, unsigned int id,
	     unsigned int flags)
{
	ion_user_handle_t h;
	int ret, buf;

	ret = it_alloc_handle(ion, len, align, 1U << id, flags, &h);
	if (ret)
		return ret;
	buf = it_share(ion, h);
	it_free(ion, h);
	return buf;
}

int ht_edu_copy(int tfd, unsigned int src, unsigned long long src_off,
		unsigned int dst, unsigned long long dst_off, unsigned int len,
		struct ion_test_dma *d)
{
	memset(d, 0, sizeof(*d));
	d->src_slot = src;
	d->dst_slot = dst;
	d->src_off = src_off;
	d->dst_off = dst_off;
	d->len = len;
	return it_ioctl(tfd, ION_TEST_IOC_DMA, d);
}

void ht_buf_drop(int buf, void *p, size_t len)
{
	if (p)
		munmap(p, len);
	if (buf >= 0)
		close(buf);
}

void *ht_map(int buf, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, buf, 0);

	return p == MAP_FAILED ? NULL : p;
}

int ht_cpu_begin(int buf)
{
	return it_sync(buf, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
}

int ht_alloc_map(int ion, size_t len, unsigned int id, unsigned int flags,
		 unsigned char **p)
{
	int buf = ht_alloc(ion, len, 0, id, flags);

	if (buf < 0)
		return buf;
	*p = ht_map(buf, len);
	if (!*p) {
		close(buf);
		return -ENOMEM;
	}
	ht_cpu_begin(buf);
	return buf;
}

int ht_cpu_end(int buf)
{
	return it_sync(buf, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
}

void ht_test_unload(void)
{
	if (syscall(SYS_delete_module, "ion_test", O_NONBLOCK))
		tap_diag("unloading ion_test: %s", strerror(errno));
}

int ht_test_open(void)
{
	int fd = open(HT_TEST_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT) {
		if (system("modprobe ion_test") != 0)
			return -ENOENT;
		atexit(ht_test_unload);
		fd = open(HT_TEST_DEV, O_RDWR | O_CLOEXEC);
	}
	return fd < 0 ? -errno : fd;
}

int ht_test_info(int tfd, struct ion_test_info *info)
{
	memset(info, 0, sizeof(*info));
	return it_ioctl(tfd, ION_TEST_IOC_INFO, info);
}

int ht_import(int tfd, int buf, unsigned int mode,
	      struct ion_test_import *imp)
{
	memset(imp, 0, sizeof(*imp));
	imp->fd = buf;
	imp->mode = mode;
	return it_ioctl(tfd, ION_TEST_IOC_IMPORT, imp);
}

int ht_release(int tfd, unsigned int slot)
{
	struct ion_test_slot s = { .slot = slot };

	return it_ioctl(tfd, ION_TEST_IOC_RELEASE, &s);
}

unsigned long long ht_buf_phys(int tfd, int buf)
{
	struct ion_test_import imp;
	unsigned long long phys;

	if (ht_import(tfd, buf, ION_TEST_MODE_CLIENT, &imp))
		return 0;
	phys = imp.cpu_phys;
	ht_release(tfd, imp.slot);
	return phys;
}

const char *ht_mode_name(unsigned int mode)
{
	return mode == ION_TEST_MODE_CLIENT ? "client" : "dmabuf";
}

int ht_write_str(const char *path, const char *val, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags), ret = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n != (ssize_t)strlen(val))
		ret = n < 0 ? -errno : -EIO;
	close(fd);
	return ret;
}

long long ht_meminfo(const char *key)
{
	size_t klen = strlen(key);
	long long v = -1;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10) * 1024;
			break;
		}
	fclose(f);
	return v;
}

long long ht_pcp_bytes(void)
{
	long long pages = 0;
	char line[128];
	FILE *f = fopen("/proc/zoneinfo", "r");
	char *p;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (!strncmp(p, "count:", 6))
			pages += strtoll(p + 6, NULL, 10);
	}
	fclose(f);
	return pages * it_page();
}

long long ht_free_bytes(void)
{
	long long free = ht_meminfo("MemFree"), pcp = ht_pcp_bytes();

	return free < 0 || pcp < 0 ? -1 : free + pcp;
}

long long ht_system_num(const char *key)
{
	return it_dfs_file_num(HT_SYSTEM_HEAP_FILE, key);
}

int ht_carveout_memmap(void)
{
	struct it_dfs d;
	const char *src;
	int ret = 0;

	if (!it_dfs_load_heap(&d, ION_CARVEOUT_HEAP_NAME)) {
		src = it_dfs_get(&d, "region_source");
		ret = src && !strcmp(src, "memmap");
		it_dfs_free(&d);
	}
	return ret;
}

int ht_system_wait(const char *key, long long max)
{
	long long t0 = it_now_ms(), v;

	while ((v = ht_system_num(key)) > max || v < 0) {
		if (v < 0 || it_now_ms() - t0 > 60000) {
			tap_diag("%s: %lld", key, v);
			return -ETIMEDOUT;
		}
		usleep(10000);
	}
	return 0;
}

long long ht_pool_mode_bytes(const char *file, const char *mode)
{
	size_t mlen = strlen(mode);
	long long sum = 0;
	struct it_dfs d;
	int i;

	if (it_dfs_load(&d, file))
		return -1;
	for (i = 0; i < d.nkeys; i++) {
		size_t klen = strlen(d.keys[i]);

		if (!strncmp(d.keys[i], "pool_order_", 11) && klen > mlen + 1 &&
		    d.keys[i][klen - mlen - 1] == '_' &&
		    !strcmp(d.keys[i] + klen - mlen, mode))
			sum += strtoll(d.vals[i], NULL, 0);
	}
	it_dfs_free(&d);
	return sum;
}

int ht_wait_deferred(void)
{
	return ht_system_wait("deferred_free_bytes", 0);
}

int ht_drop_pools(void)
{
	int ret = ht_wait_deferred();

	return ret ? ret : ht_write_str("/proc/sys/vm/drop_caches", "3\n", 0);
}

long long ht_dm4k_kb(void)
{
	long long v = ht_meminfo("DirectMap4k");

	return v < 0 ? -1 : v / 1024;
}

int ht_phys_attr(int tfd, unsigned long long phys,
		 struct ion_test_phys_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->phys = phys;
	return it_ioctl(tfd, ION_TEST_IOC_PHYS_ATTR, a);
}

int ht_fill_free(int ion, size_t len, unsigned int id, unsigned int flags,
		 unsigned int seed)
{
	unsigned char *p;
	int buf;

	buf = ht_alloc_map(ion, len, id, flags, &p);
	if (buf < 0)
		return buf;
	it_fill(p, len, seed);
	ht_cpu_end(buf);
	ht_buf_drop(buf, p, len);
	return 0;
}

int ht_new_zeroed(int ion, size_t len, unsigned int id, unsigned int flags)
{
	unsigned char *p;
	long bad;
	int buf;

	buf = ht_alloc_map(ion, len, id, flags, &p);
	if (buf < 0)
		return buf;
	bad = it_check_zero(p, len);
	if (bad >= 0)
		tap_diag("non-zero byte at %ld of %zu", bad, len);
	ht_cpu_end(buf);
	ht_buf_drop(buf, p, len);
	return bad >= 0 ? -EILSEQ : 0;
}

size_t ht_mixed_size(unsigned int *seed, unsigned int max_shift)
{
	unsigned int shift = 12 + rand_r(seed) % (max_shift - 12);
	size_t len = (size_t)1 << shift;
	size_t max = (size_t)1 << max_shift;

	len += (size_t)(rand_r(seed) % (1U << (shift - 12))) * it_page();
	return len > max ? max : len;
}

#define HT_MIXED_LIVE	4

int ht_mixed_rounds(int ion, unsigned int mask, unsigned int max_shift,
		    unsigned int rounds, unsigned int seed, int *enomem)
{
	int bufs[HT_MIXED_LIVE];
	unsigned int i;
	int ret = 0;

	for (i = 0; i < HT_MIXED_LIVE; i++)
		bufs[i] = -1;
	for (i = 0; i < rounds && !ret; i++) {
		unsigned int slot = i % HT_MIXED_LIVE;

		if (bufs[slot] >= 0)
			close(bufs[slot]);
		bufs[slot] = it_alloc_fd(ion, ht_mixed_size(&seed, max_shift),
					 mask, 0);
		if (bufs[slot] == -ENOMEM && enomem)
			(*enomem)++;
		else if (bufs[slot] < 0)
			ret = bufs[slot];
	}
	for (i = 0; i < HT_MIXED_LIVE; i++)
		if (bufs[i] >= 0)
			close(bufs[i]);
	return ret;
}

static void ht_dm_read(struct ht_dm *dm)
{
	dm->dm4k_kb = ht_dm4k_kb();
	dm->splits = ht_system_num("direct_map_splits");
}

int ht_dm_rounds(int ion, unsigned int rounds, unsigned int seed,
		 struct ht_dm *before, struct ht_dm *after)
{
	int ret;

	ht_dm_read(before);
	*after = *before;
	if (before->dm4k_kb < 0)
		return -ENOENT;
	tap_diag("seed %u, %u rounds", seed, rounds);
	ret = ht_mixed_rounds(ion, ION_HEAP_SYSTEM_MASK, 23, rounds, seed,
			      NULL);
	if (!ret)
		ret = ht_wait_deferred();
	ht_dm_read(after);
	tap_diag("DirectMap4k %lld kB -> %lld kB; direct_map_splits %lld -> %lld",
		 before->dm4k_kb, after->dm4k_kb, before->splits,
		 after->splits);
	if (ret)
		tap_diag("rounds: %s", strerror(-ret));
	return ret;
}

/* Does sysfs file @dir/@dev/@attr start with @want? */
static int sysfs_is(const char *dir, const char *dev, const char *attr,
		    const char *want)
{
	char path[600], *v = NULL;
	int ret;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, dev, attr);
	if (it_read_file(path, &v) < 0)
		return 0;
	ret = v && !strncmp(v, want, strlen(want));
	free(v);
	return ret;
}

int ht_edu_sysfs(char *buf, size_t size)
{
	static const char dir[] = "/sys/bus/pci/devices";
	struct dirent *e;
	int found = -ENOENT;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while (found && (e = readdir(d))) {
		if (e->d_name[0] == '.' ||
		    !sysfs_is(dir, e->d_name, "vendor", "0x1234") ||
		    !sysfs_is(dir, e->d_name, "device", "0x11e8"))
			continue;
		snprintf(buf, size, "%s/%s", dir, e->d_name);
		found = 0;
	}
	closedir(d);
	return found;
}
