/* The entry points of the git plugin, libharness-git.so: the worktree
 * layer (worktree.h), the worktree subcommands (wtcli.h) and the check
 * for changes the index hides (hidden.h), with
 * libgit2 behind them. harness-exec loads it only when a session asks
 * for a worktree or a subcommand runs (gitplugin.c): libgit2 and its
 * dependencies cost every start about 3 ms of loading otherwise. */
#ifndef HX_GITAPI_H
#define HX_GITAPI_H

#include <stdio.h>

#include "supervisor/git/hidden.h"
#include "supervisor/git/objfix.h"
#include "supervisor/git/worktree.h"

#define HX_GIT_API_VERSION 6

struct hx_git_api {
	unsigned version; /* HX_GIT_API_VERSION: plugin and binary agree */
	int (*worktree_open)(const struct hx_worktree_opts *o,
			     struct hx_worktree **out, char *err,
			     size_t errlen);
	const char *(*worktree_path)(const struct hx_worktree *w);
	const char *(*worktree_cwd)(const struct hx_worktree *w);
	void (*worktree_policy_vars)(const struct hx_worktree *w,
				     struct hx_policy_vars *v);
	int (*worktree_start)(struct hx_worktree *w, struct hx_pipeline *pl,
			      struct hx_server *srv);
	void (*worktree_finish)(struct hx_worktree *w);
	void (*worktree_end_fields)(const struct hx_worktree *w,
				    struct json_t *rec);
	int (*worktree_result)(struct hx_worktree *w, struct hx_audit *audit,
			       char *const *cmd, int ncmd, int code);
	void (*worktree_free)(struct hx_worktree *w);
	void (*worktree_control)(struct hx_worktree *w, const char *request,
				 char *reply, size_t size);
	int (*wtcli)(int argc, char *const *argv, FILE *out, FILE *err);
	int (*hidden_changes)(const char *dir, const struct timespec *since,
			      const char *const *ignores, size_t nignores,
			      struct json_t **out, size_t *unchecked, char *err,
			      size_t errlen);
	int (*contains)(const char *dir, const char *was, const char *now);
	size_t (*objfix_sweep)(const char *objects,
			       const struct timespec *since);
};

/* The plugin's one exported symbol. */
extern const struct hx_git_api hx_git_api;

#endif
