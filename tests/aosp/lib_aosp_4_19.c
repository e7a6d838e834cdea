// SPDX-License-Identifier: MIT
/*
 * A program written against AOSP's libion for an Android 5.4/5.10 kernel:
 * <linux/ion_4.12.h> first (as libdmabufheap's BufferAllocator.h does),
 * then <linux/ion.h>, <linux/ion_4.19.h> and <ion/ion.h>, using the 4.19
 * names (ION_IOC_ABI_VERSION, enum ion_heap_id, ion_is_using_modular_heaps)
 * and allocating from every heap HEAP_QUERY lists with ION_IOC_NEW_ALLOC.
 * Built like lib_aosp_legacy.c, against the installed headers only.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/ion_4.12.h>
#include <linux/ion.h>
#include <linux/ion_4.19.h>
#include <ion/ion.h>

#include "../guest/lib/tap.h"

_Static_assert(ION_IOC_ABI_VERSION == 0x80044909, "ION_IOC_ABI_VERSION");
_Static_assert(ION_HEAP_SYSTEM == ION_HEAP_SYSTEM_MASK &&
	       ION_HEAP_SYSTEM_CONTIG == ION_HEAP_SYSTEM_CONTIG_MASK,
	       "enum ion_heap_id");
_Static_assert(ION_HEAP_TYPE_CUSTOM_EXT == 16 && ION_NUM_MAX_HEAPS == 32,
	       "ion_heap_type_ext");

#define LEN (4 * 4096)

/* One buffer of heap @h: allocate, map, write under DMA_BUF_IOCTL_SYNC. */
static void heap_case(int fd, const struct ion_heap_data *h)
{
	struct ion_new_allocation_data a = {
		.len = LEN, .heap_id_mask = 1U << h->heap_id,
		.flags = ION_FLAG_CACHED,
	};
	struct dma_buf_sync sync = { DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW };
	unsigned char *p;
	int ok = 1;

	if (!tap_ok(!ioctl(fd, ION_IOC_NEW_ALLOC, &a),
		     "%s: ION_IOC_NEW_ALLOC", h->name))
		return;
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, (int)a.fd, 0);
	if (tap_ok(p != MAP_FAILED, "%s: mmap", h->name)) {
		ok = !ioctl((int)a.fd, DMA_BUF_IOCTL_SYNC, &sync);
		for (int i = 0; i < LEN; i++)
			ok &= !p[i];
		memset(p, 0x5a, LEN);
		sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
		ok &= !ioctl((int)a.fd, DMA_BUF_IOCTL_SYNC, &sync);
		ok &= p[0] == 0x5a && p[LEN - 1] == 0x5a;
		tap_ok(ok, "%s: zeroed, written under DMA_BUF_IOCTL_SYNC",
			h->name);
		munmap(p, LEN);
	}
	close((int)a.fd);
}

int main(void)
{
	struct ion_heap_query q = { 0 };
	struct ion_heap_data *heaps;
	ion_user_handle_t h = 0;
	__u32 version = 0;
	int fd = ion_open(), afd = -1, ret;

	if (!tap_ok(fd >= 0, "ion_open"))
		return 1;
	tap_ok(ion_is_using_modular_heaps(fd) == 1,
		"ion_is_using_modular_heaps");
	tap_ok(!ioctl(fd, ION_IOC_ABI_VERSION, &version) && version == 2,
		"ION_IOC_ABI_VERSION: 2");
	ret = ioctl(fd, ION_IOC_HEAP_QUERY, &q);
	tap_ok(!ret && q.cnt > 0, "ION_IOC_HEAP_QUERY: %u heaps", q.cnt);
	heaps = calloc(q.cnt + 1, sizeof(*heaps));
	if (!heaps)
		abort();
	q.heaps = (uintptr_t)heaps;
	tap_ok(!ioctl(fd, ION_IOC_HEAP_QUERY, &q), "ION_IOC_HEAP_QUERY: list");
	for (unsigned int i = 0; i < q.cnt; i++)
		heap_case(fd, &heaps[i]);
	free(heaps);

	tap_ok(!ion_alloc(fd, LEN, 0, ION_HEAP_SYSTEM, 0, &h) &&
		!ion_free(fd, h), "ion_alloc with ION_HEAP_SYSTEM");
	tap_ok(!ion_alloc_fd(fd, LEN, 0, ION_HEAP_SYSTEM, 0, &afd) &&
		afd >= 0 && lseek(afd, 0, SEEK_END) == LEN,
		"ion_alloc_fd with ION_HEAP_SYSTEM");
	close(afd);
	tap_ok(ion_close(fd) == 0, "ion_close");
	return tap_exit();
}
