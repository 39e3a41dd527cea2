/* The arguments of a request and the error replies of the worker: each
 * getter checks the member's type and bounds and, when they are wrong,
 * makes the error object the reply carries. The front validated the
 * arguments against the tool's schema already; the worker checks again
 * because it trusts no decoder but its own. */
#ifndef HX_MW_ARGS_H
#define HX_MW_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_t;

/* Sets *res to a new error object {"errno": NAME, "code": e, "message":
 * the formatted text (bytes that are not UTF-8 replaced)} for positive
 * errno e, and returns -e. */
int hx_mw_args_error(struct json_t **res, int e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The symbolic name of errno e ("EACCES"), "E?" when unknown. */
const char *hx_mw_args_errname(int e);

/* 0 when every member of args is one of keys (NULL-terminated);
 * otherwise -EINVAL and *res an error naming the first other one. */
int hx_mw_args_only(struct json_t *args, const char *const *keys,
		    struct json_t **res);

/* Member key as a string: 1 and *s (borrowed, NUL-terminated) and *n
 * (its length, which may hold NUL bytes) when present, 0 when absent,
 * -EINVAL (and *res) when of another type. n may be NULL. */
int hx_mw_args_str(struct json_t *args, const char *key, const char **s,
		   size_t *n, struct json_t **res);

/* Member key as a path: present, a string, absolute, no NUL byte,
 * shorter than PATH_MAX. 0 or -EINVAL (and *res). */
int hx_mw_args_path(struct json_t *args, const char *key, const char **path,
		    struct json_t **res);

/* Member key as an integer in [lo, hi]; def when absent (*given false).
 * 0 or -EINVAL (and *res). given may be NULL. */
int hx_mw_args_uint(struct json_t *args, const char *key, uint64_t def,
		    uint64_t lo, uint64_t hi, uint64_t *v, bool *given,
		    struct json_t **res);

/* Member key as a boolean, def when absent. 0 or -EINVAL (and *res). */
int hx_mw_args_bool(struct json_t *args, const char *key, bool def, bool *v,
		    struct json_t **res);

/* Member "encoding": "utf-8" (the default: *base64 false) or "base64".
 * 0 or -EINVAL (and *res). */
int hx_mw_args_encoding(struct json_t *args, bool *base64, struct json_t **res);

/* A JSON string of the n bytes at p, bytes that are not UTF-8 replaced
 * by U+FFFD (*lossy set true then, when lossy is not NULL); NULL when
 * out of memory. For names and output the worker does not control. */
struct json_t *hx_mw_args_string_lossy(const char *p, size_t n, bool *lossy);

#endif
