/* Compiles the strings of a rule: variable expansion, then the checks
 * and the matcher form of each section. Positions point at the byte
 * that is wrong, in the source text. */
#include "policy/policy_int.h"
#include "common/glob.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hx_policy_fail(struct hx_policy_error *err, const char *file, unsigned line,
		   unsigned column, const char *hint, const char *fmt, ...)
{
	va_list ap;

	if (file)
		snprintf(err->file, sizeof(err->file), "%s", file);
	err->line = line;
	err->column = column;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	snprintf(err->hint, sizeof(err->hint), "%s", hint ? hint : "");
	return -EINVAL;
}

static int expand(const struct hx_policy_vars *v, const char *text, bool glob,
		  struct hx_pos pos, char **out, size_t **map,
		  struct hx_policy_error *err)
{
	char msg[160], hint[160];
	size_t bad = 0;
	int ret = hx_expand_vars(v, text, glob, out, map, &bad, msg,
				 sizeof(msg), hint, sizeof(hint));

	if (ret == -EINVAL)
		return hx_policy_fail(err, NULL, pos.line,
				      pos.column + (unsigned)bad, hint, "%s",
				      msg);
	return ret;
}

static int check_path_glob(const char *g, const size_t *map, struct hx_pos pos,
			   struct hx_policy_error *err)
{
	const char *why;
	size_t off;

	if (g[0] != '/' && strncmp(g, "**/", 3))
		return hx_policy_fail(
		    err, NULL, pos.line, pos.column,
		    "write /abs/path/**, $HOME/..., $CWD/... "
		    "or **/name",
		    "a path pattern must be absolute or start "
		    "with '**/'");
	if (hx_glob_validate(g, &off, &why))
		return hx_policy_fail(err, NULL, pos.line,
				      pos.column + (unsigned)map[off],
				      "globs: * ? [...] and ** as a whole "
				      "segment; \\ escapes",
				      "bad glob: %s", why);
	return 0;
}

int hx_compile_pattern(struct hx_policy *p, enum hx_section sec,
		       const struct hx_policy_vars *v, const char *text,
		       struct hx_pos pos, struct hx_pattern *out,
		       struct hx_policy_error *err)
{
	char *s = NULL;
	size_t *map = NULL, off = 0;
	const char *why = NULL;
	int ret = expand(v, text, true, pos, &s, &map, err);

	if (ret)
		return ret;
	out->text = hx_arena_strdup(&p->arena, s);
	if (!out->text) {
		ret = -ENOMEM;
		goto out;
	}
	switch (sec) {
	case HX_SEC_FILES:
		ret = check_path_glob(s, map, pos, err);
		if (!ret)
			out->spec = hx_glob_specificity(s);
		break;
	case HX_SEC_EXEC:
		ret = hx_execpat_parse(&p->arena, s, &out->u.exec, &off, &why);
		if (ret == -EINVAL)
			ret = hx_policy_fail(err, NULL, pos.line,
					     pos.column + (unsigned)map[off],
					     "exec patterns: EXE [ARG...] [*], "
					     "e.g. \"git push *\"",
					     "%s", why);
		else if (!ret)
			out->spec = hx_execpat_specificity(&out->u.exec);
		break;
	case HX_SEC_NET:
		ret = hx_netpat_parse(&p->arena, s, &out->u.net, &off, &why);
		if (ret == -EINVAL)
			ret = hx_policy_fail(
			    err, NULL, pos.line,
			    pos.column + (unsigned)map[off],
			    "network patterns: [listen:][tcp:|udp:]HOST:PORT "
			    "(HOST: *, name, *.domain, 10.0.0.0/8, [::1], "
			    "[fd00::/8]; PORT: *, N, N-M) or "
			    "unix:/path/glob, unix:@name",
			    "%s", why);
		else if (!ret)
			out->spec = hx_netpat_specificity(&out->u.net);
		break;
	case HX_SEC_COUNT:
		ret = -EINVAL;
		break;
	}
out:
	free(s);
	free(map);
	return ret;
}

int hx_compile_example(struct hx_policy *p, const struct hx_policy_vars *v,
		       const char *text, struct hx_pos pos, bool should_match,
		       struct hx_example *out, struct hx_policy_error *err)
{
	char *s = NULL;
	int ret = expand(v, text, false, pos, &s, NULL, err);

	if (ret)
		return ret;
	out->text = hx_arena_strdup(&p->arena, s);
	out->pos = pos;
	out->should_match = should_match;
	free(s);
	return out->text ? 0 : -ENOMEM;
}
