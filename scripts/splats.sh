#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# splats.sh LOG [STRING...]: print the lines of the guest log LOG that
# report a kernel problem (a fixed string of scripts/splats.txt, or one of
# the extra STRINGs).  Exit 0 when any line matched, 1 when none, 2 on an
# error.  For the checks that read a whole console log (make demo, make
# bench, make check-deb); make check reads its kernel-log blocks with
# rig-report.awk, from the same list.
top=$(cd "$(dirname "$0")/.." && pwd)
log=${1:?usage: splats.sh LOG [STRING...]}
shift
grep -aF -f <(sed '/^#/d' "$top/scripts/splats.txt"
	      if [ $# -gt 0 ]; then printf '%s\n' "$@"; fi) "$log"
