/* Readable new files in the directories Landlock carves.
 *
 * Landlock only grants (docs/landlock.md), so a read deny inside an
 * allowed tree (~/.ssh under $HOME) is made by granting every other
 * entry of $HOME and $HOME itself nothing: a file made there during the
 * session has no rule and cannot be read back. Claude Code rewrites
 * ~/.claude.json through a temporary file renamed over it, then failed
 * to read it (six retries of 0.65 s). Every file the agent makes in such
 * a directory is made by the supervisor (the agent has no Landlock right
 * to make files there; user-notify emulates the open). So, before
 * Landlock is applied, the supervisor makes a few unnamed files
 * (O_TMPFILE) in each such directory the policy lets the agent write
 * in, and Landlock grants each by a rule on that inode; a creation
 * there whose path the policy lets be read links one in (linkat of
 * /proc/self/fd/N) instead of making a new inode. A rule on a file is
 * on its inode: it follows renames and links.
 *
 * What it keeps: only inodes the supervisor made for the agent, at names
 * the policy lets be read, are granted. Everything else new in those
 * directories (another process's files, a ~/.ssh or ~/.netrc made during
 * the session) stays refused, as before. Unnamed until used, a pooled
 * file is reachable by no path, so nothing can be planted in it first.
 * Once a directory's files are used up, new files there are unreadable
 * again (fails safe); directories made there are not pooled.
 *
 * Lifecycle: hx_ipool_new -> hx_ipool_fill (before the ruleset is
 * applied; each file's rule is added by the caller's grant) ->
 * hx_ipool_create (any thread, while the agent runs) -> hx_ipool_free.
 * hx_ipool_free(NULL) is a no-op. */
#ifndef HX_IPOOL_H
#define HX_IPOOL_H

#include <stddef.h>
#include <sys/types.h>

struct hx_ipool;

/* 0 and *out, or -ENOMEM. */
int hx_ipool_new(struct hx_ipool **out);

/* Makes up to n unnamed files in the directory dir (at most
 * HX_IPOOL_MAX_DIRS directories in all) and calls grant(fd, arg) for
 * each (a non-zero return drops that file; -ENOMEM stops and is
 * returned). Returns how many were kept, or -errno (the file system has
 * no O_TMPFILE, dir is not writable: nothing kept). */
#define HX_IPOOL_MAX_DIRS 8
int hx_ipool_fill(struct hx_ipool *p, const char *dir, size_t n,
		  int (*grant)(int fd, void *arg), void *arg);

/* Creates name in the directory open at dirfd (an O_PATH fd is enough)
 * as one of that directory's pooled files, with the permission bits
 * mode (already masked by the umask), and returns an fd of it opened
 * with flags (O_CREAT, O_EXCL and O_TRUNC dropped: it is new). Or
 * -ENOENT: no pool for that directory, or it is used up (the caller
 * makes the file as usual); -EEXIST: name exists; another -errno of
 * linkat or open. Thread-safe. */
int hx_ipool_create(struct hx_ipool *p, int dirfd, const char *name, int flags,
		    mode_t mode);

/* How many pooled files were linked in, and how many are left. */
size_t hx_ipool_used(const struct hx_ipool *p);
size_t hx_ipool_left(const struct hx_ipool *p);

void hx_ipool_free(struct hx_ipool *p);

#endif
