// SPDX-License-Identifier: MIT
/*
 * heap_external: a heap registered by another module (ion_test_heap.ko,
 * through <linux/ion_heap.h>) is a heap like ion's own: HEAP_QUERY lists
 * it, /dev/ion and its /dev/dma_heap/ion-test node allocate from it (its
 * own counters move), ION_IOC_CUSTOM reaches its custom_ioctl op, and each
 * buffer pins its module.  Removing the heap while a buffer lives: the
 * node goes and a file still open on it answers ENODEV, /dev/ion answers
 * ENODEV for its mask, the live buffer keeps its data and stays mappable,
 * the heap cannot come back (EBUSY) until that buffer is freed - by the
 * heap's own free op - and then it can.  An ION_IOC_CUSTOM whose user
 * pointer stalls (a userfaultfd page nobody serves yet) holds up neither
 * the heap's removal nor an allocation meanwhile: the op runs without the
 * heap lock, its heap pinned; served, it completes, and the heap can be
 * added again.
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "fz_common.h"
#include "heap_util.h"
#include "../kmod/ion_test_heap.h"

#define MOD	"ion_test_heap"
#define PARAM	"/sys/module/" MOD "/parameters/"
#define NODE	"/dev/dma_heap/ion-" ION_TEST_HEAP_NAME
#define MASK	(1U << ION_TEST_HEAP_ID)
#define LEN	(64 * 1024)

struct stats {
	unsigned long long allocs, frees, live;
};

/* The module's "stats" parameter; all -1 when it cannot be read. */
static struct stats stats_read(void)
{
	struct stats s = { -1ULL, -1ULL, -1ULL };
	FILE *f = fopen(PARAM "stats", "r");

	if (f) {
		if (fscanf(f, "%llu %llu %llu", &s.allocs, &s.frees,
			   &s.live) != 3)
			s.allocs = s.frees = s.live = -1ULL;
		fclose(f);
	}
	return s;
}

static long module_refcnt(void)
{
	FILE *f = fopen("/sys/module/" MOD "/refcnt", "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static int listed(int ion)
{
	struct it_heaps hs;
	const struct ion_heap_data *h;

	if (it_heaps_load(ion, &hs))
		return -1;
	h = it_heap_find(&hs, ION_TEST_HEAP_NAME);
	return h && h->heap_id == ION_TEST_HEAP_ID &&
	       h->type == ION_HEAP_TYPE_CUSTOM;
}

static int exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

/* A live buffer, mapped, holding the pattern of @seed. */
static int check_live(int buf, unsigned char *p, unsigned int seed,
		      const char *when)
{
	unsigned char *q;
	long bad;

	ht_cpu_begin(buf);
	bad = it_check(p, LEN, seed);
	ht_cpu_end(buf);
	tap_ok(bad < 0, "%s: the live buffer keeps its data", when);
	q = ht_map(buf, LEN);
	if (!tap_ok(q != NULL, "%s: the live buffer maps again", when))
		return 0;
	ht_cpu_begin(buf);
	it_fill(q, LEN, seed + 1);
	bad = it_check(p, LEN, seed + 1);
	ht_cpu_end(buf);
	munmap(q, LEN);
	return tap_ok(bad < 0, "%s: a write through one mapping reads back "
		      "through the other", when);
}

static void custom(int ion)
{
	struct ion_test_heap_stats st;
	struct ion_custom_data c = {
		.cmd = ION_TEST_HEAP_CMD_STATS,
		.arg = (unsigned long)&st,
	};
	struct stats s = stats_read();
	int ret;

	memset(&st, 0, sizeof(st));
	ret = it_ioctl(ion, ION_IOC_CUSTOM, &c);
	tap_ok(!ret && st.magic == ION_TEST_HEAP_MAGIC &&
	       st.allocs == s.allocs && st.live_bytes == s.live,
	       "ION_IOC_CUSTOM reaches the heap's custom_ioctl (%d, magic %#x)",
	       ret, st.magic);
	c.cmd = ION_TEST_HEAP_CMD_STATS + 1;
	ret = it_ioctl(ion, ION_IOC_CUSTOM, &c);
	tap_ok(ret == -ENOTTY, "a command no heap knows: ENOTTY (%d)", ret);
}

#define STALL_MS	5000

enum { STALL_CUSTOM, STALL_REMOVE, STALL_ALLOC, STALL_N };

/* Three callers around a stalled ION_IOC_CUSTOM; each sets its done. */
struct stall {
	int ion;
	void *page;
	int ret[STALL_N];
	int done[STALL_N];
};

struct stall_arg {
	struct stall *s;
	int who;
};

static void *stall_thread(void *arg)
{
	struct stall_arg *a = arg;
	struct stall *s = a->s;
	struct ion_custom_data c = {
		.cmd = ION_TEST_HEAP_CMD_STATS,
		.arg = (unsigned long)s->page,
	};
	int ret;

	if (a->who == STALL_CUSTOM) {
		ret = it_ioctl(s->ion, ION_IOC_CUSTOM, &c);
	} else if (a->who == STALL_REMOVE) {
		ret = ht_write_str(PARAM "registered", "N", 0);
	} else {
		ret = it_alloc_fd(s->ion, 4096, ION_HEAP_SYSTEM_MASK,
				  ION_FLAG_CACHED);
		if (ret >= 0)
			close(ret);
		ret = ret < 0 ? ret : 0;
	}
	s->ret[a->who] = ret;
	__atomic_store_n(&s->done[a->who], 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Wait up to @ms for callers @from..@to of @s; 1 when all are done. */
static int stall_wait(struct stall *s, int from, int to, int ms)
{
	int i, all;

	for (;; ms -= 10) {
		for (i = from, all = 1; i <= to; i++)
			all &= __atomic_load_n(&s->done[i], __ATOMIC_ACQUIRE);
		if (all || ms <= 0)
			return all;
		usleep(10000);
	}
}

/* A page of @len whose first touch waits on @uffd; MAP_FAILED if none. */
static void *stall_page(int *uffd, size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	void *p;

	*uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (*uffd < 0 || ioctl(*uffd, UFFDIO_API, &api))
		return MAP_FAILED;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.range.start = (unsigned long)p;
	reg.range.len = len;
	if (p != MAP_FAILED && ioctl(*uffd, UFFDIO_REGISTER, &reg)) {
		munmap(p, len);
		p = MAP_FAILED;
	}
	return p;
}

/*
 * ION_IOC_CUSTOM stalls in the heap's copy_to_user(); meanwhile the heap
 * is removed and the system heap allocates.  Before the op ran without
 * the heap lock, the removal waited for it and the allocation for the
 * removal.
 */
static void custom_stall(int ion)
{
	struct stall s = { .ion = ion };
	struct stall_arg args[STALL_N];
	struct pollfd pfd = { .events = POLLIN };
	struct uffdio_zeropage zp = { 0 };
	struct ion_test_heap_stats *st;
	pthread_t t[STALL_N];
	size_t len = it_page();
	int uffd = -1, i, waited, others, ret;

	s.page = stall_page(&uffd, len);
	if (s.page == MAP_FAILED) {
		tap_skip("a stalled ION_IOC_CUSTOM", "no userfaultfd");
		if (uffd >= 0)
			close(uffd);
		return;
	}
	for (i = 0; i < STALL_N; i++)
		args[i] = (struct stall_arg){ .s = &s, .who = i };
	pthread_create(&t[STALL_CUSTOM], NULL, stall_thread,
		       &args[STALL_CUSTOM]);
	pfd.fd = uffd;
	waited = poll(&pfd, 1, STALL_MS) == 1;
	/* The allocation once the removal waits (past its RCU sync). */
	pthread_create(&t[STALL_REMOVE], NULL, stall_thread,
		       &args[STALL_REMOVE]);
	usleep(STALL_MS * 1000 / 5);
	pthread_create(&t[STALL_ALLOC], NULL, stall_thread,
		       &args[STALL_ALLOC]);
	others = stall_wait(&s, STALL_REMOVE, STALL_ALLOC, STALL_MS);
	tap_diag("custom stalled %d; removal %d (%d), allocation %d (%d) while it did",
		 waited, s.done[STALL_REMOVE], s.ret[STALL_REMOVE],
		 s.done[STALL_ALLOC], s.ret[STALL_ALLOC]);
	zp.range.start = (unsigned long)s.page;
	zp.range.len = len;
	ret = ioctl(uffd, UFFDIO_ZEROPAGE, &zp);
	for (i = 0; i < STALL_N; i++)
		pthread_join(t[i], NULL);
	tap_ok(waited && others && !s.ret[STALL_REMOVE] &&
	       !s.ret[STALL_ALLOC],
	       "a stalled ION_IOC_CUSTOM holds up neither the heap's removal nor an allocation");
	st = s.page;
	tap_ok(!ret && !s.ret[STALL_CUSTOM] && st->magic == ION_TEST_HEAP_MAGIC,
	       "served, the stalled ION_IOC_CUSTOM completes (%d)",
	       s.ret[STALL_CUSTOM]);
	ret = ht_write_str(PARAM "registered", "Y", 0);
	tap_ok(!ret && listed(ion) == 1, "and the heap can be added again (%d)",
	       ret);
	munmap(s.page, len);
	close(uffd);
}

/* Allocations through /dev/ion and the node reach the heap. */
static void allocate(int ion, int node)
{
	struct stats s0 = stats_read(), s1;
	int buf, ret;

	buf = it_alloc_fd(ion, LEN, MASK, ION_FLAG_CACHED);
	s1 = stats_read();
	tap_ok(buf >= 0 && s1.allocs == s0.allocs + 1 &&
	       s1.live == s0.live + LEN,
	       "/dev/ion with the heap's mask allocates from it (%d)", buf);
	if (buf >= 0) {
		tap_ok(it_buffer_in_heap(buf, ION_TEST_HEAP_NAME) == 1,
		       "debugfs lists the buffer under the heap");
		close(buf);
	}
	s0 = stats_read();
	tap_ok(s0.frees == s1.frees + 1 && s0.live == s1.live - LEN,
	       "closing it calls the heap's free op");
	buf = node >= 0 ? fz_node_alloc(node, LEN) : -ENOENT;
	s1 = stats_read();
	tap_ok(buf >= 0 && s1.allocs == s0.allocs + 1,
	       NODE " allocates from the heap (%d)", buf);
	if (buf >= 0)
		close(buf);
	ret = it_alloc_fd(ion, LEN, MASK, 0);
	tap_ok(ret == -EINVAL, "an uncached request: EINVAL, as documented "
	       "(%d)", ret);
	if (ret >= 0)
		close(ret);
}

/* Remove the heap under a live buffer, free it, add the heap again. */
static void remove_live(int ion, int node)
{
	struct stats s0, s1;
	unsigned char *p;
	int buf, ret;

	buf = ht_alloc_map(ion, LEN, ION_TEST_HEAP_ID, ION_FLAG_CACHED, &p);
	if (!tap_ok(buf >= 0, "a buffer to keep (%d)", buf))
		return;
	it_fill(p, LEN, 7);
	ht_cpu_end(buf);
	tap_ok(module_refcnt() >= 1 && fz_unload(MOD) == -EWOULDBLOCK,
	       "the buffer pins the heap's module");

	ret = ht_write_str(PARAM "registered", "N", 0);
	tap_ok(!ret, "heap removed (%d)", ret);
	tap_ok(!exists(NODE), NODE " is gone");
	ret = node >= 0 ? fz_node_alloc(node, LEN) : -EBADF;
	tap_ok(ret == -ENODEV, "a file still open on it: ENODEV (%d)", ret);
	ret = it_alloc_fd(ion, LEN, MASK, ION_FLAG_CACHED);
	tap_ok(ret == -ENODEV, "/dev/ion with its mask: ENODEV (%d)", ret);
	tap_ok(listed(ion) == 0, "HEAP_QUERY no longer lists it");
	check_live(buf, p, 7, "after removal");
	ret = ht_write_str(PARAM "registered", "Y", 0);
	tap_ok(ret == -EBUSY, "added again while the buffer lives: EBUSY (%d)",
	       ret);
	ret = ht_write_str(PARAM "twin", "Y", 0);
	if (!ret)
		ht_write_str(PARAM "twin", "N", 0);
	tap_ok(ret == -EBUSY,
	       "another heap with its id while the buffer lives: EBUSY (%d)",
	       ret);
	tap_ok(fz_unload(MOD) == -EWOULDBLOCK, "the module stays pinned");

	s0 = stats_read();
	munmap(p, LEN);
	close(buf);
	s1 = stats_read();
	tap_ok(s1.frees == s0.frees + 1 && s1.live == s0.live - LEN,
	       "the last close frees it through the removed heap's op");
	tap_ok(module_refcnt() == 0, "and unpins the module");
	ret = ht_write_str(PARAM "twin", "Y", 0);
	tap_ok(!ret, "then another heap can take its id (%d)", ret);
	if (!ret)
		ht_write_str(PARAM "twin", "N", 0);
	ret = ht_write_str(PARAM "registered", "Y", 0);
	tap_ok(!ret && exists(NODE) && listed(ion) == 1,
	       "then the heap can be added again (%d)", ret);
}

int main(void)
{
	struct stat st;
	int ion, node, ret;

	if (fz_module_loaded(MOD))
		fz_unload(MOD);
	ret = system("modprobe " MOD);
	if (!tap_ok(ret == 0, "modprobe " MOD))
		return tap_exit();
	ion = it_open();
	if (!tap_ok(ion >= 0, "open " IT_DEV))
		return tap_exit();
	tap_ok(listed(ion) == 1, "HEAP_QUERY lists heap \"%s\", id %d, "
	       "type CUSTOM", ION_TEST_HEAP_NAME, ION_TEST_HEAP_ID);
	tap_ok(fz_holders("ion", 0) >= 1, MOD ".ko holds ion.ko");
	node = open(NODE, O_RDWR | O_CLOEXEC);
	tap_ok(node >= 0, NODE " exists");
	custom(ion);
	allocate(ion, node);
	remove_live(ion, node);
	/* Last: it removes the heap, and with it @node's file. */
	custom_stall(ion);
	if (node >= 0)
		close(node);
	close(ion);
	ret = fz_unload(MOD);
	tap_ok(!ret && stat(NODE, &st) && errno == ENOENT,
	       "the module unloads and its node goes (%d)", ret);
	return tap_exit();
}
