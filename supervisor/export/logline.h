/* One line of an audit log as the policy tools read it: the record
 * without its call stack ("stack": frames only the reader of one event
 * wants, and most of a record's bytes), so that a million records are
 * read in seconds. */
#ifndef HX_LOGLINE_H
#define HX_LOGLINE_H

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

#endif
