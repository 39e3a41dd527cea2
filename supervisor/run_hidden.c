/* At the session's end: the changes the project's git index now hides
 * from git status and git diff (git/hidden.h), recorded
 * (hidden_changes) and said on stderr. The plugin (libgit2, ~3 ms to
 * load) is asked only when the index changed during the session. */
#define _GNU_SOURCE
#include "supervisor/run_int.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/notice.h"
#include "supervisor/git/hidden.h"
#include "supervisor/record.h"
#include "supervisor/say.h"

/* The git directory of the work tree holding dir (a ".git" directory,
 * or the one a ".git" file names) into out; false when there is none. */
static bool git_dir(const char *dir, char *out, size_t size)
{
	char d[PATH_MAX], line[PATH_MAX + 16], *slash;
	struct stat st;
	FILE *f;

	snprintf(d, sizeof(d), "%s", dir);
	for (;;) {
		if ((size_t)snprintf(out, size, "%s/.git", d) >= size)
			return false;
		if (lstat(out, &st))
			st.st_mode = 0;
		if (S_ISDIR(st.st_mode))
			return true;
		if (S_ISREG(st.st_mode) && (f = fopen(out, "re"))) {
			bool ok = fgets(line, sizeof(line), f) &&
				  !strncmp(line, "gitdir: ", 8);

			fclose(f);
			line[strcspn(line, "\n")] = '\0';
			return ok && (size_t)snprintf(out, size, "%s%s%s",
						      line[8] == '/' ? "" : d,
						      line[8] == '/' ? "" : "/",
						      line + 8) < size;
		}
		if (!(slash = strrchr(d, '/')) || slash == d)
			return false;
		*slash = '\0';
	}
}

/* Whether dir's index changed since the session began: its ctime, which
 * the kernel sets and no one can set back. */
static bool index_changed(const char *dir, const struct timespec *since)
{
	char gd[PATH_MAX], index[PATH_MAX + 8];
	struct stat st;

	if (!git_dir(dir, gd, sizeof(gd)))
		return false;
	snprintf(index, sizeof(index), "%s/index", gd);
	return !stat(index, &st) && (st.st_ctim.tv_sec > since->tv_sec ||
				     (st.st_ctim.tv_sec == since->tv_sec &&
				      st.st_ctim.tv_nsec >= since->tv_nsec));
}

static void say_hidden(json_t *changes, size_t unchecked)
{
	char buf[512];
	size_t i;
	json_t *c;

	if (json_array_size(changes))
		fprintf(stderr,
			"harness: warning: git status and git diff will not "
			"show %zu change%s the session made:\n",
			json_array_size(changes),
			json_array_size(changes) == 1 ? "" : "s");
	json_array_foreach(changes, i, c)
	{
		fprintf(
		    stderr, "  %s (%s)\n",
		    hx_text_safe(buf, sizeof(buf), hx_record_field(c, "path")),
		    hx_record_field(c, "hidden_by"));
	}
	if (unchecked)
		fprintf(stderr,
			"harness: warning: %zu file%s of the index not checked "
			"for hidden changes (larger than %u MiB)\n",
			unchecked, unchecked == 1 ? "" : "s",
			HX_HIDDEN_MAX_BYTES >> 20);
}

void hx_run_hidden_changes(struct run *r)
{
	json_t *changes, *rec, *list, *c;
	size_t unchecked, i;
	char err[PATH_MAX + 128], buf[sizeof(err) * 4];

	if (!index_changed(r->cwd, &r->pl.started))
		return;
	if (hx_git_hidden_changes(r->cwd, &r->pl.started, &changes, &unchecked,
				  err, sizeof(err))) {
		/* git reads what libgit2 may not (a split index): the user
		 * is told that the check could not be made */
		hx_record_error(&r->pl, "hidden_changes_failed", "session end",
				err);
		if (!r->o->quiet)
			fprintf(stderr,
				"harness: warning: the git index was not "
				"checked for changes hidden from git status: "
				"%s\n",
				hx_text_safe(buf, sizeof(buf), err));
		return;
	}
	if (!json_array_size(changes) && !unchecked) {
		json_decref(changes);
		return;
	}
	rec = hx_record_new(&r->pl, NULL, "hidden_changes", NULL);
	list = json_array();
	json_array_foreach(changes, i, c)
	{
		json_t *o = json_object();

		hx_record_set_text(rec, o, "path", "changes.path",
				   hx_record_field(c, "path"));
		hx_record_set_str(o, "hidden_by",
				  hx_record_field(c, "hidden_by"));
		json_array_append_new(list, o);
	}
	json_object_set_new(rec, "category", json_string("file_write"));
	hx_record_set_text(rec, rec, "repository", "repository", r->cwd);
	json_object_set_new(rec, "changes", list);
	json_object_set_new(rec, "unchecked",
			    json_integer((json_int_t)unchecked));
	hx_record_append(&r->pl, rec, NULL);
	json_decref(rec);
	if (!r->o->quiet)
		say_hidden(changes, unchecked);
	json_decref(changes);
}
