/* What a person's answer on a script covers: the commands the script
 * was read to run (policy.h hx_policy_exec_runs), when its own process
 * tree runs them. sh -c 'cd sub && git push' allowed once: the git push
 * it then runs is not asked again; a git push anywhere else still is.
 * The entries live as long as the script's first process. */
#ifndef HX_ASKSCRIPT_H
#define HX_ASKSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct hx_policy;

#define HX_ASKSCRIPT_MAX 32

struct hx_askscript {
	pid_t root;		  /* 0: free */
	unsigned long long start; /* root's start time: pid reuse */
	char **argv;		  /* hx_strv_dup's */
	size_t argc;
	char *cwd;
	char how[48];
};

struct hx_askscripts {
	struct hx_askscript e[HX_ASKSCRIPT_MAX];
	size_t next; /* the oldest goes first when all are taken */
};

/* The script argv (argc words, run from cwd; NULL: root's now) allowed for
 * process root, how: what allowed it ("q12", a grant's id). Copies. */
void hx_askscripts_add(struct hx_askscripts *s, pid_t root,
		       const char *const *argv, size_t argc, const char *cwd,
		       const char *how);
/* Whether process pid's exec of argv from cwd, asked by rule, is one of
 * the commands an allowed script of its ancestors (or its own, before
 * its exec) showed, asked by that rule (policy.h hx_policy_exec_runs);
 * how gets "script " and what allowed that. */
bool hx_askscripts_cover(struct hx_askscripts *s, const struct hx_policy *p,
			 pid_t pid, const char *rule, const char *cwd,
			 const char *const *argv, size_t argc, char *how,
			 size_t hlen);
void hx_askscripts_free(struct hx_askscripts *s);

#endif
