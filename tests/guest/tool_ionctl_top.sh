#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tool_ionctl_top: `ionctl top` (tools/ionctl/top.c) against the real
# module, with a buffer held by `ionctl alloc --hold` in the background.
#
# -b -n 2 prints exactly two frames; each frame's totals are debugfs
# summary's, its heap rows are every heap file with its buffers, allocs
# alloc_failures and quota_refusals (one refusal made here first: root
# limited too, to 4 MiB, while it holds 8 MiB), and the biggest buffers list the held one with its
# holder (the pid of the ionctl holding it, one fd).  Rates are "-" in the
# first frame (nothing to compare with) and numbers in the second.
# --json -n 2 prints two valid JSON objects, one a line, whose heap bytes
# add up to the frame's total and to debugfs.  A signal ends a running
# top with exit 0; bad -n and -d values are usage errors.  Nothing here
# depends on timing: the delay only spaces the frames.
. /etc/rig-lib.sh
. /etc/tool-lib.sh

D=/sys/kernel/debug/ion
SYS=ion_system_heap
tool_scratch tool_ionctl_top

ionctl alloc --heap $SYS --size 8M --hold > $T/hold 2>&1 &
holder=$!
pids="$holder"
if ! wait_for $T/hold "holding"; then
	not_ok "ionctl alloc --hold holds a buffer"
	rig_exit
fi
ino=$(sed -n 's/.*ino \([0-9]*\).*/\1/p' $T/hold)
# One quota refusal on the system heap (id 0): root, limited like any
# user for a moment, over a 4 MiB limit.
P=/sys/module/ion/parameters
old_uid_max=$(cat $P/uid_max_kb)
refusals=$(dfs_key $D/heaps/$SYS quota_refusals)
echo 4096 > $P/uid_max_kb
echo 1 > $P/quota_root
ionctl alloc --heap $SYS --size 4K > /dev/null 2>&1
echo 0 > $P/quota_root
echo "$old_uid_max" > $P/uid_max_kb
check_eq "a 4 KiB allocation over a 4 MiB quota is refused" \
	"$(dfs_key $D/heaps/$SYS quota_refusals)" "$((refusals + 1))"
id=$(dfs_cell $D/heaps/$SYS ino "$ino" buffer)
diag "held: ino $ino, buffer $id, pid $holder"

# ---- batch text -------------------------------------------------------------
run top -b -n 2 -d 0.2
expect_rc 0 "top -b -n 2 exits 0"
check_eq "top -b -n 2: two frames, numbered 1 and 2" \
	"$(sed -n 's/^ionctl top - frame \([0-9]*\) .*/\1/p' $T/out | tr '\n' ' ')" \
	"1 2 "
want="$(dfs_key $D/summary buffers) buffers, $(dfs_key $D/summary bytes) bytes"
check_eq "top -b: every frame's total is debugfs summary's ($want)" \
	"$(sed -n 's/^total: \([0-9]* buffers, [0-9]* bytes\).*/\1/p' $T/out | sort -u)" \
	"$want"
# frame <n>: the lines of frame n.
frame() {
	awk -v n="$1" '/^ionctl top - frame / { f = ($5 == n) } f' $T/out
}
nheaps=$(ls $D/heaps | wc -l)
for n in 1 2; do
	got=$(frame $n | awk '/^HEAP /, /^$/' | awk 'NR > 1 && NF { print $1, $5, $8, $9, $10 }' | sort)
	want=$(for f in $D/heaps/*; do
		echo "${f##*/} $(dfs_key $f buffers) $(dfs_key $f allocs) $(dfs_key $f alloc_failures) $(dfs_key $f quota_refusals)"
	done | sort)
	check_eq "top -b frame $n: $nheaps heap rows with debugfs's buffers, allocs, failures, quota refusals" \
		"$got" "$want"
done
check_eq "top -b: rates are '-' in frame 1 and numbers in frame 2" \
	"$(frame 1 | awk '$1 == "'$SYS'" { print $6, $7 }') $(frame 2 | awk '$1 == "'$SYS'" { print ($6 ~ /^[0-9.]+$/), ($7 ~ /^[0-9.]+$/) }')" \
	"- - 1 1"
row=$(frame 2 | awk -v id="$id" '/^BUFFER /, 0 { if ($1 == id) print }')
diag "frame 2, held buffer: $row"
check_eq "top -b: the held buffer is among the biggest, 8.0M, holder $holder (one fd)" \
	"$(echo "$row" | awk '{ print $2, $3, $5 }') $(echo "$row" | grep -o " $holder:[^ ]*")" \
	"$SYS 8.0M no  $holder:ionctl(1fd)"
check_eq "top -b: one CLIENT row per debugfs client" \
	"$(frame 1 | awk '/^CLIENT /, /^$/' | awk 'NR > 1 && NF { print $1 }' | sort | tr '\n' ' ')" \
	"$(ls $D/clients | sort | tr '\n' ' ')"

# ---- JSON -------------------------------------------------------------------
run --json top -n 2 -d 0.2
expect_rc 0 "--json top -n 2 exits 0"
check_eq "--json top -n 2: two lines" "$(wc -l < $T/out)" 2
for n in 1 2; do
	sed -n "${n}p" $T/out > $T/frame
	check "--json top frame $n is valid JSON" json_valid $T/frame
	# "bytes" members before "clients": the frame's total, then each heap's.
	sed 's/"clients": .*//' $T/frame | tr ',' '\n' |
		sed -n 's/.*"bytes": \([0-9]*\).*/\1/p' > $T/bytes
	check_eq "--json top frame $n: frame $n, bytes as debugfs, heaps' bytes add up to it" \
		"$(json_get "$(cat $T/frame)" frame) $(head -n1 $T/bytes) $(awk 'NR > 1 { s += $1 } END { print s + 0 }' $T/bytes)" \
		"$n $(dfs_key $D/summary bytes) $(dfs_key $D/summary bytes)"
done
# The held buffer's object of frame 2, then its first holder's.
o=$(sed -n 2p $T/out | tr '{}' '\n\n' | grep -A1 "\"ino\": $ino,")
check_eq "--json top: the held buffer with size, orphan false, holder pid $holder" \
	"$(json_get "$o" size) $(json_get "$o" orphan) $(json_get "$o" pid)" \
	"8388608 false $holder"

# ---- signals and usage ------------------------------------------------------
ionctl top -b -d 60 > $T/sig 2>&1 &
top=$!
pids="$pids $top"
if wait_for $T/sig "^BUFFER "; then
	kill -TERM $top
	wait $top
	check_eq "top: SIGTERM while waiting ends it with exit 0" "$?" 0
else
	not_ok "top -b -d 60 printed a frame"
fi
run top -n 0
expect_rc 2 "top -n 0 is a usage error (exit 2)"
run top -d 0
expect_rc 2 "top -d 0 is a usage error (exit 2)"
run top -d x
expect_rc 2 "top -d x is a usage error (exit 2)"

kill -TERM $holder
wait $holder
pids=""
rig_exit
