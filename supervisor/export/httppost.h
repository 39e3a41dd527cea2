/* One HTTP/1.1 POST to an http:// URL (no TLS: a collector on this
 * machine or this network), what an OTLP/HTTP export needs. */
#ifndef HX_HTTPPOST_H
#define HX_HTTPPOST_H

#include <stddef.h>

/* POSTs n bytes of body (type: its Content-Type) to url, waiting at most
 * timeout_ms in all. Returns the HTTP status (2xx: taken), or -errno
 * (-EINVAL: not an http:// URL), with a reason in why. */
int hx_http_post(const char *url, const char *type, const void *body, size_t n,
		 int timeout_ms, char *why, size_t whylen);

#endif
