/* Expansion of $HOME, $CWD, $TMPDIR, $WORKTREE, $SESSION (and ${NAME})
 * in patterns and examples, done once at load time. */
#include "policy/policy_int.h"

#include "common/glob.h"
#include "common/path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char var_hint[] =
    "variables: $HOME $CWD $TMPDIR $WORKTREE $SESSION (or ${NAME})";

static bool name_char(char c, bool first)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

/* The value of a variable; *known false when the name is not ours. */
static const char *lookup(const struct hx_policy_vars *v, const char *name,
			  size_t len, bool *known)
{
	static const char *const names[] = {"HOME", "CWD", "TMPDIR", "WORKTREE",
					    "SESSION"};
	const char *vals[] = {v->home, v->cwd, v->tmpdir,
			      v->worktree ? v->worktree : v->cwd, v->session};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		/* An empty value is no value: HOME="" made "~/.ssh" the
		 * /.ssh of no one, and the user's own was readable. */
		if (strlen(names[i]) == len && !memcmp(names[i], name, len)) {
			*known = true;
			return vals[i] && vals[i][0] ? vals[i] : NULL;
		}
	}
	*known = false;
	return NULL;
}

/* A variable's value as the paths it is matched against are written
 * (hx_path_normalize: "//", ".", "..", a trailing '/'), and, in a glob,
 * its metacharacters taken literally (hx_glob_escape): a $HOME of
 * "/home/u/." or "/home/[u]" made "~/.ssh" name no path ever judged. */
static const char *value_of(const char *val, bool glob, char *buf, size_t size)
{
	char norm[PATH_MAX];

	if (val[0] == '/' &&
	    hx_path_normalize(NULL, val, norm, sizeof(norm)) >= 0)
		val = norm;
	if (glob)
		return hx_glob_escape(val, buf, size) ? NULL : buf;
	return (size_t)snprintf(buf, size, "%s", val) < size ? buf : NULL;
}

int hx_expand_vars(const struct hx_policy_vars *v, const char *in, bool glob,
		   char **out, size_t **map, size_t *bad, char *msg,
		   size_t msglen, char *hint, size_t hintlen)
{
	char vbuf[2 * PATH_MAX + 2];
	size_t cap = strlen(in) + 1, len = 0;
	char *buf = NULL;
	size_t *m = NULL;
	int ret = -ENOMEM;

	/* Two passes would avoid the reallocs; policies are small. */
	for (size_t pass = 0; pass < 2; pass++) {
		len = 0;
		for (size_t i = 0; in[i];) {
			const char *val = NULL;
			size_t start = i, nlen = 0, next = i + 1;
			const char *name = NULL;

			if (in[i] == '\\' && in[i + 1]) {
				/* "\$" stays escaped: a literal '$' for the
				 * glob. */
				for (size_t k = 0; k < 2; k++, len++, i++) {
					if (pass) {
						buf[len] = in[i];
						if (m)
							m[len] = i;
					}
				}
				continue;
			}
			if (in[i] == '$' && in[i + 1] == '{') {
				name = in + i + 2;
				while (name_char(name[nlen], nlen == 0))
					nlen++;
				if (name[nlen] != '}' || nlen == 0) {
					*bad = start;
					snprintf(msg, msglen,
						 "malformed ${...} variable");
					snprintf(hint, hintlen, "%s", var_hint);
					ret = -EINVAL;
					goto out;
				}
				next = i + 3 + nlen;
			} else if (in[i] == '$' && name_char(in[i + 1], true)) {
				name = in + i + 1;
				while (name_char(name[nlen], nlen == 0))
					nlen++;
				next = i + 1 + nlen;
			}
			if (name) {
				bool known;

				val = lookup(v, name, nlen, &known);
				if (val &&
				    !value_of(val, glob, vbuf, sizeof(vbuf))) {
					*bad = start;
					snprintf(msg, msglen,
						 "variable $%.*s is too long",
						 (int)nlen, name);
					hint[0] = '\0';
					ret = -EINVAL;
					goto out;
				}
				if (val)
					val = vbuf;
				if (!val) {
					*bad = start;
					snprintf(
					    msg, msglen,
					    known ? "variable $%.*s is not set"
						  : "unknown variable $%.*s",
					    (int)nlen, name);
					snprintf(hint, hintlen, "%s", var_hint);
					ret = -EINVAL;
					goto out;
				}
				size_t vlen = strlen(val);

				/* "$CWD/x" with CWD "/" must not become "//x".
				 */
				while (vlen > 0 && val[vlen - 1] == '/' &&
				       in[next] == '/')
					vlen--;
				for (size_t k = 0; k < vlen; k++, len++) {
					if (pass) {
						buf[len] = val[k];
						if (m)
							m[len] = start;
					}
				}
				i = next;
				continue;
			}
			if (pass) {
				buf[len] = in[i];
				if (m)
					m[len] = i;
			}
			len++;
			i++;
		}
		if (pass == 0) {
			cap = len + 1;
			buf = malloc(cap);
			if (!buf)
				goto out;
			if (map) {
				m = malloc(cap * sizeof(*m));
				if (!m)
					goto out;
			}
		}
	}
	buf[len] = '\0';
	if (m)
		m[len] = strlen(in);
	*out = buf;
	if (map)
		*map = m;
	return 0;
out:
	free(buf);
	free(m);
	return ret;
}
