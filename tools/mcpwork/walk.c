/* Directory walks and list_dir; see walk.h. */
#define _GNU_SOURCE
#include "tools/mcpwork/walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/mcpwork/args.h"
#include "tools/mcpwork/bounds.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The sorted names of the directory d; -ENOMEM, or its readdir error. */
static int names_of(struct hx_mw_walk *w, DIR *d, char ***out, size_t *nout)
{
	char **v = NULL, **nv;
	size_t n = 0, cap = 0;
	struct dirent *de;

	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_name[0] == '.' && !w->hidden)
			continue;
		if (n == HX_MW_DIR_NAMES_MAX) {
			w->capped = true;
			break;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			nv = reallocarray(v, cap, sizeof(*v));
			if (!nv)
				goto nomem;
			v = nv;
		}
		if (!(v[n] = strdup(de->d_name)))
			goto nomem;
		n++;
	}
	if (errno) {
		int e = errno;

		free_names(v, n);
		return -e;
	}
	if (n)
		qsort(v, n, sizeof(*v), by_name);
	*out = v;
	*nout = n;
	return 0;
nomem:
	free_names(v, n);
	return -ENOMEM;
}

static char type_of(mode_t m)
{
	return S_ISREG(m) ? 'f' : S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : 'o';
}

/* The directory open at fd (taken) whose path is rel[0..rlen). */
static int walk_dir(struct hx_mw_walk *w, int fd, char *rel, size_t rlen,
		    unsigned level)
{
	DIR *d = fdopendir(fd);
	char **names = NULL;
	size_t n = 0, i, len;
	int rc = 0, cfd;

	if (!d) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = names_of(w, d, &names, &n);
	if (rc < 0)
		goto out;
	for (i = 0; i < n && !rc; i++) {
		struct hx_mw_walk_entry e = {.name = names[i], .dirfd = fd};
		struct stat st;

		len = strlen(names[i]);
		if (rlen + 1 + len >= PATH_MAX)
			continue; /* no path names it */
		if (rlen)
			rel[rlen] = '/';
		memcpy(rel + rlen + !!rlen, names[i], len + 1);
		e.rel = rel;
		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			w->error(w->ctx, rel, errno);
			continue;
		}
		e.type = type_of(st.st_mode);
		e.size = (uint64_t)st.st_size;
		rc = w->entry(w->ctx, &e);
		if (rc || e.type != 'd' || level + 1 >= w->depth)
			continue;
		cfd = openat(fd, names[i],
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0) {
			w->error(w->ctx, rel, errno);
			continue;
		}
		rc = walk_dir(w, cfd, rel, rlen + !!rlen + len, level + 1);
		if (rc < 0) {
			/* A subdirectory that opened but would not list. */
			w->error(w->ctx, rel, -rc);
			rc = 0;
		}
	}
	rel[rlen] = 0;
out:
	free_names(names, n);
	closedir(d);
	return rc;
}

int hx_mw_walk_run(const char *root, struct hx_mw_walk *w, json_t **res)
{
	char *rel = malloc(PATH_MAX);
	int fd, rc, e;

	if (!rel)
		return hx_mw_args_error(res, ENOMEM, "out of memory");
	rel[0] = 0;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		free(rel);
		return hx_mw_args_error(res, e, "open %s: %s", root,
					strerror(e));
	}
	rc = walk_dir(w, fd, rel, 0, 0);
	free(rel);
	if (rc < 0)
		return hx_mw_args_error(res, -rc, "read %s: %s", root,
					strerror(-rc));
	return rc;
}

struct listing {
	json_t *entries;
	uint64_t max;
	bool truncated;
};

static const char *type_name(char t)
{
	return t == 'f'	  ? "file"
	       : t == 'd' ? "dir"
	       : t == 'l' ? "symlink"
			  : "other";
}

static int list_entry(void *ctx, const struct hx_mw_walk_entry *e)
{
	struct listing *l = ctx;
	json_t *o;

	if (json_array_size(l->entries) >= l->max) {
		l->truncated = true;
		return 1;
	}
	o = json_pack("{s:o, s:s, s:I}", "path",
		      hx_mw_args_string_lossy(e->rel, strlen(e->rel), NULL),
		      "type", type_name(e->type), "size", (json_int_t)e->size);
	if (!o || json_array_append_new(l->entries, o) < 0) {
		l->truncated = true;
		return 1;
	}
	return 0;
}

static void list_error(void *ctx, const char *rel, int err)
{
	struct listing *l = ctx;
	size_t n = json_array_size(l->entries);
	json_t *last = n ? json_array_get(l->entries, n - 1) : NULL;
	json_t *p = last ? json_object_get(last, "path") : NULL;
	json_t *o;

	/* A directory that would not open was listed just before. */
	if (p && !strcmp(json_string_value(p), rel)) {
		json_object_set_new(last, "error",
				    json_string(hx_mw_args_errname(err)));
		return;
	}
	if (n >= l->max) {
		l->truncated = true;
		return;
	}
	o = json_pack("{s:o, s:s, s:i, s:s}", "path",
		      hx_mw_args_string_lossy(rel, strlen(rel), NULL), "type",
		      "other", "size", 0, "error", hx_mw_args_errname(err));
	if (o)
		json_array_append_new(l->entries, o);
}

int hx_mw_walk_list_dir(json_t *args, json_t **res)
{
	static const char *const keys[] = {"path", "depth", "include_hidden",
					   "max_entries", NULL};
	struct listing l = {0};
	struct hx_mw_walk w = {
	    .entry = list_entry, .error = list_error, .ctx = &l};
	const char *path;
	uint64_t depth;
	int rc;

	if ((rc = hx_mw_args_only(args, keys, res)) < 0 ||
	    (rc = hx_mw_args_path(args, "path", &path, res)) < 0 ||
	    (rc = hx_mw_args_uint(args, "depth", 1, 1, HX_MW_DEPTH_MAX, &depth,
				  NULL, res)) < 0 ||
	    (rc = hx_mw_args_bool(args, "include_hidden", false, &w.hidden,
				  res)) < 0 ||
	    (rc = hx_mw_args_uint(args, "max_entries", HX_MW_ENTRIES_DEFAULT, 1,
				  HX_MW_ENTRIES_MAX, &l.max, NULL, res)) < 0)
		return rc;
	w.depth = (unsigned)depth;
	l.entries = json_array();
	if (!l.entries)
		return hx_mw_args_error(res, ENOMEM, "out of memory");
	rc = hx_mw_walk_run(path, &w, res);
	if (rc < 0) {
		json_decref(l.entries);
		return rc;
	}
	*res = json_pack("{s:s, s:o, s:b}", "path", path, "entries", l.entries,
			 "truncated", l.truncated || w.capped);
	if (!*res)
		return hx_mw_args_error(res, ENOMEM, "out of memory");
	return 0;
}
