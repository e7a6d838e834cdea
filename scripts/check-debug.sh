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
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
dk=$top/scripts/debug-kernel.sh

if [ "${1:-}" = --if-cached ] && ! "$dk" --cached; then
	echo "check-debug: no cached debug kernel ($("$dk" --print-dir)); skipped"
	exit 0
fi
"$dk"
dir=$("$dk" --print-dir)
kver=$(cat "$dir/kernelrelease")

# Build the modules out of a copy of the sources, so the regular build's
# objects stay as they are.
mods=$BUILD/debug
rm -rf "$mods"
mkdir -p "$mods/tests"
cp -a "$top/kernel" "$top/include" "$mods/"
cp -a "$top/tests/kmod" "$mods/tests/"
find "$mods" \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o \
	-name '.*.cmd' -o -name Module.symvers -o -name modules.order \) -delete
make -s -C "$dir/build" M="$mods/kernel" W=1 modules
if [ -f "$mods/tests/kmod/Kbuild" ]; then
	make -s -C "$dir/build" M="$mods/tests/kmod" W=1 \
		KBUILD_EXTRA_SYMBOLS="$mods/kernel/Module.symvers" modules
fi

export KVER=$kver BUILD
export KERNEL_IMAGE=$dir/bzImage
export MODDIR=$dir/modules/lib/modules/$kver
export ION_KO_DIR=$mods
export RIG_TIMEOUT=${RIG_TIMEOUT:-2400}
export RIG_TEST_TIMEOUT=${RIG_TEST_TIMEOUT:-900}
export RIG_ENV="RIG_DEBUG_KERNEL=1
ION_FUZZ_ITERATIONS=${ION_FUZZ_ITERATIONS:-1000000}"
# The debug kernel has CMA: give the DMA heap a CMA area to draw from.
export QEMU_EXTRA="${QEMU_EXTRA:-}"
exec "$top/scripts/guest-run.sh" check
