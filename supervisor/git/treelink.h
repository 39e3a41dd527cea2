/* Where a tree's symbolic links lead once it is checked out: a
 * worktree's result is merged into the checkout it was made from, four
 * levels above the worktree (.git/harness/worktrees/ID), so a relative
 * link that climbs out of the tree names one file where the agent made
 * it and another in the user's checkout. The pipeline refuses such a
 * link when it is made (harness:worktree-link); one made leading inside
 * and left leading out (its directory moved up, a link put on its way)
 * is found here, in the result, and named in the manifest. */
#ifndef HX_GIT_TREELINK_H
#define HX_GIT_TREELINK_H

#include <git2.h>
#include <stdbool.h>

/* Whether the link at path (a tree path) of tree, followed as a
 * checkout's file system would (the tree's own links on its way
 * followed, at most 40), climbs above the tree's root by "..". An
 * absolute link, or a name the tree lacks, ends the walk (false). */
bool hx_tree_link_leads_out(git_repository *repo, git_tree *tree,
			    const char *path);

#endif
