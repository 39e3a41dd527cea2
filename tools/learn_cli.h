/* harness-policy learn: a policy from recorded sessions (audit logs),
 * the smallest that allows what they did, commented, with examples taken
 * from the log; what enforce-mode sessions were refused stays denied,
 * and so does what the default policy refuses (learn_open.h).
 * Apart from main so that tests can drive it. */
#ifndef HX_LEARNCLI_H
#define HX_LEARNCLI_H

#include <stdio.h>

/* Runs `harness-policy learn LOG...` (argv[0] is "learn"), the policy
 * on out. Returns 0, or 2 for usage and log errors. */
int hx_learn_cli(int argc, char *const *argv, FILE *out, FILE *err);

#endif
