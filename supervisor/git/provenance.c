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
	if (v && ppid && json_is_true(json_object_get(v, "exited")))
		v = NULL; /* a writer's own number: another process now */
	/* A forked child without an exec of its own runs its parent's
	 * image: name the parent's command. */
	if (!v && ppid) {
		snprintf(k, sizeof(k), "%lld", (long long)ppid);
		v = json_object_get(p->procs, k);
		if (json_is_true(json_object_get(v, "exited")))
			v = NULL;
	}
	return v;
}

/* The process entry that names what pid runs now: one whose image is
 * not the record's (exe) names another program. */
static json_t *proc_running(const struct hx_prov *p, json_t *rec,
			    json_int_t pid)
{
	json_t *v =
	    proc_of(p, pid, json_integer_value(json_object_get(rec, "ppid")));
	const char *was, *now = sget(rec, "exe"), *from = sget(v, "from_exe");

	/* still the image that asked for the exec: not run (yet, or ever:
	 * its failed record comes when the thread execs again) */
	if (from && now && !strcmp(from, now))
		v = json_object_get(v, "before");
	was = sget(v, "exe");
	return !was || !now || !strcmp(was, now) ? v : NULL;
}

static void note_path(struct hx_prov *p, const char *abs, json_t *rec,
		      json_int_t pid, uint64_t seq)
{
	const char *rel = relative(p, abs);
	json_t *w, *proc;

	if (!rel)
		return;
	proc = proc_running(p, rec, pid);
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

/* An exec allowed: what pid runs from now on, until its process_start
 * (a program with the shim) names it again. A static program says no
 * HELLO, and its writes were named by the argv of the image it
 * replaced (the twenty-sixth attack review). The entry it replaces is
 * kept for an exec that then did not run. */
static void note_exec(struct hx_prov *p, const char *k, json_t *rec,
		      json_int_t pid, json_t *args, uint64_t seq)
{
	json_t *proc = json_object(), *was = json_object_get(p->procs, k);

	if (!proc || !json_is_array(json_object_get(args, "argv"))) {
		json_decref(proc);
		return;
	}
	json_object_set_new(proc, "pid", json_integer(pid));
	json_object_set(proc, "argv", json_object_get(args, "argv"));
	json_object_set_new(proc, "process_seq", json_integer((json_int_t)seq));
	json_object_set_new(proc, "exec_seq", json_integer((json_int_t)seq));
	if (sget(rec, "exe"))
		json_object_set_new(proc, "from_exe",
				    json_string(sget(rec, "exe")));
	if (was && (was = json_copy(was))) { /* one level kept */
		json_object_del(was, "before");
		json_object_set_new(proc, "before", was);
	}
	json_object_set_new(p->procs, k, proc);
}

/* A failed, revoked or unconfirmed exec did not replace the image. */
static void undo_exec(struct hx_prov *p, const char *k, json_t *rec)
{
	json_t *proc = json_object_get(p->procs, k), *was;

	if (!proc || !json_equal(json_object_get(proc, "exec_seq"),
				 json_object_get(rec, "ref_seq")))
		return;
	was = json_incref(json_object_get(proc, "before"));
	if (was)
		json_object_set_new(p->procs, k, was);
	else
		json_object_del(p->procs, k);
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
	if (!strcmp(ev, "process_exit")) {
		/* its number may come again, to a process that names itself
		 * by no record (a forked child): not this one's */
		if ((proc = json_object_get(p->procs, k)))
			json_object_set_new(proc, "exited", json_true());
		return;
	}
	if (!strcmp(ev, "failed") || !strcmp(ev, "revoked") ||
	    !strcmp(ev, "kernel_unconfirmed")) {
		undo_exec(p, k, rec);
		return;
	}
	/* What was denied in enforce mode did not happen. */
	happened = (verdict && !strcmp(verdict, "allow")) ||
		   json_is_false(json_object_get(rec, "enforced"));
	if (happened && cat && !strcmp(cat, "exec"))
		note_exec(p, k, rec, pid, args, seq);
	if (!happened || !cat || strcmp(cat, "file_write"))
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
	json_object_del(o, "before");
	json_object_del(o, "exec_seq");
	json_object_del(o, "from_exe");
	json_object_del(o, "exited");
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
