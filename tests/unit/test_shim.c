/* Unit tests for the shim's decision/encoding core (libhxshimcore.a):
 * path normalization, environment rebuild, local read rules, fopen
 * modes, request encoding (checked with the full decoder), verdict
 * parsing and the denial notice. No interposition involved. */
#define _GNU_SOURCE
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim/client.h"
#include "shim/env.h"
#include "shim/exec.h"
#include "shim/hooks.h"
#include "common/notice.h"
#include "common/path.h"
#include "shim/readrules.h"
#include "shim/stack.h"
#include "common/wire.h"
#include "tests/unit/check_main.h"

#define SHIM "/opt/h/libharness-shim.so"
#define SOCK "/run/h.sock"

static long rebuild(char **env, char **out, size_t outcap)
{
	static char buf[4096];

	return hx_env_rebuild(env, SHIM, SOCK, NULL, out, outcap, buf,
			      sizeof(buf));
}

static int count(char **v, const char *s)
{
	int n = 0;

	for (; *v; v++)
		n += strcmp(*v, s) == 0;
	return n;
}

START_TEST(test_env_keeps_and_replaces)
{
	char *env[] = {
	    (char *)"A=1",
	    (char *)"LD_PRELOAD=/x/other.so /opt/h/libharness-shim.so:/y/b.so",
	    (char *)"HARNESS_SOCKET=/evil", (char *)"B=2", NULL};
	char *out[16];
	size_t np, nb;
	long n = rebuild(env, out, 16);

	ck_assert_int_eq(n, 4);
	ck_assert_ptr_null(out[4]);
	ck_assert_int_eq(count(out, "A=1"), 1);
	ck_assert_int_eq(count(out, "B=2"), 1);
	ck_assert_int_eq(count(out, "LD_PRELOAD=" SHIM ":/x/other.so:/y/b.so"),
			 1);
	ck_assert_int_eq(count(out, "HARNESS_SOCKET=" SOCK), 1);
	ck_assert_int_eq(count(out, "HARNESS_SOCKET=/evil"), 0);
	hx_env_size(env, SHIM, SOCK, NULL, &np, &nb);
	ck_assert_uint_ge(np, 5);
}
END_TEST

START_TEST(test_env_injects_after_env_i)
{
	char *empty[] = {NULL};
	char *out[4];

	ck_assert_int_eq(rebuild(empty, out, 4), 2);
	ck_assert_str_eq(out[0], "LD_PRELOAD=" SHIM);
	ck_assert_str_eq(out[1], "HARNESS_SOCKET=" SOCK);
	ck_assert_ptr_null(out[2]);
	ck_assert_int_eq(rebuild(NULL, out, 4), 2);
	ck_assert_str_eq(out[0], "LD_PRELOAD=" SHIM);
}
END_TEST

START_TEST(test_env_unset_and_too_small)
{
	char *env[] = {(char *)"PATH=/bin", (char *)"HOME=/root", NULL};
	char *out[8], small[8];

	ck_assert_int_eq(rebuild(env, out, 8), 4);
	ck_assert_int_eq(count(out, "PATH=/bin"), 1);
	ck_assert_int_eq(count(out, "LD_PRELOAD=" SHIM), 1);
	ck_assert_int_eq(rebuild(env, out, 4), -E2BIG);
	ck_assert_int_eq(
	    hx_env_rebuild(env, SHIM, SOCK, NULL, out, 8, small, sizeof(small)),
	    -E2BIG);
	ck_assert(hx_env_preload_has("a.so:" SHIM, SHIM));
	ck_assert(!hx_env_preload_has("a.so:b.so", SHIM));
	ck_assert(!hx_env_preload_has(NULL, SHIM));
}
END_TEST

/* HARNESS_CONN names one exec's connection: never passed on as the
 * program had it, only as the shim sets it for the exec at hand. */
START_TEST(test_env_conn_only_when_handed_over)
{
	char *env[] = {(char *)"A=1", (char *)"HARNESS_CONN=7.99", NULL};
	char *out[8], buf[4096];
	size_t np, nb;

	ck_assert_int_eq(rebuild(env, out, 8), 3);
	ck_assert_int_eq(count(out, "HARNESS_CONN=7.99"), 0);
	ck_assert_int_eq(hx_env_rebuild(env, SHIM, SOCK, "1001.4242", out, 8,
					buf, sizeof(buf)),
			 4);
	ck_assert_int_eq(count(out, "HARNESS_CONN=1001.4242"), 1);
	ck_assert_int_eq(count(out, "HARNESS_CONN=7.99"), 0);
	ck_assert_int_eq(count(out, "A=1"), 1);
	ck_assert_int_eq(hx_env_rebuild(env, SHIM, SOCK, "1001.4242", out, 4,
					buf, sizeof(buf)),
			 -E2BIG);
	hx_env_size(env, SHIM, SOCK, "1001.4242", &np, &nb);
	ck_assert_uint_ge(np, 5);
	ck_assert_uint_ge(nb, strlen("LD_PRELOAD=" SHIM) + 1 +
				  strlen("HARNESS_SOCKET=" SOCK) + 1 +
				  strlen("HARNESS_CONN=1001.4242") + 1);
}
END_TEST

/* An ELF header and one program header of the given type. */
static void write_elf(const char *path, uint32_t type)
{
	Elf64_Ehdr eh = {.e_phoff = sizeof(eh),
			 .e_phentsize = sizeof(Elf64_Phdr),
			 .e_phnum = 1};
	Elf64_Phdr ph = {.p_type = type};
	FILE *f = fopen(path, "w");

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(&eh, sizeof(eh), 1, f), 1);
	ck_assert_uint_eq(fwrite(&ph, sizeof(ph), 1, f), 1);
	fclose(f);
}

/* Only an image that loads the shim is handed the connection. */
START_TEST(test_exec_loads_shim)
{
	char tmpl[] = "/tmp/hx-shim-exec-XXXXXX", p[PATH_MAX], q[PATH_MAX];
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	snprintf(q, sizeof(q), "%s/elf", tmpl);
	write_elf(q, PT_INTERP);
	ck_assert(hx_exec_loads_shim(q));
	write_elf(q, PT_LOAD); /* static */
	ck_assert(!hx_exec_loads_shim(q));
	ck_assert(hx_exec_loads_shim("/bin/sh"));
	ck_assert(!hx_exec_loads_shim("/etc/hostname"));
	ck_assert(!hx_exec_loads_shim("/nonexistent/x"));
	snprintf(p, sizeof(p), "%s/s", tmpl);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs("#! /bin/sh -e\necho\n", f);
	fclose(f);
	ck_assert(hx_exec_loads_shim(p));
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fprintf(f, "#!%s\n", q); /* a static interpreter */
	fclose(f);
	ck_assert(!hx_exec_loads_shim(p));
	unlink(p);
	unlink(q);
	rmdir(tmpl);
}
END_TEST

static struct hx_read_rules rules;

static void rules_setup(void)
{
	hx_read_rules_reset(&rules);
	rules.flags = HX_HELLO_LOCAL_READS;
	rules.default_read = HX_VERDICT_ALLOW;
	ck_assert_int_eq(
	    hx_read_rules_add(&rules, HX_VERDICT_DENY, "/home/u/.ssh/**", 15),
	    0);
	ck_assert_int_eq(
	    hx_read_rules_add(&rules, HX_VERDICT_ALLOW, "/home/u/**", 10), 0);
	ck_assert_int_eq(
	    hx_read_rules_add(&rules, HX_VERDICT_ASK, "/srv/*.db", 9), 0);
}

static const struct {
	const char *path;
	enum hx_verdict want;
} read_cases[] = {
    {"/home/u/src/a.c", HX_VERDICT_ALLOW},
    {"/home/u/.ssh/id_rsa", HX_VERDICT_DENY}, /* deny beats allow */
    {"/home/u/.ssh", HX_VERDICT_DENY},
    {"/srv/x.db", HX_VERDICT_ASK},
    {"/srv/sub/x.db", HX_VERDICT_ALLOW}, /* default */
    {"/etc/passwd", HX_VERDICT_ALLOW},
};

START_TEST(test_read_verdict_table)
{
	rules_setup();
	ck_assert_int_eq(hx_read_verdict(&rules, read_cases[_i].path),
			 read_cases[_i].want);
	ck_assert(hx_read_local_allow(&rules, read_cases[_i].path) ==
		  (read_cases[_i].want == HX_VERDICT_ALLOW));
}
END_TEST

START_TEST(test_read_local_needs_flag)
{
	rules_setup();
	rules.flags = HX_HELLO_LOG_READS;
	ck_assert(!hx_read_local_allow(&rules, "/etc/passwd"));
	rules.flags = HX_HELLO_LOCAL_READS;
	rules.default_read = HX_VERDICT_DENY;
	ck_assert(!hx_read_local_allow(&rules, "/etc/passwd"));
	ck_assert(hx_read_local_allow(&rules, "/home/u/x"));
	ck_assert_int_eq(hx_read_rules_add(&rules, 7, "/x", 2), -1);
}
END_TEST

START_TEST(test_rules_from_hello)
{
	uint8_t buf[512];
	struct hx_wbuf w;
	uint8_t rule[16] = {HX_VERDICT_DENY};
	size_t n;

	memcpy(rule + 1, "/etc/shadow", 11);
	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_HELLO_REPLY, 9);
	hx_wire_put_u32(&w, HX_TAG_FLAGS, HX_HELLO_LOCAL_READS);
	hx_wire_put_u32(&w, HX_TAG_DEFAULT_READ, HX_VERDICT_ALLOW);
	hx_wire_put_bytes(&w, HX_TAG_READ_RULE, rule, 12);
	hx_wire_put_str(&w, HX_TAG_SESSION, "s1");
	n = hx_wire_finish(&w);
	ck_assert_int_eq(hx_read_rules_from_hello(&rules, buf, n, 9), 0);
	ck_assert_uint_eq(rules.nrules, 1);
	ck_assert(!hx_read_local_allow(&rules, "/etc/shadow"));
	ck_assert(hx_read_local_allow(&rules, "/etc/passwd"));
	/* Wrong id, truncated: rejected and reset. */
	ck_assert_int_eq(hx_read_rules_from_hello(&rules, buf, n, 10), -1);
	ck_assert_int_eq(hx_read_rules_from_hello(&rules, buf, n - 1, 9), -1);
	ck_assert_uint_eq(rules.flags, 0);
}
END_TEST

static const struct {
	const char *mode;
	int flags; /* -1: invalid */
	enum hx_op op;
} fopen_cases[] = {
    {"r", O_RDONLY, HX_OP_READ},
    {"rb", O_RDONLY, HX_OP_READ},
    {"re", O_RDONLY | O_CLOEXEC, HX_OP_READ},
    {"r+", O_RDWR, HX_OP_WRITE},
    {"w", O_WRONLY | O_CREAT | O_TRUNC, HX_OP_WRITE},
    {"a", O_WRONLY | O_CREAT | O_APPEND, HX_OP_WRITE},
    {"wx", O_WRONLY | O_CREAT | O_TRUNC | O_EXCL, HX_OP_WRITE},
    {"rb+", O_RDWR, HX_OP_WRITE},
    {"r,ccs=UTF-8", O_RDONLY, HX_OP_READ},
    {"q", -1, HX_OP_READ},
    {"", -1, HX_OP_READ},
};

START_TEST(test_fopen_modes)
{
	int f = hx_fopen_flags(fopen_cases[_i].mode);

	ck_assert_int_eq(f, fopen_cases[_i].flags);
	if (f >= 0)
		ck_assert_int_eq(hx_open_op(f), fopen_cases[_i].op);
}
END_TEST

START_TEST(test_open_flags)
{
	ck_assert(hx_open_is_read(O_RDONLY | O_CLOEXEC | O_DIRECTORY));
	ck_assert(!hx_open_is_read(O_RDONLY | O_CREAT));
	ck_assert(!hx_open_is_read(O_RDONLY | O_TRUNC));
	ck_assert(!hx_open_is_read(O_TMPFILE | O_RDWR));
	ck_assert(!hx_open_is_read(O_WRONLY));
	ck_assert(!hx_open_is_read(O_RDWR));
}
END_TEST

static struct hx_msg msg;

START_TEST(test_request_roundtrip)
{
	static uint8_t buf[HX_WIRE_MAX];
	char *argv[] = {(char *)"git", (char *)"push", (char *)"origin", NULL};
	struct sockaddr sa = {.sa_family = AF_INET};
	struct hx_req r = {.call = HX_CALL_EXECVE,
			   .op = HX_OP_EXEC,
			   .path = "/usr/bin/git",
			   .path2 = "/p2",
			   .has_flags = true,
			   .flags = 0101,
			   .has_mode = true,
			   .mode = 0644,
			   .argv = argv,
			   .proto = IPPROTO_UDP};
	struct hx_req net = {.call = HX_CALL_SENDTO,
			     .op = HX_OP_SEND,
			     .addr = &sa,
			     .addrlen = sizeof(sa),
			     .proto = IPPROTO_UDP};
	size_t n = hx_req_encode(&r, -1, 77, 10, 11, buf, sizeof(buf), NULL);

	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(hx_wire_decode(buf, n, &msg), HX_WIRE_OK);
	ck_assert_int_eq(msg.hdr.type, HX_MSG_REQUEST);
	ck_assert_uint_eq(msg.hdr.id, 77);
	ck_assert_uint_eq(msg.pid, 10);
	ck_assert_uint_eq(msg.tid, 11);
	ck_assert_uint_eq(msg.call, HX_CALL_EXECVE);
	ck_assert_uint_eq(msg.op, HX_OP_EXEC);
	ck_assert_str_eq(msg.path.s, "/usr/bin/git");
	ck_assert_str_eq(msg.path2.s, "/p2");
	ck_assert_uint_eq(msg.flags, 0101);
	ck_assert_uint_eq(msg.mode, 0644);
	ck_assert_uint_eq(msg.nargs, 3);
	ck_assert_str_eq(msg.args[1].s, "push");
	ck_assert(!hx_msg_has(&msg, HX_TAG_HOST));
	/* an address is a network call's only (wire.c, op_fields_fit) */
	n = hx_req_encode(&net, -1, 78, 10, 11, buf, sizeof(buf), NULL);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(hx_wire_decode(buf, n, &msg), HX_WIRE_OK);
	ck_assert_uint_eq(msg.naddrs, 1);
	ck_assert_uint_eq(msg.addrs[0].len, sizeof(sa));
	ck_assert(hx_msg_has(&msg, HX_TAG_PROTO));
	ck_assert_uint_eq(msg.proto, IPPROTO_UDP);
	ck_assert(!hx_msg_has(&msg, HX_TAG_TRUNCATED));
	ck_assert(!hx_msg_has(&msg, HX_TAG_HOST));
}
END_TEST

START_TEST(test_request_truncates_argv)
{
	static uint8_t buf[HX_WIRE_MAX];
	static char big[1000];
	static char *argv[HX_WIRE_MAX_ARGS + 100];
	struct hx_req r = {.call = HX_CALL_EXECV,
			   .op = HX_OP_EXEC,
			   .path = "/bin/x",
			   .argv = argv};
	size_t i, n;

	memset(big, 'a', sizeof(big) - 1);
	for (i = 0; i < HX_WIRE_MAX_ARGS + 99; i++)
		argv[i] = big;
	argv[i] = NULL;
	n = hx_req_encode(&r, -1, 1, 1, 1, buf, sizeof(buf), NULL);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(hx_wire_decode(buf, n, &msg), HX_WIRE_OK);
	ck_assert_uint_eq(msg.truncated, 1);
	ck_assert_uint_lt(msg.nargs, HX_WIRE_MAX_ARGS);
	/* Many short args: capped at the decoder's limit. */
	for (i = 0; i < HX_WIRE_MAX_ARGS + 99; i++)
		argv[i] = (char *)"x";
	n = hx_req_encode(&r, -1, 1, 1, 1, buf, sizeof(buf), NULL);
	ck_assert_int_eq(hx_wire_decode(buf, n, &msg), HX_WIRE_OK);
	ck_assert_uint_eq(msg.nargs, HX_WIRE_MAX_ARGS);
	ck_assert_uint_eq(msg.truncated, 1);
}
END_TEST

START_TEST(test_report_with_addrs_and_frames)
{
	static uint8_t buf[HX_WIRE_MAX];
	struct sockaddr_in a = {.sin_family = AF_INET}, b = a;
	const void *addrs[] = {&a, &b};
	size_t lens[] = {sizeof(a), sizeof(b)};
	struct hx_req r = {.call = HX_CALL_GETADDRINFO,
			   .op = HX_OP_RESOLVE,
			   .host = "example.org",
			   .addrs = addrs,
			   .addrlens = lens,
			   .naddrs = 2,
			   .frames = true};
	size_t n =
	    hx_req_encode(&r, 0, 5, 1, 1, buf, sizeof(buf), (const void *)1);

	ck_assert_int_eq(hx_wire_decode(buf, n, &msg), HX_WIRE_OK);
	ck_assert_int_eq(msg.hdr.type, HX_MSG_REPORT);
	ck_assert_str_eq(msg.host.s, "example.org");
	ck_assert_uint_eq(msg.naddrs, 2);
	ck_assert_uint_eq(msg.result, 0);
	ck_assert_uint_gt(msg.nframes, 0); /* this test's own stack */
	ck_assert_ptr_nonnull(strstr(msg.frames[0].s, "+0x"));
}
END_TEST

START_TEST(test_reply_parse)
{
	uint8_t buf[256];
	struct hx_wbuf w;
	struct hx_reply rep;
	size_t n;

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_VERDICT, 3);
	hx_wire_put_u32(&w, HX_TAG_VERDICT, HX_VERDICT_DENY);
	hx_wire_put_u32(&w, HX_TAG_ERRNO, EPERM);
	hx_wire_put_str(&w, HX_TAG_RULE, "default:file_write");
	hx_wire_put_u64(&w, HX_TAG_SEQ, 42);
	n = hx_wire_finish(&w);
	ck_assert_int_eq(hx_reply_parse(buf, n, 3, &rep), 0);
	ck_assert_uint_eq(rep.verdict, HX_VERDICT_DENY);
	ck_assert_uint_eq(rep.err, EPERM);
	ck_assert_str_eq(rep.rule, "default:file_write");
	ck_assert_uint_eq(rep.seq, 42);
	ck_assert(!rep.unreachable);
	/* Wrong id, short datagram, wrong type: fail closed. */
	ck_assert_int_eq(hx_reply_parse(buf, n, 4, &rep), -1);
	ck_assert(rep.unreachable);
	ck_assert_uint_eq(rep.verdict, HX_VERDICT_DENY);
	ck_assert_int_eq(hx_reply_parse(buf, n - 2, 3, &rep), -1);
	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_HELLO_REPLY, 3);
	hx_wire_put_u32(&w, HX_TAG_FLAGS, 0);
	n = hx_wire_finish(&w);
	ck_assert_int_eq(hx_reply_parse(buf, n, 3, &rep), -1);
	/* Allow without errno. */
	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_VERDICT, 8);
	hx_wire_put_u32(&w, HX_TAG_VERDICT, HX_VERDICT_ALLOW);
	n = hx_wire_finish(&w);
	ck_assert_int_eq(hx_reply_parse(buf, n, 8, &rep), 0);
	ck_assert_uint_eq(rep.verdict, HX_VERDICT_ALLOW);
	ck_assert_uint_eq(rep.err, EACCES);
}
END_TEST

START_TEST(test_notice)
{
	const char *const argv[] = {"git", "push", "origin", NULL};
	struct hx_notice w = {.op = HX_OP_WRITE,
			      .verdict = HX_VERDICT_DENY,
			      .target = "/etc/passwd",
			      .rule = "default:file_write"};
	struct hx_notice x = {.op = HX_OP_EXEC,
			      .verdict = HX_VERDICT_ASK,
			      .target = "/usr/bin/git",
			      .argv = argv,
			      .rule = "push"};
	char line[256];
	size_t n;

	n = hx_notice_format(line, sizeof(line), &w);
	ck_assert_str_eq(line, "harness: denied write /etc/passwd (rule "
			       "default:file_write; the policy refuses it: "
			       "do not retry)\n");
	ck_assert_uint_eq(n, strlen(line));
	n = hx_notice_format(line, sizeof(line), &x);
	ck_assert_str_eq(line, "harness: not approved: exec /usr/bin/git: git "
			       "push origin (rule push; it needs a person's "
			       "approval: ask the user, do not retry)\n");
	/* where the rule is written: the line to edit */
	x.origin = "team.yaml:12";
	hx_notice_format(line, sizeof(line), &x);
	ck_assert_ptr_nonnull(strstr(line, "(rule push at team.yaml:12; "));
	x.origin = NULL;
	w.rule = NULL;
	w.op = HX_OP_CONNECT;
	w.target = "1.2.3.4:443";
	hx_notice_format(line, sizeof(line), &w);
	ck_assert_str_eq(line, "harness: denied connect 1.2.3.4:443 "
			       "(supervisor unreachable)\n");
	x.target = "/very/long/path";
	n = hx_notice_format(line, 20, &x);
	ck_assert_uint_eq(n, 19);
	ck_assert_int_eq(line[18], '\n');
	/* a command too long for the line gives way, never the rule and
	 * the advice (the eleventh review: both were cut off) */
	{
		static char word[3000];
		const char *const lv[] = {"echo", word, "end", NULL};
		struct hx_notice l = x;

		memset(word, 'a', sizeof(word) - 1);
		l.argv = lv;
		n = hx_notice_format(line, sizeof(line), &l);
		ck_assert_uint_eq(n, sizeof(line) - 1);
		ck_assert_ptr_nonnull(strstr(line,
					     "aaa... (rule push; it needs "
					     "a person's approval: ask "
					     "the user, do not retry)\n"));
	}
	/* both names of a rename or link: the refused side may be either */
	w.op = HX_OP_RENAME;
	w.target = "/p/a";
	w.target2 = "/home/u/.bashrc";
	w.rule = "dotfiles";
	hx_notice_format(line, sizeof(line), &w);
	ck_assert_str_eq(line, "harness: denied rename /p/a -> /home/u/.bashrc "
			       "(rule dotfiles; the policy refuses it: do not "
			       "retry)\n");
	w.op = HX_OP_LINK;
	hx_notice_format(line, sizeof(line), &w);
	ck_assert_ptr_nonnull(strstr(line, "link /p/a to /home/u/.bashrc ("));
	w.op = HX_OP_WRITE; /* a second path of no meaning there: not said */
	hx_notice_format(line, sizeof(line), &w);
	ck_assert_ptr_null(strstr(line, ".bashrc"));
	w.target2 = NULL;
	/* the agent's bytes never reach the terminal raw */
	{
		const char *const ev[] = {"sh", "-c", "\033[2J\\", NULL};
		struct hx_notice y = {.op = HX_OP_EXEC,
				      .verdict = HX_VERDICT_DENY,
				      .target = "/tmp/\033]0;x\007\r\xc3\xa9",
				      .argv = ev,
				      .rule = "r\n"};

		hx_notice_format(line, sizeof(line), &y);
		ck_assert_str_eq(line, "harness: denied exec /tmp/\\x1b]0;x"
				       "\\x07\\x0d\\xc3\\xa9: sh -c "
				       "\\x1b[2J\\\\ (rule r\\x0a; the policy "
				       "refuses it: do not retry)\n");
		ck_assert_uint_eq(hx_text_escape(line, 6, "\033ab"), 5);
		ck_assert_str_eq(line, "\\x1ba");
	}
	/* once per process: the same argv from another PATH entry is a
	 * repeat, another process or another command is not */
	x.target = "/usr/bin/git";
	ck_assert(!hx_notice_repeat(&x, 100));
	x.target = "/bin/git";
	ck_assert(hx_notice_repeat(&x, 100));
	ck_assert(!hx_notice_repeat(&x, 101));
	x.argv = argv + 1;
	ck_assert(!hx_notice_repeat(&x, 101));
	ck_assert(!hx_notice_repeat(&w, 101));
}
END_TEST

START_TEST(test_frame_format)
{
	char buf[128];

	hx_stack_format(buf, sizeof(buf), "/lib/x86_64-linux-gnu/libc.so.6",
			0x1a2b3, "execve");
	ck_assert_str_eq(buf, "libc.so.6+0x1a2b3 execve");
	hx_stack_format(buf, sizeof(buf), "", 0x10, NULL);
	ck_assert_str_eq(buf, "?+0x10");
}
END_TEST

/* The hooks' core links without the interposers: it reaches the real
 * functions only through the table it is given. Inert (no supervisor),
 * every family goes straight to them, errno untouched. */
/* What the fake exec saw: the call may be gone (execl's copy). */
static const struct hx_exec_call *seen_exec;
static int seen_kind;
static const char *seen_path, *seen_argv[4];
static char *const *seen_envp;
static int seen_opens;

static long fake_exec(const struct hx_exec_call *e, char *const *envp)
{
	seen_exec = e;
	seen_kind = e->kind;
	seen_path = e->path;
	for (size_t i = 0; i < 4 && (!i || seen_argv[i - 1]); i++)
		seen_argv[i] = e->argv[i];
	seen_envp = envp;
	return 7;
}

static long fake_open(struct hx_open_call *o)
{
	seen_opens++;
	return o->dirfd == 5 ? 42 : -1;
}

static const struct hx_real fake_real = {.exec = fake_exec, .open = fake_open};

START_TEST(test_hooks_inert_pass_through)
{
	struct hx_open_call o = {
	    .call = HX_CALL_OPENAT, .dirfd = 5, .path = "x", .flags = O_RDONLY};
	struct hx_mut m = {.call = HX_CALL_UNLINK,
			   .op = HX_OP_UNLINK,
			   .dirfd = AT_FDCWD,
			   .path = "/etc/passwd"};
	struct sockaddr_in sin = {.sin_family = AF_INET};
	char *argv[] = {(char *)"ls", NULL}, *envp[] = {(char *)"A=1", NULL};
	struct hx_exec_call e = {.kind = 3, .path = "/bin/ls", .argv = argv};

	unsetenv("HARNESS_SOCKET");
	errno = 1234;
	ck_assert(hx_hooks_inert());
	ck_assert_int_eq(hx_hooks_open(&fake_real, &o), 42);
	ck_assert_int_eq(seen_opens, 1);
	ck_assert_int_eq(hx_hooks_mut(&m), 0);
	ck_assert_int_eq(
	    hx_hooks_net(HX_CALL_CONNECT, HX_OP_CONNECT, IPPROTO_TCP,
			 (const struct sockaddr *)&sin, sizeof(sin)),
	    0);
	ck_assert_int_eq(hx_hooks_shell(HX_CALL_SYSTEM, "true"), 0);
	ck_assert_int_eq(hx_hooks_execve(&fake_real, HX_CALL_EXECVE, &e, envp),
			 7);
	ck_assert_ptr_eq(seen_exec, &e);
	ck_assert_ptr_eq(seen_envp, envp);
	ck_assert_int_eq(errno, 1234);
}
END_TEST

static int execl_of(bool with_env, const char *arg, ...)
{
	struct hx_exec_call tmpl = {.kind = 9, .path = "/bin/echo"};
	va_list ap;
	int r;

	va_start(ap, arg);
	r = hx_hooks_execl(&fake_real, HX_CALL_EXECL, &tmpl, false, arg, ap,
			   with_env);
	va_end(ap);
	return r;
}

/* execl's varargs become the argv (and, for execle, the environment)
 * of a copy of the template. */
START_TEST(test_hooks_execl_collects)
{
	char *envp[] = {(char *)"B=2", NULL};

	unsetenv("HARNESS_SOCKET");
	ck_assert_int_eq(execl_of(false, "echo", "a", "b", (char *)NULL), 7);
	ck_assert_int_eq(seen_kind, 9);
	ck_assert_str_eq(seen_path, "/bin/echo");
	ck_assert_str_eq(seen_argv[0], "echo");
	ck_assert_str_eq(seen_argv[2], "b");
	ck_assert_ptr_null(seen_argv[3]);
	ck_assert_ptr_eq(seen_envp, environ);
	ck_assert_int_eq(execl_of(true, "echo", (char *)NULL, envp), 7);
	ck_assert_str_eq(seen_argv[0], "echo");
	ck_assert_ptr_null(seen_argv[1]);
	ck_assert_ptr_eq(seen_envp, envp);
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *shim_suite(void)
{
	Suite *s = suite_create("shim");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_env_keeps_and_replaces);
	tcase_add_test(t, test_env_injects_after_env_i);
	tcase_add_test(t, test_env_unset_and_too_small);
	tcase_add_test(t, test_env_conn_only_when_handed_over);
	tcase_add_test(t, test_exec_loads_shim);
	tcase_add_loop_test(t, test_read_verdict_table, 0, N(read_cases));
	tcase_add_test(t, test_read_local_needs_flag);
	tcase_add_test(t, test_rules_from_hello);
	tcase_add_loop_test(t, test_fopen_modes, 0, N(fopen_cases));
	tcase_add_test(t, test_open_flags);
	tcase_add_test(t, test_request_roundtrip);
	tcase_add_test(t, test_request_truncates_argv);
	tcase_add_test(t, test_report_with_addrs_and_frames);
	tcase_add_test(t, test_reply_parse);
	tcase_add_test(t, test_notice);
	tcase_add_test(t, test_frame_format);
	tcase_add_test(t, test_hooks_inert_pass_through);
	tcase_add_test(t, test_hooks_execl_collects);
	suite_add_tcase(s, t);
	return s;
}

HX_TEST_MAIN(shim_suite)
