/* The environment handed to every exec: the program's variables minus
 * LD_PRELOAD, HARNESS_SOCKET and HARNESS_CONN, then LD_PRELOAD=<shim>
 * [:<other preload entries>] and HARNESS_SOCKET=<socket>, also when the
 * program cleared or unset them (env -i, Node's env:, sudo-like
 * scrubbing), and HARNESS_CONN=<conn> when the exec hands its connection
 * over (conn not NULL). Pure: writes into caller buffers only, so it runs
 * in vfork children. */
#ifndef HX_SHIM_ENV_H
#define HX_SHIM_ENV_H

#include <stdbool.h>
#include <stddef.h>

/* Room hx_env_rebuild needs for envp (may be NULL): *nptrs array slots
 * (the terminating NULL included) and *nbytes of string buffer. */
void hx_env_size(char *const *envp, const char *shim, const char *sock,
		 const char *conn, size_t *nptrs, size_t *nbytes);

/* Fills out[0..n] (out[n] = NULL) with pointers into envp and into buf,
 * which receives the injected strings. Returns n, or -E2BIG when outcap
 * or bufcap is too small. */
long hx_env_rebuild(char *const *envp, const char *shim, const char *sock,
		    const char *conn, char **out, size_t outcap, char *buf,
		    size_t bufcap);

/* Builds the LD_PRELOAD value alone: shim first, then the entries of
 * old (may be NULL) that are not the shim. Returns its length, or -E2BIG. */
long hx_env_preload_value(const char *old, const char *shim, char *buf,
			  size_t cap);

/* True when the preload list value names the shim as an entry. */
bool hx_env_preload_has(const char *value, const char *shim);

#endif
