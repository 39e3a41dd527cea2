/* The prefix lookups of one Landlock derivation, remembered; see
 * landlock_tree.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/landlock_tree.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/glob.h"
#include "supervisor/path_resolve.h"

#define MEMO_SLOTS 1024 /* a power of 2; the default policy asks ~300 */

#define DIRS	  64  /* directories listed, at most */
#define DIR_NAMES 512 /* one with more is looked up name by name */

/* A directory the rules ask about several entries of ($HOME for
 * ~/.aws, ~/.docker and a hundred more credential stores a user mostly
 * does not have, ~/.config for fifty): listed once, so that each name
 * it lacks is known without a failed lookup (200 of the 3,100 system
 * calls of a start as root). A snapshot, as the derivation is. */
struct dir_entry {
	char *name;
	unsigned char type; /* readdir's d_type */
};

struct dir_list {
	char *path; /* as asked: a literal prefix */
	int asked;
	int err;		 /* listed: 0; else why not (ENOENT: nothing
				  * beneath) */
	bool listed;		 /* names holds every entry */
	struct dir_entry *names; /* sorted by name */
	size_t n;
};

struct hx_ll_memo {
	size_t n, ndirs;
	struct memo_slot {
		char *path; /* NULL: empty */
		char *real; /* NULL: err */
		int err;
	} slot[MEMO_SLOTS];
	struct dir_list dirs[DIRS];
};

struct hx_ll_memo *hx_ll_memo_new(void)
{
	return calloc(1, sizeof(struct hx_ll_memo));
}

void hx_ll_memo_free(struct hx_ll_memo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < MEMO_SLOTS; i++) {
		free(m->slot[i].path);
		free(m->slot[i].real);
	}
	for (size_t i = 0; i < m->ndirs; i++) {
		for (size_t k = 0; k < m->dirs[i].n; k++)
			free(m->dirs[i].names[k].name);
		free(m->dirs[i].names);
		free(m->dirs[i].path);
	}
	free(m);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct dir_entry *)a)->name,
		      ((const struct dir_entry *)b)->name);
}

/* Reads d's entries; a directory that cannot be read whole is left
 * unlisted (its names looked up one by one), one that is not there
 * says so for everything beneath it. */
static void list_dir(struct dir_list *d)
{
	DIR *dir = opendir(d->path);
	struct dirent *de;
	size_t cap = 0;

	if (!dir) {
		d->err = errno == ENOENT || errno == ENOTDIR ? errno : EACCES;
		return;
	}
	while ((errno = 0, de = readdir(dir))) {
		struct dir_entry *v;

		if (d->n == DIR_NAMES)
			goto unlisted;
		if (d->n == cap) {
			cap = cap ? cap * 2 : 32;
			if (!(v = realloc(d->names, cap * sizeof(*v))))
				goto unlisted;
			d->names = v;
		}
		d->names[d->n].type = de->d_type;
		if (!(d->names[d->n].name = strdup(de->d_name)))
			goto unlisted;
		d->n++;
	}
	if (errno)
		goto unlisted;
	closedir(dir);
	qsort(d->names, d->n, sizeof(*d->names), by_name);
	d->listed = true;
	return;
unlisted:
	closedir(dir);
	d->err = EACCES;
}

/* m's entry for the directory dir (a canonical path), made if new;
 * NULL when m holds DIRS already. */
static struct dir_list *dir_of(struct hx_ll_memo *m, const char *dir)
{
	for (size_t i = 0; i < m->ndirs; i++)
		if (!strcmp(m->dirs[i].path, dir))
			return &m->dirs[i];
	if (m->ndirs == DIRS || !(m->dirs[m->ndirs].path = strdup(dir)))
		return NULL;
	return &m->dirs[m->ndirs++];
}

/* -ENOENT or -ENOTDIR when path's directory, listed, shows it is not
 * there; 0 when that is not known. The third question about a
 * directory lists it (listing costs three or four system calls, a
 * lookup one), and one of more than DIR_NAMES entries (the sessions
 * directory) is never listed whole. */
static int listed_absent(struct hx_ll_memo *m, const char *path)
{
	const char *slash = strrchr(path, '/');
	struct dir_entry key;
	struct dir_list *d;
	char dir[PATH_MAX];

	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return 0;
	key.name = (char *)slash + 1;
	if (!*key.name || !strcmp(key.name, ".") || !strcmp(key.name, ".."))
		return 0;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	if (!dir[0])
		strcpy(dir, "/");
	/* /proc lists each process, not its other threads, which a name
	 * still reaches. */
	if (!strcmp(dir, "/proc") || !(d = dir_of(m, dir)))
		return 0;
	if (++d->asked == 3 && !d->listed)
		list_dir(d);
	if (d->err == ENOENT || d->err == ENOTDIR)
		return -d->err;
	if (!d->listed)
		return 0;
	return bsearch(&key, d->names, d->n, sizeof(*d->names), by_name)
		   ? 0
		   : -ENOENT;
}

void hx_ll_memo_each(struct hx_ll_memo *m, const char *dir, const char *glob,
		     hx_ll_entry_fn fn, void *arg)
{
	struct dir_list *d = m ? dir_of(m, dir) : NULL;
	struct dirent *de;
	DIR *dh;

	if (d && !d->listed && !d->err)
		list_dir(d);
	if (d && d->listed) {
		for (size_t i = 0; i < d->n; i++) {
			const char *nm = d->names[i].name;

			if (strcmp(nm, ".") && strcmp(nm, "..") &&
			    hx_glob_match(glob, nm))
				fn(nm, d->names[i].type, arg);
		}
		return;
	}
	/* Too large to keep (or no memo): read as it is. */
	if (!(dh = opendir(dir)))
		return;
	while ((de = readdir(dh)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    hx_glob_match(glob, de->d_name))
			fn(de->d_name, de->d_type, arg);
	closedir(dh);
}

/* hx_path_real of path, remembered in m. */
static int real_memo(struct hx_ll_memo *m, const char *path, char *real,
		     size_t size)
{
	struct memo_slot *s = NULL;
	uint32_t h = 2166136261u;
	int e;

	if (m) {
		for (const char *c = path; *c; c++)
			h = (h ^ (unsigned char)*c) * 16777619u;
		for (size_t i = h & (MEMO_SLOTS - 1);;
		     i = (i + 1) & (MEMO_SLOTS - 1)) {
			s = &m->slot[i];
			if (!s->path || !strcmp(s->path, path))
				break;
		}
		if (s->path) {
			if (!s->real)
				return s->err;
			if ((size_t)snprintf(real, size, "%s", s->real) >= size)
				return -ENAMETOOLONG;
			return 0;
		}
	}
	e = m ? listed_absent(m, path) : 0;
	if (!e)
		e = hx_path_real(path, real, size);
	/* Three quarters full at most: a probe always ends. */
	if (s && m->n < MEMO_SLOTS / 4 * 3 && (s->path = strdup(path))) {
		s->real = e ? NULL : strdup(real);
		s->err = e;
		if (!e && !s->real) {
			free(s->path);
			s->path = NULL;
		} else
			m->n++;
	}
	return e;
}

int hx_ll_canon(const char *path, char *out, size_t size)
{
	return hx_ll_canon_memo(NULL, path, out, size);
}

int hx_ll_canon_memo(struct hx_ll_memo *m, const char *path, char *out,
		     size_t size)
{
	char buf[PATH_MAX], real[PATH_MAX];
	size_t cut;
	int e;

	if (path[0] != '/')
		return -EINVAL;
	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	cut = strlen(buf);
	/* Shorten until a prefix exists; "/" always does. */
	for (;;) {
		char save = buf[cut];

		buf[cut] = '\0';
		e = real_memo(m, cut ? buf : "/", real, sizeof(real));
		buf[cut] = save;
		if (!e)
			break;
		if (e != -ENOENT && e != -ENOTDIR)
			return e;
		while (cut > 0 && buf[cut - 1] != '/')
			cut--;
		while (cut > 0 && buf[cut - 1] == '/')
			cut--;
	}
	if (!strcmp(real, "/"))
		real[0] = '\0';
	if ((size_t)snprintf(out, size, "%s%s", real, buf + cut) >= size)
		return -ENAMETOOLONG;
	if (!out[0])
		strcpy(out, "/");
	/* Drop a trailing '/' (path "/x/" or a cut that left one). */
	for (size_t n = strlen(out); n > 1 && out[n - 1] == '/'; n--)
		out[n - 1] = '\0';
	return 0;
}

bool hx_ll_memo_absent(struct hx_ll_memo *m, const char *path)
{
	return m && listed_absent(m, path);
}

bool hx_ll_memo_absent_in_dir(struct hx_ll_memo *m, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct dir_list *d;

	if (!m || !slash || slash == path ||
	    (size_t)(slash - path) >= sizeof(dir))
		return false;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	/* Asked after hx_ll_memo_absent, which listed the directory. */
	return listed_absent(m, path) == -ENOENT && (d = dir_of(m, dir)) &&
	       d->listed;
}
