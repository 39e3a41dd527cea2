/* harness-mcp's tools: their definitions (tools.json, embedded: what
 * tools/list returns), where each runs, its quota, and the check of a
 * call's arguments before the policy is asked: the schema, then what a
 * schema cannot say (a NUL byte inside a path, a relative path that
 * climbs out of the project, exactly one of command/argv/code), then
 * the paths made absolute for the worker. */
#ifndef HX_MCP_TOOLS_H
#define HX_MCP_TOOLS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/types.h"

struct json_t;

enum hx_tool_where {
	HX_TOOL_HERE, /* answered by the supervisor (session_info) */
	HX_TOOL_FILE, /* the worker, one at a time */
	HX_TOOL_RUN,  /* the worker, a process tree of its own */
	HX_TOOL_ASK,  /* the client's user (elicitation/create) */
	/* the worktree's checkpoint, by the supervisor, in the file calls'
	 * order (what a file call before it wrote is in it) */
	HX_TOOL_CKPT,
	/* git in the sandbox, as a code_run the front writes (gittools.h) */
	HX_TOOL_GIT,
};

struct hx_tool {
	const char *name;
	enum hx_tool_where where;
	enum hx_category category; /* of its record */
	enum hx_op op;		   /* what the policy is asked */
	/* default quota: calls a minute, calls at once */
	unsigned per_minute, concurrent;
	struct json_t *def; /* its tools/list entry (tools.json) */
};

/* Parses the embedded definitions once. 0, or -EINVAL (a build whose
 * tools.json does not parse or uses an unchecked schema keyword: the
 * unit test catches it first). */
int hx_tools_load(void);
/* The definitions as tools/list's "tools" (borrowed). */
struct json_t *hx_tools_list(void);
/* The tool named name, or NULL. */
const struct hx_tool *hx_tool_find(const char *name);
/* All of them, n into *n. */
const struct hx_tool *hx_tools_all(size_t *n);

/* A call's arguments checked and made ready for the worker: args is
 * the client's (borrowed); *out a new object with every path absolute
 * and normalized (relative ones against project) and code_run's cwd
 * set. false with err (for the client: which argument, and why). */
bool hx_tool_prepare(const struct hx_tool *t, struct json_t *args,
		     const char *project, struct json_t **out, char *err,
		     size_t errlen);

/* The path the policy is asked about for a prepared call (NULL: none:
 * code_run, session_info). */
const char *hx_tool_path(const struct hx_tool *t, struct json_t *prepared);

/* code_run's command as an argv (sh -c TEXT, the argv, python3 -c
 * CODE, node -e CODE) into v (at most max words, borrowed from
 * prepared); returns the count, 0 when there is none. */
size_t hx_tool_run_argv(struct json_t *prepared, const char **v, size_t max);

#endif
