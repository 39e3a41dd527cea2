/* harness-audit's sessions: the list of the user's sessions
 * ($XDG_STATE_HOME/harness/sessions/<id>, each with its audit.jsonl or
 * a link to the --audit-log it wrote), and which log a command reads. */
#ifndef HX_SESSIONS_CLI_H
#define HX_SESSIONS_CLI_H

#include <stddef.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

struct json_t;

/* The log a command reads: arg a log path, a session id, or "--last"
 * or NULL for the last session started in the current directory.
 * Returns 0 with log filled, or 2 with the reason on err. */
int hx_sessions_log(const char *arg, char *log, size_t size, FILE *err);

/* The session whose directory holds log (the path hx_sessions_log gives
 * for a session id or --last), into id ("" for a log given by its own
 * path). Returns 2 when that is a link to an --audit-log elsewhere (a
 * file other sessions may have written too: read the session's records
 * only), 1 for the session's own log, 0 for none. */
int hx_sessions_id_of(const char *log, char *id, size_t size);
/* The session whose records alone a reader of log takes (id, filled),
 * or NULL for all: a link's, as hx_sessions_id_of says. */
const char *hx_sessions_only(const char *log, char *id, size_t size);

/* A session of the state dir: its log and its first and last records
 * (end NULL when it has none: running, or cut). A compacted log's are
 * the ones its compacted record kept. */
struct hx_sessions_entry {
	char id[NAME_MAX + 1];
	char log[PATH_MAX];
	struct json_t *start, *end;
	bool compacted;
};

/* Every session of the state dir, oldest first, into *out (free with
 * hx_sessions_drop). 0 or -errno. */
int hx_sessions_list(struct hx_sessions_entry **out, size_t *count);
void hx_sessions_drop(struct hx_sessions_entry *s, size_t n);
/* ended, running (harness-exec still runs it), cut (no session_end) or
 * compacted. */
const char *hx_sessions_state(const struct hx_sessions_entry *s);

/* Seconds from time a to time b, as records write them (ISO 8601,
 * UTC, fractions), or -1 when one does not parse. */
double hx_sessions_seconds(const char *a, const char *b);

/* A duration of d seconds as people read it (0.4s, 3m05s, 2h10m; d < 0:
 * "-"). */
void hx_sessions_duration(double d, char *out, size_t size);

/* `harness-audit sessions [--here] [--json]`. */
int hx_sessions_cli(int argc, char *const *argv, FILE *out, FILE *err);

#endif
