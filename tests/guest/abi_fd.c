// SPDX-License-Identifier: MIT
/*
 * The fd ABI (Linux 4.12+) end to end: ABI_VERSION, HEAP_QUERY (contents
 * and priority order), ALLOC on every heap, the dma-buf it returns (fd
 * flags, size, mmap, mmap at an offset, no access past the end,
 * DMA_BUF_IOCTL_SYNC), zeroing of reused memory, and the fallback order of
 * a mask naming several heaps.
 */
#include "ion_test_util.h"

static unsigned int seed;

static void query_cases(int ion, const struct it_heaps *hs)
{
	struct ion_heap_query q;
	struct ion_heap_data one[2];
	__u32 ver = 0;
	unsigned int i, j;
	int ok, ret;

	ret = it_ioctl(ion, ION_IOC_ABI_VERSION, &ver);
	if (!tap_ok(!ret && ver == ION_ABI_VERSION, "ABI_VERSION is %d",
		    ION_ABI_VERSION))
		tap_diag("ABI_VERSION: %s, version %u", strerror(-ret), ver);

	tap_ok(hs->cnt >= 1, "HEAP_QUERY with cnt 0 and heaps 0 counts heaps");
	tap_diag("%u heaps", hs->cnt);
	for (i = 0; i < hs->cnt; i++)
		tap_diag("heap %u: '%.32s' type %u id %u", i, hs->h[i].name,
			 hs->h[i].type, hs->h[i].heap_id);

	ok = 1;
	for (i = 0; i < hs->cnt; i++) {
		const struct ion_heap_data *h = &hs->h[i];

		if (h->reserved0 || h->reserved1 || h->reserved2 ||
		    !memchr(h->name, 0, sizeof(h->name)) || !h->name[0] ||
		    h->heap_id >= ION_NUM_HEAP_IDS)
			ok = 0;
		for (j = 0; j < i; j++)
			if (hs->h[j].heap_id == h->heap_id ||
			    !strcmp(hs->h[j].name, h->name))
				ok = 0;
	}
	tap_ok(ok, "HEAP_QUERY entries: named, unique ids < 32, reserved 0");

	ok = 1;
	for (i = 1; i < hs->cnt; i++)
		if (hs->h[i].heap_id >= hs->h[i - 1].heap_id)
			ok = 0;
	tap_ok(ok, "HEAP_QUERY lists heaps in priority order (id descending)");

	for (i = 0; i < IT_ARRAY_SIZE(it_known_heaps); i++) {
		const struct it_heap *k = &it_known_heaps[i];
		const struct ion_heap_data *h = it_heap_find(hs, k->name);
		char name[64];

		snprintf(name, sizeof(name), "%s: id %u, type %u", k->name,
			 k->id, k->type);
		if (!h && k->id != 0) {
			tap_skip(name, "heap not registered");
			continue;
		}
		tap_ok(h && h->heap_id == k->id && h->type == k->type, "%s",
		       name);
	}

	/* No array: the count, whatever cnt says (libion passes its cnt). */
	memset(&q, 0, sizeof(q));
	q.cnt = 7;
	ret = it_ioctl(ion, ION_IOC_HEAP_QUERY, &q);
	if (!tap_ok(!ret && q.cnt == hs->cnt,
		    "HEAP_QUERY with cnt 7 and heaps 0 counts heaps"))
		tap_diag("HEAP_QUERY: %s, cnt %u", strerror(-ret), q.cnt);

	/* A short array: only cnt entries are written. */
	memset(one, 0x5a, sizeof(one));
	memset(&q, 0, sizeof(q));
	q.cnt = 1;
	q.heaps = (uintptr_t)one;
	ret = it_ioctl(ion, ION_IOC_HEAP_QUERY, &q);
	tap_ok(!ret && q.cnt == 1 && !strcmp(one[0].name, hs->h[0].name) &&
	       ((unsigned char *)&one[1])[0] == 0x5a &&
	       ((unsigned char *)&one[1])[sizeof(one[1]) - 1] == 0x5a,
	       "HEAP_QUERY with cnt 1 fills exactly one entry");

	/* A long array: cnt comes back as the number of heaps. */
	{
		struct ion_heap_data many[ION_NUM_HEAP_IDS + 4];

		memset(&q, 0, sizeof(q));
		q.cnt = IT_ARRAY_SIZE(many);
		q.heaps = (uintptr_t)many;
		ret = it_ioctl(ion, ION_IOC_HEAP_QUERY, &q);
		tap_ok(!ret && q.cnt == hs->cnt,
		       "HEAP_QUERY with a larger array returns the heap count");
	}
}

static void *map(int fd, size_t len, off_t off)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
}

static void alloc_cases(int ion, const struct it_heap *k, size_t size,
			unsigned int flags)
{
	char hn[80];
	long pg = it_page();
	int fd, fl, ok;
	unsigned char *p, *q;
	char exp[32] = "";

	snprintf(hn, sizeof(hn), "%s%s%s", k->name,
		 flags & ION_FLAG_CACHED ? " cached" : "",
		 flags & ION_FLAG_CACHED_NEEDS_SYNC ? "+sync" : "");
	fd = it_alloc_fd(ion, size - pg + 1, 1U << k->id, flags);
	if (!it_expect(fd, 0, "%s: ALLOC gives a dma-buf fd", hn))
		return;
	fl = fcntl(fd, F_GETFL);
	tap_ok((fl & O_ACCMODE) == O_RDWR &&
	       (fcntl(fd, F_GETFD) & FD_CLOEXEC),
	       "%s: fd is O_RDWR and close-on-exec", hn);
	it_fdinfo(fd, "exp_name", exp, sizeof(exp));
	tap_ok(!strcmp(exp, "ion"), "%s: exporter is ion", hn);
	tap_ok(lseek(fd, 0, SEEK_END) == (off_t)size,
	       "%s: len rounded up to whole pages", hn);
	tap_ok(it_buffer_in_heap(fd, k->name), "%s: buffer is in heap %s", hn,
	       k->name);

	p = map(fd, size, 0);
	if (!tap_ok(p != MAP_FAILED, "%s: mmap", hn)) {
		tap_diag("mmap: %s", strerror(errno));
		close(fd);
		return;
	}
	it_expect(it_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE), 0,
		  "%s: DMA_BUF_IOCTL_SYNC start write", hn);
	it_fill(p, size, seed);
	it_expect(it_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE), 0,
		  "%s: DMA_BUF_IOCTL_SYNC end write", hn);
	it_expect(it_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ), 0,
		  "%s: DMA_BUF_IOCTL_SYNC start read", hn);
	tap_ok(it_check(p, size, seed) < 0, "%s: mmap write/read", hn);
	it_expect(it_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ), 0,
		  "%s: DMA_BUF_IOCTL_SYNC end read", hn);
	it_expect(it_sync(fd, 1ULL << 3), EINVAL,
		  "%s: DMA_BUF_IOCTL_SYNC with bad flags", hn);

	/* mmap at an offset: page 1.. sees what the full mapping has there */
	q = map(fd, size - pg, pg);
	ok = q != MAP_FAILED && !memcmp(q, p + pg, size - pg);
	tap_ok(ok, "%s: mmap at offset one page sees the same bytes", hn);
	if (q != MAP_FAILED) {
		q[0] ^= 0xff;
		tap_ok(p[pg] == (unsigned char)(it_pat(pg, seed) ^ 0xff),
		       "%s: write through the offset mapping shows in the full one",
		       hn);
		munmap(q, size - pg);
	}
	q = map(fd, 2 * pg, size - pg);
	tap_ok(q == MAP_FAILED && errno == EINVAL,
	       "%s: mmap reaching past the end is EINVAL", hn);
	if (q != MAP_FAILED)
		munmap(q, 2 * pg);
	q = map(fd, pg, size);
	tap_ok(q == MAP_FAILED, "%s: mmap at offset == size fails", hn);
	if (q != MAP_FAILED)
		munmap(q, pg);

	munmap(p, size);
	close(fd);
}

/* Write a pattern, free, allocate again: the new buffer reads zero. */
static void zero_case(int ion, const struct it_heap *k, size_t size,
		      unsigned int flags)
{
	int i, fd, dirty = 0;
	unsigned char *p;

	for (i = 0; i < 8 && !dirty; i++) {
		fd = it_alloc_fd(ion, size, 1U << k->id, flags);
		if (fd < 0) {
			tap_diag("ALLOC: %s", strerror(-fd));
			dirty = -1;
			break;
		}
		p = map(fd, size, 0);
		if (p == MAP_FAILED) {
			close(fd);
			dirty = -1;
			break;
		}
		it_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
		if (it_check_zero(p, size) >= 0) {
			tap_diag("round %d: byte %ld is 0x%02x", i,
				 it_check_zero(p, size),
				 p[it_check_zero(p, size)]);
			dirty = 1;
		}
		it_fill(p, size, seed + i);
		it_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
		munmap(p, size);
		close(fd);
	}
	tap_ok(!dirty, "%s%s: reallocated memory reads zero (8 rounds)",
	       k->name, flags ? " cached" : "");
}

static void fallback_cases(int ion, const struct it_heaps *hs)
{
	unsigned int all = it_heaps_mask(hs), top = hs->h[0].heap_id;
	char got[ION_MAX_HEAP_NAME];
	int fd;

	fd = it_alloc_fd(ion, 4096, all, 0);
	it_buffer_heap(hs, fd, got, sizeof(got));
	if (!tap_ok(fd >= 0 && !strcmp(got, hs->h[0].name),
		    "fallback: mask of all heaps picks the highest id (%u)", top))
		tap_diag("buffer landed in '%s'", got);
	if (fd >= 0)
		close(fd);

	fd = it_alloc_fd(ion, 4096, ~0U, 0);
	it_buffer_heap(hs, fd, got, sizeof(got));
	tap_ok(fd >= 0 && !strcmp(got, hs->h[0].name),
	       "fallback: mask ~0 picks the highest registered id");
	if (fd >= 0)
		close(fd);

	if (it_heap_find(hs, ION_SYSTEM_CONTIG_HEAP_NAME)) {
		fd = it_alloc_fd(ion, 4096, ION_HEAP_SYSTEM_MASK |
				 ION_HEAP_SYSTEM_CONTIG_MASK, 0);
		it_buffer_heap(hs, fd, got, sizeof(got));
		tap_ok(fd >= 0 && !strcmp(got, ION_SYSTEM_CONTIG_HEAP_NAME),
		       "fallback: system|system_contig picks system_contig");
		if (fd >= 0)
			close(fd);
		/*
		 * Too large for the buddy allocator: contig fails, system
		 * takes it (64 MiB > any MAX_PAGE_ORDER block).
		 */
		fd = it_alloc_fd(ion, 64 << 20, ION_HEAP_SYSTEM_MASK |
				 ION_HEAP_SYSTEM_CONTIG_MASK, 0);
		it_buffer_heap(hs, fd, got, sizeof(got));
		if (!tap_ok(fd >= 0 && !strcmp(got, ION_SYSTEM_HEAP_NAME),
			    "fallback: 64 MiB on system|system_contig falls back to system"))
			tap_diag("fd %d, heap '%s'", fd, got);
		if (fd >= 0)
			close(fd);
	} else {
		tap_skip("fallback: system|system_contig", "no system_contig heap");
	}

	/* an unregistered id next to a registered one is ignored */
	fd = it_alloc_fd(ion, 4096, ION_HEAP_SYSTEM_MASK | (1U << 30), 0);
	it_buffer_heap(hs, fd, got, sizeof(got));
	tap_ok(fd >= 0 && !strcmp(got, ION_SYSTEM_HEAP_NAME),
	       "fallback: system | unregistered id 30 picks system");
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	const struct it_heap *k;
	struct it_heaps hs;
	int ion = it_setup(&hs);
	long pg = it_page();
	unsigned int i;

	seed = it_seed();
	query_cases(ion, &hs);
	for (i = 0; (k = it_known_next(&hs, &i)); i++) {
		size_t size = k->contig ? 16 * pg : 1024 * pg + 5 * pg;

		alloc_cases(ion, k, size, 0);
		alloc_cases(ion, k, size, ION_FLAG_CACHED);
		alloc_cases(ion, k, size,
			    ION_FLAG_CACHED | ION_FLAG_CACHED_NEEDS_SYNC);
		zero_case(ion, k, size, 0);
		zero_case(ion, k, size, ION_FLAG_CACHED);
	}
	fallback_cases(ion, &hs);
	close(ion);
	return tap_exit();
}
