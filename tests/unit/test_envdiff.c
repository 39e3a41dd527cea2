/* An exec's environment as it differs from the session's
 * (supervisor/envdiff.h): what is set and unset, harness's own names
 * left out alike on both sides, and the grant's key without a shell's
 * bookkeeping; an exec grant keyed on it (grants.h). */
#define _GNU_SOURCE
#include <check.h>
#include <jansson.h>
#include <string.h>

#include "supervisor/envdiff.h"
#include "supervisor/grants.h"
#include "tests/unit/check_main.h"

#define SHIM "/opt/harness/libharness-shim.so"

static const char *const base_env[] = {"HOME=/home/me",
				       "PATH=/usr/bin:/bin",
				       "LD_PRELOAD=" SHIM ":/lib/x.so",
				       "HARNESS_SOCKET=/s/sock",
				       "TMPDIR=/tmp/h",
				       "SHLVL=1",
				       NULL};

/* The difference of envp (NULL-terminated) as one string, entries
 * joined by ' '. */
static void diff_of(const char *const *envp, char *out, size_t size)
{
	struct hx_envbase *b = hx_envbase_new(base_env, SHIM);
	struct hx_envdiff d;
	size_t n = 0;

	ck_assert_ptr_nonnull(b);
	while (envp[n])
		n++;
	ck_assert_int_eq(hx_envdiff_make(b, envp, n, &d), 0);
	out[0] = '\0';
	for (size_t i = 0; i < d.len; i += strlen(d.p + i) + 1) {
		if (out[0])
			strncat(out, " ", size - strlen(out) - 1);
		strncat(out, d.p + i, size - strlen(out) - 1);
	}
	hx_envdiff_free(&d);
	hx_envbase_free(b);
}

START_TEST(the_sessions_own_is_no_difference)
{
	/* as the shim rebuilds it: its own names moved to the end, another
	 * connection named, the shim's LD_PRELOAD entry first */
	const char *const same[] = {"HOME=/home/me",
				    "PATH=/usr/bin:/bin",
				    "TMPDIR=/tmp/h",
				    "SHLVL=1",
				    "LD_PRELOAD=" SHIM ":/lib/x.so",
				    "HARNESS_SOCKET=/s/sock",
				    "HARNESS_CONN=7",
				    NULL};
	char out[512];

	diff_of(same, out, sizeof(out));
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(what_is_set_and_unset)
{
	const char *const env[] = {"PATH=/usr/bin:/bin",
				   "GIT_WORK_TREE=/p/b",
				   "TMPDIR=/tmp/other",
				   "LD_PRELOAD=" SHIM ":/lib/x.so:/tmp/evil.so",
				   "SHLVL=2",
				   "HOME=/home/me",
				   "HOME=/home/me",
				   NULL};
	char out[512];

	diff_of(env, out, sizeof(out));
	ck_assert_str_eq(out, "GIT_WORK_TREE=/p/b "
			      "LD_PRELOAD=/lib/x.so:/tmp/evil.so SHLVL=2 "
			      "TMPDIR=/tmp/other");
	{
		const char *const scrubbed[] = {"PATH=/usr/bin:/bin", NULL};

		diff_of(scrubbed, out, sizeof(out));
		ck_assert_str_eq(out, "-HOME -LD_PRELOAD -SHLVL -TMPDIR");
	}
}
END_TEST

START_TEST(a_library_named_like_the_shim_is_a_difference)
{
	/* the agent's own libharness-shim.so, alone or beside the shim:
	 * only the shim's very path is harness's own */
	const char *const alone[] = {"HOME=/home/me",
				     "PATH=/usr/bin:/bin",
				     "TMPDIR=/tmp/h",
				     "SHLVL=1",
				     "LD_PRELOAD=/p/libharness-shim.so",
				     NULL};
	const char *const beside[] = {"HOME=/home/me",
				      "PATH=/usr/bin:/bin",
				      "TMPDIR=/tmp/h",
				      "SHLVL=1",
				      "LD_PRELOAD=" SHIM
				      ":/p/lib/libharness-shim.so:/lib/x.so",
				      NULL};
	char out[512];

	diff_of(alone, out, sizeof(out));
	ck_assert_str_eq(out, "LD_PRELOAD=/p/libharness-shim.so");
	diff_of(beside, out, sizeof(out));
	ck_assert_str_eq(out, "LD_PRELOAD=/p/lib/libharness-shim.so:/lib/x.so");
}
END_TEST

START_TEST(a_grant_is_keyed_on_what_is_shown)
{
	static const char *const push[] = {"/bin/true", "push"};
	const char set[] = "GIT_DIR=/p/b\0SHLVL=3";
	const char shell[] = "OLDPWD=/x\0PWD=/y\0SHLVL=3\0_=/bin/true";
	struct hx_ask_subject s = {
	    .op = HX_OP_EXEC, .path = "/bin/true", .argv = push, .argc = 2};
	json_t *g = hx_grant_new(&s, HX_VERDICT_ALLOW, HX_ASK_SESSION, 0, NULL),
	       *arr = json_array();
	char sum[65];

	ck_assert(hx_envdiff_bookkeeping("-OLDPWD"));
	ck_assert(!hx_envdiff_bookkeeping("PWDX=1"));
	hx_envdiff_shown_sum(shell, sizeof(shell), sum);
	ck_assert_str_eq(sum, "");
	json_array_append_new(arr, g);
	ck_assert_ptr_nonnull(hx_grants_match(arr, &s));
	s.env = shell; /* a shell's bookkeeping: the same call */
	s.env_len = sizeof(shell);
	ck_assert_ptr_nonnull(hx_grants_match(arr, &s));
	s.env = set; /* GIT_DIR set: another */
	s.env_len = sizeof(set);
	ck_assert_ptr_null(hx_grants_match(arr, &s));
	s.env_unread = true;
	ck_assert_ptr_null(hx_grants_match(arr, &s));
	s.env_unread = false;
	json_array_append_new(
	    arr, hx_grant_new(&s, HX_VERDICT_ALLOW, HX_ASK_SESSION, 0, NULL));
	ck_assert_ptr_eq(hx_grants_match(arr, &s), json_array_get(arr, 1));
	ck_assert_str_eq(
	    json_string_value(json_array_get(
		json_object_get(json_array_get(arr, 1), "env"), 0)),
	    "GIT_DIR");
	json_decref(arr);
}
END_TEST

static Suite *envdiff_suite(void)
{
	Suite *s = suite_create("envdiff");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, the_sessions_own_is_no_difference);
	tcase_add_test(tc, what_is_set_and_unset);
	tcase_add_test(tc, a_library_named_like_the_shim_is_a_difference);
	tcase_add_test(tc, a_grant_is_keyed_on_what_is_shown);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(envdiff_suite)
