/* Audit log: the chain over N records verifies; each kind of tampering
 * is found at the right line with the right reason. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/audit.h"
#include "tools/audit_cli.h"
#include "supervisor/export/logline.h"
#include "supervisor/export/logscan.h"
#include "supervisor/sha256.h"
#include "tests/unit/check_main.h"

#define N 20

static char dir[64], path[128];
static char *lines[N + 4];
static size_t nlines;

/* FIPS 180-2 vectors: the chain is plain SHA-256, which any tool can
 * recompute. */
/* The members summary and tree read off a line: top level only, strings
 * whose quotes, braces and commas are escaped or quoted skipped whole,
 * nested objects too; anything that is not an object refused. */
START_TEST(logscan_reads_members_off_the_line)
{
	static const char line[] =
	    "{\"time\":\"t\",\"pid\":42,\"args\":{\"path\":\"/a,\\\"}{b\","
	    "\"argv\":[\"x\",\"y]\"]},\"exe\":\"/bin/\\u00e9\",\"ok\":true,"
	    "\"verdict\":\"deny\"}\n";
	const char *const keys[] = {"pid", "path", "args", "verdict",
				    "exe", "ok",   "none"};
	struct hx_span m[7], a[2];
	char buf[64];

	ck_assert_int_eq(hx_scan_members(line, strlen(line), keys, 7, m), 0);
	ck_assert_int_eq(hx_span_int(&m[0], -1), 42);
	ck_assert_ptr_null(m[1].p); /* args.path is not a top member */
	ck_assert(hx_span_is(&m[3], "deny"));
	ck_assert(!hx_span_is(&m[3], "den"));
	ck_assert_str_eq(hx_span_str(&m[4], buf, sizeof(buf)), "/bin/\xc3\xa9");
	ck_assert(m[5].n == 4 && !memcmp(m[5].p, "true", 4));
	ck_assert_ptr_null(m[6].p);
	ck_assert_int_eq(hx_scan_members(m[2].p, m[2].n,
					 (const char *const[]){"path", "argv"},
					 2, a),
			 0);
	ck_assert_str_eq(hx_span_str(&a[0], buf, sizeof(buf)), "/a,\"}{b");
	ck_assert_int_eq((int)a[1].n, (int)strlen("[\"x\",\"y]\"]"));
	ck_assert_int_eq(hx_span_int(&a[1], -7), -7);
	ck_assert_int_eq(hx_scan_members("[1]", 3, keys, 7, m), -1);
	ck_assert_int_eq(hx_scan_members("{\"a\":\"open", 10, keys, 7, m), -1);
	ck_assert_int_eq(hx_scan_members("{\"a\" 1}", 7, keys, 7, m), -1);
}
END_TEST

START_TEST(sha256_vectors)
{
	const char *line =
	    "{\"seq\":1,\"prev\":\"x\",\"hash\":\""
	    "0000000000000000000000000000000000000000000000000000"
	    "000000000000\"}";
	char hex[65];

	hx_sha256_hex("", 0, hex);
	ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934c"
			      "a495991b7852b855");
	hx_sha256_hex2("a", 1, "bc", 2, hex);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9c"
			      "b410ff61f20015ad");
	ck_assert_int_eq(hx_audit_line_hash(line, strlen(line), hex), 0);
	ck_assert_str_eq(hex, "b4d4dcd8b338551ab258edeac660d09cd9b08553ceeb0364"
			      "606ef10ccf958591");
}
END_TEST

static void write_log(int n, const char *last_event)
{
	struct hx_audit *a;
	uint64_t seq, base;

	ck_assert_int_eq(hx_audit_open(path, &a), 0);
	base = hx_audit_last_seq(a);
	for (int i = 0; i < n; i++) {
		json_t *r = json_object();

		json_object_set_new(r, "session", json_string("t"));
		json_object_set_new(r, "pid", json_integer(100 + i));
		json_object_set_new(r, "event",
				    json_string(i == n - 1 && last_event
						    ? last_event
						    : "openat"));
		json_object_set_new(r, "verdict",
				    json_string(i % 3 ? "allow" : "deny"));
		ck_assert_int_eq(hx_audit_append(a, r, &seq), 0);
		ck_assert_uint_eq(seq, base + (uint64_t)i + 1);
		json_decref(r);
	}
	ck_assert_int_eq(hx_audit_close(a), 0);
}

static void load_lines(void)
{
	FILE *f = fopen(path, "r");
	size_t cap = 0;
	char *l = NULL;

	ck_assert_ptr_nonnull(f);
	nlines = 0;
	while (getline(&l, &cap, f) > 0 && nlines < N + 4) {
		lines[nlines++] = l;
		l = NULL;
		cap = 0;
	}
	free(l);
	fclose(f);
}

static void store_lines(void)
{
	FILE *f = fopen(path, "w");

	for (size_t i = 0; i < nlines; i++)
		fputs(lines[i], f);
	fclose(f);
}

static void setup(void)
{
	strcpy(dir, "/tmp/hx-test-audit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	nlines = 0;
}

static void teardown(void)
{
	for (size_t i = 0; i < nlines; i++)
		free(lines[i]);
	nlines = 0;
	unlink(path);
	rmdir(dir);
}

static void expect_broken(uint64_t line, uint64_t seq, const char *reason)
{
	struct hx_audit_verify v;

	ck_assert_int_eq(hx_audit_verify(path, &v), 1);
	ck_assert_uint_eq(v.bad_line, line);
	ck_assert_uint_eq(v.bad_seq, seq);
	ck_assert_str_eq(v.reason, reason);
}

START_TEST(chain_verifies)
{
	struct hx_audit_verify v;

	write_log(N, "session_end");
	ck_assert_int_eq(hx_audit_verify(path, &v), 0);
	ck_assert_uint_eq(v.records, N);
	ck_assert_uint_eq(v.last_seq, N);
	ck_assert(v.last_is_end);
	ck_assert_uint_eq(strlen(v.last_hash), 64);
}
END_TEST

START_TEST(record_layout)
{
	json_t *j;
	const char *key;
	json_t *val;
	int i = 0;
	size_t n;

	write_log(2, NULL);
	load_lines();
	n = strlen(lines[0]);
	ck_assert_int_eq(lines[0][n - 1], '\n');
	ck_assert_ptr_nonnull(strstr(lines[0], "\"prev\":\""
					       "0000000000"));
	j = json_loads(lines[1], 0, NULL);
	ck_assert_ptr_nonnull(j);
	/* time, seq first; prev, hash last; nothing null. */
	json_object_foreach(j, key, val)
	{
		if (i == 0)
			ck_assert_str_eq(key, "time");
		if (i == 1)
			ck_assert_str_eq(key, "seq");
		ck_assert(!json_is_null(val));
		i++;
	}
	ck_assert_int_eq(i, 8);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "seq")), 2);
	ck_assert_ptr_nonnull(strstr(lines[1], "\",\"prev\":\""));
	ck_assert_ptr_nonnull(strstr(lines[1], "\",\"hash\":\""));
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(j, "time"))),
			  strlen("2026-12-01T07:40:00.123456Z"));
	json_decref(j);
}
END_TEST

START_TEST(edited_byte)
{
	char *p;

	write_log(N, "session_end");
	load_lines();
	p = strstr(lines[6], "\"pid\":106");
	ck_assert_ptr_nonnull(p);
	p[7] = '7'; /* 106 -> 107 */
	store_lines();
	expect_broken(7, 7, "hash mismatch (record edited)");
}
END_TEST

START_TEST(edited_hash)
{
	size_t n;

	write_log(N, "session_end");
	load_lines();
	n = strlen(lines[3]);
	lines[3][n - 5] = lines[3][n - 5] == 'a' ? 'b' : 'a';
	store_lines();
	expect_broken(4, 4, "hash mismatch (record edited)");
}
END_TEST

START_TEST(deleted_record)
{
	write_log(N, "session_end");
	load_lines();
	free(lines[9]);
	memmove(&lines[9], &lines[10], (nlines - 10) * sizeof(lines[0]));
	nlines--;
	store_lines();
	/* line 10 now holds seq 11, whose prev is seq 10's hash */
	expect_broken(10, 11, "prev mismatch (record deleted or reordered)");
}
END_TEST

START_TEST(deleted_first_record)
{
	write_log(N, "session_end");
	load_lines();
	free(lines[0]);
	memmove(&lines[0], &lines[1], (nlines - 1) * sizeof(lines[0]));
	nlines--;
	store_lines();
	expect_broken(1, 2, "prev mismatch (record deleted or reordered)");
}
END_TEST

START_TEST(swapped_records)
{
	char *t;

	write_log(N, "session_end");
	load_lines();
	t = lines[4];
	lines[4] = lines[5];
	lines[5] = t;
	store_lines();
	expect_broken(5, 6, "prev mismatch (record deleted or reordered)");
}
END_TEST

START_TEST(truncated_last_line)
{
	size_t n;

	write_log(N, "session_end");
	load_lines();
	n = strlen(lines[N - 1]);
	lines[N - 1][n / 2] = '\0';
	store_lines();
	expect_broken(N, 0, "torn line");
}
END_TEST

START_TEST(garbage_appended)
{
	write_log(N, "session_end");
	load_lines();
	lines[nlines++] = strdup("garbage\n");
	store_lines();
	expect_broken(N + 1, 0, "not JSON");
}
END_TEST

START_TEST(seq_gap_with_valid_hash)
{
	/* A forger who recomputes the hash but skips a number. */
	json_t *j;
	char *s, *line, hex[65];
	size_t n;

	write_log(3, NULL);
	load_lines();
	j = json_loads(lines[2], 0, NULL);
	json_object_del(j, "hash");
	json_object_set_new(j, "seq", json_integer(9));
	s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	n = strlen(s);
	ck_assert_int_ge(
	    asprintf(&line, "%.*s,\"hash\":\"%064d\"}", (int)n - 1, s, 0), 0);
	ck_assert_int_eq(hx_audit_line_hash(line, strlen(line), hex), 0);
	memcpy(line + strlen(line) - 66, hex, 64);
	free(lines[2]);
	ck_assert_int_ge(asprintf(&lines[2], "%s\n", line), 0);
	store_lines();
	expect_broken(3, 9, "seq gap");
	free(line);
	free(s);
	json_decref(j);
}
END_TEST

START_TEST(resume_continues_chain)
{
	struct hx_audit_verify v;

	write_log(3, NULL);
	write_log(2, "session_end");
	ck_assert_int_eq(hx_audit_verify(path, &v), 0);
	ck_assert_uint_eq(v.records, 5);
}
END_TEST

/* The last record is read back from the end in growing windows (4 KiB,
 * 64 KiB, 1 MiB): a log resumes after a last record of any size up to
 * that, one that starts on a window's first byte included, and a longer
 * one is refused, never taken for a shorter line. */
static void append_sized(size_t size)
{
	struct hx_audit *a;
	char *big = malloc(size + 1);
	json_t *r = json_object();
	uint64_t seq;

	memset(big, 'x', size);
	big[size] = '\0';
	ck_assert_int_eq(hx_audit_open(path, &a), 0);
	json_object_set_new(r, "event", json_string("openat"));
	json_object_set_new(r, "pad", json_string(big));
	ck_assert_int_eq(hx_audit_append(a, r, &seq), 0);
	ck_assert_int_eq(hx_audit_close(a), 0);
	json_decref(r);
	free(big);
}

START_TEST(resume_after_long_records)
{
	static const size_t sizes[] = {3000, 4096 - 151, 4096 - 150,
				       5000, 70000,	 900000};
	struct hx_audit_verify v;
	struct hx_audit *a;

	write_log(2, NULL);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		append_sized(sizes[i]);
	write_log(1, "session_end");
	ck_assert_int_eq(hx_audit_verify(path, &v), 0);
	ck_assert_uint_eq(v.records, 9);
	append_sized(1100000);
	ck_assert_int_eq(hx_audit_open(path, &a), -EBADMSG);
}
END_TEST

START_TEST(resume_refuses_torn_log)
{
	struct hx_audit *a;
	FILE *f;

	write_log(3, NULL);
	f = fopen(path, "a");
	fputs("{\"time\":\"x\",\"se", f);
	fclose(f);
	ck_assert_int_eq(hx_audit_open(path, &a), -EBADMSG);
}
END_TEST

START_TEST(not_end_warns)
{
	struct hx_audit_verify v;

	write_log(3, NULL);
	ck_assert_int_eq(hx_audit_verify(path, &v), 0);
	ck_assert(!v.last_is_end);
}
END_TEST

static int run_cli(const char *cmd, const char *opt, char **out)
{
	char *argv[] = {(char *)"harness-audit", (char *)cmd, path, (char *)opt,
			NULL};
	size_t len;
	FILE *o = open_memstream(out, &len), *e = fopen("/dev/null", "w");
	int r = hx_audit_cli(opt ? 4 : 3, argv, o, e);

	fclose(o);
	fclose(e);
	return r;
}

/* A full file system cuts a record short: the bytes that made it are
 * cut off again, so the log verifies and the chain can go on. In a
 * child: RLIMIT_FSIZE stands for the full disk. */
static int short_write_child(bool closing)
{
	struct rlimit lim = {6000, 6000};
	struct hx_audit_verify v;
	struct hx_audit *a;
	struct stat st;
	uint64_t seq = 0;
	int r = 0, i;

	signal(SIGXFSZ, SIG_IGN);
	if (hx_audit_open(path, &a))
		return 10;
	if (setrlimit(RLIMIT_FSIZE, &lim))
		return 11;
	if (closing)
		hx_audit_closing(a); /* past the reserve's check */
	for (i = 0; i < 1000 && !r; i++) {
		json_t *rec =
		    json_pack("{s:s, s:s}", "event", "open", "pad",
			      "0123456789012345678901234567890123456789");

		r = hx_audit_append(a, rec, &seq);
		json_decref(rec);
	}
	/* Refused before writing (the reserve does not fit under the
	 * limit) or cut off after a short write: either way EFBIG. */
	if (r != -EFBIG)
		return 12;
	if (stat(path, &st) || (closing && st.st_size < 5800))
		return 13;
	if (hx_audit_verify(path, &v) || v.records != seq)
		return 14;
	hx_audit_close(a);
	return 0;
}

START_TEST(short_write_cut_off)
{
	for (int closing = 0; closing < 2; closing++) {
		int st;
		pid_t pid;

		unlink(path);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0)
			_exit(short_write_child(closing));
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "closing=%d: child status %d", closing, st);
	}
}
END_TEST

START_TEST(cli_verify_messages)
{
	char *out, want[256];

	write_log(N, "session_end");
	ck_assert_int_eq(run_cli("verify", NULL, &out), 0);
	snprintf(want, sizeof(want), "%s: ok, %d records, chain intact", path,
		 N);
	ck_assert_ptr_nonnull(strstr(out, want));
	free(out);
	load_lines();
	free(lines[9]);
	memmove(&lines[9], &lines[10], (nlines - 10) * sizeof(lines[0]));
	nlines--;
	store_lines();
	ck_assert_int_eq(run_cli("verify", NULL, &out), 1);
	snprintf(want, sizeof(want),
		 "%s:10: record seq 11: prev mismatch (record deleted or "
		 "reordered)\n",
		 path);
	ck_assert_str_eq(out, want);
	free(out);
}
END_TEST

START_TEST(cli_summary_and_show)
{
	char *out;
	char *argv[] = {(char *)"harness-audit",
			(char *)"show",
			path,
			(char *)"--verdict",
			(char *)"deny",
			(char *)"--pid",
			(char *)"103",
			NULL};
	size_t len;
	FILE *o, *e;

	write_log(N, "session_end");
	ck_assert_int_eq(run_cli("summary", NULL, &out), 0);
	ck_assert_ptr_nonnull(strstr(out, "20 records"));
	free(out);
	o = open_memstream(&out, &len);
	e = fopen("/dev/null", "w");
	ck_assert_int_eq(hx_audit_cli(7, argv, o, e), 0);
	fclose(o);
	fclose(e);
	ck_assert_ptr_nonnull(strstr(out, "\"pid\":103"));
	ck_assert_ptr_null(strchr(strchr(out, '\n') + 1, '\n'));
	free(out);
	ck_assert_int_eq(run_cli("show", "--bogus", &out), 2);
	free(out);
	ck_assert_int_eq(run_cli("verify", "--help", &out), 2);
	free(out);
}
END_TEST

/* The policy tools read a record without its stack, and nothing else
 * is lost: a frame or an argv holding "]" or the key's own text. */
START_TEST(logline_drops_only_the_stack)
{
	char line[] =
	    "{\"op\":\"exec\",\"args\":{\"argv\":[\"a]\",\","
	    "\\\"stack\\\":[\"]},\"stack\":[\"x+0x1 f<]>\",\"\\\"]\"],"
	    "\"hash\":\"h\"}\n";
	json_t *r = hx_logline_parse(line, strlen(line)), *argv;

	ck_assert_ptr_nonnull(r);
	argv = json_object_get(json_object_get(r, "args"), "argv");
	ck_assert_uint_eq(json_array_size(argv), 2);
	ck_assert_str_eq(json_string_value(json_array_get(argv, 0)), "a]");
	ck_assert_str_eq(json_string_value(json_array_get(argv, 1)),
			 ",\"stack\":[");
	ck_assert_uint_eq(json_array_size(json_object_get(r, "stack")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(r, "hash")), "h");
	json_decref(r);
}
END_TEST

/* The key of a decision: what the policy tools judge, nothing else. */
START_TEST(logline_key_is_the_decision)
{
	const char *a = "{\"time\":\"t1\",\"seq\":1,\"event\":\"open\","
			"\"op\":\"write\",\"args\":{\"path\":\"/p/a\",\"x\":"
			"{\"y\":\"}\"}},\"verdict\":\"allow\",\"rule\":\"r\","
			"\"hash\":\"h1\"}";
	const char *b = "{\"time\":\"t2\",\"seq\":2,\"event\":\"open\","
			"\"op\":\"write\",\"args\":{\"path\":\"/p/a\",\"x\":"
			"{\"y\":\"}\"}},\"verdict\":\"allow\",\"rule\":\"r\","
			"\"hash\":\"h2\"}";
	/* another path, spelled to look like the key's own fields */
	const char *c =
	    "{\"time\":\"t3\",\"event\":\"open\",\"op\":"
	    "\"write\",\"args\":{\"path\":\"/p/a\\\",\\\"op\\\":\"},"
	    "\"verdict\":\"allow\",\"rule\":\"r\"}";
	char ka[512], kb[512], kc[512];

	ck_assert_int_gt(hx_logline_key(a, strlen(a), ka, sizeof(ka)), 0);
	ck_assert_int_gt(hx_logline_key(b, strlen(b), kb, sizeof(kb)), 0);
	ck_assert_int_gt(hx_logline_key(c, strlen(c), kc, sizeof(kc)), 0);
	ck_assert_str_eq(ka, kb); /* time, seq and hash are no part */
	ck_assert_str_ne(ka, kc);
	ck_assert_ptr_nonnull(strstr(ka, "{\"y\":\"}\"}}"));
	/* not the log's compact form: nothing is keyed */
	ck_assert_int_eq(
	    hx_logline_key("{\"event\": \"open\"}", 18, ka, sizeof(ka)), -1);
	ck_assert_int_eq(hx_logline_key(a, strlen(a), ka, 8), -1);
}
END_TEST

/* The line as the chain has always written it: a new object of "time",
 * "seq", the record's other members and "prev", dumped by jansson. */
static char *reference_line(json_t *record, uint64_t seq, const char *prev)
{
	json_t *o = json_object(), *val;
	const char *key;
	char *s, *line;
	char hex[65];

	json_object_set(o, "time", json_object_get(record, "time"));
	json_object_set_new(o, "seq", json_integer((json_int_t)seq));
	json_object_foreach(record, key, val)
	{
		if (strcmp(key, "time") && strcmp(key, "seq") &&
		    strcmp(key, "prev") && strcmp(key, "hash"))
			json_object_set(o, key, val);
	}
	json_object_set_new(o, "prev", json_string(prev));
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	ck_assert_ptr_nonnull(s);
	hx_sha256_hex(s, strlen(s), hex);
	ck_assert_int_ne(asprintf(&line, "%.*s,\"hash\":\"%s\"}\n",
				  (int)strlen(s) - 1, s, hex),
			 -1);
	free(s);
	return line;
}

/* Every kind of value jansson holds, each control byte, quotes and
 * backslashes in values and keys, a NUL inside a string, non-ASCII,
 * reals, the extreme integers, nesting past the writer's depth, the
 * chain's own names in the record: the line is jansson's, byte for
 * byte. */
START_TEST(line_text_is_janssons)
{
	static const char prev[] =
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	json_t *r = json_object(), *deep = json_array(), *d = deep;
	char ctl[64], *line, *want, hex[65];
	size_t n = 0, len;

	for (int c = 1; c < 0x20; c++)
		ctl[n++] = (char)c;
	memcpy(ctl + n, "\"\\/\x7f", 4);
	n += 4;
	json_object_set_new(r, "time",
			    json_string("2026-12-07T07:54:30.289835Z"));
	json_object_set_new(r, "seq", json_integer(99));
	json_object_set_new(r, "controls", json_stringn(ctl, n));
	json_object_set_new(r, "nul", json_stringn("a\0b", 3));
	json_object_set_new(
	    r, "utf8", json_string("\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x80\xa8"));
	json_object_set_new(r, "empty", json_string(""));
	json_object_set_new(r, "k\"e\\y\n", json_true());
	json_object_set_new(r, "f", json_false());
	json_object_set_new(r, "z", json_null());
	json_object_set_new(r, "min", json_integer(INT64_MIN));
	json_object_set_new(r, "max", json_integer(INT64_MAX));
	json_object_set_new(
	    r, "reals", json_pack("[f,f,f,f,f]", 1.5, 1e300, -0.0, 3.0, 0.1));
	json_object_set_new(r, "nest",
			    json_pack("{s:{},s:[],s:[{s:[i,s]}]}", "o", "a",
				      "x", "y", 1, "two"));
	json_object_set_new(r, "prev", json_string("not this one"));
	json_object_set_new(r, "hash", json_string("nor this"));
	for (int i = 0; i < 40; i++) {
		json_t *next = json_array();

		json_array_append_new(d, json_integer(i));
		json_array_append_new(d, next);
		d = next;
	}
	json_object_set_new(r, "deep", deep);
	line = hx_audit_line(r, 7, prev, &len, hex);
	want = reference_line(r, 7, prev);
	ck_assert_ptr_nonnull(line);
	ck_assert_uint_eq(len, strlen(want));
	ck_assert_str_eq(line, want);
	ck_assert_int_eq(hx_audit_line_hash(line, len - 1, hex), 0);
	free(line);
	free(want);
	json_decref(r);
}
END_TEST

/* A string that is not UTF-8 (only json_stringn_nocheck makes one)
 * fails the line, as it fails jansson's dump: no line that jq cannot
 * read. Each of the byte sequences at UTF-8's edges goes the way
 * jansson's own check takes it. */
START_TEST(line_text_refuses_what_jansson_refuses)
{
	static const char *const seqs[] = {
	    "\x80",
	    "\xc0\x80",
	    "\xc1\xbf",
	    "\xc2\x80",
	    "\xdf\xbf",
	    "\xe0\x9f\xbf",
	    "\xe0\xa0\x80",
	    "\xed\x9f\xbf",
	    "\xed\xa0\x80",
	    "\xed\xbf\xbf",
	    "\xee\x80\x80",
	    "\xef\xbf\xbf",
	    "\xf0\x8f\xbf\xbf",
	    "\xf0\x90\x80\x80",
	    "\xf4\x8f\xbf\xbf",
	    "\xf4\x90\x80\x80",
	    "\xf5\x80\x80\x80",
	    "\xff",
	    "\xe2\x82",
	    "a\xc3",
	    "\xc3(",
	};
	static const char prev[] =
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

	for (size_t i = 0; i < sizeof(seqs) / sizeof(*seqs); i++) {
		json_t *r = json_object();
		char *line, *want, hex[65];
		size_t len;

		json_object_set_new(r, "time", json_string("t"));
		json_object_set_new(
		    r, "s", json_stringn_nocheck(seqs[i], strlen(seqs[i])));
		want = json_dumps(r, JSON_COMPACT);
		line = hx_audit_line(r, 1, prev, &len, hex);
		if (!want) {
			ck_assert_msg(!line, "sequence %zu written: %s", i,
				      line);
		} else {
			free(want);
			want = reference_line(r, 1, prev);
			ck_assert_ptr_nonnull(line);
			ck_assert_str_eq(line, want);
			free(want);
		}
		free(line);
		json_decref(r);
	}
}
END_TEST

static Suite *audit_suite(void)
{
	Suite *s = suite_create("audit");
	TCase *tc = tcase_create("chain");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sha256_vectors);
	tcase_add_test(tc, logscan_reads_members_off_the_line);
	tcase_add_test(tc, logline_drops_only_the_stack);
	tcase_add_test(tc, logline_key_is_the_decision);
	tcase_add_test(tc, chain_verifies);
	tcase_add_test(tc, record_layout);
	tcase_add_test(tc, edited_byte);
	tcase_add_test(tc, edited_hash);
	tcase_add_test(tc, deleted_record);
	tcase_add_test(tc, deleted_first_record);
	tcase_add_test(tc, swapped_records);
	tcase_add_test(tc, truncated_last_line);
	tcase_add_test(tc, garbage_appended);
	tcase_add_test(tc, seq_gap_with_valid_hash);
	tcase_add_test(tc, resume_continues_chain);
	tcase_add_test(tc, resume_refuses_torn_log);
	tcase_add_test(tc, resume_after_long_records);
	tcase_add_test(tc, not_end_warns);
	tcase_add_test(tc, short_write_cut_off);
	tcase_add_test(tc, cli_verify_messages);
	tcase_add_test(tc, cli_summary_and_show);
	tcase_add_test(tc, line_text_is_janssons);
	tcase_add_test(tc, line_text_refuses_what_jansson_refuses);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(audit_suite)
