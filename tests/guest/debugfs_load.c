// SPDX-License-Identifier: MIT
/*
 * debugfs never stalls the allocation path (ion_debugfs.c, "debugfs
 * batches"): with 100 000 buffers live, one process reads heaps/system
 * over and over while this one allocates and frees 4 KiB buffers through
 * /dev/dma_heap/ion-system, whose path takes the heap's list lock that the
 * view walks.  The view takes that lock only to copy one batch of
 * entries, so allocations complete while the reader is inside a read()
 * of the view; a view that held the lock from ->start to ->stop (or
 * rendered the whole file under it, as a single_open() view would) lets
 * none through until the read returns, but those that come before it
 * takes the lock or after it drops it.  The reader marks each read() in
 * a sequence count (odd while inside), and an allocation counts as
 * "during a read" when it began and ended within the same one.  No
 * timing is asserted: how much a reader delays an allocation is a bench
 * figure.  The views must also be whole: each of our 100 000 buffers and
 * handles listed exactly once, in id order.
 */
#include <linux/dma-heap.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "ion_test_util.h"

#define BUFFERS		100000
#define ALLOCS		2000	/* at least, while the reader runs */

/* What the reader did, in memory shared with it. */
struct reader_stats {
	unsigned long seq;	/* odd while inside a read() of the view */
	long passes;
	long long bytes;
};

static char heap_path[256], client_path[256];

/* Rows of a view whose column @col (0-based) equals @want; ascending @key. */
static long count_rows(const char *text, int col, const char *want,
		       int keycol, int *ordered)
{
	long long last = -1;
	long rows = 0;
	const char *line;

	*ordered = 1;
	line = strstr(text, "\n\n");
	if (!line)
		return -1;
	line = strchr(line + 2, '\n');	/* skip the column header */
	while (line && *++line) {
		char field[128];
		const char *p = line;
		long long key = -1;
		int c;

		for (c = 0; p && c <= (col > keycol ? col : keycol); c++) {
			size_t n = strcspn(p, "\t\n");

			snprintf(field, sizeof(field), "%.*s", (int)n, p);
			if (c == keycol)
				key = atoll(field);
			if (c == col && !strcmp(field, want)) {
				rows++;
				if (key <= last)
					*ordered = 0;
				last = key;
			}
			p = p[n] == '\t' ? p + n + 1 : NULL;
		}
		line = strchr(line, '\n');
	}
	return rows;
}

/* Read heaps/system from start to end, over and over, counting bytes. */
static void reader(struct reader_stats *st)
{
	static char buf[65536];

	for (;;) {
		int fd = open(heap_path, O_RDONLY | O_CLOEXEC);
		ssize_t n;

		if (fd < 0)
			_exit(1);
		for (;;) {
			__atomic_fetch_add(&st->seq, 1, __ATOMIC_SEQ_CST);
			n = read(fd, buf, sizeof(buf));
			__atomic_fetch_add(&st->seq, 1, __ATOMIC_SEQ_CST);
			if (n <= 0)
				break;
			__atomic_fetch_add(&st->bytes, n, __ATOMIC_RELAXED);
		}
		close(fd);
		__atomic_fetch_add(&st->passes, 1, __ATOMIC_RELAXED);
	}
}

/*
 * Allocate and free 4 KiB buffers through the node @hfd while the reader
 * runs: at least ALLOCS, and until it has read the view twice more from
 * start to end (so at least one whole pass overlapped).  Returns how many
 * were made (*@n) and how many of them began and ended inside one of the
 * reader's read()s, or -errno.
 */
static int allocate_during_reads(int hfd, struct reader_stats *st, int *n)
{
	long until = __atomic_load_n(&st->passes, __ATOMIC_RELAXED) + 2;
	int inside = 0;

	for (*n = 0; *n < ALLOCS ||
		     __atomic_load_n(&st->passes, __ATOMIC_RELAXED) < until;
	     ++*n) {
		struct dma_heap_allocation_data d = {
			.len = 4096, .fd_flags = O_RDWR | O_CLOEXEC,
		};
		unsigned long s0, s1;

		s0 = __atomic_load_n(&st->seq, __ATOMIC_SEQ_CST);
		if (it_ioctl(hfd, DMA_HEAP_IOCTL_ALLOC, &d))
			return -errno;
		s1 = __atomic_load_n(&st->seq, __ATOMIC_SEQ_CST);
		close(d.fd);
		inside += s0 == s1 && (s0 & 1);
	}
	return inside;
}

/* Column @col of @path's rows names @want on exactly BUFFERS rows, by id. */
static void check_view(const char *path, int col, const char *want,
		       const char *what)
{
	char *text = NULL;
	int ordered = 0;
	long rows;

	rows = it_read_file(path, &text) > 0 ?
	       count_rows(text, col, want, 0, &ordered) : -1;
	tap_ok(rows == BUFFERS && ordered, "%s lists each of our %d %s once, by id",
	       path, BUFFERS, what);
	if (rows != BUFFERS || !ordered)
		tap_diag("%ld rows, %s", rows, ordered ? "in order" : "out of order");
	free(text);
}

static int allocate_all(int fd)
{
	ion_user_handle_t h;
	int i, ret;

	for (i = 0; i < BUFFERS; i++) {
		ret = it_alloc_handle(fd, 4096, 0, ION_HEAP_SYSTEM_MASK,
				      ION_FLAG_CACHED, &h);
		if (ret) {
			tap_diag("allocation %d: %s", i, strerror(-ret));
			return i;
		}
	}
	return i;
}

int main(void)
{
	struct reader_stats *st;
	int inside, n = 0;
	long long t0;
	pid_t pid;
	char client[64];
	struct it_heaps hs;
	int fd, hfd;

	fd = it_setup(&hs);
	it_client_name(client, sizeof(client));
	snprintf(heap_path, sizeof(heap_path), IT_DEBUGFS "/heaps/%s",
		 ION_SYSTEM_HEAP_NAME);
	snprintf(client_path, sizeof(client_path), IT_DEBUGFS "/clients/%s",
		 client);

	hfd = open("/dev/dma_heap/ion-system", O_RDONLY | O_CLOEXEC);
	if (hfd < 0)
		return tap_ok(0, "open /dev/dma_heap/ion-system"), tap_exit();
	t0 = it_now_ms();
	tap_ok(allocate_all(fd) == BUFFERS, "%d buffers of 4 KiB live",
	       BUFFERS);
	tap_diag("allocated in %lld ms", it_now_ms() - t0);
	check_view(heap_path, 4, client, "buffers");
	check_view(client_path, 4, ION_SYSTEM_HEAP_NAME, "handles");

	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		return tap_ok(0, "shared page"), tap_exit();
	pid = fork();
	if (pid == 0)
		reader(st);
	while (!__atomic_load_n(&st->bytes, __ATOMIC_RELAXED))
		usleep(10000);	/* the reader is well into a pass */
	inside = allocate_during_reads(hfd, st, &n);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	tap_ok(inside >= 0,
	       "%d allocations while the reader read the whole view at least once",
	       n);
	tap_diag("reader: %ld passes, %lld bytes", st->passes, st->bytes);
	/*
	 * The reader spends nearly all its time inside read(): most
	 * allocations land in one when the view lets them through (95% of
	 * them measured on x86_64 6.12); when a view holds the lock from
	 * ->start to ->stop only those that slip into a read() before the
	 * lock is taken or after it is dropped do (30% measured).
	 */
	if (getenv("RIG_DEBUG_KERNEL")) {
		/*
		 * The premise, an allocation far shorter than one read() of
		 * the view (a seq_file page), does not hold on the debug
		 * kernel: KASAN, lockdep and kmemleak slow the allocation
		 * path more than a read, and allocations straddle reads
		 * (54 % inside, measured).  The plain kernels assert it.
		 */
		tap_diag("%d of %d allocations inside a read()", inside, n);
		tap_skip("most allocations complete while the reader is inside a read() of the view",
			 "the debug kernel's instrumentation makes an allocation about as long as a read()");
	} else {
		tap_ok(inside * 5 >= n * 3,
		       "most allocations complete while the reader is inside a read() of the view (%d of %d, 60%% needed)",
		       inside, n);
	}
	close(hfd);
	close(fd);
	return tap_exit();
}
