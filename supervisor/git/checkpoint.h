/* Checkpoints: commits of a working tree's full state (tracked, new and
 * deleted files; ignored ones left out) on
 * refs/harness/<session>/checkpoints/<n>, each the child of the one
 * before (checkpoint 0 the child of the base commit).
 *
 * They are built with a private index whose stat cache lives across
 * checkpoints, so a checkpoint costs one lstat per file plus the hashing
 * of what changed; the tree cache keeps unchanged directories from being
 * rewritten. The user's index, HEAD, branches and stash are never read
 * for writing, and no hook runs (libgit2 has none).
 *
 * Lifecycle: hx_ckpt_open -> hx_ckpt_take ... -> hx_ckpt_free. */
#ifndef HX_CHECKPOINT_H
#define HX_CHECKPOINT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct hx_ckpt;

/* The largest file a checkpoint takes (and the manifest hashes): the
 * working tree is the agent's, and libgit2 in harness-exec (outside the
 * sandbox, no limit) hashes, compresses and, with an attribute's
 * filter, holds in memory each file it takes; the manifest held each
 * blob whole. A sparse file costs the agent nothing: one of 1 GiB made
 * harness-exec's resident set 1 GiB (seventeenth attack review). A
 * larger file is left out of the checkpoint (a tracked one keeps its
 * content of before), and the record names it. */
#define HX_CKPT_FILE_MAX (100ull << 20)
#define HX_CKPT_NAMED	 4 /* files left out named in the info */

struct hx_ckpt_big {
	char path[256];
	unsigned long long size;
};

struct hx_ckpt_info {
	unsigned n;   /* the checkpoint's number (the last one if !created) */
	bool created; /* false: the tree had not changed, no commit */
	char commit[41]; /* hex ids */
	char tree[41];
	size_t changed; /* paths changed against the previous checkpoint */
	double ms;	/* time taken */
	/* files past HX_CKPT_FILE_MAX left out: how many, the first named */
	size_t ntoo_large;
	struct hx_ckpt_big too_large[HX_CKPT_NAMED];
	bool too_large_news; /* not the files the last checkpoint left out */
};

/* Opens the engine for the working tree wt of the repository whose
 * common git dir is commondir. index_path is the private index file (in
 * a directory of its own, where nothing else is: written at each
 * checkpoint); seed_index, when not NULL, is an index whose stat data to
 * start from (the worktree's own, copied, never written). base_hex: the
 * commit the chain starts from. confined: each walk of wt is made on a
 * thread confined to it, the git dir and the index's directory
 * (confine.h; a checkpoint fails rather than walk unconfined): needed
 * once the agent may make symlinks in wt. Returns 0 or -errno with a
 * message in err. */
int hx_ckpt_open(const char *commondir, const char *wt, const char *session,
		 const char *index_path, const char *seed_index,
		 const char *base_hex, bool confined, struct hx_ckpt **out,
		 char *err, size_t errlen);

/* Snapshots the working tree. When its tree equals the last
 * checkpoint's and force is false, nothing is written (info->created
 * false). Otherwise commits it with subject and body (trailers) and
 * creates the next ref. Returns 0 or -errno with a message in err. */
int hx_ckpt_take(struct hx_ckpt *c, const char *subject, const char *body,
		 bool force, struct hx_ckpt_info *info, char *err,
		 size_t errlen);

/* The files info names as left out: [{"path", "size"}]. */
json_t *hx_ckpt_too_large_json(const struct hx_ckpt_info *info);

/* The last checkpoint taken (false when none). */
bool hx_ckpt_last(const struct hx_ckpt *c, struct hx_ckpt_info *info);

void hx_ckpt_free(struct hx_ckpt *c);

/* Forgets what the private index knows of the tree (its entries' ids
 * and stat data, its tree cache): the next checkpoint hashes every file
 * and writes every object it lacks again (objfix.h). */
void hx_ckpt_forget(struct hx_ckpt *c);

/* Checks checkpoint n of session out into wt (forced: files not in it
 * are removed, ignored files are kept), without moving any ref or
 * touching the repository's own index. Returns 0 or -errno (-ENOENT: no
 * such checkpoint) with a message in err. */
int hx_ckpt_restore(const char *commondir, const char *wt, const char *session,
		    unsigned n, const char *commit, char *err, size_t errlen);

#endif
