/* Secrets in what harness-mcp returns: every string of a result, at any
 * depth, and the bytes under a base64 encoding, through the session's
 * redactor (redact.h). Pure. Internal to supervisor/mcp. */
#ifndef HX_MCP_SECRETS_H
#define HX_MCP_SECRETS_H

#include <stdbool.h>

struct json_t;
struct hx_redact;

/* Replaces each secret in every string of v (objects and arrays, at any
 * depth) but the members named in skip (NULL-terminated; what the
 * caller filters itself) and hashes (sha256, actual_sha256: hex, never
 * a secret, and the client must get them back intact). Appends the
 * name of each member it changed to redacted (once). */
void hx_mcp_redact_tree(struct json_t *v, const struct hx_redact *r,
			const char *const *skip, struct json_t *redacted);

/* o[key], base64 text: decoded, its secrets replaced (in each run of
 * bytes between NULs), encoded again; key appended to redacted when it
 * changed. True when it changed. Text that is not base64 is left. */
bool hx_mcp_redact_base64(struct json_t *o, const char *key,
			  const struct hx_redact *r, struct json_t *redacted);

/* s with its secrets replaced: a malloc'd copy, or NULL when it holds
 * none (or without memory). */
char *hx_mcp_redact_copy(const struct hx_redact *r, const char *s);

#endif
