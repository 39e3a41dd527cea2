/* worktree.json; see wtstate.h. */
#define _GNU_SOURCE
#include "supervisor/git/wtstate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/session.h"
#include "supervisor/proc.h"

static void put(json_t *o, const char *k, const char *v)
{
	if (v && v[0])
		json_object_set_new(o, k, json_string(v));
}

int hx_wtstate_write(const struct hx_wtstate *s)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 32];
	json_t *o = json_object();
	int r = 0;

	if (!o)
		return -ENOMEM;
	put(o, "session", s->session);
	put(o, "repo", s->repo);
	put(o, "commondir", s->commondir);
	put(o, "worktree", s->worktree);
	put(o, "branch", s->branch);
	put(o, "base", s->base);
	put(o, "control", s->ctl);
	put(o, "status", s->status);
	put(o, "result", s->result);
	json_object_set_new(o, "pid", json_integer(s->pid));
	json_object_set_new(o, "pid_start",
			    json_integer((json_int_t)s->pid_start));
	json_object_set_new(o, "started", json_integer((json_int_t)s->started));
	if (s->ended)
		json_object_set_new(o, "ended",
				    json_integer((json_int_t)s->ended));
	json_object_set_new(o, "keep_worktree", json_boolean(s->keep));
	snprintf(path, sizeof(path), "%s/%s", s->dir, HX_WTSTATE_FILE);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", s->dir, HX_WTSTATE_FILE);
	if (json_dump_file(o, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
	    rename(tmp, path))
		r = errno ? -errno : -EIO;
	json_decref(o);
	return r;
}

static void get(json_t *o, const char *k, char *buf, size_t size)
{
	const char *v = json_string_value(json_object_get(o, k));

	snprintf(buf, size, "%s", v ? v : "");
}

int hx_wtstate_read(const char *dir, struct hx_wtstate *s)
{
	char path[PATH_MAX + 32];
	json_error_t je;
	json_t *o;

	memset(s, 0, sizeof(*s));
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	snprintf(path, sizeof(path), "%s/%s", dir, HX_WTSTATE_FILE);
	o = json_load_file(path, 0, &je);
	if (!o)
		return access(path, F_OK) ? -ENOENT : -EBADMSG;
	get(o, "session", s->session, sizeof(s->session));
	get(o, "repo", s->repo, sizeof(s->repo));
	get(o, "commondir", s->commondir, sizeof(s->commondir));
	get(o, "worktree", s->worktree, sizeof(s->worktree));
	get(o, "branch", s->branch, sizeof(s->branch));
	get(o, "base", s->base, sizeof(s->base));
	get(o, "control", s->ctl, sizeof(s->ctl));
	get(o, "status", s->status, sizeof(s->status));
	get(o, "result", s->result, sizeof(s->result));
	s->pid = (pid_t)json_integer_value(json_object_get(o, "pid"));
	s->pid_start = (unsigned long long)json_integer_value(
	    json_object_get(o, "pid_start"));
	s->started = (time_t)json_integer_value(json_object_get(o, "started"));
	s->ended = (time_t)json_integer_value(json_object_get(o, "ended"));
	s->keep = json_is_true(json_object_get(o, "keep_worktree"));
	json_decref(o);
	return s->session[0] && s->commondir[0] ? 0 : -EBADMSG;
}

unsigned long long hx_proc_starttime(pid_t pid)
{
	struct hx_procstat st;

	return hx_proc_stat(pid, &st) ? 0 : st.starttime;
}

bool hx_wtstate_live(const struct hx_wtstate *s)
{
	if (strcmp(s->status, "running") || s->pid <= 0)
		return false;
	return hx_proc_starttime(s->pid) == s->pid_start;
}

static int sessions_dir(char *buf, size_t size)
{
	struct hx_session tmp;
	int r = hx_session_init(&tmp, "x", NULL, NULL);

	if (r)
		return r;
	if ((size_t)snprintf(buf, size, "%s/sessions", tmp.state_dir) >= size)
		return -ENAMETOOLONG;
	return 0;
}

int hx_wtstate_foreach(void (*fn)(struct hx_wtstate *s, void *arg), void *arg)
{
	char dir[PATH_MAX], sub[PATH_MAX + 256];
	struct hx_wtstate st;
	struct dirent *de;
	DIR *d;
	int r = sessions_dir(dir, sizeof(dir));

	if (r)
		return r;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		if (!hx_wtstate_read(sub, &st))
			fn(&st, arg);
	}
	closedir(d);
	return 0;
}

struct find_acc {
	struct hx_wtstate *out;
	size_t live;
	char names[512];
};

static void find_live(struct hx_wtstate *s, void *arg)
{
	struct find_acc *a = arg;
	size_t n = strlen(a->names);

	if (!hx_wtstate_live(s))
		return;
	if (!a->live++)
		*a->out = *s;
	snprintf(a->names + n, sizeof(a->names) - n, " %s", s->session);
}

int hx_wtstate_find(const char *name, struct hx_wtstate *s, char *err,
		    size_t errlen)
{
	char dir[PATH_MAX], sub[PATH_MAX + 80];
	struct find_acc a = {.out = s};
	int r;

	if (name) {
		if (!hx_session_name_valid(name)) {
			snprintf(err, errlen, "'%s' is not a session name",
				 name);
			return -EINVAL;
		}
		r = sessions_dir(dir, sizeof(dir));
		if (r)
			return r;
		snprintf(sub, sizeof(sub), "%s/%s", dir, name);
		r = hx_wtstate_read(sub, s);
		if (r)
			snprintf(err, errlen,
				 "no worktree session %s (looked in %s)", name,
				 sub);
		return r;
	}
	r = hx_wtstate_foreach(find_live, &a);
	if (r)
		return r;
	if (!a.live) {
		snprintf(err, errlen, "no running worktree session");
		return -ENOENT;
	}
	if (a.live > 1) {
		snprintf(err, errlen,
			 "several worktree sessions run; name one:%s", a.names);
		return -EEXIST;
	}
	return 0;
}

int hx_wtstate_checkpoint(const char *dir, long *n, char out[41])
{
	char path[PATH_MAX + 32], *line = NULL;
	size_t cap = 0;
	int r = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/checkpoints.jsonl", dir);
	if (!(f = fopen(path, "re")))
		return -ENOENT;
	while (getline(&line, &cap, f) > 0) {
		json_t *o = json_loads(line, 0, NULL);
		json_t *k = json_object_get(o, "n");
		const char *c = json_string_value(json_object_get(o, "commit"));

		if (json_is_integer(k) && c && strlen(c) == 40 &&
		    strspn(c, "0123456789abcdef") == 40 &&
		    (*n < 0 || json_integer_value(k) == *n)) {
			memcpy(out, c, 41);
			r = 0;
			if (*n >= 0) {
				json_decref(o);
				break;
			}
			out[40] = '\0';
			*n = -1 - (long)json_integer_value(k); /* the last */
		}
		json_decref(o);
	}
	free(line);
	fclose(f);
	if (!r && *n < 0)
		*n = -1 - *n;
	return r;
}
