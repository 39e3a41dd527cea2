/* New files the index's untracked cache hides from git status (the
 * eighteenth attack review's open end). git trusts a directory's cached
 * list of untracked files while the directory's stat data matches the
 * cache's (always, under core.fsmonitor), and the cache is in the index,
 * which the agent writes: one written with the directory's stat as it
 * is now and the new file left out hides that file, and a directory
 * left out of the cache's tree hides every new file beneath it. */
#ifndef HX_GIT_UNTRACKED_H
#define HX_GIT_UNTRACKED_H

#include <git2.h>
#include <jansson.h>

/* The files repo's untracked cache (its index file, idx read) leaves
 * out, appended to arr as {"path": prefix + path, "hidden_by":
 * "untracked-cache", "now": "untracked"}; wfd: the work tree, entries
 * opened beneath it; a directory more than 32 levels beneath one the
 * cache leaves out is named itself. At most HX_UNTR_MAX_REPORTS: more,
 * an index past 256 MiB, or a cache past this process's memory, adds
 * one to *unchecked.
 * 0 or -errno. */
int hx_git_untracked_hidden(git_repository *repo, git_index *idx, int wfd,
			    const char *prefix, json_t *arr, size_t *unchecked);

#define HX_UNTR_MAX_REPORTS 64

#endif
