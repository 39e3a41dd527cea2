/* Provenance from audit records; see provenance.h. */
#define _GNU_SOURCE
#include "supervisor/git/provenance.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hx_prov {
	char root[PATH_MAX];
	size_t rootlen;
	json_t *procs; /* "pid" -> {pid, exe, argv, seq} */
	json_t *paths; /* rel path -> {pid, exe, argv, seq, process_seq} */
	json_t *dirty; /* "pid" -> true, since the last clear */
	pid_t last_writer;
};

struct hx_prov *hx_prov_new(const char *root)
{
	struct hx_prov *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	snprintf(p->root, sizeof(p->root), "%s", root);
	p->rootlen = strlen(p->root);
	while (p->rootlen > 1 && p->root[p->rootlen - 1] == '/')
		p->root[--p->rootlen] = '\0';
	p->procs = json_object();
	p->paths = json_object();
	p->dirty = json_object();
	if (!p->procs || !p->paths || !p->dirty) {
		hx_prov_free(p);
		return NULL;
	}
	return p;
}

void hx_prov_free(struct hx_prov *p)
{
	if (!p)
		return;
	json_decref(p->procs);
	json_decref(p->paths);
	json_decref(p->dirty);
	free(p);
}

static const char *sget(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* The path relative to root, or NULL when it is not inside. */
static const char *relative(const struct hx_prov *p, const char *path)
{
	if (!path || strncmp(path, p->root, p->rootlen) ||
	    path[p->rootlen] != '/' || !path[p->rootlen + 1])
		return NULL;
	return path + p->rootlen + 1;
}

static json_t *proc_of(const struct hx_prov *p, json_int_t pid, json_int_t ppid)
{
	char k[32];
	json_t *v;

	snprintf(k, sizeof(k), "%lld", (long long)pid);
	v = json_object_get(p->procs, k);
	/* A forked child without an exec of its own runs its parent's
	 * image: name the parent's command. */
	if (!v && ppid) {
		snprintf(k, sizeof(k), "%lld", (long long)ppid);
		v = json_object_get(p->procs, k);
	}
	return v;
}

static void note_path(struct hx_prov *p, const char *abs, json_t *rec,
		      json_int_t pid, uint64_t seq)
{
	const char *rel = relative(p, abs);
	json_t *w, *proc;

	if (!rel)
		return;
	proc =
	    proc_of(p, pid, json_integer_value(json_object_get(rec, "ppid")));
	w = json_object();
	json_object_set_new(w, "pid", json_integer(pid));
	if (sget(rec, "exe"))
		json_object_set_new(w, "exe", json_string(sget(rec, "exe")));
	if (proc && json_object_get(proc, "argv"))
		json_object_set(w, "argv", json_object_get(proc, "argv"));
	json_object_set_new(w, "seq", json_integer((json_int_t)seq));
	if (proc && json_object_get(proc, "process_seq"))
		json_object_set(w, "process_seq",
				json_object_get(proc, "process_seq"));
	json_object_set_new(p->paths, rel, w);
}

void hx_prov_observe(struct hx_prov *p, json_t *rec, uint64_t seq)
{
	const char *ev = sget(rec, "event"), *cat = sget(rec, "category"),
		   *verdict = sget(rec, "verdict"), *op;
	json_t *args = json_object_get(rec, "args"), *proc;
	json_int_t pid = json_integer_value(json_object_get(rec, "pid"));
	char k[32];
	bool happened, hit = false;

	if (!p || !ev || !pid)
		return;
	snprintf(k, sizeof(k), "%lld", (long long)pid);
	if (!strcmp(ev, "process_start")) {
		proc = json_object();
		json_object_set_new(proc, "pid", json_integer(pid));
		if (sget(rec, "exe"))
			json_object_set_new(proc, "exe",
					    json_string(sget(rec, "exe")));
		if (json_object_get(args, "argv"))
			json_object_set(proc, "argv",
					json_object_get(args, "argv"));
		json_object_set_new(proc, "process_seq",
				    json_integer((json_int_t)seq));
		json_object_set_new(p->procs, k, proc);
		return;
	}
	if (!cat || strcmp(cat, "file_write"))
		return;
	/* What was denied in enforce mode did not happen. */
	happened = (verdict && !strcmp(verdict, "allow")) ||
		   json_is_false(json_object_get(rec, "enforced"));
	if (!happened)
		return;
	op = sget(rec, "op");
	for (int i = 0; i < 2; i++) {
		const char *key = i ? "path2" : "path";
		const char *res = i ? "path2_resolved" : "path_resolved";
		const char *path = sget(args, key);

		/* path2 of a symlink is its text, not a path written. */
		if (i && (!op || (strcmp(op, "rename") && strcmp(op, "link"))))
			break;
		if (relative(p, path)) {
			note_path(p, path, rec, pid, seq);
			hit = true;
		} else if (relative(p, sget(args, res))) {
			note_path(p, sget(args, res), rec, pid, seq);
			hit = true;
		}
	}
	if (hit) {
		proc = proc_of(p, pid, 0);
		if (proc)
			json_object_set_new(proc, "seq",
					    json_integer((json_int_t)seq));
		json_object_set_new(p->dirty, k, json_true());
		p->last_writer = (pid_t)pid;
	}
}

json_t *hx_prov_writer(const struct hx_prov *p, const char *rel)
{
	json_t *w = json_object_get(p->paths, rel);

	return w ? json_deep_copy(w) : NULL;
}

json_t *hx_prov_process(const struct hx_prov *p, pid_t pid)
{
	json_t *v = proc_of(p, pid, 0), *o;

	if (!v)
		return NULL;
	o = json_deep_copy(v);
	return o;
}

bool hx_prov_due(struct hx_prov *p, pid_t pid, pid_t *cause)
{
	const char *k;
	json_t *v;
	char key[32];

	*cause = 0;
	if (!json_object_size(p->dirty))
		return false;
	snprintf(key, sizeof(key), "%d", (int)pid);
	if (json_object_get(p->dirty, key)) {
		*cause = pid;
		return true;
	}
	/* A forked writer shares its parent's connection: it is over when
	 * it no longer exists. */
	json_object_foreach(p->dirty, k, v)
	{
		long q = strtol(k, NULL, 10);

		if (q > 0 && kill((pid_t)q, 0) && errno == ESRCH) {
			*cause = (pid_t)q;
			return true;
		}
	}
	return false;
}

bool hx_prov_dirty(const struct hx_prov *p)
{
	return p && json_object_size(p->dirty) > 0;
}

void hx_prov_clear(struct hx_prov *p)
{
	json_object_clear(p->dirty);
	p->last_writer = 0;
}

pid_t hx_prov_last_writer(const struct hx_prov *p)
{
	return p->last_writer;
}
