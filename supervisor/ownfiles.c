/* The harness's own programs (ownfiles.h). In audit mode the policy
 * holds no write, and the programs that read and judge a session's log
 * are files like any: an agent rewrote harness-audit beside harness-exec
 * into a script that said "ok" for every log, and appended to the shim
 * that every later session preloads (twentieth attack review, part b).
 * In enforce mode the same held for a harness built or installed in a
 * write root (the project, ~/.cache). Their names are refused for
 * writing, renaming and linking, as the log's are; the directories
 * above them cannot be moved (a rename's check of what it moves). */
#include "supervisor/ownfiles.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/glob.h"
#include "supervisor/shimpath.h"

static const char *const programs[] = {
    "harness-exec",	  "harness-audit", "harness-policy",	"harness-mcp",
    "harness-mcp-worker", HX_SHIM_NAME,	   "libharness-git.so",
};

#define OWN_MAX (1 + sizeof(programs) / sizeof(*programs) + 1)

static char own[OWN_MAX][2 * PATH_MAX + 8];
static const char *globs[OWN_MAX + 1];
static size_t nglobs;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void add(const char *path)
{
	if (nglobs >= sizeof(globs) / sizeof(*globs) || path[0] != '/' ||
	    hx_glob_escape(path, own[nglobs - 1], sizeof(own[0])))
		return;
	for (size_t i = 1; i < nglobs; i++)
		if (!strcmp(globs[i], own[nglobs - 1]))
			return;
	globs[nglobs] = own[nglobs - 1];
	nglobs++;
}

static void find(void)
{
	char self[PATH_MAX], path[PATH_MAX + 64], shim[PATH_MAX], *slash;
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);

	/* The cgroup file systems: the session's cgroup holds its process
	 * count and, through cgroup.kill, its end; a process that wrote
	 * itself into another cgroup's cgroup.procs (as root, or under the
	 * user's delegated subtree) left both. The agent cannot mount
	 * another view of them. */
	globs[nglobs++] = "/sys/fs/cgroup/**";
	if (k > 0) {
		self[k] = '\0';
		if ((slash = strrchr(self, '/')) && slash != self) {
			*slash = '\0';
			for (size_t i = 0;
			     i < sizeof(programs) / sizeof(*programs); i++) {
				snprintf(path, sizeof(path), "%s/%s", self,
					 programs[i]);
				add(path);
			}
		}
	}
	if (!hx_shim_path(shim))
		add(shim);
}

const char *const *hx_own_write_globs(size_t *n)
{
	pthread_once(&once, find);
	*n = nglobs;
	return globs;
}
