#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make check-deb, inside the booted Debian guest (run by systemd as
# ion-deb-check.service, as root): what a user of the ion packages sees.
# Results go to the second serial port in the rig's format
# (scripts/rig-report.awk): one "ok - ..." or "not ok - ..." line per
# case, a failing case preceded by what explains it, the kernel log
# between @@RIG KMSG markers (checked for splats on the host).
. /usr/local/share/ion-deb-check/conf
res=/dev/ttyS1
stty -F $res raw -echo 2>/dev/null
exec 3>$res
src=/usr/local/share/ion-deb-check/prog.c
failed=0
out=/tmp/ion-deb-check.out

# case <description> <command...>: the command's status is the verdict.
case_() {
	desc=$1
	shift
	if "$@" > $out 2>&1; then
		echo "ok - $desc" >&3
		echo "ion-deb-check: ok - $desc"
	else
		sed 's/^/  /' $out >&3
		echo "not ok - $desc" >&3
		echo "ion-deb-check: not ok - $desc"
		cat $out
		failed=$((failed + 1))
	fi
}

kmsg() {
	echo "@@RIG KMSG $1" >&3
	dmesg -c >&3
	echo "@@RIG KMSG-END $1" >&3
}

mode_is() {	# <node> <owner:group:mode>
	m=$(stat -c '%U:%G:%a' "$1") || return 1
	echo "$1: $m"
	[ "$m" = "$2" ]
}

heap_nodes() {	# every ion dma-heap node, named as udev names them
	n=0
	for d in /sys/class/ion_dma_heap/*; do
		[ -e "$d" ] || continue
		mode_is "/dev/dma_heap/$(basename "$d")" root:video:660 || return 1
		n=$((n + 1))
	done
	echo "$n nodes"
	[ $n -ge 4 ]
}

dkms_module() {	# the ion modprobe loads is the one DKMS installed
	p=$(modinfo -n ion) || return 1
	echo "$p"
	case $p in
	"/lib/modules/$KVER/updates/dkms/ion.ko" | \
	"/lib/modules/$KVER/updates/dkms/ion.ko.xz") return 0 ;;
	esac
	return 1
}

param_is() {	# <parameter> <value>
	v=$(cat /sys/module/ion/parameters/$1) || return 1
	echo "$1=$v"
	[ "$v" = "$2" ]
}

as() {	# <user> <shell command>
	runuser -u "$1" -- /bin/sh -c "$2"
}

denied() {	# bob's attempt fails, and for want of permission
	! as bob 'ionctl alloc --heap ion_system_heap --size 1M' > /tmp/bob.out 2>&1
	rc=$?
	cat /tmp/bob.out
	[ $rc = 0 ] && grep -q 'Permission denied' /tmp/bob.out &&
		! as bob 'exec 4< /dev/dma_heap/ion-system' 2>/dev/null
}

heaps() {
	ionctl heaps > /tmp/heaps.out 2>&1
	rc=$?
	cat /tmp/heaps.out
	[ $rc = 0 ] && grep -q '^ion_system_heap ' /tmp/heaps.out &&
		grep -q '^ion_carveout_heap ' /tmp/heaps.out
}

build_prog() {
	as alice "cd && cc -Wall -Werror -o prog $src \$(pkg-config --cflags --libs ion)" &&
		ldd /home/alice/prog &&
		ldd /home/alice/prog | grep -Eq 'libion\.so\.1 => (/usr)?/lib/x86_64-linux-gnu/libion\.so\.1 '
}

gone() {	# every path given is absent
	rc=0
	for p in "$@"; do
		if [ -e "$p" ]; then
			echo "still there: $p"
			rc=1
		fi
	done
	return $rc
}

no_module_file() {
	f=$(find /lib/modules -name 'ion.ko*')
	echo "$f"
	[ -z "$f" ] && ! modinfo ion && ! modprobe ion
}

none_installed() {
	! dpkg-query -W -f='${Package} ${Status}\n' ion-dkms ion-tools libion1 libion-dev 2>/dev/null |
		grep -v 'not-installed'
}

kmsg boot
echo "@@RIG BEGIN deb" >&3
udevadm settle
case_ "systemd is PID 1 and systemd-udevd is running" \
	sh -c '[ "$(cat /proc/1/comm)" = systemd ] && systemctl is-active systemd-udevd'
case_ "the guest runs the kernel the packages were built for ($KVER)" \
	sh -c "uname -r; [ \"\$(uname -r)\" = $KVER ]"
case_ "systemd-modules-load loaded ion at boot (/etc/modules-load.d/ion.conf)" \
	sh -c 'systemctl is-active systemd-modules-load && grep "^ion " /proc/modules'
case_ "the loaded ion.ko is DKMS's build (updates/dkms)" \
	dkms_module
case_ "ion took /etc/modprobe.d/ion.conf's options (pool_max_mb=64)" \
	param_is pool_max_mb 64
case_ "ion took /etc/modprobe.d/ion.conf's options (parallel_min_kb=4096)" \
	param_is parallel_min_kb 4096
case_ "udev rules: /dev/ion is root:video 0660" mode_is /dev/ion root:video:660
case_ "udev rules: every /dev/dma_heap node of ion is root:video 0660" heap_nodes
case_ "ionctl heaps lists the heaps, with the carveout from reserve_mem=" heaps
case_ "alice (group video) allocates 1 MiB with ionctl alloc" \
	as alice 'id; ionctl alloc --heap ion_system_heap --size 1M | grep "^allocated 1048576 bytes"'
case_ "alice opens /dev/dma_heap/ion-system" \
	as alice 'exec 4< /dev/dma_heap/ion-system'
case_ "bob (not in video) cannot allocate: ionctl alloc fails with EACCES" denied
case_ "alice builds a program with pkg-config --cflags --libs ion (libion.so.1)" \
	build_prog
case_ "alice's program allocates, maps and reads back through libion" \
	as alice '/home/alice/prog | grep -x "prog: ok"'
case_ "man pages: ionctl(8), ion_alloc(3), ion_alloc_fd(3)" \
	ls -l /usr/share/man/man8/ionctl.8.gz /usr/share/man/man3/ion_alloc.3.gz \
	/usr/share/man/man3/ion_alloc_fd.3.gz
kmsg use

case_ "ion unloads (modprobe -r ion)" modprobe -r ion
case_ "apt-get purge ion-dkms ion-tools libion-dev libion1" \
	env DEBIAN_FRONTEND=noninteractive apt-get purge -y ion-dkms ion-tools libion-dev libion1
case_ "dpkg lists none of the packages any more" none_installed
case_ "no ion.ko left for any kernel; modinfo and modprobe ion fail" no_module_file
case_ "DKMS forgot ion (dkms status, /var/lib/dkms/ion)" \
	sh -c '[ -z "$(dkms status ion)" ] && ! [ -e /var/lib/dkms/ion ]'
case_ "the udev rules, modprobe.d file, sources, tools, headers and library are gone" \
	gone /lib/udev/rules.d/60-ion.rules /usr/lib/udev/rules.d/60-ion.rules \
	/etc/modprobe.d/ion.conf /usr/src/ion-* /usr/bin/ionctl /usr/include/ion \
	/usr/include/linux/ion.h /usr/lib/x86_64-linux-gnu/libion.so.1 \
	/usr/lib/x86_64-linux-gnu/pkgconfig/ion.pc /usr/share/man/man8/ionctl.8.gz \
	/usr/share/doc/ion-dkms
echo "@@RIG END deb rc=$failed" >&3
kmsg purge
echo "@@RIG DONE" >&3
sync
