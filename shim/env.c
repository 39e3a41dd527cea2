/* Environment rebuild for exec; see env.h. */
#include "shim/env.h"

#include <errno.h>
#include <string.h>

#include "common/wire.h"

#define PRELOAD_EQ HX_ENV_PRELOAD "="
#define SOCKET_EQ  HX_ENV_SOCKET "="
#define CONN_EQ	   HX_ENV_CONN "="

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *base_name(const char *p, size_t n, size_t *blen)
{
	size_t i = n;

	while (i && p[i - 1] != '/')
		i--;
	*blen = n - i;
	return p + i;
}

/* An entry is "the shim" when it is the same path or a library with the
 * same file name: a second copy would interpose twice. */
static bool is_shim(const char *e, size_t n, const char *shim)
{
	size_t bl, sl;
	const char *b = base_name(e, n, &bl);
	const char *sb = base_name(shim, strlen(shim), &sl);

	if (n == strlen(shim) && memcmp(e, shim, n) == 0)
		return true;
	return bl == sl && bl && memcmp(b, sb, bl) == 0;
}

bool hx_env_preload_has(const char *value, const char *shim)
{
	const char *p = value;

	while (p && *p) {
		size_t n = strcspn(p, ": ");

		if (n && is_shim(p, n, shim))
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

long hx_env_preload_value(const char *old, const char *shim, char *buf,
			  size_t cap)
{
	size_t len = strlen(shim);
	const char *p = old;

	if (len + 1 > cap)
		return -E2BIG;
	memcpy(buf, shim, len);
	while (p && *p) {
		size_t n = strcspn(p, ": ");

		if (n && !is_shim(p, n, shim)) {
			if (len + 1 + n + 1 > cap)
				return -E2BIG;
			buf[len++] = ':';
			memcpy(buf + len, p, n);
			len += n;
		}
		p += n;
		if (*p)
			p++;
	}
	buf[len] = '\0';
	return (long)len;
}

static const char *old_preload(char *const *envp)
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (has_prefix(envp[i], PRELOAD_EQ))
			return envp[i] + strlen(PRELOAD_EQ);
	return NULL;
}

void hx_env_size(char *const *envp, const char *shim, const char *sock,
		 const char *conn, size_t *nptrs, size_t *nbytes)
{
	const char *old = old_preload(envp);
	size_t n = 0;

	while (envp && envp[n])
		n++;
	*nptrs = n + 4;
	*nbytes = strlen(PRELOAD_EQ) + strlen(shim) + 1 +
		  (old ? strlen(old) : 0) + 1 + strlen(SOCKET_EQ) +
		  strlen(sock) + 1 +
		  (conn ? strlen(CONN_EQ) + strlen(conn) + 1 : 0);
}

long hx_env_rebuild(char *const *envp, const char *shim, const char *sock,
		    const char *conn, char **out, size_t outcap, char *buf,
		    size_t bufcap)
{
	size_t n = 0, pl = strlen(PRELOAD_EQ), sl = strlen(SOCKET_EQ);
	size_t socklen = strlen(sock), room = conn ? 4 : 3;
	long v;

	for (size_t i = 0; envp && envp[i]; i++) {
		if (has_prefix(envp[i], PRELOAD_EQ) ||
		    has_prefix(envp[i], SOCKET_EQ) ||
		    has_prefix(envp[i], CONN_EQ))
			continue;
		if (n + room > outcap)
			return -E2BIG;
		out[n++] = envp[i];
	}
	if (n + room > outcap || bufcap < pl + 1)
		return -E2BIG;
	memcpy(buf, PRELOAD_EQ, pl);
	v = hx_env_preload_value(old_preload(envp), shim, buf + pl,
				 bufcap - pl);
	if (v < 0)
		return v;
	out[n++] = buf;
	buf += pl + (size_t)v + 1;
	bufcap -= pl + (size_t)v + 1;
	if (bufcap < sl + socklen + 1)
		return -E2BIG;
	memcpy(buf, SOCKET_EQ, sl);
	memcpy(buf + sl, sock, socklen + 1);
	out[n++] = buf;
	if (conn) {
		size_t cl = strlen(CONN_EQ), connlen = strlen(conn);

		buf += sl + socklen + 1;
		bufcap -= sl + socklen + 1;
		if (bufcap < cl + connlen + 1)
			return -E2BIG;
		memcpy(buf, CONN_EQ, cl);
		memcpy(buf + cl, conn, connlen + 1);
		out[n++] = buf;
	}
	out[n] = NULL;
	return (long)n;
}
