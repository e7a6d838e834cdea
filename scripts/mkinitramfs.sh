#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Build the guest's initramfs: busybox, the ion modules, the Debian modules
# listed in scripts/guest-modules.txt (decompressed, with their
# dependencies), the test programs and the init script.
#
# Usage: scripts/mkinitramfs.sh <mode> <output.cpio.gz>
#   mode: check | demo | shell | rig | bench | soak
# Environment: KVER, BUILD, TESTS and TESTS_ALSO (grep -E patterns a test's
# name must both match), MODDIR (the kernel's modules, default
# /lib/modules/$KVER), ION_KO_DIR (where kernel/ion.ko and tests/kmod/*.ko
# are, default the source tree), BUSYBOX (the busybox binary to install,
# default the host's), RIG_RESULTS (the guest's results port, default
# /dev/ttyS1), RIG_ENV (extra VAR=value lines for the
# guest's /etc/rig.conf, exported to the tests).
set -euo pipefail

mode=$1
out=$2
top=$(cd "$(dirname "$0")/.." && pwd)
: "${KVER:?KVER not set}"
: "${BUILD:=$top/build}"
moddir=${MODDIR:-/lib/modules/$KVER}
kodir=${ION_KO_DIR:-$top}	# holds kernel/ion.ko and tests/kmod/*.ko
root=$BUILD/guest/root-$mode

rm -rf "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,root}
mkdir -p "$root/tests" "$root/rig" "$root/demo"

install -m 0755 "${BUSYBOX:-$(command -v busybox)}" "$root/bin/busybox"
install -m 0755 "$top/scripts/guest/init" "$root/init"
install -m 0755 "$top/scripts/guest/runner" "$root/bin/rig-runner"
install -m 0644 "$top/scripts/guest/rig-lib.sh" "$root/etc/rig-lib.sh"
install -m 0644 "$top/scripts/guest/tool-lib.sh" "$root/etc/tool-lib.sh"
# The udev rules make install ships: node_access checks what they grant.
install -D -m 0644 "$top/udev/60-ion.rules" "$root/etc/udev/rules.d/60-ion.rules"

# --- modules ---------------------------------------------------------------
# Modules go under /lib/modules/$KVER (Debian's at their own paths,
# decompressed; ours under extra/) with a modules.dep for busybox modprobe.
gmod=$root/lib/modules/$KVER
mkdir -p "$gmod"
dep=$gmod/modules.dep
: > "$dep"
declare -A have=()

add_debian() {	# <module name>: the module and its dependencies
	local name=$1 line key d
	line=$(grep -E "/($name|${name//_/-}|${name//-/_})\.ko(\.xz)?:" \
		"$moddir/modules.dep" | head -n1) || true
	[ -n "$line" ] || { echo "mkinitramfs: no module $name" >&2; exit 1; }
	key=${line%%:*}
	[ -z "${have[$key]:-}" ] || return 0
	have[$key]=1
	for d in ${line#*:} "$key"; do
		[ -e "$gmod/${d%.xz}" ] && continue
		mkdir -p "$(dirname "$gmod/$d")"
		case $d in
		*.xz) xz -dc "$moddir/$d" > "$gmod/${d%.xz}" ;;
		*) cp "$moddir/$d" "$gmod/$d" ;;
		esac
	done
	echo "$line" | sed 's/\.ko\.xz/.ko/g' >> "$dep"
}

add_ours() {	# <file.ko>: depends only on ion modules or Debian ones
	local ko=$1 name d deps=""
	name=$(basename "$ko")
	mkdir -p "$gmod/extra"
	cp "$ko" "$gmod/extra/$name"
	for d in $(/sbin/modinfo -F depends "$ko" | tr ',' ' '); do
		if [ -e "$gmod/extra/$d.ko" ]; then
			deps+=" extra/$d.ko"
		else
			add_debian "$d"
			deps+=" $(grep -E "/($d|${d//_/-})\.ko:" "$dep" |
				head -n1 | sed 's/:/ /')"
		fi
	done
	echo "extra/$name:$deps" >> "$dep"
}

add_ours "$kodir/kernel/ion.ko"
for ko in "$kodir"/tests/kmod/*.ko; do
	[ -e "$ko" ] && add_ours "$ko"
done
# A kernel may lack one of these (6.1 amd64 has no virtio_iommu): the
# tests that need it say so and skip.  Built-in ones (the debug kernel's
# virtio_pci) need nothing.
while read -r m; do
	case $m in ''|'#'*) continue ;; esac
	if ! grep -qE "/($m|${m//_/-}|${m//-/_})\.ko(\.xz)?:" "$moddir/modules.dep"; then
		grep -qE "/($m|${m//_/-}|${m//-/_})\.ko\$" \
			"$moddir/modules.builtin" 2>/dev/null ||
			echo "mkinitramfs: kernel $KVER has no module $m" >&2
		continue
	fi
	add_debian "$m"
done < "$top/scripts/guest-modules.txt"

# --- programs --------------------------------------------------------------
if [ "$mode" != bench ] && [ "$mode" != soak ] && [ -d "$BUILD/guest/tests" ]; then
	for t in "$BUILD"/guest/tests/*; do
		[ -e "$t" ] || continue
		n=$(basename "$t")
		if [ -n "${TESTS:-}" ] && ! echo "$n" | grep -qE -- "$TESTS"; then
			continue
		fi
		if [ -n "${TESTS_ALSO:-}" ] &&
		   ! echo "$n" | grep -qE -- "$TESTS_ALSO"; then
			continue
		fi
		install -m 0755 "$t" "$root/tests/$n"
	done
fi
if [ "$mode" = soak ]; then
	install -m 0755 "$BUILD/guest/soak/soak" "$root/tests/soak"
fi
if [ "$mode" = rig ] && [ -d "$BUILD/guest/rig" ]; then
	cp -a "$BUILD"/guest/rig/. "$root/rig/"
fi
if [ -d "$BUILD/bin" ]; then
	cp -a "$BUILD"/bin/. "$root/usr/bin/"
fi
if [ -d "$top/scripts/demo" ]; then
	cp -a "$top"/scripts/demo/. "$root/demo/"
fi

cat > "$root/etc/rig.conf" <<CONF
RIG_MODE=$mode
RIG_KVER=$KVER
RIG_TEST_TIMEOUT=${RIG_TEST_TIMEOUT:-300}
RIG_RESULTS=${RIG_RESULTS:-/dev/ttyS1}
${RIG_ENV:-}
CONF

(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) |
	gzip -1 > "$out"
