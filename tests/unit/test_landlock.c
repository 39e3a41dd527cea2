/* Landlock derivation, the parts that need no Landlock: pattern
 * classification (table), path containment, canonicalization, and the
 * deny tree's sibling walk on a directory tree made for the test. */
#define _GNU_SOURCE
#include <check.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/glob.h"
#include "supervisor/kernel/landlock.h"
#include "supervisor/kernel/landlock_tree.h"
#include "supervisor/session.h"
#include "tests/unit/check_main.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The test tree lives under a short mkdtemp path: the PATH_MAX buffers
 * cannot overflow, whatever GCC's range analysis assumes. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

static const struct {
	const char *pattern;
	int ret;
	enum hx_ll_kind kind;
	const char *prefix, *glob;
} ccases[] = {
    {"/home/u/.ssh/**", 0, HX_LL_SUBTREE, "/home/u/.ssh", ""},
    {"/home/u/.netrc", 0, HX_LL_EXACT, "/home/u/.netrc", ""},
    {"/dev/null", 0, HX_LL_EXACT, "/dev/null", ""},
    {"/", 0, HX_LL_EXACT, "/", ""},
    {"/**", 0, HX_LL_SUBTREE, "/", ""},
    {"/a//b/", 0, HX_LL_EXACT, "/a/b", ""},
    {"/a/*.pem", 0, HX_LL_NAMEGLOB, "/a", "*.pem"},
    {"/dev/fd/[12]", 0, HX_LL_NAMEGLOB, "/dev/fd", "[12]"},
    {"/a/x*/**", 0, HX_LL_NAMEGLOB, "/a", "x*"},
    {"/a/**/**", 0, HX_LL_SUBTREE, "/a", ""},
    {"/a/*", 0, HX_LL_NAMEGLOB, "/a", "*"},
    /* a wildcard before the last literal segment */
    {"**/.env", 0, HX_LL_INEXPRESSIBLE, "/", ""},
    {"**/.env.*", 0, HX_LL_INEXPRESSIBLE, "/", ""},
    {"/home/u/*/secret", 0, HX_LL_INEXPRESSIBLE, "/home/u", ""},
    {"/p/.git/modules/**/hooks/**", 0, HX_LL_INEXPRESSIBLE, "/p/.git/modules",
     ""},
    {"/a/*/b/**", 0, HX_LL_INEXPRESSIBLE, "/a", ""},
    /* escapes (session.c's protect globs) are literal */
    {"/s/we\\*ird/**", 0, HX_LL_SUBTREE, "/s/we*ird", ""},
    {"/s/a\\[1\\]", 0, HX_LL_EXACT, "/s/a[1]", ""},
    {"relative/x", -EINVAL, HX_LL_EXACT, "/", ""},
    {"/a/../b", -EINVAL, HX_LL_EXACT, "/", ""},
    {"/a/./b", -EINVAL, HX_LL_EXACT, "/", ""},
};

START_TEST(classify_table)
{
	struct hx_ll_pat lp;
	int r = hx_ll_classify(ccases[_i].pattern, &lp);

	ck_assert_msg(r == ccases[_i].ret, "%s: ret %d", ccases[_i].pattern, r);
	if (r)
		return;
	ck_assert_msg(lp.kind == ccases[_i].kind, "%s: kind %d, want %d",
		      ccases[_i].pattern, lp.kind, ccases[_i].kind);
	ck_assert_str_eq(lp.prefix, ccases[_i].prefix);
	ck_assert_str_eq(lp.glob, ccases[_i].glob);
}
END_TEST

START_TEST(classify_session_protect_globs)
{
	/* What session.c makes of a state dir with glob characters. */
	char esc[PATH_MAX + 8];
	struct hx_ll_pat lp;

	ck_assert_int_eq(hx_glob_escape("/st/a*b?[c]", esc, PATH_MAX), 0);
	strcat(esc, "/**");
	ck_assert_int_eq(hx_ll_classify(esc, &lp), 0);
	ck_assert_int_eq(lp.kind, HX_LL_SUBTREE);
	ck_assert_str_eq(lp.prefix, "/st/a*b?[c]");
}
END_TEST

static const struct {
	const char *path, *root;
	bool in;
} wcases[] = {
    {"/a/b", "/a", true},      {"/a", "/a", true}, {"/ab", "/a", false},
    {"/a/b", "/", true},       {"/", "/", true},   {"/a", "/a/b", false},
    {"/a/b/c", "/a/b/", true},
};

START_TEST(within_table)
{
	ck_assert_msg(hx_ll_within(wcases[_i].path, wcases[_i].root) ==
			  wcases[_i].in,
		      "%s in %s", wcases[_i].path, wcases[_i].root);
}
END_TEST

/* The tree the walk tests run on:
 *   T/a/x  T/a/y/k  T/a/y/l  T/b/  T/c.pem  T/d.txt  T/link -> a/y
 *   T/e/f/g/h */
static char T[PATH_MAX];

static void mk(const char *rel, bool dir)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", T, rel);
	if (dir) {
		ck_assert_int_eq(mkdir(p, 0755), 0);
	} else {
		int fd = open(p, O_CREAT | O_WRONLY, 0644);

		ck_assert_int_ge(fd, 0);
		close(fd);
	}
}

static void setup_tree(void)
{
	char p[PATH_MAX], real[PATH_MAX];

	snprintf(T, sizeof(T), "/tmp/hx-ll-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(T));
	/* The walk works on canonical paths: /tmp may be a symlink. */
	ck_assert_ptr_nonnull(realpath(T, real));
	snprintf(T, sizeof(T), "%s", real);
	mk("a", true);
	mk("a/x", false);
	mk("a/y", true);
	mk("a/y/k", false);
	mk("a/y/l", false);
	mk("b", true);
	mk("c.pem", false);
	mk("d.txt", false);
	mk("e", true);
	mk("e/f", true);
	mk("e/f/g", true);
	mk("e/f/g/h", false);
	snprintf(p, sizeof(p), "%s/link", T);
	ck_assert_int_eq(symlink("a/y", p), 0);
}

static int rm_cb(const char *path)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd);
}

static void teardown_tree(void)
{
	rm_cb(T);
}

/* What the walk granted, as paths relative to T, sorted, "," joined. */
struct got {
	char list[64][PATH_MAX];
	size_t n;
	char anc[16][PATH_MAX];
	size_t nanc;
};

static int got_cb(int fd, const char *path, bool is_dir, void *arg)
{
	struct got *g = arg;
	struct stat st;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert(S_ISDIR(st.st_mode) == is_dir);
	ck_assert(!S_ISLNK(st.st_mode));
	ck_assert_uint_lt(g->n, 64);
	snprintf(g->list[g->n++], PATH_MAX, "%s",
		 strlen(path) > strlen(T) ? path + strlen(T) + 1 : ".");
	return 0;
}

static int anc_cb(int fd, const char *path, bool is_dir, void *arg)
{
	struct got *g = arg;

	ck_assert_int_eq(fd, -1);
	ck_assert(is_dir);
	ck_assert_uint_lt(g->nanc, 16);
	snprintf(g->anc[g->nanc++], PATH_MAX, "%s",
		 strlen(path) > strlen(T) ? path + strlen(T) + 1 : ".");
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void joined(char (*v)[PATH_MAX], size_t n, char *out, size_t size)
{
	qsort(v, n, PATH_MAX, cmp);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i)
			strncat(out, ",", size - strlen(out) - 1);
		strncat(out, v[i], size - strlen(out) - 1);
	}
}

static void add_deny(struct hx_ll_tree *t, const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", T, rel);
	ck_assert_int_eq(hx_ll_tree_deny(t, p), 0);
}

static void walk_expect(struct hx_ll_tree *t, const char *root_rel,
			const char *want, const char *want_anc)
{
	static struct got g;
	char root[PATH_MAX], s[8192];

	memset(&g, 0, sizeof(g));
	snprintf(root, sizeof(root), "%s%s%s", T, root_rel[0] ? "/" : "",
		 root_rel);
	ck_assert_int_eq(hx_ll_walk(t, root, got_cb, anc_cb, &g), 0);
	joined(g.list, g.n, s, sizeof(s));
	ck_assert_str_eq(s, want);
	if (want_anc) {
		joined(g.anc, g.nanc, s, sizeof(s));
		ck_assert_str_eq(s, want_anc);
	}
}

START_TEST(walk_no_deny_grants_root)
{
	struct hx_ll_tree t = {0};

	walk_expect(&t, "", ".", "");
	add_deny(&t, "zzz-elsewhere");
	walk_expect(&t, "b", "b", "");
	hx_ll_tree_free(&t);
}
END_TEST

START_TEST(walk_grants_siblings)
{
	struct hx_ll_tree t = {0};

	add_deny(&t, "a/y");
	/* The symlink is never granted (its target is a/y). */
	walk_expect(&t, "", "a/x,b,c.pem,d.txt,e", ".,a");
	hx_ll_tree_free(&t);
}
END_TEST

START_TEST(walk_shares_ancestors)
{
	struct hx_ll_tree t = {0};
	char d[PATH_MAX];

	add_deny(&t, "a/y/k");
	add_deny(&t, "d.txt");
	add_deny(&t, "e/f/g/h");
	snprintf(d, sizeof(d), "%s", T);
	ck_assert_int_eq(hx_ll_tree_deny_glob(&t, d, "*.pem"), 0);
	walk_expect(&t, "", "a/x,a/y/l,b", ".,a,a/y,e,e/f,e/f/g");
	hx_ll_tree_free(&t);
}
END_TEST

START_TEST(walk_denied_root_grants_nothing)
{
	struct hx_ll_tree t = {0};

	add_deny(&t, "a");
	walk_expect(&t, "a", "", "");
	walk_expect(&t, "a/y", "", "");
	hx_ll_tree_free(&t);
}
END_TEST

START_TEST(walk_missing_deny_path)
{
	/* A deny on a path that does not exist yet: its existing ancestor
	 * is enumerated, so when it is created later it is refused. */
	struct hx_ll_tree t = {0};

	add_deny(&t, "b/not/yet");
	walk_expect(&t, "", "a,c.pem,d.txt,e", ".,b");
	hx_ll_tree_free(&t);
}
END_TEST

START_TEST(walk_deny_under_a_file)
{
	/* d.txt is a file where the deny expects a directory. */
	struct hx_ll_tree t = {0};

	add_deny(&t, "d.txt/x");
	walk_expect(&t, "", "a,b,c.pem,d.txt,e", ".");
	hx_ll_tree_free(&t);
}
END_TEST

START_TEST(walk_fn_error_stops)
{
	struct hx_ll_tree t = {0};
	char root[PATH_MAX];

	add_deny(&t, "a/y");
	snprintf(root, sizeof(root), "%s", T);
	ck_assert_int_eq(hx_ll_walk(&t, "relative", got_cb, NULL, NULL),
			 -EINVAL);
	snprintf(root, sizeof(root), "%s/nope", T);
	ck_assert_int_eq(hx_ll_walk(&t, root, got_cb, NULL, NULL), -ENOENT);
	hx_ll_tree_free(&t);
	ck_assert(hx_ll_tree_empty(&t));
}
END_TEST

static int hold[2];
static volatile pid_t waiter_tid;

static void *waiter(void *arg)
{
	char c;

	(void)arg;
	waiter_tid = gettid();
	return read(hold[0], &c, 1) < 0 ? NULL : arg; /* till hold[1] closes */
}

/* Through a memo (one derivation), twice, the same answers as without,
 * a missing prefix and one behind a symlink included, and enough names
 * in one directory, there and not, for the memo to list it. */
START_TEST(canon_memo_agrees)
{
	static const char *const rel[] = {"/link/k",   "/link/new/deeper/",
					  "/link",     "/a/y/k",
					  "/nope/x/y", "/nope/x",
					  "",	       "/g1",
					  "/g2",       "/a",
					  "/g3/x",     "/b",
					  "/e",	       "/link/m",
					  "/link/n",   "/nope/z",
					  "/nope/w/v", "/d.txt/x"};
	struct hx_ll_memo *m = hx_ll_memo_new();
	char p[PATH_MAX], plain[PATH_MAX], memo[PATH_MAX];
	pthread_t th;

	ck_assert_ptr_nonnull(m);
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
			snprintf(p, sizeof(p), "%s%s", T, rel[i]);
			ck_assert_int_eq(hx_ll_canon(p, plain, sizeof(plain)),
					 0);
			ck_assert_int_eq(
			    hx_ll_canon_memo(m, p, memo, sizeof(memo)), 0);
			ck_assert_str_eq(memo, plain);
		}
	/* What the listings say without a lookup: never that a name
	 * there is missing. */
	snprintf(p, sizeof(p), "%s/g2", T);
	ck_assert(hx_ll_memo_absent(m, p));
	snprintf(p, sizeof(p), "%s/nope/w", T);
	ck_assert(hx_ll_memo_absent(m, p));
	for (const char *const *e =
		 (const char *const[]){"a", "b", "e", "link", NULL};
	     *e; e++) {
		snprintf(p, sizeof(p), "%s/%s", T, *e);
		ck_assert(!hx_ll_memo_absent(m, p));
	}
	/* A second thread of this process is no entry of /proc, but its
	 * name reaches it: never taken as missing. */
	ck_assert_int_eq(pipe(hold), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, waiter, NULL), 0);
	while (!waiter_tid)
		usleep(1000);
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "/proc/%d",
			 i == 2 ? (int)waiter_tid : i + 1);
		(void)hx_ll_canon_memo(m, p, memo, sizeof(memo));
	}
	ck_assert(!hx_ll_memo_absent(m, p));
	close(hold[1]);
	pthread_join(th, NULL);
	close(hold[0]);
	ck_assert_int_eq(hx_ll_canon_memo(m, "/", memo, sizeof(memo)), 0);
	ck_assert_str_eq(memo, "/");
	ck_assert_int_eq(hx_ll_canon_memo(m, "rel", memo, sizeof(memo)),
			 -EINVAL);
	hx_ll_memo_free(m);
}
END_TEST

START_TEST(canon_resolves_existing_prefix)
{
	char p[PATH_MAX], out[PATH_MAX], want[PATH_MAX];

	snprintf(p, sizeof(p), "%s/link/k", T);
	ck_assert_int_eq(hx_ll_canon(p, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/a/y/k", T);
	ck_assert_str_eq(out, want);
	snprintf(p, sizeof(p), "%s/link/new/deeper/", T);
	ck_assert_int_eq(hx_ll_canon(p, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/a/y/new/deeper", T);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(hx_ll_canon("/", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/");
	ck_assert_int_eq(hx_ll_canon("/no-such-dir-hx/x", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/no-such-dir-hx/x");
	ck_assert_int_eq(hx_ll_canon("rel", out, sizeof(out)), -EINVAL);
}
END_TEST

START_TEST(describe_null)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	hx_landlock_describe(NULL, m);
	fclose(m);
	ck_assert_ptr_nonnull(strstr(buf, "landlock: unavailable"));
	free(buf);
	hx_landlock_free(NULL);
	ck_assert_int_eq(hx_landlock_restrict(NULL, false), 0);
	ck_assert_int_ge(hx_landlock_abi(), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("landlock");
	TCase *c = tcase_create("classify");
	TCase *w = tcase_create("walk");

	tcase_add_loop_test(c, classify_table, 0, N(ccases));
	tcase_add_test(c, classify_session_protect_globs);
	tcase_add_loop_test(c, within_table, 0, N(wcases));
	tcase_add_test(c, describe_null);
	suite_add_tcase(s, c);
	tcase_add_checked_fixture(w, setup_tree, teardown_tree);
	tcase_add_test(w, walk_no_deny_grants_root);
	tcase_add_test(w, walk_grants_siblings);
	tcase_add_test(w, walk_shares_ancestors);
	tcase_add_test(w, walk_denied_root_grants_nothing);
	tcase_add_test(w, walk_missing_deny_path);
	tcase_add_test(w, walk_deny_under_a_file);
	tcase_add_test(w, walk_fn_error_stops);
	tcase_add_test(w, canon_resolves_existing_prefix);
	tcase_add_test(w, canon_memo_agrees);
	suite_add_tcase(s, w);
	return s;
}

HX_TEST_MAIN(suite)
