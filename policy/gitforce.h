/* The git configuration that forces every push to a remote, read the
 * same way from git -c (cmdview.c) and from a config file the agent
 * writes (supervisor/gitconf.c). */
#ifndef HX_POLICY_GITFORCE_H
#define HX_POLICY_GITFORCE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether remote.NAME.KEY = value (value to end; NULL: a bare key, which
 * git reads as true) makes every push to NAME forced or deleting: KEY
 * push with a refspec beginning '+' or ':' (after blanks and a quote),
 * KEY mirror unless the value is a whole false word (false, no, off, 0;
 * git reads "01", "0x1" or "1k" as numbers, true) before blanks, a
 * quote or a comment. KEY is klen bytes, any case. */
bool hx_git_remote_forces(const char *key, size_t klen, const char *value,
			  const char *end);

#endif
