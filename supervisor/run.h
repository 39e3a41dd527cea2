/* harness-exec: set up a session, run the command under the supervisor,
 * tear down. */
#ifndef HX_RUN_H
#define HX_RUN_H

#include <sys/types.h>

#define HX_VERSION "0.1.0"

struct hx_options;

/* Runs the whole session for o; returns the process exit status: the
 * command's (128+N when killed by signal N), or 2 on a setup error
 * (after printing it to stderr). */
int hx_run(const struct hx_options *o);

#endif
