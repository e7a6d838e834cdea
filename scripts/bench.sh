#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# make bench: boot one guest that runs tools/ion-bench (guest mode "bench"
# of scripts/guest-run.sh), show its progress, and turn its rows into
#   $BUILD/bench/results.tsv    impl op size live median_ns p99_ns runs
#   $BUILD/bench/warm-wait.tsv  what alloc_free_warm waited for between runs
#   $BUILD/bench/skipped.tsv    cases that could not run, and why
#   $BUILD/bench/pairs.tsv      median of per-round ratios to dma_heap-system
#   $BUILD/bench/helped.tsv     bytes helper CPUs allocated for ion's runs
#   $BUILD/bench/bounce.tsv     swiotlb bytes bounced for edu (-o bounce)
#   $BUILD/bench/results.md     ratios to dma_heap-system, issue 7's targets
#   $BUILD/bench/alloc.png      latency against size, log scales
# See Documentation/bench.md.  ion-bench sets ion.ko's parallel_helpers
# itself (0 for every row, on for the "+helpers" rows of alloc_free_cold
# above 1 MiB) and restores the value it found when it exits.
#
# Usage: scripts/bench.sh [--report-only]   (--report-only: no boot, rebuild
# the files above from the last run's $BUILD/guest-bench.results)
# Environment: BUILD, BENCH_ARGS (arguments of ion-bench, e.g.
# BENCH_ARGS='-b 300 -o alloc_free_cold' for a quick look), BENCH_ICOUNT=1
# (QEMU counts instructions: every "ns" is one guest instruction, the same
# in every run; see Documentation/bench.md), and what scripts/guest-run.sh
# takes (RIG_TIMEOUT, RIG_MEM, QEMU_EXTRA, ...).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
out=$BUILD/bench
res=$BUILD/guest-bench.results
con=$BUILD/guest-bench.console
export BUILD

mkdir -p "$out"
rm -f "$out"/results.tsv "$out"/warm-wait.tsv "$out"/skipped.tsv "$out"/pairs.tsv \
	"$out"/helped.tsv "$out"/memcg-pairs.tsv "$out"/directmap.tsv \
	"$out"/bounce.tsv \
	"$out"/samples.tsv \
	"$out"/results.md "$out"/alloc.png

# The guest reads RIG_BENCH_ARGS from its /etc/rig.conf.
export RIG_ENV="${RIG_ENV:+$RIG_ENV
}RIG_BENCH_ARGS='${BENCH_ARGS:-}'"
export RIG_TIMEOUT=${RIG_TIMEOUT:-1200}
icount=
if [ -n "${BENCH_ICOUNT:-}" ]; then
	export QEMU_EXTRA="${QEMU_EXTRA:+$QEMU_EXTRA }-icount shift=0,sleep=off"
	icount="; QEMU -icount: times are guest instruction counts (1 ns = 1 instruction)"
fi

rc=0
if [ "${1:-}" != --report-only ]; then
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	start=$(date +%s)
	echo "# bench: booting the guest (progress follows; rows go to $res)"
	"$top/scripts/guest-run.sh" bench &
	guest=$!
	# Follow the results port by name from its next version: guest-run.sh
	# recreates it at boot (perhaps after waiting for another guest).
	tail -F -n 0 --pid=$guest "$res" 2>/dev/null |
		grep --line-buffered -a '^#' | sed -u 's/\r$//' &
	follow=$!
	wait $guest || rc=$?
	wait $follow 2>/dev/null || true
	echo "# bench: guest finished after $(($(date +%s) - start)) s"
	echo "$(nproc) cpus, load average $load0 at the start," \
		"$(cut -d' ' -f1-3 /proc/loadavg) at the end;" \
		"guest ran $(($(date +%s) - start)) s$icount" > "$out/host.txt"
fi

[ -e "$res" ] || { echo "bench: no results from the guest ($con)" >&2; exit 1; }
tr -d '\r' < "$res" > "$out/raw.txt"
{
	printf 'impl\top\tsize\tlive\tmedian_ns\tp99_ns\truns\n'
	awk -F'\t' 'NF == 7 && $1 != "impl" && $1 !~ /^[@#]/' "$out/raw.txt"
} > "$out/results.tsv"
{
	printf 'impl\top\tsize\twait_median_ns\twait_p99_ns\truns\n'
	awk -F'\t' '$1 == "@wait" { print $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7 }' \
		"$out/raw.txt"
} > "$out/warm-wait.tsv"
{
	printf 'impl\top\tsize\thelper_bytes\tbytes\thelped_runs\truns\n'
	awk -F'\t' '$1 == "@helped" { print $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7 "\t" $8 }' \
		"$out/raw.txt"
} > "$out/helped.tsv"
{
	printf 'impl\top\tsize\tlive\tpaired_ratio\trounds\n'
	awk -F'\t' '$1 == "@pair" { print $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7 }' \
		"$out/raw.txt"
} > "$out/pairs.tsv"
{
	printf 'impl\tpeer\top\tsize\tlive\tpaired_ratio\trounds\n'
	awk -F'\t' '$1 == "@mpair" { print $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7 "\t" $8 }' \
		"$out/raw.txt"
} > "$out/memcg-pairs.tsv"
{
	printf 'impl\trounds\tdirectmap4k_before_kb\tafter_kb\tdrained_kb\tfailed_allocs\n'
	awk -F'\t' '$1 == "@directmap" { print $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7 }' \
		"$out/raw.txt"
} > "$out/directmap.tsv"
{
	printf 'impl\tsize\tbytes_bounced\tmappings\tresult\n'
	awk -F'\t' '$1 == "@bounce" { print $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 }' \
		"$out/raw.txt"
} > "$out/bounce.tsv"
if grep -q '^@sample' "$out/raw.txt"; then
	{
		printf 'impl\top\tsize\tlive\trun\tns\n'
		awk -F'\t' '$1 == "@sample" { print $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7 }' \
			"$out/raw.txt"
	} > "$out/samples.tsv"
fi
{
	printf 'impl\top\tsize\treason\n'
	awk -F'\t' '$1 == "@skip" { print $2 "\t" $3 "\t" $4 "\t" $5 }' \
		"$out/raw.txt"
} > "$out/skipped.tsv"
grep -a '^# ion heap\|^# dma-heap node\|^# note\|pool counters' "$out/raw.txt" \
	> "$out/found.txt" || true

status=0
if ! grep -q '^@done' "$out/raw.txt"; then
	echo "bench: the guest did not finish the run (rc $rc); last console lines:" >&2
	tail -n 30 "$con" | sed 's/^/#   /' >&2
	status=1
fi
# A bench that made the kernel complain is a finding, not a result.
# scripts/splats.txt, and allocation failures: the bench never runs memory out.
if "$top/scripts/splats.sh" "$con" 'page allocation failure' \
	'Out of memory' > "$out/kernel-splats.txt"; then
	echo "bench: the kernel logged problems during the run ($out/kernel-splats.txt):" >&2
	head -n 20 "$out/kernel-splats.txt" | sed 's/^/#   /' >&2
	status=1
else
	rm -f "$out/kernel-splats.txt"
fi

# Cold large sizes must come with helper CPUs off and on (unless -i / -s
# left them out): say so when a run has the one and not the other.
if awk -F'\t' '$1 == "ion-system" && $2 == "alloc_free_cold" && $3 > 1048576 { a = 1 }
	$1 == "ion-system+helpers" { b = 1 } END { exit !(a && !b) }' "$out/results.tsv"; then
	echo "bench: no ion-system+helpers rows (helper CPUs on):" \
		"$(grep -a -m1 '^# parallel_helpers' "$out/raw.txt" || echo 'no parallel_helpers line')" >&2
fi
"$top/scripts/bench-report.sh" "$out"
echo "# bench: $(($(wc -l < "$out/results.tsv") - 1)) rows in $out/results.tsv"
echo "# bench: table $out/results.md, plot $out/alloc.png"
exit $status
