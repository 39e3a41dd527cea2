/* Internals shared by supervisor/landlock.c (syscalls, lifecycle,
 * describe) and supervisor/landlock_derive.c (policy -> rules). Not a
 * public API. */
#ifndef HX_LANDLOCK_INT_H
#define HX_LANDLOCK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervisor/kernel/landlock_uapi.h"

struct hx_policy;
struct hx_ipool;

struct hx_landlock {
	int fd;		     /* the ruleset; -1 when nothing is restricted */
	bool released;	     /* hx_landlock_release closed fd */
	int abi;	     /* the kernel's */
	uint64_t fs_handled; /* the ruleset's handled_access_fs */
	char *text;	     /* hx_landlock_describe's lines, malloc'd */
	size_t len;
	/* Unnamed files granted for reading, one pool per carved directory
	 * the agent may make files in (ipool.h); NULL when none. */
	struct hx_ipool *pool;
	/* Read denies inside write roots, as they exist at start: for the
	 * masks (masks.h), since the write root grants their tree. */
	char **masked;
	size_t nmasked;
	/* The files and directories denied for reading outside them,
	 * which the ruleset holds, as they exist at start
	 * (hx_landlock_held). */
	char **held;
	size_t nheld;
	char **absent; /* hx_landlock_absent: files, then directories */
	size_t nabsent, nabsent_files;
	char **name_dirs; /* hx_landlock_name_dirs */
	size_t nname_dirs;
	char **deny_paths; /* hx_landlock_deny_paths */
	size_t ndeny_paths;
};

/* How many pooled files each carved directory gets: Claude Code makes
 * one per rewrite of ~/.claude.json, a few a session. */
#define HX_LL_POOL_FILES 32

/* The newest ABI whose rights this file knows; newer kernels are used
 * at this level. */
#define HX_LL_ABI_KNOWN 6

/* The filesystem rights the kernel's ABI handles. */
uint64_t hx_ll_fs_handled(int abi);

/* Thin syscall wrappers: a descriptor or 0, else -errno. */
int hx_ll_create_ruleset(const struct hx_ll_ruleset_attr *attr);
int hx_ll_add_path(int ruleset, int fd, uint64_t access);
int hx_ll_add_port(int ruleset, uint64_t port, uint64_t access);

/* Fills ll->fd (a new ruleset) and ll->text from the policy. 0 or
 * -errno with a message in err. */
int hx_ll_derive(const struct hx_policy *p, struct hx_landlock *ll,
		 bool describe, char *err, size_t errlen);

#endif
