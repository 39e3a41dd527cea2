/* A script's answer and what it covers; see askscript.h. */
#include "supervisor/askscript.h"
#include "policy/policy.h"
#include "supervisor/proc.h"
#include "supervisor/strv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void drop(struct hx_askscript *e)
{
	hx_strv_free(e->argv, e->argc);
	free(e->cwd);
	memset(e, 0, sizeof(*e));
}

static bool same_words(const struct hx_askscript *e, const char *const *argv,
		       size_t argc)
{
	if (e->argc != argc)
		return false;
	for (size_t i = 0; i < argc; i++)
		if (strcmp(e->argv[i], argv[i] ? argv[i] : ""))
			return false;
	return true;
}

static bool alive(const struct hx_askscript *e)
{
	struct hx_procstat st;

	return e->root && !hx_proc_stat(e->root, &st) &&
	       st.starttime == e->start;
}

void hx_askscripts_add(struct hx_askscripts *s, pid_t root,
		       const char *const *argv, size_t argc, const char *cwd,
		       const char *how)
{
	struct hx_askscript *e = NULL;
	struct hx_procstat st;
	char here[PATH_MAX];

	if (root <= 0 || argc == 0 || hx_proc_stat(root, &st))
		return;
	if (!cwd && hx_proc_cwd(root, here, sizeof(here)) > 0)
		cwd = here;
	for (size_t i = 0; i < HX_ASKSCRIPT_MAX; i++) {
		struct hx_askscript *c = &s->e[i];

		if (c->root && !alive(c))
			drop(c);
		if (c->root == root && c->start == st.starttime &&
		    same_words(c, argv, argc))
			return; /* the shim's answer, seen by the kernel too */
		if (!e && !c->root)
			e = c;
	}
	if (!e) {
		e = &s->e[s->next];
		s->next = (s->next + 1) % HX_ASKSCRIPT_MAX;
		drop(e);
	}
	e->argv = hx_strv_dup(argv, argc);
	e->argc = e->argv ? argc : 0;
	e->cwd = cwd ? strdup(cwd) : NULL;
	if (!e->argv) {
		drop(e);
		return;
	}
	e->root = root;
	e->start = st.starttime;
	snprintf(e->how, sizeof(e->how), "%s", how);
}

bool hx_askscripts_cover(struct hx_askscripts *s, const struct hx_policy *p,
			 pid_t pid, const char *rule, const char *cwd,
			 const char *const *argv, size_t argc, char *how,
			 size_t hlen)
{
	const struct hx_event ev = {
	    .op = HX_OP_EXEC, .argv = argv, .argc = argc, .cwd = cwd};

	if (!rule || !cwd)
		return false;
	for (size_t i = 0; i < HX_ASKSCRIPT_MAX; i++) {
		struct hx_askscript *e = &s->e[i];

		if (!e->root)
			continue;
		if (!alive(e)) {
			drop(e);
			continue;
		}
		if ((pid == e->root || hx_proc_descends(pid, e->root)) &&
		    hx_policy_exec_runs(p, (const char *const *)e->argv,
					e->argc, e->cwd, rule, &ev)) {
			snprintf(how, hlen, "script %s", e->how);
			return true;
		}
	}
	return false;
}

void hx_askscripts_free(struct hx_askscripts *s)
{
	for (size_t i = 0; i < HX_ASKSCRIPT_MAX; i++)
		drop(&s->e[i]);
}
