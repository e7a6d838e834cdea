// SPDX-License-Identifier: MIT
/*
 * kprobe events on arm64's DMA-direct cache maintenance (see
 * heap_cache_kprobe.h).
 */
#include "heap_cache_kprobe.h"

/* The group of the events kp_setup() added, for kp_remove(). */
static char kp_group[64];
int kp_ready;

void kp_remove(void)
{
	char line[128];

	if (!kp_group[0])
		return;
	snprintf(line, sizeof(line), TRACING "/events/%s/enable", kp_group);
	ht_write_str(line, "0\n", 0);
	snprintf(line, sizeof(line), "-:%s/clean\n", kp_group);
	ht_write_str(TRACING "/kprobe_events", line, O_APPEND);
	snprintf(line, sizeof(line), "-:%s/inval\n", kp_group);
	ht_write_str(TRACING "/kprobe_events", line, O_APPEND);
	kp_ready = 0;
}

int kp_setup(const char *group)
{
	static const char *const defs[] = {
		"p:%s/clean arch_sync_dma_for_device paddr=%%x0:x64 size=%%x1:x64 dir=%%x2:x32\n",
		"p:%s/inval arch_sync_dma_for_cpu paddr=%%x0:x64 size=%%x1:x64 dir=%%x2:x32\n",
	};
	char line[192];
	unsigned int i;
	int ret = 0;

	snprintf(kp_group, sizeof(kp_group), "%s", group);
	kp_remove();	/* what an earlier, crashed run may have left */
	for (i = 0; i < IT_ARRAY_SIZE(defs) && !ret; i++) {
		snprintf(line, sizeof(line), defs[i], group);
		ret = ht_write_str(TRACING "/kprobe_events", line, O_APPEND);
	}
	if (!ret) {
		snprintf(line, sizeof(line), TRACING "/events/%s/enable", group);
		ret = ht_write_str(line, "1\n", 0);
	}
	if (ret) {
		tap_diag("kprobe events: %s", strerror(-ret));
		kp_remove();
		return ret;
	}
	kp_ready = 1;
	return 0;
}

/* Empty the trace buffer. */
int kp_clear(void)
{
	return ht_write_str(TRACING "/trace", "", O_TRUNC);
}

int kp_find(const char *trace, const char *what, int from,
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

char *kp_read(void)
{
	char *text = NULL;
	int n = it_read_file(TRACING "/trace", &text);

	if (n < 0) {
		tap_diag("read trace: %s", strerror(-n));
		return NULL;
	}
	return text;
}

int kp_count(const char *trace, const char *what,
	     unsigned long long phys, unsigned long long len)
{
	int n = 0, seq = 0;

	while ((seq = kp_find(trace, what, seq + 1, phys, len)))
		n++;
	return n;
}

int kp_read_count(const char *what, unsigned long long phys,
		  unsigned long long len)
{
	char *text = kp_read();
	int n = text ? kp_count(text, what, phys, len) : 0;

	free(text);
	return n;
}
