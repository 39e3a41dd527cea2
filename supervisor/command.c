/* The wrapped command: PATH lookup and profile detection. */
#define _GNU_SOURCE
#include "supervisor/command.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/policy.h"

bool hx_command_find(const char *cmd, const char *cwd, char *cand, char *real)
{
	const char *path = getenv("PATH"), *p, *e;
	struct stat st;

	if (strchr(cmd, '/')) {
		if ((size_t)snprintf(cand, PATH_MAX, "%s%s%s",
				     cmd[0] == '/' ? "" : cwd,
				     cmd[0] == '/' ? "" : "/", cmd) >= PATH_MAX)
			return false;
		return !!realpath(cand, real);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ':');
		if ((size_t)snprintf(cand, PATH_MAX, "%.*s/%s", (int)(e - p),
				     e == p ? "." : p, cmd) >= PATH_MAX)
			continue;
		if (!stat(cand, &st) && S_ISREG(st.st_mode) &&
		    !access(cand, X_OK))
			return !!realpath(cand, real);
	}
	return false;
}

/* An interpreter whose first non-option argument is the program. */
static bool is_interpreter(const char *real)
{
	static const char *const names[] = {"node", "nodejs", "python*",
					    "bun",  "deno",   NULL};
	const char *base = strrchr(real, '/');

	base = base ? base + 1 : real;
	for (size_t i = 0; names[i]; i++)
		if (!fnmatch(names[i], base, 0))
			return true;
	return false;
}

const char *hx_command_profile(char *const *argv, int argc, const char *cwd)
{
	char cand[PATH_MAX], exe[PATH_MAX], script[PATH_MAX];
	const char *paths[2] = {exe, NULL};
	size_t n = 1;

	if (argc < 1 || !hx_command_find(argv[0], cwd, cand, exe))
		return NULL;
	if (is_interpreter(exe))
		for (int i = 1; i < argc; i++) {
			if (argv[i][0] == '-')
				continue; /* node --no-warnings cli.js */
			if (snprintf(cand, sizeof(cand), "%s%s%s",
				     argv[i][0] == '/' ? "" : cwd,
				     argv[i][0] == '/' ? "" : "/",
				     argv[i]) < (int)sizeof(cand) &&
			    realpath(cand, script))
				paths[n++] = script;
			break;
		}
	return hx_profile_detect(getenv("HOME"), paths, n);
}
