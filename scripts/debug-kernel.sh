#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Build (once) a debug guest kernel from Debian's linux-source-6.12:
# x86_64 defconfig plus KASAN, lockdep, kmemleak, DMA-API debugging, CMA
# and the drivers the tests use.  The result is cached outside the
# repository, keyed by source version and config fragment:
#   $ION_DEBUG_CACHE/<key>/bzImage, modules/lib/modules/<kver>/, build/
#
# Usage: scripts/debug-kernel.sh [--print-dir|--cached]
#   --print-dir  print the cache directory for the current key
#   --cached     exit 0 if a finished build is cached, 1 otherwise
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${ION_DEBUG_CACHE:-/var/cache/ion/debug-kernel}
tarball=$(ls /usr/src/linux-source-6.12*.tar.xz 2>/dev/null | sort -V | tail -n1 || true)
frag=$top/scripts/debug-kernel.config

key() {
	local ver
	ver=$(basename "${tarball:-none}" .tar.xz)
	# The fragment's options and comments, not its licence line.
	echo "$ver-$(grep -v '^# SPDX-License-Identifier:' "$frag" |
		sha256sum | cut -c1-12)"
}

case "${1:-}" in
--print-dir) echo "$cache/$(key)"; exit 0 ;;
--cached) [ -n "$tarball" ] && [ -f "$cache/$(key)/done" ]; exit $? ;;
esac

"$top/scripts/deps.sh" --debug-kernel
tarball=$(ls /usr/src/linux-source-6.12*.tar.xz | sort -V | tail -n1)
dir=$cache/$(key)
if [ -f "$dir/done" ]; then
	echo "debug-kernel: cached in $dir"
	exit 0
fi
mkdir -p "$dir"
src=$dir/src
if [ ! -f "$src/Makefile" ]; then
	echo "debug-kernel: unpacking $tarball"
	mkdir -p "$src"
	tar -xf "$tarball" -C "$src" --strip-components=1
fi
build=$dir/build
mkdir -p "$build"
make -s -C "$src" O="$build" defconfig
"$src/scripts/kconfig/merge_config.sh" -m -O "$build" \
	"$build/.config" "$frag" > "$build/merge.log"
make -s -C "$src" O="$build" olddefconfig
# Every option of the fragment must have survived olddefconfig.
missing=0
while IFS= read -r line; do
	case $line in CONFIG_*=*) ;; *) continue ;; esac
	grep -qx -- "$line" "$build/.config" ||
		{ echo "debug-kernel: not set: $line"; missing=1; }
done < "$frag"
# ... and every option it leaves out must be out.
while read -r _ opt rest; do
	[ "$rest" = "is not set" ] || continue
	! grep -q "^$opt=" "$build/.config" ||
		{ echo "debug-kernel: still set: $opt"; missing=1; }
done < <(grep -E '^# CONFIG_[A-Z0-9_]+ is not set$' "$frag")
[ $missing = 0 ] || exit 1
echo "debug-kernel: building in $build (takes ~20 minutes on 2 cores)"
make -s -C "$src" O="$build" -j"$(nproc)" bzImage modules
rm -rf "$dir/modules"
make -s -C "$src" O="$build" INSTALL_MOD_PATH="$dir/modules" \
	INSTALL_MOD_STRIP=1 modules_install
cp "$build/arch/x86/boot/bzImage" "$dir/bzImage"
make -s -C "$src" O="$build" kernelrelease > "$dir/kernelrelease"
touch "$dir/done"
echo "debug-kernel: ready in $dir ($(cat "$dir/kernelrelease"))"
