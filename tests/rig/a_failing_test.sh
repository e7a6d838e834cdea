#!/bin/sh
# SPDX-License-Identifier: MIT
# Rig self-test (make check-rig only): a test that fails must be reported.
. /etc/rig-lib.sh
ok "a passing case before the failure"
check "a deliberately failing case" false
rig_exit
