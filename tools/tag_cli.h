/* harness-audit tag: the HASH the user's sessions write in place of a
 * secret (supervisor/redact.h), to find where a leaked one was used.
 * Apart from main so that tests can drive it. */
#ifndef HX_TAG_CLI_H
#define HX_TAG_CLI_H

#include <stdio.h>

/* Runs `harness-audit tag` (argv[1] "tag"): the secret from in, its
 * hash on out. 0, or 2 with the reason on err. */
int hx_tag_cli(int argc, char *const *argv, FILE *in, FILE *out, FILE *err);

#endif
