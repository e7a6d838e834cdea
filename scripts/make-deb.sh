#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# make deb: build ion's Debian packages with Debian's tools
# (dpkg-buildpackage, debhelper, dh-dkms) from debian/, in a copy of the
# tree under $BUILD/deb/ (dpkg-buildpackage writes its results beside the
# source directory, which must not be the checkout's parent).
#
# Output: $BUILD/deb/ion_<version>.dsc, .tar.xz, _amd64.changes and the
# packages ion-dkms, libion1, libion-dev, ion-tools (and their -dbgsym).
# Before building it checks that the packages tell the truth about the
# project: debian/changelog's version is the Makefile's LIBION_VERSION, and
# debian/ion-dkms.ion.modprobe lists every module parameter of kernel/.
#
# Usage: scripts/make-deb.sh [--print-dir]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
out=$BUILD/deb
if [ "${1:-}" = --print-dir ]; then
	echo "$out"
	exit 0
fi
cd "$top"

die() { echo "make-deb: $*" >&2; exit 1; }

version=$(dpkg-parsechangelog -l debian/changelog -S Version)
mkver=$(sed -n 's/^LIBION_VERSION := //p' Makefile)
[ "$version" = "$mkver" ] ||
	die "debian/changelog says $version, the Makefile's LIBION_VERSION $mkver"

# Every module_param (_array, _cb) of ion.ko has its commented default.
missing=""
for p in $(grep -rhoE 'module_param(_array|_cb)?\([a-z_0-9]+' kernel |
	   sed 's/.*(//' | sort -u); do
	grep -qE "^#options ion $p=" debian/ion-dkms.ion.modprobe ||
		missing+=" $p"
done
[ -z "$missing" ] ||
	die "debian/ion-dkms.ion.modprobe lacks the parameter(s):$missing"

# The tree as git sees it (tracked and new files, no build products).
src=$out/ion-$version
rm -rf "$out"
mkdir -p "$src"
git ls-files -z -co --exclude-standard |
	tar --null -T - -cf - | tar -xf - -C "$src"

cd "$src"
echo "make-deb: dpkg-buildpackage in $src"
dpkg-buildpackage -us -uc --build=full -j"$(nproc)"
cd "$out"
echo "make-deb: built in $out:"
ls -1 ./*.deb ./*.dsc ./*.changes
