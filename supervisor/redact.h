/* Redaction of secrets in the audit log's text (issue 14, item 6): a
 * credential an agent puts into an argv, a path or a shell's text is
 * written as «redacted:TYPE:HASH» in its place, the rest kept
 * (curl -H 'Authorization: Bearer «redacted:bearer:3f9a1c2e»' ...).
 * TYPE names the format (github-token, jwt, url-password, secret...);
 * HASH is the first 8 hex digits of HMAC-SHA256 of the secret's bytes
 * under the user's key (hx_redact_key_load), so one secret has one tag
 * across records and sessions, and nobody without the key can test a
 * guess against it. What is recognized: README, "Redaction". Pure but
 * for the key file (redact_key.c). */
#ifndef HX_REDACT_H
#define HX_REDACT_H

#include <stddef.h>
#include <stdint.h>

struct hx_redact_conf;
struct hx_redact;

/* «redacted:TAG:HASH»: guillemets, which no shell, glob or JSON
 * escapes, so that a tag is one jq test ("«redacted:") and stays inside
 * the quotes it replaced a secret in. */
#define HX_REDACT_OPEN                                                         \
	"\xc2\xab"                                                             \
	"redacted:"
#define HX_REDACT_CLOSE	   "\xc2\xbb"
#define HX_REDACT_KEY_LEN  32
#define HX_REDACT_HASH_LEN 8 /* hex digits in a tag */

/* A redactor of the built-in formats and names plus conf's (policy.h;
 * NULL: the built-ins only; conf->enabled is the caller's business),
 * hashing under key (HX_REDACT_KEY_LEN bytes). Copies what it needs.
 * 0, -ENOMEM or -EINVAL (a pattern regcomp refuses). */
int hx_redact_new(const struct hx_redact_conf *conf, const uint8_t *key,
		  struct hx_redact **out);
/* hx_redact_free(NULL) is a no-op. */
void hx_redact_free(struct hx_redact *r);

/* Text s (a path, a command line, a shell's text): 0 when it holds no
 * secret (*out untouched; the common case, a scan of its bytes), 1 with
 * *out a malloc'd copy with each secret replaced, or -ENOMEM. Safe from
 * several threads at once. */
int hx_redact_text(const struct hx_redact *r, const char *s, char **out);

/* The same for a path: each secret ends with its name (a '/'). */
int hx_redact_path(const struct hx_redact *r, const char *s, char **out);

/* The same for v[i] of an argv, which the words before it explain: the
 * word after an option that takes a password is one (sshpass -p W,
 * curl -u USER:W), an assignment word's value is all after '='
 * (env 'PASSWORD=a b'), and the word after -c (sh -c, python3 -c) is
 * read as a shell's text. */
int hx_redact_argv(const struct hx_redact *r, const char *const *v, size_t i,
		   char **out);

/* The tag's HASH of the n bytes at s: HX_REDACT_HASH_LEN hex digits and
 * a NUL into hex. */
void hx_redact_hash(const struct hx_redact *r, const char *s, size_t n,
		    char *hex);

/* ---- redact_key.c ---- */

/* The user's key: STATE_DIR/redact.key (64 hex digits, mode 0600, made
 * on first use). 0 with key filled from it; else -errno and key filled
 * from getrandom(2), a key of this session only (tags then match within
 * the session only). */
int hx_redact_key_load(const char *state_dir, uint8_t *key);

#endif
