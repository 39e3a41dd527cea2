/* The static deny list: the table's own consistency (no syscall twice
 * with different actions; the overlap check itself), and the real
 * filter installed in forked children: every row refuses what it names
 * with its errno, its neighbours stay allowed, i386 and x32 syscalls
 * kill the process. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/kernel/seccomp_deny.h"
#include "tests/unit/check_main.h"

static struct hx_seccomp_prog *prog;

static void setup(void)
{
	char err[256];

	ck_assert_msg(!hx_seccomp_build(&prog, err, sizeof(err)), "%s", err);
}

static void teardown(void)
{
	hx_seccomp_prog_free(prog);
	prog = NULL;
}

/* Child exit codes: errno of the call, 200 when it succeeded. */
#define OK 200

typedef long (*call_fn)(void);

/* Runs fn in a child under the filter; returns the wait status. */
static int under_filter(call_fn fn)
{
	pid_t pid = fork();
	int st = 0;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		long r;

		/* No controlling tty: vhangup or TIOCSTI that slipped
		 * through would hit nothing. */
		setsid();
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    hx_seccomp_install(prog))
			_exit(201);
		errno = 0;
		r = fn();
		if (r == 0 && getpid() != getpgid(0))
			_exit(OK); /* a clone's child: leave quietly */
		_exit(r < 0 ? errno & 0xff : OK);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return st;
}

static int exit_of(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}

/* Calls the row's syscall with arguments that trigger it; the rest of
 * the arguments are invalid, so a row that fails to hold gives a
 * different errno rather than an effect. */
static const struct hx_sc_rule *cur;

static long call_row(void)
{
	long a[6] = {-1, -1, -1, -1, -1, -1};
	int nr = seccomp_syscall_resolve_name(cur->name);

	for (int i = 0; i < 2; i++) {
		const struct hx_sc_arg *g = &cur->a[i];

		if (g->cond == HX_SC_BITS || g->cond == HX_SC_EQ ||
		    g->cond == HX_SC_MASKED)
			a[g->idx] = (long)g->value;
		else if (g->cond == HX_SC_NOTIN2)
			a[g->idx] = PER_LINUX32;
	}
	/* clone with only the namespace bit: fork-like if it got through. */
	if (!strcmp(cur->name, "clone"))
		a[1] = a[2] = a[3] = a[4] = 0;
	return syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

START_TEST(every_row_denies)
{
	cur = &hx_seccomp_deny[_i];
	ck_assert_int_eq(cur->action, HX_SC_ERRNO);
	ck_assert_msg(exit_of(under_filter(call_row)) == cur->err,
		      "%s (%s): got %d, want %d", cur->name, cur->reason,
		      exit_of(under_filter(call_row)), cur->err);
}
END_TEST

START_TEST(table_has_no_conflicts)
{
	const char *first;

	ck_assert_uint_eq(hx_seccomp_overlap(hx_seccomp_deny, hx_seccomp_ndeny,
					     hx_seccomp_deny, hx_seccomp_ndeny,
					     &first),
			  0);
	ck_assert_ptr_null(first);
	/* The user-notify list never overlaps the deny list (DESIGN.md
	 * invariant 4), is consistent in itself, and notifies only. */
	ck_assert_uint_eq(
	    hx_seccomp_overlap(hx_seccomp_notify, hx_seccomp_nnotify,
			       hx_seccomp_deny, hx_seccomp_ndeny, &first),
	    0);
	ck_assert_ptr_null(first);
	ck_assert_uint_eq(
	    hx_seccomp_overlap(hx_seccomp_notify, hx_seccomp_nnotify,
			       hx_seccomp_notify, hx_seccomp_nnotify, &first),
	    0);
	/* The exec gate's rows: execveat's AT_EMPTY_PATH deny row stays
	 * (a conditional ERRNO outranks USER_NOTIF), nothing else shared. */
	ck_assert_uint_eq(
	    hx_seccomp_overlap(hx_seccomp_notify_exec, hx_seccomp_nnotify_exec,
			       hx_seccomp_deny, hx_seccomp_ndeny, &first),
	    0);
	ck_assert_uint_eq(
	    hx_seccomp_overlap(hx_seccomp_notify_exec, hx_seccomp_nnotify_exec,
			       hx_seccomp_notify, hx_seccomp_nnotify, &first),
	    0);
	for (size_t i = 0; i < hx_seccomp_nnotify_exec; i++)
		ck_assert(hx_seccomp_notify_exec[i].action == HX_SC_NOTIFY);
	ck_assert_uint_gt(hx_seccomp_nnotify, 0);
	for (size_t i = 0; i < hx_seccomp_nnotify; i++)
		ck_assert_msg(hx_seccomp_notify[i].action == HX_SC_NOTIFY &&
				  hx_seccomp_notify[i].reason,
			      "%s is not a notify row",
			      hx_seccomp_notify[i].name);
	/* Every file mutation of issue 3 item 3 is on the notify list. */
	{
		static const char *const mut[] = {
		    "rename",	"renameat", "renameat2", "unlink",
		    "unlinkat", "rmdir",    "mkdir",	 "mkdirat",
		    "link",	"linkat",   "symlink",	 "symlinkat",
		    "truncate", "chmod",    "fchmodat",	 "fchmodat2",
		    "chown",	"lchown",   "fchownat"};

		for (size_t m = 0; m < sizeof(mut) / sizeof(*mut); m++) {
			bool found = false;

			for (size_t i = 0; i < hx_seccomp_nnotify; i++)
				found |=
				    !strcmp(hx_seccomp_notify[i].name, mut[m]);
			ck_assert_msg(found, "%s is not notified", mut[m]);
		}
	}
	for (size_t i = 0; i < hx_seccomp_ndeny; i++)
		ck_assert_msg(hx_seccomp_deny[i].reason &&
				  hx_seccomp_deny[i].reason[0],
			      "%s has no reason", hx_seccomp_deny[i].name);
}
END_TEST

/* The check must be able to fail: a conflict inside one list, and a
 * name on two lists (the future notify list against the deny list). */
START_TEST(overlap_finds_conflicts)
{
	static const struct hx_sc_rule bad[] = {
	    {"ptrace", HX_SC_ERRNO, EPERM, {{0}, {0}}, "x"},
	    {"ptrace", HX_SC_ERRNO, ENOSYS, {{0}, {0}}, "y"},
	};
	static const struct hx_sc_rule notify[] = {
	    {"openat", HX_SC_NOTIFY, 0, {{0}, {0}}, "decided"},
	    {"mount", HX_SC_NOTIFY, 0, {{0}, {0}}, "decided"},
	};
	const char *first;

	ck_assert_uint_eq(hx_seccomp_overlap(bad, 2, bad, 2, &first), 1);
	ck_assert_str_eq(first, "ptrace");
	ck_assert_uint_eq(hx_seccomp_overlap(notify, 2, hx_seccomp_deny,
					     hx_seccomp_ndeny, &first),
			  1);
	ck_assert_str_eq(first, "mount");
	ck_assert_uint_eq(hx_seccomp_overlap(notify, 1, hx_seccomp_deny,
					     hx_seccomp_ndeny, &first),
			  0);
}
END_TEST

static long do_fork(void)
{
	pid_t p = fork();

	if (p == 0)
		_exit(0);
	return p < 0 ? -1 : waitpid(p, NULL, 0) == p ? 0 : -1;
}
static long do_persona_query(void)
{
	return personality(0xffffffff) < 0 ? -1 : 0;
}
static long do_persona_linux(void)
{
	return personality(PER_LINUX);
}
static long do_persona_high(void)
{
	/* The kernel reads 32 bits: high garbage must not pass as 0. */
	return syscall(SYS_personality, 0x100000000L | READ_IMPLIES_EXEC);
}
static long do_plain_filter(void)
{
	struct sock_filter f = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog p = {1, &f};

	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p);
}
static long do_tiocsti_high(void)
{
	char c = 'x';

	return syscall(SYS_ioctl, 0, 0x100000000L | TIOCSTI, &c);
}
static long do_ioctl_other(void)
{
	int n;

	return ioctl(0, FIONREAD, &n) < 0 && errno == EPERM ? -1 : 0;
}
static long do_unshare_uts(void)
{
	/* Not a denied namespace: EPERM only for lack of CAP_SYS_ADMIN,
	 * which a root test run has. */
	return geteuid() ? 0 : unshare(CLONE_NEWUTS);
}
static long do_x32(void)
{
	return syscall(0x40000000L | __NR_getpid);
}
static long do_i386(void)
{
	long r;

	/* 24: getuid on the i386 table. */
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(24L) : "memory");
	return r < 0 ? -1 : 0;
}

static const struct {
	const char *name;
	call_fn fn;
	int want; /* exit code, or -signal */
} cases[] = {
    {"fork still works", do_fork, OK},
    {"personality query", do_persona_query, OK},
    {"personality PER_LINUX", do_persona_linux, OK},
    {"personality with high bits", do_persona_high, EPERM},
    {"seccomp filter without listener", do_plain_filter, OK},
    {"TIOCSTI with high bits", do_tiocsti_high, EPERM},
    {"other ioctl", do_ioctl_other, OK},
    {"unshare of another namespace", do_unshare_uts, OK},
    {"x32 syscall number", do_x32, -SIGSYS},
    {"i386 int 0x80", do_i386, -SIGSYS},
};

START_TEST(neighbours_and_abis)
{
	int got = exit_of(under_filter(cases[_i].fn));

	ck_assert_msg(got == cases[_i].want, "%s: got %d, want %d",
		      cases[_i].name, got, cases[_i].want);
}
END_TEST

static Suite *seccomp_suite(void)
{
	Suite *s = suite_create("seccomp");
	TCase *tc = tcase_create("deny");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, table_has_no_conflicts);
	tcase_add_test(tc, overlap_finds_conflicts);
	tcase_add_loop_test(tc, every_row_denies, 0, (int)hx_seccomp_ndeny);
	tcase_add_loop_test(tc, neighbours_and_abis, 0,
			    (int)(sizeof(cases) / sizeof(*cases)));
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(seccomp_suite)
