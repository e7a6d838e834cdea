// SPDX-License-Identifier: MIT
/*
 * fuzz_ioctl: which of the auto heap's paths the main run made the kernel
 * take.  First uses are read from ion's ion_backing tracepoint, in a
 * tracefs instance of the fuzzer's own with that event alone: cause
 * first_use with no device attached (the CPU's: mmap fault, CPU access,
 * a kernel client's sg table; system backing) or with devices attached
 * (their constraints collated).  Moves are the heap's debugfs auto_moves
 * counter; attaches and detaches the importers' own counts (ops_dev.c);
 * a late attach refused is ion_test's ERANGE on an auto buffer (edu or
 * the probe device attaching), which the heap's auto_failures counter
 * must have seen too (it counts every refused attach, the moves' first
 * refusal among them).
 */
#include "fuzz_ioctl.h"
#include "trace_util.h"

static struct tr_inst cov_tr;
static int cov_tracing;
static long long cov_moves0, cov_failures0;

static long long auto_num(const char *key)
{
	return it_heap_num(ION_AUTO_HEAP_NAME, key);
}

void cov_start(void)
{
	char path[300];

	memset(sh->dev, 0, sizeof(sh->dev));
	if (!have_auto)
		return;
	cov_moves0 = auto_num("auto_moves");
	cov_failures0 = auto_num("auto_failures");
	if (tr_open(&cov_tr, "fuzz_ioctl"))
		return;
	snprintf(path, sizeof(path), "%s/events/ion/enable", cov_tr.dir);
	cov_tracing = !ht_write_str(path, "0", O_WRONLY);
	snprintf(path, sizeof(path), "%s/events/ion/ion_backing/enable",
		 cov_tr.dir);
	cov_tracing = cov_tracing && !ht_write_str(path, "1", O_WRONLY);
	snprintf(path, sizeof(path), "%s/buffer_size_kb", cov_tr.dir);
	cov_tracing = cov_tracing && !ht_write_str(path, "16384", O_WRONLY);
	if (!cov_tracing)
		tr_close(&cov_tr);
}

/* One path: a case when @assert and the boot allows it, else a line. */
static void cov_case(int assert, const char *why_not, long n,
		     const char *what)
{
	if (!assert)
		tap_diag("%s: %ld", what, n);
	else if (why_not)
		tap_skip(what, why_not);
	else
		tap_ok(n > 0, "%s ran under the fuzzer (%ld times)", what, n);
}

void cov_report(int assert)
{
	static const char *const first[] = { "cause=first_use", "ret=0", NULL };
	static const char *const cpu[] = { "cause=first_use", "ret=0", "devs=0",
					   NULL };
	long moves, refused, failures, cpu_first = 0, dev_first = 0, bad = 0;
	const char *no_edu = !have_ion_test || !edu.has_edu ?
			     "no edu (ion_test)" : NULL;
	const char *no_move = no_edu ? no_edu : edu.iommu ?
			      "edu behind an IOMMU takes any backing" : NULL;
	long *d = sh->dev;
	char *text;

	if (!have_auto) {
		tap_skip("the auto heap's paths under the fuzzer", "no auto heap");
		return;
	}
	if (cov_tracing) {
		text = tr_read(&cov_tr);
		if (text) {
			cpu_first = tr_count(text, "ion_backing", cpu);
			dev_first = tr_count(text, "ion_backing", first) - cpu_first;
			bad = tr_count(text, "ion_backing", first + 2) -
			      tr_count(text, "ion_backing", first + 1);
			free(text);
		}
		tr_close(&cov_tr);
	}
	moves = auto_num("auto_moves") - cov_moves0;
	failures = auto_num("auto_failures") - cov_failures0;
	refused = d[DC_REFUSED];
	tap_diag("importers: %ld ion_test imports (edu mapped %ld, %ld auto "
		 "buffers first), %ld attaches to auto buffers refused, %ld "
		 "releases; vgem %ld imports, %ld closes", d[DC_IMPORT],
		 d[DC_EDU_MAPPED], d[DC_AUTO_EDU], refused, d[DC_RELEASE],
		 d[DC_VGEM_IMPORT], d[DC_VGEM_CLOSE]);
	tap_diag("auto heap: %ld first uses by the CPU, %ld with devices "
		 "attached, %ld ion_backing events with an error; %ld moves, "
		 "%ld failures (debugfs)", cpu_first, dev_first, bad, moves,
		 failures);
	cov_case(assert, no_edu, d[DC_IMPORT] + d[DC_VGEM_IMPORT],
		 "a device attached to an ion buffer (ion_test, vgem)");
	cov_case(assert, no_edu, d[DC_RELEASE] + d[DC_VGEM_CLOSE],
		 "a device detached (ION_TEST_IOC_RELEASE, GEM_CLOSE)");
	cov_case(assert, cov_tracing ? NULL : "no tracefs", cpu_first,
		 "auto heap: first use with no device attached (ion_backing)");
	cov_case(assert, cov_tracing ? no_edu : "no tracefs", dev_first,
		 "auto heap: first use with devices attached (ion_backing)");
	cov_case(assert, no_move, moves,
		 "auto heap: a late attach moved the backing (auto_moves)");
	cov_case(assert, no_move, refused,
		 "auto heap: a late attach refused with ERANGE");
	if (assert && !no_move)
		tap_ok(failures >= moves + refused,
		       "auto_failures (%ld) counted every refused attach, the "
		       "moves' too (%ld)", failures, moves + refused);
}
