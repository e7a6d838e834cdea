#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# ion's cheap checks (make lint): checkpatch --strict, kernel-doc, a W=1
# C=2 (sparse) module build, cppcheck on user space, SPDX lines against
# debian/copyright, lintian on the Debian
# packages (make deb).  Any finding fails.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
src=${ION_SRC_DIR:-$("$top/scripts/deps.sh" --source-dir)}
KVER=${KVER:-$("$top/scripts/deps.sh" --kver)}
kdir=/lib/modules/$KVER/build
fails=0

step() {	# <name> <command...>: run, show output on failure
	local out
	if out=$("${@:2}" 2>&1); then
		echo "lint: ok   $1"
	else
		echo "lint: FAIL $1"
		echo "$out" | sed 's/^/  /'
		fails=$((fails + 1))
	fi
}

mapfile -t ksrc < <(git ls-files -co --exclude-standard -- \
	'kernel/*.[ch]' 'tests/kmod/*.[ch]' 'include/linux/*.h' |
	grep -v '\.mod\.c$' | grep -v '_compat\.h$' | grep -v '/trace/' | sort)
# The compat headers (Documentation/kernels.md) are where version tests
# belong: checkpatch's advice against LINUX_VERSION_CODE, and its reading
# of "LINUX_VERSION_CODE < KERNEL_VERSION()" as a constant on the left,
# are off for them alone; so is its complaint about a macro argument the
# newer kernels' API no longer takes (__assign_str()'s source, 6.10).
mapfile -t kcompat < <(git ls-files -co --exclude-standard -- \
	'kernel/*_compat.h' 'tests/kmod/*_compat.h' | sort)
checkpatch() {
	"$src/scripts/checkpatch.pl" --strict --no-tree --quiet --terse \
		--show-types -f "$@"
}
# The uapi headers keep the historic ion_user_handle_t typedef (AOSP
# programs use it); that one check is off for them.
mapfile -t uapi < <(git ls-files -co --exclude-standard -- \
	'include/uapi/linux/*.h' | sort)
# The trace headers are TRACE_EVENT()'s language, laid out as the kernel's
# include/trace/events/ are: checkpatch's alignment checks misread it.
mapfile -t ktrace < <(git ls-files -co --exclude-standard -- \
	'kernel/include/trace/*.h' | sort)
step "checkpatch --strict (kernel sources)" checkpatch "${ksrc[@]}"
step "checkpatch --strict (compat headers)" \
	checkpatch --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON,MACRO_ARG_UNUSED \
	"${kcompat[@]}"
step "checkpatch --strict (trace headers)" \
	checkpatch --ignore PARENTHESIS_ALIGNMENT,OPEN_ENDED_LINE "${ktrace[@]}"
step "checkpatch --strict (uapi headers)" \
	checkpatch --ignore NEW_TYPEDEFS "${uapi[@]}"

kdoc() {
	local out
	out=$("$src/scripts/kernel-doc" -none -Wall "$@" 2>&1)
	[ -z "$out" ] || { echo "$out"; return 1; }
}
step "kernel-doc -Wall" kdoc "${ksrc[@]}" "${kcompat[@]}" "${uapi[@]}"

sparse_build() {
	local out
	out=$(make -s -C "$kdir" M="$top/kernel" W=1 C=2 modules 2>&1) ||
		{ echo "$out"; return 1; }
	if [ -f tests/kmod/Kbuild ]; then
		out+=$(make -s -C "$kdir" M="$top/tests/kmod" W=1 C=2 \
			KBUILD_EXTRA_SYMBOLS="$top/kernel/Module.symvers" \
			modules 2>&1) || { echo "$out"; return 1; }
	fi
	out=$(echo "$out" | grep -E 'warning|error' || true)
	[ -z "$out" ] || { echo "$out"; return 1; }
}
step "W=1 C=2 module build (sparse)" sparse_build

cppcheck_user() {	# <platform> <defines> <files...>
	local plat=$1 defs=$2
	shift 2
	[ $# -gt 0 ] || return 0
	# shellcheck disable=SC2086
	cppcheck -q --error-exitcode=1 --platform="$plat" \
		--enable=warning,portability,performance \
		--inline-suppr -Iinclude/uapi -Ilib -Itests/guest/lib \
		-D_GNU_SOURCE $defs "$@"
}
mapfile -t usrc < <(git ls-files -co --exclude-standard -- \
	':(glob)lib/*.c' ':(glob)tools/*.c' ':(glob)tools/*/*.c' \
	':(glob)tests/guest/*.c' \
	':(glob)tests/guest/lib/*.c' ':(glob)tests/guest/*/*.c' \
	':(glob)tests/aosp/*.c' ':(glob)tests/deb/*.c' |
	grep -v '^tests/guest/compat/')
mapfile -t u32src < <(git ls-files -co --exclude-standard -- \
	'tests/guest/compat/*.c')
step "cppcheck (user space)" cppcheck_user unix64 "-D__x86_64__" "${usrc[@]}"
step "cppcheck (32-bit compat tests)" cppcheck_user unix32 "-D__i386__" \
	"${u32src[@]}"

# libion's ion_map() takes a 64-bit off_t on every architecture: a 32-bit
# caller built without large-file support must not compile against
# <ion/ion.h> (it would pass a 4-byte offset and shift every argument
# after it), one built with it must.
lfs_header() {
	local src='#include <ion/ion.h>
int main(void) { return 0; }'
	printf '%s\n' "$src" | ${CC:-cc} -m32 -fsyntax-only -Iinclude/uapi -Ilib \
		-D_FILE_OFFSET_BITS=64 -x c - || return 1
	if printf '%s\n' "$src" | ${CC:-cc} -m32 -fsyntax-only -Iinclude/uapi \
		-Ilib -x c - 2>/dev/null; then
		echo "<ion/ion.h> compiled with a 32-bit off_t"
		return 1
	fi
}
step "libion header: 64-bit off_t on 32-bit builds" lfs_header

# Every SPDX line agrees with debian/copyright: a file's licence there is
# that of the last Files: stanza whose pattern matches it (DEP-5).
spdx_copyright() {
	local -a pats=() lics=()
	local line f id want lic i bad=0 files="" in_files=0
	local -
	set -f		# the Files: patterns are globs, not for the shell
	while IFS= read -r line; do
		case $line in
		"Files: "*) files=${line#Files: }; in_files=1 ;;
		" "*) [ $in_files = 1 ] && files+=" ${line# }" ;;
		"License: "*)
			for f in $files; do
				pats+=("$f"); lics+=("${line#License: }")
			done
			files="" in_files=0 ;;
		"") files="" in_files=0 ;;
		*) in_files=0 ;;	# Copyright: and its lines
		esac
	done < debian/copyright
	while IFS= read -r f; do
		id=$(head -n 3 "$f" | grep -o 'SPDX-License-Identifier: .*' |
		     head -n 1 | sed -e 's/^SPDX-License-Identifier: //' \
			-e 's/ *\*\/$//' -e 's/ *-->$//')
		[ -n "$id" ] || continue
		case $id in
		MIT) want=Expat ;;
		GPL-2.0-only) want=GPL-2.0-only ;;
		"GPL-2.0-only WITH Linux-syscall-note")
			want="GPL-2.0-only with Linux-syscall-note exception" ;;
		*) echo "$f: SPDX $id: no such licence in debian/copyright"
		   bad=1; continue ;;
		esac
		lic=""
		for i in "${!pats[@]}"; do
			# shellcheck disable=SC2053 # the pattern is a glob
			[[ $f == ${pats[$i]} ]] && lic=${lics[$i]}
		done
		if [ "$lic" != "$want" ]; then
			echo "$f: SPDX $id, debian/copyright says ${lic:-nothing}"
			bad=1
		fi
	done < <(git ls-files)
	return $bad
}
step "SPDX lines agree with debian/copyright" spdx_copyright

# The Debian packages (make deb), built afresh from the tree, and lintian
# on all of them and the source package: an error or a warning fails.
lintian_debs() {
	local dir
	scripts/deps.sh --deb || return 1
	scripts/make-deb.sh > "$BUILD_LOG" 2>&1 || { tail -n 30 "$BUILD_LOG"; return 1; }
	dir=$(scripts/make-deb.sh --print-dir)
	lintian --fail-on error,warning --pedantic --info \
		"$dir"/ion_*.changes 2>&1 | grep -v '^running with root privileges'
	return "${PIPESTATUS[0]}"
}
BUILD_LOG=$(mktemp)
step "lintian (make deb's packages)" lintian_debs
rm -f "$BUILD_LOG"

if [ $fails != 0 ]; then
	echo "lint: $fails check(s) failed"
	exit 1
fi
echo "lint: all clean"
