/* The refs a worktree session's end writes; see wtrefs.h. */
#include "supervisor/git/wtrefs.h"

#include "supervisor/git/gitutil.h"
#include "supervisor/say.h"

int hx_wt_add_note(git_repository *repo, const git_signature *sig,
		   const git_oid *target, const char *text)
{
	const char *ref = "refs/notes/harness";
	git_reference *r = NULL, *nr = NULL;
	git_commit *parent = NULL;
	git_oid nc, blob, pid;
	int e;

	for (int i = 0;; i++) {
		bool have = false;

		e = git_reference_lookup(&r, repo, ref);
		if (!e && git_reference_type(r) != GIT_REFERENCE_DIRECT) {
			git_reference_free(r); /* a symbolic ref: no parent */
			r = NULL;
			e = GIT_EINVALID;
		}
		if (!e) {
			have = true;
			pid = *git_reference_target(r);
			git_reference_free(r);
			r = NULL;
			e = git_commit_lookup(&parent, repo, &pid);
		} else if (e == GIT_ENOTFOUND) {
			e = 0;
		}
		if (!e)
			e = git_note_commit_create(&nc, &blob, repo, parent,
						   sig, sig, target, text, 1);
		git_commit_free(parent);
		parent = NULL;
		/* Compare-and-swap: a concurrent session's note is never
		 * overwritten, we retry on top of it. */
		if (!e)
			e = git_reference_create_matching(
			    &nr, repo, ref, &nc, have, have ? &pid : NULL,
			    "harness: manifest");
		git_reference_free(nr);
		nr = NULL;
		if (!(hx_git_retryable(e) || e == GIT_EEXISTS) ||
		    !hx_git_backoff(i))
			break;
	}
	return e;
}

int hx_wt_branch_tip(git_repository *repo, const char *branch,
		     const char *base_hex, git_oid *tip, bool *cas)
{
	git_reference *br = NULL;
	int e = git_reference_lookup(&br, repo, branch);

	*cas = !e && git_reference_type(br) == GIT_REFERENCE_DIRECT;
	if (*cas)
		*tip = *git_reference_target(br);
	git_reference_free(br);
	if (*cas || (e && e != GIT_ENOTFOUND))
		return e;
	hx_say("warning: %s is %s: the result is committed on the base", branch,
	       e ? "gone" : "a symbolic ref, not the session's own");
	return git_oid_fromstr(tip, base_hex);
}
