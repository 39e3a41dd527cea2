/* The agent's questions' pure helpers (supervisor/askuser.h), by
 * tables: which answers may answer a question, which choice a typed
 * line names, when a digit picks at once, the agent's text made safe
 * for a terminal, and the copy. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <string.h>

#include "common/sbuf.h"
#include "supervisor/askuser.h"
#include "tests/unit/check_main.h"

static const char *const yes_no[] = {"yes", "no"};
static const char *const versions[] = {"3.11", "3.12"};
static const char *const numbers[] = {"2", "1"};

static const struct hx_ask_question free_text = {"Which branch?", NULL, 0,
						 NULL};
static const struct hx_ask_question with_choices = {"Push?", yes_no, 2, NULL};
static const struct hx_ask_question with_versions = {"Which?", versions, 2,
						     NULL};
static const struct hx_ask_question with_numbers = {"Which?", numbers, 2, NULL};

struct check_case {
	const struct hx_ask_question *q;
	const char *answer;
	const char *why; /* NULL: accepted; else a part of the reason */
};

static char long_answer[HX_ASK_ANSWER_MAX + 2];
static char longest_answer[HX_ASK_ANSWER_MAX + 1];

static const struct check_case checks[] = {
    {&free_text, "feature/x", NULL},
    {&free_text, "-é ü 漢字 🙂", NULL},
    {&free_text, "", "empty"},
    {&free_text, "a\tb", "control character"},
    {&free_text, "a\nb", "control character"},
    {&free_text, "a\x7f", "control character"},
    {&free_text, "a\x1b[31m", "control character"},
    {&free_text, "a\xc2\x85z", "control character"}, /* U+0085, C1 */
    {&free_text, "a\xff", "not UTF-8"},
    {&free_text, "\xc0\xaf", "not UTF-8"},     /* overlong '/' */
    {&free_text, "\xed\xa0\x80", "not UTF-8"}, /* a surrogate */
    {&free_text, long_answer, "more than 2048 bytes"},
    {&free_text, longest_answer, NULL},
    {&with_choices, "yes", NULL},
    {&with_choices, "no", NULL},
    {&with_choices, "Yes", "not one of the question's choices: 1) yes, 2) no"},
    {&with_choices, "maybe", "not one of"},
    {&with_choices, "1", "not one of"}, /* a number: hx_askuser_choice's */
};

START_TEST(an_answer_is_checked)
{
	const struct check_case *c = &checks[_i];
	char why[512];
	int r;

	memset(long_answer, 'a', sizeof(long_answer) - 1);
	memset(longest_answer, 'b', sizeof(longest_answer) - 1);
	r = hx_askuser_check(c->q, c->answer, why, sizeof(why));
	if (!c->why) {
		ck_assert_msg(r == 0, "case %d refused: %s", _i, why);
		return;
	}
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_msg(strstr(why, c->why), "case %d: %s", _i, why);
}
END_TEST

struct choice_case {
	const struct hx_ask_question *q;
	const char *typed;
	int index;
};

static const struct choice_case choices[] = {
    {&with_choices, "yes", 0},	  {&with_choices, "no", 1},
    {&with_choices, "1", 0},	  {&with_choices, "2", 1},
    {&with_choices, "3", -1},	  {&with_choices, "0", -1},
    {&with_choices, "01", -1},	  {&with_choices, "1 ", -1},
    {&with_choices, "", -1},	  {&with_choices, "YES", -1},
    {&with_versions, "3.12", 1},  {&with_versions, "2", 1},
    {&with_numbers, "1", 1}, /* its text first, then its number */
    {&with_numbers, "2", 0},	  {&free_text, "1", -1},
    {&with_choices, "99999", -1},
};

START_TEST(a_typed_line_names_a_choice)
{
	const struct choice_case *c = &choices[_i];

	ck_assert_msg(hx_askuser_choice(c->q, c->typed) == c->index,
		      "case %d: '%s'", _i, c->typed);
}
END_TEST

START_TEST(a_digit_picks_only_when_it_cannot_begin_a_choice)
{
	static const char *const ten[] = {"a", "b", "c", "d", "e",
					  "f", "g", "h", "i", "j"};
	struct hx_ask_question many = {"?", ten, 10, NULL};

	ck_assert(hx_askuser_digit_picks(&with_choices));
	ck_assert(!hx_askuser_digit_picks(&with_versions));
	ck_assert(!hx_askuser_digit_picks(&free_text));
	ck_assert(!hx_askuser_digit_picks(&many));
	many.nchoices = 9;
	ck_assert(hx_askuser_digit_picks(&many));
}
END_TEST

struct text_case {
	const char *in, *nl, *out;
};

static const struct text_case texts[] = {
    {"plain text", NULL, "plain text"},
    {"é 漢字 🙂", NULL, "é 漢字 🙂"},
    {"a\x1b]0;title\x07z", NULL, "a\\x1b]0;title\\x07z"},
    {"a\nb", NULL, "a\\x0ab"},
    {"a\nb", "\n  ", "a\n  b"},
    {"a\\x1b", NULL, "a\\\\x1b"}, /* no fake escape */
    {"a\xc2\x9b"
     "31m",
     NULL, "a\\u009b31m"}, /* C1 CSI */
    {"abc\xe2\x80\xae"
     "cba",
     NULL, "abc\\u202ecba"}, /* bidi override */
    {"\xff\xfe", NULL, "\\xff\\xfe"},
    {"a\x7f", NULL, "a\\x7f"},
};

START_TEST(the_agents_text_is_safe_on_a_terminal)
{
	const struct text_case *c = &texts[_i];
	char buf[256];
	struct hx_sbuf b = {buf, sizeof(buf), 0};

	hx_askuser_put_text(&b, c->in, c->nl);
	ck_assert_str_eq(buf, c->out);
}
END_TEST

START_TEST(a_question_is_copied)
{
	struct hx_ask_question in = {"Push?", yes_no, 2, "mcp-3"}, out;

	ck_assert_int_eq(hx_askuser_dup(&in, &out), 0);
	ck_assert_str_eq(out.text, "Push?");
	ck_assert_str_eq(out.call_id, "mcp-3");
	ck_assert_uint_eq(out.nchoices, 2);
	ck_assert_ptr_ne(out.choices, yes_no);
	ck_assert_str_eq(out.choices[1], "no");
	hx_askuser_free(&out);
	ck_assert_ptr_null(out.text);
	hx_askuser_free(&out); /* empty: a no-op */
	in.choices = NULL;
	in.nchoices = 0;
	in.call_id = NULL;
	ck_assert_int_eq(hx_askuser_dup(&in, &out), 0);
	ck_assert_ptr_null(out.choices);
	ck_assert_ptr_null(out.call_id);
	hx_askuser_free(&out);
}
END_TEST

static Suite *askuser_suite(void)
{
	Suite *s = suite_create("askuser");
	TCase *tc = tcase_create("askuser");

	tcase_add_loop_test(tc, an_answer_is_checked, 0,
			    (int)(sizeof(checks) / sizeof(*checks)));
	tcase_add_loop_test(tc, a_typed_line_names_a_choice, 0,
			    (int)(sizeof(choices) / sizeof(*choices)));
	tcase_add_test(tc, a_digit_picks_only_when_it_cannot_begin_a_choice);
	tcase_add_loop_test(tc, the_agents_text_is_safe_on_a_terminal, 0,
			    (int)(sizeof(texts) / sizeof(*texts)));
	tcase_add_test(tc, a_question_is_copied);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(askuser_suite)
