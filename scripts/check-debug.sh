#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# make check-debug: the whole suite on the debug guest kernel (KASAN,
# lockdep, kmemleak, DMA-API debugging, CMA; scripts/debug-kernel.sh),
# with ion.ko and the test modules built against that kernel, the fuzzer
# run longer, and a kmemleak scan at the end.  Any report fails the run.
#
# Usage: scripts/check-debug.sh [--if-cached]
#   --if-cached  do nothing (successfully) unless the debug kernel is
#                already built; CI uses this so it never waits ~20 min.
# Environment: BUILD (build directory, default build; the debug modules go
# to $BUILD/debug), TESTS (as for make check), ION_FUZZ_ITERATIONS (the
# fuzzer's calls, default 600000), ION_FUZZ_KFAULT_ITERATIONS (those of
# fuzz_kfault, default 20000), RIG_ENV (more lines for the guest's
# /etc/rig.conf, e.g. ION_FUZZ_SKIP_OPS=fork), RIG_TIMEOUT / RIG_TEST_TIMEOUT (7200 s
# / 1800 s: KASAN under TCG is slow), IOMMU_TESTS, SWIOTLB_TESTS and
# HIGHMEM_TESTS (default empty: no IOMMU, swiotlb or large-memory boot).
set -euo pipefail

# The whole script is one function, read before any of it runs: editing
# this file while a (long) run is going does not change that run.
main() {
	top=$(cd "$(dirname "$0")/.." && pwd)
	BUILD=${BUILD:-$top/build}
	dk=$top/scripts/debug-kernel.sh

	if [ "${1:-}" = --if-cached ] && ! "$dk" --cached; then
		echo "check-debug: no cached debug kernel ($("$dk" --print-dir)); skipped"
		exit 0
	fi
	. "$top/scripts/debug-env.sh"
	debug_env

	# The fuzzer's longer run: fuzz_ioctl reads ION_FUZZ_ITERATIONS.
	fuzz_iter=${ION_FUZZ_ITERATIONS:-600000}
	export RIG_TIMEOUT=${RIG_TIMEOUT:-7200}
	export RIG_TEST_TIMEOUT=${RIG_TEST_TIMEOUT:-1800}
	export RIG_ENV="RIG_DEBUG_KERNEL=1
ION_FUZZ_ITERATIONS=$fuzz_iter${ION_FUZZ_KFAULT_ITERATIONS:+
ION_FUZZ_KFAULT_ITERATIONS=$ION_FUZZ_KFAULT_ITERATIONS}${RIG_ENV:+
$RIG_ENV}"
	# No IOMMU, swiotlb or large-memory boot unless asked for: one debug
	# boot is slow enough.
	export IOMMU_TESTS=${IOMMU_TESTS-}
	export SWIOTLB_TESTS=${SWIOTLB_TESTS-}
	export HIGHMEM_TESTS=${HIGHMEM_TESTS-}
	start=$(date +%s)
	rc=0
	"$top/scripts/guest-run.sh" check || rc=$?
	echo "# check-debug: $(( $(date +%s) - start )) s in the guest (kernel $KVER)"
	# The fuzzer must have run with the debug run's iteration count.
	if [ -e "$BUILD/guest/tests/fuzz_ioctl" ] &&
	   echo fuzz_ioctl | grep -qE -- "${TESTS:-.}" &&
	   ! grep -q "^# iterations=${fuzz_iter}[: ]" "$BUILD/guest-main.results"; then
		echo "not ok - check-debug: fuzz_ioctl ran with ION_FUZZ_ITERATIONS=$fuzz_iter"
		rc=1
	fi
	return $rc
}
main "$@"; exit $?
