#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make demo: a short narrated session in the guest.
step() { echo; echo "==> $*"; sleep 0.2; }

step "Loading ion.ko into the guest kernel"
modprobe ion && grep '^ion ' /proc/modules
step "/dev/ion is a misc device anyone may open"
ls -l /dev/ion
step "debugfs: /sys/kernel/debug/ion"
find /sys/kernel/debug/ion | sort
step "The heaps, in allocation priority order (highest id first): ionctl heaps"
ionctl heaps
step "Two processes share one buffer through a dma-buf fd"
ion-demo
step "Unloading ion.ko: nothing holds it any more"
rmmod ion && echo "ion.ko unloaded cleanly"
step "Done"
