/* The file tools of the worker: file_read, file_write, file_patch.
 * Each takes the request's args (borrowed) and returns 0 with *res the
 * result object, or -errno with *res the error object (docs/mcp.md, "The
 * worker"). They run as the sandboxed agent process: a call the sandbox
 * refuses fails as it would for any program, and is reported so. */
#ifndef HX_MW_FILEOPS_H
#define HX_MW_FILEOPS_H

#include <stddef.h>

struct json_t;

int hx_mw_fileops_read(struct json_t *args, struct json_t **res);
int hx_mw_fileops_write(struct json_t *args, struct json_t **res);
int hx_mw_fileops_patch(struct json_t *args, struct json_t **res);

/* Writes n bytes at data to path atomically: a temporary file beside it
 * (".NAME.hxtmp.XXXXXX"), written, fsync'd and renamed over path (with
 * create, only when path does not exist: EEXIST). The mode is mode.
 * On failure the temporary file is removed and path is untouched.
 * 0 or -errno (and *res). */
int hx_mw_fileops_replace(const char *path, const char *data, size_t n,
			  unsigned mode, int create, struct json_t **res);

#endif
