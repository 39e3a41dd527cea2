/* Unit tests for common/: what the shim and the supervisor share. The
 * one path normalizer's table covers every case the shim's and the
 * supervisor's tables covered when each side had its own. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/un.h>

#include "common/notice.h"
#include "common/path.h"
#include "common/sockaddr.h"
#include "tests/unit/check_main.h"

static const struct {
	const char *base, *path, *want; /* want NULL: err */
	long err;
} norm_cases[] = {
    {"/home/u", "a.txt", "/home/u/a.txt", 0},
    {"/home/u", "./a/../b", "/home/u/b", 0},
    {"/home/u", "../../../x", "/x", 0},
    {"/home/u/", "sub//dir///f", "/home/u/sub/dir/f", 0},
    {"/", "a", "/a", 0},
    {"/x/y", "..", "/x", 0},
    {"/x/y", ".", "/x/y", 0},
    {"/ignored", "/abs", "/abs", 0},
    {NULL, "/", "/", 0},
    {NULL, "//", "/", 0},
    {NULL, "/a/b/c", "/a/b/c", 0},
    {NULL, "/a//b///c/", "/a/b/c", 0},
    {NULL, "/a/b/", "/a/b", 0},
    {NULL, "/a/./b/.", "/a/b", 0},
    {NULL, "/a/b/..", "/a", 0},
    {NULL, "/a/b/../c", "/a/c", 0},
    {NULL, "/a/..", "/", 0},
    {NULL, "/..", "/", 0},
    {NULL, "/../../etc/passwd", "/etc/passwd", 0},
    {NULL, "/proj/../home/u/.ssh/id_rsa", "/home/u/.ssh/id_rsa", 0},
    {NULL, "/a/...", "/a/...", 0},
    {NULL, "/a/..b", "/a/..b", 0},
    {NULL, "/a/..b/c", "/a/..b/c", 0},
    {NULL, "/etc//passwd", "/etc/passwd", 0},
    {NULL, "relative/path", NULL, -EINVAL},
    {NULL, "./x", NULL, -EINVAL},
    {NULL, "", NULL, -EINVAL},
    {"/a", "", NULL, -EINVAL},
    {"rel", "x", NULL, -EINVAL},
};

START_TEST(normalize_table)
{
	char out[PATH_MAX];
	long n = hx_path_normalize(norm_cases[_i].base, norm_cases[_i].path,
				   out, sizeof(out));

	if (!norm_cases[_i].want) {
		ck_assert_int_eq(n, norm_cases[_i].err);
		return;
	}
	ck_assert_int_ge(n, 0);
	ck_assert_str_eq(out, norm_cases[_i].want);
	ck_assert_int_eq(n, (long)strlen(norm_cases[_i].want));
}
END_TEST

START_TEST(normalize_lengths)
{
	static char in[PATH_MAX + 10], out[PATH_MAX];
	char small[8];

	ck_assert_int_eq(
	    hx_path_normalize(NULL, "/abcdefghij", small, sizeof(small)),
	    -ENAMETOOLONG);
	ck_assert_int_eq(
	    hx_path_normalize(NULL, "/abcdef", small, sizeof(small)), 7);
	ck_assert_int_eq(hx_path_normalize(NULL, "/abc", out, 3),
			 -ENAMETOOLONG);
	/* The kernel refuses a path of PATH_MAX bytes or more, even one
	 * that would normalize short: so does the normalizer. */
	memset(in, 'a', sizeof(in) - 1);
	in[0] = '/';
	ck_assert_int_eq(hx_path_normalize(NULL, in, out, sizeof(out)),
			 -ENAMETOOLONG);
	for (size_t i = 0; i + 3 < PATH_MAX; i += 3)
		memcpy(in + i, "/..", 3);
	in[PATH_MAX] = '\0';
	ck_assert_int_eq(hx_path_normalize(NULL, in, out, sizeof(out)),
			 -ENAMETOOLONG);
}
END_TEST

START_TEST(at_cwd_and_dirfd)
{
	char out[4096], tmpl[] = "/tmp/hxcommonXXXXXX", want[4096], old[4096];
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	ck_assert_ptr_nonnull(getcwd(old, sizeof(old)));
	ck_assert_int_eq(chdir(tmpl), 0);
	ck_assert_int_gt(hx_path_at(AT_FDCWD, "x/../y", out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/y", tmpl);
	ck_assert_str_eq(out, want);
	fd = open("/usr", O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_gt(hx_path_at(fd, "bin//ls", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/usr/bin/ls");
	ck_assert_int_gt(hx_path_at(fd, "/etc/./x", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/etc/x");
	ck_assert_int_gt(hx_path_of_fd(fd, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/usr");
	close(fd);
	ck_assert_int_eq(hx_path_at(987654, "rel", out, sizeof(out)), -EBADF);
	ck_assert_int_eq(hx_path_at(AT_FDCWD, "", out, sizeof(out)), -ENOENT);
	ck_assert_int_eq(chdir(old), 0);
	rmdir(tmpl);
}
END_TEST

/* The one spelling of an address, for the audit log and the notice. */
START_TEST(sockaddr_spellings)
{
	char b[HX_SOCKADDR_LEN], tiny[6];
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(443)};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6,
				   .sin6_port = htons(80)};
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	struct sockaddr_nl nl = {.nl_family = AF_NETLINK, .nl_pid = 7};
	size_t off = offsetof(struct sockaddr_un, sun_path);

	inet_pton(AF_INET, "1.2.3.4", &in.sin_addr);
	inet_pton(AF_INET6, "::1", &in6.sin6_addr);
	ck_assert_str_eq(hx_sockaddr_format(&in, sizeof(in), b, sizeof(b)),
			 "1.2.3.4:443");
	ck_assert_str_eq(hx_sockaddr_format(&in6, sizeof(in6), b, sizeof(b)),
			 "[::1]:80");
	strcpy(un.sun_path, "/run/x.sock");
	ck_assert_str_eq(hx_sockaddr_format(&un, sizeof(un), b, sizeof(b)),
			 "unix:/run/x.sock");
	memcpy(un.sun_path, "\0abs\n\\", 6);
	ck_assert_str_eq(hx_sockaddr_format(&un, off + 6, b, sizeof(b)),
			 "unix:@abs\\x0a\\\\");
	ck_assert_str_eq(hx_sockaddr_format(&un, off, b, sizeof(b)), "unix:");
	ck_assert_str_eq(hx_sockaddr_format(&nl, sizeof(nl), b, sizeof(b)),
			 "netlink:7");
	nl.nl_groups = 0x1a;
	ck_assert_str_eq(hx_sockaddr_format(&nl, sizeof(nl), b, sizeof(b)),
			 "netlink:7/groups=0x1a");
	ck_assert_str_eq(hx_sockaddr_format(&in, 4, b, sizeof(b)), "family:2");
	ck_assert_str_eq(hx_sockaddr_format(&in, 1, b, sizeof(b)), "invalid");
	ck_assert_str_eq(hx_sockaddr_format(NULL, 0, b, sizeof(b)), "invalid");
	/* Truncated, still terminated. */
	ck_assert_str_eq(
	    hx_sockaddr_format(&in, sizeof(in), tiny, sizeof(tiny)), "1.2.3");
}
END_TEST

/* An address is spelled once: the notice does not escape its text
 * again (a backslash of an abstract name stays one escape). */
START_TEST(notice_spells_an_address_once)
{
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	size_t off = offsetof(struct sockaddr_un, sun_path);
	char addr[HX_SOCKADDR_LEN], line[256];
	struct hx_notice n = {.op = HX_OP_CONNECT,
			      .verdict = HX_VERDICT_DENY,
			      .target = addr,
			      .spelled = true,
			      .rule = "r"};

	memcpy(un.sun_path, "\0a\\b", 4);
	hx_sockaddr_format(&un, off + 4, addr, sizeof(addr));
	hx_notice_format(line, sizeof(line), &n);
	ck_assert_str_eq(line,
			 "harness: denied connect unix:@a\\\\b (rule r; the "
			 "policy refuses it: do not retry)\n");
	n.spelled = false;
	n.target = "/p\\q";
	hx_notice_format(line, sizeof(line), &n);
	ck_assert_str_eq(line, "harness: denied connect /p\\\\q (rule r; the "
			       "policy refuses it: do not retry)\n");
}
END_TEST

/* A kernel layer's refusal of an op harness has no name for (Landlock's
 * ptrace scope) is named by its target alone, not "denied ? ptrace". */
START_TEST(notice_names_an_op_outside_the_table)
{
	struct hx_notice n = {.op = HX_OP_COUNT,
			      .verdict = HX_VERDICT_DENY,
			      .target = "ptrace",
			      .rule = "harness:landlock"};
	char line[256];

	hx_notice_format(line, sizeof(line), &n);
	ck_assert_str_eq(line, "harness: denied ptrace (rule harness:landlock; "
			       "the policy refuses it: do not retry)\n");
}
END_TEST

static Suite *common_suite(void)
{
	Suite *s = suite_create("common");
	TCase *tc = tcase_create("path");

	tcase_add_loop_test(tc, normalize_table, 0,
			    (int)(sizeof(norm_cases) / sizeof(*norm_cases)));
	tcase_add_test(tc, normalize_lengths);
	tcase_add_test(tc, at_cwd_and_dirfd);
	tcase_add_test(tc, sockaddr_spellings);
	tcase_add_test(tc, notice_spells_an_address_once);
	tcase_add_test(tc, notice_names_an_op_outside_the_table);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(common_suite)
