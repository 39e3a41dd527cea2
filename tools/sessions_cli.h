/* harness-audit's sessions: the list of the user's sessions
 * ($XDG_STATE_HOME/harness/sessions/<id>, each with its audit.jsonl or
 * a link to the --audit-log it wrote), and which log a command reads. */
#ifndef HX_SESSIONS_CLI_H
#define HX_SESSIONS_CLI_H

#include <stddef.h>
#include <stdio.h>

/* The log a command reads: arg a log path, a session id, or "--last"
 * or NULL for the last session started in the current directory.
 * Returns 0 with log filled, or 2 with the reason on err. */
int hx_sessions_log(const char *arg, char *log, size_t size, FILE *err);

/* `harness-audit sessions [--here] [--json]`. */
int hx_sessions_cli(int argc, char *const *argv, FILE *out, FILE *err);

#endif
