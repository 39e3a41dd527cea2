/* SHA-256; see sha256.h. libcrypto's low-level interface, deprecated in
 * OpenSSL 3 but direct: EVP's first digest sets up a provider and reads
 * openssl.cnf (about 1.5 ms of every session's start, against 25 us
 * here) and each EVP context costs more than hashing a 600-byte record
 * (1.2 us against 0.45). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "sha256.h"

#include <openssl/sha.h>

#include "fmt.h"

void hx_sha256_hex2(const void *p1, size_t n1, const void *p2, size_t n2,
		    char *hex)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256_CTX c;

	/* These cannot fail: they only compute. */
	SHA256_Init(&c);
	SHA256_Update(&c, p1, n1);
	if (n2)
		SHA256_Update(&c, p2, n2);
	SHA256_Final(md, &c);
	hx_fmt_hex(md, SHA256_DIGEST_LENGTH, hex);
}

void hx_sha256_hex(const void *p, size_t n, char *hex)
{
	hx_sha256_hex2(p, n, NULL, 0, hex);
}
