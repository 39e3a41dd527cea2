/* harness-exec --doctor; see doctor.h. */
#define _GNU_SOURCE
#include "supervisor/doctor.h"

#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/kernel/dnsns.h"
#include "supervisor/kernel/execgate.h"
#include "supervisor/kernel/features.h"
#include "supervisor/kernel/seccomp_deny.h"
#include "supervisor/kernel/kaudit.h"
#include "supervisor/kernel/maskfs.h"

static const char *mark(bool ok)
{
	return ok ? "available" : "missing";
}

static const char *tri(enum hx_avail a)
{
	return a == HX_AVAILABLE ? "available"
	       : a == HX_MISSING ? "missing"
				 : "unknown";
}

static void line(FILE *out, const char *name, const char *state,
		 const char *what)
{
	fprintf(out, "  %-22s %-10s %s\n", name, state, what);
}

/* What each Landlock ABI adds (kernel Documentation/userspace-api). */
static const struct {
	int abi;
	const char *adds;
} ll_levels[] = {
    {1, "file system access (read, write, execute, make, remove) (5.13)"},
    {2, "rename and link across directories (REFER) (5.19)"},
    {3, "truncate (6.2)"},
    {4, "TCP bind and connect ports (6.7)"},
    {5, "ioctl on device files (6.10)"},
    {6, "signal scoping and abstract unix socket scoping (6.12)"},
    {7, "control over Landlock's own audit logging (6.15)"},
};

void hx_doctor_print(const struct hx_features *k, FILE *out)
{
	char buf[512];
	bool gate_ok;

	fprintf(out, "harness-exec --doctor: kernel %s%s\n", k->release,
		k->root ? ", running as root" : "");
	line(out, "seccomp filter", mark(k->seccomp),
	     k->seccomp ? "the static deny list (escape syscalls, foreign "
			  "arch, x32) is enforced in BPF, in audit mode too"
			: "no kernel deny list: harness-exec refuses to run");
	snprintf(buf, sizeof(buf), "%zu deny rules", hx_seccomp_ndeny);
	line(out, "  deny list", k->seccomp ? "built in" : "unused", buf);
	line(out, "user-notify", mark(k->user_notif),
	     k->user_notif ? "writes, connects, sends and file mutations "
			     "decided and emulated by the supervisor"
			   : "no race-free kernel decisions on exec, open, "
			     "connect");
	if (k->listener == HX_MISSING)
		line(out, "  listener", "missing", k->listener_err);
	line(out, "  ADDFD", tri(k->addfd),
	     "supervisor-opened fds injected into the agent (5.9)");
	line(out, "  ADDFD_FLAG_SEND", tri(k->addfd_send),
	     "inject and answer atomically: open emulation without a "
	     "window (5.14)");
	line(out, "  WAIT_KILLABLE_RECV", mark(k->notify_killable),
	     k->notify_killable
		 ? "a call taken is not broken off by a signal: seen and "
		   "decided once (5.19)"
		 : "a signal restarts a call being decided: seen twice, a "
		   "question asked again");
	line(out, "  SYNC_WAKE_UP", tri(k->sync_wake),
	     "fast round trip (~3us instead of ~12us) (6.6)");
	line(out, "pidfd_open", mark(k->pidfd_open),
	     "signals and fd access without pid reuse races (5.3)");
	line(out, "pidfd_getfd", mark(k->pidfd_getfd),
	     "connect emulated on the agent's own socket, a unix one by a "
	     "capability-less connector process (5.6)");
	snprintf(buf, sizeof(buf), "ABI %d", k->landlock_abi);
	line(out, "landlock", k->landlock_abi ? buf : "missing",
	     k->landlock_abi ? "the policy's static boundary in the kernel"
			     : "file and TCP access bounded only by the "
			       "shim, which static binaries skip");
	for (unsigned i = 0; i < sizeof(ll_levels) / sizeof(*ll_levels); i++) {
		snprintf(buf, sizeof(buf), "  ABI %d", ll_levels[i].abi);
		line(out, buf, mark(k->landlock_abi >= ll_levels[i].abi),
		     ll_levels[i].adds);
	}
	line(out, "no_new_privs", mark(k->nnp),
	     k->nnp ? "setuid and file capabilities grant nothing"
		    : "setuid binaries could gain privileges");
	line(out, "capabilities drop",
	     k->cap_setpcap ? "available"
	     : k->root	    ? "partial"
			    : "available",
	     k->cap_setpcap
		 ? "all dropped, bounding set emptied, securebits locked "
		   "(uid 0 regains nothing on exec)"
	     : k->root ? "effective set dropped; no CAP_SETPCAP: the "
			 "bounding set stays"
		       : "not root: no capabilities to drop; "
			 "no_new_privs stops gaining any");
	/* The gate needs the notify layer (it approves each exec) and the
	 * right to trace our own child; it is off unless --exec-gate. */
	{
		int pe = hx_execgate_probe();

		gate_ok = k->user_notif && k->pidfd_getfd && !pe;
		if (!gate_ok) {
			snprintf(buf, sizeof(buf),
				 "%s%s: --exec-gate cannot run; argv rules "
				 "(git push *) of programs without the shim "
				 "are not held",
				 !k->user_notif || !k->pidfd_getfd
				     ? "needs user-notify and pidfd_getfd"
				     : "ptrace of a child refused: ",
				 !k->user_notif || !k->pidfd_getfd
				     ? ""
				     : strerror(-pe));
			line(out, "exec gate", "missing", buf);
		} else
			line(out, "exec gate", "available",
			     "on (--no-exec-gate turns it off): every exec is "
			     "decided in the kernel layer and, before the new "
			     "image runs, its file (dev, inode) and argv are "
			     "checked against the approval (ptrace exec "
			     "events): a swapped path is killed and logged");
	}
	snprintf(buf, sizeof(buf), "%s (%s)%s",
		 k->cgroup2_writable ? "writable" : "not writable",
		 k->cgroup2_dir[0] ? k->cgroup2_dir : "?",
		 k->cgroup2_writable
		     ? ": the agent's tree is killed at once if harness-exec "
		       "dies (cgroup.kill)"
		     : ": no cgroup of the session's own");
	line(out, "cgroup v2", k->cgroup2 ? "available" : "missing",
	     k->cgroup2 ? buf : "no cgroup of the session's own");
	/* Without a cgroup, the exec gate's tracer is the next sound
	 * mechanism: PTRACE_O_EXITKILL, with every process of the tree a
	 * tracee (auto-attached at fork; CLONE_UNTRACED refused in BPF). */
	line(out, "tree kill",
	     k->cgroup2_writable || gate_ok ? "available" : "missing",
	     k->cgroup2_writable
		 ? "cgroup.kill: if harness-exec dies, every process of the "
		   "agent's tree dies with it"
	     : gate_ok ? "the exec gate's PTRACE_O_EXITKILL: if harness-exec "
			 "dies, every process of the agent's tree (each one "
			 "traced from its fork) is killed by the kernel; lost "
			 "with --no-exec-gate"
		       : "if harness-exec dies, the agent's processes live on "
			 "(their shim calls and notified syscalls fail)");
}

/* Masks need a mount namespace: root's, or an ordinary user's own user
 * namespace; a child tries. */
static bool can_mask(void)
{
	pid_t pid;
	int st;

	if (geteuid() == 0)
		return true;
	pid = fork();
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER | CLONE_NEWNS) ? 1 : 0);
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       !WEXITSTATUS(st);
}

/* Whether Landlock's refusals become records (kaudit.h). */
static void landlock_audit(FILE *out)
{
	static const char lost[] =
	    "Landlock's refusals of programs that skip the shim (static "
	    "binaries, raw syscalls: Claude Code's, Codex's and Go "
	    "programs' reads) still happen (EACCES) but leave no audit "
	    "record and no notice; --trace-reads (or audit mode) decides "
	    "and records every open in the kernel layer instead";
	struct hx_kaudit_probe p;
	char buf[768];

	hx_kaudit_probe(&p);
	if (!p.abi)
		snprintf(buf, sizeof(buf), "Landlock ABI < 7 (Linux 6.15): %s",
			 lost);
	else if (!p.can_read)
		snprintf(buf, sizeof(buf), "%s: %s", p.why, lost);
	else if (p.enabled == 0 && !p.can_enable)
		snprintf(buf, sizeof(buf),
			 "kernel audit is off and cannot be turned on here: "
			 "%s",
			 lost);
	else
		snprintf(
		    buf, sizeof(buf),
		    "each Landlock refusal of the session's domain is an "
		    "audit record (layer landlock, the policy's rule, pid, "
		    "exe) and a notice%s",
		    p.enabled == 0
			? "; kernel audit is off: each session turns it "
			  "on, the last one to end turns it off "
			  "(--no-kernel-audit: leave it off)"
			: "");
	fprintf(out, "  %-22s %-10s %s\n", "landlock records",
		p.abi && p.can_read && (p.enabled != 0 || p.can_enable)
		    ? "available"
		    : "missing",
		buf);
}

/* Whether a look into a mask is a record (maskfs.h). */
static void mask_records(FILE *out)
{
	int e = hx_maskfs_probe();

	if (!e)
		fprintf(out, "  %-22s %-10s %s\n", "mask records", "available",
			"a read refused by a mask (the project's .env) is an "
			"audit record (layer mask, the policy's rule, pid, "
			"exe, syscall) and a notice; where Landlock's refusals "
			"are not read, the directories it refuses (~/.ssh) are "
			"masks too, so a name looked up in one is recorded "
			"(not a refused file outside write roots: ~/.netrc)");
	else
		fprintf(out, "  %-22s %-10s /dev/fuse: %s: %s\n",
			"mask records", "missing", strerror(-e),
			"reads refused by masks still fail (EACCES) but leave "
			"no record (Debian's udev makes /dev/fuse 0666)");
}

/* Whether the agent's DNS can be answered here: the sealed namespace
 * is made, as a session makes it (dnsns.h). */
static void dns(FILE *out)
{
	struct hx_dnsns_listeners l;
	struct hx_dnsns *ns;
	int e = hx_dnsns_start(&ns);

	if (!e) {
		e = hx_dnsns_ready(ns, 2000, &l);
		hx_dnsns_free(ns);
		hx_dnsns_listeners_close(&l);
	}
	if (!e)
		fprintf(out, "  %-22s %-10s %s\n", "dns", "available",
			"answered by harness-exec: every question to port 53, "
			"from any program, is judged by its name and a denied "
			"one never leaves (NXDOMAIN); connects are judged by "
			"the names it answered. Name rules are address rules "
			"after resolution (an address serving other names too "
			"is reachable under them)");
	else
		fprintf(out, "  %-22s %-10s %s (%s)\n", "dns", "missing",
			"no network namespace of its own: DNS is the system's, "
			"lookups are judged by the shim only (a static "
			"program's, or a raw query's, are not), port 53 of "
			"the resolvers of /etc/resolv.conf is open",
			strerror(-e));
}

int hx_doctor(FILE *out)
{
	struct hx_features k;
	bool ns;

	hx_features_probe(&k, true);
	hx_doctor_print(&k, out);
	landlock_audit(out);
	/* Not in hx_doctor_print: it forks, which its callers may not. */
	if ((ns = can_mask()))
		fprintf(out, "  %-22s %-10s %s\n", "masks", "available",
			geteuid() == 0
			    ? "a mount namespace: files the policy denies "
			      "inside the project are covered for every program"
			    : "a user namespace of the user's own and a mount "
			      "namespace: files the policy denies inside the "
			      "project are covered for every program");
	else
		fprintf(out, "  %-22s %-10s %s\n", "masks", "missing",
			"no user namespaces: files the policy denies inside "
			"the project are held by the shim only (or "
			"--trace-reads)");
	/* The same namespace holds the agent's own devpts (terminals.h). */
	fprintf(out, "  %-22s %-10s %s\n", "terminals",
		ns ? "available" : "missing",
		ns ? "a devpts of the agent's own: the user's other "
		     "terminals (/dev/pts) are out of its reach, the "
		     "ptys it makes work (enforce mode)"
		   : "no user namespaces: the user's other terminals "
		     "(/dev/pts) stay readable and writable by the "
		     "agent");
	mask_records(out);
	dns(out);
	return 0;
}
