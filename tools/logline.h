/* One line of an audit log as the policy tools read it: the record
 * without its call stack ("stack": frames only the reader of one event
 * wants, and most of a record's bytes), so that a million records are
 * read in seconds. */
#ifndef HX_LOGLINE_H
#define HX_LOGLINE_H

#include <stddef.h>

struct json_t;

/* The record of line (n bytes, changed in place), or NULL when it is
 * not one (a torn last line). */
struct json_t *hx_logline_parse(char *line, size_t n);

#endif
