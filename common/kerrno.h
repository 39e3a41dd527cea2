/* What the kernel would have answered a call the policy denies: shared
 * by the shim (in the agent, with its credentials) and the supervisor's
 * user-notify workers (with the agent's uid and no DAC capabilities), so
 * that both layers fail a denied call alike.
 *
 * A program learns from EEXIST, ENOENT, ENOTDIR... what to do next
 * (mkdir -p and Node's mkdir({recursive: true}) go on past EEXIST; a
 * build tool creates a missing parent): the policy's denial is put where
 * it changes nothing else, last, after every check the kernel would make
 * itself, so EACCES is only the answer to a call the kernel would have
 * let through. Callers ask only for paths the policy lets the agent read
 * (hx_outcome.tell): their existence is no secret (the agent could stat
 * them); a path denied for reading keeps EACCES. Raw system calls only
 * (no errno, no libc entry the shim interposes): vfork-child safe. */
#ifndef HX_COMMON_KERRNO_H
#define HX_COMMON_KERRNO_H

#include <stdint.h>

enum hx_kcall {
	HX_KC_OPEN, /* flags: open(2) flags */
	HX_KC_MKDIR,
	HX_KC_RMDIR,
	HX_KC_UNLINK,
	HX_KC_RENAME,  /* path -> path2; flags: RENAME_* */
	HX_KC_LINK,    /* a new name path for path2; flags: AT_SYMLINK_FOLLOW */
	HX_KC_SYMLINK, /* path: the new link */
	HX_KC_TRUNCATE,
	HX_KC_CHMOD,   /* flags: AT_SYMLINK_NOFOLLOW */
	HX_KC_CHOWN,   /* flags: AT_SYMLINK_NOFOLLOW; uid, gid (-1: kept) */
	HX_KC_CONNECT, /* path: a unix socket's (connect, sendto) */
};

/* One call as the program made it: paths as written, relative to their
 * dirfd (AT_FDCWD: the caller's cwd); borrowed. */
struct hx_kargs {
	enum hx_kcall call;
	int dirfd, dirfd2;
	const char *path, *path2;
	unsigned flags;
	uint32_t uid, gid;
};

/* The positive errno the kernel gives for k, in the order it checks:
 * the lookup (ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG, EACCES on search),
 * EXDEV, EEXIST, the type (EISDIR, ENOTDIR, ENOTEMPTY, EPERM), write
 * permission; EACCES when every check passes. Probes with stat,
 * faccessat2 and statx as the caller; changes nothing. */
int hx_kerrno(const struct hx_kargs *k);

#endif
