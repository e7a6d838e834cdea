#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The rig itself: ion.ko is loaded, /dev/ion is the misc device with the
# expected numbers and mode, debugfs has the ion directory, and the module
# unloads and loads again.
. /etc/rig-lib.sh

check "ion.ko is loaded" grep -q '^ion ' /proc/modules

dev=$(cat /sys/class/misc/ion/dev 2>/dev/null)
diag "/sys/class/misc/ion/dev: ${dev:-missing}"
if [ -c /dev/ion ]; then
	maj=$(stat -c %t /dev/ion)
	min=$(stat -c %T /dev/ion)
	check "/dev/ion is a char device with the misc major (10)" \
		[ "$((0x$maj))" = 10 ]
	check "/dev/ion has the minor the misc core gave it" \
		[ "10:$((0x$min))" = "$dev" ]
	check "/dev/ion has mode 0600" [ "$(stat -c %a /dev/ion)" = 600 ]
else
	not_ok "/dev/ion is a char device"
fi
check "debugfs has /sys/kernel/debug/ion" [ -d /sys/kernel/debug/ion ]

check "rmmod ion succeeds with no user" rmmod ion
check "/dev/ion is gone after rmmod" [ ! -e /dev/ion ]
check "debugfs ion directory is gone after rmmod" \
	[ ! -e /sys/kernel/debug/ion ]
check "ion.ko loads again" modprobe ion
check "/dev/ion is back" [ -c /dev/ion ]
rig_exit
