#!/bin/sh
# SPDX-License-Identifier: MIT
#
# fuzz_ioctl once per seed, $ION_FUZZ_SEEDS seeds (seed 1 to N), for
# hunting a crash that one seed in several shows (issue 22's double
# fault): each run is three processes of two threads, both ABIs, every
# ion-* node, mmap, sync, dup, close and fork, $ION_FUZZ_ITERATIONS calls
# each (fuzz_ioctl's default when unset).  Skipped unless ION_FUZZ_SEEDS
# is set (the default run has fuzz_ioctl itself) or when the TESTS pattern
# leaves fuzz_ioctl out.  For example
#   make check TESTS='^fuzz_(ioctl|seeds)$$' RIG_TEST_TIMEOUT=3000 \
#	RIG_ENV='ION_FUZZ_SEEDS=20 ION_FUZZ_ITERATIONS=40000'
. /etc/rig-lib.sh

if [ -z "$ION_FUZZ_SEEDS" ]; then
	skip "fuzz_ioctl with many seeds" "ION_FUZZ_SEEDS is not set"
	exit 0
fi
fuzz="$(dirname "$0")/fuzz_ioctl"
if [ ! -x "$fuzz" ]; then
	skip "fuzz_ioctl with many seeds" "fuzz_ioctl is not in this run"
	exit 0
fi
s=1
while [ "$s" -le "$ION_FUZZ_SEEDS" ]; do
	out=$("$fuzz" --seed "$s" 2>&1)
	rc=$?
	echo "$out" | grep -E '^# (seed|reproduce|[0-9]+ calls)'
	echo "$out" | grep '^not ok' | sed 's/^/# seed '"$s"': /'
	check "seed $s: fuzz_ioctl passes (exit $rc)" [ "$rc" = 0 ]
	s=$((s + 1))
done
rig_exit
