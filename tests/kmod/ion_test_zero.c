// SPDX-License-Identifier: GPL-2.0-only
/*
 * ion_test: count the pages a process clears, for heap_zero_passes.
 *
 * Writing a pid to the parameter zero_watch puts a kprobe on each of the
 * architecture's page-clearing routines that exists (x86: the three
 * variants clear_page() picks from; arm64: clear_page) and counts their
 * calls by that thread group from zero; reading gives "<pid> <clears>";
 * writing 0 takes the probes away (unloading does too).  kprobe events
 * from tracefs cannot do this: these routines are assembly the function
 * tracer does not know (notrace), which only a kernel kprobe may probe.
 * A kernel that clears pages inline (x86 from 6.19) has nothing to
 * probe: the write fails with -ENOENT.
 */
#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sysfs.h>

#include "ion_test_priv.h"

static const char *const ion_test_zero_syms[] = {
#ifdef CONFIG_X86
	"clear_page_erms", "clear_page_rep", "clear_page_orig",
#else
	"clear_page",
#endif
};

static struct kprobe ion_test_zero_kp[ARRAY_SIZE(ion_test_zero_syms)];
static bool ion_test_zero_on[ARRAY_SIZE(ion_test_zero_syms)];
/* Protects the arrays above, ion_test_zero_gone and the pid's changes. */
static DEFINE_MUTEX(ion_test_zero_lock);
/* Set by ion_test_zero_exit(): sysfs may still write zero_watch after. */
static bool ion_test_zero_gone;
static pid_t ion_test_zero_pid;
static atomic_long_t ion_test_zero_clears = ATOMIC_LONG_INIT(0);

static int ion_test_zero_hit(struct kprobe *kp, struct pt_regs *regs)
{
	if (current->tgid == READ_ONCE(ion_test_zero_pid))
		atomic_long_inc(&ion_test_zero_clears);
	return 0;
}

static void ion_test_zero_stop(void)
{
	unsigned int i;

	WRITE_ONCE(ion_test_zero_pid, 0);
	for (i = 0; i < ARRAY_SIZE(ion_test_zero_kp); i++) {
		if (ion_test_zero_on[i])
			unregister_kprobe(&ion_test_zero_kp[i]);
		ion_test_zero_on[i] = false;
	}
}

static int ion_test_zero_start(pid_t pid)
{
	unsigned int i, n = 0;

	atomic_long_set(&ion_test_zero_clears, 0);
	WRITE_ONCE(ion_test_zero_pid, pid);
	for (i = 0; i < ARRAY_SIZE(ion_test_zero_kp); i++) {
		memset(&ion_test_zero_kp[i], 0, sizeof(ion_test_zero_kp[i]));
		ion_test_zero_kp[i].symbol_name = ion_test_zero_syms[i];
		ion_test_zero_kp[i].pre_handler = ion_test_zero_hit;
		ion_test_zero_on[i] = !register_kprobe(&ion_test_zero_kp[i]);
		n += ion_test_zero_on[i];
	}
	if (n)
		return 0;
	ion_test_zero_stop();
	return -ENOENT;
}

static int ion_test_zero_set(const char *val, const struct kernel_param *kp)
{
	int pid, ret;

	ret = kstrtoint(val, 0, &pid);
	if (ret || pid < 0)
		return -EINVAL;
	mutex_lock(&ion_test_zero_lock);
	ion_test_zero_stop();
	ret = ion_test_zero_gone ? -ENODEV :
	      pid ? ion_test_zero_start(pid) : 0;
	mutex_unlock(&ion_test_zero_lock);
	return ret;
}

static int ion_test_zero_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d %ld\n", READ_ONCE(ion_test_zero_pid),
			  atomic_long_read(&ion_test_zero_clears));
}

static const struct kernel_param_ops ion_test_zero_ops = {
	.set = ion_test_zero_set,
	.get = ion_test_zero_get,
};
module_param_cb(zero_watch, &ion_test_zero_ops, NULL, 0600);
MODULE_PARM_DESC(zero_watch,
		 "write a pid to count its page clears, 0 to stop; reads '<pid> <clears>'");

/*
 * Take the probes away before the module's text goes, for good: the
 * parameter's file outlives the exit function (and a failed init) a
 * little, and a write then must not register them again.
 */
void ion_test_zero_exit(void)
{
	mutex_lock(&ion_test_zero_lock);
	ion_test_zero_gone = true;
	ion_test_zero_stop();
	mutex_unlock(&ion_test_zero_lock);
}
