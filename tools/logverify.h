/* A log the policy tools take is checked first as harness-audit verify
 * checks it: an --audit-log in the project is the next session's
 * agent's to write, and the chain has no key, so records added to an
 * audit run's log after it (the eleventh attack review) would teach
 * learn, or show test, what the run never did. */
#ifndef HX_TOOLS_LOGVERIFY_H
#define HX_TOOLS_LOGVERIFY_H

#include <stdio.h>

/* 0 when log verifies (its chain, and every session it names has an
 * anchor that matches); else -1, said on err as "TOOL: LOG: WHY: does
 * not verify, SKIPPED". */
int hx_log_verified(const char *tool, const char *log, const char *skipped,
		    FILE *err);

/* As hx_log_verified, of the file at path (a /proc/self/fd/N of the log
 * the caller holds open, so that what it reads next is the file that
 * verified), said on err by the name shown. */
int hx_log_verified_at(const char *tool, const char *shown, const char *path,
		       const char *skipped, FILE *err);

#endif
