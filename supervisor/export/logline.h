/* One line of an audit log as the policy tools read it: the record
 * without its call stack ("stack": frames only the reader of one event
 * wants, and most of a record's bytes), so that a million records are
 * read in seconds. */
#ifndef HX_LOGLINE_H
#define HX_LOGLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct json_t;

/* The record of line (n bytes, changed in place), or NULL when it is
 * not one (a torn last line). */
struct json_t *hx_logline_parse(char *line, size_t n);

/* What a decision of the record in line depends on for the policy
 * tools, as one string into key (NUL-terminated): its event, op, args,
 * verdict, rule and grant as written, so that records that are the
 * same decision again (the same file read by each process) are judged
 * once. Returns its length, or -1 (too long, or a value that does not
 * end). */
ssize_t hx_logline_key(const char *line, size_t n, char *key, size_t size);

/* Calls fn(arg, line, n) for each line of the log at path (n with its
 * '\n'; line may be changed). 0 or -errno. */
int hx_logline_each(const char *path,
		    void (*fn)(void *arg, char *line, size_t n), void *arg);

/* Whether the record in line (n bytes) is session id's: its top-level
 * "session" member, not bytes anywhere in the line. */
bool hx_logline_is_session(const char *line, size_t n, const char *id);

/* As hx_logline_each, of the records of session only (NULL: every
 * line). A log given to several sessions (--audit-log) holds each
 * one's records in turn: read by one session's name, it was all of
 * them, and the next session's programs were shown as the first's. */
int hx_logline_each_of(const char *path, const char *only,
		       void (*fn)(void *arg, char *line, size_t n), void *arg);

#endif
