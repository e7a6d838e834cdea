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
# fuzzer's calls, default 600000), RIG_TIMEOUT / RIG_TEST_TIMEOUT (7200 s
# / 1800 s: KASAN under TCG is slow), IOMMU_TESTS and SWIOTLB_TESTS
# (default empty: no IOMMU or swiotlb boot).
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
	"$dk"
	dir=$("$dk" --print-dir)
	# The guest programs (make check-debug has built them; a bare
	# scripts/check-debug.sh, as in .ci/run, must not boot a guest without).
	make -s -C "$top" user BUILD="$BUILD"
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

	# Debian modules the tests load (scripts/guest-modules.txt) that the
	# debug kernel's config leaves out are built here from its own source, out
	# of tree, and added to a copy of its module index (the kernel's modules
	# stay in the cache, read-only to us).
	moddir=$dir/modules/lib/modules/$kver
	omod=$mods/moddir
	mkdir -p "$omod/updates"
	ln -s "$moddir/kernel" "$omod/kernel"
	cp "$moddir"/modules.* "$omod/"
	extra_src() {	# <module>: its source file in the kernel tree, if we know it
		case $1 in
		videobuf2-dma-sg) echo drivers/media/common/videobuf2/videobuf2-dma-sg.c ;;
		esac
	}
	while read -r m; do
		case $m in ''|'#'*) continue ;; esac
		grep -qE "/($m|${m//_/-}|${m//-/_})\.ko(\.xz)?:" "$moddir/modules.dep" &&
			continue
		f=$(extra_src "$m")
		[ -n "$f" ] || { echo "check-debug: the debug kernel has no $m" >&2; exit 1; }
		echo "check-debug: building $m, left out of the debug kernel's config"
		mkdir -p "$mods/extra/$m"
		cp "$dir/src/$f" "$mods/extra/$m/"
		echo "obj-m := $(basename "$f" .c).o" > "$mods/extra/$m/Kbuild"
		make -s -C "$dir/build" M="$mods/extra/$m" modules
		ko=$mods/extra/$m/$(basename "$f" .c).ko
		cp "$ko" "$omod/updates/"
		deps=""
		for d in $(/sbin/modinfo -F depends "$ko" | tr ',' ' '); do
			deps+=" $(grep -E "/($d|${d//_/-})\.ko:" "$moddir/modules.dep" |
				head -n1 | cut -d: -f1)"
		done
		echo "updates/$(basename "$ko"):$deps" >> "$omod/modules.dep"
	done < "$top/scripts/guest-modules.txt"

	# The fuzzer's longer run: fuzz_ioctl reads ION_FUZZ_ITERATIONS.
	fuzz_iter=${ION_FUZZ_ITERATIONS:-600000}
	export KVER=$kver BUILD
	export KERNEL_IMAGE=$dir/bzImage
	export MODDIR=$omod
	export ION_KO_DIR=$mods
	export RIG_TIMEOUT=${RIG_TIMEOUT:-7200}
	export RIG_TEST_TIMEOUT=${RIG_TEST_TIMEOUT:-1800}
	export RIG_ENV="RIG_DEBUG_KERNEL=1
ION_FUZZ_ITERATIONS=$fuzz_iter"
	# No 5-level paging: while identify_cpu() rebuilds the boot CPU's feature
	# bits, LA57 reads as clear, KASAN takes the 5-level direct map for wild
	# addresses, and an interrupt arriving then is a false "BUG: KASAN:
	# wild-memory-access" in handle_edge_irq (seen at 0.018 s, now and then,
	# under TCG with -cpu max).  QEMU uses the last -cpu.
	export QEMU_EXTRA="-cpu max,la57=off${QEMU_EXTRA:+ $QEMU_EXTRA}"
	# No IOMMU or swiotlb boot unless asked for: one debug boot is slow
	# enough.
	export IOMMU_TESTS=${IOMMU_TESTS-}
	export SWIOTLB_TESTS=${SWIOTLB_TESTS-}
	start=$(date +%s)
	rc=0
	"$top/scripts/guest-run.sh" check || rc=$?
	echo "# check-debug: $(( $(date +%s) - start )) s in the guest (kernel $kver)"
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
