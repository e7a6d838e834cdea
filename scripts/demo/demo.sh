#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make demo: a short narrated session in the guest.
step() { echo; echo "==> $*"; sleep 0.2; }
failed=0

# The /dev/videoN of vivid instance $1's capture node ("vivid-00N-vid-cap").
vivid_cap() {
	for n in /sys/class/video4linux/video*; do
		[ "$(cat "$n/name" 2>/dev/null)" = "vivid-$1-vid-cap" ] &&
			echo "/dev/${n##*/}" && return 0
	done
	return 1
}

# A "key: value" line of ion's debugfs summary.
summary() {
	sed -n "s/^$1: //p" /sys/kernel/debug/ion/summary
}

step "Loading ion.ko into the guest kernel"
modprobe ion && grep '^ion ' /proc/modules || failed=1
step "/dev/ion is a misc device, root only (0600) until a udev rule grants a group"
ls -l /dev/ion
step "debugfs: /sys/kernel/debug/ion"
find /sys/kernel/debug/ion | sort
step "The heaps, in allocation priority order (highest id first): ionctl heaps"
ionctl heaps || failed=1
step "Two processes share one buffer through a dma-buf fd"
ion-demo || failed=1

step "A camera pipeline: vivid captures into ion buffers, a second process views them"
echo "vivid is V4L2's virtual capture driver.  Two instances: vivid-000 uses"
echo "vb2-vmalloc (the driver writes frames with the CPU through a vmap),"
echo "vivid-001 vb2-dma-contig (a DMA device: it needs each buffer as one"
echo "contiguous run of DMA addresses)."
echo "# modprobe vivid n_devs=2 allocators=0,1 node_types=0x1,0x1 num_inputs=1,1"
if modprobe vivid n_devs=2 allocators=0,1 node_types=0x1,0x1 num_inputs=1,1 &&
   cap0=$(vivid_cap 000) && cap1=$(vivid_cap 001); then
	echo "vivid-000 capture: $cap0, vivid-001 capture: $cap1"

	step "vb2-vmalloc camera ($cap0) -> 4 buffers from ion_system_heap -> viewer"
	ion-camera-demo --device "$cap0" --heap ion_system_heap --frames 6 ||
		failed=1

	step "vb2-dma-contig camera ($cap1) -> 4 buffers from ion_carveout_heap -> viewer"
	echo "A DMA camera without an IOMMU cannot take the system heap's scattered"
	echo "pages; the carveout gives one physically contiguous run per buffer."
	echo "While both processes hold the pool, ion's debugfs (through ionctl):"
	ion-camera-demo --device "$cap1" --heap ion_carveout_heap --frames 6 \
		--show 'echo "--- ionctl buffers --heap ion_carveout_heap";
			ionctl buffers --heap ion_carveout_heap;
			echo "(OWNER: the camera allocated them; HANDLES: the viewer'"'"'s imports;";
			echo " ATTACH: vivid-001'"'"'s device, attached by vb2-dma-contig)";
			echo "--- ionctl buffers --heap ion_carveout_heap --holders";
			ionctl buffers --heap ion_carveout_heap --holders;
			echo "(DEVICES: vivid'"'"'s by name and driver; HOLDERS: the processes";
			echo " holding each buffer'"'"'s dma-buf, by fd or mapping, from /proc)";
			echo "--- ionctl clients"; ionctl clients;
			echo "(the camera allocated through the fd ABI: it owns the";
			echo " buffers but holds no handle; the viewer imported a handle each)";
			for c in /sys/kernel/debug/ion/clients/viewer-*; do
				echo "--- $c"; cat "$c"; done' || failed=1

	step "Both pipelines are gone: ionctl stat, ionctl buffers"
	ionctl stat
	ionctl buffers
	if [ "$(summary buffers)" = 0 ] && [ "$(summary bytes)" = 0 ]; then
		echo "debugfs is back where it started: no buffer, no byte"
	else
		echo "debugfs still counts buffers: FAILED"
		failed=1
	fi
	if modprobe -r vivid; then
		echo "vivid unloaded"
	else
		failed=1
	fi
else
	echo "vivid is not available in this guest: pipeline skipped"
	failed=1
fi

step "Unloading ion.ko: nothing holds it any more"
if rmmod ion; then
	echo "ion.ko unloaded cleanly"
else
	failed=1
fi
if [ $failed = 0 ]; then
	step "Done: every step passed its checks"
else
	step "Done, but a step FAILED (see above)"
fi
