/* harness-mcp's tools; see tools.h. */
#define _GNU_SOURCE
#include "supervisor/mcp/tools.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/path.h"
#include "supervisor/mcp/schema.h"
#include "supervisor/redact.h"

extern const char hx_mcp_tools_start[], hx_mcp_tools_end[];

/* Quotas: a code_run is a process tree, a file tool one system call's
 * worth; both far above what a model's loop asks for, far below a
 * flood. */
static struct hx_tool tools[] = {
    {"code_run", HX_TOOL_RUN, HX_CAT_EXEC, HX_OP_EXEC, 120, 8, NULL},
    {"file_read", HX_TOOL_FILE, HX_CAT_FILE_READ, HX_OP_READ, 1200, 16, NULL},
    {"file_write", HX_TOOL_FILE, HX_CAT_FILE_WRITE, HX_OP_WRITE, 600, 16, NULL},
    {"file_patch", HX_TOOL_FILE, HX_CAT_FILE_WRITE, HX_OP_WRITE, 600, 16, NULL},
    {"list_dir", HX_TOOL_FILE, HX_CAT_FILE_READ, HX_OP_READ, 600, 16, NULL},
    {"search", HX_TOOL_FILE, HX_CAT_FILE_READ, HX_OP_READ, 300, 4, NULL},
    {"diff", HX_TOOL_GIT, HX_CAT_FILE_READ, HX_OP_EXEC, 60, 2, NULL},
    {"restore", HX_TOOL_GIT, HX_CAT_FILE_WRITE, HX_OP_EXEC, 30, 1, NULL},
    {"checkpoint", HX_TOOL_CKPT, HX_CAT_PROCESS, HX_OP_COUNT, 60, 1, NULL},
    {"ask_user", HX_TOOL_ASK, HX_CAT_PROCESS, HX_OP_COUNT, 30, 1, NULL},
    {"session_info", HX_TOOL_HERE, HX_CAT_PROCESS, HX_OP_COUNT, 120, 4, NULL},
};
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

static json_t *defs;

int hx_tools_load(void)
{
	json_t *d;
	size_t i;
	char err[160];

	if (defs)
		return 0;
	defs = json_loadb(hx_mcp_tools_start,
			  (size_t)(hx_mcp_tools_end - hx_mcp_tools_start), 0,
			  NULL);
	if (!json_is_array(defs))
		goto bad;
	json_array_foreach(defs, i, d)
	{
		const char *name =
		    json_string_value(json_object_get(d, "name"));
		size_t k;

		for (k = 0;
		     k < NTOOLS && (!name || strcmp(tools[k].name, name)); k++)
			;
		if (k == NTOOLS ||
		    !hx_schema_supported(json_object_get(d, "inputSchema"), err,
					 sizeof(err)))
			goto bad;
		tools[k].def = d;
	}
	for (i = 0; i < NTOOLS; i++)
		if (!tools[i].def)
			goto bad;
	return 0;
bad:
	json_decref(defs);
	defs = NULL;
	return -EINVAL;
}

json_t *hx_tools_list(void)
{
	return defs;
}

const struct hx_tool *hx_tool_find(const char *name)
{
	for (size_t i = 0; i < NTOOLS; i++)
		if (tools[i].def && !strcmp(tools[i].name, name))
			return &tools[i];
	return NULL;
}

const struct hx_tool *hx_tools_all(size_t *n)
{
	*n = NTOOLS;
	return tools;
}

static bool err_at(char *err, size_t len, const char *arg, const char *what)
{
	snprintf(err, len, "arguments.%s: %s", arg, what);
	return false;
}

/* A string with a NUL inside is two strings to C: refuse it. */
static bool has_nul(json_t *s)
{
	return json_is_string(s) &&
	       strlen(json_string_value(s)) != json_string_length(s);
}

static bool any_nul(json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	if (has_nul(v))
		return true;
	if (json_is_object(v))
		json_object_foreach(v, k, x) if (any_nul(x)) return true;
	if (json_is_array(v))
		json_array_foreach(v, i, x) if (any_nul(x)) return true;
	return false;
}

/* A relative path climbs out of the project when a ".." takes it above
 * the start: said, not guessed (an absolute path says where it means). */
static bool climbs_out(const char *p)
{
	int depth = 0;
	const char *s = p;

	while (*s) {
		size_t n = strcspn(s, "/");

		if (n == 2 && s[0] == '.' && s[1] == '.') {
			if (--depth < 0)
				return true;
		} else if (n && !(n == 1 && s[0] == '.')) {
			depth++;
		}
		s += n;
		s += *s == '/';
	}
	return false;
}

static bool set_path(json_t *o, const char *key, const char *project, char *err,
		     size_t len)
{
	json_t *v = json_object_get(o, key);
	const char *p;
	char abs[PATH_MAX];

	if (!v)
		return true;
	p = json_string_value(v);
	if (p[0] != '/' && climbs_out(p))
		return err_at(err, len, key,
			      "a relative path may not climb out of the "
			      "project with '..'; give an absolute path");
	if (hx_path_normalize(project, p, abs, sizeof(abs)) < 0)
		return err_at(err, len, key, "is not a usable path");
	json_object_set_new(o, key, json_string(abs));
	return true;
}

static int count_of(json_t *o, const char *const *keys)
{
	int n = 0;

	for (; *keys; keys++)
		n += json_object_get(o, *keys) != NULL;
	return n;
}

static bool check_run(json_t *o, char *err, size_t len)
{
	bool lang = json_object_get(o, "language") != NULL;
	bool code = json_object_get(o, "code") != NULL;
	static const char *const one[] = {"command", "argv", "code", NULL};

	if (lang != code)
		return err_at(err, len, lang ? "code" : "language",
			      "language and code go together");
	if (count_of(o, one) != 1)
		return err_at(err, len, "command",
			      "give exactly one of command, argv, or "
			      "language with code");
	return true;
}

static bool check_exclusive(const struct hx_tool *t, json_t *o, char *err,
			    size_t len)
{
	static const char *const bytes[] = {"offset", "length", NULL};
	static const char *const lines[] = {"start_line", "end_line", NULL};
	static const char *const patch[] = {"patch", "edits", NULL};
	static const char *const find[] = {"glob", "pattern", NULL};

	if (!strcmp(t->name, "code_run"))
		return check_run(o, err, len);
	if (!strcmp(t->name, "file_read") && count_of(o, bytes) &&
	    count_of(o, lines))
		return err_at(err, len, "start_line",
			      "a byte range (offset, length) or a line range "
			      "(start_line, end_line), not both");
	if (!strcmp(t->name, "file_patch") && count_of(o, patch) != 1)
		return err_at(err, len, "patch",
			      "give exactly one of patch or edits");
	if (!strcmp(t->name, "search") && !count_of(o, find))
		return err_at(err, len, "glob",
			      "give a glob, a pattern, or both");
	return true;
}

/* A redaction tag (redact.h) in what a call would write: a result the
 * model read had the secret replaced, and writing that text back would
 * put the tag in the secret's place. */
static bool holds_tag(json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	if (json_is_string(v))
		return memmem(json_string_value(v), json_string_length(v),
			      HX_REDACT_OPEN, sizeof(HX_REDACT_OPEN) - 1);
	if (json_is_object(v))
		json_object_foreach(v, k, x) if (strcmp(k, "search") &&
						 holds_tag(x)) return true;
	if (json_is_array(v))
		json_array_foreach(v, i, x) if (holds_tag(x)) return true;
	return false;
}

bool hx_tool_prepare(const struct hx_tool *t, json_t *args, const char *project,
		     json_t **out, char *err, size_t errlen)
{
	json_t *o;

	*out = NULL;
	if (!hx_schema_check(json_object_get(t->def, "inputSchema"), args,
			     "arguments", err, errlen))
		return false;
	if (any_nul(args)) {
		snprintf(err, errlen, "arguments: a string holds a NUL byte");
		return false;
	}
	if (!check_exclusive(t, args, err, errlen))
		return false;
	if (t->category == HX_CAT_FILE_WRITE && t->where == HX_TOOL_FILE &&
	    holds_tag(args))
		return err_at(err, errlen, "content",
			      "holds a redacted secret's tag (" HX_REDACT_OPEN
			      "...): writing it would put the tag in the "
			      "secret's place; change the lines around it with "
			      "file_patch instead");
	if (!(o = json_deep_copy(args)))
		return err_at(err, errlen, "", "out of memory");
	if (!set_path(o, "path", project, err, errlen) ||
	    !set_path(o, "cwd", project, err, errlen)) {
		json_decref(o);
		return false;
	}
	if (t->where == HX_TOOL_RUN && !json_object_get(o, "cwd"))
		json_object_set_new(o, "cwd", json_string(project));
	*out = o;
	return true;
}

const char *hx_tool_path(const struct hx_tool *t, json_t *prepared)
{
	if (t->where != HX_TOOL_FILE)
		return NULL;
	return json_string_value(json_object_get(prepared, "path"));
}

size_t hx_tool_run_argv(json_t *prepared, const char **v, size_t max)
{
	json_t *a = json_object_get(prepared, "argv"), *x;
	const char *lang =
	    json_string_value(json_object_get(prepared, "language"));
	size_t i, n = 0;

	if (max < 3)
		return 0;
	if (json_is_array(a)) {
		json_array_foreach(a, i, x) if (n < max) v[n++] =
		    json_string_value(x);
		return n;
	}
	if (lang) {
		v[0] = strcmp(lang, "node") ? "python3" : "node";
		v[1] = strcmp(lang, "node") ? "-c" : "-e";
		v[2] = json_string_value(json_object_get(prepared, "code"));
		return 3;
	}
	v[0] = "sh";
	v[1] = "-c";
	v[2] = json_string_value(json_object_get(prepared, "command"));
	return v[2] ? 3 : 0;
}
