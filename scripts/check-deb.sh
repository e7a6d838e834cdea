#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# make check-deb: do what a Debian user does with make deb's packages, in a
# real Debian 12 system booted in QEMU, and check what they get.
#
#  1. A minimal Debian 12 system (mmdebstrap from the apt mirrors the host
#     uses): systemd, udev, kmod, dkms, gcc, pkgconf and the kernel image
#     and headers of the version the project builds against
#     (scripts/deps.sh --kver).  Cached as a tarball in $ION_DEB_CACHE
#     (default /var/cache/ion/check-deb), one per kernel version and
#     package list; a second run only unpacks it.
#  2. Into a fresh copy of it, in a chroot (its own mount namespace):
#     apt install ./ion-dkms_*.deb ./ion-tools_*.deb ./libion1_*.deb
#     ./libion-dev_*.deb, which has DKMS build ion.ko there for that kernel.
#     Nothing is loaded into the host's kernel.  Then what README.Debian
#     tells the user to do: /etc/modules-load.d/ion.conf, an option
#     uncommented in /etc/modprobe.d/ion.conf, a user in the video group
#     (alice) and one not in it (bob), reserve_mem= on the command line.
#  3. That system as an ext4 image (mkfs.ext4 -d, nothing mounted) on a
#     virtio disk, booted with its own kernel and initramfs under QEMU
#     (TCG); systemd runs tests/deb/check.sh as a service, which reports on
#     the second serial port in the rig's format (scripts/rig-report.awk:
#     TAP, and any BUG:/WARNING:/Oops/... in the kernel log fails).
#
# Prints TAP and "N passed, N failed"; the chroot's apt and DKMS output,
# the guest's console and its results are in $BUILD/check-deb/guest.log.
#
# Environment: BUILD, ION_DEB_CACHE, KVER, RIG_TIMEOUT (one boot, default
# 1500 s), RIG_MEM (default 2G).
set -euo pipefail

# Everything is in functions, read before any of it runs: editing this file
# while a (long) run is going does not change that run.

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
KVER=${KVER:-$("$top/scripts/deps.sh" --kver)}
cache=${ION_DEB_CACHE:-/var/cache/ion/check-deb}
debs=$("$top/scripts/make-deb.sh" --print-dir)
work=$BUILD/check-deb
root=$work/root
timeout_s=${RIG_TIMEOUT:-1500}

# What the base system holds besides Debian's minbase.  The kernel is the
# unsigned image, as the rig boots (same kernel, same modules).
BASE_PKGS=(systemd-sysv udev kmod procps dkms gcc make libc6-dev pkgconf
	   initramfs-tools "linux-image-$KVER-unsigned" "linux-headers-$KVER")
# Bump when the recipe below changes in a way the list does not show.
BASE_RECIPE=1


log() { echo "# check-deb: $*" >&2; }
die() { echo "check-deb: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, chroot, file ownership)"
ls "$debs"/ion-dkms_*_all.deb > /dev/null 2>&1 || die "no packages in $debs: make deb"

# The host's Debian mirrors (deb822 or one-line), for mmdebstrap.
mirrors() {
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		echo /etc/apt/sources.list.d/debian.sources
	elif grep -qs '^deb ' /etc/apt/sources.list; then
		grep '^deb ' /etc/apt/sources.list | grep -v 'deb-src'
	else
		echo "deb http://deb.debian.org/debian bookworm main"
		echo "deb http://deb.debian.org/debian bookworm-updates main"
		echo "deb http://deb.debian.org/debian-security bookworm-security main"
	fi
}

# The cached base system for this kernel and package list.
base_tar() {
	local key
	key=$(printf '%s\n' "$BASE_RECIPE" "${BASE_PKGS[@]}" | sha256sum | cut -c1-12)
	echo "$cache/base-$KVER-$key.tar"
}

build_base() {
	local tar=$1 tmp=$1.tmp m=() line
	mkdir -p "$cache"
	while read -r line; do m+=("$line"); done < <(mirrors)
	log "building the base Debian 12 system with mmdebstrap (cached in $tar)"
	rm -f "$tmp"
	mmdebstrap --variant=minbase --format=tar \
		--include="$(IFS=,; echo "${BASE_PKGS[*]}")" \
		--aptopt='Acquire::Retries "3"' \
		--customize-hook='echo ion-deb > "$1/etc/hostname"' \
		bookworm "$tmp" "${m[@]}" >&2
	mv "$tmp" "$tar"
}

# in_root <command>: run a shell command in the chroot, in a mount
# namespace of its own (proc, sys, dev go away with it).
in_root() {
	unshare --mount --propagation private -- /bin/sh -c '
		set -e
		mount -t proc proc "$1/proc"
		mount -t sysfs sysfs "$1/sys"
		mount --rbind /dev "$1/dev"
		exec chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 /bin/sh -ec "$2"' \
		sh "$root" "$1"
}

main() {
	t0=$(date +%s)
	mkdir -p "$work"
	tar=$(base_tar)
	built_base=
	[ -f "$tar" ] || { build_base "$tar"; built_base=1; }
	t1=$(date +%s)

	# --- the user's steps, in a fresh copy of the base -------------------------
	log "unpacking $(basename "$tar")"
	rm -rf "$root"
	mkdir -p "$root"
	tar -C "$root" --numeric-owner -xpf "$tar"
	mkdir -p "$root/root/debs"
	cp "$debs"/ion-dkms_*_all.deb "$debs"/ion-tools_*_amd64.deb \
		"$debs"/libion1_*_amd64.deb "$debs"/libion-dev_*_amd64.deb "$root/root/debs/"
	# No daemons started in the chroot.
	printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
	chmod 0755 "$root/usr/sbin/policy-rc.d"

	host_tap=$work/host.tap host_log=$work/host.log
	: > "$host_tap"
	: > "$host_log"
	host_case() {	# <description> <command...>: one TAP case about the image
		local out rc=0
		out=$("${@:2}" 2>&1) || rc=$?
		printf '## %s\n%s\n' "$1" "$out" >> "$host_log"
		if [ $rc = 0 ]; then
			echo "ok - $1" >> "$host_tap"
		else
			echo "not ok - $1" >> "$host_tap"
			echo "$out" | tail -n 40 | sed 's/^/#   /' >> "$host_tap"
		fi
		return $rc
	}

	log "apt install ./ion-dkms ./ion-tools ./libion1 ./libion-dev in the Debian system (DKMS builds ion.ko)"
	host_case "apt installs ion-dkms, ion-tools, libion1, libion-dev into Debian 12" \
		in_root 'cd /root/debs && apt-get install -y --no-install-recommends ./ion-dkms_*.deb ./ion-tools_*.deb ./libion1_*.deb ./libion-dev_*.deb' \
		|| true
	host_case "DKMS built and installed ion.ko for $KVER" \
		in_root "dkms status ion; dkms status ion | grep -F ', $KVER, x86_64: installed' &&
			 ls /lib/modules/$KVER/updates/dkms/ion.ko*" || true
	# What README.Debian tells the user to do.
	in_root '
		echo ion > /etc/modules-load.d/ion.conf
		sed -i -e "s/^#options ion pool_max_mb=128\$/options ion pool_max_mb=64/" \
		       -e "s/^#options ion parallel_min_kb=2048\$/options ion parallel_min_kb=4096/" \
		       /etc/modprobe.d/ion.conf
		grep -qx "options ion pool_max_mb=64" /etc/modprobe.d/ion.conf
		grep -qx "options ion parallel_min_kb=4096" /etc/modprobe.d/ion.conf
		useradd -m -s /bin/sh -G video alice
		useradd -m -s /bin/sh bob
		echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" > /etc/fstab
		rm -f /usr/sbin/policy-rc.d
		rm -rf /root/debs
	'
	install -D -m 0755 "$top/tests/deb/check.sh" "$root/usr/local/sbin/ion-deb-check"
	install -D -m 0644 "$top/tests/deb/prog.c" "$root/usr/local/share/ion-deb-check/prog.c"
	install -D -m 0644 "$top/tests/deb/ion-deb-check.service" \
		"$root/etc/systemd/system/ion-deb-check.service"
	mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
	ln -sf ../ion-deb-check.service \
		"$root/etc/systemd/system/multi-user.target.wants/ion-deb-check.service"
	echo "KVER=$KVER" > "$root/usr/local/share/ion-deb-check/conf"

	# --- the disk and the boot -----------------------------------------------
	img=$work/disk.img
	kernel=$work/vmlinuz initrd=$work/initrd.img
	cp "$root/boot/vmlinuz-$KVER" "$kernel"
	cp "$root/boot/initrd.img-$KVER" "$initrd"
	size_mb=$(( $(du -sm "$root" | cut -f1) + 1024 ))
	rm -f "$img"
	log "ext4 image of ${size_mb} MiB"
	mkfs.ext4 -q -F -L ion-deb -d "$root" "$img" "${size_mb}M" > /dev/null
	rm -rf "$root"
	t2=$(date +%s)

	con=$work/console res=$work/results
	rm -f "$con" "$res"
	log "booting the Debian system (TCG; a few minutes)"
	rc=0
	timeout --foreground -k 10 "$timeout_s" qemu-system-x86_64 -accel tcg -cpu max \
		-M q35 -m "${RIG_MEM:-2G}" -smp 2 -no-reboot -display none -vga none \
		-nodefaults -kernel "$kernel" -initrd "$initrd" \
		-drive "file=$img,if=virtio,format=raw" \
		-append "root=/dev/vda rw console=ttyS0,115200 reserve_mem=64M:2M:ion_carveout panic=-1" \
		-serial "file:$con" -serial "file:$res" || rc=$?
	[ $rc != 124 ] && [ $rc != 137 ] || echo "# guest killed after ${timeout_s}s" >> "$con"
	t3=$(date +%s)

	# --- report -----------------------------------------------------------------
	echo "TAP version 13"
	passed=0 failed=0 n=0
	while IFS= read -r line; do
		case $line in
		"ok - "*) n=$((n + 1)) passed=$((passed + 1)); echo "ok $n - deb: ${line#ok - }" ;;
		"not ok - "*) n=$((n + 1)) failed=$((failed + 1)); echo "not ok $n - deb: ${line#not ok - }" ;;
		*) echo "$line" ;;
		esac
	done < "$host_tap"
	counts=$(mktemp)
	touch "$res"
	awk -v prefix="" -v start=$((n + 1)) -v counts="$counts" \
		-v splats_file="$top/scripts/splats.txt" \
		-f "$top/scripts/rig-report.awk" "$res"
	read -r p f _ nx < "$counts"
	rm -f "$counts"
	passed=$((passed + p)) failed=$((failed + f)) n=$((nx - 1))
	# The console too, to the power-off: what the kernel said after the
	# last kernel-log block (the purge) or while no check ran.
	n=$((n + 1))
	splats=$("$top/scripts/splats.sh" "$con" || true)
	if [ -z "$splats" ] && grep -q 'reboot: Power down' "$con"; then
		passed=$((passed + 1))
		echo "ok $n - guest console is clean to the power-off"
	else
		failed=$((failed + 1))
		echo "not ok $n - guest console is clean to the power-off"
		echo "${splats:-no power-off}" | head -n 40 | sed 's/^/#   /'
	fi
	if ! grep -q '^@@RIG DONE' "$res"; then
		echo "# last lines of the guest console:"
		tail -n 40 "$con" | sed 's/^/#   /'
	fi
	{
		echo "===== check-deb: apt install in the chroot ====="
		cat "$host_log"
		echo "===== check-deb: console ====="
		cat "$con"
		echo "===== check-deb: results and kernel log ====="
		cat "$res"
	} > "$work/guest.log"
	echo "1..$n"
	echo "# times: base system $((t1 - t0)) s$([ -n "$built_base" ] || echo " (cached)"), install and image $((t2 - t1)) s, boot and checks $((t3 - t2)) s"
	echo "# full log (apt install, console, results): $work/guest.log"
	echo "$passed passed, $failed failed"
	# The disk (over 1 GiB) is kept only to look into a failed run.
	[ "$failed" = 0 ] && [ "$passed" -gt 0 ] || return 1
	rm -f "$img"
}

main "$@"; exit $?
