#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tool_ionctl_trace: `ionctl trace` (tools/ionctl/trace.c) enables ion's
# events in a tracefs instance of its own and prints them readably: an
# allocation by another process shows as ion_alloc (heap, size in K, the
# latency in microseconds) and ion_free; -n N stops after N events, -t
# after its seconds, SIGINT and SIGTERM stop it cleanly (exit 0); every
# way out removes the instance, and the events of the top-level buffer
# are left as they were (off).  --raw prints tracefs's own lines.
. /etc/rig-lib.sh

SYS=ion_system_heap
T=/tmp/tool_ionctl_trace.$$
TR=/sys/kernel/tracing
[ -d $TR/events/ion ] || TR=/sys/kernel/debug/tracing
mkdir -p $T
pid=""
cleanup() {
	[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
	wait 2>/dev/null
	rm -rf $T
}
trap cleanup EXIT

if [ ! -d $TR/events/ion ]; then
	skip "ionctl trace" "no tracefs with ion's events"
	exit 0
fi

# instance <pid>: wait (at most 10 s) for ionctl <pid>'s instance, with
# ion's events on.
instance() {
	i=0
	f=$TR/instances/ionctl-$1/events/ion/enable
	while ! grep -q 1 $f 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q 1 $f 2>/dev/null
}

# wait_for <file> <pattern>: wait (at most 10 s) for a line in <file>.
wait_for() {
	i=0
	while ! grep -q "$2" "$1" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q "$2" "$1"
}

# stopped <pid> <case>: ionctl <pid> exited 0 and removed its instance.
stopped() {
	wait "$1"
	check_eq "$2: exit status 0" "$?" 0
	pid=""
	check "$2: its tracefs instance is removed" \
		test ! -e $TR/instances/ionctl-$1
}

top_enable=$(cat $TR/events/ion/enable)

# Readable lines until SIGINT.
ionctl trace > $T/out 2> $T/err &
pid=$!
check "ionctl trace creates its instance, with ion's events on" \
	instance $pid
ionctl alloc --heap $SYS --size 64K > /dev/null
check "an allocation elsewhere shows as ion_alloc" \
	wait_for $T/out "ion_alloc .*heap=$SYS .*size=64K "
check "and its release as ion_free" wait_for $T/out "ion_free .*size=64K "
line=$(grep -m1 "ion_alloc .*heap=$SYS" $T/out)
diag "$line"
check "ion_alloc: timestamp first, latency in microseconds, ret=0" \
	sh -c "echo '$line' | grep -Eq '^ *[0-9]+\.[0-9]+ .* latency=[0-9.]+us' &&
		echo '$line' | grep -q ' ret=0 '"
kill -INT $pid
stopped $pid "SIGINT"

# -n 1: one event line, then it stops by itself.
ionctl trace -n 1 > $T/out 2> $T/err &
pid=$!
instance $pid
ionctl alloc --heap $SYS --size 64K > /dev/null
( sleep 60; kill -KILL $pid 2>/dev/null ) &
watchdog=$!
wait $pid
rc=$?
kill $watchdog 2>/dev/null
check_eq "-n 1: exits 0 by itself" "$rc" 0
check_eq "-n 1: one event line" "$(grep -c ' ion_' $T/out)" 1
check "-n 1: its instance is removed" test ! -e $TR/instances/ionctl-$pid
pid=""

# SIGTERM, and --raw.
ionctl trace --raw > $T/out 2> $T/err &
pid=$!
instance $pid
ionctl alloc --heap $SYS --size 64K > /dev/null
check "--raw: tracefs's own lines" wait_for $T/out "ion_alloc: heap=$SYS "
kill -TERM $pid
stopped $pid "SIGTERM"

# -t 1: stops by itself.
ionctl trace -t 1 > $T/out 2> $T/err &
pid=$!
( sleep 60; kill -KILL $pid 2>/dev/null ) &
watchdog=$!
stopped $pid "-t 1"
kill $watchdog 2>/dev/null

check_eq "the top-level events are as they were" \
	"$(cat $TR/events/ion/enable)" "$top_enable"
ionctl trace -n 0 > /dev/null 2>&1
check_eq "-n 0: a usage error (exit 2)" "$?" 2
rig_exit
