/* Files created later that the masks must cover (issue 10, class 10).
 *
 * The masks (masks.h) cover what the walk finds at start. A file the
 * policy denies, created in the project during the session by a process
 * outside it (an editor, a `git pull`, a build outside the sandbox:
 * an `.env` written next to the agent), would be read by a program that
 * skips the shim. So each directory the walk visits is watched
 * (inotify: created and moved-in names), a new directory too (and what
 * it already holds, looked at once), and every new entry that the policy
 * denies both reading and writing is handed on to be masked
 * (maskfs.h: hx_maskfs_add). One the policy lets be written is left
 * alone: the agent may have made it itself, and a mask would break its
 * writes (what it wrote it knows).
 *
 * A read between the creation and the mask (the time the loop takes to
 * see the event and bind, about a millisecond) is not held; directories
 * past the watch cap are not watched (counted).
 *
 * Lifecycle: hx_maskwatch_new (before the walk) -> hx_maskwatch_add for
 * each directory walked (the walk's thread) -> hx_maskwatch_read on the
 * loop -> hx_maskwatch_free. */
#ifndef HX_MASKWATCH_H
#define HX_MASKWATCH_H

#include <stdbool.h>
#include <stddef.h>

struct hx_policy;
struct hx_maskwatch;
struct json_t;

#define HX_MASKWATCH_MAX 16384

/* For policy p (borrowed). Returns 0 and *out, or -errno. */
int hx_maskwatch_new(const struct hx_policy *p, struct hx_maskwatch **out);

/* Watches the directory open at dfd (borrowed), whose absolute path is
 * dir. Past HX_MASKWATCH_MAX less 1024 kept for the held directories
 * (hx_maskwatch_names, _hold), counts it and returns -ENOSPC; 0, or
 * -errno. */
int hx_maskwatch_add(struct hx_maskwatch *w, int dfd, const char *dir);

/* Watches directory dir (absolute, no symlink in it) for its names
 * only: each new entry the policy denies reading and writing (a file, a
 * directory, a symlink: masked on its name) is handed on, nothing else
 * there is judged or walked. For a mask outside the project (a held
 * credential outside the write roots, refused by Landlock; a read deny
 * inside another write root, ~/.cache/huggingface/token): the file
 * renamed over it or made anew (a credential rotated by the user's
 * tool, a history saved by the user's shell, a symlink re-pointed by a
 * dotfile manager), which drops the mask with the old file, is masked
 * again. 0, or -errno. */
int hx_maskwatch_names(struct hx_maskwatch *w, const char *dir);

/* dir (absolute) is not watched for its names: the sessions' run dir,
 * where only harness-exec makes entries (every other session's name is
 * harness:protect) and Landlock refuses each new one (it grants that
 * directory entry by entry). Watched, each session the user started
 * there meanwhile was a mask and a mask_added record in every running
 * session, out of HX_MASKFS_LATE, which a project's late .env shares.
 * A walked directory (a project at /tmp) is watched all the same.
 * 0 or -ENOMEM. */
int hx_maskwatch_quiet(struct hx_maskwatch *w, const char *dir);

/* The held literal denies (hx_landlock_deny_paths; copied), once: the
 * deepest directory of each that is there is
 * watched for its names, and a symlink made there on the way to one is
 * masked on its name too. 0, or -errno. */
int hx_maskwatch_denies(struct hx_maskwatch *w, const char *const *paths,
			size_t n);

/* hx_maskwatch_names of path's directory. */
int hx_maskwatch_hold(struct hx_maskwatch *w, const char *path);

/* The inotify descriptor, for the loop. */
int hx_maskwatch_fd(const struct hx_maskwatch *w);

/* Reads what is queued and calls fn for each new entry the policy denies
 * reading and writing (path absolute). */
void hx_maskwatch_read(struct hx_maskwatch *w,
		       void (*fn)(const char *path, bool is_dir, void *arg),
		       void *arg);

/* {"dirs": N, "unwatched": N, "seen": N}: a new reference. */
struct json_t *hx_maskwatch_json(const struct hx_maskwatch *w);

/* How many directories the kernel refused to watch for want of the
 * user's inotify watches (max_user_watches: shared with every program
 * of the uid, another session's agent too). */
size_t hx_maskwatch_refused(const struct hx_maskwatch *w);

void hx_maskwatch_free(struct hx_maskwatch *w);

#endif
