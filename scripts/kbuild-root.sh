#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Run a command inside a build root that scripts/deps.sh made (KSERIES=7.3:
# trixie, whose gcc-14 and kbuild tools need its glibc), with a host
# directory bind-mounted at the same path inside it, so paths given to the
# command mean the same on both sides.  The mounts live in a private mount
# namespace (unshare -m) and vanish with it: nothing is left mounted, even
# when the command fails.  Needs root; loads nothing into any kernel.
#
# Usage: scripts/kbuild-root.sh <root> <dir> <command> [args...]
set -euo pipefail

root=${1:?usage: kbuild-root.sh <root> <dir> <command>...}
dir=${2:?usage: kbuild-root.sh <root> <dir> <command>...}
shift 2
[ -d "$root/usr/src" ] || { echo "kbuild-root: no build root $root (run make deps)" >&2; exit 1; }
dir=$(cd "$dir" && pwd -P)

# shellcheck disable=SC2016
exec unshare -m -- sh -c '
	set -e
	root=$1 dir=$2
	shift 2
	mount --make-rprivate /
	mkdir -p "$root$dir"
	mount --bind "$dir" "$root$dir"
	mount -t proc proc "$root/proc"
	mount --rbind /dev "$root/dev"
	cd "$dir"
	exec chroot "$root" /usr/bin/env \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		sh -c "cd \"\$0\" && exec \"\$@\"" "$dir" "$@"
' kbuild-root "$root" "$dir" "$@"
