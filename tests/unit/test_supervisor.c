/* Supervisor: option parsing, paths, classification, formatting, the
 * loopback listeners, and the server in-process with a good and hostile
 * clients. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/netlink.h>

#include "policy/policy.h"
#include "common/wire.h"
#include "supervisor/audit.h"
#include "supervisor/correlate.h"
#include "supervisor/fmt.h"
#include "supervisor/loopback.h"
#include "supervisor/netfamily.h"
#include "supervisor/options.h"
#include "common/path.h"
#include "supervisor/pipeline.h"
#include "supervisor/path_resolve.h"
#include "supervisor/server.h"
#include "tests/unit/check_main.h"

/* ---- options ---- */

static const struct {
	const char *args; /* space separated, after argv[0] */
	int ok;
	const char *policy, *audit_log, *session, *cmd0;
	int mode, ncmd;
	bool quiet, verbose, help;
} opt_table[] = {
    {"-- ls -l", 1, NULL, NULL, NULL, "ls", -1, 2, 0, 0, 0},
    {"ls -l", 1, NULL, NULL, NULL, "ls", -1, 2, 0, 0, 0},
    {"--policy p.yaml --mode audit -- make", 1, "p.yaml", NULL, NULL, "make", 1,
     1, 0, 0, 0},
    {"--policy=p.yaml --mode=enforce true", 1, "p.yaml", NULL, NULL, "true", 0,
     1, 0, 0, 0},
    {"--audit-log /tmp/a.jsonl --session s1 -q -- sh -c x", 1, NULL,
     "/tmp/a.jsonl", "s1", "sh", -1, 3, 1, 0, 0},
    {"--verbose -- --weird", 1, NULL, NULL, NULL, "--weird", -1, 1, 0, 1, 0},
    {"ls --mode audit", 1, NULL, NULL, NULL, "ls", -1, 3, 0, 0, 0},
    {"--help", 1, NULL, NULL, NULL, NULL, -1, 0, 0, 0, 1},
    {.args = "", .ok = 0},
    {.args = "--", .ok = 0},
    {.args = "--mode", .ok = 0},
    {.args = "--mode bogus ls", .ok = 0},
    {.args = "--session a/b ls", .ok = 0},
    {.args = "--session .. ls", .ok = 0},
    {.args = "--session "
	     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	     " ls",
     .ok = 0},
    {.args = "--unknown ls", .ok = 0},
    {.args = "--policy= ls", .ok = 0},
    {.args = "--quiet --verbose ls", .ok = 0},
    {.args = "--policyx=a ls", .ok = 0},
};

START_TEST(options_table)
{
	char buf[512], *argv[32], err[256], *tok, *save;
	struct hx_options o;
	int argc = 0, r;

	snprintf(buf, sizeof(buf), "%s", opt_table[_i].args);
	argv[argc++] = (char *)"harness-exec";
	for (tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	r = hx_options_parse(argc, argv, &o, err, sizeof(err));
	if (!opt_table[_i].ok) {
		ck_assert_msg(r == -EINVAL, "'%s' parsed", opt_table[_i].args);
		ck_assert_msg(err[0], "'%s': no message", opt_table[_i].args);
		return;
	}
	ck_assert_msg(r == 0, "'%s': %s", opt_table[_i].args, err);
	ck_assert_int_eq(o.mode, opt_table[_i].mode);
	ck_assert_int_eq(o.ncmd, opt_table[_i].ncmd);
	ck_assert_int_eq(o.quiet, opt_table[_i].quiet);
	ck_assert_int_eq(o.verbose, opt_table[_i].verbose);
	ck_assert_int_eq(o.help, opt_table[_i].help);
	if (opt_table[_i].policy)
		ck_assert_str_eq(o.policy, opt_table[_i].policy);
	else
		ck_assert_ptr_null(o.policy);
	if (opt_table[_i].audit_log)
		ck_assert_str_eq(o.audit_log, opt_table[_i].audit_log);
	if (opt_table[_i].session)
		ck_assert_str_eq(o.session, opt_table[_i].session);
	if (opt_table[_i].cmd0)
		ck_assert_str_eq(o.cmd[0], opt_table[_i].cmd0);
	if (o.ncmd)
		ck_assert_ptr_null(o.cmd[o.ncmd]);
}
END_TEST

/* ---- paths ---- */

START_TEST(resolve_symlinks)
{
	char dir[] = "/tmp/hx-test-resolve-XXXXXX", p[PATH_MAX + 64];
	char q[PATH_MAX + 64], out[PATH_MAX], real[PATH_MAX];
	pid_t me = getpid();

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_ptr_nonnull(realpath(dir, real));
	snprintf(p, sizeof(p), "%s/secret", real);
	close(open(p, O_CREAT | O_WRONLY, 0600));
	snprintf(q, sizeof(q), "%s/link", real);
	ck_assert_int_eq(symlink(p, q), 0);
	snprintf(q, sizeof(q), "%s/rel", real);
	ck_assert_int_eq(symlink("secret", q), 0);
	snprintf(q, sizeof(q), "%s/dirlink", real);
	ck_assert_int_eq(symlink(real, q), 0);

	/* an absolute link, followed */
	snprintf(q, sizeof(q), "%s/link", real);
	ck_assert_int_eq(hx_path_resolve(me, 0, q, true, out, sizeof(out)), 0);
	ck_assert_str_eq(out, p);
	/* not followed when the op acts on the link itself */
	ck_assert_int_eq(hx_path_resolve(me, 0, q, false, out, sizeof(out)), 0);
	ck_assert_str_eq(out, q);
	/* relative link */
	snprintf(q, sizeof(q), "%s/rel", real);
	ck_assert_int_eq(hx_path_resolve(me, 0, q, true, out, sizeof(out)), 0);
	ck_assert_str_eq(out, p);
	/* a file not created yet under a linked dir */
	snprintf(q, sizeof(q), "%s/dirlink/new/deeper", real);
	ck_assert_int_eq(hx_path_resolve(me, 0, q, true, out, sizeof(out)), 0);
	snprintf(p, sizeof(p), "%s/new/deeper", real);
	ck_assert_str_eq(out, p);
	/* /proc/self is the agent's, and written back as /proc/self */
	ck_assert_int_eq(
	    hx_path_resolve(me, 0, "/proc/self/cwd", false, out, sizeof(out)),
	    0);
	ck_assert_str_eq(out, "/proc/self/cwd");
	/* what has no symlink is its own resolution (one lookup), an
	 * existing file and a name not made yet alike */
	snprintf(q, sizeof(q), "%s/secret", real);
	ck_assert_int_eq(hx_path_resolve(me, 0, q, true, out, sizeof(out)), 0);
	ck_assert_str_eq(out, q);
	snprintf(q, sizeof(q), "%s/not-yet", real);
	ck_assert_int_eq(hx_path_resolve(me, 0, q, true, out, sizeof(out)), 0);
	ck_assert_str_eq(out, q);
	/* "." and "//" are dropped as the walk drops them; a "." after a
	 * link is still the link's target */
	snprintf(q, sizeof(q), "%s/./secret", real);
	ck_assert_int_eq(hx_path_resolve(me, 0, q, false, out, sizeof(out)), 0);
	snprintf(p, sizeof(p), "%s/secret", real);
	ck_assert_str_eq(out, p);
	snprintf(q, sizeof(q), "%s//dirlink/./link", real);
	ck_assert_int_eq(hx_path_resolve(me, 0, q, true, out, sizeof(out)), 0);
	ck_assert_str_eq(out, p);
	/* "dirlink/." walks through dirlink, whatever the op says of its
	 * last name: the normalized "dirlink" is not it */
	snprintf(q, sizeof(q), "%s/dirlink/.", real);
	ck_assert_int_eq(hx_path_resolve(me, 0, q, false, out, sizeof(out)), 0);
	ck_assert_str_eq(out, real);
	snprintf(q, sizeof(q), "%s/dirlink/./", real);
	ck_assert_int_eq(hx_path_resolve(me, 0, q, false, out, sizeof(out)), 0);
	ck_assert_str_eq(out, real);
	/* a dangling link, last: a create makes what it names */
	snprintf(p, sizeof(p), "%s/dangling", real);
	snprintf(q, sizeof(q), "%s/made-through-the-link", real);
	ck_assert_int_eq(symlink(q, p), 0);
	ck_assert_int_eq(hx_path_resolve(me, 0, p, true, out, sizeof(out)), 0);
	ck_assert_str_eq(out, q);
	ck_assert_int_eq(hx_path_resolve(me, 0, p, false, out, sizeof(out)), 0);
	ck_assert_str_eq(out, p);
	/* a link in the middle of a name not made yet, and one in the
	 * directory of a name the op does not follow */
	snprintf(q, sizeof(q), "%s/dirlink/not-yet", real);
	ck_assert_int_eq(hx_path_resolve(me, 0, q, true, out, sizeof(out)), 0);
	snprintf(p, sizeof(p), "%s/not-yet", real);
	ck_assert_str_eq(out, p);
	snprintf(q, sizeof(q), "%s/dirlink/link", real);
	ck_assert_int_eq(hx_path_resolve(me, 0, q, false, out, sizeof(out)), 0);
	snprintf(p, sizeof(p), "%s/link", real);
	ck_assert_str_eq(out, p);
	/* ".." after a symlink goes up from where it led, as the kernel
	 * walks it (dirlink is the directory itself: dirlink/.. is its
	 * parent), not lexically */
	snprintf(q, sizeof(q), "%s/dirlink/../x", real);
	ck_assert_int_eq(hx_path_resolve(me, 0, q, true, out, sizeof(out)), 0);
	snprintf(p, sizeof(p), "%s", real);
	*strrchr(p, '/') = '\0';
	strcat(p, "/x");
	ck_assert_str_eq(out, p);
	/* and a path written with "." and "//" is walked, normalized */
	snprintf(q, sizeof(q), "%s//./secret", real);
	ck_assert_int_eq(hx_path_resolve(me, 0, q, true, out, sizeof(out)), 0);
	snprintf(p, sizeof(p), "%s/secret", real);
	ck_assert_str_eq(out, p);
	/* a loop */
	snprintf(q, sizeof(q), "%s/loop", real);
	ck_assert_int_eq(symlink(q, q), 0);
	ck_assert_int_eq(hx_path_resolve(me, 0, q, true, out, sizeof(out)),
			 -ELOOP);
	snprintf(q, sizeof(q), "rm -rf '%s'", real);
	ck_assert_int_eq(system(q), 0);
}
END_TEST

START_TEST(resolve_pipe_fd)
{
	int fds[2];
	char in[64], out[PATH_MAX];

	ck_assert_int_eq(pipe(fds), 0);
	snprintf(in, sizeof(in), "/proc/self/fd/%d", fds[1]);
	/* pipe:[N] names no file: the walk stops at the fd link. */
	ck_assert_int_eq(
	    hx_path_resolve(getpid(), 0, in, true, out, sizeof(out)), 0);
	ck_assert_str_eq(out, in);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

/* ---- families the policy does not name ---- */

static const struct {
	int family, proto;
	unsigned pid, groups;
	size_t len;  /* 0: the family's size */
	int decided; /* 0: left to the policy */
	enum hx_verdict v;
	const char *rule;
} fam_table[] = {
    {AF_NETLINK, NETLINK_ROUTE, 0, 0, 0, 1, HX_VERDICT_ALLOW,
     "harness:netlink-route"},
    {AF_NETLINK, NETLINK_ROUTE, 42, 0, 0, 1, HX_VERDICT_DENY,
     "harness:netlink-peer"},
    {AF_NETLINK, NETLINK_ROUTE, 0, 1, 0, 1, HX_VERDICT_DENY,
     "harness:netlink-multicast"},
    {AF_NETLINK, NETLINK_SOCK_DIAG, 0, 0, 0, 1, HX_VERDICT_DENY,
     "harness:netlink-protocol"},
    {AF_NETLINK, NETLINK_AUDIT, 0, 0, 0, 1, HX_VERDICT_DENY,
     "harness:netlink-protocol"},
    {AF_NETLINK, -1, 0, 0, 0, 1, HX_VERDICT_DENY, "harness:netlink-protocol"},
    {AF_NETLINK, NETLINK_ROUTE, 0, 0, 4, 0, 0, NULL}, /* short */
    {AF_UNSPEC, -1, 0, 0, 0, 1, HX_VERDICT_DENY, "harness:family"},
    {AF_PACKET, -1, 0, 0, 0, 1, HX_VERDICT_DENY, "harness:family"},
    {AF_VSOCK, -1, 0, 0, 0, 1, HX_VERDICT_DENY, "harness:family"},
    {AF_INET, -1, 0, 0, 0, 0, 0, NULL},
    {AF_INET6, -1, 0, 0, 0, 0, 0, NULL},
    {AF_UNIX, -1, 0, 0, 0, 0, 0, NULL},
};

START_TEST(netfamily_table)
{
	struct sockaddr_storage ss;
	struct sockaddr_nl *nl = (void *)&ss;
	struct hx_decision d = {.verdict = HX_VERDICT_ASK, .rule = "before"};
	size_t len = fam_table[_i].len ? fam_table[_i].len : sizeof(*nl);
	bool decided;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)fam_table[_i].family;
	if (fam_table[_i].family == AF_NETLINK) {
		nl->nl_pid = fam_table[_i].pid;
		nl->nl_groups = fam_table[_i].groups;
	}
	decided = hx_netfamily_decide(&ss, len, fam_table[_i].proto, &d);
	ck_assert_int_eq(decided, fam_table[_i].decided);
	if (!decided) {
		ck_assert_str_eq(d.rule, "before"); /* untouched */
		return;
	}
	ck_assert_int_eq(d.verdict, fam_table[_i].v);
	ck_assert_str_eq(d.rule, fam_table[_i].rule);
}
END_TEST

/* ---- formatting ---- */

START_TEST(format_values)
{
	char b[256];
	struct timespec ts = {1795938000, 123456789};

	ck_assert_str_eq(
	    hx_fmt_open_flags(O_WRONLY | O_CREAT | O_TRUNC, b, sizeof(b)),
	    "O_WRONLY|O_CREAT|O_TRUNC");
	ck_assert_str_eq(hx_fmt_open_flags(O_RDONLY | O_CLOEXEC, b, sizeof(b)),
			 "O_RDONLY|O_CLOEXEC");
	ck_assert_str_eq(hx_fmt_mode(0644, b, sizeof(b)), "0644");
	ck_assert_str_eq(hx_fmt_time(&ts, b, sizeof(b)),
			 "2026-11-29T07:40:00.123456Z");
}
END_TEST

/* Bytes that are not UTF-8 are escaped so they can be read back, never
 * dropped: (input, valid, escaped form). */
static const struct {
	const char *in;
	bool valid;
	const char *out;
} esc_table[] = {
    {"plain", true, "plain"},
    {"\xc3\xa9t\xc3\xa9", true, "\xc3\xa9t\xc3\xa9"},
    {"a\xff", false, "a\\xff"},
    {"\xe9t\xe9", false, "\\xe9t\\xe9"},
    {"back\\slash\xfe", false, "back\\\\slash\\xfe"},
    {"\xc0\xaf", false, "\\xc0\\xaf"},		/* overlong '/' */
    {"\xed\xa0\x80", false, "\\xed\\xa0\\x80"}, /* surrogate */
    {"\xf4\x90\x80\x80", false, "\\xf4\\x90\\x80\\x80"},
    {"\xe2\x82", false, "\\xe2\\x82"}, /* cut short */
    {"\xf0\x9f\x98\x80", true, "\xf0\x9f\x98\x80"},
};

START_TEST(escape_table)
{
	char b[64];
	size_t n = hx_fmt_escape_bytes(esc_table[_i].in, b, sizeof(b));

	ck_assert_int_eq(hx_utf8_valid(esc_table[_i].in), esc_table[_i].valid);
	if (esc_table[_i].valid)
		return; /* written as is: never escaped */
	ck_assert_str_eq(b, esc_table[_i].out);
	ck_assert_uint_eq(n, strlen(esc_table[_i].out));
	/* Too small a buffer: cut, terminated, the length still told. */
	ck_assert_uint_eq(hx_fmt_escape_bytes(esc_table[_i].in, b, 3), n);
	ck_assert_uint_eq(strlen(b), 2);
}
END_TEST

/* ---- loopback (loopback.h) ---- */

static const struct {
	const char *url;
	bool ok;
	const char *addr; /* as inet_pton's, of the family it parses as */
	unsigned port;
	bool localhost;
} ep_table[] = {
    {"http://127.0.0.1:8080/v1", true, "127.0.0.1", 8080, false},
    {"https://127.0.0.2/", true, "127.0.0.2", 443, false},
    {"http://127.9.9.9", true, "127.9.9.9", 80, false},
    {"HTTP://localhost:3000", true, "127.0.0.1", 3000, true},
    {"http://user:pw@localhost:9/x", true, "127.0.0.1", 9, true},
    {"http://[::1]:4000/v1", true, "::1", 4000, false},
    {"https://[::ffff:127.0.0.1]", true, "127.0.0.1", 443, false},
    {"http://localhost:/", true, "127.0.0.1", 80, true},
    {"https://api.anthropic.com", false, NULL, 0, false},
    {"http://10.0.0.1:80", false, NULL, 0, false},
    {"http://[::2]:80", false, NULL, 0, false},
    {"http://127.0.0.1:0", false, NULL, 0, false},
    {"http://127.0.0.1:65536", false, NULL, 0, false},
    {"http://127.0.0.1:80x", false, NULL, 0, false},
    {"ftp://127.0.0.1:21", false, NULL, 0, false},
    {"127.0.0.1:8080", false, NULL, 0, false},
    {"http://[::1", false, NULL, 0, false},
    {"", false, NULL, 0, false},
};

START_TEST(endpoint_table)
{
	struct hx_endpoint ep;
	unsigned char want[16] = {0};
	bool ok = hx_endpoint_parse(ep_table[_i].url, &ep);

	ck_assert_msg(ok == ep_table[_i].ok, "%s", ep_table[_i].url);
	if (!ok)
		return;
	ck_assert_uint_eq(ep.at.port, ep_table[_i].port);
	ck_assert(ep.localhost == ep_table[_i].localhost);
	ck_assert_int_eq(inet_pton(ep.at.family, ep_table[_i].addr, want), 1);
	ck_assert(!memcmp(ep.at.addr, want, ep.at.family == AF_INET ? 4 : 16));
}
END_TEST

static bool holds_yes(void *arg, pid_t self, const unsigned long *inos,
		      size_t n)
{
	const unsigned long *want = arg;

	(void)self;
	for (size_t i = 0; i < n; i++)
		if (inos[i] != *want)
			return false;
	return n > 0;
}

START_TEST(loopback_listeners)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
	socklen_t sl = sizeof(sa);
	struct hx_ipaddr d;
	struct hx_endpoints e = {0};
	unsigned long inos[4], mine, other = 1;
	const char *var;
	struct stat st;
	int l = socket(AF_INET, SOCK_STREAM, 0), n;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert(!bind(l, (struct sockaddr *)&sa, sizeof(sa)) &&
		  !listen(l, 1));
	ck_assert(!getsockname(l, (struct sockaddr *)&sa, &sl) &&
		  !fstat(l, &st));
	mine = st.st_ino;
	ck_assert(hx_loopback_addr(&sa, sizeof(sa), &d));
	n = hx_loopback_sockets(&d, IPPROTO_TCP, inos, 4);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(inos[0], mine);
	ck_assert_int_eq(hx_loopback_sockets(&d, IPPROTO_UDP, inos, 4), 0);
	ck_assert_int_eq(hx_loopback_judge(&d, IPPROTO_TCP, true, getpid(),
					   holds_yes, &mine, NULL, &var),
			 HX_LB_OWN);
	ck_assert_int_eq(hx_loopback_judge(&d, -1, true, getpid(), holds_yes,
					   &other, NULL, &var),
			 HX_LB_OTHER);
	ck_assert_int_eq(hx_loopback_judge(&d, IPPROTO_TCP, true, getpid(),
					   NULL, NULL, NULL, &var),
			 HX_LB_OTHER);
	/* the IPv4-mapped form is the same destination; 127.0.0.2 not */
	s6.sin6_port = sa.sin_port;
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &s6.sin6_addr);
	ck_assert(hx_loopback_addr(&s6, sizeof(s6), &d) && d.family == AF_INET);
	ck_assert_int_eq(hx_loopback_sockets(&d, IPPROTO_TCP, inos, 4), 1);
	d.addr[3] = 2;
	ck_assert_int_eq(hx_loopback_sockets(&d, IPPROTO_TCP, inos, 4), 0);
	ck_assert_int_eq(hx_loopback_judge(&d, IPPROTO_TCP, true, getpid(),
					   holds_yes, &mine, NULL, &var),
			 HX_LB_NOTHING);
	ck_assert_int_eq(hx_loopback_judge(&d, IPPROTO_TCP, false, getpid(),
					   holds_yes, &mine, NULL, &var),
			 HX_LB_OTHER);
	/* the model endpoint: localhost is ::1 too */
	ck_assert(hx_endpoint_parse("http://localhost:7", &e.v[0]));
	e.v[0].var = "X_BASE_URL";
	e.n = 1;
	inet_pton(AF_INET6, "::1", &s6.sin6_addr);
	s6.sin6_port = htons(7);
	ck_assert(hx_loopback_addr(&s6, sizeof(s6), &d));
	ck_assert_str_eq(hx_endpoints_match(&e, &d), "X_BASE_URL");
	d.port = 8;
	ck_assert_ptr_null(hx_endpoints_match(&e, &d));
	sa.sin_addr.s_addr = htonl(0x0a000001);
	ck_assert(!hx_loopback_addr(&sa, sizeof(sa), &d));
	close(l);
}
END_TEST

/* ---- the server, in process ---- */

static char sdir[64], sock[128], logpath[128];
static struct hx_policy *policy;
static struct hx_audit *audit;
static struct hx_pipeline pl;
static struct hx_server *srv;
static pthread_t thr;
static volatile int stop;

static void *serve(void *arg)
{
	(void)arg;
	hx_server_lock(srv); /* this thread is the loop's now */
	while (!stop)
		hx_server_run_once(srv, 20);
	hx_server_unlock(srv);
	return NULL;
}

static void server_up(enum hx_mode mode)
{
	struct hx_policy_vars vars = {0};
	struct hx_policy_error err;
	char buf[512];

	strcpy(sdir, "/tmp/hx-test-srv-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(sdir));
	snprintf(sock, sizeof(sock), "%s/sock", sdir);
	snprintf(logpath, sizeof(logpath), "%s/audit.jsonl", sdir);
	vars.home = "/home/hx-test";
	vars.cwd = vars.worktree = sdir;
	vars.tmpdir = sdir;
	vars.session = "test";
	ck_assert_msg(hx_policy_load_default(&vars, &policy, &err) == 0, "%s",
		      hx_policy_error_format(&err, buf, sizeof(buf)));
	ck_assert_int_eq(hx_audit_open(logpath, &audit), 0);
	memset(&pl, 0, sizeof(pl));
	pl.policy = policy;
	pl.audit = audit;
	pl.session = "test";
	pl.mode = mode;
	ck_assert_int_eq(hx_server_new(&pl, &srv), 0);
	ck_assert_int_eq(hx_server_listen(srv, sock), 0);
	hx_server_unlock(srv); /* for the serving thread */
	stop = 0;
	ck_assert_int_eq(pthread_create(&thr, NULL, serve, NULL), 0);
}

static void server_down(void)
{
	stop = 1;
	pthread_join(thr, NULL);
}

static void server_free(void)
{
	hx_server_lock(srv);
	hx_server_free(srv);
	hx_audit_close(audit);
	hx_policy_free(policy);
	unlink(sock);
	unlink(logpath);
	rmdir(sdir);
}

static int client(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {5, 0};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	strcpy(sa.sun_path, sock);
	ck_assert_int_eq(connect(fd, (void *)&sa, sizeof(sa)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static struct hx_msg reply;

/* Sends a write request for path; returns the verdict (-1: no reply). */
static int ask_write(int fd, const char *path, uint32_t id)
{
	uint8_t b[1024];
	struct hx_wbuf w;
	ssize_t n;
	size_t len;

	hx_wire_begin(&w, b, sizeof(b), HX_MSG_REQUEST, id);
	hx_wire_put_u32(&w, HX_TAG_PID, (uint32_t)getpid());
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPENAT);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hx_wire_put_str(&w, HX_TAG_PATH, path);
	hx_wire_put_u32(&w, HX_TAG_FLAGS, O_WRONLY | O_CREAT);
	len = hx_wire_finish(&w);
	if (send(fd, b, len, MSG_NOSIGNAL) != (ssize_t)len)
		return -1;
	n = recv(fd, b, sizeof(b), 0);
	if (n <= 0 || hx_wire_decode(b, (size_t)n, &reply) ||
	    reply.hdr.type != HX_MSG_VERDICT || reply.hdr.id != id)
		return -1;
	return (int)reply.verdict;
}

/* A hostile client is cut off: recv gets EOF. */
static void expect_closed(int fd)
{
	char b[16];

	ck_assert_int_eq(recv(fd, b, sizeof(b), 0), 0);
	close(fd);
}

START_TEST(server_good_and_hostile)
{
	int good, bad, i;
	uint8_t b[256];
	static uint8_t big[70000];
	struct hx_wbuf w;
	size_t len;
	char path[256];
	struct hx_server_stats st;
	struct hx_audit_verify v;

	server_up(HX_MODE_ENFORCE);
	good = client();

	/* HELLO -> HELLO_REPLY with the session and read rules */
	hx_wire_begin(&w, b, sizeof(b), HX_MSG_HELLO, 1);
	hx_wire_put_u32(&w, HX_TAG_PID, (uint32_t)getpid());
	hx_wire_put_str(&w, HX_TAG_ARG, "test");
	len = hx_wire_finish(&w);
	ck_assert_int_eq(send(good, b, len, 0), (ssize_t)len);
	{
		static uint8_t rb[HX_WIRE_MAX];
		ssize_t n = recv(good, rb, sizeof(rb), 0);

		ck_assert_int_gt(n, 0);
		ck_assert_int_eq(hx_wire_decode(rb, (size_t)n, &reply), 0);
		ck_assert_uint_eq(reply.hdr.type, HX_MSG_HELLO_REPLY);
		ck_assert_str_eq(reply.session.s, "test");
		ck_assert(reply.flags & HX_HELLO_LOCAL_READS);
		ck_assert_uint_gt(reply.nrules, 0);
	}
	snprintf(path, sizeof(path), "%s/ok.txt", sdir);
	ck_assert_int_eq(ask_write(good, path, 2), HX_VERDICT_ALLOW);
	ck_assert_int_eq(ask_write(good, "/etc/hx-denied", 3), HX_VERDICT_DENY);
	ck_assert_uint_eq(reply.err, EACCES);
	ck_assert_str_eq(reply.rule.s, "default:file_write");
	ck_assert_uint_gt(reply.seq, 0);

	/* garbage */
	bad = client();
	ck_assert_int_eq(send(bad, "garbage!", 8, 0), 8);
	expect_closed(bad);
	ck_assert_int_eq(ask_write(good, path, 4), HX_VERDICT_ALLOW);

	/* truncated: a valid request cut short */
	bad = client();
	hx_wire_begin(&w, b, sizeof(b), HX_MSG_REQUEST, 9);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPEN);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	len = hx_wire_finish(&w);
	ck_assert_int_eq(send(bad, b, len - 3, 0), (ssize_t)len - 3);
	expect_closed(bad);
	ck_assert_int_eq(ask_write(good, path, 5), HX_VERDICT_ALLOW);

	/* oversized: > 64 KiB */
	bad = client();
	memset(big, 0, sizeof(big));
	ck_assert_int_eq(send(bad, big, sizeof(big), 0), (ssize_t)sizeof(big));
	expect_closed(bad);
	ck_assert_int_eq(ask_write(good, path, 6), HX_VERDICT_ALLOW);

	/* wrong type: a VERDICT from a client */
	bad = client();
	hx_wire_begin(&w, b, sizeof(b), HX_MSG_VERDICT, 1);
	hx_wire_put_u32(&w, HX_TAG_VERDICT, HX_VERDICT_ALLOW);
	len = hx_wire_finish(&w);
	ck_assert_int_eq(send(bad, b, len, 0), (ssize_t)len);
	expect_closed(bad);

	/* a relative path is judged as no path: denied */
	ck_assert_int_eq(ask_write(good, "relative.txt", 7), HX_VERDICT_DENY);
	for (i = 0; i < 50; i++)
		ck_assert_int_eq(ask_write(good, path, 100 + (uint32_t)i),
				 HX_VERDICT_ALLOW);
	close(good);
	server_down();
	hx_server_stats(srv, &st);
	ck_assert_uint_eq(st.protocol_errors, 4);
	ck_assert_uint_eq(st.conns_accepted, 5);
	hx_audit_sync(audit);
	ck_assert_int_eq(hx_audit_verify(logpath, &v), 0);
	/* 1 hello + 56 decisions + 4 protocol errors */
	ck_assert_uint_eq(v.records, 61);
	server_free();
}
END_TEST

START_TEST(server_forked_sender_is_identified)
{
	int fd, st;
	pid_t child;
	FILE *f;
	char *line = NULL, want[64];
	size_t cap = 0;
	bool found = false;

	server_up(HX_MODE_AUDIT);
	fd = client();
	/* A child sharing the connection: the kernel, not SO_PEERCRED or
	 * the message, says who sent it. */
	child = fork();
	if (child == 0)
		_exit(ask_write(fd, "/etc/hx-audit-mode", 1) == HX_VERDICT_ALLOW
			  ? 0
			  : 1);
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	ck_assert_int_eq(WEXITSTATUS(st), 0); /* audit mode: allowed */
	close(fd);
	server_down();
	hx_audit_sync(audit);
	snprintf(want, sizeof(want), "\"pid\":%d,", (int)child);
	f = fopen(logpath, "r");
	while (getline(&line, &cap, f) > 0)
		if (strstr(line, "/etc/hx-audit-mode") && strstr(line, want) &&
		    strstr(line, "\"verdict\":\"deny\",\"enforced\":false"))
			found = true;
	free(line);
	fclose(f);
	if (!found) {
		char c[256];
		snprintf(c, sizeof(c), "cat %s >&2", logpath);
		ck_assert_int_ge(system(c), 0);
	}
	ck_assert_msg(found, "no record of the child's request as its pid");
	server_free();
}
END_TEST

START_TEST(server_drops_client_not_reading)
{
	int fd, i;
	uint8_t b[512];
	struct hx_wbuf w;
	size_t len;
	struct hx_server_stats st;

	server_up(HX_MODE_ENFORCE);
	fd = client();
	hx_wire_begin(&w, b, sizeof(b), HX_MSG_REQUEST, 1);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPEN);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_WRITE);
	hx_wire_put_str(&w, HX_TAG_PATH, "/etc/x");
	len = hx_wire_finish(&w);
	/* Keep sending, never reading, until the server gives up on us. */
	for (i = 0; i < 4000; i++) {
		if (send(fd, b, len, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
			continue;
		if (errno != EAGAIN)
			break;
		usleep(1000);
	}
	ck_assert_int_lt(i, 4000);
	usleep(100000);
	server_down();
	hx_server_stats(srv, &st);
	ck_assert_uint_eq(st.conns_open, 0);
	ck_assert_uint_eq(st.protocol_errors, 1);
	close(fd);
	server_free();
}
END_TEST

/* ---- correlation keys ---- */

/* The key is the object's, what else the record shows of the call
 * (detail), and, for an exec, every string's, with their boundaries: a
 * claim of one argv, or of one second path, never stands for another. */
START_TEST(correlate_keys)
{
	static const char *const innocent[] = {"echo", "innocent"},
				 *const evil[] = {"echo", "EVIL"},
				 *const joined[] = {"echoinnocent"},
				 *const empty[] = {""};
	struct hx_corr_key k[] = {
	    hx_correlate_key("/bin/echo", "", NULL, 0),
	    hx_correlate_key("/bin/echo", "", innocent, 2),
	    hx_correlate_key("/bin/echo", "", evil, 2),
	    hx_correlate_key("/bin/echo", "", joined, 1),
	    hx_correlate_key("/bin/echo", "", empty, 1),
	    hx_correlate_key("/bin/echoecho", "", NULL, 0),
	    hx_correlate_key("/bin/ech", "", NULL, 0),
	    hx_correlate_key("/p/l", "0 0 0 0 README", NULL, 0),
	    hx_correlate_key("/p/l", "0 0 0 0 /root/.ssh/id_rsa", NULL, 0),
	    hx_correlate_key("/p/l", "0 0 0 0 ", evil, 2),
	};
	struct hx_corr_key again =
	    hx_correlate_key("/bin/echo", "", innocent, 2);

	for (size_t i = 0; i < sizeof(k) / sizeof(*k); i++)
		for (size_t j = i + 1; j < sizeof(k) / sizeof(*k); j++)
			ck_assert_msg(!hx_corr_key_eq(&k[i], &k[j]),
				      "keys %zu and %zu", i, j);
	ck_assert(hx_corr_key_eq(&k[1], &again));
}
END_TEST

static Suite *supervisor_suite(void)
{
	Suite *s = suite_create("supervisor");
	TCase *tc = tcase_create("units"), *ts = tcase_create("server");

	tcase_add_loop_test(tc, options_table, 0,
			    (int)(sizeof(opt_table) / sizeof(opt_table[0])));
	tcase_add_test(tc, resolve_symlinks);
	tcase_add_test(tc, resolve_pipe_fd);
	tcase_add_loop_test(tc, netfamily_table, 0,
			    (int)(sizeof(fam_table) / sizeof(fam_table[0])));
	tcase_add_test(tc, format_values);
	tcase_add_loop_test(tc, escape_table, 0,
			    sizeof(esc_table) / sizeof(*esc_table));
	tcase_add_loop_test(tc, endpoint_table, 0,
			    sizeof(ep_table) / sizeof(*ep_table));
	tcase_add_test(tc, loopback_listeners);
	tcase_add_test(tc, correlate_keys);
	tcase_set_timeout(tc, 60);
	tcase_set_timeout(ts, 30);
	tcase_add_test(ts, server_good_and_hostile);
	tcase_add_test(ts, server_forked_sender_is_identified);
	tcase_add_test(ts, server_drops_client_not_reading);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, ts);
	return s;
}

HX_TEST_MAIN(supervisor_suite)
