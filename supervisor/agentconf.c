/* An agent's configuration that names the programs it starts; see
 * agentconf.h. */
#define _GNU_SOURCE
#include "supervisor/agentconf.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/readat.h"

/* A server list that counts: anything but null or an empty object. */
static bool counts(const json_t *v)
{
	return v && !json_is_null(v) &&
	       !(json_is_object(v) && !json_object_size(v));
}

/* The servers text names, by scope ("" the user's, else the project's
 * path), into a new object; NULL when text is not a JSON object. */
static json_t *servers_of(const char *text, size_t len)
{
	json_error_t err;
	json_t *root, *out, *projects, *proj, *v;
	const char *key;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	if (!json_is_object(root) || !(out = json_object())) {
		json_decref(root);
		return NULL;
	}
	if (counts(v = json_object_get(root, "mcpServers")))
		json_object_set(out, "", v);
	projects = json_object_get(root, "projects");
	if (json_is_object(projects))
		json_object_foreach(projects, key, proj)
		{
			v = json_object_get(proj, "mcpServers");
			if (*key && counts(v))
				json_object_set(out, key, v);
		}
	else if (counts(projects))
		json_object_set(out, "projects", projects); /* not read */
	json_decref(root);
	return out;
}

/* Whether each server of list is old's of that name, the same. */
static bool list_within(json_t *list, json_t *old)
{
	const char *name;
	json_t *v;

	if (!json_is_object(list) || !json_is_object(old))
		return json_equal(list, old); /* no object: whole */
	json_object_foreach(list, name, v)
	{
		if (!json_equal(v, json_object_get(old, name)))
			return false;
	}
	return true;
}

/* Whether each server of now (by scope, then by name) is in was. */
static bool within(json_t *now, json_t *was)
{
	const char *scope;
	json_t *list;

	json_object_foreach(now, scope, list)
	{
		if (!list_within(list,
				 was ? json_object_get(was, scope) : NULL))
			return false;
	}
	return true;
}

bool hx_agentconf_same_servers(const char *buf, size_t len, const char *cur,
			       size_t clen)
{
	json_t *now = servers_of(buf, len);
	json_t *was = cur ? servers_of(cur, clen) : NULL;
	bool same = now && within(now, was); /* not an object: refused */

	json_decref(now);
	json_decref(was);
	return same;
}

/* Reads dirfd/name whole (not followed, regular, under the bound) into
 * a malloc'ed *buf; its length or -errno. */
static ssize_t slurp(int dirfd, const char *name, char **buf, struct stat *st)
{
	ssize_t n;

	if (!(*buf = malloc(HX_AGENTCONF_MAX)))
		return -ENOMEM;
	n = hx_read_regular_at(dirfd, name, *buf, HX_AGENTCONF_MAX, st);
	if (n < 0) {
		free(*buf);
		*buf = NULL;
	}
	return n;
}

ssize_t hx_agentconf_read_checked(int dirfd, const char *name, int dirfd2,
				  const char *name2, char **buf,
				  struct stat *st)
{
	struct stat cst;
	char *cur = NULL;
	ssize_t n = slurp(dirfd, name, buf, st), c;

	if (n < 0)
		return n;
	c = slurp(dirfd2, name2, &cur, &cst);
	/* Absent, the file names no server; unreadable, none either
	 * (a corrupt one is what Claude Code starts without). */
	if ((c < 0 && c != -ENOENT && c != -EACCES) ||
	    !hx_agentconf_same_servers(*buf, (size_t)n, c >= 0 ? cur : NULL,
				       c >= 0 ? (size_t)c : 0)) {
		free(cur);
		free(*buf);
		*buf = NULL;
		return -EACCES;
	}
	free(cur);
	return n;
}

bool hx_agentconf_changes_servers(const char *src, const char *dst)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n =
	    hx_agentconf_read_checked(AT_FDCWD, src, AT_FDCWD, dst, &buf, &st);

	free(buf);
	return n < 0;
}

const char *hx_agentconf_path(const char *home)
{
	static char path[PATH_MAX];
	char dir[PATH_MAX];

	if (!home || !*home || !realpath(home, dir) ||
	    snprintf(path, sizeof(path), "%s/.claude.json",
		     strcmp(dir, "/") ? dir : "") >= (int)sizeof(path))
		return NULL;
	return path;
}
