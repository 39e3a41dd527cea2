/* harness-mcp's front (supervisor/mcp/): the embedded tool definitions
 * parse and use only the schema keywords that are checked; the schema
 * subset accepts and refuses as JSON Schema does, table-driven; a
 * call's arguments are refused for what a schema cannot say (NUL
 * bytes, a relative path climbing out, one of several forms); lines
 * are framed with a bound that costs one message, not the stream. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "supervisor/mcp/gittools.h"
#include "supervisor/mcp/lines.h"
#include "supervisor/mcp/schema.h"
#include "supervisor/mcp/tools.h"
#include "tests/unit/check_main.h"

static json_t *j(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);

	ck_assert_msg(v != NULL, "bad test JSON %s: %s", text, e.text);
	return v;
}

START_TEST(tools_load_and_list)
{
	size_t n, i;
	const struct hx_tool *t;
	json_t *d;
	char err[160];

	ck_assert_int_eq(hx_tools_load(), 0);
	t = hx_tools_all(&n);
	ck_assert_uint_eq(json_array_size(hx_tools_list()), n);
	for (i = 0; i < n; i++) {
		ck_assert_ptr_eq(hx_tool_find(t[i].name), &t[i]);
		ck_assert_msg(hx_schema_supported(
				  json_object_get(t[i].def, "outputSchema"),
				  err, sizeof(err)),
			      "%s: %s", t[i].name, err);
	}
	json_array_foreach(hx_tools_list(), i, d)
	{
		ck_assert(json_is_string(json_object_get(d, "description")));
		ck_assert(json_is_object(json_object_get(d, "annotations")));
	}
	ck_assert_ptr_null(hx_tool_find("no_such_tool"));
}
END_TEST

static const struct {
	const char *schema, *value;
	bool ok;
} schema_table[] = {
    {"{\"type\":\"string\"}", "\"x\"", true},
    {"{\"type\":\"string\"}", "1", false},
    {"{\"type\":\"integer\"}", "2", true},
    {"{\"type\":\"integer\"}", "2.0", true},
    {"{\"type\":\"integer\"}", "2.5", false},
    {"{\"type\":[\"integer\",\"null\"]}", "null", true},
    {"{\"type\":[\"integer\",\"null\"]}", "\"1\"", false},
    {"{\"type\":\"integer\",\"minimum\":1}", "0", false},
    {"{\"type\":\"integer\",\"maximum\":3}", "4", false},
    {"{\"type\":\"string\",\"maxLength\":2}", "\"\\u00e9\\u00e9\"", true},
    {"{\"type\":\"string\",\"maxLength\":2}", "\"abc\"", false},
    {"{\"type\":\"string\",\"minLength\":1}", "\"\"", false},
    {"{\"enum\":[\"a\",\"b\"]}", "\"b\"", true},
    {"{\"enum\":[\"a\",\"b\"]}", "\"c\"", false},
    {"{\"type\":\"array\",\"items\":{\"type\":\"string\"}}", "[\"a\",1]",
     false},
    {"{\"type\":\"array\",\"maxItems\":1}", "[1,2]", false},
    {"{\"type\":\"array\",\"minItems\":1}", "[]", false},
    {"{\"type\":\"object\",\"required\":[\"p\"]}", "{}", false},
    {"{\"type\":\"object\",\"properties\":{\"p\":{\"type\":\"string\"}},"
     "\"additionalProperties\":false}",
     "{\"p\":\"x\",\"q\":1}", false},
    {"{\"type\":\"object\",\"properties\":{\"p\":{\"type\":\"string\"}}}",
     "{\"p\":\"x\",\"q\":1}", true},
    {"{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}",
     "{\"a\":\"x\",\"b\":2}", false},
    {"{\"type\":\"object\",\"properties\":{\"e\":{\"type\":\"array\","
     "\"items\":{\"type\":\"object\",\"required\":[\"s\"]}}}}",
     "{\"e\":[{\"s\":1},{}]}", false},
};

START_TEST(schema_subset)
{
	char err[256];

	for (size_t i = 0; i < sizeof(schema_table) / sizeof(schema_table[0]);
	     i++) {
		json_t *s = j(schema_table[i].schema);
		json_t *v = j(schema_table[i].value);
		bool got = hx_schema_check(s, v, "arguments", err, sizeof(err));

		ck_assert_msg(got == schema_table[i].ok, "%s against %s: %s",
			      schema_table[i].value, schema_table[i].schema,
			      got ? "accepted" : err);
		json_decref(s);
		json_decref(v);
	}
}
END_TEST

START_TEST(schema_says_where)
{
	json_t *s = j("{\"type\":\"object\",\"properties\":{\"edits\":{"
		      "\"type\":\"array\",\"items\":{\"type\":\"object\","
		      "\"properties\":{\"search\":{\"type\":\"string\"}}}}}}");
	json_t *v = j("{\"edits\":[{\"search\":\"a\"},{\"search\":2}]}");
	char err[256];

	ck_assert(!hx_schema_check(s, v, "arguments", err, sizeof(err)));
	ck_assert_str_eq(err, "arguments.edits[1].search: must be string");
	json_decref(s);
	json_decref(v);
	s = j("{\"type\":\"string\",\"pattern\":\"x\"}");
	ck_assert(!hx_schema_supported(s, err, sizeof(err)));
	json_decref(s);
}
END_TEST

static bool prepare(const char *tool, const char *args, json_t **out, char *err,
		    size_t len)
{
	json_t *a = j(args);
	bool ok = hx_tool_prepare(hx_tool_find(tool), a, "/p/q", out, err, len);

	json_decref(a);
	return ok;
}

START_TEST(prepare_refuses_what_schemas_cannot_say)
{
	static const struct {
		const char *tool, *args, *why;
	} bad[] = {
	    {"file_read", "{\"path\":\"a\\u0000b\"}", "NUL"},
	    {"code_run", "{\"command\":\"ls\",\"env\":{\"X\":\"a\\u0000\"}}",
	     "NUL"},
	    {"file_read", "{\"path\":\"../../etc/passwd\"}", "climb"},
	    {"file_read", "{\"path\":\"a/../../b\"}", "climb"},
	    {"file_read", "{\"path\":\"x\",\"offset\":1,\"start_line\":2}",
	     "not both"},
	    {"code_run", "{\"command\":\"ls\",\"argv\":[\"ls\"]}", "exactly"},
	    {"code_run", "{\"language\":\"python\"}", "together"},
	    {"code_run", "{}", "exactly"},
	    {"file_patch", "{\"path\":\"x\"}", "exactly one of patch"},
	    {"search", "{\"path\":\".\"}", "glob"},
	    {"file_read", "{\"path\":\"x\",\"extra\":1}", "not a known"},
	    {"file_write",
	     "{\"path\":\"x\",\"content\":\"K=\u00abredacted:aws:"
	     "1a2b3c4d\u00bb\"}",
	     "tag"},
	    {"file_patch",
	     "{\"path\":\"x\",\"edits\":[{\"search\":\"a\",\"replace\":"
	     "\"\u00abredacted:jwt:00000000\u00bb\"}]}",
	     "tag"},
	};
	json_t *out;
	char err[512];

	ck_assert_int_eq(hx_tools_load(), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(
		    !prepare(bad[i].tool, bad[i].args, &out, err, sizeof(err)),
		    "%s accepted", bad[i].args);
		ck_assert_msg(strstr(err, bad[i].why), "%s: %s", bad[i].args,
			      err);
		ck_assert_ptr_null(out);
	}
}
END_TEST

START_TEST(prepare_makes_paths_absolute)
{
	json_t *out;
	char err[256];
	const char *argv[8];

	ck_assert_int_eq(hx_tools_load(), 0);
	ck_assert(prepare("file_read", "{\"path\":\"a/./b/../c\"}", &out, err,
			  sizeof(err)));
	ck_assert_str_eq(hx_tool_path(hx_tool_find("file_read"), out),
			 "/p/q/a/c");
	json_decref(out);
	ck_assert(prepare("file_read", "{\"path\":\"/etc/../etc/hosts\"}", &out,
			  err, sizeof(err)));
	ck_assert_str_eq(json_string_value(json_object_get(out, "path")),
			 "/etc/hosts");
	json_decref(out);
	ck_assert(prepare("code_run", "{\"language\":\"node\",\"code\":\"1\"}",
			  &out, err, sizeof(err)));
	ck_assert_str_eq(json_string_value(json_object_get(out, "cwd")),
			 "/p/q");
	ck_assert_uint_eq(hx_tool_run_argv(out, argv, 8), 3);
	ck_assert_str_eq(argv[0], "node");
	ck_assert_str_eq(argv[1], "-e");
	json_decref(out);
	ck_assert(prepare("code_run", "{\"command\":\"ls\",\"cwd\":\"sub\"}",
			  &out, err, sizeof(err)));
	ck_assert_str_eq(json_string_value(json_object_get(out, "cwd")),
			 "/p/q/sub");
	ck_assert_uint_eq(hx_tool_run_argv(out, argv, 8), 3);
	ck_assert_str_eq(argv[2], "ls");
	json_decref(out);
}
END_TEST

START_TEST(lines_bounded_per_message)
{
	int sv[2];
	struct hx_lines l;
	char *line, big[100];
	size_t len;

	ck_assert_int_eq(
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	hx_lines_init(&l, sv[0], sv[0], 16, 64);
	ck_assert_int_eq(hx_lines_next(&l, &line, &len), HX_LINES_NONE);
	ck_assert_int_eq(write(sv[1], "ab", 2), 2);
	ck_assert_int_eq(hx_lines_next(&l, &line, &len), HX_LINES_NONE);
	ck_assert_int_eq(write(sv[1], "c\nd", 3), 3);
	ck_assert_int_eq(hx_lines_next(&l, &line, &len), HX_LINES_LINE);
	ck_assert_str_eq(line, "abc");
	memset(big, 'x', sizeof(big));
	ck_assert_int_eq(write(sv[1], big, sizeof(big)), sizeof(big));
	ck_assert_int_eq(write(sv[1], "\nok\n", 4), 4);
	for (int i = 0; i < 8; i++) {
		enum hx_lines_got g = hx_lines_next(&l, &line, &len);

		if (g == HX_LINES_NONE)
			continue;
		ck_assert_int_eq(g, HX_LINES_TOO_LONG); /* "d" + 100 x */
		break;
	}
	ck_assert_int_eq(hx_lines_next(&l, &line, &len), HX_LINES_LINE);
	ck_assert_str_eq(line, "ok");
	/* output: queued past what the peer reads, bounded */
	ck_assert_int_eq(hx_lines_write(&l, "hello", 5), 0);
	ck_assert_int_eq(read(sv[1], big, sizeof(big)), 6);
	ck_assert_int_eq(hx_lines_write(&l, big, 64), -ENOBUFS);
	close(sv[1]);
	ck_assert_int_eq(hx_lines_next(&l, &line, &len), HX_LINES_EOF);
	hx_lines_free(&l);
	close(sv[0]);
}
END_TEST

START_TEST(git_tools_run_fixed_argvs)
{
	json_t *a = j("{\"from\":2,\"to\":5}"), *run, *res, *err;
	json_t *argv;

	run = hx_gittool_run("diff", a, "S1", "/p");
	argv = json_object_get(run, "argv");
	ck_assert_str_eq(json_string_value(json_array_get(argv, 0)), "git");
	ck_assert_str_eq(
	    json_string_value(json_array_get(argv, json_array_size(argv) - 2)),
	    "refs/harness/S1/checkpoints/2");
	ck_assert_str_eq(
	    json_string_value(json_array_get(argv, json_array_size(argv) - 1)),
	    "refs/harness/S1/checkpoints/5");
	ck_assert_str_eq(json_string_value(json_object_get(run, "cwd")), "/p");
	json_decref(run);
	json_decref(a);
	/* against the working tree: a script, the ref its only operand */
	a = j("{}");
	run = hx_gittool_run("diff", a, "S1", "/p");
	argv = json_object_get(run, "argv");
	ck_assert_str_eq(json_string_value(json_array_get(argv, 0)), "sh");
	ck_assert_str_eq(json_string_value(json_array_get(argv, 4)),
			 "refs/harness/S1/checkpoints/0");
	json_decref(run);
	json_decref(a);
	/* exit 3 of restore: no such checkpoint; 0: restored */
	a = j("{\"checkpoint\":7}");
	run = j("{\"exit_code\":3,\"stderr\":\"\"}");
	ck_assert_int_eq(hx_gittool_result("restore", a, run, &res, &err), -1);
	ck_assert_ptr_null(res);
	ck_assert_str_eq(json_string_value(json_object_get(err, "errno")),
			 "ENOENT");
	json_decref(err);
	json_decref(run);
	run = j("{\"exit_code\":0}");
	ck_assert_int_eq(hx_gittool_result("restore", a, run, &res, &err), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(res, "checkpoint")),
			 7);
	json_decref(res);
	json_decref(run);
	/* killed: no exit code is no success */
	run = j("{\"exit_code\":null,\"stderr\":\"\"}");
	ck_assert_int_eq(hx_gittool_result("diff", a, run, &res, &err), -1);
	json_decref(err);
	json_decref(run);
	json_decref(a);
}
END_TEST

static Suite *mcp_suite(void)
{
	Suite *s = suite_create("mcp");
	TCase *tc = tcase_create("front");

	tcase_add_test(tc, tools_load_and_list);
	tcase_add_test(tc, schema_subset);
	tcase_add_test(tc, schema_says_where);
	tcase_add_test(tc, prepare_refuses_what_schemas_cannot_say);
	tcase_add_test(tc, prepare_makes_paths_absolute);
	tcase_add_test(tc, lines_bounded_per_message);
	tcase_add_test(tc, git_tools_run_fixed_argvs);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(mcp_suite)
