/* SPDX-License-Identifier: MIT */
/*
 * kprobe events on arm64's DMA-direct cache maintenance, for the guest
 * tests that show what a cache clean or invalidate reached:
 * arch_sync_dma_for_device() cleans a physical range to the point of
 * coherency (DC CVAC), arch_sync_dma_for_cpu() invalidates it (DC IVAC),
 * whoever calls them (DMA-direct and iommu-dma, for every device the
 * kernel does not treat as DMA-coherent).  The events are "clean" and
 * "inval" in the group KP_GROUP, which the includer defines; they record
 * paddr, size and dir.  kp_setup() adds and enables them, kp_remove()
 * takes them away again (every test leaves the system as found).
 */
#ifndef ION_HEAP_CACHE_KPROBE_H
#define ION_HEAP_CACHE_KPROBE_H

#include "ion_test_util.h"

#ifndef KP_GROUP
#error "define KP_GROUP before including heap_cache_kprobe.h"
#endif

#define TRACING		"/sys/kernel/debug/tracing"

static const char *const kp_defs[] = {
	"p:" KP_GROUP "/clean arch_sync_dma_for_device paddr=%x0:x64 size=%x1:x64 dir=%x2:x32\n",
	"p:" KP_GROUP "/inval arch_sync_dma_for_cpu paddr=%x0:x64 size=%x1:x64 dir=%x2:x32\n",
};

static int kp_ready;

static inline void kp_remove(void)
{
	ht_write_str(TRACING "/events/" KP_GROUP "/enable", "0\n", 0);
	ht_write_str(TRACING "/kprobe_events", "-:" KP_GROUP "/clean\n", O_APPEND);
	ht_write_str(TRACING "/kprobe_events", "-:" KP_GROUP "/inval\n", O_APPEND);
	kp_ready = 0;
}

static inline int kp_setup(void)
{
	unsigned int i;
	int ret = 0;

	kp_remove();	/* what an earlier, crashed run may have left */
	for (i = 0; i < IT_ARRAY_SIZE(kp_defs) && !ret; i++)
		ret = ht_write_str(TRACING "/kprobe_events", kp_defs[i], O_APPEND);
	if (!ret)
		ret = ht_write_str(TRACING "/events/" KP_GROUP "/enable", "1\n", 0);
	if (ret) {
		tap_diag("kprobe events: %s", strerror(-ret));
		kp_remove();
		return ret;
	}
	kp_ready = 1;
	return 0;
}

/* Empty the trace buffer. */
static inline int kp_clear(void)
{
	return ht_write_str(TRACING "/trace", "", O_TRUNC);
}

/*
 * The first event @what ("clean" or "inval") with sequence number @from or
 * later (our events counted from 1, in trace order) whose range covers
 * [@phys, @phys + @len): its sequence number, or 0.
 */
static inline int kp_find(const char *trace, const char *what, int from,
		   unsigned long long phys, unsigned long long len)
{
	unsigned long long a, n;
	const char *p, *nl, *f;
	char tag[32], line[512];
	size_t l;
	int seq = 0;

	snprintf(tag, sizeof(tag), " %s: (", what);
	for (p = trace; *p; p = *nl ? nl + 1 : nl) {
		nl = strchrnul(p, '\n');
		l = (size_t)(nl - p) < sizeof(line) ? (size_t)(nl - p) :
						      sizeof(line) - 1;
		memcpy(line, p, l);
		line[l] = 0;
		if (line[0] == '#' || !strstr(line, ": (arch_sync_dma_for_"))
			continue;
		seq++;
		if (seq < from || !strstr(line, tag))
			continue;
		f = strstr(line, "paddr=");
		if (f && sscanf(f, "paddr=%llx size=%llx", &a, &n) == 2 &&
		    a <= phys && phys + len <= a + n)
			return seq;
	}
	return 0;
}

static inline char *kp_read(void)
{
	char *text = NULL;
	int n = it_read_file(TRACING "/trace", &text);

	if (n < 0) {
		tap_diag("read trace: %s", strerror(-n));
		return NULL;
	}
	return text;
}

/* How many @what events cover [@phys, @phys + @len). */
static inline int kp_count(const char *trace, const char *what,
			   unsigned long long phys, unsigned long long len)
{
	int n = 0, seq = 0;

	while ((seq = kp_find(trace, what, seq + 1, phys, len)))
		n++;
	return n;
}

#endif /* ION_HEAP_CACHE_KPROBE_H */
