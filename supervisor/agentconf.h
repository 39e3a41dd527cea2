/* An agent's own configuration that names the programs it starts
 * (class 4): Claude Code's ~/.claude.json holds its user-scope MCP
 * servers ("mcpServers") and each project's ("projects".P."mcpServers"),
 * commands the user's next claude starts outside the harness. Claude
 * Code rewrites the whole file at every start (a temporary file renamed
 * over it), so the claude profile allows it; what may land is a file
 * whose servers are those already there. Like a git configuration
 * (gitconf.h): written by a rename only, its bytes checked and
 * installed as a copy of what was checked (hx_un_git_copy).
 *
 * Pure but for reading files; jansson parses. */
#ifndef HX_AGENTCONF_H
#define HX_AGENTCONF_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The most a checked configuration may hold (a larger one is refused);
 * Claude Code's keeps each project's history and grows. */
#define HX_AGENTCONF_MAX (16u << 20)

/* Whether buf (len bytes) is a JSON object (no duplicate keys) whose
 * MCP servers, top-level and per project, are each one of cur's, the
 * same (clen bytes; NULL or not JSON: none): a server removed is fine,
 * one added or changed is not. */
bool hx_agentconf_same_servers(const char *buf, size_t len, const char *cur,
			       size_t clen);

/* Reads dirfd/name (not followed, a regular file, under the bound) into
 * *buf (malloc'ed, the caller frees), checked against what dirfd2/name2
 * holds now (absent: no servers). Returns its length, or -errno
 * (-EACCES: refused, or changed servers). */
ssize_t hx_agentconf_read_checked(int dirfd, const char *name, int dirfd2,
				  const char *name2, char **buf,
				  struct stat *st);

/* HOME's .claude.json, HOME resolved (a static buffer), or NULL. */
const char *hx_agentconf_path(const char *home);

/* Whether a rename of src onto dst (absolute paths) would land servers
 * other than dst's: true refuses it. */
bool hx_agentconf_changes_servers(const char *src, const char *dst);

#endif
