/* Wire codec: round trips of every message type, and a table of
 * malformed datagrams with the error each must give. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "common/wire.h"
#include "tests/unit/check_main.h"

static struct hx_msg *m;
static uint8_t buf[HX_WIRE_MAX + 4096];

static void setup(void)
{
	m = malloc(sizeof(*m));
	ck_assert_ptr_nonnull(m);
}

static void teardown(void)
{
	free(m);
}

START_TEST(hello_round_trip)
{
	struct hx_wbuf w;
	size_t n;

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_HELLO, 7);
	ck_assert_int_eq(hx_wire_put_u32(&w, HX_TAG_PID, 1234), 0);
	hx_wire_put_u32(&w, HX_TAG_TID, 1235);
	hx_wire_put_u32(&w, HX_TAG_PPID, 1);
	hx_wire_put_str(&w, HX_TAG_PATH, "/usr/bin/python3");
	hx_wire_put_str(&w, HX_TAG_ARG, "python3");
	hx_wire_put_str(&w, HX_TAG_ARG, "");
	hx_wire_put_str(&w, HX_TAG_ARG, "-c");
	n = hx_wire_finish(&w);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(hx_wire_decode(buf, n, m), HX_WIRE_OK);
	ck_assert_uint_eq(m->hdr.type, HX_MSG_HELLO);
	ck_assert_uint_eq(m->hdr.id, 7);
	ck_assert_uint_eq(m->pid, 1234);
	ck_assert_uint_eq(m->tid, 1235);
	ck_assert_uint_eq(m->ppid, 1);
	ck_assert_str_eq(m->path.s, "/usr/bin/python3");
	ck_assert_uint_eq(m->nargs, 3);
	ck_assert_str_eq(m->args[0].s, "python3");
	ck_assert_str_eq(m->args[1].s, "");
	ck_assert_str_eq(m->args[2].s, "-c");
	ck_assert(hx_msg_has(m, HX_TAG_PID));
	ck_assert(!hx_msg_has(m, HX_TAG_FLAGS));
}
END_TEST

START_TEST(hello_reply_round_trip)
{
	struct hx_wbuf w;
	uint8_t rule[32];
	size_t n;

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_HELLO_REPLY, 1);
	hx_wire_put_u32(&w, HX_TAG_FLAGS,
			HX_HELLO_LOCAL_READS | HX_HELLO_AUDIT);
	hx_wire_put_u32(&w, HX_TAG_DEFAULT_READ, HX_VERDICT_ALLOW);
	rule[0] = HX_VERDICT_DENY;
	memcpy(rule + 1, "/home/*/.ssh/**", 15);
	hx_wire_put_bytes(&w, HX_TAG_READ_RULE, rule, 16);
	rule[0] = HX_VERDICT_ALLOW;
	memcpy(rule + 1, "/**", 3);
	hx_wire_put_bytes(&w, HX_TAG_READ_RULE, rule, 4);
	hx_wire_put_str(&w, HX_TAG_SESSION, "s1");
	n = hx_wire_finish(&w);
	ck_assert_int_eq(hx_wire_decode(buf, n, m), HX_WIRE_OK);
	ck_assert_uint_eq(m->flags, HX_HELLO_LOCAL_READS | HX_HELLO_AUDIT);
	ck_assert_uint_eq(m->nrules, 2);
	ck_assert_uint_eq(m->rules[0].verdict, HX_VERDICT_DENY);
	ck_assert_str_eq(m->rules[0].pattern.s, "/home/*/.ssh/**");
	ck_assert_str_eq(m->rules[1].pattern.s, "/**");
	ck_assert_str_eq(m->session.s, "s1");
}
END_TEST

START_TEST(request_round_trip)
{
	struct hx_wbuf w;
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(443)};
	size_t n;

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 99);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_CONNECT);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_CONNECT);
	hx_wire_put_bytes(&w, HX_TAG_ADDR, &sin, sizeof(sin));
	hx_wire_put_str(&w, HX_TAG_FRAME, "libc.so.6+0x1234 connect");
	hx_wire_put_u32(&w, HX_TAG_FLAGS, 0101);
	hx_wire_put_u32(&w, HX_TAG_MODE, 0644);
	n = hx_wire_finish(&w);
	ck_assert_int_eq(hx_wire_decode(buf, n, m), HX_WIRE_OK);
	ck_assert_uint_eq(m->call, HX_CALL_CONNECT);
	ck_assert_uint_eq(m->op, HX_OP_CONNECT);
	ck_assert_uint_eq(m->naddrs, 1);
	ck_assert_uint_eq(m->addrs[0].len, sizeof(sin));
	ck_assert_int_eq(memcmp(m->addrs[0].p, &sin, sizeof(sin)), 0);
	ck_assert_uint_eq((uintptr_t)m->addrs[0].p % 8, 0);
	ck_assert_uint_eq(m->nframes, 1);
	ck_assert_uint_eq(m->mode, 0644);
	ck_assert_str_eq(hx_call_name(m->call), "connect");
}
END_TEST

START_TEST(verdict_round_trip)
{
	struct hx_wbuf w;
	size_t n;

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_VERDICT, 5);
	hx_wire_put_u32(&w, HX_TAG_VERDICT, HX_VERDICT_DENY);
	hx_wire_put_u32(&w, HX_TAG_ERRNO, 13);
	hx_wire_put_str(&w, HX_TAG_RULE, "ssh");
	hx_wire_put_u64(&w, HX_TAG_SEQ, 1ull << 40);
	n = hx_wire_finish(&w);
	ck_assert_int_eq(hx_wire_decode(buf, n, m), HX_WIRE_OK);
	ck_assert_uint_eq(m->verdict, HX_VERDICT_DENY);
	ck_assert_uint_eq(m->err, 13);
	ck_assert_str_eq(m->rule.s, "ssh");
	ck_assert_uint_eq(m->seq, 1ull << 40);
	ck_assert_uint_eq(m->hdr.id, 5);
}
END_TEST

START_TEST(report_round_trip)
{
	struct hx_wbuf w;
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct sockaddr_in6 b = {.sin6_family = AF_INET6};
	size_t n;

	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REPORT, 0);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_GETADDRINFO);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_RESOLVE);
	hx_wire_put_str(&w, HX_TAG_HOST, "example.com");
	hx_wire_put_bytes(&w, HX_TAG_ADDR, &a, sizeof(a));
	hx_wire_put_bytes(&w, HX_TAG_ADDR, &b, sizeof(b));
	hx_wire_put_u32(&w, HX_TAG_RESULT, 0);
	n = hx_wire_finish(&w);
	ck_assert_int_eq(hx_wire_decode(buf, n, m), HX_WIRE_OK);
	ck_assert_uint_eq(m->naddrs, 2);
	ck_assert_str_eq(m->host.s, "example.com");
	ck_assert(hx_msg_has(m, HX_TAG_RESULT));
}
END_TEST

/* A request names its object by its op's own fields only: a host on a
 * write, an address on an exec, a path on a connect are refused (their
 * records named what the call did not act on). */
START_TEST(fields_of_another_op)
{
	static const struct {
		enum hx_op op;
		enum hx_tag tag;
		enum hx_wire_error want;
	} cases[] = {
	    {HX_OP_WRITE, HX_TAG_HOST, HX_WIRE_TAG},
	    {HX_OP_CONNECT, HX_TAG_HOST, HX_WIRE_TAG},
	    {HX_OP_EXEC, HX_TAG_ADDR, HX_WIRE_TAG},
	    {HX_OP_RENAME, HX_TAG_ADDR, HX_WIRE_TAG},
	    {HX_OP_CONNECT, HX_TAG_PATH, HX_WIRE_TAG},
	    {HX_OP_RESOLVE, HX_TAG_PATH2, HX_WIRE_TAG},
	    {HX_OP_SEND, HX_TAG_ARG, HX_WIRE_TAG},
	    {HX_OP_RESOLVE, HX_TAG_HOST, HX_WIRE_OK},
	    {HX_OP_RESOLVE, HX_TAG_ADDR, HX_WIRE_OK},
	    {HX_OP_SEND, HX_TAG_ADDR, HX_WIRE_OK},
	    {HX_OP_WRITE, HX_TAG_PATH, HX_WIRE_OK},
	    {HX_OP_EXEC, HX_TAG_ARG, HX_WIRE_OK},
	};
	struct sockaddr_in sin = {.sin_family = AF_INET};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hx_wbuf w;

		hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 1);
		hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_OPEN);
		hx_wire_put_u32(&w, HX_TAG_OP, cases[i].op);
		if (cases[i].tag == HX_TAG_ADDR)
			hx_wire_put_bytes(&w, HX_TAG_ADDR, &sin, sizeof(sin));
		else
			hx_wire_put_str(&w, cases[i].tag, "x.example");
		ck_assert_msg(hx_wire_decode(buf, hx_wire_finish(&w), m) ==
				  cases[i].want,
			      "case %zu", i);
	}
}
END_TEST

START_TEST(encoder_overflow)
{
	struct hx_wbuf w;
	uint8_t small[24];

	hx_wire_begin(&w, small, sizeof(small), HX_MSG_REQUEST, 0);
	ck_assert_int_eq(hx_wire_put_u32(&w, HX_TAG_CALL, 0), 0);
	ck_assert_int_eq(hx_wire_put_str(&w, HX_TAG_PATH, "/too/long/path"),
			 -1);
	hx_wire_begin(&w, small, 8, HX_MSG_REQUEST, 0);
	ck_assert_uint_eq(hx_wire_finish(&w), 0);
}
END_TEST

/* ---- malformed datagrams, built byte by byte ---- */

struct raw {
	uint8_t b[HX_WIRE_MAX + 64];
	size_t n;
};

static void raw_hdr(struct raw *r, uint16_t version, uint16_t type)
{
	struct hx_wire_hdr h = {.version = version, .type = type};

	memcpy(r->b, &h, sizeof(h));
	r->n = sizeof(h);
}

static void raw_field(struct raw *r, uint16_t tag, const void *v, uint16_t len)
{
	memcpy(r->b + r->n, &tag, 2);
	memcpy(r->b + r->n + 2, &len, 2);
	memcpy(r->b + r->n + 4, v, len);
	r->n += 4u + len;
}

static void raw_u32(struct raw *r, uint16_t tag, uint32_t v)
{
	raw_field(r, tag, &v, 4);
}

static void raw_fix_len(struct raw *r)
{
	uint32_t len = (uint32_t)r->n;

	memcpy(r->b + offsetof(struct hx_wire_hdr, length), &len, 4);
}

/* A minimal valid REQUEST: CALL + OP. */
static void raw_request(struct raw *r)
{
	raw_hdr(r, HX_WIRE_VERSION, HX_MSG_REQUEST);
	raw_u32(r, HX_TAG_CALL, HX_CALL_OPEN);
	raw_u32(r, HX_TAG_OP, HX_OP_WRITE);
}

enum bad {
	B_VALID,
	B_SHORT_HDR,
	B_VERSION,
	B_LENGTH_MORE,
	B_LENGTH_LESS,
	B_RESERVED,
	B_TYPE_ZERO,
	B_TYPE_HIGH,
	B_UNKNOWN_TAG,
	B_TAG_HIGH,
	B_TAG_NOT_ALLOWED,
	B_DUP_PATH,
	B_DUP_ADDR_REQUEST,
	B_U32_SIZE,
	B_U64_SIZE,
	B_NUL_STRING,
	B_TOO_MANY_ARGS,
	B_TOO_MANY_FRAMES,
	B_FIELD_PAST_END,
	B_FIELD_HDR_CUT,
	B_MISSING_OP,
	B_MISSING_PID_HELLO,
	B_CALL_RANGE,
	B_OP_RANGE,
	B_VERDICT_RANGE,
	B_ADDR_SHORT,
	B_ADDR_LONG,
	B_UNIX_LONG,
	B_RULE_VERDICT,
	B_OVERSIZED,
};

static const struct {
	enum bad kind;
	const char *name;
	enum hx_wire_error want;
} table[] = {
    {B_VALID, "valid", HX_WIRE_OK},
    {B_SHORT_HDR, "short header", HX_WIRE_SHORT},
    {B_VERSION, "bad version", HX_WIRE_VERSION_MISMATCH},
    {B_LENGTH_MORE, "length says more", HX_WIRE_LENGTH},
    {B_LENGTH_LESS, "length says less", HX_WIRE_LENGTH},
    {B_RESERVED, "reserved set", HX_WIRE_RESERVED},
    {B_TYPE_ZERO, "type 0", HX_WIRE_TYPE},
    {B_TYPE_HIGH, "type 6", HX_WIRE_TYPE},
    {B_UNKNOWN_TAG, "unknown tag", HX_WIRE_TAG},
    {B_TAG_HIGH, "tag >= 32", HX_WIRE_TAG},
    {B_TAG_NOT_ALLOWED, "VERDICT in REQUEST", HX_WIRE_TAG},
    {B_DUP_PATH, "duplicate PATH", HX_WIRE_DUPLICATE},
    {B_DUP_ADDR_REQUEST, "two ADDR in REQUEST", HX_WIRE_DUPLICATE},
    {B_U32_SIZE, "u32 of 2 bytes", HX_WIRE_FIELD},
    {B_U64_SIZE, "u64 of 4 bytes", HX_WIRE_FIELD},
    {B_NUL_STRING, "NUL in string", HX_WIRE_FIELD},
    {B_TOO_MANY_ARGS, "513 args", HX_WIRE_TOO_MANY},
    {B_TOO_MANY_FRAMES, "33 frames", HX_WIRE_TOO_MANY},
    {B_FIELD_PAST_END, "field past end", HX_WIRE_SHORT},
    {B_FIELD_HDR_CUT, "field header cut", HX_WIRE_SHORT},
    {B_MISSING_OP, "REQUEST without OP", HX_WIRE_MISSING},
    {B_MISSING_PID_HELLO, "HELLO without PID", HX_WIRE_MISSING},
    {B_CALL_RANGE, "call out of range", HX_WIRE_FIELD},
    {B_OP_RANGE, "op out of range", HX_WIRE_FIELD},
    {B_VERDICT_RANGE, "verdict out of range", HX_WIRE_FIELD},
    {B_ADDR_SHORT, "1-byte sockaddr", HX_WIRE_FIELD},
    {B_ADDR_LONG, "200-byte sockaddr", HX_WIRE_FIELD},
    {B_UNIX_LONG, "unix sockaddr of 111 bytes", HX_WIRE_FIELD},
    {B_RULE_VERDICT, "read rule verdict 3", HX_WIRE_FIELD},
    {B_OVERSIZED, "datagram > 64 KiB", HX_WIRE_LENGTH},
};

static struct raw r;

static void build(enum bad kind)
{
	uint8_t big[256] = {0};
	uint32_t v;
	int i;

	memset(&r, 0, sizeof(r));
	switch (kind) {
	case B_VALID:
		raw_request(&r);
		break;
	case B_SHORT_HDR:
		raw_request(&r);
		r.n = 8;
		return; /* no length fix: too short for one */
	case B_VERSION:
		raw_request(&r);
		r.b[0] = 2;
		break;
	case B_LENGTH_MORE:
		raw_request(&r);
		raw_fix_len(&r);
		v = (uint32_t)r.n + 4;
		memcpy(r.b + 4, &v, 4);
		return;
	case B_LENGTH_LESS:
		raw_request(&r);
		raw_fix_len(&r);
		v = (uint32_t)r.n - 4;
		memcpy(r.b + 4, &v, 4);
		return;
	case B_RESERVED:
		raw_request(&r);
		r.b[12] = 1;
		break;
	case B_TYPE_ZERO:
		raw_request(&r);
		r.b[2] = 0;
		break;
	case B_TYPE_HIGH:
		raw_request(&r);
		r.b[2] = 6;
		break;
	case B_UNKNOWN_TAG:
		raw_request(&r);
		raw_u32(&r, 30, 0);
		break;
	case B_TAG_HIGH:
		raw_request(&r);
		raw_u32(&r, 40, 0);
		break;
	case B_TAG_NOT_ALLOWED:
		raw_request(&r);
		raw_u32(&r, HX_TAG_VERDICT, 0);
		break;
	case B_DUP_PATH:
		raw_request(&r);
		raw_field(&r, HX_TAG_PATH, "/a", 2);
		raw_field(&r, HX_TAG_PATH, "/b", 2);
		break;
	case B_DUP_ADDR_REQUEST:
		raw_request(&r);
		big[0] = AF_INET;
		raw_field(&r, HX_TAG_ADDR, big, 16);
		raw_field(&r, HX_TAG_ADDR, big, 16);
		break;
	case B_U32_SIZE:
		raw_hdr(&r, HX_WIRE_VERSION, HX_MSG_REQUEST);
		raw_field(&r, HX_TAG_CALL, big, 2);
		raw_u32(&r, HX_TAG_OP, 0);
		break;
	case B_U64_SIZE:
		raw_hdr(&r, HX_WIRE_VERSION, HX_MSG_VERDICT);
		raw_u32(&r, HX_TAG_VERDICT, 0);
		raw_u32(&r, HX_TAG_SEQ, 1);
		break;
	case B_NUL_STRING:
		raw_request(&r);
		raw_field(&r, HX_TAG_PATH, "/etc\0/passwd", 12);
		break;
	case B_TOO_MANY_ARGS:
		raw_request(&r);
		for (i = 0; i < HX_WIRE_MAX_ARGS + 1; i++)
			raw_field(&r, HX_TAG_ARG, "x", 1);
		break;
	case B_TOO_MANY_FRAMES:
		raw_request(&r);
		for (i = 0; i < HX_WIRE_MAX_FRAMES + 1; i++)
			raw_field(&r, HX_TAG_FRAME, "f", 1);
		break;
	case B_FIELD_PAST_END:
		raw_request(&r);
		raw_field(&r, HX_TAG_PATH, "/abcdefgh", 9);
		v = 100;
		memcpy(r.b + r.n - 9 - 2, &v, 2);
		break;
	case B_FIELD_HDR_CUT:
		raw_request(&r);
		r.b[r.n++] = HX_TAG_PATH;
		r.b[r.n++] = 0;
		break;
	case B_MISSING_OP:
		raw_hdr(&r, HX_WIRE_VERSION, HX_MSG_REQUEST);
		raw_u32(&r, HX_TAG_CALL, 0);
		break;
	case B_MISSING_PID_HELLO:
		raw_hdr(&r, HX_WIRE_VERSION, HX_MSG_HELLO);
		raw_u32(&r, HX_TAG_TID, 1);
		break;
	case B_CALL_RANGE:
		raw_hdr(&r, HX_WIRE_VERSION, HX_MSG_REQUEST);
		raw_u32(&r, HX_TAG_CALL, HX_CALL_COUNT);
		raw_u32(&r, HX_TAG_OP, 0);
		break;
	case B_OP_RANGE:
		raw_hdr(&r, HX_WIRE_VERSION, HX_MSG_REQUEST);
		raw_u32(&r, HX_TAG_CALL, 0);
		raw_u32(&r, HX_TAG_OP, HX_OP_COUNT);
		break;
	case B_VERDICT_RANGE:
		raw_hdr(&r, HX_WIRE_VERSION, HX_MSG_VERDICT);
		raw_u32(&r, HX_TAG_VERDICT, 3);
		break;
	case B_ADDR_SHORT:
		raw_request(&r);
		raw_field(&r, HX_TAG_ADDR, big, 1);
		break;
	case B_ADDR_LONG:
		raw_request(&r);
		raw_field(&r, HX_TAG_ADDR, big, 200);
		break;
	case B_UNIX_LONG: /* more than a struct sockaddr_un */
		raw_hdr(&r, HX_WIRE_VERSION, HX_MSG_REQUEST);
		raw_u32(&r, HX_TAG_CALL, HX_CALL_CONNECT);
		raw_u32(&r, HX_TAG_OP, HX_OP_CONNECT);
		big[0] = AF_UNIX;
		memset(big + 2, 'a', 109);
		raw_field(&r, HX_TAG_ADDR, big, 111);
		break;
	case B_RULE_VERDICT:
		raw_hdr(&r, HX_WIRE_VERSION, HX_MSG_HELLO_REPLY);
		raw_u32(&r, HX_TAG_FLAGS, 0);
		big[0] = 3;
		big[1] = '/';
		raw_field(&r, HX_TAG_READ_RULE, big, 2);
		break;
	case B_OVERSIZED:
		raw_request(&r);
		while (r.n <= HX_WIRE_MAX)
			raw_field(&r, HX_TAG_PATH2, "", 0);
		break;
	}
	raw_fix_len(&r);
}

START_TEST(malformed)
{
	enum hx_wire_error e;

	build(table[_i].kind);
	e = hx_wire_decode(r.b, r.n, m);
	ck_assert_msg(e == table[_i].want, "%s: got %s (%d), want %s (%d)",
		      table[_i].name, hx_wire_error_name(e), e,
		      hx_wire_error_name(table[_i].want), table[_i].want);
}
END_TEST

START_TEST(every_prefix_is_rejected)
{
	struct hx_wbuf w;
	size_t n, k;

	/* Cutting a valid message anywhere must never decode as valid
	 * (the header length catches it) nor crash. */
	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 1);
	hx_wire_put_u32(&w, HX_TAG_CALL, HX_CALL_EXECVE);
	hx_wire_put_u32(&w, HX_TAG_OP, HX_OP_EXEC);
	hx_wire_put_str(&w, HX_TAG_PATH, "/bin/sh");
	hx_wire_put_str(&w, HX_TAG_ARG, "sh");
	n = hx_wire_finish(&w);
	for (k = 0; k < n; k++)
		ck_assert_int_ne(hx_wire_decode(buf, k, m), HX_WIRE_OK);
	ck_assert_int_eq(hx_wire_decode(buf, n, m), HX_WIRE_OK);
}
END_TEST

START_TEST(names)
{
	ck_assert_str_eq(hx_wire_error_name(HX_WIRE_TAG), "unexpected field");
	ck_assert_str_eq(hx_wire_error_name((enum hx_wire_error)99),
			 "unknown error");
	ck_assert_str_eq(hx_call_name(HX_CALL_OPENAT), "openat");
	ck_assert_str_eq(hx_call_name(HX_CALL_COUNT), "unknown");
}
END_TEST

static Suite *wire_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("codec");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, hello_round_trip);
	tcase_add_test(tc, hello_reply_round_trip);
	tcase_add_test(tc, request_round_trip);
	tcase_add_test(tc, verdict_round_trip);
	tcase_add_test(tc, report_round_trip);
	tcase_add_test(tc, fields_of_another_op);
	tcase_add_test(tc, encoder_overflow);
	tcase_add_loop_test(tc, malformed, 0,
			    (int)(sizeof(table) / sizeof(table[0])));
	tcase_add_test(tc, every_prefix_is_rejected);
	tcase_add_test(tc, names);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(wire_suite)
