// SPDX-License-Identifier: MIT
/*
 * The OOM killer sees who holds ion memory (kernel/core/ion_oom.c,
 * Documentation/ion.rst "The OOM killer"): a live buffer counts in the
 * RssShmem of the process whose call allocated it, and only there.
 *
 *  - the charge: RssShmem grows by the buffer's size at allocation and
 *    is back at the free; with oom_charge=N nothing is counted, and a
 *    buffer charged before the switch is still given back exactly;
 *  - every heap is charged but the carveout (memory reserved at boot);
 *  - a forked child allocating through its parent's /dev/ion file pays,
 *    not the parent;
 *  - fd passing: A allocates, sends the fd to B and closes its own: A
 *    still pays, B does not; the charge goes when B closes.  When A
 *    exits first, B still pays nothing (the documented limit);
 *  - a kernel client's buffer (ion_test's, allocated in this process's
 *    ioctl and shared to it as an fd) is charged to no process;
 *  - the scenario of issue 19: a hog holds most of RAM in system-heap
 *    buffers (until ion refuses at its reserve), an innocent process then
 *    touches a quarter of RAM of anonymous memory: the OOM killer kills
 *    the hog (SIGKILL, named in its "Killed process" line, with the
 *    hog's buffers as shmem-rss), the innocent finishes untouched.
 *
 * Both processes of the scenario stay in this program's cgroup (the root
 * one under the rig), which has no limit: the global OOM killer is what
 * fires.  This process sets its oom_score_adj to -1000 so that it reports
 * whatever happens; its children set theirs back to 0.
 */
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "heap_util.h"
#include "ion_test_util.h"

#define MIB		(1024LL * 1024)
#define BUF_LEN		(64 * MIB)
#define SLACK		(2 * MIB)	/* per-CPU counter batches, stacks */
#define HOG_CHUNK	(16 * MIB)
#define WAIT_S		180
#define HOG_WAIT_S	600

/* RssShmem of process @pid (0: this one) in bytes, or -1. */
static long long rss_shmem(pid_t pid)
{
	char path[64], *text, *p;
	long long v = -1;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	if (it_read_file(path, &text) < 0)
		return -1;
	p = strstr(text, "\nRssShmem:");
	if (p)
		v = atoll(p + strlen("\nRssShmem:")) * 1024;
	free(text);
	return v;
}

/* Is @now within SLACK of @base + @delta?  Say so when not. */
static int near(const char *who, long long base, long long now,
		long long delta)
{
	long long d = now - base - delta;

	if (base >= 0 && now >= 0 && d < SLACK && d > -SLACK)
		return 1;
	tap_diag("%s: RssShmem %lld -> %lld bytes, expected a change of %lld",
		 who, base, now, delta);
	return 0;
}

static int set_adj(const char *val)
{
	return ht_write_str("/proc/self/oom_score_adj", val, 0);
}

static void case_charge(int ion)
{
	long long base = rss_shmem(0);
	int buf, buf2, charged;

	/* Each "given back" case counts only after its charge was seen. */
	buf = it_alloc_fd(ion, BUF_LEN, ION_HEAP_SYSTEM_MASK, 0);
	charged = buf >= 0 && near("self", base, rss_shmem(0), BUF_LEN);
	tap_ok(charged,
	       "a 64 MiB system-heap buffer counts in the allocator's RssShmem");
	if (buf >= 0)
		close(buf);
	tap_ok(charged && near("self", base, rss_shmem(0), 0),
	       "freeing it takes the charge back");

	buf = it_alloc_fd(ion, BUF_LEN, ION_HEAP_SYSTEM_MASK, 0);
	if (it_param_set("oom_charge", "N"))
		tap_diag("could not set oom_charge=N");
	buf2 = it_alloc_fd(ion, BUF_LEN, ION_HEAP_SYSTEM_MASK, 0);
	charged = buf >= 0 && buf2 >= 0 &&
		  near("self", base, rss_shmem(0), BUF_LEN);
	tap_ok(charged, "oom_charge=N: a new buffer is not counted");
	if (buf >= 0)
		close(buf);
	if (buf2 >= 0)
		close(buf2);
	it_param_set("oom_charge", "Y");
	tap_ok(charged && near("self", base, rss_shmem(0), 0),
	       "a buffer charged before oom_charge=N is given back exactly");
}

/*
 * Every heap's buffers are charged but the carveout's, whose memory was
 * set aside at boot: a kill would give it back to no one else.
 */
static void case_heaps(int ion, const struct it_heaps *hs)
{
	const long long len = 4 * MIB;
	const struct it_heap *kh;
	long long base, held;
	unsigned int i;
	int buf, want;

	for (i = 0; i < IT_ARRAY_SIZE(it_known_heaps); i++) {
		kh = &it_known_heaps[i];
		want = kh->type != ION_HEAP_TYPE_CARVEOUT;
		if (!it_heap_find(hs, kh->name)) {
			tap_skip(kh->name, "the kernel has no such heap");
			continue;
		}
		base = rss_shmem(0);
		buf = it_alloc_fd(ion, len, 1U << kh->id, 0);
		if (buf < 0) {
			tap_skip(kh->name, "no 4 MiB buffer now");
			continue;
		}
		held = rss_shmem(0);
		close(buf);
		tap_ok(near("self", base, held, want ? len : 0) &&
		       near("self", base, rss_shmem(0), 0),
		       "%s: a 4 MiB buffer %s", kh->name,
		       want ? "is charged until freed" :
		       "is not charged (memory reserved at boot)");
	}
}

/* A forked child allocates through the parent's /dev/ion file. */
static void case_child_pays(int ion)
{
	long long base = rss_shmem(0), child_base, child_held, parent_held;
	int p[2], q[2], buf;
	long long v[2] = { -1, -1 };
	pid_t pid;
	char c = 0;

	if (pipe(p) || pipe(q)) {
		tap_ok(0, "pipes for a child");
		return;
	}
	pid = fork();
	if (pid == 0) {
		v[0] = rss_shmem(0);
		buf = it_alloc_fd(ion, BUF_LEN, ION_HEAP_SYSTEM_MASK, 0);
		v[1] = buf < 0 ? -1 : rss_shmem(0);
		if (write(p[1], v, sizeof(v)) != sizeof(v) ||
		    read(q[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	if (read(p[0], v, sizeof(v)) != sizeof(v))
		v[0] = v[1] = -1;
	child_base = v[0];
	child_held = v[1];
	parent_held = rss_shmem(0);
	if (write(q[1], &c, 1) != 1)
		kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	tap_ok(near("child", child_base, child_held, BUF_LEN) &&
	       near("parent", base, parent_held, 0),
	       "a child allocating through its parent's client pays, not the parent");
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

/*
 * A (a child) allocates and sends the fd to this process (B) over @sock,
 * closes its own fd, reports, then exits when told, or at once when
 * @exit_first.
 */
static void sender(int ion, int sock, int exit_first)
{
	long long base = rss_shmem(0);
	int buf = it_alloc_fd(ion, BUF_LEN, ION_HEAP_SYSTEM_MASK, 0);
	char c = 0;

	if (buf < 0 || it_send_fd(sock, buf, &base, sizeof(base), 0))
		_exit(1);
	close(buf);
	if (exit_first)
		_exit(0);
	if (write(sock, &c, 1) != 1 || read(sock, &c, 1) != 1)
		_exit(1);
	_exit(0);
}

static void case_fd_passing(int ion, int exit_first)
{
	long long self = rss_shmem(0), a_base = -1, a_held, self_held;
	int sv[2], buf, charged;
	pid_t pid;
	char c;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		tap_ok(0, "socketpair");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		sender(ion, sv[1], exit_first);
	}
	close(sv[1]);
	buf = it_recv_fd(sv[0], &a_base, sizeof(a_base), 0);
	if (exit_first) {
		waitpid(pid, NULL, 0);
		tap_ok(buf >= 0 && near("receiver", self, rss_shmem(0), 0),
		       "allocator exited first: the receiver is not charged (documented limit)");
		goto out;
	}
	if (read(sv[0], &c, 1) != 1)	/* A closed its fd */
		tap_diag("the sender did not report");
	a_held = rss_shmem(pid);
	self_held = rss_shmem(0);
	charged = buf >= 0 && near("allocator", a_base, a_held, BUF_LEN);
	tap_ok(charged && near("receiver", self, self_held, 0),
	       "fd passed on and closed by the allocator: the allocator still pays, the receiver does not");
	if (buf >= 0)
		close(buf);
	buf = -1;
	tap_ok(charged && near("allocator", a_base, rss_shmem(pid), 0),
	       "the receiver's close frees the buffer and the allocator's charge");
	if (write(sv[0], &c, 1) != 1)
		kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
out:
	if (buf >= 0)
		close(buf);
	close(sv[0]);
}

/*
 * ion_test's kernel client allocates 16 MiB in this process's ioctl
 * (ION_TEST_IOC_KAPI) and shares it as an fd: held here, it is not
 * charged to this process.
 */
static void case_kernel_client(int ion)
{
	struct ion_test_kapi k = { .seed = 1, .len = 16 * MIB };
	long long base = rss_shmem(0);
	int tfd = ht_test_open(), ret;

	if (tfd < 0) {
		tap_skip("a kernel client's buffer is charged to no process",
			 "ion_test does not load");
		return;
	}
	k.fd = it_alloc_fd(ion, it_page(), ION_HEAP_SYSTEM_MASK, 0);
	k.heap_mask = ION_HEAP_SYSTEM_MASK;
	ret = k.fd < 0 ? k.fd : it_ioctl(tfd, ION_TEST_IOC_KAPI, &k);
	tap_ok(!ret && k.share_fd >= 0 && !(k.failed & ION_TEST_KAPI_ALLOC) &&
	       near("self", base, rss_shmem(0), it_page()),
	       "a kernel client's 16 MiB buffer is charged to no process (held here as an fd)");
	if (!ret && k.share_fd >= 0)
		close(k.share_fd);
	if (k.fd >= 0)
		close(k.fd);
	close(tfd);
}

/* The RssShmem line of the /proc status text read from @fd, in bytes. */
static long long status_shmem(int fd)
{
	static char text[8192];
	ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
	char *p;

	if (n <= 0)
		return -1;
	text[n] = 0;
	p = strstr(text, "\nRssShmem:");
	return p ? atoll(p + strlen("\nRssShmem:")) * 1024 : -1;
}

/*
 * Hold system-heap buffers until ion refuses; report the bytes held and
 * the hog's own RssShmem then.  The hog reads itself, through a file
 * opened before RAM is full: once the hog has reported, any process's
 * allocation may wake the OOM killer, and a killed hog has no RssShmem
 * left for its parent to read (a debug-kernel CI run lost that race).
 */
static void hog(int out)
{
	long long rep[2] = { 0, -1 };
	int ion = it_open();
	int st = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (set_adj("0") || ion < 0 || st < 0 || status_shmem(st) < 0)
		_exit(1);
	while (it_alloc_fd(ion, HOG_CHUNK, ION_HEAP_SYSTEM_MASK, 0) >= 0)
		rep[0] += HOG_CHUNK;
	rep[1] = status_shmem(st);
	if (write(out, rep, sizeof(rep)) != sizeof(rep))
		_exit(1);
	for (;;)
		pause();
}

/*
 * Has the hog written to @fd (or died) within HOG_WAIT_S?  When not, its
 * kernel stack goes to the TAP diagnostics.
 */
static int hog_reported(int fd, pid_t pid)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, HOG_WAIT_S * 1000) > 0)
		return 1;
	tap_diag("the hog has not reported after %d s", HOG_WAIT_S);
	it_diag_stack(pid, "the hog");
	return 0;
}

/* Touch @len bytes of anonymous memory, then exit 0. */
static void innocent(size_t len)
{
	size_t off, page = it_page();
	char *p;

	if (set_adj("0"))
		_exit(1);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(1);
	for (off = 0; off < len; off += page)
		p[off] = 1;
	_exit(0);
}

/* Wait up to @secs for @pid; its status, or -1 while it still runs. */
static int wait_for(pid_t pid, int secs)
{
	long long end = it_now_ms() + secs * 1000LL;
	int st;

	if (pid <= 0)
		return -1;
	do {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(100 * 1000);
	} while (it_now_ms() < end);
	return -1;
}

/*
 * The OOM kills the kernel logged since @kmsg was opened: 1 when the hog
 * (@hog) is among the victims and no one else is; its shmem-rss in
 * *@shmem_kb.
 */
static int victims(int kmsg, pid_t hog, long long *shmem_kb)
{
	char rec[IT_KMSG_REC];
	const char *p, *s;
	int hog_killed = 0, others = 0;

	*shmem_kb = -1;
	while (it_kmsg_next(kmsg, rec, sizeof(rec))) {
		/* Who woke the OOM killer: a diagnostic, not a condition. */
		if (strstr(it_kmsg_text(rec), " invoked oom-killer"))
			tap_diag("kernel: %.*s",
				 (int)strcspn(it_kmsg_text(rec), "\n"),
				 it_kmsg_text(rec));
		p = strstr(it_kmsg_text(rec), "Killed process ");
		if (!p)
			continue;
		tap_diag("kernel: %.*s", (int)strcspn(p, "\n"), p);
		if (atoi(p + strlen("Killed process ")) != hog) {
			others++;
			continue;
		}
		hog_killed = 1;
		s = strstr(p, "shmem-rss:");
		if (s)
			*shmem_kb = atoll(s + strlen("shmem-rss:"));
	}
	return hog_killed && !others;
}

static void case_oom(void)
{
	long long total = ht_meminfo("MemTotal"), rep[2], held, hog_rss;
	long long shmem_kb;
	int kmsg = it_kmsg_open(0), pfd[2], hog_st, inn_st;
	pid_t hog_pid, inn_pid;

	if (total <= 0 || kmsg < 0 || pipe(pfd)) {
		tap_ok(0, "MemTotal, the kernel log and a pipe for the hog");
		return;
	}
	hog_pid = fork();
	if (hog_pid == 0)
		hog(pfd[1]);
	/*
	 * Only the hog writes: a hog that dies before it reports gives EOF,
	 * one stuck in an allocation a timeout (its kernel stack is shown).
	 */
	close(pfd[1]);
	if (hog_pid < 0 || !hog_reported(pfd[0], hog_pid) ||
	    read(pfd[0], rep, sizeof(rep)) != sizeof(rep))
		rep[0] = rep[1] = -1;
	held = rep[0];
	hog_rss = rep[1];
	tap_ok(held >= total / 2 && hog_rss >= held,
	       "the hog holds most of RAM in ion buffers, all in its RssShmem (%lld of %lld MiB; RssShmem %lld MiB)",
	       held / MIB, total / MIB, hog_rss < 0 ? hog_rss : hog_rss / MIB);
	if (held < 0) {
		/* Killed before ion refused it: say by whom, and stop. */
		victims(kmsg, hog_pid, &shmem_kb);
		hog_st = wait_for(hog_pid, 30);
		tap_diag("the hog's status: %#x", hog_st);
		goto out_kill;
	}

	inn_pid = fork();
	if (inn_pid == 0)
		innocent(total / 4);
	inn_st = wait_for(inn_pid, WAIT_S);
	hog_st = wait_for(hog_pid, 30);
	tap_ok(inn_st >= 0 && WIFEXITED(inn_st) && !WEXITSTATUS(inn_st),
	       "the innocent process touched %lld MiB and survived (status %#x)",
	       total / 4 / MIB, inn_st);
	tap_ok(hog_st >= 0 && WIFSIGNALED(hog_st) &&
	       WTERMSIG(hog_st) == SIGKILL,
	       "the hog was killed with SIGKILL (status %#x)", hog_st);
	tap_ok(victims(kmsg, hog_pid, &shmem_kb),
	       "the kernel log names the hog, and only the hog, as the OOM killer's victim");
	tap_ok(shmem_kb * 1024 >= held,
	       "the OOM killer saw the hog's buffers as its shmem-rss (%lld MiB)",
	       shmem_kb / 1024);

	if (inn_st < 0 && inn_pid > 0) {
		kill(inn_pid, SIGKILL);
		waitpid(inn_pid, NULL, 0);
	}
out_kill:
	if (hog_st < 0 && hog_pid > 0) {
		kill(hog_pid, SIGKILL);
		waitpid(hog_pid, NULL, 0);
	}
	close(pfd[0]);
	close(kmsg);
}

int main(void)
{
	struct it_heaps hs;
	struct it_param saved;
	int ion = it_setup(&hs);

	if (!it_heap_find(&hs, ION_SYSTEM_HEAP_NAME)) {
		tap_skip("OOM badness", "no system heap");
		return tap_exit();
	}
	signal(SIGPIPE, SIG_IGN);
	if (it_param_save(&saved, "oom_charge") ||
	    it_param_set("oom_charge", "Y") || set_adj("-1000"))
		tap_ok(0, "oom_charge and oom_score_adj are writable");
	case_charge(ion);
	case_heaps(ion, &hs);
	case_child_pays(ion);
	case_fd_passing(ion, 0);
	case_fd_passing(ion, 1);
	case_kernel_client(ion);
	case_oom();
	close(ion);
	ht_drop_pools();
	it_param_restore(&saved);
	return tap_exit();
}
