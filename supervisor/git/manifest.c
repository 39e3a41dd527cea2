/* The manifest; see manifest.h. */
#define _GNU_SOURCE
#include "supervisor/git/manifest.h"

#include <errno.h>
#include <limits.h>
#include <git2.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "supervisor/fmt.h"
#include "supervisor/git/checkpoint.h"
#include "supervisor/git/gitutil.h"
#include "supervisor/git/provenance.h"
#include "supervisor/git/treelink.h"
#include "common/notice.h"
#include "supervisor/sha256.h"

#define ERR(...) snprintf(err, errlen, __VA_ARGS__)

static const char *status_word(git_delta_t s)
{
	switch (s) {
	case GIT_DELTA_ADDED:
		return "created";
	case GIT_DELTA_DELETED:
		return "deleted";
	default:
		return "modified";
	}
}

/* Whether blob id is past HX_CKPT_FILE_MAX (its header read, not its
 * content): then o says its size, and that it is not hashed. A tracked
 * file of the base (the user's) may be. */
static bool too_large(git_repository *repo, const git_oid *id, json_t *o)
{
	git_odb *odb = NULL;
	git_object_t type;
	size_t len = 0;
	bool big = false;

	if (!git_repository_odb(&odb, repo) &&
	    !git_odb_read_header(&len, &type, odb, id) &&
	    len > HX_CKPT_FILE_MAX) {
		big = true;
		json_object_set_new(o, "sha256", json_null());
		json_object_set_new(o, "size", json_integer((json_int_t)len));
		json_object_set_new(o, "too_large", json_true());
	}
	git_odb_free(odb);
	return big;
}

/* A link of the result that leads out of its tree (treelink.h): said
 * in its entry and on stderr, where the user merging it reads. */
static void link_out(git_repository *repo, git_tree *tree,
		     const git_diff_file *f, json_t *o, size_t *nout)
{
	char safe[PATH_MAX];

	if (f->mode != GIT_FILEMODE_LINK ||
	    !hx_tree_link_leads_out(repo, tree, f->path))
		return;
	json_object_set_new(o, "leads_out", json_true());
	if ((*nout)++ < 8)
		fprintf(stderr,
			"harness-exec: warning: the result's link %s leads "
			"out of its tree: where it is checked out it names "
			"a file outside it\n",
			hx_text_safe(safe, sizeof(safe), f->path));
}

/* What one_file needs of the build. */
struct mf {
	git_repository *repo;
	git_tree *tree;
	const struct hx_prov *prov;
	size_t nout;
};

static json_t *one_file(struct mf *m, const git_diff_delta *d)
{
	git_repository *repo = m->repo;
	const git_diff_file *f =
	    d->status == GIT_DELTA_DELETED ? &d->old_file : &d->new_file;
	json_t *o = json_object(), *w;
	git_blob *blob = NULL;
	const struct hx_prov *prov = m->prov;
	char hex[65], oid[GIT_OID_HEXSZ + 1];

	const char *path = hx_git_json_path(o, "path", f->path);

	json_object_set_new(o, "status", json_string(status_word(d->status)));
	git_oid_tostr(oid, sizeof(oid), &f->id);
	if (d->status != GIT_DELTA_DELETED) {
		json_object_set_new(o, "mode", json_integer(f->mode));
		if (f->mode == GIT_FILEMODE_COMMIT) {
			json_object_set_new(o, "commit", json_string(oid));
		} else if (too_large(repo, &f->id, o)) {
			/* not held in memory to be hashed (checkpoint.h) */
		} else if (!git_blob_lookup(&blob, repo, &f->id)) {
			hx_sha256_hex(git_blob_rawcontent(blob),
				      (size_t)git_blob_rawsize(blob), hex);
			json_object_set_new(o, "sha256", json_string(hex));
			json_object_set_new(
			    o, "size",
			    json_integer((json_int_t)git_blob_rawsize(blob)));
			git_blob_free(blob);
		}
		json_object_set_new(o, "blob", json_string(oid));
		link_out(repo, m->tree, f, o, &m->nout);
	} else {
		json_object_set_new(o, "sha256", json_null());
		json_object_set_new(o, "old_blob", json_string(oid));
	}
	/* the records' path, escaped alike */
	w = prov && path ? hx_prov_writer(prov, path) : NULL;
	json_object_set_new(o, "writer", w ? w : json_null());
	return o;
}

int hx_manifest_build(const char *commondir, const char *session,
		      const char *base_hex, const char *tree_hex,
		      const struct hx_prov *prov, char **out, char *err,
		      size_t errlen)
{
	struct mf mf = {.prov = prov};
	git_repository *repo = NULL;
	git_commit *base = NULL;
	git_tree *bt = NULL, *ft = NULL;
	git_diff *diff = NULL;
	git_oid id;
	json_t *m = NULL, *files;
	int e, r = 0;
	size_t n = 0, counts[3] = {0};

	*out = NULL;
	if (hx_git_init())
		return -EIO;
	e = git_repository_open_ext(&repo, commondir,
				    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (!e)
		e = git_oid_fromstr(&id, base_hex);
	if (!e)
		e = git_commit_lookup(&base, repo, &id);
	if (!e)
		e = git_commit_tree(&bt, base);
	if (!e)
		e = git_oid_fromstr(&id, tree_hex);
	if (!e)
		e = git_tree_lookup(&ft, repo, &id);
	if (!e)
		e = git_diff_tree_to_tree(&diff, repo, bt, ft, NULL);
	if (e) {
		ERR("manifest: %s", hx_git_err());
		r = hx_git_errno(e);
		goto out;
	}
	m = json_object();
	files = json_array();
	json_object_set_new(m, "version", json_integer(1));
	json_object_set_new(m, "session", json_string(session));
	json_object_set_new(m, "base", json_string(base_hex));
	json_object_set_new(m, "tree", json_string(tree_hex));
	mf.repo = repo;
	mf.tree = ft;
	n = git_diff_num_deltas(diff);
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		counts[d->status == GIT_DELTA_ADDED	? 0
		       : d->status == GIT_DELTA_DELETED ? 2
							: 1]++;
		json_array_append_new(files, one_file(&mf, d));
	}
	json_object_set_new(m, "created", json_integer((json_int_t)counts[0]));
	json_object_set_new(m, "modified", json_integer((json_int_t)counts[1]));
	json_object_set_new(m, "deleted", json_integer((json_int_t)counts[2]));
	json_object_set_new(m, "links_out", json_integer((json_int_t)mf.nout));
	json_object_set_new(m, "files", files);
	*out = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!*out) {
		r = -ENOMEM;
		goto out;
	}
	/* json_dumps ends without a newline; files read better with one. */
	{
		size_t len = strlen(*out);
		char *nl = realloc(*out, len + 2);

		if (nl) {
			nl[len] = '\n';
			nl[len + 1] = '\0';
			*out = nl;
		}
	}
out:
	json_decref(m);
	git_diff_free(diff);
	git_tree_free(ft);
	git_tree_free(bt);
	git_commit_free(base);
	git_repository_free(repo);
	return r;
}
