#!/bin/sh
# SPDX-License-Identifier: MIT
# Rig self-test (make check-rig only): a program that loads a module and
# leaves it loaded must be reported, so the next program starts clean.
. /etc/rig-lib.sh
check "loaded vgem" modprobe vgem
rig_exit
