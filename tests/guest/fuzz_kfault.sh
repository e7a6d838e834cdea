#!/bin/sh
# SPDX-License-Identifier: MIT
#
# fuzz_ioctl with the kernel's fault injection on (fuzz_ioctl/kfault.c):
# in the fuzzer's tasks every slab allocation and every page allocation
# of order 1 or more fails with chance $ION_FUZZ_KERNEL_FAULTS % (default
# 5) during the main run of $ION_FUZZ_KFAULT_ITERATIONS calls (default
# 20000).  Every call's result must stay within its documented errnos
# plus ENOMEM, debugfs must come back to zero, the kernel must say nothing
# (the rig's splat check; make check-debug adds a kmemleak scan), and at
# least one allocation must have been failed; the fuzzer reports how many
# for each.  Only kernels with CONFIG_FAILSLAB and CONFIG_FAIL_PAGE_ALLOC
# have the knobs (the debug kernel of make check-debug): elsewhere this
# is skipped.  A TESTS pattern must select fuzz_ioctl too (TESTS='^fuzz_').
. /etc/rig-lib.sh

fuzz="$(dirname "$0")/fuzz_ioctl"
if [ ! -x "$fuzz" ]; then
	skip "fuzz_ioctl under kernel fault injection" "fuzz_ioctl is not in this run"
	exit 0
fi
if [ ! -d /sys/kernel/debug/failslab ] || [ ! -d /sys/kernel/debug/fail_page_alloc ]; then
	skip "fuzz_ioctl under kernel fault injection" \
		"this kernel has no failslab or fail_page_alloc (make check-debug's has)"
	exit 0
fi
export ION_FUZZ_KERNEL_FAULTS=${ION_FUZZ_KERNEL_FAULTS:-5}
export ION_FUZZ_ITERATIONS=${ION_FUZZ_KFAULT_ITERATIONS:-20000}
# A buffer left behind: the fuzzer has the stack of each later release
# traced (trace_late_release()); show them.
export ION_FUZZ_TRACE_RELEASE=1
"$fuzz"
rc=$?
ev=/sys/kernel/tracing/events/kprobes/ionrel
if [ -d $ev ]; then
	echo 0 > $ev/enable
	echo "# releases of ion dma-bufs after the check:"
	grep -v '^#' /sys/kernel/tracing/trace | head -n 300 | sed 's/^/#   /'
	echo '!stacktrace' > $ev/trigger 2>/dev/null
	echo '-:ionrel' >> /sys/kernel/tracing/kprobe_events
fi
exit $rc
