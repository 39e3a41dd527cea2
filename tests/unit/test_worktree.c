/* Worktree modules: gc ages (table), provenance from audit records, and
 * the checkpoint engine on a real repository (made with the git CLI):
 * unchanged trees make no commit, a change makes the next ref, and a
 * deleted file leaves the tree; its walk, confined, takes nothing a
 * directory swapped for a symlink meanwhile names. */
#define _GNU_SOURCE
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/git/checkpoint.h"
#include "supervisor/git/gc.h"
#include "supervisor/git/provenance.h"
#include "supervisor/fmt.h"
#include "tests/unit/check_main.h"

static const struct {
	const char *in;
	long long want;
} ages[] = {
    {"0s", 0},	     {"30m", 1800}, {"12h", 43200}, {"7d", 604800},
    {"2w", 1209600}, {"7", -1},	    {"7x", -1},	    {"-1d", -1},
    {"", -1},	     {"d", -1},	    {"1dd", -1},
};

START_TEST(test_ages)
{
	ck_assert_msg(hx_fmt_parse_age(ages[_i].in) == ages[_i].want, "%s",
		      ages[_i].in);
}
END_TEST

static json_t *rec(const char *fmt)
{
	json_t *j = json_loads(fmt, 0, NULL);

	ck_assert_ptr_nonnull(j);
	return j;
}

START_TEST(test_provenance)
{
	struct hx_prov *p = hx_prov_new("/w/t");
	json_t *r, *w;
	pid_t cause;

	r = rec("{\"pid\":10,\"exe\":\"/bin/mv\",\"event\":\"process_start\","
		"\"args\":{\"argv\":[\"mv\",\"b\",\"c\"]}}");
	hx_prov_observe(p, r, 5);
	json_decref(r);
	ck_assert(!hx_prov_dirty(p));
	r = rec("{\"pid\":10,\"exe\":\"/bin/mv\",\"event\":\"rename\","
		"\"op\":\"rename\",\"category\":\"file_write\",\"verdict\":"
		"\"allow\",\"enforced\":true,\"args\":{\"path\":\"/w/t/b\","
		"\"path2\":\"/w/t/c\"}}");
	hx_prov_observe(p, r, 6);
	json_decref(r);
	/* denied in enforce mode: did not happen */
	r = rec(
	    "{\"pid\":11,\"event\":\"open\",\"op\":\"write\",\"category\":"
	    "\"file_write\",\"verdict\":\"deny\",\"enforced\":true,\"args\":"
	    "{\"path\":\"/w/t/x\"}}");
	hx_prov_observe(p, r, 7);
	json_decref(r);
	/* outside the worktree: not tracked */
	r = rec("{\"pid\":12,\"event\":\"open\",\"op\":\"write\",\"category\":"
		"\"file_write\",\"verdict\":\"allow\",\"args\":{\"path\":"
		"\"/w/tx\"}}");
	hx_prov_observe(p, r, 8);
	json_decref(r);
	ck_assert(hx_prov_dirty(p));
	w = hx_prov_writer(p, "c");
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(json_integer_value(json_object_get(w, "seq")), 6);
	ck_assert_str_eq(
	    json_string_value(json_array_get(json_object_get(w, "argv"), 0)),
	    "mv");
	json_decref(w);
	w = hx_prov_writer(p, "b");
	ck_assert_ptr_nonnull(w);
	json_decref(w);
	ck_assert_ptr_null(hx_prov_writer(p, "x"));
	ck_assert_ptr_null(hx_prov_writer(p, "../tx"));
	ck_assert(hx_prov_due(p, 10, &cause));
	ck_assert_int_eq(cause, 10);
	hx_prov_clear(p);
	ck_assert(!hx_prov_due(p, 10, &cause));
	hx_prov_free(p);
}
END_TEST

static char dir[64];

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char *cmd;
	va_list ap;

	va_start(ap, fmt);
	ck_assert_int_ge(vasprintf(&cmd, fmt, ap), 0);
	va_end(ap);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
	free(cmd);
}

START_TEST(test_checkpoint_engine)
{
	struct hx_ckpt *c;
	struct hx_ckpt_info info;
	char err[512], gd[128], idx[128], base[64] = "";
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/hx-unit-wt-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	sh("cd %s && git init -q r && cd r && echo a > a && echo b > b && "
	   "git add . && git -c user.name=t -c user.email=t@x commit -qm i",
	   dir);
	sh("git -C %s/r rev-parse HEAD > %s/base", dir, dir);
	snprintf(gd, sizeof(gd), "%s/base", dir);
	f = fopen(gd, "r");
	ck_assert(fgets(base, sizeof(base), f));
	fclose(f);
	base[40] = '\0';
	snprintf(idx, sizeof(idx), "%s/ck.index", dir);
	{
		char common[160], wt[160];

		snprintf(common, sizeof(common), "%s/r/.git", dir);
		snprintf(wt, sizeof(wt), "%s/r", dir);
		ck_assert_int_eq(hx_ckpt_open(common, wt, "u", idx, NULL, base,
					      false, &c, err, sizeof(err)),
				 0);
		ck_assert_int_eq(
		    hx_ckpt_take(c, "s", "", true, &info, err, sizeof(err)), 0);
		ck_assert(info.created);
		ck_assert_uint_eq(info.n, 0);
		ck_assert_int_eq(
		    hx_ckpt_take(c, "s", "", false, &info, err, sizeof(err)),
		    0);
		ck_assert(!info.created);
		sh("cd %s && echo A > a && rm b && echo n > n", wt);
		ck_assert_int_eq(
		    hx_ckpt_take(c, "s", "", false, &info, err, sizeof(err)),
		    0);
		ck_assert(info.created);
		ck_assert_uint_eq(info.n, 1);
		ck_assert_uint_eq(info.changed, 3);
		sh("test \"$(git -C %s ls-tree --name-only "
		   "refs/harness/u/checkpoints/1 | tr '\\n' ' ')\" = 'a n '",
		   wt);
		/* the user's index and HEAD were not touched */
		sh("test \"$(git -C %s status --porcelain | sort | tr '\\n' "
		   "' ')\" = ' D b  M a ?? n '",
		   wt);
		hx_ckpt_free(c);
	}
	sh("rm -rf %s", dir);
}
END_TEST

static atomic_bool swapping;

/* zz (a directory) and zl (a link out of the tree) exchanged, as fast
 * as can be, as an agent would during a checkpoint; no lock of the
 * supervisor's in the way here. */
static void *swapper(void *arg)
{
	int wt = open(arg, O_PATH | O_DIRECTORY);

	while (atomic_load(&swapping))
		syscall(SYS_renameat2, wt, "zz", wt, "zl", 2 /* EXCHANGE */);
	close(wt);
	return NULL;
}

START_TEST(test_checkpoint_walk_is_confined)
{
	struct hx_ckpt *c;
	struct hx_ckpt_info info;
	char err[512], common[160], wt[160], idx[160], p[160], base[64] = "";
	pthread_t t;
	int failed = 0;
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/hx-unit-wt-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	sh("cd %s && mkdir secret ck && echo TOP-SECRET > secret/key && "
	   "git init -q r && cd r && for i in $(seq 100 400); do echo $i > "
	   "a$i; done && mkdir zz && echo z > zz/f && git add . && "
	   "git -c user.name=t -c user.email=t@x commit -qm i && "
	   "ln -s %s/secret zl && git rev-parse HEAD > ../base",
	   dir, dir);
	snprintf(idx, sizeof(idx), "%s/base", dir);
	ck_assert_ptr_nonnull(f = fopen(idx, "r"));
	ck_assert(fgets(base, sizeof(base), f));
	fclose(f);
	base[40] = '\0';
	snprintf(idx, sizeof(idx), "%s/ck/index", dir);
	snprintf(common, sizeof(common), "%s/r/.git", dir);
	snprintf(wt, sizeof(wt), "%s/r", dir);
	/* git's own files are read by name: one the agent could make a link
	 * later (here ~/.config/git/ignore) widens nothing, the ruleset
	 * being made at the start (it granted the link's target when made
	 * at each walk). */
	snprintf(p, sizeof(p), "%s/xdg", dir);
	setenv("XDG_CONFIG_HOME", p, 1);
	ck_assert_int_eq(hx_ckpt_open(common, wt, "u", idx, NULL, base, true,
				      &c, err, sizeof(err)),
			 0);
	sh("mkdir -p %s/xdg/git && ln -s %s/secret %s/xdg/git/ignore", dir, dir,
	   dir);
	atomic_store(&swapping, true);
	ck_assert_int_eq(pthread_create(&t, NULL, swapper, wt), 0);
	for (int i = 0; i < 150; i++)
		if (hx_ckpt_take(c, "s", "", true, &info, err, sizeof(err)))
			failed++; /* the walk met the link: EACCES */
	atomic_store(&swapping, false);
	pthread_join(t, NULL);
	ck_assert_int_lt(failed, 150);
	/* Unconfined (hx_ckpt_open(..., false, ...)), a checkpoint held
	 * zz/key in each of 3 runs. */
	sh("cd %s && ! git grep -q TOP-SECRET $(git for-each-ref "
	   "--format='%%(refname)' refs/harness/u/)",
	   wt);
	hx_ckpt_free(c);
	sh("rm -rf %s", dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("worktree");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_ages, 0, sizeof(ages) / sizeof(ages[0]));
	tcase_add_test(tc, test_provenance);
	tcase_add_test(tc, test_checkpoint_engine);
	tcase_add_test(tc, test_checkpoint_walk_is_confined);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(suite)
