#!/bin/sh
# SPDX-License-Identifier: MIT
#
# fuzz_ioctl with ion's fault injection on (/sys/kernel/debug/ion/fail/):
# alloc, export, attach and map fail with chance $ION_FUZZ_FAIL_PERCENT %
# (default 10) during the main run of $ION_FUZZ_ITERATIONS calls (default
# 50000 here); every call's result must stay within its documented
# errnos, debugfs must come back to zero, at least one failure must have
# been injected, and fuzz_ioctl reports how many per step (attach and map
# through its importers, ion_test's edu and vgem).  The auto heap's paths
# are counted, not asserted, here (fuzz_ioctl asserts them).
# The quota runs are fuzz_ioctl's alone.  It runs the
# fuzz_ioctl program of the same directory: a TESTS pattern must select
# both (TESTS='^fuzz_'), else this is skipped.
. /etc/rig-lib.sh

fuzz="$(dirname "$0")/fuzz_ioctl"
if [ ! -x "$fuzz" ]; then
	skip "fuzz_ioctl under fault injection" "fuzz_ioctl is not in this run"
	exit 0
fi
export ION_FUZZ_FAIL_PERCENT=${ION_FUZZ_FAIL_PERCENT:-10}
export ION_FUZZ_ITERATIONS=${ION_FUZZ_ITERATIONS:-50000}
exec "$fuzz"
