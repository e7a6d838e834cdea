# SPDX-License-Identifier: MIT
#
# Turn the guest's results stream (scripts/guest/runner) into TAP on
# stdout.  Variables: prefix (prepended to every test name), start (number
# of the first test, default 1), counts (file to write "passed failed
# skipped next" to), kver (the kernel version the guest must run),
# splats_file (scripts/splats.txt: the kernel reports that fail a run).
#
# A program's cases become "<program>: <case>".  A program that exits
# non-zero without a failed case, is killed by the timeout, or prints no
# case is a failed test.  Kernel log lines matching a splat pattern are
# failed tests too, one per pattern and program, with the lines shown.

function emit(pass, name, diag) {
	n++
	if (pass) {
		passed++
		if (name ~ /# SKIP/)
			skipped++
		print "ok " n " - " prefix name
	} else {
		failed++
		print "not ok " n " - " prefix name
	}
	if (diag != "")
		printf "%s", diag
	fflush()
}

# DMA-API debugging's boot banner is not a report.  Nor, during
# fuzz_kfault, is DMA-API debugging giving up for want of memory: that
# test fails every slab allocation of its tasks at 5 %, atomic ones
# included, and dma-debug's own cacheline tracking (a GFP_ATOMIC radix
# tree insert at a DMA mapping ion_test makes) is one of them; seen once
# in CI's debug pass.  dma-debug stays off for the rest of that boot.
function benign(line, block) {
	return line ~ /DMA-API: (preallocated [0-9]+ debug entries|debugging enabled by kernel config)$/ ||
	       (block == "fuzz_kfault" &&
		line ~ /DMA-API: cacheline tracking ENOMEM, dma-debug disabled$/)
}

function splat_check(block,    i, pat, lines, l) {
	for (i = 1; i <= npat; i++) {
		pat = pats[i]
		lines = ""
		for (l = 1; l <= nk; l++)
			if (index(kmsg[l], pat) && !benign(kmsg[l], block))
				lines = lines "#   " kmsg[l] "\n"
		if (lines != "") {
			emit(0, "kernel log during " block " has no '" pat "'", lines)
			splats++
		}
	}
	nk = 0
}

BEGIN {
	n = (start ? start : 1) - 1
	if (splats_file == "") {
		print "rig-report.awk: splats_file not set" > "/dev/stderr"
		exit 2
	}
	while ((getline l < splats_file) > 0)
		if (l !~ /^#/ && l != "")
			pats[++npat] = l
	close(splats_file)
	cur = ""
	inkmsg = 0
	done = 0
	kbytes = 0
}

{ sub(/\r$/, "") }

/^@@RIG KMSG-END / { inkmsg = 0; splat_check($3); next }
/^@@RIG KMSG / { inkmsg = 1; nk = 0; next }
inkmsg { kmsg[++nk] = $0; klines++; next }

/^@@RIG BEGIN / {
	cur = $3; cases = 0; bad = 0; out = ""
	next
}
/^@@RIG END / {
	rc = $4; sub(/^rc=/, "", rc)
	if (rc == 137)
		emit(0, cur ": finished within the time limit", out)
	else if (rc != 0 && !bad)
		emit(0, cur ": exited with status " rc, out)
	else if (cases == 0)
		emit(0, cur ": reported at least one result", out)
	cur = ""
	next
}
/^@@RIG UNLOAD / {
	rc = $4; sub(/^rc=/, "", rc)
	emit(rc == 0, $3 ".ko unloads at the end of the run")
	next
}
/^@@RIG MODLEFT / {
	left = $0
	sub(/^@@RIG MODLEFT [^ ]+ /, "", left)
	emit(0, $3 ": unloads the modules it loaded (left loaded: " left ")")
	next
}
/^@@RIG STRAY / {
	stray = $0
	sub(/^@@RIG STRAY [^ ]+ /, "", stray)
	emit(0, $3 ": no process of it outlives it (killed: " stray ")")
	next
}
/^@@RIG LOADFAIL / {
	emit(0, $3 ".ko loads before " $4)
	next
}
/^@@RIG KERNEL / {
	emit($3 == kver, "the guest runs the kernel asked for (" kver \
	     ", booted " $3 ")")
	next
}
/^@@RIG DONE/ { done = 1; next }

cur != "" && /^(not )?ok( [0-9]+)? - / {
	line = $0
	pass = (line ~ /^ok/)
	sub(/^(not )?ok( [0-9]+)? - /, "", line)
	cases++
	if (!pass)
		bad++
	emit(pass, cur ": " line, out)
	out = ""
	next
}
cur != "" { out = out "#   " $0 "\n"; if (length(out) > 20000) out = substr(out, 1, 20000); next }

END {
	if (!done)
		emit(0, "guest ran to the end (no timeout, no panic)")
	else if (!splats)
		emit(1, "guest kernel log is clean (" klines " lines scanned)")
	if (counts != "")
		print passed + 0, failed + 0, skipped + 0, n + 1 > counts
}
