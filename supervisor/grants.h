/* Grants: answers to ask (ask.h) that stand for more than one call, as
 * JSON objects, one per line of the user's grants file (JSON Lines, jq
 * reads it; `harness-policy grants` lists and revokes). Each says what
 * it grants and on what key:
 *
 *   {"id": "g-1a2b3c4d", "verdict": "allow", "kind": "exec",
 *    "path": "/usr/bin/git", "dev": 2049, "ino": 1234,
 *    "argv": ["push", "**" ], "rule": "git-push", ...}
 *   {"kind": "file", "access": "write", "glob": "$HOME/p/build/ **"}
 *   {"kind": "net", "target": "github.com:443"}
 *
 * An exec grant holds for the executable at path only (and, with dev
 * and ino, only while that file is the one granted: a copy, a symlink
 * named like it or a replaced file is not it), with argv[1..] matching
 * argv's globs word by word, a last "**" matching any further words. A
 * file grant holds for paths its glob matches, with that access (an op
 * name: write, unlink, rename, ...). A net grant holds for that
 * host:port, by a name the address was resolved from or the address. */
#ifndef HX_GRANTS_H
#define HX_GRANTS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/types.h"
#include "supervisor/ask.h"

struct json_t;

/* Appends the grants of the file at path to arr (a JSON array): 0 (a
 * missing file has none), or -errno; a malformed line is skipped and
 * said into err (when not NULL) as "path:line: why". */
int hx_grants_load(const char *path, struct json_t *arr, char *err,
		   size_t elen);

/* Appends grant g as one line (the file made 0600, never through a
 * symlink). 0 or -errno. */
int hx_grants_append(const char *path, struct json_t *g);

/* Removes the grant whose id is id, rewriting the file whole (renamed
 * into place). 0, -ENOENT when none has it, or -errno. */
int hx_grants_revoke(const char *path, const char *id);

/* The first grant of arr that holds for s, or NULL. */
struct json_t *hx_grants_match(struct json_t *arr,
			       const struct hx_ask_subject *s);

/* Whether a grant can name s's bytes (every string UTF-8, as JSON
 * holds): hx_grant_new makes none otherwise. */
bool hx_grant_can_name(const struct hx_ask_subject *s, const char *dir);

/* A grant (new reference) answering s with verdict v for scope: the
 * exact call, or, with prefix > 0, an exec's first prefix words after
 * argv[0] and any after them; dir (not NULL: a batch) grants the files
 * in that directory (not below it) instead of s's own path. NULL: out
 * of memory, or !hx_grant_can_name. */
struct json_t *hx_grant_new(const struct hx_ask_subject *s, enum hx_verdict v,
			    enum hx_ask_scope scope, unsigned prefix,
			    const char *dir);

/* Scope names: "once", "session", "always"; parse returns -1 for
 * none. */
const char *hx_grant_scope_name(enum hx_ask_scope s);
int hx_grant_scope_parse(const char *s);

/* The grants file in the state dir (session.h): <state>/grants.jsonl.
 * 0 or -ENAMETOOLONG. */
int hx_grants_path(char *out, size_t size);

#endif
