#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Self-test of the guest harness: boot the guest with the deliberately
# broken programs of tests/rig/ and require the run to fail for each of
# the reasons they plant (a failing case, a program that dies, a WARN in
# the kernel log), while their passing cases still pass.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
out=$BUILD/check-rig.tap

RIG_TEST_TIMEOUT=15 "$top/scripts/guest-run.sh" rig > "$out"
rc=$?
cat "$out"

fails=0
expect() {	# <description> <grep -E pattern on the TAP output>
	if grep -qE -- "$2" "$out"; then
		echo "check-rig: ok - $1"
	else
		echo "check-rig: FAILED - $1"
		fails=$((fails + 1))
	fi
}
expect "the run exits non-zero" "^$( [ $rc != 0 ] && echo . || echo NEVER)"
expect "a failing case is reported as failed" \
	'^not ok [0-9]+ - a_failing_test: a deliberately failing case$'
expect "the passing case beside it still passes" \
	'^ok [0-9]+ - a_failing_test: a passing case before the failure$'
expect "a WARN in the kernel log fails the run" \
	"^not ok [0-9]+ - kernel log during b_warn_splat has no 'WARNING:'"
expect "the offending kernel log line is shown" \
	'^#   .*WARNING: CPU: 0 PID: [0-9]+ at rig-selftest'
expect "a program killed by a signal is a failed test" \
	'^not ok [0-9]+ - c_silent_crash: exited with status'
expect "a program that hangs is killed and failed" \
	"^not ok [0-9]+ - d_hang: finished within the time limit"
expect "the summary line has the exact form" '^[0-9]+ passed, [1-9][0-9]* failed$'
expect "a module left loaded is a failed test" \
	"^not ok [0-9]+ - e_module_left: unloads the modules it loaded \\(left loaded: vgem"
expect "the guest's kernel is checked against the one asked for" \
	'^ok [0-9]+ - the guest runs the kernel asked for \('
expect "the summary counts 7 passed and 5 failed" "^7 passed, 5 failed$"

if [ $fails = 0 ]; then
	echo "check-rig: the harness fails when it should"
	exit 0
fi
echo "check-rig: $fails expectation(s) not met"
exit 1
