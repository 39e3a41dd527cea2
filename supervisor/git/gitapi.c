/* The git plugin's table; see gitapi.h. */
#include "supervisor/git/gitapi.h"

#include "supervisor/git/wtcli.h"

const struct hx_git_api hx_git_api = {
    .version = HX_GIT_API_VERSION,
    .worktree_open = hx_worktree_open,
    .worktree_path = hx_worktree_path,
    .worktree_cwd = hx_worktree_cwd,
    .worktree_policy_vars = hx_worktree_policy_vars,
    .worktree_start = hx_worktree_start,
    .worktree_finish = hx_worktree_finish,
    .worktree_end_fields = hx_worktree_end_fields,
    .worktree_result = hx_worktree_result,
    .worktree_free = hx_worktree_free,
    .worktree_control = hx_worktree_control,
    .wtcli = hx_wtcli,
    .hidden_changes = hx_git_hidden_changes,
    .contains = hx_git_contains,
    .objfix_sweep = hx_objfix_sweep,
};
