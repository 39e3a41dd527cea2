/* A log the policy tools take is checked first as harness-audit verify
 * checks it: an --audit-log in the project is the next session's
 * agent's to write, and the chain has no key, so records added to an
 * audit run's log after it (the eleventh attack review) would teach
 * learn, or show test, what the run never did. */
#ifndef HX_TOOLS_LOGVERIFY_H
#define HX_TOOLS_LOGVERIFY_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

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

/* A log held open from its verification to its last read: verified and
 * read by its name twice, a rewritten copy renamed over it in between
 * was read as verified (twentieth attack review). */
struct hx_log_held {
	int fd;
	char at[32]; /* /proc/self/fd/N: the name to read it by */
	struct stat st;
};

/* log opened into h and verified through that open file: 1 verified, 0
 * not (said, as hx_log_verified says it), -1 not opened (said). */
int hx_log_hold(const char *tool, const char *log, const char *skipped,
		struct hx_log_held *h, FILE *err);

/* Whether the held log is the file, unchanged, that hx_log_hold opened
 * (its identity, size and times), said on err if not (skipped not
 * NULL); closes it. */
bool hx_log_release(const char *tool, const char *log, const char *skipped,
		    struct hx_log_held *h, FILE *err);

#endif
