/* git configuration that names code; see gitconf.h. */
#define _GNU_SOURCE
#include "supervisor/gitconf.h"
#include "policy/gitforce.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/path.h"
#include "common/glob.h"
#include "common/readat.h"
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
    {"core", "fsmonitor"},
    {"core", "sshcommand"},
    {"core", "editor"},
    {"core", "pager"},
    {"core", "askpass"},
    {"sequence", "editor"},
    {"gpg", "program"},
    {"credential", "helper"},
    {"filter", "clean"},
    {"filter", "smudge"},
    {"filter", "process"},
    {"diff", "textconv"},
    {"diff", "command"},
    {"merge", "driver"},
    {"alias", "*"},
    /* each command's pager, git add -p's filter, an external diff,
     * the tools, a local remote's programs (git runs them itself) */
    {"pager", "*"},
    {"interactive", "difffilter"},
    {"diff", "external"},
    {"difftool", "cmd"},
    {"mergetool", "cmd"},
    {"core", "gitproxy"},
    {"remote", "uploadpack"},
    {"remote", "receivepack"},
    {"uploadpack", "packobjectshook"},
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

static void add_secret(struct hx_gitconf *c, const char *path)
{
	char norm[PATH_MAX];

	if (c->nsecrets == HX_GITCONF_SECRETS ||
	    hx_path_normalize(NULL, path, norm, sizeof(norm)) < 0 ||
	    hx_glob_escape(norm, c->secrets[c->nsecrets], PATH_MAX))
		return;
	c->sptrs[c->nsecrets] = c->secrets[c->nsecrets];
	c->nsecrets++;
}

/* The value of option opt ("--file", "-f") in a helper's words v:
 * "--file=X", "--file X", "-f X"; into out. */
static bool helper_opt(const char *v, const char *opt, char *out, size_t size)
{
	size_t k = strlen(opt), n;
	const char *s;

	for (s = v; (s = strstr(s, opt)); s += k) {
		if (s != v && s[-1] != ' ' && s[-1] != '\t')
			continue;
		if (s[k] != '=' && s[k] != ' ')
			continue;
		s += k + 1;
		s += strspn(s, " ");
		n = strcspn(s, " \t");
		if (!n || n >= size)
			return false;
		memcpy(out, s, n);
		out[n] = '\0';
		return true;
	}
	return false;
}

/* A credential helper's value: where it keeps what it is given. */
static void add_helper(struct hx_gitconf *c, const char *v, const char *cwd,
		       const char *home)
{
	char f[PATH_MAX], p[PATH_MAX];

	v += strspn(v, " \t!");
	if (!strncmp(v, "git credential-", 15))
		v += 15;
	else if (!strncmp(v, "git-credential-", 15))
		v += 15;
	if (!strncmp(v, "store", 5) && helper_opt(v, "--file", f, sizeof(f)) &&
	    !absolute(f, cwd, home, p, sizeof(p)))
		add_secret(c, p);
	else if (!strncmp(v, "netrc", 5) &&
		 (helper_opt(v, "-f", f, sizeof(f)) ||
		  helper_opt(v, "--file", f, sizeof(f))) &&
		 !absolute(f, cwd, home, p, sizeof(p)))
		add_secret(c, p);
	else if (!strncmp(v, "cache", 5) &&
		 helper_opt(v, "--socket", f, sizeof(f)) &&
		 !absolute(f, cwd, home, p, sizeof(p)))
		add(c, p, "");
}

/* The file at path for reading when it is a regular file, or NULL: a
 * fifo as a configuration, an include or a .git file (one in a
 * directory of another's beneath the work tree, now that three levels
 * are looked at) held the start in its open for good (thirty-third
 * attack review, part a); a device read without end. */
static FILE *open_regular(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		close(fd);
		return NULL;
	}
	return f;
}

/* The files being parsed, each including the next (a file that includes
 * itself, or one above it, is parsed once). */
struct chain {
	dev_t dev;
	ino_t ino;
	const struct chain *up;
};

/* Files parsed at most, a find (twice the nested repositories looked
 * at): 30 includes of itself in a nested repository's config, each
 * parsed again four deep, were 837,930 parses, and the start never came
 * (thirty-third attack review, part a); a chain of distinct files, each
 * including the next 30 times, is bounded by this. */
#define MAX_PARSES 8192
#define MAX_READ   (64u << 20) /* bytes of them, a find */

static void parse_in(struct hx_gitconf *c, const char *file, const char *cwd,
		     const char *home, const struct chain *up, int depth);

static void parse(struct hx_gitconf *c, const char *file, const char *cwd,
		  const char *home, int depth)
{
	parse_in(c, file, cwd, home, NULL, depth);
}

/* Whether the file at f is one of chain's (it includes itself). */
static bool in_chain(FILE *f, struct chain *me)
{
	struct stat st;

	if (fstat(fileno(f), &st))
		return true;
	me->dev = st.st_dev;
	me->ino = st.st_ino;
	for (const struct chain *k = me->up; k; k = k->up)
		if (k->dev == me->dev && k->ino == me->ino)
			return true;
	return false;
}

static void parse_in(struct hx_gitconf *c, const char *file, const char *cwd,
		     const char *home, const struct chain *up, int depth)
{
	char line[PATH_MAX + 256], section[64] = "", dir[PATH_MAX], p[PATH_MAX];
	struct chain me = {.up = up};
	off_t last = 0;
	FILE *f;
	char *slash, *key, *v;

	if (c->nparsed >= MAX_PARSES || !(f = open_regular(file)))
		return;
	c->nparsed++;
	if (in_chain(f, &me)) {
		fclose(f);
		return;
	}
	snprintf(dir, sizeof(dir), "%s", file);
	if ((slash = strrchr(dir, '/')))
		*slash = '\0';
	while (c->nread < MAX_READ && fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t");
		off_t at = ftello(f);

		/* what fgets took, NULs too (a file of them has no line) */
		c->nread += at > last ? (size_t)(at - last) : 1;
		last = at;
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
		if (!strcasecmp(section, "credential") &&
		    !strcasecmp(key, "helper"))
			add_helper(c, v, cwd, home);
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
				parse_in(c, p, cwd, home, &me, depth + 1);
		}
	}
	fclose(f);
}

/* The first line of the file at path, its "gitdir: " taken off when
 * prefix, made absolute from base into out. */
static bool read_link_file(const char *path, const char *prefix,
			   const char *base, char *out, size_t size)
{
	char line[PATH_MAX + 16], *v = line;
	FILE *f = open_regular(path);
	bool ok;

	if (!f)
		return false;
	ok = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	if (!ok || (prefix && strncmp(line, prefix, strlen(prefix))))
		return false;
	v += prefix ? strlen(prefix) : 0;
	v[strcspn(v, "\r\n")] = '\0';
	return *v && !absolute(v, base, NULL, out, size);
}

/* The repository around cwd, as git finds it: the top of its work tree
 * (the first directory up holding a .git), its git directory (a
 * gitfile's "gitdir:") and its common directory (a worktree's
 * commondir). A session started in a subdirectory read no repository
 * configuration before (cwd/.git/config), nor one in a worktree, whose
 * .git is a file. */
static bool find_repo(const char *cwd, char *top, char *gitdir, char *common)
{
	char p[PATH_MAX];
	struct stat st;

	if (hx_path_normalize(NULL, cwd, top, PATH_MAX) < 0)
		return false;
	for (;;) {
		if (snprintf(p, sizeof(p), "%s/.git",
			     strcmp(top, "/") ? top : "") >= (int)sizeof(p))
			return false;
		if (stat(p, &st))
			st.st_mode = 0;
		if (S_ISDIR(st.st_mode)) {
			memcpy(gitdir, p, sizeof(p));
			break;
		}
		if (S_ISREG(st.st_mode) &&
		    read_link_file(p, "gitdir: ", top, gitdir, PATH_MAX))
			break;
		if (!strcmp(top, "/"))
			return false;
		*strrchr(top, '/') = '\0';
		if (!*top)
			strcpy(top, "/");
	}
	if (snprintf(p, sizeof(p), "%s/commondir", gitdir) >= (int)sizeof(p) ||
	    !read_link_file(p, NULL, gitdir, common, PATH_MAX))
		snprintf(common, PATH_MAX, "%s", gitdir);
	return true;
}

/* Each glob beneath top (not in its .git) again beneath mirror: a
 * worktree's files are merged into the checkout at top, so the file of
 * the worktree is the one that becomes the configured one. */
static void add_mirrored(struct hx_gitconf *c, const char *top,
			 const char *mirror)
{
	char t[PATH_MAX], m[PATH_MAX], et[PATH_MAX], em[PATH_MAX];
	char p[2 * PATH_MAX + 8];
	size_t n = c->n, k;

	if (!realpath(top, t) || !realpath(mirror, m) ||
	    hx_glob_escape(t, et, sizeof(et)) ||
	    hx_glob_escape(m, em, sizeof(em)))
		return;
	k = strlen(et);
	for (size_t i = 0; i < n && c->n < HX_GITCONF_MAX; i++) {
		const char *g = c->globs[i];

		if (strncmp(g, et, k) || g[k] != '/' ||
		    !strncmp(g + k, "/.git/", 6) ||
		    snprintf(p, sizeof(p), "%s%s", em, g + k) >= PATH_MAX + 8)
			continue;
		strcpy(c->globs[c->n], p);
		c->ptrs[c->n] = c->globs[c->n];
		c->n++;
	}
}

/* The configuration of the repositories beneath the work tree (a
 * workspace of clones, a vendored one, a submodule), each read as the
 * project's is, its relative values its own work tree's: a nested
 * repository's core.hooksPath (.githooks, tracked) was the agent's to
 * write, and the user's next commit there ran its hook (thirty-second
 * attack review, part a). Looked for a level at a time, the shallow
 * first: depth first, a node_modules of 4,096 packages spent the bound
 * before the clone beside it was looked at, a clone three levels down
 * (src/github.com/org/repo) was never, nor a submodule or a linked
 * worktree, whose .git is a file (thirty-third attack review, part a).
 * Start only; bounded (NESTED_ENTRIES directories looked at, the first
 * NESTED_PER_DIR of each). */
#define NESTED_ENTRIES 4096
#define NESTED_LEVELS  3
#define NESTED_PER_DIR 512 /* a package store's, not a workspace's */

/* A repository's own configuration: its common dir's config, and its
 * worktree's config.worktree; relative values are top's. */
static void parse_repo(struct hx_gitconf *c, const char *gitdir,
		       const char *common, const char *top, const char *home)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s/config", common) < (int)sizeof(p))
		parse(c, p, top, home, 0);
	if (snprintf(p, sizeof(p), "%s/config.worktree", gitdir) <
	    (int)sizeof(p))
		parse(c, p, top, home, 0);
}

/* Whether sub is a repository's work tree (its .git a directory, or a
 * file naming one; a symlink to either followed, as git does), its
 * configuration parsed. */
static bool parse_repo_at(struct hx_gitconf *c, const char *sub,
			  const char *home)
{
	char p[PATH_MAX], top[PATH_MAX], gitdir[PATH_MAX], common[PATH_MAX];
	struct stat st;

	if (snprintf(p, sizeof(p), "%s/.git", sub) >= (int)sizeof(p) ||
	    stat(p, &st) || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
		return false;
	if (!find_repo(sub, top, gitdir, common))
		return true; /* a .git git reads no repository from */
	parse_repo(c, gitdir, common, top, home);
	return true;
}

/* The directories of dir: each a repository's parsed, the others put in
 * next (when not NULL) for the next level. */
static void scan_level(struct hx_gitconf *c, const char *dir, const char *home,
		       size_t *budget, char **next, size_t *nnext)
{
	char sub[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);
	size_t here = NESTED_PER_DIR;

	while (d && *budget && here && (e = readdir(d))) {
		if ((e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) ||
		    !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, ".git") ||
		    snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >=
			(int)sizeof(sub))
			continue;
		(*budget)--;
		here--;
		if (!parse_repo_at(c, sub, home) && next &&
		    (next[*nnext] = strdup(sub)))
			(*nnext)++;
	}
	if (d)
		closedir(d);
}

static void parse_nested(struct hx_gitconf *c, const char *top,
			 const char *home)
{
	size_t budget = NESTED_ENTRIES, n = 1, nnext;
	char **now = calloc(1, sizeof(char *)), **next;

	if (!now || !(now[0] = strdup(top))) {
		free(now);
		return;
	}
	for (int level = 1; level <= NESTED_LEVELS; level++) {
		/* at most one a directory looked at: the budget bounds it */
		next = level < NESTED_LEVELS
			   ? calloc(NESTED_ENTRIES, sizeof(char *))
			   : NULL;
		nnext = 0;
		for (size_t i = 0; i < n; i++) {
			scan_level(c, now[i], home, &budget, next, &nnext);
			free(now[i]);
		}
		free(now);
		now = next;
		n = nnext;
		if (!now)
			break;
	}
	for (size_t i = 0; now && i < n; i++)
		free(now[i]);
	free(now);
}

void hx_gitconf_find(const char *cwd, const char *mirror, const char *home,
		     struct hx_gitconf *c)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	char p[PATH_MAX], top[PATH_MAX], gitdir[PATH_MAX], common[PATH_MAX];
	bool repo = find_repo(cwd, top, gitdir, common);

	/* Relative values are the work tree's top's (git runs hooks and
	 * programs there), not the session's start directory. */
	if (repo)
		cwd = top;
	c->n = c->nsecrets = c->nparsed = c->nread = 0;
	c->objects[0] = '\0';
	if (repo &&
	    snprintf(p, sizeof(p), "%s/objects", common) < (int)sizeof(p) &&
	    !realpath(p, c->objects))
		c->objects[0] = '\0';
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
	if (repo) {
		parse_repo(c, gitdir, common, cwd, home);
		if (mirror)
			add_mirrored(c, top, mirror);
	}
	parse_nested(c, cwd, home);
}

/* ---- what the agent's own repositories run (hx_gitconf_place) ---- */

/* The part of path after its last "/.git/", or NULL. */
static const char *git_tail(const char *path)
{
	const char *t = NULL, *s = path;

	while ((s = strstr(s, "/.git/"))) {
		t = s + 6;
		s += 5;
	}
	return t;
}

bool hx_gitconf_in_git(const char *path)
{
	size_t n = strlen(path);

	return git_tail(path) || (n >= 5 && !strcmp(path + n - 5, "/.git"));
}

/* Whether tail (relative, its last component leaf) has a component
 * comp before the leaf. */
static bool has_dir(const char *tail, const char *leaf, const char *comp)
{
	size_t k = strlen(comp);

	for (const char *s = tail; s < leaf; s = strchr(s, '/') + 1)
		if (!strncmp(s, comp, k) && s[k] == '/')
			return true;
	return false;
}

/* remotes/NAME (of a git directory, a submodule's too): a remote of the
 * old layout ("Push: +main:main" forces git push NAME), which git no
 * longer writes; "remotes" itself, a link or a directory moved in. Not
 * a submodule's or a worktree's directory so named. */
static bool old_remote(const char *tail, const char *leaf)
{
	const char *r = leaf, *b;

	if (strcmp(leaf, "remotes")) {
		if (leaf - tail < 8 || strncmp(leaf - 8, "remotes/", 8))
			return false;
		r = leaf - 8;
		if (r > tail && r[-1] != '/')
			return false;
	}
	if (r == tail)
		return true;
	for (b = r - 1; b > tail && b[-1] != '/'; b--)
		; /* the component before: b up to r */
	return !(r - b == 8 && !strncmp(b, "modules/", 8)) &&
	       !(r - b == 10 && !strncmp(b, "worktrees/", 10));
}

enum hx_gitconf_place hx_gitconf_place(const char *path, bool in_project)
{
	const char *leaf = strrchr(path, '/'), *t = git_tail(path);
	size_t n;

	leaf = leaf ? leaf + 1 : path;
	if (!strcmp(leaf, ".git"))
		return HX_GITCONF_CODE;
	if (!t)
		return in_project && !strcmp(leaf, "HEAD") ? HX_GITCONF_CODE
							   : HX_GITCONF_NONE;
	/* Refs and reflogs may be named anything (a branch "config"). */
	if (has_dir(t, leaf, "refs") || has_dir(t, leaf, "logs"))
		return HX_GITCONF_NONE;
	if (!strcmp(leaf, "config") || !strcmp(leaf, "config.worktree"))
		return HX_GITCONF_CONFIG;
	if (!strcmp(leaf, "commondir"))
		return HX_GITCONF_CODE;
	if (old_remote(t, leaf))
		return HX_GITCONF_CODE;
	n = strlen(leaf);
	if (leaf - t >= 6 && !strncmp(leaf - 6, "hooks/", 6) &&
	    (leaf - t == 6 || leaf[-7] == '/') &&
	    (n < 7 || strcmp(leaf + n - 7, ".sample")))
		return HX_GITCONF_CODE;
	return HX_GITCONF_NONE;
}

/* Sections any key of which names code or other configuration. */
static const char *const code_sections[] = {
    "include",	 "includeif", "hook",	    "pager", "filter",
    "mergetool", "difftool",  "browser",    "man",   "guitool",
    "protocol",	 "lfs",	      "credential",
};
/* Keys (in any section) whose value git runs. */
static const char *const code_keys[] = {
    "fsmonitor",  "hookspath",	"editor",     "pager",		 "askpass",
    "gitproxy",	  "program",	"helper",     "driver",		 "textconv",
    "clean",	  "smudge",	"process",    "external",	 "receivepack",
    "uploadpack", "difffilter", "smtpserver", "packobjectshook", "templatedir",
    "sshcommand", "browser",	"tool",
};

static bool in_list(const char *s, const char *const *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(s, l[i]))
			return true;
	return false;
}

#define NELEM(a) (sizeof(a) / sizeof(*(a)))

/* remote.X.push = +... (forced) or :... (deleted), remote.X.mirror
 * (everything forced): what a plain git push then does. v: the '=' or
 * NULL (a bare key is true). */
static bool forces_push(const char *sec, const char *key, const char *v,
			const char *e)
{
	return !strcasecmp(sec, "remote") &&
	       hx_git_remote_forces(key, strlen(key), v ? v + 1 : NULL, e);
}

/* One key line (s to e) of section sec: whether it names code (or
 * forces a push). */
static bool key_names_code(const char *sec, const char *s, const char *e)
{
	char key[64];
	size_t k = 0, kl;
	const char *v;

	while (s < e && !isalpha((unsigned char)*s))
		s++; /* whitespace, a BOM: erring toward a key */
	while (s + k < e && (isalnum((unsigned char)s[k]) || s[k] == '-'))
		k++;
	if (!k)
		return false;
	snprintf(key, sizeof(key), "%.*s", (int)(k < 63 ? k : 63), s);
	v = memchr(s + k, '=', (size_t)(e - s - k));
	kl = strlen(key);
	if (in_list(sec, code_sections, NELEM(code_sections)) ||
	    in_list(key, code_keys, NELEM(code_keys)) ||
	    forces_push(sec, key, v, e) ||
	    (kl >= 7 && !strcasecmp(key + kl - 7, "command")) ||
	    (kl >= 3 && !strcasecmp(key + kl - 3, "cmd")))
		return true;
	if (!v)
		return false;
	/* "!cmd" aliases and submodule updates; the ext:: transport. */
	return memchr(v, '!', (size_t)(e - v)) ||
	       memmem(v, (size_t)(e - v), "ext::", 5);
}

static bool names_code_lines(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	char sec[64] = "";

	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p)), *s = p;

		e = e ? e : end;
		while (s < e && (isspace((unsigned char)*s) ||
				 (unsigned char)*s >= 0x80))
			s++;
		if (s < e && *s == '[') {
			size_t k = 0;

			s++;
			while (s < e && isspace((unsigned char)*s))
				s++;
			while (s + k < e && k < sizeof(sec) - 1 &&
			       (isalnum((unsigned char)s[k]) || s[k] == '-'))
				k++;
			memcpy(sec, s, k);
			sec[k] = '\0';
			/* "[core] fsmonitor = x": a key after any ']'. */
			for (const char *b = s; (b = memchr(b, ']', e - b));)
				if (key_names_code(sec, ++b, e))
					return true;
		} else if (key_names_code(sec, s, e)) {
			return true;
		}
		p = e + 1;
	}
	return false;
}

/* buf with its continuations joined into j (len bytes at most): a
 * backslash at a line's end (before "\n" or "\r\n") continues a value on
 * the next line, "push = \" and "+main:main" is "+main:main"; any other
 * backslash escapes the byte after it ("\\" continues nothing). Its
 * length, or 0 when nothing was joined. */
static size_t join_continued(const char *buf, size_t len, char *j)
{
	size_t n = 0;
	bool joined = false;

	for (size_t i = 0; i < len; i++) {
		size_t nl =
		    buf[i] != '\\' || i + 1 == len ? 0
		    : buf[i + 1] == '\n'	   ? 1
		    : buf[i + 1] == '\r' && i + 2 < len && buf[i + 2] == '\n'
			? 2
			: 0;

		if (nl) {
			i += nl;
			joined = true;
			continue;
		}
		if (buf[i] == '\\' && i + 1 < len)
			j[n++] = buf[i++]; /* an escape, kept whole */
		j[n++] = buf[i];
	}
	return joined ? n : 0;
}

bool hx_gitconf_names_code(const char *buf, size_t len)
{
	char *j;
	size_t n;
	bool code;

	/* Read as lines, and again with the continuations joined (a
	 * comment's backslash continues nothing: either may be git's). */
	if (names_code_lines(buf, len))
		return true;
	if (!memchr(buf, '\\', len))
		return false;
	if (!(j = malloc(len)))
		return true;
	n = join_continued(buf, len, j);
	code = n && names_code_lines(j, n);
	free(j);
	return code;
}

ssize_t hx_gitconf_read_checked(int dirfd, const char *name, char *buf,
				struct stat *st)
{
	ssize_t n =
	    hx_read_regular_at(dirfd, name, buf, HX_GITCONF_COPY_MAX, st);

	return n >= 0 && hx_gitconf_names_code(buf, (size_t)n) ? -EACCES : n;
}

bool hx_gitconf_file_names_code(const char *path)
{
	/* On the heap: a thread-local array is zeroed at the start of
	 * every thread of harness-exec, which makes few such renames. */
	char *buf = malloc(HX_GITCONF_COPY_MAX);
	struct stat st;
	bool code =
	    !buf || hx_gitconf_read_checked(AT_FDCWD, path, buf, &st) < 0;

	free(buf);
	return code;
}

static __thread size_t walk_seen;

static int walk_one(const char *p, const struct stat *st, int type,
		    struct FTW *w)
{
	(void)st;
	if (++walk_seen > 50000)
		return FTW_STOP; /* too many to look at: as if found */
	if (type == FTW_D && !strcmp(p + w->base, ".git"))
		return FTW_SKIP_SUBTREE; /* its files are checked as written */
	return strcmp(p + w->base, "HEAD") ? FTW_CONTINUE : FTW_STOP;
}

bool hx_gitconf_tree_has_bare(const char *dir)
{
	walk_seen = 0;
	return nftw(dir, walk_one, 16, FTW_PHYS | FTW_ACTIONRETVAL) != 0;
}
