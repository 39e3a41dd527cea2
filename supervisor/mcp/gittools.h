/* harness-mcp's diff and restore: the worktree's checkpoints read and
 * checked out by git INSIDE the sandbox, as a code_run of a fixed argv
 * the front builds, never by the supervisor: unconfined, a checkout
 * would be walked through a symlink the agent swaps in, and a diff of
 * the working tree would read what the masks hide from the agent. The
 * agent's index, HEAD and branch are left alone (a private index in
 * $TMPDIR). Pure: the argv in, the result out. */
#ifndef HX_MCP_GITTOOLS_H
#define HX_MCP_GITTOOLS_H

#include <stddef.h>

struct json_t;

/* The code_run arguments (argv, cwd, bounds) that do the call of tool
 * ("diff" or "restore") with prepared arguments args, in session's
 * worktree at project. New reference, or NULL without memory. */
struct json_t *hx_gittool_run(const char *tool, struct json_t *args,
			      const char *session, const char *project);

/* The tool's result from code_run's: 0 with *result (new reference),
 * or -1 with *error (new reference: errno's name and a message). */
int hx_gittool_result(const char *tool, struct json_t *args, struct json_t *run,
		      struct json_t **result, struct json_t **error);

#endif
