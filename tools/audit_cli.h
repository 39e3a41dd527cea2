/* harness-audit: verify, summarize and query audit logs. Apart from main
 * so that tests can drive it. */
#ifndef HX_AUDITCLI_H
#define HX_AUDITCLI_H

#include <stdio.h>

/* Runs `harness-audit ARGS...` (argv[0] is the program) writing to out
 * and err. Returns the exit status: 0 ok, 1 verification failed (or no
 * match for show), 2 usage or I/O error. */
int hx_audit_cli(int argc, char *const *argv, FILE *out, FILE *err);

#endif
