/* A git object store's files (issue 10, class 5): a loose object or a
 * pack is named by its content's hash, so git makes each once and never
 * writes it again; rewriting one (or deleting it) changes what another
 * branch, or the user's next checkout, holds, outside every rule about
 * the working tree. What git writes for the agent's own work is always
 * a new file (a temporary name, then linked or renamed to a name that
 * does not exist yet), so an object that predates the session may only
 * be read; what the agent's own commits made it may manage (git gc). */
#ifndef HX_GITOBJ_H
#define HX_GITOBJ_H

#include <stdbool.h>
#include <time.h>

/* Whether path (absolute, normalized) is the final name of a loose
 * object (objects/xx/<hash>) or a pack file (objects/pack/pack-<hash>.*)
 * of a git directory (one with a HEAD beside objects/) that existed
 * before since: its inode last changed (ctime, which no call sets at
 * will) before then. */
bool hx_gitobj_predates(const char *path, const struct timespec *since);

/* Whether path, beneath the object store objects (absolute, resolved),
 * is in a part of it that says what an object id holds other than by a
 * loose object's name: pack/ (a pack's index names each object it
 * holds; a multi-pack index) and info/ (a commit graph gives a commit's
 * tree and parents; alternates), or is one of those two. Git and
 * libgit2 read packs before loose objects and never hash what they
 * read: a pack of the agent's claiming the id of the user's Makefile
 * blob made the user's next checkout of it write the agent's, in no
 * record, diff or manifest. A loose object of an id the store has is
 * never read (packs first) or never rewritten (hx_gitobj_predates). */
bool hx_gitobj_defines(const char *objects, const char *path);

/* Whether path (absolute, normalized) is, or is beneath, a place of a
 * git directory other than own (ownlen bytes; the session's, whose
 * replace refs and grafts the end of the session reads and records:
 * history_rewritten) where git reads one object in place of another:
 * refs/replace (git replace), or, in a git directory made before since
 * (birth time, else its config's ctime: a nested repository's, a
 * submodule's in .git/modules), objects/pack
 * and objects/info as hx_gitobj_defines says. Neither a record nor a
 * refusal said a nested repository's commit read the agent's blob. One
 * made during the session (the agent's clone) keeps its packs. */
bool hx_gitobj_swaps(const char *path, const struct timespec *since,
		     const char *own, size_t ownlen);

/* Whether path is such a git directory's packed-refs (not own's), and
 * whether file (the one to be renamed or linked there) names a replace
 * ref (or cannot be read): a line "<id> refs/replace/<id>" appended to
 * packed-refs is a replace ref as one in refs/replace. Git writes
 * packed-refs under packed-refs.lock and renames it; never in place. */
bool hx_gitobj_packed_refs(const char *path, const char *own, size_t ownlen);
bool hx_gitobj_names_replace(const char *file);

/* Whether path (as above) is a loose object's final name, or a pack's
 * .pack or .idx, in a git directory: there or not, whenever made. Git
 * never opens one to write: it writes a temporary file and links or
 * renames it there. */
bool hx_gitobj_is_name(const char *path);

#endif
