#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Turn ion-bench's results into a Markdown table and a plot.
#
# Usage: scripts/bench-report.sh <dir>
#   reads  <dir>/results.tsv (impl op size live median_ns p99_ns runs),
#          <dir>/warm-wait.tsv, <dir>/helped.tsv, <dir>/skipped.tsv,
#          <dir>/pairs.tsv, <dir>/memcg-pairs.tsv,
#          <dir>/raw.txt and
#          <dir>/host.txt (optional)
#   writes <dir>/results.md  ratios to dma_heap-system and issue 7's targets
#          <dir>/alloc.png   median latency against size, log scales, one
#                            line per implementation (gnuplot)
set -euo pipefail

dir=${1:?usage: bench-report.sh <dir>}
top=$(cd "$(dirname "$0")/.." && pwd)
tsv=$dir/results.tsv
[ -s "$tsv" ] || { echo "bench-report: no $tsv" >&2; exit 1; }
touch "$dir/warm-wait.tsv" "$dir/helped.tsv" "$dir/skipped.tsv" "$dir/pairs.tsv" \
	"$dir/memcg-pairs.tsv"
kernel=$(grep -a -m1 '^# kernel ' "$dir/raw.txt" 2>/dev/null | sed 's/^# //') || true
helpers=$(grep -a -m1 '^# parallel_helpers: module had' "$dir/raw.txt" 2>/dev/null |
	sed 's/^# parallel_helpers: //') || true
host=$(cat "$dir/host.txt" 2>/dev/null) || true
when=$(date -u -r "$tsv" '+%Y-%m-%d %H:%M UTC')

awk -F'\t' -v kernel="${kernel:-unknown}" -v host="${host:-}" -v date="$when" \
	-v helpers="${helpers:-}" \
	-f "$top/scripts/bench-report.awk" \
	"$tsv" "$dir/warm-wait.tsv" "$dir/helped.tsv" "$dir/skipped.tsv" "$dir/pairs.tsv" \
	"$dir/memcg-pairs.tsv" > "$dir/results.md"

# --- the plot ---------------------------------------------------------------
command -v gnuplot > /dev/null || { echo "bench-report: no gnuplot, no plot" >&2; exit 0; }
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
# One file per op and implementation: size_kib median_ms.
awk -F'\t' -v d="$data" 'NR > 1 && $2 != "scaling" {
	op = ($2 == "memset") ? "memset" : $2
	f = d "/" op "@" $1
	print $3 / 1024, $5 / 1e6 > f
	if (!(f in seen)) { seen[f] = 1; print f > (d "/list") }
}' "$tsv"
mapfile -t impls < <(awk -F'\t' 'NR > 1 && !s[$1]++ { print $1 }' "$tsv")

style() {	# <index> <impl>: a fixed look per implementation
	local c w=2
	case $2 in
	dma_heap-system) c='#000000'; w=3 ;;
	ion-system) c='#d62728'; w=3 ;;
	ion-system+helpers) c='#e377c2'; w=3 ;;
	ion-system-uncached) c='#ff7f0e' ;;
	ion-system-dmaheap) c='#8c0000' ;;
	ion-system-contig) c='#1f77b4' ;;
	ion-carveout) c='#17becf' ;;
	ion-dma) c='#2ca02c' ;;
	udmabuf) c='#9467bd' ;;
	anon) c='#8c564b' ;;
	memset) c='#7f7f7f' ;;
	memset-stosb) c='#c0c0c0' ;;
	*) c='#bcbd22' ;;
	esac
	echo "set style line $(($1 + 1)) lc rgb '$c' lw $w pt $((($1 % 12) + 1)) ps 1.2"
}

# The series of <op> for every implementation with data, appended to
# $cmd (separated by $sep), each with gnuplot style <extra style> and
# <title suffix>.
series() {	# <op> <extra style> <title suffix>
	local i f
	for i in "${!impls[@]}"; do
		f=$data/$1@${impls[$i]}
		[ -s "$f" ] || continue
		sort -n -o "$f" "$f"
		cmd+="$sep'$f' using 1:2 with linespoints ls $((i + 1))$2 title '${impls[$i]}$3'"
		sep=", "
	done
}

panel() {	# <op> <title> [<op drawn dashed, as a limit>]
	local op=$1 title=$2 extra=${3:-} cmd="" sep=""
	series "$op" "" ""
	[ -z "$extra" ] || series "$extra" " dt 2" " (limit)"
	echo "set title '$title'"
	# A run limited to some ops (-o) leaves a panel without data.
	if [ -n "$cmd" ]; then
		echo "plot $cmd"
	else
		echo "set label 1 'not measured in this run' at graph 0.5,0.5 center"
		echo "set yrange [0.01:1000]"
		echo "plot 1e-9 notitle"
		echo "set autoscale y"
		echo "unset label 1"
	fi
}

{
	cat <<'EOF'
set terminal pngcairo size 1800,640 font 'DejaVu Sans,11'
set logscale xy
set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set xlabel 'buffer size'
set ylabel 'median latency (ms)'
set xtics ('4K' 4, '64K' 64, '1M' 1024, '8M' 8192, '64M' 65536)
set xrange [3:90000]
set format y '%g'
set key top left box opaque font ',9'
set termoption noenhanced
EOF
	echo "set output '$dir/alloc.png'"
	for i in "${!impls[@]}"; do
		style "$i" "${impls[$i]}"
	done
	echo "set multiplot layout 1,3 title 'ion-bench: $kernel (one guest boot, TCG)'"
	panel alloc_free_cold 'alloc_free_cold (dashed: memset limits)' memset
	panel alloc_free_warm 'alloc_free_warm'
	panel alloc_map_touch 'alloc_map_touch'
	echo "unset multiplot"
} > "$data/plot.gp"
gnuplot "$data/plot.gp"
