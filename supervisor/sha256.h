/* SHA-256 as hex, for the audit chain, the policy digest and the
 * manifest. */
#ifndef HX_SHA256_H
#define HX_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* SHA-256 of p1 (n1 bytes) then p2 (n2 bytes; p2 may be NULL when n2
 * is 0) as 64 hex digits + NUL into hex. */
void hx_sha256_hex2(const void *p1, size_t n1, const void *p2, size_t n2,
		    char *hex);

/* SHA-256 of n bytes as 64 hex digits + NUL into hex. */
void hx_sha256_hex(const void *p, size_t n, char *hex);

/* SHA-256 of n strings, each with its NUL (an argv as the kernel lays
 * it out), after first and its NUL (NULL: none): its 32 bytes into md;
 * or, without first, as hex into hex. */
void hx_sha256_strv(const char *first, const char *const *v, size_t n,
		    uint8_t *md);
/* The same with second (when not NULL) hashed, with its NUL, after
 * first. */
void hx_sha256_strv2(const char *first, const char *second,
		     const char *const *v, size_t n, uint8_t *md);
void hx_sha256_strv_hex(const char *const *v, size_t n, char *hex);

#endif
