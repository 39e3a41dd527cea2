/* Policy engine: table-driven (policy, event, expected verdict, rule),
 * load errors with their line and column, the default policy. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <errno.h>

#include "policy/policy.h"
#include "tests/unit/check_main.h"
#include "tests/unit/policy_vars.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static struct hx_policy *load(const char *yaml, const struct hx_policy_vars *v)
{
	struct hx_policy_error err;
	struct hx_policy *p = NULL;
	char buf[1024];
	int ret =
	    hx_policy_load_buffer("t.yaml", yaml, strlen(yaml), v, &p, &err);

	ck_assert_msg(ret == 0, "load failed: %s",
		      hx_policy_error_format(&err, buf, sizeof(buf)));
	return p;
}

/* ---- decisions ---- */

static const char p_files[] = "version: 1\n"
			      "files:\n"
			      "  - id: allow-proj\n"
			      "    access: write\n"
			      "    allow: \"$CWD/**\"\n"
			      "  - id: ask-src\n"
			      "    access: write\n"
			      "    ask: \"$CWD/src/**\"\n"
			      "  - id: deny-secret\n"
			      "    deny: \"$CWD/src/secret/**\"\n"
			      "  - id: allow-specific\n"
			      "    access: write\n"
			      "    allow: \"$CWD/src/secret/ok.txt\"\n"
			      "  - id: read-deny\n"
			      "    access: read\n"
			      "    deny: \"$HOME/private/**\"\n"
			      "  - id: spec-short\n"
			      "    allow: /data/**\n"
			      "  - id: spec-long\n"
			      "    allow: /data/sub/**\n"
			      "  - id: tmp\n"
			      "    access: write\n"
			      "    allow: $TMPDIR/**\n"
			      "  - id: wt\n"
			      "    access: write\n"
			      "    allow: $WORKTREE/build/**\n"
			      "  - id: sess\n"
			      "    access: write\n"
			      "    allow: /sessions/${SESSION}/**\n"
			      "  - access: write\n"
			      "    allow: /noid/**\n"
			      "  - id: exact\n"
			      "    access: write\n"
			      "    allow: /home/u/go\n";

static const char p_access[] =
    "defaults: {file_read: allow, file_write: allow}\n"
    "files:\n"
    "  - {id: r, access: read, deny: /r/**}\n"
    "  - {id: w, access: write, deny: /w/**}\n"
    "  - {id: a, access: any, deny: /a/**}\n"
    "  - {id: d, deny: /d/**}\n";

static const char p_exec[] = "defaults:\n"
			     "  exec: deny\n"
			     "exec:\n"
			     "  - id: git-push\n"
			     "    deny: \"git push *\"\n"
			     "  - id: git-any\n"
			     "    allow: \"git *\"\n"
			     "  - id: git-status-exact\n"
			     "    ask: \"git status\"\n"
			     "  - id: local-tool\n"
			     "    deny: \"/opt/tools/** *\"\n"
			     "  - id: rm-rf\n"
			     "    deny: \"rm -rf /\"\n"
			     "  - id: py\n"
			     "    ask: [\"python* -c *\"]\n"
			     "  - id: ls-any\n"
			     "    allow: \"ls *\"\n"
			     "  - id: ls-la\n"
			     "    allow: \"ls -la *\"\n"
			     "  - id: in-cwd\n"
			     "    allow: \"$CWD/scripts/*.sh *\"\n";

static const char p_net[] =
    "defaults:\n"
    "  net_connect: deny\n"
    "  net_send: deny\n"
    "  net_resolve: deny\n"
    "network:\n"
    "  - {id: lo4, allow: \"127.0.0.0/8:*\"}\n"
    "  - {id: lo6, allow: \"[::1]:*\"}\n"
    "  - {id: ula, ask: \"[fd00::/8]:1000-2000\"}\n"
    "  - {id: api, allow: \"api.example.com:443\"}\n"
    "  - {id: wild, allow: \"*.example.org:443\"}\n"
    "  - {id: web-range, allow: \"10.1.0.0/16:8000-8999\"}\n"
    "  - {id: web-exact, allow: \"10.1.2.3:8080\"}\n"
    "  - {id: any-dns, allow: \"*:53\"}\n"
    "  - {id: bad-host, deny: \"evil.example.com:*\"}\n"
    "  - {id: sock, allow: [\"unix:/run/**\", \"unix:@myapp-*\", "
    "\"unix:$TMPDIR/**\"]}\n"
    "  - {id: sock-deny, deny: \"unix:/run/secret.sock\"}\n";

struct dcase {
	const char *policy;
	const char *event;
	enum hx_verdict verdict;
	const char *rule;
};

#define A HX_VERDICT_ALLOW
#define Q HX_VERDICT_ASK
#define D HX_VERDICT_DENY

static const struct dcase dcases[] = {
    /* precedence deny > ask > allow, whatever the specificity */
    {p_files, "write /work/proj/a.c", A, "allow-proj"},
    {p_files, "write /work/proj/src/x.c", Q, "ask-src"},
    {p_files, "write /work/proj/src/secret/ok.txt", D, "deny-secret"},
    {p_files, "read /work/proj/src/secret/k", D, "deny-secret"},
    {p_files, "read /work/proj/src/x.c", A, "default:file_read"},
    {p_files, "write /etc/x", D, "default:file_write"},
    {p_files, "read /home/u/private/a", D, "read-deny"},
    /* specificity among rules of the winning verdict */
    {p_files, "read /data/sub/x", A, "spec-long"},
    {p_files, "read /data/y", A, "spec-short"},
    {p_files, "write /work/proj/build/o", A, "wt"},
    /* variables */
    {p_files, "write /tmp/hx-s1/x", A, "tmp"},
    {p_files, "write /tmp/hx-s2/x", D, "default:file_write"},
    {p_files, "write /sessions/s1/x", A, "sess"},
    {p_files, "write /noid/x", A, "t.yaml:30"},
    /* other mutations are writes */
    {p_files, "unlink /work/proj/src/a", Q, "ask-src"},
    {p_files, "mkdir /work/proj/d", A, "allow-proj"},
    {p_files, "rmdir /etc/d", D, "default:file_write"},
    {p_files, "truncate /work/proj/src/secret/x", D, "deny-secret"},
    {p_files, "symlink /etc/passwd /work/proj/l", A, "allow-proj"},
    /* rename: both ends are writes, the strongest wins */
    {p_files, "rename /work/proj/a /etc/b", D, "default:file_write"},
    {p_files, "rename /etc/b /work/proj/a", D, "default:file_write"},
    {p_files, "rename /work/proj/a /work/proj/src/secret/b", D, "deny-secret"},
    {p_files, "rename /work/proj/a /work/proj/src/b", Q, "ask-src"},
    {p_files, "rename /work/proj/a /work/proj/b", A, "allow-proj"},
    /* a directory rename moves what is beneath: refused when a deny
     * or ask pattern may match there and the move changes it */
    {p_files, "rename /work/proj/src /work/proj/s2", D, "deny-secret"},
    {p_files, "rename /work/proj/lib /work/proj/src", D, "deny-secret"},
    {p_files, "rename /work/proj /work/proj2", D, "harness:protect"},
    {p_files, "rename /work/proj/lib /work/proj/lib2", A, "allow-proj"},
    /* ...and what lands beneath, or leaves, must be writable: a
     * directory allowed by its own name only takes none beneath it */
    {p_files, "rename /work/proj/d /home/u/go", D, "default:file_write"},
    {p_files, "rename /home/u/go /work/proj/g", D, "default:file_write"},
    {p_files, "mkdir /home/u/go", A, "exact"},
    {p_files, "rename /work/proj/d /data/sub/x", A, "allow-proj"},
    {p_files, "rename /tmp/hx-s1/d /work/proj/lib/d", A, "tmp"},
    /* link: the existing file is read AND written through the new
     * name, so it must be both readable and writable */
    {p_files, "link /home/u/private/a /work/proj/x", D, "read-deny"},
    {p_files, "link /work/proj/y /work/proj/x", A, "allow-proj"},
    {p_files, "link /work/proj/y /etc/x", D, "default:file_write"},
    {p_files, "link /etc/hostname /work/proj/x", D, "default:file_write"},
    /* protect beats every rule, reads included */
    {p_files, "write /work/proj/.harness/audit.log", D, "harness:protect"},
    {p_files, "read /work/proj/.harness/audit.log", D, "harness:protect"},
    {p_files, "rename /work/proj/a /work/proj/.harness/x", D,
     "harness:protect"},

    /* access read / write / any (default any) */
    {p_access, "read /r/x", D, "r"},
    {p_access, "write /r/x", A, "default:file_write"},
    {p_access, "read /w/x", A, "default:file_read"},
    {p_access, "write /w/x", D, "w"},
    {p_access, "read /a/x", D, "a"},
    {p_access, "write /a/x", D, "a"},
    {p_access, "read /d/x", D, "d"},
    {p_access, "unlink /d/x", D, "d"},

    /* exec: argv prefix rules */
    {p_exec, "exec /usr/bin/git push origin main", D, "git-push"},
    {p_exec, "exec /usr/bin/git push origin feature/x", D, "git-push"},
    {p_exec, "exec /usr/bin/git push", D, "git-push"},
    {p_exec, "exec /usr/bin/git status", Q, "git-status-exact"},
    {p_exec, "exec /usr/bin/git status -s", A, "git-any"},
    {p_exec, "exec /usr/bin/git", A, "git-any"},
    {p_exec, "exec /usr/local/bin/gitx push", D, "default:exec"},
    {p_exec, "exec /opt/tools/bin/deploy x", D, "local-tool"},
    {p_exec, "exec /opt/tools/deploy", D, "local-tool"},
    {p_exec, "exec /usr/bin/deploy", D, "default:exec"},
    {p_exec, "exec /bin/rm -rf /", D, "rm-rf"},
    {p_exec, "exec /bin/rm -rf /tmp", D, "default:exec"},
    {p_exec, "exec /bin/rm -rf / x", D, "default:exec"},
    {p_exec, "exec /usr/bin/python3 -c print(1)", Q, "py"},
    {p_exec, "exec /usr/bin/python3 x.py", D, "default:exec"},
    {p_exec, "exec /bin/ls -la /tmp", A, "ls-la"},
    {p_exec, "exec /bin/ls /tmp", A, "ls-any"},
    {p_exec, "exec /work/proj/scripts/build.sh", A, "in-cwd"},
    {p_exec, "exec /work/other/scripts/build.sh", D, "default:exec"},

    /* network: CIDR v4 / v6, ports, names, *.domain, unix */
    {p_net, "connect 127.0.0.1:80", A, "lo4"},
    {p_net, "connect 127.255.0.1:1", A, "lo4"},
    {p_net, "connect 128.0.0.1:80", D, "default:net_connect"},
    {p_net, "connect [::1]:22", A, "lo6"},
    {p_net, "connect [::2]:22", D, "default:net_connect"},
    {p_net, "connect [fd12::1]:1500", Q, "ula"},
    {p_net, "connect [fd12::1]:1000", Q, "ula"},
    {p_net, "connect [fd12::1]:2001", D, "default:net_connect"},
    {p_net, "connect [fe80::1]:1500", D, "default:net_connect"},
    {p_net, "connect api.example.com:443", A, "api"},
    {p_net, "connect API.Example.COM:443", A, "api"},
    {p_net, "connect api.example.com:80", D, "default:net_connect"},
    {p_net, "connect www.example.org:443", A, "wild"},
    {p_net, "connect a.b.example.org:443", A, "wild"},
    {p_net, "connect example.org:443", D, "default:net_connect"},
    {p_net, "connect badexample.org:443", D, "default:net_connect"},
    {p_net, "connect 10.1.2.3:8080", A, "web-exact"},
    {p_net, "connect 10.1.9.9:8500", A, "web-range"},
    {p_net, "connect 10.2.0.1:8500", D, "default:net_connect"},
    {p_net, "connect 8.8.8.8:53", A, "any-dns"},
    {p_net, "send 8.8.8.8:53", A, "any-dns"},
    {p_net, "send 8.8.8.8:54", D, "default:net_send"},
    {p_net, "connect evil.example.com:53", D, "bad-host"},
    {p_net, "connect unix:/run/x.sock", A, "sock"},
    {p_net, "connect unix:/run/secret.sock", D, "sock-deny"},
    {p_net, "connect unix:/tmp/hx-s1/s", A, "sock"},
    {p_net, "connect unix:@myapp-1", A, "sock"},
    {p_net, "connect unix:@other", D, "default:net_connect"},
    {p_net, "connect unix:/tmp/x", D, "default:net_connect"},
    /* resolve: the host part only */
    {p_net, "resolve api.example.com", A, "api"},
    {p_net, "resolve evil.example.com", D, "bad-host"},
    {p_net, "resolve example.org", A, "any-dns"},
};

static void split(const char *s, char *buf, size_t size, char **words, int *n)
{
	snprintf(buf, size, "%s", s);
	*n = 0;
	for (char *w = strtok(buf, " "); w; w = strtok(NULL, " "))
		words[(*n)++] = w;
}

START_TEST(test_decide_table)
{
	const struct dcase *c = &dcases[_i];
	struct hx_policy *p = load(c->policy, &vars);
	struct hx_event_storage st;
	struct hx_decision d;
	struct hx_event ev;
	char buf[512], err[256], *words[32];
	int n;

	split(c->event, buf, sizeof(buf), words, &n);
	ck_assert_msg(hx_event_parse(n, words, &ev, &st, err, sizeof(err)) == 0,
		      "%s: %s", c->event, err);
	hx_policy_decide(p, &ev, &d);
	ck_assert_msg(d.verdict == c->verdict && !strcmp(d.rule, c->rule),
		      "%s: got %s by %s (pattern %s), want %s by %s", c->event,
		      hx_verdict_name(d.verdict), d.rule,
		      d.pattern ? d.pattern : "-", hx_verdict_name(c->verdict),
		      c->rule);
	ck_assert_int_eq(d.category, hx_op_category(ev.op));
	ck_assert(d.pattern != NULL || !strncmp(d.rule, "default:", 8));
	hx_policy_free(p);
}
END_TEST

/* Events the string syntax cannot express: addresses with names, mapped
 * IPv4, odd families and missing fields. */
START_TEST(test_decide_structs)
{
	struct hx_policy *p = load(p_net, &vars);
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(443)};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6,
				   .sin6_port = htons(9)};
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	struct sockaddr sa = {.sa_family = AF_NETLINK};
	const char *names[] = {"cdn.other.net", "api.example.com."};
	struct hx_event ev = {.op = HX_OP_CONNECT};
	struct hx_decision d;

	inet_pton(AF_INET, "93.184.216.34", &in.sin_addr);
	ev.addr = (struct sockaddr *)&in;
	ev.addrlen = sizeof(in);
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "default:net_connect");
	ev.names = names;
	ev.nnames = 2;
	hx_policy_decide(p, &ev, &d);
	ck_assert_int_eq(d.verdict, HX_VERDICT_ALLOW);
	ck_assert_str_eq(d.rule, "api");
	ck_assert_str_eq(d.pattern, "api.example.com:443");

	/* ::ffff:127.0.0.1 is loopback */
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &in6.sin6_addr);
	ev.names = NULL;
	ev.nnames = 0;
	ev.addr = (struct sockaddr *)&in6;
	ev.addrlen = sizeof(in6);
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "lo4");

	/* a short address, another family, no address */
	ev.addrlen = sizeof(in6) - 1;
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "harness:malformed");
	ck_assert_int_eq(d.verdict, HX_VERDICT_DENY);
	ev.addr = &sa;
	ev.addrlen = sizeof(sa);
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "harness:malformed");
	ev.addr = NULL;
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "harness:malformed");

	/* a unix path that fills sun_path without a terminator */
	memset(un.sun_path, 'a', sizeof(un.sun_path));
	ev.addr = (struct sockaddr *)&un;
	ev.addrlen = sizeof(un);
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "default:net_connect");

	/* "neighbours: true" travels with the rule that decided, alone */
	{
		struct hx_policy *pn =
		    load("version: 1\nnetwork:\n"
			 "  - id: wide\n    allow: [\"unix:/tmp/**\"]\n"
			 "  - id: agent\n    allow: [\"unix:/tmp/ssh-*/**\"]\n"
			 "    neighbours: yes\n",
			 &vars);

		strcpy(un.sun_path, "/tmp/ssh-x/agent.1");
		ev.addrlen = sizeof(un);
		hx_policy_decide(pn, &ev, &d);
		ck_assert_str_eq(d.rule, "agent");
		ck_assert(d.neighbours);
		strcpy(un.sun_path, "/tmp/tmux-1/default");
		hx_policy_decide(pn, &ev, &d);
		ck_assert_str_eq(d.rule, "wide");
		ck_assert(!d.neighbours);
		hx_policy_free(pn);
	}

	/* protect_write: harness:protect for writes and renames, not reads */
	{
		static const char *const cg[] = {"/sys/fs/cgroup/**"};
		struct hx_policy_vars v = vars;
		struct hx_policy *pw;

		v.protect_write = cg;
		v.nprotect_write = 1;
		pw = load("version: 1\nfiles:\n  - allow: [\"/**\"]\n"
			  "    access: any\n",
			  &v);
		ev = (struct hx_event){.op = HX_OP_WRITE,
				       .path =
					   "/sys/fs/cgroup/pids/cgroup.procs"};
		hx_policy_decide(pw, &ev, &d);
		ck_assert_str_eq(d.rule, "harness:protect");
		ck_assert_int_eq(d.verdict, HX_VERDICT_DENY);
		ev.op = HX_OP_READ;
		hx_policy_decide(pw, &ev, &d);
		ck_assert_int_eq(d.verdict, HX_VERDICT_ALLOW);
		ev = (struct hx_event){.op = HX_OP_RENAME,
				       .path = "/tmp/x",
				       .path2 = "/sys/fs/cgroup/a",
				       .moves_tree = true};
		hx_policy_decide(pw, &ev, &d);
		ck_assert_str_eq(d.rule, "harness:protect");
		hx_policy_free(pw);
	}

	/* missing paths, host, argv */
	ev = (struct hx_event){.op = HX_OP_READ};
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "harness:malformed");
	ev.op = HX_OP_RENAME;
	ev.path = "/a";
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "harness:malformed");
	ev.op = HX_OP_RESOLVE;
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "harness:malformed");
	ev = (struct hx_event){.op = HX_OP_EXEC};
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "harness:malformed");
	ck_assert_int_eq(d.category, HX_CAT_EXEC);
	ck_assert_int_eq(d.risk, HX_RISK_HIGH);
	hx_policy_free(p);
}
END_TEST

/* A name may be looked up when some port of it may be reached: a deny
 * of some ports leaves the lookup alone, of every port it does not. */
START_TEST(test_resolve_by_reachable_ports)
{
	static const char y[] =
	    "version: 1\n"
	    "defaults: {net_resolve: deny}\n"
	    "network:\n"
	    "  - {id: web, allow: [\"*.example.com:443\"]}\n"
	    "  - {id: dot, deny: [\"*:853\"]}\n"
	    "  - {id: gone, deny: [\"bad.example.com:*\"]}\n"
	    "  - {id: some, deny: [\"half.example.com:80\"]}\n";
	struct hx_policy_vars v = {0};
	struct hx_policy *p = load(y, &v);
	struct hx_event ev = {.op = HX_OP_RESOLVE};
	struct hx_decision d;

	ev.host = "api.example.com";
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "web");
	ev.host = "half.example.com";
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "web");
	ev.host = "bad.example.com";
	hx_policy_decide(p, &ev, &d);
	ck_assert_int_eq(d.verdict, HX_VERDICT_DENY);
	ck_assert_str_eq(d.rule, "gone");
	ev.host = "elsewhere.org";
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "default:net_resolve");
	/* An address is no name, nor is a name with an escaped dot. */
	ev.host = "10.0.0.1";
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "harness:malformed");
	ev.host = "evil\\.example.com";
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "harness:malformed");
	hx_policy_free(p);
}
END_TEST

/* "tcp:" and "udp:" hold for the socket's protocol; unknown (0) is
 * judged by every pattern; a protocol is more specific than none. */
START_TEST(test_net_protocols)
{
	static const char y[] = "version: 1\n"
				"network:\n"
				"  - {id: any, allow: [\"10.0.0.1:53\"]}\n"
				"  - {id: udp, allow: [\"udp:10.0.0.1:53\"]}\n"
				"  - {id: quic, deny: [\"udp:*:443\"]}\n";
	struct hx_policy_vars v = {0};
	struct hx_policy *p = load(y, &v);
	struct sockaddr_in in = {.sin_family = AF_INET};
	struct hx_event ev = {.op = HX_OP_CONNECT,
			      .addr = (struct sockaddr *)&in,
			      .addrlen = sizeof(in)};
	struct hx_decision d;

	inet_pton(AF_INET, "10.0.0.1", &in.sin_addr);
	in.sin_port = htons(53);
	ev.proto = IPPROTO_UDP;
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "udp");
	ev.proto = IPPROTO_TCP;
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "any");
	in.sin_port = htons(443);
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "default:net_connect");
	ev.proto = IPPROTO_UDP;
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "quic");
	/* A bind is judged by listen: patterns only, and they judge
	 * nothing else. */
	ev.op = HX_OP_LISTEN;
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "default:net_listen");
	hx_policy_free(p);
	p = load("version: 1\n"
		 "network:\n"
		 "  - {id: lo, allow: [\"listen:127.0.0.1:*\"]}\n"
		 "  - {id: any, deny: [\"listen:tcp:0.0.0.0:*\"]}\n",
		 &v);
	in.sin_addr.s_addr = 0;
	ev.proto = IPPROTO_TCP;
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "any");
	ev.proto = IPPROTO_UDP;
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "default:net_listen");
	inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "lo");
	ev.op = HX_OP_CONNECT;
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "default:net_connect");
	hx_policy_free(p);
}
END_TEST

START_TEST(test_exec_bare_name)
{
	/* A bare name matches the basename of the resolved path, whatever
	 * argv[0] says; a path pattern needs the path. */
	struct hx_policy *p = load("exec:\n"
				   "  - {id: bare, deny: \"sudo *\"}\n"
				   "  - {id: path, deny: \"/usr/bin/env *\"}\n",
				   &vars);
	const char *argv1[] = {"innocent", "-i"};
	const char *argv2[] = {"env", "x"};
	struct hx_event ev = {.op = HX_OP_EXEC,
			      .path = "/usr/local/bin/sudo",
			      .argv = argv1,
			      .argc = 2};
	struct hx_decision d;

	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "bare");
	ev.path = "/usr/bin/env";
	ev.argv = argv2;
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "path");
	ev.path = "/bin/env";
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "default:exec");
	ev.path = NULL; /* no path: argv[0] stands in */
	argv2[0] = "/usr/bin/env";
	hx_policy_decide(p, &ev, &d);
	ck_assert_str_eq(d.rule, "path");
	hx_policy_free(p);
}
END_TEST

/* ---- load errors: line AND column ---- */

struct ecase {
	const char *yaml;
	unsigned line, column;
	const char *message; /* a substring */
	const char *hint;    /* a substring, or NULL */
};

static const struct ecase ecases[] = {
    {"version: 1\nfiles: [\n  - x\n", 3, 3, "syntax error", NULL},
    {"version: 1\nfiles:\n  - deny: \"a\n", 4, 1, "syntax error", NULL},
    {"version: 1\nmdoe: audit\n", 2, 1, "unknown key 'mdoe'",
     "valid keys: version, mode"},
    {"files:\n  - deny: /x\n    acces: read\n", 3, 5,
     "unknown key 'acces' in a rule", "access"},
    {"audit:\n  log_read: true\n", 2, 3, "unknown key", "log_reads"},
    {"defaults:\n  exec: maybe\n", 2, 9, "invalid verdict 'maybe'",
     "allow, ask, deny"},
    {"defaults:\n  fs: allow\n", 2, 3, "unknown key 'fs'", "file_read"},
    {"mode: strict\n", 1, 7, "invalid mode", "enforce, audit"},
    {"exec:\n  - deny: [\"x\"]\n    neighbours: true\n", 3, 17,
     "neighbours is a network rule's key", NULL},
    {"files:\n  - deny: /x\n    neighbours: true\n", 3, 5,
     "unknown key 'neighbours' in a rule", NULL},
    {"version: 2\n", 1, 10, "invalid version", NULL},
    {"files:\n  - deny: \"/a/**b\"\n", 2, 15, "bad glob", NULL},
    {"files:\n  - deny: [/ok, \"/a/[bc\"]\n", 2, 21, "unclosed '['", NULL},
    {"files:\n  - deny: foo/bar\n", 2, 11, "must be absolute", NULL},
    {"files:\n  - deny: $HOME/a/b**\n", 2, 20, "whole path segment", NULL},
    {"network:\n  - allow: 10.0.0.0/33:80\n", 2, 21, "CIDR prefix", NULL},
    {"network:\n  - allow: 10.0.300.1:80\n", 2, 12, "bad IPv4 address", NULL},
    {"network:\n  - allow: \"[fd00::/129]:80\"\n", 2, 21, "CIDR prefix", NULL},
    {"network:\n  - allow: \"[fd00::g]:80\"\n", 2, 14, "bad IPv6 address",
     NULL},
    {"network:\n  - allow: [\"h:70000\"]\n", 2, 16, "bad port", NULL},
    {"network:\n  - allow: 'h:90-80'\n", 2, 15, "bad port range", NULL},
    {"network:\n  - allow: 'fd00::1:80'\n", 2, 13, "brackets", NULL},
    {"network:\n  - allow: 'host'\n", 2, 17, "HOST:PORT", NULL},
    {"network:\n  - allow: 'a.*.com:1'\n", 2, 15, "'*' only", NULL},
    {"network:\n  - allow: 'unix:relative'\n", 2, 18, "unix:/PATH", NULL},
    {"files:\n  - deny: /x/$HOME/y\n", 2, 14, "variable $HOME is not set",
     "$HOME"},
    {"files:\n  - deny: \"/x/${HOME}\"\n", 2, 15, "variable $HOME is not set",
     NULL},
    {"files:\n  - deny: /x/$FOO\n", 2, 14, "unknown variable $FOO", NULL},
    {"files:\n  - deny: /x/${HOME\n", 2, 14, "malformed", NULL},
    {"files:\n  - deny: /x\n    match: $NOPE/a\n", 3, 12, "unknown variable",
     NULL},
    {"files:\n  deny: x\n", 2, 3, "must be a list of rules", NULL},
    {"files:\n  - deny: {a: b}\n", 2, 11, "string or a list", NULL},
    {"files:\n  - deny: [[a]]\n", 2, 12, "must be a string", NULL},
    {"files:\n  - deny: /a\n    allow: /b\n", 3, 12, "exactly one of", NULL},
    {"files:\n  - id: x\n", 2, 5, "needs one of allow, deny, ask", NULL},
    {"files:\n  - deny: []\n", 2, 11, "at least one pattern", NULL},
    {"files:\n  - deny: /a\n    access: exec\n", 3, 13, "invalid access",
     "read, write, any"},
    {"files:\n  - {id: a, deny: /a}\n  - {id: a, deny: /b}\n", 3, 10,
     "duplicate rule id", NULL},
    {"files:\n  - {id: default:x, deny: /a}\n", 2, 10, "reserved", NULL},
    /* reported where the aliased node is: the document API keeps
     * no position for an alias */
    {"files:\n  - &r {deny: /a}\n  - *r\n", 2, 5, "aliases", NULL},
    {"mode: audit\nmode: enforce\n", 2, 1, "duplicate key", NULL},
    {"- a\n", 1, 1, "must be a mapping", NULL},
    {"", 1, 1, "empty policy", NULL},
    {"mode: audit\n---\nmode: enforce\n", 2, 1, "one YAML document", NULL},
    {"exec:\n  - deny: \"  \"\n", 2, 12, "empty exec pattern", NULL},
    {"exec:\n  - deny: \"bin/x *\"\n", 2, 12, "absolute", NULL},
    {"audit:\n  log_reads: maybe\n", 2, 14, "invalid log_reads", NULL},
    {"audit:\n  rate: fast\n", 2, 9, "invalid rate", "records"},
    {"audit:\n  max_size: 1X\n", 2, 13, "invalid max_size", "bytes"},
    {"limits:\n  processes: 1K\n", 2, 14, "invalid processes", NULL},
    {"limits:\n  cpus: 5\n", 2, 3, "unknown key 'cpus' in limits",
     "cpu, file_size, open_files"},
    {"limits: 5\n", 1, 9, "limits must be a mapping", NULL},
    {"limits:\n  cpu: 5K\n", 2, 8, "invalid cpu '5K'", "seconds"},
    {"limits:\n  file_size: 10X\n", 2, 14, "invalid file_size", "K, M, G or T"},
    {"limits:\n  file_size: 1KB\n", 2, 14, "invalid file_size", NULL},
    {"limits:\n  open_files: -1\n", 2, 15, "invalid open_files", NULL},
    {"limits:\n  core: 99999999999999999999\n", 2, 9, "invalid core", NULL},
    {"limits:\n  address_space: 20000000T\n", 2, 18, "invalid address_space",
     NULL},
    {"limits:\n  core: [1]\n", 2, 9, "core must be a string", NULL},
};

START_TEST(test_load_errors)
{
	const struct ecase *c = &ecases[_i];
	struct hx_policy_vars v = vars;
	struct hx_policy_error err;
	struct hx_policy *p = (struct hx_policy *)1;
	char buf[1024];
	int ret;

	if (strstr(c->message, "is not set")) /* these run without $HOME */
		v.home = NULL;
	ret = hx_policy_load_buffer("t.yaml", c->yaml, strlen(c->yaml), &v, &p,
				    &err);
	ck_assert_msg(ret == -22, "%s: loaded (ret %d)", c->yaml, ret);
	ck_assert_ptr_null(p);
	hx_policy_error_format(&err, buf, sizeof(buf));
	ck_assert_msg(err.line == c->line && err.column == c->column,
		      "%s: got %s, want line %u column %u", c->yaml, buf,
		      c->line, c->column);
	ck_assert_msg(strstr(err.message, c->message), "%s: got %s", c->yaml,
		      buf);
	ck_assert_str_eq(err.file, "t.yaml");
	if (c->hint)
		ck_assert_msg(strstr(err.hint, c->hint), "%s: got %s", c->yaml,
			      buf);
}
END_TEST

START_TEST(test_error_format)
{
	const char y[] = "version: 1\nmdoe: audit\n";
	struct hx_policy_error err;
	struct hx_policy *p;
	char buf[512];

	ck_assert_int_eq(hx_policy_load_buffer("dir/my.yaml", y, sizeof(y) - 1,
					       &vars, &p, &err),
			 -22);
	hx_policy_error_format(&err, buf, sizeof(buf));
	ck_assert_msg(
	    !strncmp(buf,
		     "dir/my.yaml:2:1: unknown key 'mdoe' in "
		     "the policy\n  hint: valid keys: version, ",
		     strlen("dir/my.yaml:2:1: unknown key 'mdoe' in "
			    "the policy\n  hint: valid keys: version, ")),
	    "%s", buf);
	ck_assert_int_lt(
	    hx_policy_load_file("/nonexistent/p.yaml", &vars, &p, &err), 0);
	hx_policy_error_format(&err, buf, sizeof(buf));
	ck_assert_str_eq(buf, "/nonexistent/p.yaml: cannot read the policy: "
			      "No such file or directory");
	/* a tiny buffer is truncated, not overrun */
	hx_policy_error_format(&err, buf, 8);
	ck_assert_str_eq(buf, "/nonexi");
}
END_TEST

/* ---- examples ---- */

static void collect(const char *msg, void *arg)
{
	char *out = arg;

	strcat(out, msg);
	strcat(out, "\n");
}

START_TEST(test_examples)
{
	const char y[] =
	    "files:\n"
	    "  - id: f\n"
	    "    deny: $HOME/.ssh/**\n"
	    "    match: [$HOME/.ssh/id_rsa, /etc/x]\n"
	    "    not_match: \"$HOME/.sshx\"\n"
	    "exec:\n"
	    "  - id: e\n"
	    "    deny: \"git push *\"\n"
	    "    match: [\"git push origin main\", \"/usr/bin/git push\"]\n"
	    "    not_match: [\"git status\", \"git push x\"]\n"
	    "network:\n"
	    "  - id: n\n"
	    "    allow: [\"*.example.com:443\", \"10.0.0.0/8:*\"]\n"
	    "    match: [\"a.example.com:443\", \"10.1.2.3:80\", "
	    "\"x.example.com:80\"]\n"
	    "    not_match: [\"example.com:443\", \"11.0.0.1:1\", \"bogus\"]\n";
	struct hx_policy *p = load(y, &vars);
	char out[4096] = "";
	size_t nr, ne;

	hx_policy_stats(p, &nr, &ne);
	ck_assert_uint_eq(nr, 3);
	ck_assert_uint_eq(ne, 13);
	ck_assert_uint_eq(hx_policy_check_examples(p, collect, out), 4);
	ck_assert_msg(strstr(out, "t.yaml:4:32: rule \"f\": example \"/etc/x\" "
				  "should match\n"),
		      "%s", out);
	ck_assert_msg(strstr(out, "t.yaml:10:32: rule \"e\": example \"git "
				  "push x\" should not match\n"),
		      "%s", out);
	ck_assert_msg(strstr(out, "t.yaml:14:50: rule \"n\": example "
				  "\"x.example.com:80\" should match\n"),
		      "%s", out);
	ck_assert_msg(strstr(out, "example \"bogus\" is not HOST:PORT"), "%s",
		      out);
	hx_policy_free(p);
}
END_TEST

/* ---- the default policy ---- */

static void count_read(enum hx_verdict v, const char *pattern, void *arg)
{
	int *n = arg;

	if (*n == 0)
		ck_assert_str_eq(pattern, "/work/proj/.harness/**");
	(void)v;
	(*n)++;
}

static void find_host(const char *name, void *arg)
{
	int *n = arg;

	ck_assert(strchr(name, '*') == NULL);
	if (!strcmp(name, "api.anthropic.com"))
		(*n)++;
}

static const struct dcase default_cases[] = {
    {NULL, "read /home/u/.ssh/id_ed25519", D, "ssh"},
    {NULL, "read /home/u/.aws/credentials", D, "aws"},
    {NULL, "read /work/proj/.env", D, "dotenv"},
    {NULL, "write /work/proj/.env", D, "dotenv"},
    {NULL, "read /etc/passwd", A, "default:file_read"},
    {NULL, "write /etc/passwd", D, "system-autorun"},
    {NULL, "write /etc/hosts", D, "default:file_write"},
    {NULL, "write /work/proj/src/a.c", A, "project"},
    {NULL, "write /work/proj/.git/hooks/pre-commit", D, "git-hooks"},
    {NULL, "read /work/proj/.git/config", A, "default:file_read"},
    {NULL, "write /home/u/.bashrc", D, "shell-rc"},
    {NULL, "read /home/u/.bashrc", A, "default:file_read"},
    {NULL, "write /tmp/hx-s1/x.o", A, "temp"},
    {NULL, "write /tmp/other", D, "default:file_write"},
    {NULL, "write /dev/null", A, "devices"},
    {NULL, "write /home/u/.cache/pip/x", A, "tool-caches"},
    {NULL, "link /home/u/.ssh/id_rsa /work/proj/k", D, "ssh"},
    {NULL, "exec /usr/bin/sudo -i", D, "privilege"},
    {NULL, "exec /usr/bin/git push", A, "default:exec"},
    {NULL, "connect api.anthropic.com:443", A, "model-apis"},
    /* loopback: ask, but the session's own (pipeline.c) */
    {NULL, "connect 127.0.0.1:5432", Q, "loopback"},
    {NULL, "connect [::1]:3000", Q, "loopback"},
    {NULL, "send [::ffff:127.0.0.1]:5353", Q, "loopback"},
    {NULL, "connect 127.0.0.1:2375", D, "control-ports"},
    {NULL, "connect [::ffff:127.0.0.1]:10250", D, "control-ports"},
    {NULL, "connect 169.254.169.254:80", D, "control-ports"},
    {NULL, "connect [fd00:ec2::254]:443", D, "control-ports"},
    {NULL, "connect 1.1.1.1:443", D, "dns-over-https"},
    {NULL, "connect 1.2.3.4:443", D, "default:net_connect"},
    {NULL, "connect dns.google:443", D, "dns-over-https"},
    {NULL, "connect 10.0.0.1:853", D, "dns-over-https"},
    {NULL, "connect unix:/run/nscd/socket", D, "local-resolvers"},
    {NULL, "connect evil.example:443", D, "default:net_connect"},
    {NULL, "connect unix:/var/run/docker.sock", D, "container-sockets"},
    {NULL, "resolve evil.example", D, "default:net_resolve"},
    {NULL, "resolve api.anthropic.com", A, "model-apis"},
    {NULL, "resolve localhost", A, "loopback"},
    {NULL, "resolve dns.google", D, "dns-over-https"},
    /* a server's bind: only listen: patterns judge it */
    {NULL, "listen 0.0.0.0:8000", A, "default:net_listen"},
    {NULL, "listen 127.0.0.1:2375", A, "default:net_listen"},
};

START_TEST(test_default_policy)
{
	struct hx_policy_error err;
	struct hx_policy *p;
	char buf[1024], out[8192] = "", ebuf[256], *words[16];
	size_t len, nr, ne;
	const char *text = hx_policy_default_text(&len);
	int n = 0;

	ck_assert(len > 100 && text[len] == '\0' && text[0] == '#');
	ck_assert_msg(hx_policy_load_default(&vars, &p, &err) == 0, "%s",
		      hx_policy_error_format(&err, buf, sizeof(buf)));
	ck_assert_str_eq(hx_policy_source(p), "<default>");
	ck_assert_int_eq(hx_policy_mode(p), HX_MODE_ENFORCE);
	ck_assert(!hx_policy_log_reads(p));
	ck_assert_int_eq(hx_policy_default_verdict(p, HX_CAT_FILE_WRITE),
			 HX_VERDICT_DENY);
	ck_assert_int_eq(hx_policy_default_verdict(p, HX_CAT_NET_RESOLVE),
			 HX_VERDICT_DENY);
	hx_policy_stats(p, &nr, &ne);
	ck_assert_uint_gt(nr, 10);
	ck_assert_uint_gt(ne, 40);
	ck_assert_msg(hx_policy_check_examples(p, collect, out) == 0, "%s",
		      out);
	hx_policy_foreach_read_rule(p, count_read, &n);
	ck_assert_int_gt(n, 5);
	n = 0;
	hx_policy_foreach_host(p, find_host, &n);
	ck_assert_int_eq(n, 1);

	for (size_t i = 0; i < N(default_cases); i++) {
		const struct dcase *c = &default_cases[i];
		struct hx_event_storage st;
		struct hx_decision d;
		struct hx_event ev;
		int nw;

		split(c->event, buf, sizeof(buf), words, &nw);
		ck_assert(
		    !hx_event_parse(nw, words, &ev, &st, ebuf, sizeof(ebuf)));
		hx_policy_decide(p, &ev, &d);
		ck_assert_msg(d.verdict == c->verdict &&
				  !strcmp(d.rule, c->rule),
			      "%s: got %s by %s", c->event,
			      hx_verdict_name(d.verdict), d.rule);
	}
	hx_policy_free(p);
}
END_TEST

START_TEST(test_misc)
{
	struct hx_policy *p =
	    load("mode: audit\naudit: {log_reads: true}\n", &vars);
	struct hx_event_storage st;
	struct hx_event ev;
	char err[256];
	char *bad1[] = {(char *)"fly", (char *)"x"};
	char *bad2[] = {(char *)"connect", (char *)"1.2.3.4"};
	char *bad3[] = {(char *)"rename", (char *)"/a"};
	struct hx_audit_quota q;
	uint64_t lim;

	ck_assert_int_eq(hx_policy_mode(p), HX_MODE_AUDIT);
	ck_assert(hx_policy_log_reads(p));
	ck_assert_str_eq(hx_policy_source(p), "t.yaml");
	ck_assert(!hx_policy_limit(p, HX_LIMIT_CPU, &lim));
	hx_policy_free(p);
	p = load("limits: {cpu: 60, file_size: 2M, core: 0, open_files: "
		 "unlimited, address_space: 3T}\n",
		 &vars);
	ck_assert(hx_policy_limit(p, HX_LIMIT_CPU, &lim) && lim == 60);
	ck_assert(hx_policy_limit(p, HX_LIMIT_FILE_SIZE, &lim) &&
		  lim == 2u << 20);
	ck_assert(hx_policy_limit(p, HX_LIMIT_CORE, &lim) && lim == 0);
	ck_assert(!hx_policy_limit(p, HX_LIMIT_OPEN_FILES, &lim));
	ck_assert(hx_policy_limit(p, HX_LIMIT_ADDRESS_SPACE, &lim) &&
		  lim == 3ull << 40);
	ck_assert(!hx_policy_limit(p, HX_LIMIT_COUNT, &lim));
	ck_assert_str_eq(hx_limit_name(HX_LIMIT_OPEN_FILES), "open_files");
	/* The process count is on unless lifted. */
	ck_assert(hx_policy_limit(p, HX_LIMIT_PROCESSES, &lim) &&
		  lim == HX_PROCESSES_DEFAULT);
	hx_policy_free(p);
	p = load("limits: {processes: 64}\naudit: {rate: 5, burst: 7, "
		 "max_size: 3M}\n",
		 &vars);
	ck_assert(hx_policy_limit(p, HX_LIMIT_PROCESSES, &lim) && lim == 64);
	hx_policy_audit_quota(p, &q);
	ck_assert(q.rate == 5 && q.burst == 7 && q.max_size == 3u << 20);
	hx_policy_free(p);
	p = load("limits: {processes: unlimited}\naudit: {rate: unlimited, "
		 "max_size: 0}\n",
		 &vars);
	ck_assert(!hx_policy_limit(p, HX_LIMIT_PROCESSES, &lim));
	hx_policy_audit_quota(p, &q);
	ck_assert(q.rate == 0 && q.burst == HX_AUDIT_BURST_DEFAULT &&
		  q.max_size == 0);
	hx_policy_free(p);
	hx_policy_free(NULL);
	ck_assert_int_ne(hx_event_parse(2, bad1, &ev, &st, err, sizeof(err)),
			 0);
	ck_assert_msg(strstr(err, "unknown event"), "%s", err);
	ck_assert_int_ne(hx_event_parse(2, bad2, &ev, &st, err, sizeof(err)),
			 0);
	ck_assert_int_ne(hx_event_parse(2, bad3, &ev, &st, err, sizeof(err)),
			 0);
	ck_assert_str_eq(hx_verdict_name(HX_VERDICT_ASK), "ask");
	ck_assert_str_eq(hx_category_name(HX_CAT_NET_RESOLVE), "net_resolve");
	ck_assert_str_eq(hx_risk_name(HX_RISK_MEDIUM), "medium");
	ck_assert_str_eq(hx_op_name(HX_OP_TRUNCATE), "truncate");
	ck_assert_int_eq(hx_op_category(HX_OP_LINK), HX_CAT_FILE_WRITE);
	ck_assert_int_eq(hx_op_category(HX_OP_SEND), HX_CAT_NET_SEND);
}
END_TEST

/* A second mount (hx_policy_vars.alias_*): deny and ask rules hold
 * beneath the other mount point, allows stay where they are. */
START_TEST(test_mount_aliases)
{
	static const char y[] =
	    "version: 1\n"
	    "defaults: {file_read: allow, file_write: allow}\n"
	    "files:\n"
	    "  - {id: ssh, access: any, deny: [\"/home/*/.ssh/**\"]}\n"
	    "  - {id: aws, access: any, deny: [\"$HOME/.aws/**\"]}\n"
	    "  - {id: env, access: read, deny: [\"/**/.env\"]}\n"
	    "  - {id: rc, access: write, ask: [\"$HOME/.bashrc\"]}\n"
	    "  - {id: ok, access: write, allow: [\"$HOME/ok/**\"]}\n";
	static const char *const from[] = {"/home/u", "/home/u/.aws/k", "/srv"};
	static const char *const to[] = {"/mnt/b", "/mnt/k", "/mnt/s"};
	static const struct {
		enum hx_op op;
		const char *path;
		enum hx_verdict want;
		const char *rule;
	} t[] = {
	    {HX_OP_READ, "/mnt/b/.ssh/id_rsa", HX_VERDICT_DENY, "ssh"},
	    {HX_OP_READ, "/mnt/b/.aws/credentials", HX_VERDICT_DENY, "aws"},
	    {HX_OP_READ, "/mnt/k/x", HX_VERDICT_DENY, "aws"},
	    {HX_OP_READ, "/mnt/b/p/.env", HX_VERDICT_DENY, "env"},
	    {HX_OP_WRITE, "/mnt/b/.bashrc", HX_VERDICT_ASK, "rc"},
	    {HX_OP_READ, "/mnt/b/notes", HX_VERDICT_ALLOW, NULL},
	    {HX_OP_READ, "/mnt/s/x/.ssh/k", HX_VERDICT_ALLOW, NULL},
	    {HX_OP_READ, "/home/u/.ssh/id_rsa", HX_VERDICT_DENY, "ssh"},
	};
	struct hx_policy_vars v = vars;
	struct hx_policy *p;
	struct hx_decision d;

	v.alias_from = from;
	v.alias_to = to;
	v.nalias = N(from);
	p = load(y, &v);
	for (size_t i = 0; i < N(t); i++) {
		struct hx_event ev = {.op = t[i].op, .path = t[i].path};

		hx_policy_decide(p, &ev, &d);
		ck_assert_msg(d.verdict == t[i].want, "%s: verdict %d",
			      t[i].path, d.verdict);
		if (t[i].rule)
			ck_assert_str_eq(d.rule, t[i].rule);
	}
	hx_policy_free(p);
}
END_TEST

static Suite *policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_decide_table, 0, (int)N(dcases));
	tcase_add_test(tc, test_decide_structs);
	tcase_add_test(tc, test_exec_bare_name);
	tcase_add_loop_test(tc, test_load_errors, 0, (int)N(ecases));
	tcase_add_test(tc, test_error_format);
	tcase_add_test(tc, test_examples);
	tcase_add_test(tc, test_default_policy);
	tcase_add_test(tc, test_misc);
	tcase_add_test(tc, test_resolve_by_reachable_ports);
	tcase_add_test(tc, test_net_protocols);
	tcase_add_test(tc, test_mount_aliases);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(policy_suite)
