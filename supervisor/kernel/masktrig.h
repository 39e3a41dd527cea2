/* The masks' walk's shortcut (masks.c): of each pattern that denies a
 * read, its last name (not "**") and the literal directories before its
 * first wildcard. An entry that no trigger matches, by name and by where
 * it is, is readable without a full decision of the policy; the walk
 * looks at up to 200,000 entries, and a decision of each took most of
 * its time (a $HOME of 250,000 entries: 430 ms).
 *
 * Literal names are found by a binary search, so that the default's 250
 * of them cost an entry a few comparisons; the few names with wildcards
 * are matched, each only in the directories beneath its own. */
#ifndef HX_KERNEL_MASKTRIG_H
#define HX_KERNEL_MASKTRIG_H

#include <stdbool.h>
#include <stddef.h>

struct hx_policy;
struct hx_masktrig;

/* At most this many triggers whose name has a wildcard: each directory
 * walked lists those that apply there on the walk's stack. */
#define HX_MASKTRIG_WILD_MAX 256

/* Builds the triggers of p's read rules. *out NULL (and 0): no shortcut,
 * every entry is to be decided (file_read not allowed by default, a
 * pattern whose last name is "**", more wildcard names than the max).
 * Returns 0 or -ENOMEM. */
int hx_masktrig_build(const struct hx_policy *p, struct hx_masktrig **out);

/* The wildcard triggers that apply in the directory dir (len bytes, its
 * path followed by a '/' at dir[len]) into act (HX_MASKTRIG_WILD_MAX);
 * how many. t NULL: 0. */
size_t hx_masktrig_enter(const struct hx_masktrig *t, const char *dir,
			 size_t len, unsigned short *act);

/* Whether the entry at path (its directory's len bytes, then '/' and
 * its name) may be denied: a trigger matches it. t NULL: true. */
bool hx_masktrig_may_deny(const struct hx_masktrig *t,
			  const unsigned short *act, size_t nact,
			  const char *path, size_t len);

void hx_masktrig_free(struct hx_masktrig *t);

#endif
