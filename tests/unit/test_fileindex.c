/* The globs' indexes (common/globindex.h) against the scans they stand
 * for: every decision of the default policy and of a policy of awkward
 * globs, on paths made from each pattern (its wildcards filled in
 * several ways, its end cut, its bytes bent) and on paths of a usual
 * session, is the same, rule and pattern, with and without the file
 * rules' index (policy/fileindex.c); and the shim's verdict on a read
 * the same with its rules indexed (sent sorted by key, as the
 * supervisor sends them) and scanned; and the masks' walk's triggers
 * (supervisor/kernel/masktrig.h) pass every entry that a read of is
 * refused while its directory's is not, the entry the walk masks. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "policy/policy_int.h"
#include "shim/readrules.h"
#include "supervisor/kernel/masktrig.h"
#include "tests/unit/check_main.h"
#include "tests/unit/policy_vars.h"

static const char awkward[] =
    "version: 1\n"
    "files:\n"
    "  - {id: a, access: write, allow: [\"/a/**\", \"/a\"]}\n"
    "  - {id: b, access: any, deny: [\"/a/b\\\\*c\", \"/x/[ab]/**\", "
    "\"/t/krb5cc*\"]}\n"
    "  - {id: c, access: read, ask: [\"**/.env\", \"**/.env.*\", "
    "\"/p/**/n/**\", \"/q/*ab/**\"]}\n"
    "  - {id: d, access: write, deny: [\"/p/**/h?oks/*.sh\", \"/**/q\", "
    "\"/p/*/m/**\", \"/\", \"/*\"]}\n"
    "  - {id: e, access: any, allow: [\"/p/**\", \"/p/n\", \"/a/b]c\"]}\n";

static unsigned long seed = 12345;

static unsigned rnd(unsigned n)
{
	seed = seed * 6364136223846793005ul + 1442695040888963407ul;
	return (unsigned)(seed >> 33) % n;
}

/* pattern with each wildcard filled by one of fills, a class by its
 * first byte. */
static void fill(const char *g, char *out, size_t cap)
{
	static const char *const fills[] = {"", "x", "x/y", ".env", "n/z"};
	size_t o = 0;

	for (const char *p = g; *p && o + 8 < cap; p++) {
		const char *f = NULL;

		if (*p == '*') {
			f = fills[rnd(5)];
			if (p[1] == '*')
				p++;
		} else if (*p == '?') {
			f = "q";
		} else if (*p == '[') {
			out[o++] = p[1] == '!' ? 'z' : p[1];
			p = strchr(p, ']') ? strchr(p, ']') : p;
			continue;
		} else if (*p == '\\' && p[1]) {
			p++;
		}
		if (f)
			o += (size_t)snprintf(out + o, cap - o, "%s", f);
		else
			out[o++] = *p;
	}
	out[o] = '\0';
}

static struct hx_read_rules shim_rules;
static struct hx_masktrig *trig; /* the policy's, while it is swept */

static bool readable(struct hx_policy *p, const char *path)
{
	struct hx_event ev = {.op = HX_OP_READ, .path = path};
	struct hx_decision d;

	hx_policy_decide(p, &ev, &d);
	return d.verdict == HX_VERDICT_ALLOW;
}

/* The walk reaches path (a readable directory's entry) and must decide
 * it when a read of it is refused. */
static void walk_decides(struct hx_policy *p, const char *path)
{
	const char *slash = strrchr(path, '/');
	unsigned short act[HX_MASKTRIG_WILD_MAX];
	char dir[4096];
	size_t len, nact;

	if (!trig || path[0] != '/' || !slash[1] ||
	    (size_t)(slash - path) >= sizeof(dir) || readable(p, path))
		return;
	len = (size_t)(slash - path);
	memcpy(dir, path, len);
	dir[len] = '\0';
	if (!readable(p, len ? dir : "/"))
		return; /* masked whole above it */
	nact = hx_masktrig_enter(trig, path, len, act);
	ck_assert_msg(hx_masktrig_may_deny(trig, act, nact, path, len),
		      "the walk's triggers pass %s, whose read is refused",
		      path);
}

/* The shim's verdict on path, indexed and scanned, is the same. */
static void same_read(const char *path)
{
	enum hx_verdict a, b;

	ck_assert(shim_rules.sorted);
	a = hx_read_verdict(&shim_rules, path);
	shim_rules.sorted = false;
	b = hx_read_verdict(&shim_rules, path);
	shim_rules.sorted = true;
	ck_assert_msg(a == b, "read %s: indexed %d, scanned %d", path, a, b);
}

static void same(struct hx_policy *p, const char *path)
{
	static const enum hx_op ops[] = {HX_OP_READ, HX_OP_WRITE};
	struct hx_file_index *ix = p->files;

	for (size_t i = 0; i < 2; i++) {
		struct hx_event ev = {.op = ops[i], .path = path};
		struct hx_decision a, b;

		p->files = ix;
		hx_policy_decide(p, &ev, &a);
		p->files = NULL;
		hx_policy_decide(p, &ev, &b);
		p->files = ix;
		if (shim_rules.nrules)
			same_read(path);
		if (ops[i] == HX_OP_READ)
			walk_decides(p, path);
		ck_assert_msg(a.verdict == b.verdict && a.rule == b.rule &&
				  a.pattern == b.pattern,
			      "%s %s: indexed %s (%s), scanned %s (%s)",
			      ops[i] == HX_OP_READ ? "read" : "write", path,
			      a.rule, a.pattern ? a.pattern : "-", b.rule,
			      b.pattern ? b.pattern : "-");
	}
}

/* Every pattern's paths, and each cut at every byte and bent at one. */
static size_t sweep(struct hx_policy *p)
{
	static const char *const usual[] = {
	    "/",
	    "/home/u/.ssh/id_rsa",
	    "/work/proj/src/main.c",
	    "/work/proj/.env",
	    "/work/proj/a/.envrc",
	    "/tmp/hx-s1/x",
	    "/usr/lib/x86_64-linux-gnu/libc.so.6",
	    "/home/u/.cache/pip/x",
	    "/work/proj/.git/hooks/pre-commit",
	    "/etc/shadow",
	    "/a",
	    "/a/"};
	char path[4096];
	size_t n = 0;

	ck_assert_ptr_nonnull(p->files);
	ck_assert_int_eq(hx_masktrig_build(p, &trig), 0);
	ck_assert_ptr_nonnull(trig); /* the shortcut holds for these */
	for (size_t u = 0; u < sizeof(usual) / sizeof(*usual); u++, n++)
		same(p, usual[u]);
	for (size_t i = 0; i < p->nrules[HX_SEC_FILES]; i++)
		for (size_t k = 0; k < p->rules[HX_SEC_FILES][i].npats; k++) {
			const char *g = p->rules[HX_SEC_FILES][i].pats[k].text;

			for (int r = 0; r < 6; r++) {
				size_t len;

				fill(g, path, sizeof(path));
				len = strlen(path);
				same(p, path);
				path[rnd((unsigned)len + 1)] = '\0';
				same(p, path);
				if (len) {
					fill(g, path, sizeof(path));
					path[rnd((unsigned)len)] ^=
					    (char)(1 + rnd(127));
					same(p, path);
				}
				n += 3;
			}
		}
	hx_masktrig_free(trig);
	trig = NULL;
	return n;
}

struct read_rule {
	enum hx_verdict v;
	const char *glob;
	size_t key;
};

struct read_rules {
	struct read_rule r[HX_WIRE_MAX_RULES];
	size_t n;
};

static void take(enum hx_verdict v, const char *glob, void *arg)
{
	struct read_rules *rr = arg;
	struct hx_glob_need need;

	ck_assert_uint_lt(rr->n, HX_WIRE_MAX_RULES);
	hx_glob_need_of(glob, &need);
	rr->r[rr->n++] = (struct read_rule){v, glob, need.key};
}

static int by_key(const void *x, const void *y)
{
	const struct read_rule *a = x, *b = y;

	return hx_glob_key_cmp(a->glob, a->key, b->glob, b->key);
}

/* The policy's read rules into the shim's table, in the supervisor's
 * order (by key); how many there are. */
static size_t shim_rules_of(const struct hx_policy *p)
{
	static struct read_rules rr;

	rr.n = 0;
	hx_read_rules_reset(&shim_rules);
	hx_policy_foreach_read_rule(p, take, &rr);
	qsort(rr.r, rr.n, sizeof(*rr.r), by_key);
	for (size_t i = 0; i < rr.n; i++)
		ck_assert_int_eq(
		    hx_read_rules_add(&shim_rules, (uint8_t)rr.r[i].v,
				      rr.r[i].glob, strlen(rr.r[i].glob)),
		    0);
	ck_assert(shim_rules.sorted);
	return rr.n;
}

START_TEST(test_default_policy_same_with_and_without)
{
	struct hx_policy_error err;
	struct hx_policy *p;

	ck_assert_int_eq(hx_policy_load_default(&vars, &p, &err), 0);
	/* All of them go to the shim, with room for the session's own
	 * (the log, the state, a worktree's) and for the default to grow:
	 * past the limit every read of every process would be asked. */
	ck_assert_uint_lt(shim_rules_of(p), HX_WIRE_MAX_RULES / 2);
	ck_assert_uint_gt(sweep(p), 5000);
	shim_rules.nrules = 0;
	hx_policy_free(p);
}
END_TEST

START_TEST(test_awkward_globs_same_with_and_without)
{
	struct hx_policy_error err;
	struct hx_policy *p;

	ck_assert_msg(hx_policy_load_buffer("t.yaml", awkward,
					    sizeof(awkward) - 1, &vars, &p,
					    &err) == 0,
		      "%s", err.message);
	shim_rules_of(p);
	ck_assert_uint_gt(sweep(p), 100);
	shim_rules.nrules = 0;
	hx_policy_free(p);
}
END_TEST

/* What the index is for: a project path is judged against a handful
 * of the default's ~500 file patterns, not all of them. */
START_TEST(test_a_project_path_has_few_candidates)
{
	struct hx_policy_error err;
	struct hx_policy *p;
	uint64_t bits[HX_FILE_INDEX_WORDS];
	const char *path = "/work/proj/src/main.c";
	size_t words, total = 0, left = 0;

	ck_assert_int_eq(hx_policy_load_default(&vars, &p, &err), 0);
	for (size_t i = 0; i < p->nrules[HX_SEC_FILES]; i++)
		total += p->rules[HX_SEC_FILES][i].npats;
	words = hx_file_index_mark(p->files, path, bits);
	for (size_t w = 0; w < words; w++)
		for (uint64_t m = bits[w]; m; m &= m - 1) {
			const struct hx_fref *f = hx_file_index_ref(
			    p->files, w * 64 + (size_t)__builtin_ctzll(m));

			left += hx_glob_need_holds(f->pat->text, &f->need, path,
						   strlen(path));
		}
	ck_assert_uint_gt(total, 300);
	ck_assert_uint_lt(left, 10);
	hx_policy_free(p);
}
END_TEST

/* The default's read rules as the supervisor sends them, each with its
 * need (HX_TAG_READ_NEED, worked out once there): the shim takes the
 * needs as they come, indexed, and decides as from its own; a need past
 * its pattern is refused. */
START_TEST(test_shim_rules_from_a_hello_with_their_needs)
{
	static uint8_t buf[HX_WIRE_MAX];
	static struct hx_read_rules from_hello;
	struct hx_policy_error err;
	struct hx_policy *p;
	uint8_t rule[1 + 512];
	struct hx_wbuf w;
	size_t n;

	ck_assert_int_eq(hx_policy_load_default(&vars, &p, &err), 0);
	shim_rules_of(p);
	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_HELLO_REPLY, 3);
	hx_wire_put_u32(&w, HX_TAG_FLAGS, HX_HELLO_LOCAL_READS);
	for (size_t i = 0; i < shim_rules.nrules; i++) {
		const char *g = shim_rules.store + shim_rules.rule[i].off;
		const struct hx_glob_need *nd = &shim_rules.need[i];
		uint16_t need[4] = {(uint16_t)nd->key, (uint16_t)nd->tail,
				    (uint16_t)nd->inner_off,
				    (uint16_t)nd->inner_len};

		rule[0] = shim_rules.rule[i].verdict;
		memcpy(rule + 1, g, strlen(g));
		hx_wire_put_bytes(&w, HX_TAG_READ_RULE, rule, 1 + strlen(g));
		hx_wire_put_bytes(&w, HX_TAG_READ_NEED, need, sizeof(need));
	}
	n = hx_wire_finish(&w);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(hx_read_rules_from_hello(&from_hello, buf, n, 3), 0);
	ck_assert(from_hello.sorted);
	ck_assert_uint_eq(from_hello.ngroups, shim_rules.ngroups);
	ck_assert_mem_eq(from_hello.need, shim_rules.need,
			 shim_rules.nrules * sizeof(*shim_rules.need));
	/* a need past its pattern: the whole reply refused */
	buf[n - 2] = 0xff;
	buf[n - 1] = 0xff;
	ck_assert_int_eq(hx_read_rules_from_hello(&from_hello, buf, n, 3), -1);
	shim_rules.nrules = 0;
	hx_policy_free(p);
}
END_TEST

/* Rules out of key order (another sender's): the shim scans them. */
START_TEST(test_shim_rules_out_of_order_are_scanned)
{
	hx_read_rules_reset(&shim_rules);
	shim_rules.default_read = HX_VERDICT_ALLOW;
	ck_assert_int_eq(hx_read_rules_add(&shim_rules, HX_VERDICT_DENY,
					   "/home/u/.ssh/**", 15),
			 0);
	ck_assert(shim_rules.sorted);
	ck_assert_int_eq(
	    hx_read_rules_add(&shim_rules, HX_VERDICT_ASK, "/home/u/*.db", 12),
	    0);
	ck_assert(!shim_rules.sorted);
	ck_assert_int_eq(hx_read_verdict(&shim_rules, "/home/u/.ssh/id_rsa"),
			 HX_VERDICT_DENY);
	ck_assert_int_eq(hx_read_verdict(&shim_rules, "/home/u/x.db"),
			 HX_VERDICT_ASK);
	ck_assert_int_eq(hx_read_verdict(&shim_rules, "/home/u/x.c"),
			 HX_VERDICT_ALLOW);
	shim_rules.nrules = 0;
}
END_TEST

static Suite *fileindex_suite(void)
{
	Suite *s = suite_create("fileindex");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_default_policy_same_with_and_without);
	tcase_add_test(tc, test_awkward_globs_same_with_and_without);
	tcase_add_test(tc, test_a_project_path_has_few_candidates);
	tcase_add_test(tc, test_shim_rules_out_of_order_are_scanned);
	tcase_add_test(tc, test_shim_rules_from_a_hello_with_their_needs);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(fileindex_suite)
