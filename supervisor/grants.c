/* The grants file and what a grant holds for; see grants.h. */
#define _GNU_SOURCE
#include "supervisor/grants.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/glob.h"
#include "common/names.h"
#include "supervisor/envdiff.h"
#include "supervisor/fmt.h"
#include "supervisor/session.h"

#define LINE_MAX_BYTES (64 * 1024)

static const char *const scope_names[] = {"once", "session", "always"};

const char *hx_grant_scope_name(enum hx_ask_scope s)
{
	return (unsigned)s <= HX_ASK_ALWAYS ? scope_names[s] : "?";
}

int hx_grant_scope_parse(const char *s)
{
	for (int i = 0; i <= HX_ASK_ALWAYS; i++)
		if (s && !strcmp(s, scope_names[i]))
			return i;
	return -1;
}

int hx_grants_path(char *out, size_t size)
{
	char dir[PATH_MAX];
	int r = hx_session_state_dir(dir, sizeof(dir));

	if (r)
		return r;
	r = snprintf(out, size, "%s/grants.jsonl", dir);
	return r < 0 || (size_t)r >= size ? -ENAMETOOLONG : 0;
}

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool known_access(const char *a)
{
	for (int op = HX_OP_READ; a && op < HX_OP_CONNECT; op++)
		if (!strcmp(a, hx_op_name((enum hx_op)op)))
			return true;
	return false;
}

/* Whether g is a grant this code can judge by: what grants.h says. */
static const char *malformed(json_t *g)
{
	const char *kind = str(g, "kind"), *v = str(g, "verdict");
	json_t *argv = json_object_get(g, "argv"), *w;
	size_t i;

	if (!json_is_object(g))
		return "not a JSON object";
	if (!str(g, "id"))
		return "no id";
	if (!v || (strcmp(v, "allow") && strcmp(v, "deny")))
		return "verdict is not allow or deny";
	if (!kind)
		return "no kind";
	if (!strcmp(kind, "exec")) {
		if (!str(g, "path") || str(g, "path")[0] != '/')
			return "an exec grant without an absolute path";
		if (argv && !json_is_array(argv))
			return "argv is not a list";
		json_array_foreach(
		    argv, i,
		    w) if (!json_is_string(w)) return "argv holds a non-string";
		return NULL;
	}
	if (!strcmp(kind, "file")) {
		size_t off;
		const char *why;

		if (!str(g, "glob") || str(g, "glob")[0] != '/' ||
		    hx_glob_validate(str(g, "glob"), &off, &why))
			return "a file grant without a valid absolute glob";
		if (!known_access(str(g, "access")))
			return "a file grant without a known access";
		return NULL;
	}
	if (!strcmp(kind, "net"))
		return str(g, "target") ? NULL : "a net grant without target";
	return "kind is not exec, file or net";
}

int hx_grants_load(const char *path, json_t *arr, char *err, size_t elen)
{
	char *line = NULL;
	size_t cap = 0, no = 0;
	ssize_t n;
	FILE *f;
	int fd;

	if (err && elen)
		err[0] = '\0';
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -errno;
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		json_error_t je;
		json_t *g;
		const char *why;

		no++;
		if (n <= 1 || n > LINE_MAX_BYTES)
			continue;
		g = json_loads(line, JSON_REJECT_DUPLICATES, &je);
		why = g ? malformed(g) : je.text;
		if (why) {
			if (err && elen && !err[0])
				snprintf(err, elen, "%s:%zu: %s", path, no,
					 why);
			json_decref(g);
			continue;
		}
		json_array_append_new(arr, g);
	}
	free(line);
	fclose(f);
	return 0;
}

int hx_grants_append(const char *path, json_t *g)
{
	char *s = json_dumps(g, JSON_COMPACT);
	size_t len;
	ssize_t n;
	int fd, e = 0;

	if (!s)
		return -ENOMEM;
	len = strlen(s);
	s[len] = '\n'; /* over the NUL: written with its length */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		e = -errno;
	} else {
		n = write(fd, s, len + 1);
		if (n != (ssize_t)(len + 1))
			e = n < 0 ? -errno : -EIO;
		if (fsync(fd) && !e)
			e = -errno;
		close(fd);
	}
	free(s);
	return e;
}

int hx_grants_revoke(const char *path, const char *id)
{
	char tmp[PATH_MAX], *line = NULL;
	size_t cap = 0;
	bool found = false;
	ssize_t n;
	FILE *in, *out;
	int fd, e = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	in = fdopen(fd, "r");
	if (!in) {
		close(fd);
		return -errno;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!out) {
		e = -errno;
		if (fd >= 0)
			close(fd);
		fclose(in);
		return e;
	}
	/* Every other line is kept as it was, malformed ones too. */
	while ((n = getline(&line, &cap, in)) >= 0) {
		json_t *g = json_loads(line, 0, NULL);
		const char *gid = g ? str(g, "id") : NULL;

		if (gid && !strcmp(gid, id))
			found = true;
		else if (fwrite(line, 1, (size_t)n, out) != (size_t)n)
			e = -EIO;
		json_decref(g);
	}
	free(line);
	fclose(in);
	if (fflush(out) || fsync(fileno(out)))
		e = e ? e : -errno;
	fclose(out);
	if (!e && !found)
		e = -ENOENT;
	if (!e && rename(tmp, path))
		e = -errno;
	if (e)
		unlink(tmp);
	return e;
}

/* argv[1..] against the grant's globs; a last "**" takes the rest. */
static bool argv_holds(json_t *globs, const char *const *argv, size_t argc)
{
	size_t n = json_array_size(globs), i;

	if (!globs)
		return true; /* no argv: any */
	for (i = 0; i < n; i++) {
		const char *p = json_string_value(json_array_get(globs, i));

		if (i == n - 1 && !strcmp(p, "**"))
			return true;
		if (i + 1 >= argc || !hx_glob_match(p, argv[i + 1]))
			return false;
	}
	return n + 1 == argc;
}

/* The file's identity as a grant keeps it: a file put at the path
 * since (a new inode, or an old inode number given again: its change
 * time and size differ) is not the one granted. */
static bool same_file(json_t *g, const struct stat *st)
{
	static const char *const keys[] = {"dev", "ino", "ctime_ns", "size"};
	json_int_t have[] = {(json_int_t)st->st_dev, (json_int_t)st->st_ino,
			     (json_int_t)st->st_ctim.tv_sec * 1000000000 +
				 st->st_ctim.tv_nsec,
			     (json_int_t)st->st_size};

	for (size_t i = 0; i < 4; i++) {
		json_t *v = json_object_get(g, keys[i]);

		if (json_is_integer(v) && json_integer_value(v) != have[i])
			return false;
	}
	return true;
}

/* An exec's environment as it differs from the session's, but for a
 * shell's bookkeeping (envdiff.h), is the grant's: one given with none
 * (or before grants named it) holds for none, and not for GIT_DIR set. */
static bool env_holds(json_t *g, const struct hx_ask_subject *s)
{
	const char *want = str(g, "env_sha256");
	char sum[65];

	if (s->env_unread)
		return false;
	hx_envdiff_shown_sum(s->env, s->env_len, sum);
	return !strcmp(want ? want : "", sum);
}

static bool exec_holds(json_t *g, const struct hx_ask_subject *s)
{
	struct stat st;

	if (s->op != HX_OP_EXEC || !s->path || strcmp(str(g, "path"), s->path))
		return false;
	if (s->image)
		st = *s->image;
	else if (stat(s->path, &st))
		return false;
	return same_file(g, &st) &&
	       argv_holds(json_object_get(g, "argv"), s->argv, s->argc) &&
	       env_holds(g, s);
}

static bool file_holds(json_t *g, const struct hx_ask_subject *s)
{
	if (s->op == HX_OP_EXEC || s->addr || !s->path ||
	    strcmp(str(g, "access"), hx_op_name(s->op)))
		return false;
	return hx_glob_match(str(g, "glob"), s->path) &&
	       (!s->path2 || hx_glob_match(str(g, "glob"), s->path2));
}

static bool net_holds(json_t *g, const struct hx_ask_subject *s)
{
	const char *t = str(g, "target");
	char hp[512];

	if (!s->addr)
		return false;
	if (!strcmp(t, s->addr))
		return true;
	for (size_t i = 0; i < s->nnames; i++) {
		snprintf(hp, sizeof(hp), "%s:%u", s->names[i], s->port);
		if (!strcmp(t, hp))
			return true;
	}
	return false;
}

json_t *hx_grants_match(json_t *arr, const struct hx_ask_subject *s)
{
	size_t i;
	json_t *g;

	json_array_foreach(arr, i, g)
	{
		const char *kind = str(g, "kind");

		if (!strcmp(kind, "exec")   ? exec_holds(g, s)
		    : !strcmp(kind, "file") ? file_holds(g, s)
					    : net_holds(g, s))
			return g;
	}
	return NULL;
}

static json_t *argv_globs(const struct hx_ask_subject *s, unsigned prefix)
{
	json_t *a = json_array();
	char buf[PATH_MAX + 32];

	for (size_t i = 1; a && i < s->argc; i++) {
		if (prefix && i > prefix) {
			json_array_append_new(a, json_string("**"));
			break;
		}
		if (hx_glob_escape(s->argv[i], buf, sizeof(buf)) == 0)
			json_array_append_new(a, json_string(buf));
		else /* too long to name: nothing beyond it is granted */
			break;
	}
	if (a && prefix && s->argc <= prefix + 1)
		json_array_append_new(a, json_string("**"));
	return a;
}

/* An exec grant's environment: the SHA-256 it is keyed on and, to read,
 * the names it sets ("-NAME": unsets), never a value (it may be a
 * token, and the grants file is kept for years). */
static void env_key(json_t *g, const struct hx_ask_subject *s)
{
	json_t *names;
	char sum[65];

	hx_envdiff_shown_sum(s->env, s->env_len, sum);
	if (!sum[0] || !(names = json_array()))
		return;
	json_object_set_new(g, "env_sha256", json_string(sum));
	for (size_t i = 0; s->env && i < s->env_len;) {
		const char *e = s->env + i;
		size_t n = strcspn(e, "=");

		i += strlen(e) + 1;
		if (!hx_envdiff_bookkeeping(e))
			json_array_append_new(names, json_stringn(e, n));
	}
	json_object_set_new(g, "env", names);
}

/* Whether every string a grant of s would keep is UTF-8, which jansson
 * takes only: an argv word of other bytes was dropped from the grant's
 * list (json_string gave NULL), and "session" to git push origin
 * <\377> main held for git push origin main, never shown. A grant
 * names the call's bytes exactly or is not made (the answer holds for
 * the call asked, as "once"). */
bool hx_grant_can_name(const struct hx_ask_subject *s, const char *dir)
{
	if (s->path && !hx_utf8_valid(s->path))
		return false;
	if (s->path2 && !hx_utf8_valid(s->path2))
		return false;
	if (dir && !hx_utf8_valid(dir))
		return false;
	for (size_t i = 0; s->argv && i < s->argc; i++)
		if (!hx_utf8_valid(s->argv[i]))
			return false;
	for (size_t i = 0; s->names && i < s->nnames; i++)
		if (!hx_utf8_valid(s->names[i]))
			return false;
	return true;
}

json_t *hx_grant_new(const struct hx_ask_subject *s, enum hx_verdict v,
		     enum hx_ask_scope scope, unsigned prefix, const char *dir)
{
	json_t *g = json_object();
	char id[16], when[32], glob[PATH_MAX + 8];
	unsigned char r[4] = {0};
	struct stat st;
	time_t now = time(NULL);
	struct tm tm;

	if (!g || !hx_grant_can_name(s, dir)) {
		json_decref(g);
		return NULL;
	}
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		memcpy(r, &now, sizeof(r));
	snprintf(id, sizeof(id), "g-%02x%02x%02x%02x", r[0], r[1], r[2], r[3]);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(g, "id", json_string(id));
	json_object_set_new(g, "verdict", json_string(hx_verdict_name(v)));
	json_object_set_new(g, "scope",
			    json_string(hx_grant_scope_name(scope)));
	if (s->op == HX_OP_EXEC) {
		json_object_set_new(g, "kind", json_string("exec"));
		json_object_set_new(g, "path", json_string(s->path));
		if (s->image || !stat(s->path, &st)) {
			const struct stat *f = s->image ? s->image : &st;

			json_object_set_new(
			    g, "dev", json_integer((json_int_t)f->st_dev));
			json_object_set_new(
			    g, "ino", json_integer((json_int_t)f->st_ino));
			json_object_set_new(
			    g, "ctime_ns",
			    json_integer((json_int_t)f->st_ctim.tv_sec *
					     1000000000 +
					 f->st_ctim.tv_nsec));
			json_object_set_new(
			    g, "size", json_integer((json_int_t)f->st_size));
		}
		json_object_set_new(g, "argv", argv_globs(s, prefix));
		env_key(g, s);
	} else if (s->addr) {
		json_object_set_new(g, "kind", json_string("net"));
		if (s->nnames)
			snprintf(glob, sizeof(glob), "%s:%u", s->names[0],
				 s->port);
		json_object_set_new(g, "target",
				    json_string(s->nnames ? glob : s->addr));
	} else {
		json_object_set_new(g, "kind", json_string("file"));
		json_object_set_new(g, "access",
				    json_string(hx_op_name(s->op)));
		if (hx_glob_escape(dir ? dir : s->path, glob,
				   sizeof(glob) - 3)) {
			json_decref(g);
			return NULL;
		}
		if (dir) /* a batch: files in that directory, not below */
			strcat(glob, "/*");
		json_object_set_new(g, "glob", json_string(glob));
	}
	if (s->rule)
		json_object_set_new(g, "rule", json_string(s->rule));
	json_object_set_new(g, "created", json_string(when));
	return g;
}
