/* SHA-256; see sha256.h. Nettle's, not libcrypto's: loading libcrypto
 * costs every session about 1 ms before main, and its EVP interface sets
 * up a provider on the first digest (1.5 ms more); nettle loads in no
 * measurable time and computes without a context to allocate. */
#include "supervisor/sha256.h"

#include <nettle/sha2.h>
#include <string.h>

#include "supervisor/fmt.h"

void hx_sha256_hex2(const void *p1, size_t n1, const void *p2, size_t n2,
		    char *hex)
{
	uint8_t md[SHA256_DIGEST_SIZE];
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, n1, p1);
	if (n2)
		sha256_update(&c, n2, p2);
	sha256_digest(&c, SHA256_DIGEST_SIZE, md);
	hx_fmt_hex(md, SHA256_DIGEST_SIZE, hex);
}

void hx_sha256_hex(const void *p, size_t n, char *hex)
{
	hx_sha256_hex2(p, n, NULL, 0, hex);
}

void hx_sha256_strv(const char *first, const char *const *v, size_t n,
		    uint8_t *md)
{
	hx_sha256_strv2(first, NULL, v, n, md);
}

void hx_sha256_strv2(const char *first, const char *second,
		     const char *const *v, size_t n, uint8_t *md)
{
	struct sha256_ctx c;

	sha256_init(&c);
	if (first)
		sha256_update(&c, strlen(first) + 1, (const uint8_t *)first);
	if (second)
		sha256_update(&c, strlen(second) + 1, (const uint8_t *)second);
	for (size_t i = 0; i < n; i++)
		sha256_update(&c, strlen(v[i]) + 1, (const uint8_t *)v[i]);
	sha256_digest(&c, SHA256_DIGEST_SIZE, md);
}

void hx_sha256_strv_hex(const char *const *v, size_t n, char *hex)
{
	uint8_t md[SHA256_DIGEST_SIZE];

	hx_sha256_strv(NULL, v, n, md);
	hx_fmt_hex(md, SHA256_DIGEST_SIZE, hex);
}
