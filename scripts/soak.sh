#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# make soak: one guest with 4 vCPUs runs tests/soak/soak for SOAK_MINUTES
# (default 10): mixed work on ion from several processes at once (see the
# program's header).  Its cases are TAP as make check's, with the same
# kernel-log scan and the check that ion.ko unloads at the end; the last
# lines give operations per second and latencies per operation.  Not part
# of make check or CI.
#
# Environment: SOAK_MINUTES (default 10), SOAK_SECONDS (overrides it),
# SOAK_DEBUG=1 (boot the debug kernel of make check-debug, KASAN, lockdep,
# kmemleak..., with ion built against it; make soak-debug), RIG_SMP
# (default 4), RIG_MEM (default 2G), and what scripts/guest-run.sh takes
# (KVER, ARCH=arm64, RIG_IOMMU=1, KERNEL_IMAGE...).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
minutes=${SOAK_MINUTES:-10}
secs=${SOAK_SECONDS:-$((minutes * 60))}
# The program gets its time; the boot and the checks after it get 10 min
# more (TCG, a loaded host).
export RIG_ENV="${RIG_ENV:+$RIG_ENV
}SOAK_SECONDS=$secs"
export RIG_SMP=${RIG_SMP:-4}
slack=600
if [ "${SOAK_DEBUG:-}" = 1 ]; then
	BUILD=${BUILD:-$top/build}
	. "$top/scripts/debug-env.sh"
	debug_env
	export RIG_ENV="$RIG_ENV
RIG_DEBUG_KERNEL=1"
	slack=1800	# KASAN under TCG: boot and checks are slower
fi
export RIG_TEST_TIMEOUT=$((secs + slack))
export RIG_TIMEOUT=$((secs + slack + 300))
exec "$top/scripts/guest-run.sh" soak
