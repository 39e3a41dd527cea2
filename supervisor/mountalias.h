/* Second mounts of one directory (issue 10): a bind mount made before
 * the session ("mount --bind $HOME /mnt/b", by root) reaches what a rule
 * denies ($HOME/.ssh) under a path no rule names (/mnt/b/.ssh). Found
 * from /proc/self/mountinfo at start: two mounts of one file system
 * (device) whose roots nest make the first's path below the inner root
 * reachable under the second's mount point. The policy rebases its deny
 * and ask rules through each such pair (hx_policy_vars.alias_from/to),
 * so every layer derived from the rules holds there too. */
#ifndef HX_MOUNTALIAS_H
#define HX_MOUNTALIAS_H

#include <limits.h>
#include <stddef.h>

#define HX_MOUNTALIAS_MAX 64

struct hx_mountalias {
	char from[HX_MOUNTALIAS_MAX][PATH_MAX]; /* a path, literal */
	char to[HX_MOUNTALIAS_MAX][PATH_MAX];	/* its other name, escaped */
	const char *fromp[HX_MOUNTALIAS_MAX], *top[HX_MOUNTALIAS_MAX];
	size_t n;
	size_t nmounts; /* the first ones: the mount table's pairs */
};

/* Fills m from the mount table text (mountinfo's format; NULL: reads
 * /proc/self/mountinfo). Pairs past HX_MOUNTALIAS_MAX are dropped. */
void hx_mountalias_find(const char *mountinfo, struct hx_mountalias *m);

/* mountinfo's octal escapes (\040 for a space) undone in place. */
void hx_mountinfo_unescape(char *s);

/* A pair from $HOME (home, as given) to the account's own home directory
 * (its passwd entry's, resolved) when that is another directory: the
 * rules written for $HOME hold there too. */
void hx_mountalias_home(struct hx_mountalias *m, const char *home);

struct hx_policy_vars;
/* Points v's aliases at m's pairs (borrowed). */
void hx_mountalias_vars(const struct hx_mountalias *m,
			struct hx_policy_vars *v);

#endif
