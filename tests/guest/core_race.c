// SPDX-License-Identifier: MIT
/*
 * Core regression test for locking: threads of one client allocate, share,
 * import, sync and free through both ABIs, while another thread opens and
 * closes /dev/ion and another reads every debugfs file.  Nothing may fail,
 * hang or leak; the kernel log must stay clean (the rig checks it, with
 * lockdep on the debug kernel).
 *
 * One client per process: every open of /dev/ion by the opener thread
 * (not the thread group's leader) must reach the leader's client, so a
 * handle the leader allocated shares through the opener's fd (a new
 * client would have no such handle: EINVAL), and debugfs lists one client
 * for this process while the opener's fd is open.
 */
#include <pthread.h>

#include "ion_test_util.h"

#define WORKERS		4
#define ROUNDS		300

static int ion_fd;
static volatile int stop;
static int errors[WORKERS];

/* The leader's handle, and what the opener thread saw of it. */
static ion_user_handle_t lead_handle;
static unsigned long lead_ino;
static long opens, open_bad, first_err;
static int clients_seen = -1;

static int one_round(unsigned int i)
{
	ion_user_handle_t h = 0, h2 = 0;
	size_t len = it_page() * (1 + i % 8);
	unsigned int flags = i & 1 ? ION_FLAG_CACHED : 0;
	int share, buf;

	if (it_alloc_handle(ion_fd, len, 0, ION_HEAP_SYSTEM_MASK, flags, &h))
		return 1;
	share = it_share(ion_fd, h);
	if (share < 0 || it_import(ion_fd, share, &h2) || h2 != h)
		return 2;
	if (it_sync(share, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW) ||
	    it_sync(share, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW))
		return 3;
	if (it_free(ion_fd, h) || it_free(ion_fd, h))
		return 4;
	if (it_free(ion_fd, h) != -EINVAL)
		return 5;
	close(share);

	buf = it_alloc_fd(ion_fd, len, ION_HEAP_SYSTEM_MASK, flags);
	if (buf < 0)
		return 6;
	if (it_import(ion_fd, buf, &h) || it_free(ion_fd, h))
		return 7;
	close(buf);
	return 0;
}

static void *worker(void *arg)
{
	long n = (long)arg;
	unsigned int i;

	for (i = 0; i < ROUNDS && !errors[n]; i++)
		errors[n] = one_round(i + n);
	return NULL;
}

static void read_dir(const char *dir)
{
	char path[512], *text = NULL;
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (it_read_file(path, &text) >= 0)
			free(text);
	}
	closedir(d);
}

static void *reader(void *arg)
{
	char *text = NULL;

	while (!stop) {
		if (it_read_file(IT_DEBUGFS "/summary", &text) >= 0)
			free(text);
		read_dir(IT_DEBUGFS "/heaps");
		read_dir(IT_DEBUGFS "/clients");
	}
	return NULL;
}

/*
 * Open /dev/ion again and again (at least once) from a thread that is
 * not the leader:
 * SHARE of the leader's handle through that fd must give the leader's
 * dma-buf (same inode).
 */
static void *opener(void *arg)
{
	do {
		int fd = it_open(), buf;

		if (fd < 0) {
			open_bad++;
			first_err = first_err ? first_err : fd;
			continue;	/* to the while (!stop) test */
		}
		if (clients_seen < 0)
			clients_seen = it_clients_of(getpid());
		buf = it_share(fd, lead_handle);
		opens++;
		if (buf < 0 || it_ino(buf) != lead_ino) {
			open_bad++;
			first_err = first_err ? first_err : buf;
		}
		if (buf >= 0)
			close(buf);
		close(fd);
	} while (!stop);
	return NULL;
}

int main(void)
{
	pthread_t w[WORKERS], r, o;
	long long b0, y0, b1, y1;
	struct it_heaps hs;
	long i;
	int bad = 0, lead, buf;

	ion_fd = it_setup(&hs);
	if (!it_heap_find(&hs, ION_SYSTEM_HEAP_NAME)) {
		tap_skip("races", "no system heap");
		return 0;
	}
	it_summary(&b0, &y0);
	lead = it_alloc_handle(ion_fd, it_page(), 0, ION_HEAP_SYSTEM_MASK, 0,
			       &lead_handle);
	buf = lead ? lead : it_share(ion_fd, lead_handle);
	if (!tap_ok(buf >= 0, "the leader allocates a handle and shares it")) {
		tap_diag("ALLOC_LEGACY/SHARE: %s", strerror(-buf));
		return tap_exit();
	}
	lead_ino = it_ino(buf);
	close(buf);
	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&o, NULL, opener, NULL);
	for (i = 0; i < WORKERS; i++)
		pthread_create(&w[i], NULL, worker, (void *)i);
	for (i = 0; i < WORKERS; i++)
		pthread_join(w[i], NULL);
	stop = 1;
	pthread_join(r, NULL);
	pthread_join(o, NULL);
	it_free(ion_fd, lead_handle);

	for (i = 0; i < WORKERS; i++) {
		if (errors[i]) {
			tap_diag("worker %ld failed at step %d", i, errors[i]);
			bad = 1;
		}
	}
	tap_ok(!bad, "%d workers x %d rounds of alloc/share/import/sync/free",
	       WORKERS, ROUNDS);
	if (open_bad)
		tap_diag("%ld of %ld opens by the opener thread failed; first: %s",
			 open_bad, opens, strerror((int)-first_err));
	tap_ok(opens > 0 && !open_bad,
	       "a non-leader thread's open of /dev/ion reaches the leader's client: the leader's handle shares through it (%ld opens)",
	       opens);
	if (clients_seen != 1)
		tap_diag("client files of this process: %d", clients_seen);
	tap_ok(clients_seen == 1,
	       "debugfs lists one client for the process while the opener thread's fd is open");
	it_summary(&b1, &y1);
	tap_ok(b0 >= 0 && b1 == b0 && y1 == y0,
	       "summary back to the start (buffers %lld -> %lld)", b0, b1);
	close(ion_fd);
	return tap_exit();
}
