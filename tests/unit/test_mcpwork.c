/* harness-mcp-worker (tools/mcpwork/): the pure parts by tables (text,
 * framing, decoding, patches) and the file tools in a temporary
 * directory; test_mcpwork_run.c drives the loop and code_run. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/check_main.h"
#include "tools/mcpwork/bounds.h"
#include "tools/mcpwork/fileops.h"
#include "tools/mcpwork/patch.h"
#include "tools/mcpwork/search.h"
#include "tools/mcpwork/text.h"
#include "tools/mcpwork/walk.h"
#include "tools/mcpwork/wire.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- text ---- */

static const struct {
	const char *s;
	size_t n;
	bool ok;
	size_t bad;
} utf8_cases[] = {
    {"plain", 5, true, 0},
    {"caf\xc3\xa9", 5, true, 0},
    {"\xe2\x82\xac \xf0\x9f\x98\x80", 8, true, 0},
    {"a\xff", 2, false, 1},
    {"\xc0\xaf", 2, false, 0},	       /* overlong '/' */
    {"x\xed\xa0\x80", 4, false, 1},    /* a surrogate */
    {"\xf4\x90\x80\x80", 4, false, 0}, /* past U+10FFFF */
    {"ab\xe2\x82", 4, false, 2},       /* cut short */
    {"nul\0ok", 6, true, 0},
};

START_TEST(utf8_table)
{
	size_t i, bad;

	for (i = 0; i < N(utf8_cases); i++) {
		bad = 99;
		ck_assert_msg(hx_mw_text_utf8_valid(utf8_cases[i].s,
						    utf8_cases[i].n,
						    &bad) == utf8_cases[i].ok,
			      "case %zu", i);
		if (!utf8_cases[i].ok)
			ck_assert_uint_eq(bad, utf8_cases[i].bad);
	}
	/* A cut keeps whole characters only. */
	ck_assert_uint_eq(hx_mw_text_utf8_cut("ab\xe2\x82", 4), 2);
	ck_assert_uint_eq(hx_mw_text_utf8_cut("ab\xe2\x82\xac", 5), 5);
	ck_assert_uint_eq(hx_mw_text_utf8_cut("ab\xf0\x9f\x98", 5), 2);
	ck_assert_uint_eq(hx_mw_text_utf8_cut("abc", 3), 3);
}
END_TEST

START_TEST(lossy_and_base64)
{
	char *out;
	size_t n;

	ck_assert_int_eq(hx_mw_text_lossy("a\xffz", 3, &out, &n), 1);
	ck_assert_str_eq(out, "a\xef\xbf\xbdz");
	free(out);
	ck_assert_int_eq(hx_mw_text_lossy("ok", 2, &out, &n), 0);
	ck_assert_str_eq(out, "ok");
	free(out);
	out = hx_mw_text_b64_encode("\xff\xfe\x00", 3, &n);
	ck_assert_str_eq(out, "//4A");
	free(out);
	ck_assert_int_eq(hx_mw_text_b64_decode("//4A", 4, &out, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(memcmp(out, "\xff\xfe\x00", 3), 0);
	free(out);
	ck_assert_int_eq(hx_mw_text_b64_decode("!!", 2, &out, &n), -EINVAL);
}
END_TEST

/* A range selected from a file fed in chunks of every size. */
static const struct {
	bool lines;
	uint64_t a, b;
	size_t max;
	const char *want;
	uint64_t first;
} sel_cases[] = {
    {false, 0, UINT64_MAX, 100, "l1\nl2\nl3", 0},
    {false, 3, 5, 100, "l2", 3},
    {false, 3, UINT64_MAX, 4, "l2\nl", 3},
    {false, 50, UINT64_MAX, 100, "", 0},
    {true, 2, 2, 100, "l2\n", 3},
    {true, 2, UINT64_MAX, 100, "l2\nl3", 3},
    {true, 3, 9, 100, "l3", 6},
    {true, 1, 2, 4, "l1\nl", 0},
    {true, 4, 5, 100, "", 0},
};

START_TEST(range_selection)
{
	const char *f = "l1\nl2\nl3";
	size_t i, chunk, off;

	for (i = 0; i < N(sel_cases); i++) {
		for (chunk = 1; chunk <= 8; chunk++) {
			struct hx_mw_text_sel s = {.lines = sel_cases[i].lines,
						   .a = sel_cases[i].a,
						   .b = sel_cases[i].b,
						   .max = sel_cases[i].max};

			for (off = 0; off < 8; off += chunk)
				ck_assert_int_eq(
				    hx_mw_text_sel_feed(
					&s, f + off,
					8 - off < chunk ? 8 - off : chunk),
				    0);
			ck_assert_uint_eq(s.len, strlen(sel_cases[i].want));
			ck_assert_msg(!memcmp(s.buf ? s.buf : "",
					      sel_cases[i].want, s.len),
				      "case %zu chunk %zu", i, chunk);
			if (s.len)
				ck_assert_uint_eq(s.first, sel_cases[i].first);
			ck_assert_uint_eq(hx_mw_text_sel_total_lines(&s), 3);
			ck_assert(s.over == (sel_cases[i].max == 4));
			free(s.buf);
		}
	}
}
END_TEST

/* ---- framing and decoding ---- */

struct lines_seen {
	char got[8][80];
	bool long_[8];
	int n;
};

static void collect(void *ctx, char *p, size_t n, bool too_long)
{
	struct lines_seen *l = ctx;

	ck_assert_int_lt(l->n, 8);
	snprintf(l->got[l->n], sizeof(l->got[0]), "%.*s", (int)n, p);
	l->long_[l->n++] = too_long;
}

START_TEST(framer_splits_and_bounds)
{
	struct hx_mw_wire_framer f = {.max = 16};
	struct lines_seen l = {0};
	const char *in = "{\"a\":1}\n{\"b\"";
	char big[40];

	ck_assert_int_eq(hx_mw_wire_feed(&f, in, strlen(in), collect, &l), 0);
	ck_assert_int_eq(l.n, 1);
	ck_assert_str_eq(l.got[0], "{\"a\":1}");
	ck_assert_int_eq(hx_mw_wire_feed(&f, ":2}\n", 4, collect, &l), 0);
	ck_assert_str_eq(l.got[1], "{\"b\":2}");
	/* 17 bytes without '\n' in two pieces: reported once, with its
	 * start, then dropped up to its end; the next line is whole. */
	memset(big, 'x', sizeof(big));
	memcpy(big, "{\"id\":7,", 8);
	ck_assert_int_eq(hx_mw_wire_feed(&f, big, 10, collect, &l), 0);
	ck_assert_int_eq(hx_mw_wire_feed(&f, big + 10, 30, collect, &l), 0);
	ck_assert_int_eq(l.n, 3);
	ck_assert(l.long_[2]);
	ck_assert(!strncmp(l.got[2], "{\"id\":7,", 8));
	ck_assert_int_eq(hx_mw_wire_feed(&f, "yyy\nok\n", 7, collect, &l), 0);
	ck_assert_int_eq(l.n, 4);
	ck_assert_str_eq(l.got[3], "ok");
	ck_assert(!l.long_[3]);
	/* Exactly max bytes is a line. */
	ck_assert_int_eq(
	    hx_mw_wire_feed(&f, "0123456789abcdef\n", 17, collect, &l), 0);
	ck_assert_str_eq(l.got[4], "0123456789abcdef");
	ck_assert(!l.long_[4]);
	hx_mw_wire_framer_free(&f);
}
END_TEST

static const struct {
	const char *line;
	enum hx_mw_msg_kind kind;
	bool has_id;
	uint64_t id;
} parse_cases[] = {
    {"{\"id\":3,\"tool\":\"file_read\",\"args\":{}}", HX_MW_MSG_REQUEST, true,
     3},
    {"{\"cancel\":9}", HX_MW_MSG_CANCEL, false, 9},
    {"{\"exit\":true}", HX_MW_MSG_EXIT, false, 0},
    {"{\"exit\":false}", HX_MW_MSG_BAD, false, 0},
    {"not json", HX_MW_MSG_BAD, false, 0},
    {"{\"id\":5,\"tool\":", HX_MW_MSG_BAD, true, 5},
    {"{\"id\":5,\"tool\":1,\"args\":{}}", HX_MW_MSG_BAD, true, 5},
    {"{\"id\":5,\"tool\":\"x\",\"args\":[]}", HX_MW_MSG_BAD, true, 5},
    {"{\"id\":5,\"tool\":\"x\",\"args\":{},\"more\":1}", HX_MW_MSG_BAD, true,
     5},
    {"{\"id\":-1,\"tool\":\"x\",\"args\":{}}", HX_MW_MSG_BAD, false, 0},
    {"{\"id\":\"5\",\"tool\":\"x\",\"args\":{}}", HX_MW_MSG_BAD, false, 0},
    {"{\"cancel\":\"x\"}", HX_MW_MSG_BAD, false, 0},
    {"[1]", HX_MW_MSG_BAD, false, 0},
    {"{\"id\":1,\"id\":2,\"tool\":\"x\",\"args\":{}}", HX_MW_MSG_BAD, true, 1},
};

START_TEST(parse_table)
{
	struct hx_mw_msg m;
	size_t i;

	for (i = 0; i < N(parse_cases); i++) {
		hx_mw_wire_parse(parse_cases[i].line,
				 strlen(parse_cases[i].line), &m);
		ck_assert_msg(m.kind == parse_cases[i].kind, "case %zu: %d", i,
			      m.kind);
		ck_assert_msg(m.has_id == parse_cases[i].has_id, "case %zu", i);
		if (m.has_id || m.kind == HX_MW_MSG_CANCEL)
			ck_assert_uint_eq(m.id, parse_cases[i].id);
		if (m.kind == HX_MW_MSG_BAD)
			ck_assert(m.why[0]);
		hx_mw_wire_msg_clear(&m);
	}
}
END_TEST

START_TEST(peek_id_table)
{
	uint64_t id;

	ck_assert_int_eq(hx_mw_wire_peek_id("{\"id\":42,\"x", 11, &id), 0);
	ck_assert_uint_eq(id, 42);
	ck_assert_int_eq(hx_mw_wire_peek_id(" { \"id\" : 7 }", 13, &id), 0);
	ck_assert_uint_eq(id, 7);
	ck_assert_int_eq(hx_mw_wire_peek_id("{\"id\":42", 8, &id), 0);
	ck_assert_int_eq(hx_mw_wire_peek_id("{\"tool\":1", 9, &id), -1);
	ck_assert_int_eq(hx_mw_wire_peek_id("{\"id\":x", 7, &id), -1);
	ck_assert_int_eq(hx_mw_wire_peek_id("{\"id\":012,", 10, &id), -1);
	ck_assert_int_eq(
	    hx_mw_wire_peek_id("{\"id\":99999999999999999999,", 27, &id), -1);
	ck_assert_int_eq(
	    hx_mw_wire_peek_id("{\"id\":9223372036854775807,", 26, &id), 0);
	ck_assert_int_eq(
	    hx_mw_wire_peek_id("{\"id\":9223372036854775808,", 26, &id), -1);
}
END_TEST

START_TEST(reply_too_long_is_an_error)
{
	int sv[2];
	char *big = malloc(HX_MW_LINE_MAX + 2), buf[512];
	json_t *body, *m;
	ssize_t n;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	memset(big, 'a', HX_MW_LINE_MAX + 1);
	big[HX_MW_LINE_MAX + 1] = 0;
	body = json_pack("{s:s}", "content", big);
	free(big);
	ck_assert_int_eq(hx_mw_wire_reply(sv[0], 12, false, body), 0);
	n = read(sv[1], buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(buf[n - 1], '\n');
	ck_assert_ptr_null(memchr(buf, '\n', (size_t)n - 1));
	m = json_loadb(buf, (size_t)n, 0, NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(json_integer_value(json_object_get(m, "id")), 12);
	ck_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(m, "error"), "errno")),
			 "E2BIG");
	json_decref(m);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/* ---- patches ---- */

static const char *const base = "one\ntwo\nthree\nfour\nfive\nsix\n";

static const struct {
	const char *src, *diff, *want; /* want NULL: must fail */
	unsigned hunk;		       /* the failing hunk */
	size_t line;		       /* the failing line, 0: any */
	const char *why;	       /* in the message */
} diff_cases[] = {
    /* at the stated line, headers ignored */
    {NULL, "--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n two\n-three\n+THREE\n",
     "one\ntwo\nTHREE\nfour\nfive\nsix\n", 0, 0, NULL},
    /* two hunks; counts omitted mean 1 */
    {NULL, "@@ -1 +1 @@\n-one\n+ONE\n@@ -6 +6,2 @@\n six\n+seven\n",
     "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\n", 0, 0, NULL},
    /* stated 2 lines off: found by the offset search */
    {NULL, "@@ -2,2 +2,1 @@\n four\n-five\n", "one\ntwo\nthree\nfour\nsix\n", 0,
     0, NULL},
    /* pure insertion after line 0 (the top) */
    {NULL, "@@ -0,0 +1,1 @@\n+zero\n",
     "zero\none\ntwo\nthree\nfour\nfive\nsix\n", 0, 0, NULL},
    /* an empty context line written without its space */
    {"a\n\nb\n", "@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n", "a\n\nB\n", 0, 0, NULL},
    /* no newline at the end, on both sides */
    {"x\ny", "@@ -2 +2,2 @@\n-y\n\\ No newline at end of file\n+y\n+z\n",
     "x\ny\nz\n", 0, 0, NULL},
    {"x\ny\n", "@@ -2 +2 @@\n-y\n+Y\n\\ No newline at end of file\n", "x\nY", 0,
     0, NULL},
    /* the second hunk's context does not match: it is named */
    {NULL, "@@ -1 +1 @@\n-one\n+ONE\n@@ -4,2 +4,2 @@\n four\n-FIVE\n+5\n", NULL,
     2, 5, "expected \"FIVE\" at line 5, found \"five\""},
    /* a hunk may not go back before the previous one */
    {NULL, "@@ -5 +5 @@\n-five\n+5\n@@ -1 +1 @@\n-one\n+1\n", NULL, 2, 0,
     "hunk 2"},
    /* malformed */
    {NULL, "no hunk at all\n", NULL, 0, 0, "no @@ hunk"},
    {NULL, "@@ -1,2 +1,2 @@\n one\n", NULL, 1, 0, "short"},
    {NULL, "@@ -1 +1 @@\n-one\n+1\n+2\n", NULL, 1, 0, "counts"},
    {NULL, "@@ -x +1 @@\n-one\n", NULL, 1, 0, "bad header"},
    {NULL, "@@ -1 +1 @@\n-one\n+1\n--- b\n+++ b\n", NULL, 1, 0,
     "one file only"},
    /* past the end */
    {"a\n", "@@ -1,2 +1,2 @@\n a\n-b\n+c\n", NULL, 1, 2, "has 1 lines"},
};

START_TEST(diff_table)
{
	struct hx_mw_patch_fail f;
	size_t i, n;
	unsigned hunks;
	char *out;
	int rc;

	for (i = 0; i < N(diff_cases); i++) {
		const char *src = diff_cases[i].src ? diff_cases[i].src : base;

		out = NULL;
		rc = hx_mw_patch_diff(src, strlen(src), diff_cases[i].diff,
				      strlen(diff_cases[i].diff), 1 << 20, &out,
				      &n, &hunks, &f);
		if (diff_cases[i].want) {
			ck_assert_msg(rc == 0, "case %zu: %s", i, f.why);
			ck_assert_msg(n == strlen(diff_cases[i].want) &&
					  !memcmp(out, diff_cases[i].want, n),
				      "case %zu: got %.*s", i, (int)n, out);
			free(out);
			continue;
		}
		ck_assert_msg(rc == -EINVAL, "case %zu: %d", i, rc);
		ck_assert_ptr_null(out);
		ck_assert_uint_eq(f.hunk, diff_cases[i].hunk);
		if (diff_cases[i].line)
			ck_assert_uint_eq(f.line, diff_cases[i].line);
		ck_assert_msg(strstr(f.why, diff_cases[i].why), "case %zu: %s",
			      i, f.why);
	}
}
END_TEST

START_TEST(diff_bounded_output)
{
	struct hx_mw_patch_fail f;
	unsigned hunks;
	char *out = NULL;
	size_t n;

	ck_assert_int_eq(hx_mw_patch_diff("a\n", 2,
					  "@@ -1 +1,2 @@\n a\n+bbbb\n", 23, 4,
					  &out, &n, &hunks, &f),
			 -EFBIG);
	ck_assert_ptr_null(out);
}
END_TEST

static const struct {
	const char *search, *replace;
	bool all;
} edits_ok[] = {{"two\n", "2\n", false}, {"e", "E", true}, {"x", "", true}};

START_TEST(edits_table)
{
	struct hx_mw_patch_edit e[3];
	struct hx_mw_patch_fail f;
	char *out = NULL;
	size_t i, n;

	/* In order, each on the result of the ones before. */
	for (i = 0; i < 2; i++)
		e[i] = (struct hx_mw_patch_edit){
		    edits_ok[i].search, edits_ok[i].replace,
		    strlen(edits_ok[i].search), strlen(edits_ok[i].replace),
		    edits_ok[i].all};
	ck_assert_int_eq(
	    hx_mw_patch_edits(base, strlen(base), e, 2, 1 << 20, &out, &n, &f),
	    0);
	ck_assert_str_eq(out, "onE\n2\nthrEE\nfour\nfivE\nsix\n");
	free(out);
	/* Missing: edit 3 fails, nothing is returned. */
	e[2] = (struct hx_mw_patch_edit){"zzz", "", 3, 0, true};
	out = NULL;
	ck_assert_int_eq(
	    hx_mw_patch_edits(base, strlen(base), e, 3, 1 << 20, &out, &n, &f),
	    -EINVAL);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(f.hunk, 3);
	ck_assert_ptr_nonnull(strstr(f.why, "not found"));
	/* Ambiguous without all: named, with where it was first found. */
	e[0] = (struct hx_mw_patch_edit){"o", "0", 1, 1, false};
	ck_assert_int_eq(
	    hx_mw_patch_edits(base, strlen(base), e, 1, 1 << 20, &out, &n, &f),
	    -EINVAL);
	ck_assert_uint_eq(f.hunk, 1);
	ck_assert_uint_eq(f.line, 1);
	ck_assert_ptr_nonnull(strstr(f.why, "found 3 times"));
	/* Empty search; an all that would grow past the bound. */
	e[0] = (struct hx_mw_patch_edit){"", "x", 0, 1, true};
	ck_assert_int_eq(
	    hx_mw_patch_edits(base, strlen(base), e, 1, 1 << 20, &out, &n, &f),
	    -EINVAL);
	e[0] = (struct hx_mw_patch_edit){"e", "eeeeeeee", 1, 8, true};
	ck_assert_int_eq(
	    hx_mw_patch_edits(base, strlen(base), e, 1, 40, &out, &n, &f),
	    -EFBIG);
}
END_TEST

/* ---- file tools, in a temporary directory ---- */

static char dir[64];
static json_t *res;

static void dir_setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/hx-mw-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	res = NULL;
}

static void dir_teardown(void)
{
	char cmd[256];

	json_decref(res);
	res = NULL;
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx %s; rm -rf %s", dir, dir);
	ck_assert_int_eq(system(cmd), 0);
}

static const char *at(const char *name)
{
	static char p[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static void put_file(const char *name, const char *s, size_t n)
{
	FILE *f = fopen(at(name), "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(s, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

static char *get_file(const char *name)
{
	static char buf[4096];
	FILE *f = fopen(at(name), "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Calls tool fn with args (a json_pack format and its values). */
#define CALL(fn, ...)                                                          \
	({                                                                     \
		json_t *a_ = json_pack(__VA_ARGS__);                           \
		int rc_;                                                       \
		ck_assert_ptr_nonnull(a_);                                     \
		json_decref(res);                                              \
		res = NULL;                                                    \
		rc_ = fn(a_, &res);                                            \
		json_decref(a_);                                               \
		ck_assert_ptr_nonnull(res);                                    \
		rc_;                                                           \
	})
#define GET(k) json_object_get(res, k)
#define STR(k) json_string_value(GET(k))
#define INT(k) json_integer_value(GET(k))

/* Temporary files left in the directory. */
static int temps(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "ls -A %s | grep -q hxtmp", dir);
	return system(cmd) == 0;
}

START_TEST(read_ranges)
{
	put_file("f", "l1\nl2\nl3\n", 9);
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s}", "path", at("f")), 0);
	ck_assert_str_eq(STR("content"), "l1\nl2\nl3\n");
	ck_assert_str_eq(STR("sha256"), "8f2b6a9cfba2207f332cf001304e81648aef"
					"2828d041ea880ae278c9c577a3b3");
	ck_assert_int_eq(INT("size"), 9);
	ck_assert(json_is_false(GET("truncated")));
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s, s:i, s:i}", "path",
			      at("f"), "offset", 3, "length", 2),
			 0);
	ck_assert_str_eq(STR("content"), "l2");
	ck_assert(json_is_true(GET("truncated")));
	/* The hash is the whole file's, whatever the range. */
	ck_assert_str_eq(STR("sha256"), "8f2b6a9cfba2207f332cf001304e81648aef"
					"2828d041ea880ae278c9c577a3b3");
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s, s:i, s:i}", "path",
			      at("f"), "start_line", 2, "end_line", 3),
			 0);
	ck_assert_str_eq(STR("content"), "l2\nl3\n");
	ck_assert_int_eq(INT("offset"), 3);
	ck_assert_int_eq(INT("end_line"), 3);
	ck_assert_int_eq(INT("total_lines"), 3);
	ck_assert(json_is_false(GET("truncated")));
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s, s:i, s:i}", "path",
			      at("f"), "start_line", 1, "max_bytes", 4),
			 0);
	ck_assert_str_eq(STR("content"), "l1\nl");
	ck_assert_int_eq(INT("end_line"), 2);
	ck_assert(json_is_true(GET("truncated")));
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s, s:i, s:i}", "path",
			      at("f"), "offset", 1, "start_line", 1),
			 -EINVAL);
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s, s:i, s:i}", "path",
			      at("f"), "start_line", 3, "end_line", 2),
			 -EINVAL);
	/* max_bytes cuts before a character it would split. */
	put_file("u", "a\xc3\xa9", 3);
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s, s:i}", "path", at("u"),
			      "max_bytes", 2),
			 0);
	ck_assert_str_eq(STR("content"), "a");
	ck_assert(json_is_true(GET("truncated")));
}
END_TEST

START_TEST(read_refusals)
{
	json_t *a;

	put_file("bin", "\xff\x00", 2);
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s}", "path", at("bin")),
			 -EILSEQ);
	ck_assert_str_eq(STR("errno"), "EILSEQ");
	ck_assert_int_eq(INT("code"), EILSEQ);
	ck_assert_ptr_nonnull(strstr(STR("message"), "base64"));
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s, s:s}", "path",
			      at("bin"), "encoding", "base64"),
			 0);
	ck_assert_str_eq(STR("content"), "/wA=");
	/* A FIFO without a writer would block an open for reading. */
	ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s}", "path", at("fifo")),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(STR("message"), "not a regular file"));
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s}", "path", dir),
			 -EISDIR);
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s}", "path", at("none")),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(STR("message"), at("none")));
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s}", "path", "rel/x"),
			 -EINVAL);
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s, s:b}", "path",
			      at("bin"), "junk", 1),
			 -EINVAL);
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s, s:s}", "path",
			      at("bin"), "max_bytes", "9"),
			 -EINVAL);
	a = json_pack("{s:s%}", "path", "/tmp/a\0b", (size_t)8);
	json_decref(res);
	ck_assert_int_eq(hx_mw_fileops_read(a, &res), -EINVAL);
	ck_assert_ptr_nonnull(strstr(STR("message"), "NUL"));
	json_decref(a);
}
END_TEST

START_TEST(write_modes_and_hashes)
{
	struct stat st;

	ck_assert_int_eq(CALL(hx_mw_fileops_write, "{s:s, s:s, s:s}", "path",
			      at("w"), "content", "", "mode", "create"),
			 0);
	ck_assert(json_is_true(GET("created")));
	ck_assert_str_eq(STR("sha256"), "e3b0c44298fc1c149afbf4c8996fb92427ae"
					"41e4649b934ca495991b7852b855");
	ck_assert_int_eq(CALL(hx_mw_fileops_write, "{s:s, s:s, s:s}", "path",
			      at("w"), "content", "x", "mode", "create"),
			 -EEXIST);
	ck_assert_int_eq(chmod(at("w"), 0640), 0);
	ck_assert_int_eq(
	    CALL(hx_mw_fileops_write, "{s:s, s:s, s:s}", "path", at("w"),
		 "content", "l1\nl2\nl3\n", "expected_sha256",
		 "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA4"
		 "95991B7852B855"),
	    0);
	ck_assert(json_is_false(GET("created")));
	ck_assert_str_eq(get_file("w"), "l1\nl2\nl3\n");
	ck_assert_int_eq(stat(at("w"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	/* A stale hash: refused with the actual one, nothing written. */
	ck_assert_int_eq(
	    CALL(hx_mw_fileops_write, "{s:s, s:s, s:s}", "path", at("w"),
		 "content", "lost", "expected_sha256",
		 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca"
		 "495991b7852b855"),
	    -ESTALE);
	ck_assert_str_eq(STR("errno"), "ESTALE");
	ck_assert_str_eq(STR("actual_sha256"), "8f2b6a9cfba2207f332cf001304e81"
					       "648aef2828d041ea880ae278c9c57"
					       "7a3b3");
	ck_assert_str_eq(get_file("w"), "l1\nl2\nl3\n");
	/* "": the file must not exist. */
	ck_assert_int_eq(CALL(hx_mw_fileops_write, "{s:s, s:s, s:s}", "path",
			      at("w"), "content", "x", "expected_sha256", ""),
			 -ESTALE);
	ck_assert_int_eq(CALL(hx_mw_fileops_write, "{s:s, s:s, s:s}", "path",
			      at("new"), "content", "x", "expected_sha256", ""),
			 0);
	ck_assert_int_eq(CALL(hx_mw_fileops_write, "{s:s, s:s, s:s}", "path",
			      at("w"), "content", "x", "expected_sha256", "zz"),
			 -EINVAL);
	/* Parents on request only; base64 content. */
	ck_assert_int_eq(CALL(hx_mw_fileops_write, "{s:s, s:s}", "path",
			      at("a/b/c"), "content", "x"),
			 -ENOENT);
	ck_assert_int_eq(CALL(hx_mw_fileops_write, "{s:s, s:s, s:s, s:b}",
			      "path", at("a/b/c"), "content",
			      "aGk=", "encoding", "base64", "create_dirs", 1),
			 0);
	ck_assert_str_eq(get_file("a/b/c"), "hi");
	ck_assert_int_eq(INT("bytes"), 2);
	ck_assert_int_eq(CALL(hx_mw_fileops_write, "{s:s, s:s}", "path", dir,
			      "content", "x"),
			 -EISDIR);
	ck_assert(!temps());
}
END_TEST

START_TEST(write_failure_leaves_nothing)
{
	struct rlimit old, rl;
	char big[100];
	int rc;

	put_file("f", "old\n", 4);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	/* A write past the file size limit fails half way (EFBIG); the
	 * limit is lifted before Check writes its own report. */
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	rl = (struct rlimit){20, old.rlim_max};
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	rc = CALL(hx_mw_fileops_write, "{s:s, s:s}", "path", at("f"), "content",
		  big);
	setrlimit(RLIMIT_FSIZE, &old);
	ck_assert_int_eq(rc, -EFBIG);
	ck_assert_ptr_nonnull(strstr(STR("message"), "nothing was changed"));
	ck_assert_str_eq(get_file("f"), "old\n");
	ck_assert(!temps());
	setrlimit(RLIMIT_FSIZE, &rl);
	rc = CALL(hx_mw_fileops_patch, "{s:s, s:[{s:s, s:s}]}", "path", at("f"),
		  "edits", "search", "old", "replace", big);
	setrlimit(RLIMIT_FSIZE, &old);
	ck_assert_int_eq(rc, -EFBIG);
	ck_assert_str_eq(get_file("f"), "old\n");
	ck_assert(!temps());
}
END_TEST

START_TEST(patch_all_or_nothing)
{
	const char *hex;
	char *before;

	put_file("p", base, strlen(base));
	ck_assert_int_eq(
	    CALL(
		hx_mw_fileops_patch, "{s:s, s:s}", "path", at("p"), "patch",
		"@@ -1 +1 @@\n-one\n+ONE\n@@ -4,2 +4,2 @@\n four\n-FIVE\n+5\n"),
	    -EINVAL);
	ck_assert_int_eq(INT("hunk"), 2);
	ck_assert_int_eq(INT("line"), 5);
	ck_assert_ptr_nonnull(strstr(STR("message"), "hunk 2"));
	ck_assert_str_eq(get_file("p"), base);
	ck_assert(!temps());
	ck_assert_int_eq(CALL(hx_mw_fileops_read, "{s:s}", "path", at("p")), 0);
	before = strdup(STR("sha256"));
	ck_assert_int_eq(CALL(hx_mw_fileops_patch, "{s:s, s:s, s:s}", "path",
			      at("p"), "patch", "@@ -2 +2 @@\n-two\n+TWO\n",
			      "expected_sha256", before),
			 0);
	ck_assert_int_eq(INT("hunks"), 1);
	hex = STR("sha256");
	ck_assert_str_ne(hex, before);
	ck_assert_str_eq(get_file("p"), "one\nTWO\nthree\nfour\nfive\nsix\n");
	/* The old hash is stale now. */
	ck_assert_int_eq(CALL(hx_mw_fileops_patch, "{s:s, s:s, s:s}", "path",
			      at("p"), "patch", "@@ -2 +2 @@\n-TWO\n+2\n",
			      "expected_sha256", before),
			 -ESTALE);
	free(before);
	ck_assert_int_eq(CALL(hx_mw_fileops_patch, "{s:s, s:[{s:s, s:s}]}",
			      "path", at("p"), "edits", "search", "o",
			      "replace", "0"),
			 -EINVAL);
	ck_assert_int_eq(INT("hunk"), 1);
	ck_assert_int_eq(CALL(hx_mw_fileops_patch, "{s:s}", "path", at("p")),
			 -EINVAL);
	ck_assert_int_eq(CALL(hx_mw_fileops_patch, "{s:s, s:s}", "path",
			      at("nope"), "patch", "@@ -1 +1 @@\n-a\n+b\n"),
			 -ENOENT);
	ck_assert_str_eq(get_file("p"), "one\nTWO\nthree\nfour\nfive\nsix\n");
}
END_TEST

static const char *entry(size_t i, const char *k)
{
	json_t *e = json_array_get(GET("entries"), i);

	return json_is_string(json_object_get(e, k))
		   ? json_string_value(json_object_get(e, k))
		   : "";
}

START_TEST(list_and_search)
{
	ck_assert_int_eq(mkdir(at("d"), 0755), 0);
	ck_assert_int_eq(mkdir(at("d/sub"), 0755), 0);
	ck_assert_int_eq(mkdir(at("d/locked"), 0755), 0);
	put_file("d/b.c", "int x;\nFOO bar\n", 15);
	put_file("d/a.txt", "foo\n", 4);
	put_file("d/.hidden", "foo\n", 4);
	put_file("d/sub/c.c", "no\nfoo here\n", 12);
	put_file("d/sub/bin.c", "foo\0\n", 5);
	ck_assert_int_eq(symlink("sub", at("d/link")), 0);
	ck_assert_int_eq(CALL(hx_mw_walk_list_dir, "{s:s, s:i}", "path",
			      at("d"), "depth", 2),
			 0);
	/* Sorted, the symlink not followed, hidden names left out. */
	ck_assert_uint_eq(json_array_size(GET("entries")), 7);
	ck_assert_str_eq(entry(0, "path"), "a.txt");
	ck_assert_str_eq(entry(1, "path"), "b.c");
	ck_assert_str_eq(entry(2, "path"), "link");
	ck_assert_str_eq(entry(2, "type"), "symlink");
	ck_assert_str_eq(entry(3, "path"), "locked");
	ck_assert_str_eq(entry(3, "type"), "dir");
	ck_assert_str_eq(entry(4, "path"), "sub");
	ck_assert_str_eq(entry(5, "path"), "sub/bin.c");
	ck_assert(json_is_false(GET("truncated")));
	ck_assert_int_eq(CALL(hx_mw_walk_list_dir, "{s:s, s:b, s:i}", "path",
			      at("d"), "include_hidden", 1, "max_entries", 2),
			 0);
	ck_assert_str_eq(entry(0, "path"), ".hidden");
	ck_assert(json_is_true(GET("truncated")));
	ck_assert_int_eq(CALL(hx_mw_walk_list_dir, "{s:s, s:i}", "path",
			      at("d"), "depth", 33),
			 -EINVAL);
	ck_assert_int_eq(
	    CALL(hx_mw_walk_list_dir, "{s:s}", "path", at("d/a.txt")),
	    -ENOTDIR);
	/* An unreadable directory is listed with its error (root reads
	 * it anyway: the check needs an ordinary user). */
	ck_assert_int_eq(chmod(at("d/locked"), 0), 0);
	if (geteuid() != 0) {
		ck_assert_int_eq(CALL(hx_mw_walk_list_dir, "{s:s, s:i}", "path",
				      at("d"), "depth", 2),
				 0);
		ck_assert_str_eq(entry(3, "path"), "locked");
		ck_assert_str_eq(entry(3, "error"), "EACCES");
		ck_assert_str_eq(entry(4, "path"), "sub");
	}
	ck_assert_int_eq(CALL(hx_mw_search_run, "{s:s, s:s}", "path", at("d"),
			      "pattern", "fo+"),
			 0);
	ck_assert_uint_eq(json_array_size(GET("matches")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(
			     json_array_get(GET("matches"), 1), "path")),
			 "sub/c.c");
	ck_assert_int_eq(json_integer_value(json_object_get(
			     json_array_get(GET("matches"), 1), "line")),
			 2);
	ck_assert_int_eq(INT("files_scanned"), 3); /* bin.c skipped */
	ck_assert_int_eq(CALL(hx_mw_search_run, "{s:s, s:s, s:b, s:s, s:i}",
			      "path", at("d"), "pattern", "foo", "ignore_case",
			      1, "glob", "**/*.c", "max_results", 1),
			 0);
	ck_assert_uint_eq(json_array_size(GET("matches")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(
			     json_array_get(GET("matches"), 0), "text")),
			 "FOO bar");
	ck_assert(json_is_true(GET("truncated")));
	ck_assert_int_eq(CALL(hx_mw_search_run, "{s:s, s:s}", "path", at("d"),
			      "glob", "*.c"),
			 0);
	ck_assert_uint_eq(json_array_size(GET("files")), 1);
	ck_assert_int_eq(CALL(hx_mw_search_run, "{s:s, s:s}", "path", at("d"),
			      "pattern", "("),
			 -EINVAL);
	ck_assert_int_eq(CALL(hx_mw_search_run, "{s:s}", "path", at("d")),
			 -EINVAL);
}
END_TEST

Suite *mcpwork_suite(void);
Suite *mcpwork_suite(void)
{
	Suite *s = suite_create("mcpwork");
	TCase *pure = tcase_create("pure"), *files = tcase_create("files");

	tcase_add_test(pure, utf8_table);
	tcase_add_test(pure, lossy_and_base64);
	tcase_add_test(pure, range_selection);
	tcase_add_test(pure, framer_splits_and_bounds);
	tcase_add_test(pure, parse_table);
	tcase_add_test(pure, peek_id_table);
	tcase_add_test(pure, reply_too_long_is_an_error);
	tcase_add_test(pure, diff_table);
	tcase_add_test(pure, diff_bounded_output);
	tcase_add_test(pure, edits_table);
	suite_add_tcase(s, pure);
	tcase_add_checked_fixture(files, dir_setup, dir_teardown);
	tcase_add_test(files, read_ranges);
	tcase_add_test(files, read_refusals);
	tcase_add_test(files, write_modes_and_hashes);
	tcase_add_test(files, write_failure_leaves_nothing);
	tcase_add_test(files, patch_all_or_nothing);
	tcase_add_test(files, list_and_search);
	suite_add_tcase(s, files);
	return s;
}

HX_TEST_MAIN(mcpwork_suite)
