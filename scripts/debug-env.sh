#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Sourced by scripts/check-debug.sh and scripts/soak.sh: debug_env builds
# (once) the debug guest kernel (scripts/debug-kernel.sh), builds ion.ko,
# the test modules and the Debian modules its config leaves out against
# it, and exports what scripts/guest-run.sh needs to boot it: KVER,
# KERNEL_IMAGE, MODDIR, ION_KO_DIR, QEMU_EXTRA.  Uses $top and $BUILD.

debug_env() {
	local dk=$top/scripts/debug-kernel.sh dir kver mods moddir omod m f ko deps d

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
		# built in (virtio_pci, virtio_console: defconfig has them =y)
		grep -qE "/($m|${m//_/-}|${m//-/_})\.ko\$" "$moddir/modules.builtin" &&
			continue
		f=$(extra_src "$m")
		[ -n "$f" ] || { echo "debug-env: the debug kernel has no $m" >&2; exit 1; }
		echo "debug-env: building $m, left out of the debug kernel's config"
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

	export KVER=$kver BUILD
	export KERNEL_IMAGE=$dir/bzImage
	export MODDIR=$omod
	export ION_KO_DIR=$mods
	# No 5-level paging: while identify_cpu() rebuilds the boot CPU's feature
	# bits, LA57 reads as clear, KASAN takes the 5-level direct map for wild
	# addresses, and an interrupt arriving then is a false "BUG: KASAN:
	# wild-memory-access" in handle_edge_irq (seen at 0.018 s, now and then,
	# under TCG with -cpu max).  QEMU uses the last -cpu.
	export QEMU_EXTRA="-cpu max,la57=off${QEMU_EXTRA:+ $QEMU_EXTRA}"
	# defconfig's 256 KiB log buffer wraps long before the tests that read
	# the boot log from /dev/kmsg (heap_dma_large: "cma: Reserved ...").
	export RIG_APPEND="log_buf_len=16M${RIG_APPEND:+ $RIG_APPEND}"
}
