/* Changes to a file's content, made in memory: a unified diff's hunks
 * or search/replace edits, all applied or none. Pure: no system call,
 * so table-driven unit tests cover every rule. */
#ifndef HX_MW_PATCH_H
#define HX_MW_PATCH_H

#include <stdbool.h>
#include <stddef.h>

/* Why a patch did not apply: the hunk or edit (1-based), the file's
 * line (1-based, 0 when none applies) and a sentence for the agent. */
struct hx_mw_patch_fail {
	unsigned hunk;
	size_t line;
	char why[768];
};

/* Applies diff (dn bytes: a unified diff of one file; lines before the
 * first "@@" such as ---/+++ headers are ignored) to the n bytes at src.
 * Each hunk's old lines (context and removed) must match exactly (no
 * fuzz); a hunk is placed at its stated line shifted by where the
 * previous hunk was found, else at the nearest line where it matches
 * (earlier first on a tie), never before the end of the previous hunk,
 * as GNU patch does with fuzz 0. Returns 0 with *out (malloc'd, *outn
 * bytes, at most max, and a NUL after them) and *hunks; -EINVAL with *f filled
 * when the patch is malformed or a hunk does not apply; -EFBIG past max;
 * -ENOMEM. */
int hx_mw_patch_diff(const char *src, size_t n, const char *diff, size_t dn,
		     size_t max, char **out, size_t *outn, unsigned *hunks,
		     struct hx_mw_patch_fail *f);

struct hx_mw_patch_edit {
	const char *search, *replace;
	size_t slen, rlen;
	bool all; /* replace every occurrence, not just the only one */
};

/* Applies ne edits in order, each to the result of the ones before: the
 * search text must occur exactly once (or, with all, at least once).
 * Returns as hx_mw_patch_diff does (f->hunk: the edit). */
int hx_mw_patch_edits(const char *src, size_t n,
		      const struct hx_mw_patch_edit *e, size_t ne, size_t max,
		      char **out, size_t *outn, struct hx_mw_patch_fail *f);

#endif
