/* git configuration that names code; see gitconf.h. */
#define _GNU_SOURCE
#include "supervisor/gitconf.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/path.h"
#include "supervisor/session.h"

#define MAX_DEPTH 4 /* includes of includes */

static void add(struct hx_gitconf *c, const char *path, const char *suffix)
{
	char norm[PATH_MAX], real[PATH_MAX];
	const char *p = norm;

	if (c->n == HX_GITCONF_MAX ||
	    hx_path_normalize(NULL, path, norm, sizeof(norm)) < 0)
		return;
	/* The policy decides resolved paths too; a missing file (an
	 * include git skips, which the agent could create) as written. */
	if (realpath(norm, real))
		p = real;
	if (hx_glob_escape(p, c->globs[c->n], PATH_MAX))
		return;
	strcat(c->globs[c->n], suffix);
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->globs[i], c->globs[c->n]))
			return;
	c->ptrs[c->n] = c->globs[c->n];
	c->n++;
}

/* value, "~/"-expanded and made absolute from base, normalized. */
static int absolute(const char *value, const char *base, const char *home,
		    char *out, size_t size)
{
	if (!strncmp(value, "~/", 2)) {
		if (!home)
			return -1;
		base = home;
		value += 2;
	}
	return hx_path_normalize(base, value, out, size) < 0 ? -1 : 0;
}

/* The value of "key = value" (quotes and a trailing comment removed,
 * in place), or NULL. */
static char *value_of(char *line, char **key)
{
	char *eq = strchr(line, '='), *v, *e;
	bool q = false;

	if (!eq)
		return NULL;
	*eq = '\0';
	for (e = eq; e > line && isspace((unsigned char)e[-1]); e--)
		e[-1] = '\0';
	*key = line + strspn(line, " \t");
	v = eq + 1 + strspn(eq + 1, " \t");
	for (e = v; *e; e++) {
		if (*e == '"')
			q = !q;
		else if (!q && (*e == '#' || *e == ';'))
			break;
	}
	*e = '\0';
	while (e > v && isspace((unsigned char)e[-1]))
		*--e = '\0';
	if (e - v >= 2 && v[0] == '"' && e[-1] == '"') {
		e[-1] = '\0';
		v++;
	}
	return v;
}

/* Keys whose value is a command git runs (section, key; "*" any
 * subsection's): one naming a program by path, "./tools/fsmonitor" or
 * "!scripts/x.sh", names code the agent could rewrite. */
static const char *const command_keys[][2] = {
    {"core", "fsmonitor"}, {"core", "sshcommand"},   {"core", "editor"},
    {"core", "pager"},	   {"core", "askpass"},	     {"sequence", "editor"},
    {"gpg", "program"},	   {"credential", "helper"}, {"filter", "clean"},
    {"filter", "smudge"},  {"filter", "process"},    {"diff", "textconv"},
    {"diff", "command"},   {"merge", "driver"},	     {"alias", "*"},
};

static bool runs_command(const char *section, const char *key)
{
	for (size_t i = 0; i < sizeof(command_keys) / sizeof(*command_keys);
	     i++)
		if (!strcasecmp(section, command_keys[i][0]) &&
		    (command_keys[i][1][0] == '*' ||
		     !strcasecmp(key, command_keys[i][1])))
			return true;
	return false;
}

/* The program of a command value that names one by path (relative: to
 * the work tree's top, where git runs it), else nothing. */
static void add_program(struct hx_gitconf *c, const char *v, const char *cwd,
			const char *home)
{
	char prog[PATH_MAX], p[PATH_MAX];
	size_t k;

	v += *v == '!';
	v += strspn(v, " \t");
	k = strcspn(v, " \t");
	if (!k || k >= sizeof(prog))
		return;
	memcpy(prog, v, k);
	prog[k] = '\0';
	if (strchr(prog, '/') && !absolute(prog, cwd, home, p, sizeof(p)))
		add(c, p, "");
}

static void parse(struct hx_gitconf *c, const char *file, const char *cwd,
		  const char *home, int depth)
{
	char line[PATH_MAX + 256], section[64] = "", dir[PATH_MAX], p[PATH_MAX];
	FILE *f = fopen(file, "re");
	char *slash, *key, *v;

	if (!f)
		return;
	snprintf(dir, sizeof(dir), "%s", file);
	if ((slash = strrchr(dir, '/')))
		*slash = '\0';
	while (fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t");

		if (*s == '[') {
			size_t k = strcspn(s + 1, " \t\"]");

			snprintf(section, sizeof(section), "%.*s", (int)k,
				 s + 1);
			/* "[core] hooksPath = x" on one line: rare, skipped */
			continue;
		}
		if (!(v = value_of(s, &key)) || !*v)
			continue;
		if (runs_command(section, key))
			add_program(c, v, cwd, home);
		if (!strcasecmp(section, "core") &&
		    !strcasecmp(key, "hookspath")) {
			/* Relative to where hooks run: the work tree's top. */
			if (!absolute(v, cwd, home, p, sizeof(p)))
				add(c, p, "/**");
		} else if ((!strcasecmp(section, "include") ||
			    !strcasecmp(section, "includeif")) &&
			   !strcasecmp(key, "path")) {
			if (absolute(v, dir, home, p, sizeof(p)))
				continue;
			add(c, p, "");
			if (depth < MAX_DEPTH)
				parse(c, p, cwd, home, depth + 1);
		}
	}
	fclose(f);
}

void hx_gitconf_find(const char *cwd, const char *home, struct hx_gitconf *c)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	char p[PATH_MAX];

	c->n = 0;
	parse(c, "/etc/gitconfig", cwd, home, 0);
	if (xdg && xdg[0] == '/' &&
	    snprintf(p, sizeof(p), "%s/git/config", xdg) < (int)sizeof(p))
		parse(c, p, cwd, home, 0);
	else if (home && snprintf(p, sizeof(p), "%s/.config/git/config", home) <
			     (int)sizeof(p))
		parse(c, p, cwd, home, 0);
	if (home &&
	    snprintf(p, sizeof(p), "%s/.gitconfig", home) < (int)sizeof(p))
		parse(c, p, cwd, home, 0);
	if (snprintf(p, sizeof(p), "%s/.git/config", cwd) < (int)sizeof(p))
		parse(c, p, cwd, home, 0);
}
