/* A session's anchor: the seq and hash of the last record it wrote,
 * kept in its session directory, which is harness:protect for every
 * later session too. The chain has no key: a log the agent of a later
 * session may write (an --audit-log in the project) could be cut or
 * rewritten with its hashes computed again, and still verify; checked
 * against the anchor it does not (the eleventh attack review).
 *
 * The file is one line: "<seq> <64 hex>\n", written once at the end
 * (a session whose harness-exec was killed has none), in place over a
 * placeholder made when the session starts (hx_anchor_reserve): the
 * end needs no new block nor inode, so an agent that fills the file
 * system (the one of its write roots, most often) before it exits
 * leaves its session anchored all the same (the fourteenth attack
 * review: made at the end, it was not written). A copy-on-write file
 * system may still want room for the overwrite. */
#ifndef HX_ANCHOR_H
#define HX_ANCHOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HX_ANCHOR_FILE "anchor"

/* Makes session_dir/anchor, a placeholder as long as any anchor (read
 * as none: the session is running or was killed), its room taken.
 * 0 or -errno. */
int hx_anchor_reserve(const char *session_dir);

/* Writes session_dir/anchor for the record seq with hash hex: over its
 * placeholder, in place (else a new file renamed into place). Returns
 * its fd, not yet synced: the caller fsyncs and closes it (with the
 * log's own last sync, hx_audit_sync_also, so that one flush of the
 * device takes both); or -errno. */
int hx_anchor_write(const char *session_dir, uint64_t seq, const char *hex);

/* Reads the anchor of the session named id from the state dir into
 * *seq and hex (65 bytes). 0, -ENOENT when it has none, -EINVAL for a
 * name that is no session id or a malformed file. */
int hx_anchor_read(const char *id, uint64_t *seq, char hex[65]);

/* Checks the log at path against the anchors of the sessions it names,
 * and, when only is not NULL, that session's anchor whether the log
 * names it or not. Returns 0 when every anchored session's record is in
 * the log with its hash and none of it follows (*checked: how many
 * were), 1 with the first mismatch said in why, -errno when the log is
 * unreadable. strict: a session named without an anchor (running,
 * killed, another user's, or made up by whoever wrote the log) fails
 * too. */
int hx_anchor_check(const char *path, const char *only, bool strict,
		    size_t *checked, char *why, size_t wsize);

#endif
