// SPDX-License-Identifier: MIT
/*
 * trace_events: ion's tracepoints (kernel/include/trace/ion_trace.h) fire
 * with the right fields, read back through a tracefs instance of the
 * test's own: ion_alloc and ion_free for a buffer of every heap (heap,
 * id, size, flags, client, pid, result, dma-buf inode, a latency);
 * ion_alloc of a refused request (-ENOMEM, -EDQUOT) with its errno;
 * ion_mmap (pid, length, page offset); ion_cpu_access_begin/end with the
 * direction of each DMA_BUF_IOCTL_SYNC; ion_quota_refusal with the
 * client's limit; ion_memcg_refusal in a cgroup with a memory.max; the
 * pool events: refill as freed chunks are zeroed into the pools, drain
 * as an allocation takes one, shrink on drop_caches.  Devices
 * (attach/map) are trace_attach's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include "heap_util.h"
#include "ion_test_util.h"
#include "trace_util.h"

#define LEN		(64 * 1024)
#define CG_DIR		"/sys/fs/cgroup/trace_events"

static struct tr_inst inst;
static char client[64];

/* Find @event with @fields in the buffer; report case @what; the line. */
static char *expect(char **text, const char *event,
		    const char *const *fields, const char *what)
{
	const char *line;

	free(*text);
	*text = tr_read(&inst);
	line = *text ? tr_find(*text, event, fields) : NULL;
	if (!line) {
		unsigned int i;

		tap_diag("no %s with:", event);
		for (i = 0; fields[i]; i++)
			tap_diag("  %s", fields[i]);
		tap_diag("buffer:\n%s", *text ? *text : "(unreadable)");
	}
	tap_ok(!!line, "%s", what);
	return (char *)line;
}

static unsigned long long field_num(const char *line, const char *key)
{
	char v[32];

	return line && !tr_field(line, key, v, sizeof(v)) ?
	       strtoull(v, NULL, 0) : 0;
}

static void alloc_free_case(int ion, const struct it_heap *k)
{
	char heap[64], id[32], pid[32], cl[96], ino[48], what[128];
	char *text = NULL;
	const char *const f[] = { heap, id, "size=65536", "flags=0x1", cl,
				  pid, "ret=0", ino, NULL };
	const char *const g[] = { heap, "size=65536", cl, ino, NULL };
	const char *line;
	int fd;

	tr_clear(&inst);
	fd = it_alloc_fd(ion, LEN, 1U << k->id, ION_FLAG_CACHED);
	if (fd < 0) {
		tap_ok(0, "%s: allocate: %s", k->name, strerror(-fd));
		return;
	}
	snprintf(heap, sizeof(heap), "heap=%s", k->name);
	snprintf(id, sizeof(id), "heap_id=%u", k->id);
	snprintf(pid, sizeof(pid), "pid=%d", (int)getpid());
	snprintf(cl, sizeof(cl), "client=%s", client);
	snprintf(ino, sizeof(ino), "ino=%lu", it_ino(fd));
	close(fd);
	snprintf(what, sizeof(what),
		 "%s: ion_alloc: heap, id, size, flags, client, pid, ret, ino",
		 k->name);
	line = expect(&text, "ion_alloc", f, what);
	tap_ok(field_num(line, "latency_ns") > 0, "%s: ion_alloc latency_ns > 0",
	       k->name);
	snprintf(what, sizeof(what), "%s: ion_free: heap, size, client, ino",
		 k->name);
	expect(&text, "ion_free", g, what);
	free(text);
}

static void refused_case(int ion)
{
	char pid[32], *text = NULL;
	const char *const f[] = { "heap=-", "heap_id=-1", "size=17592186044416",
				  pid, "ret=-12", "ino=0", NULL };
	int fd;

	snprintf(pid, sizeof(pid), "pid=%d", (int)getpid());
	tr_clear(&inst);
	fd = it_alloc_fd(ion, 1ULL << 44, ION_HEAP_SYSTEM_MASK, 0);
	tap_ok(fd == -ENOMEM, "16 TiB: ENOMEM (%s)", strerror(-fd));
	if (fd >= 0)
		close(fd);
	expect(&text, "ion_alloc", f, "refused ion_alloc: ret=-12, no heap");
	free(text);
}

/* DMA_BUF_IOCTL_SYNC @flags: ion_cpu_access_@which with dir=@dir. */
static void sync_case(int fd, unsigned long long flags, const char *which,
		      const char *dir, const char *ino)
{
	char ev[48], d[48], pid[32], what[96], *text = NULL;
	const char *const f[] = { d, pid, ino, NULL };

	snprintf(ev, sizeof(ev), "ion_cpu_access_%s", which);
	snprintf(d, sizeof(d), "dir=%s", dir);
	snprintf(pid, sizeof(pid), "pid=%d", (int)getpid());
	snprintf(what, sizeof(what), "%s: dir=%s, pid, ino", ev, dir);
	tr_clear(&inst);
	if (it_sync(fd, flags))
		tap_diag("DMA_BUF_IOCTL_SYNC 0x%llx failed", flags);
	expect(&text, ev, f, what);
	free(text);
}

static void mmap_cpu_case(int ion)
{
	char pid[32], ino[48], *text = NULL;
	const char *const whole[] = { pid, "len=65536", "pgoff=0", ino, NULL };
	const char *const part[] = { pid, "len=4096", "pgoff=1", ino, NULL };
	void *p, *q;
	int fd = it_alloc_fd(ion, LEN, ION_HEAP_SYSTEM_MASK, ION_FLAG_CACHED);

	if (fd < 0) {
		tap_ok(0, "mmap: allocate: %s", strerror(-fd));
		return;
	}
	snprintf(pid, sizeof(pid), "pid=%d", (int)getpid());
	snprintf(ino, sizeof(ino), "ino=%lu", it_ino(fd));
	tr_clear(&inst);
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	q = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096);
	expect(&text, "ion_mmap", whole, "ion_mmap: whole buffer, pid, ino");
	expect(&text, "ion_mmap", part, "ion_mmap: one page at pgoff 1");
	if (p != MAP_FAILED)
		munmap(p, LEN);
	if (q != MAP_FAILED)
		munmap(q, 4096);
	free(text);

	sync_case(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ, "begin",
		  "from_device", ino);
	sync_case(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ, "end",
		  "from_device", ino);
	sync_case(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE, "begin",
		  "to_device", ino);
	sync_case(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW, "end",
		  "bidirectional", ino);
	close(fd);
}

/* Entry 0 (the system heap) of array parameter @name; others -1. */
static int set_system_limit(const char *name, long kb)
{
	long kbs[ION_NUM_HEAP_IDS];
	unsigned int i;

	for (i = 0; i < ION_NUM_HEAP_IDS; i++)
		kbs[i] = i ? -1L : kb;
	return it_param_set_array(name, kbs, ION_NUM_HEAP_IDS);
}

static void quota_case(int ion)
{
	char pid[32], cl[96], *text = NULL;
	const char *const f[] = { "heap=ion_system_heap", "heap_id=0",
				  "size=131072", "uid=0", cl, pid,
				  "client_bytes=0", "client_limit=65536", NULL };
	const char *const a[] = { "heap=-", "size=131072", pid, "ret=-122",
				  NULL };
	int fd, ret;

	snprintf(pid, sizeof(pid), "pid=%d", (int)getpid());
	snprintf(cl, sizeof(cl), "client=%s", client);
	ret = it_param_set("quota_root", "Y");
	if (!ret)
		ret = set_system_limit("client_max_kb", 64);
	tr_clear(&inst);
	fd = ret ? ret : it_alloc_fd(ion, 128 * 1024, ION_HEAP_SYSTEM_MASK, 0);
	tap_ok(fd == -EDQUOT, "128 KiB over a 64 KiB client quota: EDQUOT (%s)",
	       strerror(-fd));
	if (fd >= 0)
		close(fd);
	set_system_limit("client_max_kb", -1);
	it_param_set("quota_root", "N");
	expect(&text, "ion_quota_refusal", f,
	       "ion_quota_refusal: heap, size, uid, client, pid, limit");
	expect(&text, "ion_alloc", a, "its ion_alloc: ret=-122 (EDQUOT)");
	free(text);
}

/* Worker setup: join the test's cgroup. */
static int join_cgroup(void *arg)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return ht_write_str(CG_DIR "/cgroup.procs", pid, 0);
}

static int cgroup_setup(void)
{
	struct stat st;

	if (stat("/sys/fs/cgroup/cgroup.controllers", &st) &&
	    mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL))
		return -errno;
	rmdir(CG_DIR);
	if (ht_write_str("/sys/fs/cgroup/cgroup.subtree_control", "+memory",
			 0) || mkdir(CG_DIR, 0755))
		return -errno ? -errno : -EIO;
	return ht_write_str(CG_DIR "/memory.max", "16M", 0);
}

static void memcg_case(void)
{
	char pid[32], *text = NULL;
	const char *const f[] = { "heap=ion_system_heap", "size=67108864", pid,
				  "max=16777216", NULL };
	struct it_worker w;
	struct it_reply r;
	int ret = cgroup_setup();

	if (ret) {
		tap_skip("ion_memcg_refusal", ret == -ENOENT || ret == -ENODEV ?
			 "no memory cgroups" : strerror(-ret));
		rmdir(CG_DIR);
		return;
	}
	if (it_worker_start(&w, join_cgroup, NULL)) {
		tap_ok(0, "a worker joins the cgroup");
		rmdir(CG_DIR);
		return;
	}
	snprintf(pid, sizeof(pid), "pid=%d", (int)w.pid);
	tr_clear(&inst);
	r = it_worker_alloc(&w, 1, 64 << 20, ION_HEAP_SYSTEM_MASK, 0);
	tap_ok(!r.done && r.err == ENOMEM,
	       "64 MiB in a cgroup of memory.max 16M: ENOMEM (%s)",
	       strerror(r.err));
	it_worker_stop(&w);
	rmdir(CG_DIR);
	expect(&text, "ion_memcg_refusal", f,
	       "ion_memcg_refusal: heap, size, the worker's pid, memory.max");
	free(text);
}

static void pool_case(int ion)
{
	const char *const cached[] = { "pool=system", "cached=1", NULL };
	int bufs[16], n, ret, refills;
	char *text = NULL;
	const char *line;

	ret = ht_drop_pools();
	tr_clear(&inst);
	/* A burst of frees: pooled (ion_chunk_pool.c's free policy). */
	for (n = 0; n < 16; n++)
		bufs[n] = ret ? -1 : it_alloc_fd(ion, LEN, ION_HEAP_SYSTEM_MASK,
						 ION_FLAG_CACHED);
	while (n--)
		if (bufs[n] >= 0)
			close(bufs[n]);
	if (!ret)
		ret = ht_wait_deferred();
	text = tr_read(&inst);
	refills = text ? tr_count(text, "ion_pool_refill", cached) : 0;
	tap_diag("%d ion_pool_refill events", refills);
	tap_ok(!ret && refills > 0,
	       "freed chunks zeroed into the pools: ion_pool_refill");

	tr_clear(&inst);
	n = it_alloc_fd(ion, LEN, ION_HEAP_SYSTEM_MASK, ION_FLAG_CACHED);
	expect(&text, "ion_pool_drain", cached,
	       "an allocation takes a pooled chunk: ion_pool_drain");
	if (n >= 0)
		close(n);
	ht_wait_deferred();

	tr_clear(&inst);
	ht_write_str("/proc/sys/vm/drop_caches", "3", 0);
	line = expect(&text, "ion_pool_shrink", (const char *const[]){
		      "pool=system", NULL }, "drop_caches: ion_pool_shrink");
	tap_ok(field_num(line, "freed") > 0, "ion_pool_shrink: freed > 0");
	free(text);
}

int main(void)
{
	struct it_heaps hs;
	const struct it_heap *k;
	unsigned int i;
	int ion, ret;

	ion = it_setup(&hs);
	if (ion < 0)
		return tap_exit();
	ret = tr_open(&inst, "trace_events");
	if (ret == -ENOENT && tr_kernel_has_events()) {
		tap_ok(0, "ion's events are in tracefs");
		return tap_exit();
	}
	if (ret) {
		tap_skip("trace_events", ret == -ENOENT ?
			 "no tracefs in this kernel" : strerror(-ret));
		return tap_exit();
	}
	it_client_name(client, sizeof(client));
	for (i = 0; (k = it_known_next(&hs, &i)); i++)
		alloc_free_case(ion, k);
	refused_case(ion);
	mmap_cpu_case(ion);
	quota_case(ion);
	memcg_case();
	pool_case(ion);
	tr_close(&inst);
	close(ion);
	return tap_exit();
}
