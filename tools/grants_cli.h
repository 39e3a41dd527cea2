/* harness-policy grants: the answers to ask given "always" (the grants
 * file, supervisor/grants.h), listed and revoked. Apart from main so that
 * tests can drive it. */
#ifndef HX_GRANTSCLI_H
#define HX_GRANTSCLI_H

#include <stdio.h>

/* Runs `harness-policy grants ARGS...` (argv[0] is "grants"). Returns
 * the exit status: 0 ok, 1 no such grant, 2 usage or I/O error. */
int hx_grants_cli(int argc, char *const *argv, FILE *out, FILE *err);

#endif
