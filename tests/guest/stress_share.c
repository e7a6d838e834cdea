// SPDX-License-Identifier: MIT
/*
 * Concurrent stress: PROCS processes x THREADS threads allocate, share,
 * import and free on every heap at once, with the carveout nearly full so
 * that carveout requests hit ENOMEM and carveout|system requests fall back.
 *
 * Every buffer gets its own pattern, written through mmap when it is
 * allocated and checked in full later, after the other threads and
 * processes ran: before it is freed, when another process received it
 * (SCM_RIGHTS over a ring of sockets, ION_IOC_IMPORT, SHARE, mmap) and
 * again before that process frees it, and at the end for the buffers
 * that filled the carveout.  Half of the workers free everything, the
 * other half exit with buffers, handles and mappings still open.  At the
 * end debugfs shows nothing left.
 *
 * Options: --seed N (default: time), --iterations N (per thread).
 */
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include "fz_common.h"

#define PROCS		3
#define THREADS		3
#define ITERATIONS	300	/* per thread */
#define LIVE		8	/* buffers a thread holds at most */
#define DEADLINE_MS	45000	/* stop early rather than overrun */
#define FILL_CHUNK	(1 << 20)
#define MAX_FILL	256

struct stats {
	long allocs[ION_NUM_HEAP_IDS + 2];	/* by mask slot, see mask_slot */
	long enomem[ION_NUM_HEAP_IDS + 2];
	long other_err;
	long verified;
	long corrupt;
	long sent;
	long imported;
	long import_err;
	long freed;
};

static struct stats *st;	/* shared between the processes */
static struct it_heaps hs;
static unsigned int carveout_id = ~0U, system_id = ~0U;
static uint64_t seed;
static int iterations = ITERATIONS;
static int ring_in, ring_out;	/* this worker's sockets */
static long long t_start;

/* Slots: 0..cnt-1 one heap; cnt: carveout|system; cnt + 1: all heaps. */
static unsigned int slot_mask(unsigned int slot)
{
	if (slot < hs.cnt)
		return 1U << hs.h[slot].heap_id;
	if (slot == hs.cnt)
		return (1U << carveout_id) | (1U << system_id);
	return it_heaps_mask(&hs);
}

static void pat_fill(uint64_t *p, size_t size, uint64_t s)
{
	size_t i;

	for (i = 0; i < size / 8; i++)
		p[i] = s * 0x9e3779b97f4a7c15ULL + i;
}

static long pat_check(const uint64_t *p, size_t size, uint64_t s)
{
	size_t i;

	for (i = 0; i < size / 8; i++)
		if (p[i] != s * 0x9e3779b97f4a7c15ULL + i)
			return (long)i * 8;
	return -1;
}

struct buf {
	int fd;
	ion_user_handle_t handle;	/* 0: none */
	uint64_t *map;
	size_t size;
	uint64_t seed;
	int received;
};

static void diag_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void diag_line(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(1, line, n) != n)
		return;
}

static int buf_verify(struct buf *b, const char *when)
{
	long off;

	it_sync(b->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	off = pat_check(b->map, b->size, b->seed);
	it_sync(b->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	__atomic_add_fetch(&st->verified, 1, __ATOMIC_RELAXED);
	if (off < 0)
		return 1;
	if (__atomic_add_fetch(&st->corrupt, 1, __ATOMIC_RELAXED) <= 5)
		diag_line("# pid %d: buffer seed %#llx size %zu %s: differs at offset %ld",
			  getpid(), (unsigned long long)b->seed, b->size, when,
			  off);
	return 0;
}

static void buf_free(int ion, struct buf *b)
{
	munmap(b->map, b->size);
	if (b->handle)
		it_free(ion, b->handle);
	close(b->fd);
	__atomic_add_fetch(&st->freed, 1, __ATOMIC_RELAXED);
}

static int send_buf(const struct buf *b)
{
	uint64_t msg[2] = { b->seed, b->size };

	return !it_send_fd(ring_out, b->fd, msg, sizeof(msg), MSG_DONTWAIT);
}

/* A buffer another process sent, imported, or 0 when none waits. */
static int recv_buf(int ion, struct buf *b)
{
	uint64_t msg[2];
	int fd, ret;

	fd = it_recv_fd(ring_in, msg, sizeof(msg), MSG_DONTWAIT);
	if (fd < 0)
		return 0;
	memset(b, 0, sizeof(*b));
	b->seed = msg[0];
	b->size = msg[1];
	b->received = 1;
	/* import, then work through a fresh fd from our own handle */
	ret = it_import(ion, fd, &b->handle);
	close(fd);
	if (ret)
		goto err;
	b->fd = it_share(ion, b->handle);
	if (b->fd < 0) {
		ret = b->fd;
		it_free(ion, b->handle);
		goto err;
	}
	b->map = mmap(NULL, b->size, PROT_READ, MAP_SHARED, b->fd, 0);
	if (b->map == MAP_FAILED) {
		ret = -errno;
		it_free(ion, b->handle);
		close(b->fd);
		goto err;
	}
	__atomic_add_fetch(&st->imported, 1, __ATOMIC_RELAXED);
	return 1;
err:
	if (__atomic_add_fetch(&st->import_err, 1, __ATOMIC_RELAXED) <= 5)
		diag_line("# pid %d: import of a received buffer: %s", getpid(),
			  strerror(-ret));
	return 0;
}

/* Allocate through one of the ABIs, map, fill; 1 on success. */
static int buf_alloc(int ion, uint64_t *rng, struct buf *b)
{
	unsigned int slot = fz_below(rng, hs.cnt + 2), mask = slot_mask(slot);
	int legacy = fz_one_in(rng, 2), ret;
	unsigned int flags = fz_one_in(rng, 2) ? ION_FLAG_CACHED : 0;

	memset(b, 0, sizeof(*b));
	b->size = (1 + fz_below(rng, 64)) * it_page();
	if (fz_one_in(rng, 8))
		b->size = (1 + fz_below(rng, 4)) << 20;
	b->seed = fz_next(rng);
	if (legacy) {
		ret = it_alloc_handle(ion, b->size, 0, mask, flags, &b->handle);
		b->fd = ret ? ret : it_share(ion, b->handle);
		if (!ret && b->fd < 0)
			it_free(ion, b->handle);
	} else {
		b->fd = it_alloc_fd(ion, b->size, mask, flags);
	}
	if (b->fd == -ENOMEM) {
		__atomic_add_fetch(&st->enomem[slot], 1, __ATOMIC_RELAXED);
		return 0;
	}
	if (b->fd < 0) {
		if (__atomic_add_fetch(&st->other_err, 1, __ATOMIC_RELAXED) <= 5)
			diag_line("# pid %d: %s of %zu bytes, mask %#x: %s",
				  getpid(), legacy ? "ALLOC_LEGACY" : "ALLOC",
				  b->size, mask, strerror(-b->fd));
		return 0;
	}
	b->map = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      b->fd, 0);
	if (b->map == MAP_FAILED) {
		__atomic_add_fetch(&st->other_err, 1, __ATOMIC_RELAXED);
		if (b->handle)
			it_free(ion, b->handle);
		close(b->fd);
		return 0;
	}
	it_sync(b->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
	pat_fill(b->map, b->size, b->seed);
	it_sync(b->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
	__atomic_add_fetch(&st->allocs[slot], 1, __ATOMIC_RELAXED);
	return 1;
}

struct thr {
	int proc, idx;
	int exit_dirty;
	pthread_t tid;
};

static void *worker_thread(void *arg)
{
	struct thr *t = arg;
	uint64_t rng = fz_mix(seed ^ ((uint64_t)t->proc << 32) ^ t->idx);
	struct buf live[LIVE];
	int n = 0, i, it, ion = it_open();

	if (ion < 0)
		return NULL;
	for (it = 0; it < iterations; it++) {
		unsigned int op = fz_below(&rng, 10);

		if (it_now_ms() - t_start > DEADLINE_MS)
			break;
		if (op < 5 && n < LIVE) {
			n += buf_alloc(ion, &rng, &live[n]);
		} else if (op < 7 && n < LIVE) {
			n += recv_buf(ion, &live[n]);
		} else if (op < 8 && n) {
			i = fz_below(&rng, n);
			if (!live[i].received && send_buf(&live[i]))
				__atomic_add_fetch(&st->sent, 1,
						   __ATOMIC_RELAXED);
		} else if (n) {
			/* verify after others ran, then free */
			i = fz_below(&rng, n);
			buf_verify(&live[i], live[i].received ?
				   "received, before free" : "before free");
			buf_free(ion, &live[i]);
			live[i] = live[--n];
		}
	}
	for (i = 0; i < n; i++) {
		buf_verify(&live[i], "at the end");
		if (!t->exit_dirty)
			buf_free(ion, &live[i]);
	}
	if (!t->exit_dirty)
		close(ion);
	return NULL;
}

static void worker(int proc)
{
	struct thr t[THREADS];
	int i;

	for (i = 0; i < THREADS; i++) {
		t[i].proc = proc;
		t[i].idx = i;
		t[i].exit_dirty = proc % 2;
		pthread_create(&t[i].tid, NULL, worker_thread, &t[i]);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i].tid, NULL);
	_exit(0);
}

/* Fill the carveout with FILL_CHUNK buffers, keep all but two. */
static int fill_carveout(int ion, struct buf *fill, int *nfill)
{
	int n = 0, fd;

	*nfill = 0;
	while (n < MAX_FILL) {
		fd = it_alloc_fd(ion, FILL_CHUNK, 1U << carveout_id, 0);
		if (fd < 0) {
			if (fd != -ENOMEM)
				tap_diag("filling the carveout: %s",
					 strerror(-fd));
			break;
		}
		fill[n].fd = fd;
		fill[n].size = FILL_CHUNK;
		fill[n].seed = 0xf111 + n;
		fill[n].handle = 0;
		fill[n].map = mmap(NULL, FILL_CHUNK, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, 0);
		if (fill[n].map == MAP_FAILED) {
			close(fd);
			break;
		}
		pat_fill(fill[n].map, FILL_CHUNK, fill[n].seed);
		n++;
	}
	tap_diag("carveout: %d MiB allocated before ENOMEM", n);
	/* leave 2 MiB free */
	while (n > 0 && *nfill < 2) {
		n--;
		munmap(fill[n].map, FILL_CHUNK);
		close(fill[n].fd);
		(*nfill)++;
	}
	*nfill = n;
	return n > 0;
}

int main(int argc, char **argv)
{
	struct buf fill[MAX_FILL];
	int ion, nfill = 0, i, sv[PROCS][2], status, bad_exit = 0;
	int fill_corrupt = 0;
	pid_t pids[PROCS];
	unsigned int s;
	char prefix[48];
	long total_allocs = 0;

	seed = (uint64_t)time(NULL);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--iterations") && i + 1 < argc)
			iterations = atoi(argv[++i]);
	}
	printf("# seed=%llu\n", (unsigned long long)seed);
	ion = it_setup(&hs);
	for (s = 0; s < hs.cnt; s++) {
		if (hs.h[s].type == ION_HEAP_TYPE_CARVEOUT)
			carveout_id = hs.h[s].heap_id;
		if (hs.h[s].type == ION_HEAP_TYPE_SYSTEM)
			system_id = hs.h[s].heap_id;
	}
	if (system_id == ~0U) {
		tap_ok(0, "a system heap");
		return 1;
	}
	if (carveout_id == ~0U) {
		tap_skip("carveout near full", "no carveout heap");
		carveout_id = system_id;
	} else {
		char heap[ION_MAX_HEAP_NAME + 1];
		int fd, filled = fill_carveout(ion, fill, &nfill);

		tap_ok(filled, "carveout filled up to 2 MiB (%d MiB held)",
		       nfill);
		fd = it_alloc_fd(ion, 4 << 20, (1U << carveout_id) |
				 (1U << system_id), 0);
		it_expect(fd < 0 ? fd : 0, 0,
			  "a 4 MiB carveout|system request while the carveout is full");
		heap[0] = 0;
		if (fd >= 0) {
			it_buffer_heap(&hs, fd, heap, sizeof(heap));
			close(fd);
		}
		tap_ok(!strcmp(heap, ION_SYSTEM_HEAP_NAME),
		       "... falls back to the system heap (got '%s')", heap);
		fd = it_alloc_fd(ion, 4 << 20, 1U << carveout_id, 0);
		it_expect(fd < 0 ? fd : 0, ENOMEM,
			  "a 4 MiB carveout-only request is ENOMEM");
		if (fd >= 0)
			close(fd);
	}

	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		return 1;
	memset(st, 0, sizeof(*st));
	for (i = 0; i < PROCS; i++)
		if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv[i]))
			return 1;
	fflush(stdout);
	t_start = it_now_ms();
	for (i = 0; i < PROCS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			int j;

			close(ion);
			/* receive on ring i, send on ring i + 1 */
			ring_in = sv[i][0];
			ring_out = sv[(i + 1) % PROCS][1];
			for (j = 0; j < PROCS; j++) {
				if (sv[j][0] != ring_in)
					close(sv[j][0]);
				if (sv[j][1] != ring_out)
					close(sv[j][1]);
			}
			worker(i);
		}
	}
	for (i = 0; i < PROCS; i++) {
		close(sv[i][0]);
		close(sv[i][1]);
	}
	for (i = 0; i < PROCS; i++) {
		waitpid(pids[i], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			tap_diag("worker %d: status %#x", i, status);
			bad_exit++;
		}
	}
	tap_diag("%d processes x %d threads, %d iterations each: %lld ms",
		 PROCS, THREADS, iterations, it_now_ms() - t_start);

	tap_ok(!bad_exit, "every worker process exited normally");
	for (s = 0; s < hs.cnt + 2; s++) {
		const char *name = s < hs.cnt ? hs.h[s].name :
			s == hs.cnt ? "carveout|system" : "every heap";

		tap_diag("%s: %ld allocations, %ld ENOMEM", name, st->allocs[s],
			 st->enomem[s]);
		total_allocs += st->allocs[s];
		if (s < hs.cnt)
			tap_ok(st->allocs[s] > 0 ||
			       hs.h[s].heap_id == carveout_id,
			       "%s: allocations succeeded under stress", name);
	}
	if (carveout_id != system_id) {
		for (s = 0; s < hs.cnt && hs.h[s].heap_id != carveout_id; s++)
			;
		tap_ok(st->enomem[s] > 0,
		       "carveout requests met ENOMEM (%ld times)", st->enomem[s]);
		tap_ok(st->allocs[hs.cnt] > 0,
		       "carveout|system requests succeeded (%ld) while the carveout is full",
		       st->allocs[hs.cnt]);
	}
	tap_ok(!st->other_err, "no allocation failed with anything but ENOMEM (%ld did)",
	       st->other_err);
	tap_diag("%ld allocated, %ld sent, %ld imported, %ld verified, %ld freed",
		 total_allocs, st->sent, st->imported, st->verified, st->freed);
	tap_ok(st->imported > 0 && !st->import_err,
	       "buffers sent to another process were imported (%ld, %ld failed)",
	       st->imported, st->import_err);
	tap_ok(st->verified > 0 && !st->corrupt,
	       "every buffer kept its own contents (%ld checks, %ld differed)",
	       st->verified, st->corrupt);

	for (i = 0; i < nfill; i++) {
		if (pat_check(fill[i].map, FILL_CHUNK, fill[i].seed) >= 0)
			fill_corrupt++;
		munmap(fill[i].map, FILL_CHUNK);
		close(fill[i].fd);
	}
	tap_ok(!fill_corrupt,
	       "the %d buffers filling the carveout kept their contents (%d differed)",
	       nfill, fill_corrupt);
	close(ion);
	fz_client_prefix(prefix, sizeof(prefix));
	tap_ok(fz_dfs_wait_clean(prefix, 10000),
	       "nothing left allocated, no client left");
	return tap_exit();
}
