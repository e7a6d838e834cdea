#!/bin/sh
# SPDX-License-Identifier: MIT
# Rig self-test (make check-rig only): every case passes, but a WARN splat
# reaches the kernel log; the harness must fail the run because of it.
. /etc/rig-lib.sh
echo "<4>WARNING: CPU: 0 PID: $$ at rig-selftest: deliberate splat" > /dev/kmsg
ok "wrote a WARNING line to the kernel log"
rig_exit
