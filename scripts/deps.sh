#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Install everything ion needs to build and to boot its test guest, on a
# Debian 12 machine, as root.  Idempotent: a second run installs nothing and
# does not touch the network.  Never loads anything into the running kernel.
#
# Usage: scripts/deps.sh                 install what is missing
#        scripts/deps.sh --kver          print the kernel version to build against
#        scripts/deps.sh --source-dir    print where the kernel scripts are
#        scripts/deps.sh --debug-kernel  install what the debug kernel build needs
#
# KVER=<version> selects an installed kernel instead of the newest one.
set -euo pipefail

ARCH=${ARCH:-x86_64}
SRC_DIR=${ION_SRC_DIR:-/var/cache/ion/linux-source}

PKGS=(build-essential make gcc gcc-multilib libc6-dev-i386 bc flex bison
      kmod cpio xz-utils busybox-static qemu-system-x86 sparse cppcheck
      python3 perl gnuplot-nox file)

log() { echo "deps: $*" >&2; }

# The newest version that has headers, an image and its modules installed.
find_kver() {
	local h v best=""
	if [ -n "${KVER:-}" ]; then
		if [ -e "/boot/vmlinuz-$KVER" ] && [ -d "/lib/modules/$KVER/kernel" ] &&
		   [ -d "/usr/src/linux-headers-$KVER" ]; then
			echo "$KVER"
			return 0
		fi
		log "KVER=$KVER is not installed (headers, /boot/vmlinuz and modules needed)"
		return 1
	fi
	for h in /usr/src/linux-headers-6.12*-amd64; do
		[ -d "$h" ] || continue
		v=${h#/usr/src/linux-headers-}
		[ -e "/boot/vmlinuz-$v" ] && [ -d "/lib/modules/$v/kernel" ] || continue
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v
		fi
	done
	[ -n "$best" ] && echo "$best"
}

missing_pkgs() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed' || echo "$p"
	done
}

updated=0
apt_install() {
	[ $# -gt 0 ] || return 0
	if [ "$(id -u)" != 0 ]; then
		log "need root to install: $*"
		exit 1
	fi
	if [ $updated = 0 ]; then
		log "apt-get update"
		apt-get update -qq
		updated=1
	fi
	log "installing: $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "$@" >/dev/null
}

# The kernel pair: headers + the image of exactly the same version.
install_kernel() {
	local meta v
	[ -n "$(find_kver)" ] && return 0
	[ -z "${KVER:-}" ] || { find_kver; return 1; }
	apt_install linux-headers-6.12-amd64
	meta=$(dpkg-query -W -f='${Depends}' linux-headers-6.12-amd64)
	v=$(echo "$meta" | grep -o 'linux-headers-[^ ,]*' | head -n1)
	v=${v#linux-headers-}
	apt_install "linux-image-$v-unsigned"
	[ -n "$(find_kver)" ] || { log "no usable kernel after install"; exit 1; }
}

# checkpatch.pl and kernel-doc come from Debian's kernel source package,
# unpacked once outside the repository.
install_source() {
	local tarball
	[ -x "$SRC_DIR/scripts/checkpatch.pl" ] && return 0
	apt_install $(missing_pkgs linux-source-6.12)
	tarball=$(ls /usr/src/linux-source-6.12*.tar.xz | sort -V | tail -n1)
	log "unpacking scripts from $tarball into $SRC_DIR"
	mkdir -p "$SRC_DIR"
	tar -xf "$tarball" -C "$SRC_DIR" --strip-components=1 \
		--wildcards '*/scripts/*' '*/.clang-format' \
		'*/Documentation/dev-tools/checkpatch.rst'
}

case "${1:-}" in
--debug-kernel)
	# What building the debug guest kernel needs on top of the rest.
	apt_install $(missing_pkgs libelf-dev libssl-dev bc linux-source-6.12)
	exit 0
	;;
--kver)
	find_kver || { log "no kernel installed; run scripts/deps.sh"; exit 1; }
	exit 0
	;;
--source-dir)
	echo "$SRC_DIR"
	exit 0
	;;
esac

# shellcheck disable=SC2046
apt_install $(missing_pkgs "${PKGS[@]}")
install_kernel
[ "${ION_NO_SOURCE:-0}" = 1 ] || install_source
log "ready: kernel $(find_kver)"
