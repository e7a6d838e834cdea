#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tool_ionctl: the ionctl CLI (tools/ionctl.c) against the real module.
#
# Every view is compared with the debugfs file it comes from
# (Documentation/debugfs.rst): heaps, clients, buffers [--heap H], stat,
# each in table and --json form (the JSON is checked by a small
# recursive-descent validator below, busybox having no jq).  A buffer held
# by `ionctl alloc --hold` in the background must show in every view with
# its real size, heap, flags and owner, and be gone once that ionctl is
# terminated.  Human sizes (8M, 1.5M, 1.5G) are checked through the byte
# counts ionctl reports, and the exit codes through bad sizes, bad heaps,
# a debugfs directory that is not there (--debugfs, $ION_DEBUGFS, and
# debugfs unmounted in a private mount namespace) and /dev/ion missing
# (ion.ko unloaded).  `alloc --count` holds more buffers than a fixed
# table would: every view must list them all.  `quota` shows each
# holder's usage against a client limit, as debugfs's quota file does.
. /etc/rig-lib.sh
. /etc/tool-lib.sh

D=/sys/kernel/debug/ion
SYS=ion_system_heap
tool_scratch tool_ionctl

# ---- --help and usage -------------------------------------------------------
run --help
expect_rc 0 "--help exits 0"
check "--help prints usage, examples and the exit codes on stdout" \
	sh -c "grep -q '^usage: ionctl' $T/out && grep -q '^examples:' $T/out &&
	       grep -q 'alloc --heap' $T/out && grep -q '^exit codes:' $T/out"
run
expect_rc 2 "no command: exit 2"
check "no command: usage on stderr" grep -q '^usage: ionctl' $T/err
run frobnicate
expect_rc 2 "unknown command: exit 2"
run stat --bogus
expect_rc 2 "unknown option: exit 2"
run stat extra
expect_rc 2 "unexpected argument: exit 2"

# ---- heaps ------------------------------------------------------------------
run heaps
expect_rc 0 "heaps exits 0"
nheaps=0
bad=""
for f in $D/heaps/*; do
	h=${f##*/}
	nheaps=$((nheaps + 1))
	line=$(awk -v h="$h" '$1 == h' $T/out)
	want="$(dfs_key "$f" type) $(dfs_key "$f" id) $(dfs_key "$f" buffers)"
	got=$(echo "$line" | awk '{ print $2, $3, $8 }')
	[ "$got" = "$want" ] || bad="$bad $h(got '$got' want '$want')"
done
[ -z "$bad" ] || diag "heaps:$bad"
[ -z "$bad" ] && [ $nheaps -gt 0 ] && [ "$(($(wc -l < $T/out) - 1))" = $nheaps ] &&
	ok "heaps: one row per debugfs heap file, type, id and buffers as debugfs says" ||
	not_ok "heaps: one row per debugfs heap file, type, id and buffers as debugfs says"
ids=$(awk 'NR > 1 { print $3 }' $T/out | tr '\n' ' ')
sorted=$(awk 'NR > 1 { print $3 }' $T/out | sort -rn | tr '\n' ' ')
check_eq "heaps: in priority order, highest id first ($ids)" "$ids" "$sorted"

run --json heaps
expect_rc 0 "--json heaps exits 0"
check "--json heaps is valid JSON" json_valid $T/out
bad=""
for f in $D/heaps/*; do
	h=${f##*/}
	o=$(json_obj $T/out "\"name\": \"$h\"")
	for k in type id buffers bytes allocs; do
		[ "$(json_get "$o" $k)" = "$(dfs_key "$f" $k)" ] ||
			bad="$bad $h.$k=$(json_get "$o" $k)"
	done
done
[ -z "$bad" ] || diag "--json heaps:$bad"
check "--json heaps: type, id, buffers, bytes, allocs of every heap as debugfs says" \
	[ -z "$bad" ]

# ---- alloc --hold, then every view -------------------------------------------
stat0=$(dfs_key $D/summary bytes)
buf0=$(dfs_key $D/summary buffers)
ionctl alloc --heap $SYS --size 8M --cached --hold > $T/hold1 2>&1 &
p1=$!
pids="$p1"
if wait_for $T/hold1 '^holding'; then
	ok "alloc --heap $SYS --size 8M --cached --hold: allocates and holds"
else
	diag "$(cat $T/hold1)"
	not_ok "alloc --heap $SYS --size 8M --cached --hold: allocates and holds"
fi
check "alloc: 8M is 8388608 bytes, cached, from $SYS" \
	grep -q "^allocated 8388608 bytes from $SYS (cached): dma-buf fd [0-9]*, ino [0-9]*" $T/hold1
ino1=$(sed -n 's/.* ino \([0-9]*\)$/\1/p' $T/hold1)
id1=$(dfs_cell $D/heaps/$SYS ino "$ino1" buffer)
diag "held buffer: ino $ino1, debugfs buffer id $id1, owner ionctl-$p1"
check_eq "debugfs: the held buffer is in $SYS, 8388608 bytes, flags 0x1, owner ionctl-$p1" \
	"$(dfs_cell $D/heaps/$SYS ino "$ino1" size) $(dfs_cell $D/heaps/$SYS ino "$ino1" flags) $(dfs_cell $D/heaps/$SYS ino "$ino1" owner)" \
	"8388608 0x1 ionctl-$p1"

run buffers
expect_rc 0 "buffers exits 0"
row=$(awk -v id="$id1" '$1 == id' $T/out)
diag "buffers: $row"
check_eq "buffers: the held buffer's row: $SYS, 8.0M, 0x1, ionctl-$p1" \
	"$(echo "$row" | awk '{ print $2, $3, $4, $5 }')" \
	"$SYS 8.0M 0x1 ionctl-$p1"
check_eq "buffers: as many rows as debugfs has buffers" \
	"$(($(wc -l < $T/out) - 1))" \
	"$(dfs_key $D/summary buffers)"
run buffers --heap $SYS
check "buffers --heap $SYS: lists the held buffer" \
	sh -c "[ $rc = 0 ] && awk '\$1 == \"$id1\" && \$2 == \"$SYS\"' $T/out | grep -q ."
other=""
for f in $D/heaps/*; do [ "${f##*/}" != $SYS ] && other=${f##*/} && break; done
if [ -n "$other" ]; then
	run buffers --heap "$other"
	check "buffers --heap $other: not the $SYS buffer, only $other rows" \
		sh -c "[ $rc = 0 ] && ! awk '\$1 == \"$id1\"' $T/out | grep -q . &&
		       ! awk 'NR > 1 && \$2 != \"$other\"' $T/out | grep -q ."
else
	skip "buffers --heap <other heap>" "only one heap"
fi

run --json buffers
expect_rc 0 "--json buffers exits 0"
check "--json buffers is valid JSON" json_valid $T/out
o=$(json_obj $T/out "\"ino\": $ino1")
diag "--json buffers: {$o}"
check_eq "--json buffers: the held buffer: heap, buffer id, size 8388608, flags, owner, handles as debugfs" \
	"$(json_get "$o" heap) $(json_get "$o" buffer) $(json_get "$o" size) $(json_get "$o" flags) $(json_get "$o" owner) $(json_get "$o" handles)" \
	"\"$SYS\" $id1 8388608 \"0x1\" \"ionctl-$p1\" $(dfs_cell $D/heaps/$SYS ino "$ino1" handles)"

# A second holder, uncached, sized 1.5M, allocated with --json.
ionctl --json alloc --heap $SYS --size 1.5M --hold > $T/hold2 2>&1 &
p2=$!
pids="$p1 $p2"
wait_for $T/hold2 '"ino"'
check "--json alloc --hold is valid JSON" json_valid $T/hold2
o=$(cat $T/hold2)
ino2=$(json_get "$o" ino)
check_eq "--json alloc: 1.5M is 1572864 bytes, uncached, from $SYS, pid $p2" \
	"$(json_get "$o" heap) $(json_get "$o" size) $(json_get "$o" cached) $(json_get "$o" pid)" \
	"\"$SYS\" 1572864 false $p2"
check_eq "debugfs: the uncached buffer: 1572864 bytes, flags 0x0, owner ionctl-$p2" \
	"$(dfs_cell $D/heaps/$SYS ino "$ino2" size) $(dfs_cell $D/heaps/$SYS ino "$ino2" flags) $(dfs_cell $D/heaps/$SYS ino "$ino2" owner)" \
	"1572864 0x0 ionctl-$p2"
run buffers --heap $SYS
id2=$(dfs_cell $D/heaps/$SYS ino "$ino2" buffer)
check_eq "buffers: the uncached buffer's row: 1.5M, 0x0, ionctl-$p2" \
	"$(awk -v id="$id2" '$1 == id { print $3, $4, $5 }' $T/out)" \
	"1.5M 0x0 ionctl-$p2"

run clients
expect_rc 0 "clients exits 0"
check_eq "clients: a user client ionctl-$p1 with pid $p1 (fd ABI: 0 handles)" \
	"$(awk -v n="ionctl-$p1" '$1 == n { print $2, $3, $4 }' $T/out)" \
	"user $p1 0"
check_eq "clients: as many rows as debugfs has client files" \
	"$(($(wc -l < $T/out) - 1))" \
	"$(ls $D/clients | wc -l)"
run --json clients
check "--json clients is valid JSON" json_valid $T/out
o=$(json_obj $T/out "\"name\": \"ionctl-$p2\"")
check_eq "--json clients: ionctl-$p2: kind, pid, handles, bytes as debugfs" \
	"$(json_get "$o" kind) $(json_get "$o" pid) $(json_get "$o" handles) $(json_get "$o" bytes)" \
	"\"user\" $p2 $(dfs_key $D/clients/ionctl-$p2 handles) $(dfs_key $D/clients/ionctl-$p2 bytes)"

run stat
expect_rc 0 "stat exits 0"
check_eq "stat: buffers and bytes as debugfs summary says" \
	"$(awk '$1 == "buffers" || $1 == "bytes" { print $2 }' $T/out | tr '\n' ' ')" \
	"$(dfs_key $D/summary buffers) $(dfs_key $D/summary bytes) "
run --json stat
check "--json stat is valid JSON" json_valid $T/out
o=$(tr -d '{}' < $T/out)
check_eq "--json stat: buffers $((buf0 + 2)), bytes $((stat0 + 8388608 + 1572864)) (before + the two held)" \
	"$(json_get "$o" buffers) $(json_get "$o" bytes) $(json_get "$o" clients)" \
	"$((buf0 + 2)) $((stat0 + 8388608 + 1572864)) $(dfs_key $D/summary clients)"

# quota: each holder is a client of its own; its row says what debugfs's
# quota file says, with the per-client limit set for the system heap (id 0).
P=/sys/module/ion/parameters
echo 65536,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1 > $P/client_max_kb
run quota
expect_rc 0 "quota exits 0"
check "quota: ionctl-$p1 holds 8.0M of $SYS against a 64.0M client limit, 12%" \
	grep -Eq "^$SYS +client +ionctl-$p1 +8\.0M +64\.0M +12%$" $T/out
check_eq "quota: ionctl-$p1's bytes are debugfs's" \
	"$(awk -v w=ionctl-$p1 -v h=$SYS '$1 == h && $2 == "client" && $3 == w { print $4 }' $D/quota)" \
	8388608
run --json quota
check "--json quota is valid JSON" json_valid $T/out
check "--json quota: the client row with bytes and limit" \
	grep -q "\"who\": \"ionctl-$p2\", \"bytes\": 1572864, \"limit\": 67108864" $T/out
echo -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1 > $P/client_max_kb

# ---- the holders go ------------------------------------------------------------
kill -TERM $p1 $p2
wait $p1
r1=$?
wait $p2
r2=$?
pids=""
check_eq "alloc --hold: SIGTERM ends both holders with status 0" "$r1 $r2" "0 0"
run --json buffers
check "--json buffers: neither held buffer left" \
	sh -c "! grep -Eq '\"ino\": ($ino1|$ino2)[,}]' $T/out"
run stat
check_eq "stat: bytes and buffers back to $stat0 / $buf0" \
	"$(awk '$1 == "buffers" || $1 == "bytes" { print $2 }' $T/out | tr '\n' ' ')" \
	"$buf0 $stat0 "
check "debugfs: no client file of either holder left" \
	[ ! -e $D/clients/ionctl-$p1 -a ! -e $D/clients/ionctl-$p2 ]

# ---- the auto heap's detail: a never-used buffer is waiting -------------------
AUTO=ion_auto_heap
if [ -e $D/heaps/$AUTO ]; then
	ionctl alloc --heap $AUTO --size 1M --hold > $T/hold4 2>&1 &
	p4=$!
	pids="$p4"
	wait_for $T/hold4 '^holding' || diag "$(cat $T/hold4)"
	ino4=$(sed -n 's/.* ino \([0-9]*\)$/\1/p' $T/hold4)
	id4=$(dfs_cell $D/heaps/$AUTO ino "$ino4" buffer)
	run buffers --heap $AUTO
	row=$(awk -v id="$id4" '$1 == id' $T/out)
	diag "buffers --heap $AUTO: $row"
	check "buffers --heap $AUTO: DETAIL says the held buffer waits, no device" \
		sh -c "[ $rc = 0 ] && head -1 $T/out | grep -q 'DETAIL\$' &&
		       echo '$row' | grep -q 'state=waiting backing=- devs=0 .*why: no first use yet'"
	run --json buffers
	o=$(json_obj $T/out "\"ino\": $ino4")
	check "--json buffers: the auto buffer's detail as debugfs" \
		sh -c "echo '$o' | grep -q '\"detail\": \"state=waiting '"
	kill -TERM $p4
	wait $p4
	pids=""
else
	skip "buffers: the auto heap's detail" "no auto heap"
fi

# ---- no row limit: more buffers than any fixed table holds --------------------
# ionctl once stopped at 4096 rows of a debugfs table without a word; every
# row must be listed however many there are.
n=4500
ionctl alloc --heap $SYS --size 4K --count $n --hold > $T/hold3 2>&1 &
p3=$!
pids="$p3"
if wait_for $T/hold3 '^holding'; then
	ok "alloc --count $n --hold: allocates $n buffers and holds them"
else
	diag "$(cat $T/hold3)"
	not_ok "alloc --count $n --hold: allocates $n buffers and holds them"
fi
check_eq "debugfs: $n buffers owned by ionctl-$p3" \
	"$(awk -F'\t' -v o="ionctl-$p3" '$5 == o' $D/heaps/$SYS | wc -l)" "$n"
run buffers --heap $SYS
check_eq "buffers --heap $SYS: all $n rows of ionctl-$p3, none dropped" \
	"$rc $(awk -v o="ionctl-$p3" '$5 == o' $T/out | wc -l)" "0 $n"
check_eq "buffers --heap $SYS: as many rows as debugfs has buffers in $SYS" \
	"$(($(wc -l < $T/out) - 1))" "$(dfs_key $D/heaps/$SYS buffers)"
# (json_valid is quadratic in busybox awk: the small outputs above prove
# the form; here the objects are counted.)
run --json buffers
check_eq "--json buffers: all $n objects of ionctl-$p3" \
	"$rc $(json_obj $T/out "\"owner\": \"ionctl-$p3\"" | wc -l)" "0 $n"
kill -TERM $p3
wait $p3
r3=$?
pids=""
check_eq "alloc --count --hold: SIGTERM ends the holder with status 0" "$r3" 0
check_eq "stat: buffers back to $buf0 after the $n are freed" \
	"$(dfs_key $D/summary buffers)" "$buf0"
for c in 0 -1 x 1000001; do
	run alloc --heap $SYS --size 4K --count $c
	[ $rc = 2 ] && grep -q 'bad count' $T/err &&
		ok "alloc --count '$c': exit 2, bad count" ||
		{ diag "rc $rc: $(cat $T/err)"; not_ok "alloc --count '$c': exit 2, bad count"; }
done

# ---- sizes and heaps on the command line ---------------------------------------
run --json alloc --heap $SYS --size 4096
check "alloc --size 4096 (plain bytes) allocates 4096 bytes and exits 0" \
	sh -c "[ $rc = 0 ] && grep -q '\"size\": 4096,' $T/out"
if [ -e $D/heaps/ion_carveout_heap ]; then
	run alloc --heap ion_carveout_heap --size 1.5G
	expect_rc 1 "alloc 1.5G from the 64M carveout: exit 1 (allocation failed)"
	check "alloc: 1.5G is 1610612736 bytes (in the error message)" \
		grep -q 'allocating 1610612736 bytes from ion_carveout_heap' $T/err
else
	skip "alloc 1.5G from the carveout" "no carveout heap"
fi
for s in 8Q abc -1 0 0.1K 1.5 ''; do
	run alloc --heap $SYS --size "$s"
	[ $rc = 2 ] && grep -Eq 'bad size|non-zero --size' $T/err &&
		ok "alloc --size '$s': exit 2, bad size" ||
		{ diag "rc $rc: $(cat $T/err)"; not_ok "alloc --size '$s': exit 2, bad size"; }
done
run alloc --heap $SYS
expect_rc 2 "alloc without --size: exit 2"
run alloc --heap no_such_heap --size 8M
expect_rc 2 "alloc --heap no_such_heap: exit 2"
check "alloc --heap no_such_heap: says there is no such heap" \
	grep -q "no heap named 'no_such_heap'" $T/err
run buffers --heap no_such_heap
expect_rc 2 "buffers --heap no_such_heap: exit 2"
check "buffers --heap no_such_heap: says there is no such heap" \
	grep -q "no heap named 'no_such_heap'" $T/err

# ---- debugfs missing ---------------------------------------------------------------
for c in stat clients buffers heaps; do
	run --debugfs /nonexistent/ion $c
	[ $rc = 3 ] && grep -q 'not found: is debugfs mounted' $T/err &&
		ok "--debugfs /nonexistent/ion $c: exit 3, says debugfs is not mounted" ||
		{ diag "rc $rc: $(cat $T/err)"; not_ok "--debugfs /nonexistent/ion $c: exit 3, says debugfs is not mounted"; }
done
ION_DEBUGFS=/nonexistent/ion ionctl buffers > $T/out 2> $T/err
rc=$?
expect_rc 3 "ION_DEBUGFS=/nonexistent/ion ionctl buffers: exit 3"
run --debugfs $D stat
expect_rc 0 "--debugfs $D stat: exit 0 (the knob points at the real directory too)"
if unshare -m true 2>/dev/null; then
	unshare -m sh -c 'umount /sys/kernel/debug && exec ionctl stat' > $T/out 2> $T/err
	rc=$?
	expect_rc 3 "debugfs unmounted (private mount namespace): ionctl stat exits 3"
	check "debugfs unmounted: says so" grep -q 'is debugfs mounted' $T/err
else
	skip "debugfs unmounted in a private mount namespace" "no unshare"
fi

# ---- /dev/ion missing -------------------------------------------------------------
if rmmod ion 2>/dev/null; then
	run heaps
	expect_rc 4 "ion.ko unloaded: heaps exits 4"
	check "ion.ko unloaded: says /dev/ion is missing" grep -q 'is ion.ko loaded' $T/err
	run alloc --heap $SYS --size 1M
	expect_rc 4 "ion.ko unloaded: alloc exits 4"
	run stat
	expect_rc 3 "ion.ko unloaded: stat exits 3 (no $D)"
	check "ion.ko loads again" modprobe ion
else
	skip "ionctl with ion.ko unloaded" "ion.ko is in use"
fi
rig_exit
