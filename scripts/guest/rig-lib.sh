# SPDX-License-Identifier: MIT
#
# Helpers for guest tests written in shell (source /etc/rig-lib.sh).
# Print one TAP line per case, as tests/guest/tap.h does for C tests.

RIG_FAILED=0

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; RIG_FAILED=$((RIG_FAILED + 1)); }
diag() { echo "# $*"; }
skip() { name=$1; shift; echo "ok - $name # SKIP $*"; }

# check <name> <command...>: the case passes when the command succeeds.
check() {
	name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

# check_eq <name> <got> <want>: the case passes when got equals want.
check_eq() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		diag "got '$2', want '$3'"
		not_ok "$1"
	fi
}

rig_exit() { [ "$RIG_FAILED" = 0 ]; exit $?; }
