#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Boot ion's test guest under QEMU (TCG) and run the tests, the demo, the
# benchmark (results in $BUILD/guest-bench.results) or a shell.  Never
# touches the host kernel.
#
# Usage: scripts/guest-run.sh check|demo|shell|rig|bench|soak
#
# Environment:
#   KVER           kernel version (default: scripts/deps.sh --kver)
#   BUILD          build directory (default: build)
#   TESTS          grep -E pattern: run only the tests whose name matches
#   IOMMU_TESTS    pattern of tests that 'check' runs a second time in a guest
#                  booted with -device intel-iommu and intel_iommu=on
#                  (default: tests named *dma* or *edu*); empty: no second boot
#   SWIOTLB_TESTS  pattern of tests that 'check' runs once more in a guest
#                  booted with swiotlb=force, edu given a 32-bit DMA mask
#                  (default: tests named *edu*); empty: no such boot
#   HIGHMEM_TESTS  pattern of tests that 'check' runs once more in a guest
#                  with RIG_HIGH_MEM (default 6G) of memory, so that much of
#                  it lies above 4 GiB (default on x86: the uncached DMA
#                  tests, heap_uncached_contig_dma); empty: no such boot
#   RIG_IOMMU=1    boot the (first) guest with the IOMMU as well
#   RIG_EDU=0      leave out QEMU's edu PCI device (present by default)
#   RIG_TIMEOUT    hard limit for one guest boot, seconds (default 900)
#   RIG_MEM        guest memory (default 2G)
#   RIG_SMP        guest CPUs (default 2)
#   QEMU_EXTRA     more QEMU arguments
#   KERNEL_IMAGE   guest kernel (default /boot/vmlinuz-$KVER, or below
#                  scripts/deps.sh --kroot when that is not /); MODDIR and
#                  ION_KO_DIR go to scripts/mkinitramfs.sh
#   ARCH=arm64     boot qemu-system-aarch64 -M virt with the arm64 kernel
#                  from scripts/deps.sh --kroot; the IOMMU is the SMMUv3
#                  (-M virt,iommu=smmuv3), results go over a virtio console
#                  (/dev/hvc0); see Documentation/arm64.md
set -euo pipefail

mode=${1:?usage: guest-run.sh check|demo|shell|rig|bench|soak}
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
KVER=${KVER:-$("$top/scripts/deps.sh" --kver)}
export KVER BUILD
kernel=${KERNEL_IMAGE:-/boot/vmlinuz-$KVER}
ARCH=${ARCH:-x86_64}
qemu=qemu-system-x86_64 machine=q35 cpu=max
# Modules built from a copy of the sources (arm64, a KSERIES other than
# the default) are there, not in the tree.
if [ -z "${ION_KO_DIR:-}" ] && [ -e "$BUILD/src/kernel/ion.ko" ]; then
	export ION_KO_DIR=$BUILD/src
fi
# A kernel unpacked outside / (arm64, KSERIES=7.3's build root) is booted
# from there, with its modules.
kroot=$("$top/scripts/deps.sh" --kroot)
if [ "$kroot" != / ]; then
	kernel=${KERNEL_IMAGE:-$kroot/boot/vmlinuz-$KVER}
	MODDIR=${MODDIR:-$kroot/lib/modules/$KVER}
	export MODDIR
fi
if [ "$ARCH" = arm64 ]; then
	ION_KO_DIR=${ION_KO_DIR:-$BUILD/src}
	BUSYBOX=${BUSYBOX:-$("$top/scripts/deps.sh" --busybox)}
	RIG_RESULTS=/dev/hvc0
	export MODDIR ION_KO_DIR BUSYBOX RIG_RESULTS
	# pauth-impdef: QEMU's own pointer-authentication hash, much faster
	# under TCG than the architected QARMA one.
	qemu=qemu-system-aarch64 machine=virt cpu=max,pauth-impdef=on
fi
timeout_s=${RIG_TIMEOUT:-900}
mem=${RIG_MEM:-2G}
iommu_tests=${IOMMU_TESTS-'dma|edu'}
swiotlb_tests=${SWIOTLB_TESTS-edu}
highmem_def=uncached_contig_dma
[ "$ARCH" != arm64 ] || highmem_def=	# no linear-map conversions there
highmem_tests=${HIGHMEM_TESTS-$highmem_def}

append_base="console=ttyS0,115200 reserve_mem=64M:2M:ion_carveout panic=-1 loglevel=7"
# RIG_APPEND: more kernel parameters (check-debug: a bigger log buffer)
append_base+=${RIG_APPEND:+ $RIG_APPEND}
# 6.1 has no reserve_mem= (Documentation/kernels.md): on x86 the carveout
# is a memmap=SIZE$START range that ion.carveout_memmap names, 256 MiB
# below the top of the RAM q35 puts under 2 GiB (all of it up to 2.75 GiB).
if [ "${KSERIES:-}" = 6.1 ] && [ "$ARCH" != arm64 ]; then
	mem_mib=$(numfmt --from=iec "$mem")
	mem_mib=$((mem_mib >> 20))
	[ "$mem_mib" -le 2816 ] || mem_mib=2048
	dollar='$'
	co=$(printf '64M@%#x' $(((mem_mib - 256) << 20)))
	append_base=${append_base/reserve_mem=64M:2M:ion_carveout/memmap=${co/@/$dollar} ion.carveout_memmap=$co}
fi
[ "$ARCH" != arm64 ] || append_base=${append_base/ttyS0,115200/ttyAMA0}

# boot <mode> <iommu 0|1|swiotlb|highmem> <tag>: one guest; logs in
# $BUILD/guest-<tag>.*.  swiotlb: no IOMMU, every streaming DMA mapping
# bounced (swiotlb=force), edu with a mask that reaches all of RAM.
# highmem: no IOMMU, RIG_HIGH_MEM of memory.
boot() {
	local gmode=$1 iommu=$2 tag=$3 initrd append args=() m=$mem
	initrd=$BUILD/guest/initramfs-$tag.cpio.gz
	"$top/scripts/mkinitramfs.sh" "$gmode" "$initrd"
	append=$append_base
	[ "$iommu" != highmem ] || m=${RIG_HIGH_MEM:-6G}
	args=(-accel tcg -cpu "$cpu" -M "$machine" -m "$m" -smp "${RIG_SMP:-2}" -no-reboot
	      -display none -vga none -nodefaults
	      -kernel "$kernel" -initrd "$initrd")
	if [ "$iommu" = 1 ] && [ "$ARCH" = arm64 ]; then
		args[5]=virt,iommu=smmuv3
		append+=" iommu.passthrough=0"
	elif [ "$iommu" = 1 ]; then
		args+=(-device intel-iommu)
		append+=" intel_iommu=on iommu=nopt intremap=off"
	elif [ "$iommu" = swiotlb ]; then
		# 7.x keeps swiotlb's high-water mark only when asked; a
		# second swiotlb= keeps force (older kernels ignore it).
		append+=" swiotlb=force swiotlb=track_hiwater"
		# x86: edu's default 28 bits miss swiotlb's buffer at the top
		# of the low 4 GiB (busybox modprobe takes ion_test.* options
		# from the command line); edu gets 32 below.
		[ "$ARCH" = arm64 ] || append+=" ion_test.edu_dma_bits=32"
	fi
	# edu's DMA addresses are 28 bits by default: on virt RAM starts at
	# 1 GiB, so without the SMMU it needs a wider mask to reach any.
	if [ "${RIG_EDU:-1}" = 0 ]; then
		:
	elif [ "$ARCH" = arm64 ]; then
		args+=(-device edu,dma_mask=0xffffffffff)
	elif [ "$iommu" = swiotlb ]; then
		args+=(-device edu,dma_mask=0xffffffff)
	else
		args+=(-device edu)
	fi
	args+=(-append "$append")
	# shellcheck disable=SC2206
	args+=(${QEMU_EXTRA:-})
	if [ "$gmode" = shell ]; then
		[ "$ARCH" != arm64 ] || exec "$qemu" "${args[@]}" -serial mon:stdio
		exec qemu-system-x86_64 "${args[@]}" -serial mon:stdio \
			-serial null
	fi
	local con=$BUILD/guest-$tag.console res=$BUILD/guest-$tag.results
	# The results port: the second UART on x86, a virtio console on arm64
	# (QEMU's virt machine has a single PL011 for the normal world).
	local res_args=(-serial "file:$res")
	[ "$ARCH" != arm64 ] || res_args=(-chardev "file,id=rigres,path=$res"
		-device virtio-serial-pci -device virtconsole,chardev=rigres)
	rm -f "$con" "$res"
	if [ "$gmode" = demo ]; then
		# The demo narrates on the console: show it as it happens.
		: > "$con"
		tail -f "$con" --pid=$$ &
	fi
	local rc=0 try
	for try in 1 2; do
		rc=0
		timeout --foreground -k 10 "$timeout_s" "$qemu" "${args[@]}" \
			-serial "file:$con" "${res_args[@]}" || rc=$?
		# A kernel that crashed before the rig's init said it was up
		# ran none of our code (init loads ion.ko later): seen once
		# under TCG, an int3 oops in the distribution kernel's own
		# early boot.  Keep that console and boot once more.
		[ "$try" = 1 ] && [ "$gmode" != demo ] &&
			! grep -q '^rig: guest up' "$con" &&
			grep -qE 'Oops|BUG:|Kernel panic' "$con" || break
		mv "$con" "$con.crashed"
		echo "# guest $tag: the kernel crashed before the rig started" \
			"(console kept in $con.crashed); booting again" >&2
	done
	[ "$gmode" = demo ] && sleep 0.5 && kill %1 2>/dev/null
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "# guest $tag: killed after ${timeout_s}s" >> "$con"
	fi
	return 0
}

# report <tag> <prefix>: TAP for one boot; adds to the totals.
passed=0 failed=0 skipped=0 next=1
report() {
	local tag=$1 prefix=$2 counts
	counts=$(mktemp)
	awk -v prefix="$prefix" -v start=$next -v counts="$counts" \
		-v kver="$KVER" -v splats_file="$top/scripts/splats.txt" \
		-f "$top/scripts/rig-report.awk" "$BUILD/guest-$tag.results"
	read -r p f s nx < "$counts"
	rm -f "$counts"
	passed=$((passed + p)) failed=$((failed + f))
	skipped=$((skipped + s)) next=$nx
	if ! grep -q '^@@RIG DONE' "$BUILD/guest-$tag.results"; then
		echo "# last lines of the $tag guest console:"
		tail -n 40 "$BUILD/guest-$tag.console" | sed 's/^/#   /'
	fi
	{
		echo "===== guest $tag: console ====="
		cat "$BUILD/guest-$tag.console"
		echo "===== guest $tag: results and kernel log ====="
		cat "$BUILD/guest-$tag.results"
	} >> "$BUILD/guest.log"
}

# again <pattern> <iommu 1|swiotlb|highmem> <tag>: after the main boot of 'check',
# one more guest for the tests matching <pattern> (and TESTS), if any;
# their results are reported as <tag>/<test>.
again() {
	local pattern=$1 iommu=$2 tag=$3

	[ -n "$pattern" ] && [ "${RIG_IOMMU:-0}" = 0 ] &&
		ls "$BUILD/guest/tests" 2>/dev/null | grep -E -- "$pattern" |
		grep -qE -- "${TESTS:-.}" || return 0
	TESTS_ALSO="$pattern" boot check "$iommu" "$tag"
	report "$tag" "$tag/"
}

check() {
	local gmode=$1
	: > "$BUILD/guest.log"
	echo "TAP version 13"
	boot "$gmode" "${RIG_IOMMU:-0}" main
	report main ""
	if [ "$gmode" = check ]; then
		again "$iommu_tests" 1 iommu
		again "$swiotlb_tests" swiotlb swiotlb
		again "$highmem_tests" highmem highmem
	fi
	echo "1..$((next - 1))"
	[ "$skipped" = 0 ] || echo "# $skipped of the passed tests were skipped (reasons above)"
	echo "# full guest log: $BUILD/guest.log"
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
}

mkdir -p "$BUILD/guest"
# One guest at a time per build directory: boots share the initramfs
# staging and log files (and the two cores).
if [ "$mode" != shell ] && [ -z "${RIG_LOCKED:-}" ]; then
	exec 9> "$BUILD/.guest.lock"
	if ! flock -n 9; then
		echo "# waiting for another guest run in $BUILD to finish" >&2
		flock 9
	fi
	export RIG_LOCKED=1
fi
case $mode in
check | rig | soak) check "$mode" ;;
demo)
	boot demo "${RIG_IOMMU:-0}" demo
	cp "$BUILD/guest-demo.console" "$BUILD/guest.log"
	# demo.sh's last step says whether every check held; the kernel
	# log must be clean too (scripts/splats.txt, as make check's).
	grep -q 'Done: every step passed its checks' "$BUILD/guest.log" || {
		echo "demo: a step failed or the guest did not finish" \
			"(log: $BUILD/guest.log)" >&2
		exit 1
	}
	if "$top/scripts/splats.sh" "$BUILD/guest.log"; then
		echo "demo: the kernel logged the problems above" \
			"(log: $BUILD/guest.log)" >&2
		exit 1
	fi
	;;
shell) boot shell "${RIG_IOMMU:-0}" shell ;;
bench) boot bench "${RIG_IOMMU:-0}" bench ;;
*) echo "unknown mode $mode" >&2; exit 2 ;;
esac
