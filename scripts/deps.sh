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
#        scripts/deps.sh --deb           install what make deb, its lintian
#                                        run and make check-deb need
#        scripts/deps.sh --kdir          print the kernel build directory
#        scripts/deps.sh --kroot         print the root of the guest kernel's
#                                        files (boot/, lib/modules/)
#        scripts/deps.sh --kbuild-root   print the build root the module is
#                                        built in (empty: built on the host)
#        ARCH=arm64 scripts/deps.sh --busybox | --cross-bin | --cross-lib
#                                        the arm64 busybox, the cross gcc's bin/,
#                                        the cross binutils' shared libraries
#
# KVER=<version> selects an installed kernel instead of the newest one.
# KSERIES selects the kernel series (x86_64): 6.12 (default), 6.12-rt (the
# PREEMPT_RT flavour), 6.1 (Debian 12's default kernel) or 7.3 (the
# newest in trixie-backports); each is installed from the package registry
# the first time it is asked for.
#
# KSERIES=7.3: its headers need trixie's gcc-14 and glibc, which a Debian
# 12 host does not have, so mmdebstrap makes a trixie build root in
# $ION_TRIXIE_ROOT (default /var/cache/ion/trixie-7.3) holding the
# toolchain and the headers; the image and its modules are unpacked into
# it with dpkg -x (nothing of trixie is installed on the host, and no
# trixie source is added to its apt).  The module is built inside that
# root (scripts/kbuild-root.sh) and the guest boots its image.
#
# ARCH=arm64: the same for an aarch64 guest.  Debian's arm64 packages of the
# version of the host's linux-headers-*-common (headers, unsigned image with
# its modules, busybox-static) are fetched with apt-get download into
# $ION_ARM64_CACHE (default /var/cache/ion/arm64) and unpacked there with
# dpkg -x: nothing is installed for arm64 on the host, only the cross
# compiler (unpacked there too, see A64_GCC_PKGS) and qemu-system-arm.  The headers use the host's -common and
# linux-kbuild packages (same version) through symlinks inside the cache.
set -euo pipefail

ARCH=${ARCH:-x86_64}
SRC_DIR=${ION_SRC_DIR:-/var/cache/ion/linux-source}

PKGS=(build-essential make gcc gcc-multilib libc6-dev-i386 bc flex bison
      kmod cpio xz-utils busybox-static qemu-system-x86 sparse cppcheck
      python3 perl gnuplot-nox file)

# make deb (dpkg-buildpackage with debhelper and dh-dkms), lintian on the
# packages, and make check-deb (mmdebstrap builds the Debian system it
# boots; mkfs.ext4 -d makes its disk without mounting anything).
DEB_PKGS=(build-essential dpkg-dev debhelper dh-dkms fakeroot lintian pkgconf mmdebstrap
	  e2fsprogs rsync)

log() { echo "deps: $*" >&2; }

# The series: its headers' version pattern and the meta package that
# depends on the newest headers of it.
KSERIES=${KSERIES:-6.12}
case $KSERIES in
6.12) K_GLOB='6.12*-amd64' K_META=linux-headers-6.12-amd64 K_RT=0
	K_ABI='6.12*' ;;
6.12-rt) K_GLOB='6.12*-rt-amd64' K_META=linux-headers-6.12-rt-amd64 K_RT=1
	K_ABI='6.12*' ;;
# Debian 12's default flavour: its linux-headers-amd64 is 6.1.
6.1) K_GLOB='6.1.0-*-amd64' K_META=linux-headers-amd64 K_RT=0
	K_ABI='6.1.0-*' ;;
# trixie-backports' newest, built in a trixie build root (below).
7.3) K_GLOB='7.3*-amd64' K_META=linux-headers-amd64 K_RT=0
	K_ABI='7.3*' K_ROOT=${ION_TRIXIE_ROOT:-/var/cache/ion/trixie-7.3} ;;
*) log "KSERIES=$KSERIES: known are 6.12, 6.12-rt, 6.1 and 7.3"; exit 1 ;;
esac
# The root the series' headers, image and modules are found under: the
# host's own, or a build root.
K_ROOT=${K_ROOT:-}

# The newest version that has headers, an image and its modules installed.
find_kver() {
	local h v best=""
	if [ -n "${KVER:-}" ]; then
		if [ -e "$K_ROOT/boot/vmlinuz-$KVER" ] &&
		   [ -d "$K_ROOT/lib/modules/$KVER/kernel" ] &&
		   [ -d "$K_ROOT/usr/src/linux-headers-$KVER" ]; then
			echo "$KVER"
			return 0
		fi
		log "KVER=$KVER is not installed (headers, /boot/vmlinuz and modules needed)"
		return 1
	fi
	for h in "$K_ROOT"/usr/src/linux-headers-$K_GLOB; do
		[ -d "$h" ] || continue
		v=${h#"$K_ROOT"/usr/src/linux-headers-}
		case $v in
		*-rt-amd64) [ "$K_RT" = 1 ] || continue ;;
		*) [ "$K_RT" = 0 ] || continue ;;
		esac
		[ -e "$K_ROOT/boot/vmlinuz-$v" ] &&
			[ -d "$K_ROOT/lib/modules/$v/kernel" ] || continue
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
	apt_install "$K_META"
	meta=$(dpkg-query -W -f='${Depends}' "$K_META")
	v=$(echo "$meta" | grep -o 'linux-headers-[^ ,]*' | head -n1)
	v=${v#linux-headers-}
	apt_install "linux-image-$v-unsigned"
	[ -n "$(find_kver)" ] || { log "no usable kernel after install"; exit 1; }
}

# --- a trixie build root (KSERIES=7.3) ---------------------------------------
# What building a module against trixie-backports' headers needs, from
# Debian's packages only; pahole for the modules' BTF.
TRIXIE_MIRROR=${ION_TRIXIE_MIRROR:-http://deb.debian.org/debian}
TRIXIE_PKGS=build-essential,gcc-14,make,bc,flex,bison,kmod,dwarves,xz-utils

# In mmdebstrap's customize hook, with the root in $1: the image of
# exactly the headers' version, unpacked (not installed: its maintainer
# scripts want a bootloader and an initramfs generator), and depmod run by
# the root's own kmod (it reads the image's compressed modules).  From 7.x
# linux-image-* is an empty package whose kernel, modules and base files
# are linux-binary-*, linux-modules-* and linux-base-* of the same
# version: those of its dependencies are unpacked too, and
# /boot/vmlinuz-* names the kernel's new place, /lib/modules/*/vmlinuz.
# shellcheck disable=SC2016
TRIXIE_HOOK='set -e
v=$(cd "$1/usr/src" && ls -d linux-headers-'"$K_GLOB"' | sort -V | tail -n1)
v=${v#linux-headers-}
p=$(chroot "$1" apt-cache depends "linux-image-$v" | sed -n "s/^ *Depends: \(linux-[a-z]*-$v\)$/\1/p")
chroot "$1" sh -c "cd /tmp && apt-get download -qq -o APT::Sandbox::User=root linux-image-$v $(echo $p)"
for d in "$1"/tmp/linux-*.deb; do dpkg -x "$d" "$1"; done
rm -f "$1"/tmp/*.deb
[ -e "$1/boot/vmlinuz-$v" ] || ln -s "../lib/modules/$v/vmlinuz" "$1/boot/vmlinuz-$v"
chroot "$1" depmod "$v"'

install_buildroot() {
	local tmp=$K_ROOT.tmp
	[ -n "$(find_kver)" ] && return 0
	[ -z "${KVER:-}" ] || { find_kver; return 1; }
	# shellcheck disable=SC2046
	apt_install $(missing_pkgs mmdebstrap)
	log "mmdebstrap: trixie build root with $K_META from trixie-backports in $K_ROOT"
	rm -rf "$tmp" "$K_ROOT"
	mmdebstrap --quiet --mode=root --variant=apt \
		--include="$TRIXIE_PKGS,$K_META/trixie-backports" \
		--customize-hook="$TRIXIE_HOOK" trixie "$tmp" \
		"deb $TRIXIE_MIRROR trixie main" \
		"deb $TRIXIE_MIRROR trixie-backports main"
	mv "$tmp" "$K_ROOT"
	[ -n "$(find_kver)" ] || { log "no usable kernel in $K_ROOT"; exit 1; }
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

# --- arm64 -----------------------------------------------------------------
A64_CACHE=${ION_ARM64_CACHE:-/var/cache/ion/arm64}
A64_PKGS=(build-essential make bc flex bison kmod cpio xz-utils rsync
	  qemu-system-arm python3 file)
# The cross compiler is unpacked into the cache, not installed: Debian 12's
# gcc-12-aarch64-linux-gnu conflicts with gcc-multilib, which the x86_64
# build needs for its -m32 tests.  (Its binutils and libc could be
# installed, but one self-contained tree is simpler.)
A64_GCC_PKGS=(gcc-12-aarch64-linux-gnu cpp-12-aarch64-linux-gnu
	      binutils-aarch64-linux-gnu libgcc-12-dev-arm64-cross
	      libgcc-s1-arm64-cross libc6-dev-arm64-cross libc6-arm64-cross
	      linux-libc-dev-arm64-cross)

# The newest arm64 kernel unpacked in the cache (KVER: that one).
a64_find_kver() {
	local d v best=""
	for d in "$A64_CACHE"/$K_ABI-arm64/.ready; do
		[ -e "$d" ] || continue
		v=$(basename "$(dirname "$d")")
		[ -z "${KVER:-}" ] || [ "$v" = "$KVER" ] || continue
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v
		fi
	done
	[ -n "$best" ] && echo "$best"
}

# The ABI name (e.g. 6.12.117+deb12) of the host's installed -common.
a64_host_abi() {
	dpkg-query -W -f='${Package} ${Status}\n' "linux-headers-$K_ABI-common" \
		2>/dev/null | awk '/install ok installed/ { print $1 }' |
		sed 's/^linux-headers-//; s/-common$//' | sort -V | tail -n1
}

a64_fetch() {	# <dir> <package:arm64>...: apt-get download into <dir>
	local dir=$1
	shift
	mkdir -p "$dir"
	if [ $updated = 0 ]; then
		log "apt-get update"
		apt-get update -qq
		updated=1
	fi
	log "downloading: $*"
	(cd "$dir" && apt-get download -qq -o APT::Sandbox::User=root "$@")
}

install_arm64() {
	local abi kv kb root debs d
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		log "dpkg --add-architecture arm64"
		dpkg --add-architecture arm64
		updated=0
	fi
	# shellcheck disable=SC2046
	apt_install $(missing_pkgs "${A64_PKGS[@]}")
	if [ ! -e "$A64_CACHE/gcc/.ready" ]; then
		a64_fetch "$A64_CACHE/debs" "${A64_GCC_PKGS[@]}"
		rm -rf "$A64_CACHE/gcc"
		for d in "${A64_GCC_PKGS[@]}"; do
			dpkg -x "$(ls "$A64_CACHE/debs/${d}_"*.deb | sort -V |
				tail -n1)" "$A64_CACHE/gcc"
		done
		# What gcc-aarch64-linux-gnu would link: the unversioned names.
		ln -sfn aarch64-linux-gnu-gcc-12 "$A64_CACHE/gcc/usr/bin/aarch64-linux-gnu-gcc"
		ln -sfn aarch64-linux-gnu-cpp-12 "$A64_CACHE/gcc/usr/bin/aarch64-linux-gnu-cpp"
		touch "$A64_CACHE/gcc/.ready"
	fi
	if [ ! -x "$A64_CACHE/busybox/bin/busybox" ]; then
		a64_fetch "$A64_CACHE/debs" busybox-static:arm64
		rm -rf "$A64_CACHE/busybox"
		dpkg -x "$(ls "$A64_CACHE"/debs/busybox-static_*_arm64.deb |
			sort -V | tail -n1)" "$A64_CACHE/busybox"
	fi
	[ -n "$(a64_find_kver)" ] && return 0
	# The headers need the -common (and linux-kbuild) of the same version:
	# the host's.  Without one, install the host's headers first.
	abi=$(a64_host_abi)
	if [ -z "$abi" ]; then
		apt_install "$K_META"
		abi=$(a64_host_abi)
	fi
	[ -n "$abi" ] || { log "no linux-headers-$K_ABI-common on the host"; exit 1; }
	# The kbuild package the host's headers of that version use
	# (linux-kbuild-6.12.118+deb12, but linux-kbuild-6.1 for 6.1.0-*).
	kb=$(dpkg-query -W -f='${Depends}' "linux-headers-$abi-amd64" \
		2>/dev/null | grep -o 'linux-kbuild-[^ ,]*' | head -n1)
	# shellcheck disable=SC2046
	apt_install $(missing_pkgs "${kb:-linux-kbuild-$abi}")
	[ -z "${KVER:-}" ] || [ "$KVER" = "$abi-arm64" ] ||
		{ log "KVER=$KVER: the host's headers are $abi"; exit 1; }
	kv=$abi-arm64
	root=$A64_CACHE/$kv
	debs=$A64_CACHE/debs
	a64_fetch "$debs" "linux-headers-$kv:arm64" "linux-image-$kv-unsigned:arm64"
	rm -rf "$root"
	for d in "$debs/linux-headers-${kv}_"*_arm64.deb \
		 "$debs/linux-image-$kv-unsigned_"*_arm64.deb; do
		log "unpacking $(basename "$d")"
		dpkg -x "$d" "$root"
	done
	# usr/src/linux-headers-$kv/scripts -> ../../lib/linux-kbuild-*: the
	# host's (multi-arch foreign) kbuild tools, built for the build host.
	d=$(readlink "$root/usr/src/linux-headers-$kv/scripts")
	d=${d#../../lib/}
	d=${d%/scripts}
	[ -d "/usr/lib/$d" ] || { log "no /usr/lib/$d on the host"; exit 1; }
	mkdir -p "$root/usr/lib"
	ln -sfn "/usr/lib/$d" "$root/usr/lib/$d"
	log "depmod for $kv"
	depmod -b "$root" "$kv"
	touch "$root/.ready"
}

if [ "$ARCH" = arm64 ]; then
	if [ "$K_RT" = 1 ]; then
		log "ARCH=arm64: Debian has no PREEMPT_RT arm64 kernel here"
		exit 1
	fi
	if [ -n "$K_ROOT" ]; then
		log "ARCH=arm64 KSERIES=$KSERIES: not supported yet (x86_64 only)"
		exit 1
	fi
	case "${1:-}" in
	--kver)
		a64_find_kver || { log "no arm64 kernel; run ARCH=arm64 scripts/deps.sh"; exit 1; }
		;;
	--kroot)
		kv=$(a64_find_kver) && echo "$A64_CACHE/$kv"
		;;
	--kdir)
		kv=$(a64_find_kver) && echo "$A64_CACHE/$kv/usr/src/linux-headers-$kv"
		;;
	--busybox)
		echo "$A64_CACHE/busybox/bin/busybox"
		;;
	--cross-bin)
		echo "$A64_CACHE/gcc/usr/bin"
		;;
	--cross-lib)
		# The cross binutils' own shared libraries (libbfd, libopcodes),
		# which the dynamic linker does not look for in the cache.
		echo "$A64_CACHE/gcc/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"
		;;
	--source-dir)
		echo "$SRC_DIR"
		;;
	'')
		install_arm64
		log "ready: arm64 kernel $(a64_find_kver)"
		;;
	*) log "ARCH=arm64: $1 is x86_64 only"; exit 2 ;;
	esac
	exit $?
fi

case "${1:-}" in
--kdir)
	# A build root's headers at their path inside it.
	if [ -n "$K_ROOT" ]; then
		echo "/usr/src/linux-headers-$(find_kver)"
	else
		echo "/lib/modules/$(find_kver)/build"
	fi
	exit 0
	;;
--kroot)
	echo "${K_ROOT:-/}"
	exit 0
	;;
--kbuild-root)
	echo "$K_ROOT"
	exit 0
	;;
--debug-kernel)
	# What building the debug guest kernel needs on top of the rest.
	apt_install $(missing_pkgs libelf-dev libssl-dev bc linux-source-6.12)
	exit 0
	;;
--deb)
	# shellcheck disable=SC2046
	apt_install $(missing_pkgs "${DEB_PKGS[@]}")
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
if [ -n "$K_ROOT" ]; then
	install_buildroot
else
	install_kernel
fi
[ "${ION_NO_SOURCE:-0}" = 1 ] || install_source
log "ready: kernel $(find_kver)"
