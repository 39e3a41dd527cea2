/* The audit record parser (supervisor/kaudit_parse.c), on records as
 * the kernel writes them (captured on Linux 6.18). */
#define _GNU_SOURCE
#include <check.h>
#include <string.h>
#include <time.h>

#include "common/types.h"
#include "supervisor/kernel/kaudit.h"

static const char access_rec[] =
    "audit(1796147876.956:442): domain=175117313 blockers=fs.read_file "
    "path=\"/etc/passwd\" dev=\"vda\" ino=409612";
static const char sys_rec[] =
    "audit(1796147876.956:442): arch=c000003e syscall=257 success=no "
    "exit=-13 a0=ffffff9c items=0 ppid=17940 pid=17981 auid=4294967295 "
    "uid=0 comm=\"python3\" exe=\"/usr/bin/busybox\" key=(null)";

START_TEST(header)
{
	struct timespec t;
	uint64_t serial;
	int off = hx_kaudit_header(access_rec, strlen(access_rec), &t, &serial);

	ck_assert_int_gt(off, 0);
	ck_assert_int_eq(t.tv_sec, 1796147876);
	ck_assert_int_eq(t.tv_nsec, 956000000);
	ck_assert_uint_eq(serial, 442);
	ck_assert(!strncmp(access_rec + off, "domain=", 7));
	ck_assert_int_eq(hx_kaudit_header("audit(1.95:2): x", 16, &t, &serial),
			 -1);
	ck_assert_int_eq(hx_kaudit_header("audit(1.950:2) x", 16, &t, &serial),
			 -1);
	ck_assert_int_eq(hx_kaudit_header("audit(1.950:2", 13, &t, &serial),
			 -1);
	ck_assert_int_eq(hx_kaudit_header("type=1", 6, &t, &serial), -1);
}
END_TEST

START_TEST(fields)
{
	char v[64];

	ck_assert_int_eq(hx_kaudit_field(access_rec, strlen(access_rec), "path",
					 v, sizeof(v)),
			 11);
	ck_assert_str_eq(v, "/etc/passwd");
	ck_assert_int_gt(hx_kaudit_field(access_rec, strlen(access_rec),
					 "blockers", v, sizeof(v)),
			 0);
	ck_assert_str_eq(v, "fs.read_file");
	/* Whole keys: "pid" is not the tail of "ppid". */
	ck_assert_int_gt(
	    hx_kaudit_field(sys_rec, strlen(sys_rec), "pid", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "17981");
	ck_assert_int_gt(
	    hx_kaudit_field(sys_rec, strlen(sys_rec), "ppid", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "17940");
	ck_assert_int_gt(
	    hx_kaudit_field(sys_rec, strlen(sys_rec), "exe", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "/usr/bin/busybox");
	ck_assert_int_eq(
	    hx_kaudit_field(sys_rec, strlen(sys_rec), "nope", v, sizeof(v)),
	    -1);
	/* Too small: refused, never cut. */
	ck_assert_int_eq(
	    hx_kaudit_field(access_rec, strlen(access_rec), "path", v, 5), -1);
}
END_TEST

START_TEST(untrusted_hex)
{
	/* "/tmp/a b" and a quote: written in hex by the kernel. */
	static const char rec[] = "domain=1 blockers=fs.read_file "
				  "path=2F746D702F612062 name=22 dev=\"x\"";
	static const char bad[] = "path=2F7 name=ZZ";
	char v[64];

	ck_assert_int_eq(
	    hx_kaudit_field(rec, strlen(rec), "path", v, sizeof(v)), 8);
	ck_assert_str_eq(v, "/tmp/a b");
	ck_assert_int_eq(
	    hx_kaudit_field(rec, strlen(rec), "name", v, sizeof(v)), 1);
	ck_assert_str_eq(v, "\"");
	ck_assert_int_eq(
	    hx_kaudit_field(bad, strlen(bad), "path", v, sizeof(v)), -1);
	ck_assert_int_eq(
	    hx_kaudit_field(bad, strlen(bad), "name", v, sizeof(v)), -1);
	/* A quoted value cut short is refused. */
	ck_assert_int_eq(hx_kaudit_field("path=\"/x", 8, "path", v, sizeof(v)),
			 -1);
}
END_TEST

START_TEST(blockers)
{
	int op, cat, risk;

	ck_assert(hx_kaudit_blocker("fs.read_file", &op, &cat, &risk));
	ck_assert_int_eq(op, HX_OP_READ);
	ck_assert_int_eq(cat, HX_CAT_FILE_READ);
	ck_assert(hx_kaudit_blocker("fs.execute", &op, &cat, &risk));
	ck_assert_int_eq(op, HX_OP_EXEC);
	ck_assert(hx_kaudit_blocker("scope.signal", &op, &cat, &risk));
	ck_assert_int_eq(op, -1);
	ck_assert_int_eq(cat, HX_CAT_PROCESS);
	ck_assert(!hx_kaudit_blocker("fs.new_thing", &op, &cat, &risk));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kaudit");
	TCase *c = tcase_create("parse");
	SRunner *sr;
	int failed;

	tcase_add_test(c, header);
	tcase_add_test(c, fields);
	tcase_add_test(c, untrusted_hex);
	tcase_add_test(c, blockers);
	suite_add_tcase(s, c);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
