/* What a grant holds for (supervisor/grants.h), table-driven, and the
 * grants file's round trip: append, load, revoke, a malformed line
 * skipped and kept. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/grants.h"
#include "tests/unit/check_main.h"

static const char *const push[] = {"git", "push", "origin", "main"};
static const char *const push_force[] = {"git", "push", "--force"};
static const char *const status_argv[] = {"git", "status"};
static const char *const gh_names[] = {"github.com"};

struct match_case {
	const char *grant; /* JSON */
	struct hx_ask_subject s;
	bool holds;
};

#define EXEC_S(p, v)                                                           \
	{                                                                      \
		.op = HX_OP_EXEC, .path = (p), .argv = (v),                    \
		.argc = sizeof(v) / sizeof(*(v))                               \
	}

static const struct match_case cases[] = {
    /* exec: argv word by word, a last "**" takes the rest */
    {"{\"kind\":\"exec\",\"path\":\"/usr/bin/git\",\"argv\":[\"push\",\"**\"]}",
     EXEC_S("/usr/bin/git", push), true},
    {"{\"kind\":\"exec\",\"path\":\"/usr/bin/git\",\"argv\":[\"push\",\"**\"]}",
     EXEC_S("/usr/bin/git", push_force), true},
    {"{\"kind\":\"exec\",\"path\":\"/usr/bin/git\",\"argv\":[\"push\",\"**\"]}",
     EXEC_S("/usr/bin/git", status_argv), false},
    {"{\"kind\":\"exec\",\"path\":\"/usr/bin/git\",\"argv\":[\"push\","
     "\"origin\",\"main\"]}",
     EXEC_S("/usr/bin/git", push), true},
    {"{\"kind\":\"exec\",\"path\":\"/usr/bin/git\",\"argv\":[\"push\","
     "\"origin\",\"main\"]}",
     EXEC_S("/usr/bin/git", push_force), false},
    /* exact argv: no word more */
    {"{\"kind\":\"exec\",\"path\":\"/usr/bin/git\",\"argv\":[\"push\"]}",
     EXEC_S("/usr/bin/git", push), false},
    /* another file named git is not /usr/bin/git */
    {"{\"kind\":\"exec\",\"path\":\"/usr/bin/git\",\"argv\":[\"push\",\"**\"]}",
     EXEC_S("/home/u/bin/git", push), false},
    /* files: the glob and the access */
    {"{\"kind\":\"file\",\"access\":\"write\",\"glob\":\"/p/build/**\"}",
     {.op = HX_OP_WRITE, .path = "/p/build/a/b.o"},
     true},
    {"{\"kind\":\"file\",\"access\":\"write\",\"glob\":\"/p/build/**\"}",
     {.op = HX_OP_UNLINK, .path = "/p/build/a/b.o"},
     false},
    {"{\"kind\":\"file\",\"access\":\"write\",\"glob\":\"/p/build/**\"}",
     {.op = HX_OP_WRITE, .path = "/p/buildx"},
     false},
    /* a rename: both ends under the glob */
    {"{\"kind\":\"file\",\"access\":\"rename\",\"glob\":\"/p/**\"}",
     {.op = HX_OP_RENAME, .path = "/p/a", .path2 = "/etc/x"},
     false},
    {"{\"kind\":\"file\",\"access\":\"rename\",\"glob\":\"/p/**\"}",
     {.op = HX_OP_RENAME, .path = "/p/a", .path2 = "/p/b"},
     true},
    /* net: by a name it was resolved from, or the address */
    {"{\"kind\":\"net\",\"target\":\"github.com:443\"}",
     {.op = HX_OP_CONNECT,
      .addr = "140.82.112.3:443",
      .port = 443,
      .names = gh_names,
      .nnames = 1},
     true},
    {"{\"kind\":\"net\",\"target\":\"github.com:443\"}",
     {.op = HX_OP_CONNECT, .addr = "140.82.112.3:443", .port = 443},
     false},
    {"{\"kind\":\"net\",\"target\":\"github.com:443\"}",
     {.op = HX_OP_CONNECT,
      .addr = "140.82.112.3:22",
      .port = 22,
      .names = gh_names,
      .nnames = 1},
     false},
    {"{\"kind\":\"net\",\"target\":\"10.0.0.1:80\"}",
     {.op = HX_OP_CONNECT, .addr = "10.0.0.1:80", .port = 80},
     true},
};

START_TEST(grant_holds_for_what_it_names)
{
	const struct match_case *c = &cases[_i];
	json_t *arr = json_array(), *g = json_loads(c->grant, 0, NULL);

	ck_assert_ptr_nonnull(g);
	json_object_set_new(g, "id", json_string("g-t"));
	json_object_set_new(g, "verdict", json_string("allow"));
	json_array_append_new(arr, g);
	ck_assert_msg((hx_grants_match(arr, &c->s) != NULL) == c->holds,
		      "case %d: %s", _i, c->grant);
	json_decref(arr);
}
END_TEST

/* A grant made from an answer holds for the same call again, and for
 * another file put at the path it does not. */
START_TEST(answer_grant_is_bound_to_the_file)
{
	char dir[] = "/tmp/hx-grants-XXXXXX", tool[64];
	struct hx_ask_subject s = EXEC_S(NULL, push);
	json_t *arr = json_array(), *g;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(tool, sizeof(tool), "%s/git", dir);
	f = fopen(tool, "w");
	fputs("#!/bin/sh\n", f);
	fclose(f);
	s.path = tool;
	g = hx_grant_new(&s, HX_VERDICT_ALLOW, HX_ASK_ALWAYS, 1, NULL);
	ck_assert_ptr_nonnull(g);
	ck_assert_str_eq(json_string_value(json_object_get(g, "kind")), "exec");
	ck_assert(json_is_integer(json_object_get(g, "ctime_ns")));
	json_array_append_new(arr, g);
	ck_assert_ptr_nonnull(hx_grants_match(arr, &s));
	s.argv = push_force; /* --prefix 1: "push" and anything after */
	s.argc = 3;
	ck_assert_ptr_nonnull(hx_grants_match(arr, &s));
	/* replaced: new file, perhaps the old inode number */
	unlink(tool);
	f = fopen(tool, "w");
	fputs("#!/bin/sh\necho other\n", f);
	fclose(f);
	ck_assert_ptr_null(hx_grants_match(arr, &s));
	unlink(tool);
	rmdir(dir);
	json_decref(arr);
}
END_TEST

START_TEST(grants_file_round_trip)
{
	char dir[] = "/tmp/hx-grants-XXXXXX", path[64], err[256];
	struct hx_ask_subject w = {.op = HX_OP_WRITE, .path = "/p/a[1]"};
	json_t *arr = json_array(), *g1, *g2;
	struct stat st;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/grants.jsonl", dir);
	g1 = hx_grant_new(&w, HX_VERDICT_DENY, HX_ASK_ALWAYS, 0, NULL);
	g2 = hx_grant_new(&w, HX_VERDICT_ALLOW, HX_ASK_ALWAYS, 0, "/p");
	/* a literal path's metacharacters are escaped; a dir is all of it */
	ck_assert_str_eq(json_string_value(json_object_get(g1, "glob")),
			 "/p/a\\[1\\]");
	ck_assert_str_eq(json_string_value(json_object_get(g2, "glob")),
			 "/p/*");
	ck_assert_int_eq(hx_grants_append(path, g1), 0);
	f = fopen(path, "a");
	fputs("{not json\n", f);
	fclose(f);
	ck_assert_int_eq(hx_grants_append(path, g2), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(hx_grants_load(path, arr, err, sizeof(err)), 0);
	ck_assert_uint_eq(json_array_size(arr), 2);
	ck_assert_ptr_nonnull(strstr(err, ":2: "));
	ck_assert_ptr_eq(hx_grants_match(arr, &w), json_array_get(arr, 0));
	ck_assert_int_eq(hx_grants_revoke(path, json_string_value(
						    json_object_get(g1, "id"))),
			 0);
	ck_assert_int_eq(hx_grants_revoke(path, "g-none"), -ENOENT);
	json_array_clear(arr);
	ck_assert_int_eq(hx_grants_load(path, arr, NULL, 0), 0);
	ck_assert_uint_eq(json_array_size(arr), 1);
	/* the malformed line is kept, not lost */
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	{
		char line[512];
		int n = 0;

		while (fgets(line, sizeof(line), f))
			n++;
		ck_assert_int_eq(n, 2);
	}
	fclose(f);
	/* a symlink is never followed */
	unlink(path);
	ck_assert_int_eq(symlink("/etc/passwd", path), 0);
	ck_assert_int_eq(hx_grants_append(path, g1), -ELOOP);
	unlink(path);
	rmdir(dir);
	json_decref(g1);
	json_decref(g2);
	json_decref(arr);
}
END_TEST

static Suite *grants_suite(void)
{
	Suite *s = suite_create("grants");
	TCase *tc = tcase_create("grants");

	tcase_add_loop_test(tc, grant_holds_for_what_it_names, 0,
			    (int)(sizeof(cases) / sizeof(*cases)));
	tcase_add_test(tc, answer_grant_is_bound_to_the_file);
	tcase_add_test(tc, grants_file_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(grants_suite)
