/* harness-policy test: replays the decisions of recorded sessions (audit
 * logs) through a candidate policy and says what would change, so that a
 * policy learned or edited is known before it is enforced. Apart from
 * main so that tests can drive it. */
#ifndef HX_POLICYTESTCLI_H
#define HX_POLICYTESTCLI_H

#include <stdio.h>

/* Runs `harness-policy test ARGS...` (argv[0] is "test"). Returns the
 * exit status: 0 nothing allowed then is refused now, 1 something is, 2
 * usage, policy or log error. */
int hx_policy_test_cli(int argc, char *const *argv, FILE *out, FILE *err);

#endif
