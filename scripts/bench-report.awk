# SPDX-License-Identifier: MIT
#
# results.md from ion-bench's tables (scripts/bench-report.sh runs this with
# -F'\t' on results.tsv, warm-wait.tsv, helped.tsv, skipped.tsv, pairs.tsv; variables
# kernel, date, host, helpers: ion-bench's parallel_helpers line).
#
# Every cell is a ratio of medians to dma_heap-system's for the same op,
# size and live count; then issue 7's targets, judged from the same rows;
# then the same cells as medians of per-round (paired) ratios.

function hsize(b) {
	if (b >= 1048576) return (b / 1048576) " MiB"
	return (b / 1024) " KiB"
}

function fmt(x) {
	if (x >= 100) return sprintf("%.0f", x)
	if (x >= 10) return sprintf("%.1f", x)
	return sprintf("%.2f", x)
}

function us(ns) { return fmt(ns / 1000) }

# Scaling rows are grouped by the level asked for; a heap that could not
# hold that many buffers reports the count it was measured at.
function level(live,    i) {
	for (i = 1; i <= nlev; i++)
		if (live <= lev[i])
			return lev[i]
	return live
}

FILENAME ~ /results\.tsv$/ && FNR > 1 {
	impl = $1; op = $2; size = $3; live = $4
	if (op == "scaling")
		live = level(live)
	key = op SUBSEP size SUBSEP live
	med[impl, key] = $5; p99[impl, key] = $6; runs[impl, key] = $7
	actual[impl, key] = $4
	if (!(impl in known)) { known[impl] = 1; order[++nimpl] = impl }
	if (!(key in haskey)) { haskey[key] = 1; keys[++nkey] = key }
	next
}
FILENAME ~ /warm-wait\.tsv$/ && FNR > 1 {
	wait[$1, $3] = $4; waitp99[$1, $3] = $5
	if ($4 > 0) anywait = 1
	next
}
FILENAME ~ /memcg-pairs\.tsv$/ && FNR > 1 {
	# impl peer op size live paired_ratio rounds
	if (!(($1, $3, $4) in mpair))
		mkeys[++nmkey] = $1 SUBSEP $3 SUBSEP $4
	mpair[$1, $3, $4] = $6; mpeer[$1] = $2; mrounds[$1, $3, $4] = $7
	next
}
FILENAME ~ /pairs\.tsv$/ && FNR > 1 {
	pair[$1, $2 SUBSEP $3 SUBSEP $4] = $5; anypair = 1
	next
}
FILENAME ~ /helped\.tsv$/ && FNR > 1 {
	helped[++nhelped] = sprintf("| %s | %s | %s | %.0f %% | %s of %s |", $1, $2, \
		hsize($3), 100 * $4 / $5, $6, $7)
	next
}
FILENAME ~ /skipped\.tsv$/ && FNR > 1 {
	skips[++nskip] = "`" $1 "` " $2 " " hsize($3) ": " $4
	next
}

BEGIN {
	nlev = split("1 1000 10000 100000", lev, " ")
	nops = split("alloc_free_cold alloc_free_warm alloc_map_touch scaling", ops, " ")
	peer = "dma_heap-system"
}

function rank(impl) {
	if (impl ~ /\+helpers$/) return 1
	if (impl ~ /^ion-system-memcg/) return 1
	if (impl == "ion-system") return 0
	if (impl ~ /^ion-system-(uncached|dmaheap)/) return 1
	if (impl ~ /^ion-/) return 2
	if (impl == "udmabuf") return 7
	if (impl == "anon") return 8
	if (impl ~ /^memset/) return 9
	return 6
}

function cell(impl, key, op, size, live,    r, base, k2, note) {
	# memset is the limit of an alloc_free: compare it to the same size.
	if (impl ~ /^memset/) {
		if (op == "scaling" || op == "alloc_map_touch")
			return ""
		k2 = "memset" SUBSEP size SUBSEP 0
	} else {
		k2 = key
	}
	if (!((impl, k2) in med) || !((peer, key) in med))
		return "–"
	base = med[peer, key]
	r = med[impl, k2] / base
	note = ""
	if (op == "scaling" && actual[impl, k2] != live)
		note = " (at " actual[impl, k2] ")"
	return fmt(r) note
}

function ratio(impl, op, size, live, ref_impl, ref_op,    a, b) {
	a = impl SUBSEP op SUBSEP size SUBSEP live
	b = ref_impl SUBSEP ref_op SUBSEP size SUBSEP live
	if (!(a in med) || !(b in med) || med[b] == 0)
		return -1
	return med[a] / med[b]
}

# One target line: the ratios at the sizes asked for, met if all <= limit.
function target(name, impl, op, ref_impl, ref_op, sizes, limit, strict,
		n, sz, i, r, ok, txt, any) {
	n = split(sizes, sz, " ")
	ok = 1; txt = ""; any = 0
	for (i = 1; i <= n; i++) {
		r = ratio(impl, op, sz[i], 0, ref_impl, ref_op)
		if (r < 0) { txt = txt (txt ? ", " : "") hsize(sz[i]) " –"; ok = 0; continue }
		any = 1
		txt = txt (txt ? ", " : "") hsize(sz[i]) " " fmt(r)
		if (strict ? r >= limit : r > limit)
			ok = 0
	}
	printf "| %s | `%s` | %s | %s |\n", name, impl, txt, \
		!any ? "not measured" : ok ? "**met**" : "not met"
}

# Issue 19's cost: charging on within 1.05x of off, paired, every size.
function memcg_target(impl,    i, f, ok, txt, r) {
	ok = 1; txt = ""
	for (i = 1; i <= nmkey; i++) {
		split(mkeys[i], f, SUBSEP)
		if (f[1] != impl)
			continue
		r = mpair[mkeys[i]]
		txt = txt (txt ? ", " : "") (f[2] == "alloc_free_cold" ? "cold " : "warm ") \
			hsize(f[3]) " " fmt(r)
		if (r > 1.05)
			ok = 0
	}
	printf "| charging on within 1.05× of off (paired, cold and warm alloc_free) | `%s` vs `%s` | %s | %s |\n", \
		impl, mpeer[impl], txt, ok ? "**met**" : "not met"
}

# The memcg twins: ion-system from a child cgroup, charging on and off.
function memcg_section(    i, f, any) {
	for (i = 1; i <= nmkey; i++) {
		split(mkeys[i], f, SUBSEP)
		if (f[1] ~ /memcg/)
			any = 1
	}
	if (!any)
		return
	printf "\n## Memory-cgroup charging on and off (issue 19)\n\n"
	printf "`ion-system-memcg` is `ion-system` run from a child memory cgroup with\n"
	printf "`memcg_charge` on (buffers charged to the cgroup, reusing only its own\n"
	printf "pooled chunks); `ion-system-memcg-off` the same task with it off.  Both\n"
	printf "run in the same rounds; the last column is the median of per-round ratios.\n\n"
	printf "| impl | op | size | on µs | off µs | on / off (paired) |\n"
	mpair_rows("memcg")
}

# The "@mpair" rows of the impls matching @re: both medians, the ratio.
function mpair_rows(re,    i, f, on, off) {
	printf "|---|---|---|---:|---:|---:|\n"
	for (i = 1; i <= nmkey; i++) {
		split(mkeys[i], f, SUBSEP)
		if (f[1] !~ re)
			continue
		on = f[1] SUBSEP f[2] SUBSEP f[3] SUBSEP 0
		off = mpeer[f[1]] SUBSEP f[2] SUBSEP f[3] SUBSEP 0
		printf "| %s | %s | %s | %s | %s | %s |\n", f[1], f[2], hsize(f[3]), \
			(on in med) ? us(med[on]) : "–", (off in med) ? us(med[off]) : "–", \
			fmt(mpair[mkeys[i]])
	}
}

# ion-system+trace: every ion event enabled, paired with ion-system.
function trace_section(    i, f, any) {
	for (i = 1; i <= nmkey; i++) {
		split(mkeys[i], f, SUBSEP)
		if (f[1] ~ /\+trace$/)
			any = 1
	}
	if (!any)
		return
	printf "\n## Tracepoints enabled\n\n"
	printf "`ion-system+trace` is `ion-system` with every ion event enabled (recorded\n"
	printf "into a tracefs instance's buffer); both run in the same rounds; the last\n"
	printf "column is the median of per-round ratios.\n\n"
	printf "| impl | op | size | traced µs | not traced µs | traced / not (paired) |\n"
	mpair_rows("\\+trace$")
}

# Issue 20: ion-auto (delayed allocation) paired with ion-system, and its
# first use (alloc_map_touch) beside ion-system's cold alloc_free.
function auto_section(    i, f, any, k, g, n, sz, j, t, a, c, m) {
	for (i = 1; i <= nmkey; i++) {
		split(mkeys[i], f, SUBSEP)
		if (f[1] == "ion-auto")
			any = 1
	}
	if (!any)
		return
	printf "\n## Delayed allocation (issue 20)\n\n"
	printf "`ion-auto` is the auto heap: allocating exports a buffer with no memory\n"
	printf "behind it; the memory is chosen, allocated and zeroed at the first use\n"
	printf "(in `alloc_map_touch`: the first CPU touch).  Paired with `ion-system` in\n"
	printf "the same rounds; the last column is the median of per-round ratios\n"
	printf "(issue 20's target: `alloc_free_cold` at most 0.1 from 1 to 64 MiB).\n\n"
	printf "| impl | op | size | auto µs | system µs | auto / system (paired) |\n"
	mpair_rows("^ion-auto$")
	for (k in med) {
		split(k, g, SUBSEP)
		if (g[1] == "ion-auto" && g[2] == "alloc_map_touch" && g[4] == 0)
			sz[++n] = g[3] + 0
	}
	if (!n)
		return
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && sz[j - 1] > sz[j]; j--) {
			t = sz[j]; sz[j] = sz[j - 1]; sz[j - 1] = t
		}
	printf "\nFirst use: `ion-auto`'s `alloc_map_touch` (allocate, map, first touch\n"
	printf "of every page: the backing is made there) beside `ion-system`'s cold\n"
	printf "`alloc_free` (allocate and zero up front) and `alloc_map_touch`.\n\n"
	printf "| size | auto first use µs | system alloc_free_cold µs | system alloc_map_touch µs |\n"
	printf "|---|---:|---:|---:|\n"
	for (i = 1; i <= n; i++) {
		a = "ion-auto" SUBSEP "alloc_map_touch" SUBSEP sz[i] SUBSEP 0
		c = "ion-system" SUBSEP "alloc_free_cold" SUBSEP sz[i] SUBSEP 0
		m = "ion-system" SUBSEP "alloc_map_touch" SUBSEP sz[i] SUBSEP 0
		printf "| %s | %s | %s | %s |\n", hsize(sz[i]), us(med[a]), \
			(c in med) ? us(med[c]) : "–", (m in med) ? us(med[m]) : "–"
	}
}

# Issue 17's debugfs row: ion-system's scaling at the most buffers live,
# once while another process reads the heap's debugfs file ("+dfsread")
# and once while it only spins ("+spin").
function debugfs_section(    k, f, spin, key, r) {
	for (k in p99) {
		split(k, f, SUBSEP)
		if (f[1] ~ /\+spin$/ && f[2] == "scaling")
			spin = f[1]
	}
	if (spin == "")
		return
	sub(/\+spin$/, "", spin)
	printf "\n## debugfs under load\n\n"
	printf "`%s`'s scaling op (4 KiB alloc_free) at the most buffers live, while\n", spin
	printf "another process reads `heaps/<heap>` in debugfs over and over, and while\n"
	printf "it only spins (the other CPU busy in both).  Target: p99 with the reader\n"
	printf "within 2× of without.\n\n"
	printf "| impl | live | p99 spinning µs | p99 reading µs | reading / spinning | target |\n"
	printf "|---|---|---|---|---|---|\n"
	for (k in p99) {
		split(k, f, SUBSEP)
		if (f[1] != spin "+spin" || f[2] != "scaling")
			continue
		key = f[2] SUBSEP f[3] SUBSEP f[4]
		if (!((spin "+dfsread", key) in p99))
			continue
		r = p99[spin "+dfsread", key] / p99[k]
		printf "| `%s` | %s | %s | %s | %s | %s |\n", spin, f[4], us(p99[k]), \
			us(p99[spin "+dfsread", key]), fmt(r), r <= 2 ? "**met**" : "not met"
	}
}

function scaling_target(impl,    k1, hi, khi, r, txt) {
	k1 = "scaling" SUBSEP 4096 SUBSEP 1
	hi = 100000
	khi = "scaling" SUBSEP 4096 SUBSEP hi
	if (!((impl, k1) in med) || !((impl, khi) in med)) {
		printf "| scaling at 100 000 live within 1.5× of 1 live | `%s` | – | not measured |\n", impl
		return
	}
	r = med[impl, khi] / med[impl, k1]
	txt = us(med[impl, k1]) " µs at 1, " us(med[impl, khi]) " µs at " actual[impl, khi] ": " fmt(r) "×"
	printf "| scaling at 100 000 live within 1.5× of 1 live | `%s` | %s | %s |\n", impl, txt, \
		actual[impl, khi] < hi ? "not measured at 100 000" : r <= 1.5 ? "**met**" : "not met"
}

# Cold large sizes with the system heap's helper CPUs off (the plain rows)
# and on (the "+helpers" twins): both are set by ion-bench, whatever
# ion.ko's default.
function helpers_section(    i, t, base, k, n, off, on, sz) {
	n = 0
	for (i = 1; i <= nimpl; i++)
		if (order[i] ~ /\+helpers$/)
			n++
	if (!n)
		return
	printf "\n## Helper CPUs off and on (cold, large buffers)\n\n"
	printf "ion-bench sets ion.ko's `parallel_helpers` itself: every row above runs\n"
	printf "with the helpers **off** (0), and `<impl>+helpers` is the same\n"
	printf "implementation with them **on**, in the same `alloc_free_cold` rounds.\n"
	if (helpers != "")
		printf "In this run: %s.\n", helpers
	printf "\n| impl | size | off: ratio to %s | on: ratio to %s | on / off |\n", peer, peer
	printf "|---|---|---:|---:|---:|\n"
	for (i = 1; i <= nimpl; i++) {
		t = order[i]
		if (t !~ /\+helpers$/)
			continue
		base = substr(t, 1, length(t) - 8)
		for (k = 1; k <= nkey; k++) {
			if (index(keys[k], "alloc_free_cold" SUBSEP) != 1 ||
			    !((t, keys[k]) in med))
				continue
			sz = substr(keys[k], length("alloc_free_cold" SUBSEP) + 1)
			sz = substr(sz, 1, index(sz, SUBSEP) - 1)
			off = ratio(base, "alloc_free_cold", sz, 0, peer, "alloc_free_cold")
			on = ratio(t, "alloc_free_cold", sz, 0, peer, "alloc_free_cold")
			printf "| %s | %s | %s | %s | %s |\n", base, hsize(sz), \
				(off < 0 ? "–" : fmt(off)), (on < 0 ? "–" : fmt(on)), \
				(off > 0 && on >= 0 ? fmt(on / off) : "–")
		}
	}
}

END {
	printf "# ion-bench results\n\n"
	printf "%s; one guest boot, %s.  Generated from `results.tsv` by\n", kernel, date
	printf "`scripts/bench-report.sh`.\n"
	if (host != "")
		printf "Host: %s.\n", host
	printf "\n"
	printf "Each cell: the implementation's median divided by `%s`'s median for the\n", peer
	printf "same op, size and live count (below 1 is faster than mainline).  The second\n"
	printf "column is `%s`'s median in µs.  The `memset` column is the zeroing limit\n", peer
	printf "(memset of a mapped buffer of that size) over the same peer number, and\n"
	printf "`memset-stosb` the same with the kernel's clear_page instruction (`rep stosb`).  – : not\n"
	printf "measured (see the skipped cases below).  Absolute times under TCG on a shared\n"
	printf "machine mean little; the ratios come from runs interleaved round-robin.\n\n"

	# Columns: ion's system heap first, then ion's other heaps, the peers,
	# the limit.
	cols = 0
	for (r = 0; r <= 9; r++)
		for (i = 1; i <= nimpl; i++)
			if (order[i] != peer && rank(order[i]) == r)
				col[++cols] = order[i]
	printf "| op | size | live | %s µs |", peer
	for (c = 1; c <= cols; c++) printf " %s |", col[c]
	printf "\n|---|---|---|---:|"
	for (c = 1; c <= cols; c++) printf "---:|"
	printf "\n"
	for (o = 1; o <= nops; o++) {
		for (k = 1; k <= nkey; k++) {
			split(keys[k], f, SUBSEP)
			if (f[1] != ops[o])
				continue
			printf "| %s | %s | %s | %s |", f[1], hsize(f[2]), f[1] == "scaling" ? f[3] : "", \
				((peer, keys[k]) in med) ? us(med[peer, keys[k]]) : "–"
			for (c = 1; c <= cols; c++)
				printf " %s |", cell(col[c], keys[k], f[1], f[2], f[3])
			printf "\n"
		}
	}

	printf "\n## Background work after warm runs\n\n"
	if (!anywait) {
		printf "After each `alloc_free_warm` run the bench waits until no heap's pool\n"
		printf "counters (debugfs keys containing `pool` or `deferred`) change.  Every wait\n"
		printf "was 0: no heap showed background work (or none exposes such counters).\n"
	} else {
		printf "After each `alloc_free_warm` run (of every implementation) the bench\n"
		printf "waited until no heap's pool counters (debugfs keys containing `pool` or\n"
		printf "`deferred`) changed any more and no chunk was left to zero: the time the\n"
		printf "background work of that run's free took (not counted in the warm\n"
		printf "number; the zeroing worker starts 10 ms after a free):\n\n"
		printf "| impl | size | wait median µs | wait p99 µs |\n|---|---|---:|---:|\n"
		for (i = 1; i <= nimpl; i++)
			for (k = 1; k <= nkey; k++) {
				split(keys[k], f, SUBSEP)
				if (f[1] == "alloc_free_warm" && (order[i], f[2]) in wait && wait[order[i], f[2]] > 0)
					printf "| %s | %s | %s | %s |\n", order[i], hsize(f[2]), \
						us(wait[order[i], f[2]]), us(waitp99[order[i], f[2]])
			}
	}

	printf "\n## Work done on helper CPUs\n\n"
	if (!nhelped) {
		printf "No `alloc_free` run had helper CPUs (the system heap's\n"
		printf "`parallel_helper_bytes` did not move, or no heap has that key).\n"
	} else {
		printf "The system heap shares the zeroing of a large buffer's fresh memory out\n"
		printf "to idle CPUs (`kernel/heaps/ion_parallel.c`): the latency above is the\n"
		printf "caller's, and this is the part of the bytes that other CPUs allocated\n"
		printf "and zeroed meanwhile (debugfs `parallel_helper_bytes`, read around every\n"
		printf "`alloc_free` run of every implementation; mainline has no helpers):\n\n"
		printf "| impl | op | size | bytes by helpers | runs with help |\n|---|---|---|---:|---:|\n"
		for (i = 1; i <= nhelped; i++)
			print helped[i]
	}

	helpers_section()
	memcg_section()
	trace_section()
	auto_section()
	debugfs_section()

	printf "\n## Targets (issue 7; issue 19's charging cost)\n\n"
	printf "| target | impl | ratios (size: ratio) | |\n|---|---|---|---|\n"
	big = "1048576 8388608 67108864"
	all = "4096 65536 1048576 8388608 67108864"
	for (i = 1; i <= nimpl; i++) {
		t = order[i]
		if (t ~ /\+trace$/)
			continue
		# Paired twins: only the memcg ones have a target here (the
		# auto heap's pairs are judged in auto_section()).
		if (t in mpeer) {
			if (t ~ /memcg/)
				memcg_target(t)
			continue
		}
		if (t ~ /\+helpers$/) {
			target("cold alloc_free ≤ 1.0× " peer, t, "alloc_free_cold", peer, "alloc_free_cold", "8388608 67108864", 1.0, 0)
			continue
		}
		if (t != "ion-system" && t != "ion-system-uncached" && t !~ /^ion-system-dmaheap/)
			continue
		target("cold alloc_free ≤ 1.0× " peer, t, "alloc_free_cold", peer, "alloc_free_cold", all, 1.0, 0)
		target("warm alloc_free ≥ 3× faster than " peer " (≤ 0.33)", t, "alloc_free_warm", peer, "alloc_free_warm", big, 1 / 3, 0)
		target("cold alloc_free ≤ 1.5× memset", t, "alloc_free_cold", "memset", "memset", big, 1.5, 0)
		target("warm alloc_free < memset", t, "alloc_free_warm", "memset", "memset", big, 1.0, 1)
		if (("memset-stosb" SUBSEP "memset" SUBSEP 1048576 SUBSEP 0) in med) {
			target("(reference) cold alloc_free ≤ 1.5× memset-stosb", t, "alloc_free_cold", "memset-stosb", "memset", big, 1.5, 0)
			target("(reference) warm alloc_free < memset-stosb", t, "alloc_free_warm", "memset-stosb", "memset", big, 1.0, 1)
		}
		target("alloc_map_touch < anon", t, "alloc_map_touch", "anon", "alloc_map_touch", big, 1.0, 1)
		scaling_target(t)
	}

	if (anypair) {
		printf "\n## Paired ratios\n\n"
		printf "The same cells as the first table, as the median of per-round ratios:\n"
		printf "run i of an implementation over `%s`'s run i of the same round\n", peer
		printf "(the two ran next to each other in time), which cancels host load that\n"
		printf "drifts between rounds.  Where this and the ratio of medians disagree,\n"
		printf "the difference is noise.\n\n"
		printf "| op | size |"
		for (c = 1; c <= cols; c++) printf " %s |", col[c]
		printf "\n|---|---|"
		for (c = 1; c <= cols; c++) printf "---:|"
		printf "\n"
		for (o = 1; o <= nops; o++) {
			if (ops[o] == "scaling")
				continue
			for (k = 1; k <= nkey; k++) {
				split(keys[k], f, SUBSEP)
				if (f[1] != ops[o])
					continue
				printf "| %s | %s |", f[1], hsize(f[2])
				for (c = 1; c <= cols; c++) {
					k2 = col[c] !~ /^memset/ ? keys[k] : \
						f[1] == "alloc_free_cold" ? "memset" SUBSEP f[2] SUBSEP 0 : ""
					printf " %s |", ((col[c], k2) in pair) ? fmt(pair[col[c], k2]) : ""
				}
				printf "\n"
			}
		}
	}

	if (nskip) {
		printf "\n## Skipped or partial cases\n\n"
		for (i = 1; i <= nskip; i++)
			printf "- %s\n", skips[i]
	}
}
