/* The parts of an exec: wrappers unwrapped, shell scripts read; see
 * cmdview.h. Each wrapper knows which of its options take a value, so
 * the command it runs is found where it runs it, not guessed. */
#include "policy/cmdview.h"
#include "policy/gitforce.h"
#include "common/path.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A function of the script being read that runs its arguments as a
 * command ("$@" in its body): each call's words from an offset (bit k:
 * from word k, as "$k" runs; "$@" is $1) are a command too. */
struct wrap_fn {
	char name[64];
	unsigned from;
};

struct ctx {
	struct hx_cmd_view *v;
	const struct hx_workspace *ws;
	/* The script whose command is being read, and the function whose
	 * body holds it (NULL: none). */
	const struct hx_sh_script *s;
	const char *func;
	struct wrap_fn wrap[8];
	size_t nwrap;
	/* The wrappers grew in this reading (read again: a call read
	 * before its wrapper was known, in a function or an eval above
	 * the definition, was not read through); an alias was defined
	 * (a function's words may not be what they are read as): no
	 * wrappers at all. */
	bool grew, alias, no_wrap;
	/* wrapper calls read in this reading: a bound on the work a
	 * script of calls of calls makes (f f f ... each of "$1".."$9") */
	unsigned calls;
};

static void add(struct ctx *c, const char *const *argv, const unsigned *flags,
		size_t argc, const char *path, const char *dir, bool writes,
		int depth);

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* git-SUB (git-core holds one of these for each of git's builtins, and
 * git runs SUB when called so: git-push --force is git push --force):
 * SUB, or NULL for any other name. */
static const char *git_dashed_sub(const char *name)
{
	return !strncmp(name, "git-", 4) && name[4] ? name + 4 : NULL;
}

/* The name a git-SUB is read by: git, whose reader reads the rest. */
static const char *dashed_git(const char *name)
{
	return git_dashed_sub(name) ? "git" : name;
}

static unsigned fl(const struct hx_cmd_part *p, size_t i)
{
	return p->flags ? p->flags[i] : 0;
}

static struct hx_cmd_part *unparsable(struct ctx *c, const char *why)
{
	struct hx_cmd_view *v = c->v;
	struct hx_cmd_part *p =
	    &v->parts[v->nparts < HX_VIEW_MAX_PARTS ? v->nparts++
						    : HX_VIEW_MAX_PARTS - 1];

	*p = (struct hx_cmd_part){.cls = HX_CLASS_UNPARSABLE, .why = why};
	return p;
}

/* dir joined with a relative one, normalized; NULL when unknown. */
static const char *join_dir(struct ctx *c, const char *dir, const char *rel)
{
	char buf[PATH_MAX];

	if (!rel)
		return NULL;
	if (rel[0] != '/' && !dir)
		return NULL;
	if (!rel[0])
		return dir;
	if (hx_path_normalize(dir ? dir : "/", rel, buf, sizeof(buf)) < 0)
		return NULL;
	return hx_arena_strdup(&c->v->mem, buf);
}

/* Skips options of a wrapper: takes_arg lists the letters whose value
 * follows (in the same word or the next). Returns the index of the
 * first word that is not an option. */
static size_t skip_opts(const struct hx_cmd_part *p, size_t i,
			const char *takes_arg, const char *const *long_arg)
{
	while (i < p->argc && p->argv[i][0] == '-' && p->argv[i][1]) {
		const char *a = p->argv[i++];

		if (!strcmp(a, "--"))
			break;
		if (a[1] == '-') {
			for (size_t k = 0; long_arg && long_arg[k]; k++)
				if (!strcmp(a, long_arg[k]))
					i++; /* "--opt VALUE"; "--opt=V" is one
					      */
			continue;
		}
		for (const char *o = a + 1; *o; o++)
			if (strchr(takes_arg, *o)) {
				if (!o[1])
					i++;
				break;
			}
	}
	return i;
}

/* The rest of p from word i, as a part of its own. */
static void rest(struct ctx *c, const struct hx_cmd_part *p, size_t i,
		 const char *dir, int depth)
{
	if (i >= p->argc)
		return;
	add(c, p->argv + i, p->flags ? p->flags + i : NULL, p->argc - i, NULL,
	    dir, p->writes, depth + 1);
}

/* Which positional parameter w is, as a command name: 1 for "$@",
 * "$*" and "$1" (their first word), k for "$k"; 0 for anything else. */
static unsigned positional(const char *w)
{
	if (w[0] != '$')
		return 0;
	w++;
	if (w[0] == '{' && w[1] && w[2] == '}' && !w[3])
		w++;
	else if (!w[0] || w[1])
		return 0;
	if (w[0] == '@' || w[0] == '*')
		return 1;
	return w[0] >= '1' && w[0] <= '9' ? (unsigned)(w[0] - '0') : 0;
}

/* What argv runs past "builtin" and "command" and their options
 * (command -p X runs X, as X does). */
static const char *builtin_named(const char *const *argv, size_t argc)
{
	size_t k = 0;

	while (k + 1 < argc &&
	       (!strcmp(argv[k], "builtin") || !strcmp(argv[k], "command") ||
		(k && argv[k][0] == '-')))
		k++;
	return argv[k];
}

/* Whether argv may set or shift the parameters of the function it runs
 * in: set and shift, also as "builtin X" or "command -p X", and what
 * runs a text the reader does not list among the function's commands
 * (eval, source, ., trap). */
static bool moves(const char *const *argv, size_t argc)
{
	static const char *const movers[] = {"set",    "shift", "eval",
					     "source", ".",	"trap"};
	const char *name = builtin_named(argv, argc);

	for (size_t m = 0; m < sizeof(movers) / sizeof(movers[0]); m++)
		if (!strcmp(name, movers[m]))
			return true;
	return false;
}

/* Whether the body of function f may move its parameters: what its
 * "$@" runs is then not its callers' words as they are. */
static bool moves_params(const struct hx_sh_script *s, const char *f)
{
	for (size_t i = 0; i < s->ncmds; i++) {
		const struct hx_sh_cmd *sc = &s->cmds[i];

		if (sc->func && !strcmp(sc->func, f) &&
		    moves(sc->argv, sc->argc))
			return true;
	}
	return false;
}

/* A command named by a positional parameter inside a function's body:
 * it is what the function's callers give it, read at each call (the
 * script's commands list every call). Returns false when it cannot be
 * so read. */
static bool wrapped(struct ctx *c, const char *w)
{
	unsigned k = positional(w);
	size_t i;

	/* bash calls command_not_found_handle itself, with any unknown
	 * command's words: its calls are not in the script */
	if (!k || !c->func || !c->s || c->no_wrap ||
	    !strcmp(c->func, "command_not_found_handle") ||
	    strlen(c->func) >= sizeof(c->wrap[0].name) ||
	    moves_params(c->s, c->func))
		return false;
	for (i = 0; i < c->nwrap && strcmp(c->wrap[i].name, c->func); i++)
		;
	if (i == c->nwrap) {
		if (i == sizeof(c->wrap) / sizeof(c->wrap[0]))
			return false;
		strcpy(c->wrap[c->nwrap].name, c->func);
		c->wrap[c->nwrap++].from = 0;
	}
	if (!(c->wrap[i].from & (1u << k)))
		c->grew = true;
	c->wrap[i].from |= 1u << k;
	return true;
}

/* A call of a wrapper (argv): the words it runs, each offset a part,
 * and read again when they call a wrapper themselves (f f rm). */
static void wrapper_call(struct ctx *c, const char *const *argv,
			 const unsigned *flags, size_t argc, const char *dir,
			 bool writes, int depth)
{
	/* bash's time keyword runs a function too (time -p f rm) */
	for (bool t = false;
	     argc > 1 && !(flags[0] & HX_SHW_DYNAMIC) &&
	     (!strcmp(argv[0], "time") || (t && argv[0][0] == '-'));
	     t = true)
		argv++, flags++, argc--;
	if (!argc || (flags[0] & HX_SHW_DYNAMIC))
		return;
	for (size_t i = 0; i < c->nwrap; i++) {
		if (strcmp(argv[0], c->wrap[i].name))
			continue;
		if (c->v->nparts >= HX_VIEW_MAX_PARTS - 1 ||
		    ++c->calls > 4 * HX_VIEW_MAX_PARTS) {
			unparsable(c, "too many commands");
			return;
		}
		if (depth > HX_SH_MAX_DEPTH) {
			unparsable(c, "commands nested too deep");
			return;
		}
		for (size_t k = 1; k < argc && k < 10; k++) {
			if (!(c->wrap[i].from & (1u << k)))
				continue;
			/* f set -- rm -rf ~: the body's next "$@" runs
			 * what this one set */
			if (moves(argv + k, argc - k)) {
				unparsable(c, "a call that moves a function's "
					      "parameters");
				return;
			}
			add(c, argv + k, flags + k, argc - k, NULL, dir, writes,
			    depth);
			wrapper_call(c, argv + k, flags + k, argc - k, dir,
				     writes, depth + 1);
		}
	}
}

/* A script's commands, each a part, in dir; then what the calls of its
 * wrapper functions run, once every wrapper is known. */
static void script(struct ctx *c, const char *text, const char *dir,
		   bool writes, int depth)
{
	struct hx_cmd_view *v = c->v;
	struct hx_sh_script *s;
	const struct hx_sh_script *outer = c->s;
	const char *outer_func = c->func;

	if (v->nscripts == HX_VIEW_MAX_SCRIPTS) {
		unparsable(c, "too many scripts in one command");
		return;
	}
	s = &v->scripts[v->nscripts];
	if (hx_sh_parse(text, strlen(text), c->ws ? c->ws->home : NULL, s)) {
		unparsable(c, "out of memory");
		return;
	}
	v->nscripts++;
	c->s = s;
	if (strstr(text, "BASH_ALIASES")) /* an alias defined otherwise */
		c->alias = true;
	for (size_t i = 0; i < s->ncmds; i++) {
		const struct hx_sh_cmd *sc = &s->cmds[i];

		c->func = sc->func;
		add(c, sc->argv, sc->flags, sc->argc, NULL,
		    join_dir(c, dir, sc->dir), writes || sc->writes, depth + 1);
	}
	for (size_t i = 0; c->nwrap && i < s->ncmds; i++) {
		const struct hx_sh_cmd *sc = &s->cmds[i];

		c->func = sc->func;
		wrapper_call(c, sc->argv, sc->flags, sc->argc,
			     join_dir(c, dir, sc->dir), writes || sc->writes,
			     depth + 1);
	}
	c->s = outer;
	c->func = outer_func;
	if (s->opaque)
		unparsable(c, s->opaque);
}

/* sh -c SCRIPT, bash -lc SCRIPT, bash -c -l SCRIPT: the first operand
 * after the options is the script when a -c was among them. */
static void shell(struct ctx *c, struct hx_cmd_part *p, int depth)
{
	static const char *const long_arg[] = {"--rcfile", "--init-file", NULL};
	bool has_c = false;
	size_t i = 1;

	while (i < p->argc && (p->argv[i][0] == '-' || p->argv[i][0] == '+') &&
	       p->argv[i][1]) {
		const char *a = p->argv[i++];

		if (!strcmp(a, "--") || !strcmp(a, "-"))
			break;
		if (a[1] == '-') {
			for (size_t k = 0; long_arg[k]; k++)
				i += !strcmp(a, long_arg[k]);
			continue;
		}
		if (strchr(a, 'c'))
			has_c = true;
		if (strchr(a + 1, 'o') || strchr(a + 1, 'O'))
			i++; /* -o errexit */
	}
	if (!has_c || i >= p->argc)
		return; /* a script file, or stdin: code */
	/* sh -c "gcc -c $f": read with $f an unknown word, as the text
	 * says; sh -c "$CMD" names no command: unparsable. A value that
	 * carries syntax of its own is judged when what it runs runs. */
	p->wrapper = true;
	script(c, p->argv[i], p->dir, p->writes, depth);
}

/* eval WORD...: the words joined, read as a script. */
static void eval(struct ctx *c, struct hx_cmd_part *p, int depth)
{
	size_t len = 0, off = 0;
	char *text;

	for (size_t i = 1; i < p->argc; i++)
		len += strlen(p->argv[i]) + 1; /* $x stays an expansion */
	text = hx_arena_alloc(&c->v->mem, len + 1);
	if (!text) {
		unparsable(c, "out of memory");
		return;
	}
	for (size_t i = 1; i < p->argc; i++) {
		size_t l = strlen(p->argv[i]);

		memcpy(text + off, p->argv[i], l);
		off += l;
		text[off++] = ' ';
	}
	p->wrapper = true;
	script(c, text, p->dir, p->writes, depth);
}

/* xargs [OPTS] CMD ARG...: CMD ARG... and the words it reads. */
static void xargs(struct ctx *c, struct hx_cmd_part *p, int depth)
{
	/* --max-lines[=N], --replace[=R], --eof[=E] take a value only
	 * with "=": the next word is the command */
	static const char *const long_arg[] = {"--arg-file",  "--delimiter",
					       "--max-args",  "--max-procs",
					       "--max-chars", NULL};
	size_t i = skip_opts(p, 1, "adEILnPs", long_arg), n;
	const char **argv;
	unsigned *flags;
	static const char *const echo[] = {"echo"};

	if (i >= p->argc) {
		p->wrapper = true;
		add(c, echo, NULL, 1, NULL, p->dir, p->writes, depth + 1);
		return;
	}
	n = p->argc - i;
	argv = hx_arena_alloc(&c->v->mem, (n + 2) * sizeof(*argv));
	flags = hx_arena_alloc(&c->v->mem, (n + 1) * sizeof(*flags));
	if (!argv || !flags) {
		unparsable(c, "out of memory");
		return;
	}
	for (size_t k = 0; k < n; k++) {
		argv[k] = p->argv[i + k];
		flags[k] = fl(p, i + k);
	}
	argv[n] = "[input]"; /* the words xargs reads, as shown */
	flags[n] = HX_SHW_DYNAMIC | HX_SHW_SPLIT;
	p->wrapper = true;
	add(c, argv, flags, n + 1, NULL, p->dir, p->writes, depth + 1);
}

/* find START... -exec CMD {} ; and -execdir, -ok, -okdir: "{}" is a
 * path beneath the start (one start known; else unknown). */
static void find(struct ctx *c, struct hx_cmd_part *p, int depth)
{
	size_t i = 1, start = 0, nstart = 0;

	while (i < p->argc && !strcmp(p->argv[i], "-H") +
				  !strcmp(p->argv[i], "-L") +
				  !strcmp(p->argv[i], "-P"))
		i++;
	for (; i < p->argc && p->argv[i][0] != '-' && strcmp(p->argv[i], "(") &&
	       strcmp(p->argv[i], "!");
	     i++)
		if (nstart++ == 0)
			start = i;
	for (; i < p->argc; i++) {
		const char *a = p->argv[i];
		size_t j, n;
		const char **argv;
		unsigned *flags;
		const char *top = nstart == 0 ? "."
				  : nstart == 1 && !fl(p, start)
				      ? p->argv[start]
				      : NULL;
		char *beneath = NULL;

		if (strcmp(a, "-exec") && strcmp(a, "-execdir") &&
		    strcmp(a, "-ok") && strcmp(a, "-okdir"))
			continue;
		for (j = i + 1; j < p->argc && strcmp(p->argv[j], ";") &&
				strcmp(p->argv[j], "+");
		     j++)
			;
		n = j - i - 1;
		if (n == 0)
			continue;
		argv = hx_arena_alloc(&c->v->mem, (n + 1) * sizeof(*argv));
		flags = hx_arena_alloc(&c->v->mem, n * sizeof(*flags));
		if (top) {
			size_t l = strlen(top);

			beneath = hx_arena_alloc(&c->v->mem, l + 3);
			if (beneath)
				snprintf(beneath, l + 3, "%s/*", top);
		}
		if (!argv || !flags) {
			unparsable(c, "out of memory");
			return;
		}
		for (size_t k = 0; k < n; k++) {
			const char *w = p->argv[i + 1 + k];

			argv[k] = w;
			flags[k] = fl(p, i + 1 + k);
			if (strstr(w, "{}")) {
				argv[k] = beneath ? beneath : w;
				flags[k] |= beneath
						? HX_SHW_GLOB | HX_SHW_SPLIT
						: HX_SHW_DYNAMIC | HX_SHW_SPLIT;
			}
		}
		add(c, argv, flags, n, NULL, p->dir, p->writes, depth + 1);
		i = j;
	}
}

/* git -c KEY=VALUE with a KEY whose value git runs (core.pager,
 * alias.x=!cmd, core.sshCommand, a filter, a hook path...). */
static bool git_code_key(const char *kv)
{
	static const char *const keys[] = {"alias.",
					   "core.pager",
					   "core.sshcommand",
					   "core.editor",
					   "core.askpass",
					   "core.fsmonitor",
					   "core.hookspath",
					   "core.gitproxy",
					   "diff.external",
					   "filter.",
					   "credential.helper",
					   "sequence.editor",
					   "gpg.",
					   "pager.",
					   "protocol.",
					   "uploadpack.",
					   "remote.",
					   "include",
					   "ssh.",
					   "http.proxy",
					   "url.",
					   NULL};

	for (size_t i = 0; keys[i]; i++)
		if (!strncasecmp(kv, keys[i], strlen(keys[i])))
			return true;
	return strstr(kv, ".textconv") || strstr(kv, ".command");
}

/* The key of "KEY=..." that may force every push: include.path and
 * includeIf (a file of configuration may say anything), remote.X.push,
 * remote.X.mirror (*last, unless NULL: where its last part begins).
 * 0: none, else 'i' or 'r'. */
static int git_forcing_name(const char *kv, const char **last)
{
	const char *dot = NULL, *eq = strchr(kv, '=');

	if (!strncasecmp(kv, "include", 7))
		return 'i';
	if (strncasecmp(kv, "remote.", 7))
		return 0;
	/* A bare key (-c remote.X.mirror, no '='): git reads it true. */
	if (!eq)
		eq = kv + strlen(kv);
	for (const char *q = kv + 7; q < eq; q++)
		if (*q == '.')
			dot = q; /* remote.NAME.KEY: NAME may hold dots */
	if (!dot || !((eq - dot == 7 && !strncasecmp(dot, ".mirror", 7)) ||
		      (eq - dot == 5 && !strncasecmp(dot, ".push", 5))))
		return 0;
	if (last)
		*last = dot + 1;
	return 'r';
}

/* git -c remote.X.push=+... (or :...), remote.X.mirror=true: every
 * push to X is forced (or deletes what X has and the repository not),
 * whatever the push's own argv says; include.path and includeIf bring
 * in a file that may say so. Read as a config file's line is
 * (gitforce.h). */
static bool git_forcing_key(const char *kv)
{
	const char *v = strchr(kv, '='), *k = NULL;

	switch (git_forcing_name(kv, &k)) {
	case 'i':
		return true;
	case 'r':
		return hx_git_remote_forces(
		    k, (size_t)((v ? v : k + strlen(k)) - k), v ? v + 1 : NULL,
		    v ? v + strlen(v) : NULL);
	default:
		return false;
	}
}

/* git-SUB ARGS, read as git SUB ARGS (no global options there). */
static void git_dashed(struct ctx *c, struct hx_cmd_part *p, int depth,
		       const char *sub)
{
	size_t n = p->argc + 1;
	const char **argv = hx_arena_alloc(&c->v->mem, (n + 1) * sizeof(*argv));
	unsigned *flags = hx_arena_alloc(&c->v->mem, n * sizeof(*flags));

	if (!argv || !flags) {
		unparsable(c, "out of memory");
		return;
	}
	argv[0] = "git";
	argv[1] = sub;
	flags[0] = 0;
	flags[1] = fl(p, 0);
	for (size_t k = 1; k < p->argc; k++) {
		argv[k + 1] = p->argv[k];
		flags[k + 1] = fl(p, k);
	}
	argv[n] = NULL;
	p->wrapper = true;
	add(c, argv, flags, n, p->path, p->dir, p->writes, depth + 1);
}

/* git [global options] SUB ...: the global options out, -C followed. */
static void git(struct ctx *c, struct hx_cmd_part *p, int depth)
{
	const char *dir = p->dir;
	const char **argv;
	unsigned *flags;
	/* Configuration its environment gives may force a push as -c
	 * does (not judged for code: agents configure git that way). */
	bool code = false, forces = c->ws && c->ws->git_env_config;
	size_t i = 1, n, at;
	const char *sub = git_dashed_sub(base(p->argv[0]));

	if (sub) {
		git_dashed(c, p, depth, sub);
		return;
	}

	while (i < p->argc && p->argv[i][0] == '-') {
		const char *a = p->argv[i];
		bool value =
		    !strcmp(a, "-C") || !strcmp(a, "-c") ||
		    !strcmp(a, "--git-dir") || !strcmp(a, "--work-tree") ||
		    !strcmp(a, "--namespace") || !strcmp(a, "--config-env");

		if (value && i + 1 >= p->argc)
			break;
		if (!strcmp(a, "-C"))
			dir = fl(p, i + 1) ? NULL
					   : join_dir(c, dir, p->argv[i + 1]);
		if (!strcmp(a, "-c")) {
			code = code || (fl(p, i + 1) & HX_SHW_DYNAMIC) ||
			       git_code_key(p->argv[i + 1]);
			forces = forces || git_forcing_key(p->argv[i + 1]);
		}
		if (!strncmp(a, "--config-env", 12) ||
		    !strncmp(a, "--exec-path", 11))
			code = true;
		/* --config-env=KEY=ENVVAR: a value the argv does not show */
		if (!strcmp(a, "--config-env") ||
		    !strncmp(a, "--config-env=", 13))
			forces = forces ||
				 git_forcing_name(
				     a[12] ? a + 13 : p->argv[i + 1], NULL);
		i += value ? 2 : 1;
	}
	if (i == 1 || i >= p->argc) {
		p->git_forces = p->git_forces || forces; /* git SUB itself */
		return;
	}
	n = p->argc - i + 1;
	argv = hx_arena_alloc(&c->v->mem, (n + 1) * sizeof(*argv));
	flags = hx_arena_alloc(&c->v->mem, n * sizeof(*flags));
	if (!argv || !flags) {
		unparsable(c, "out of memory");
		return;
	}
	argv[0] = p->argv[0];
	for (size_t k = 1; k < n; k++) {
		argv[k] = p->argv[i + k - 1];
		flags[k] = fl(p, i + k - 1);
	}
	p->wrapper = true;
	at = c->v->nparts;
	add(c, argv, flags, n, p->path, dir, p->writes, depth + 1);
	if (c->v->nparts > at) {
		c->v->parts[at].git_code = code;
		c->v->parts[at].git_forces = forces;
	}
}

/* env [-i] [-u NAME] [-C DIR] [NAME=VALUE]... [CMD...] */
static void env(struct ctx *c, struct hx_cmd_part *p, int depth)
{
	const char *dir = p->dir;
	size_t i = 1;

	for (; i < p->argc; i++) {
		const char *a = p->argv[i];
		bool chdir = !strcmp(a, "-C") || !strcmp(a, "--chdir");

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || (fl(p, i) & HX_SHW_DYNAMIC))
			break;
		if (!strcmp(a, "-S") || !strncmp(a, "--split-string", 14) ||
		    (a[1] != '-' && strchr(a, 'S'))) {
			unparsable(c, "env -S splits a string");
			return;
		}
		if (chdir || !strncmp(a, "--chdir=", 8) ||
		    (a[1] == 'C' && a[2])) {
			const char *to = chdir	       ? p->argv[i + 1]
					 : a[1] == 'C' ? a + 2
						       : a + 8;

			dir = chdir && (i + 1 >= p->argc || fl(p, i + 1))
				  ? NULL
				  : join_dir(c, dir, to);
		}
		if (chdir || !strcmp(a, "-u") || !strcmp(a, "--unset"))
			i++;
	}
	while (i < p->argc && strchr(p->argv[i], '=') &&
	       !(fl(p, i) & HX_SHW_SPLIT))
		i++;
	if (i < p->argc) {
		p->wrapper = true;
		rest(c, p, i, dir, depth);
	}
}

/* Wrappers that run the rest of their argv after options (and a fixed
 * count of operands: timeout's duration). */
static const struct wrapper {
	const char *name, *takes_arg;
	const char *const *long_arg;
	size_t operands;
} wrappers[] = {
    {"nice", "n", (const char *const[]){"--adjustment", NULL}, 0},
    {"nohup", "", NULL, 0},
    {"stdbuf", "ioe",
     (const char *const[]){"--input", "--output", "--error", NULL}, 0},
    {"time", "fo", (const char *const[]){"--format", "--output", NULL}, 0},
    {"timeout", "sk", (const char *const[]){"--signal", "--kill-after", NULL},
     1},
    {"exec", "a", NULL, 0},
    {"builtin", "", NULL, 0},
    {"setsid", "", NULL, 0},
    {"ionice", "cnt", (const char *const[]){"--class", "--classdata", NULL}, 0},
    {"taskset", "", NULL, 1},
    {"chrt", "TPD", NULL, 1},
    {"sudo", "ugCDhprtTU",
     (const char *const[]){"--user", "--group", "--chdir", "--host", "--prompt",
			   "--role", "--type", "--other-user", "--close-from",
			   "--command-timeout", NULL},
     0},
    {"doas", "uC", NULL, 0},
    {"unbuffer", "", NULL, 0},
    {"flock", "wE", (const char *const[]){"--timeout", NULL}, 1},
};

static const struct wrapper *wrapper_of(const char *name)
{
	for (size_t k = 0; k < sizeof(wrappers) / sizeof(wrappers[0]); k++)
		if (!strcmp(name, wrappers[k].name))
			return &wrappers[k];
	return NULL;
}

static void wrapper(struct ctx *c, struct hx_cmd_part *p, int depth)
{
	const struct wrapper *w = wrapper_of(p->name);
	const char *name = p->name;
	size_t i;

	if (!w)
		return;
	if (!strcmp(name, "sudo") || !strcmp(name, "doas")) {
		i = skip_opts(p, 1, w->takes_arg, w->long_arg);
		while (i < p->argc && strchr(p->argv[i], '='))
			i++;
	} else {
		i = skip_opts(p, 1, w->takes_arg, w->long_arg) + w->operands;
	}
	if (!strcmp(name, "flock") && i < p->argc &&
	    (!strcmp(p->argv[i], "-c") || !strcmp(p->argv[i], "--command"))) {
		if (i + 1 < p->argc)
			script(c, p->argv[i + 1], p->dir, p->writes, depth);
		return;
	}
	if (i < p->argc) {
		/* sudo and doas keep their own class: privilege */
		p->wrapper = strcmp(name, "sudo") && strcmp(name, "doas");
		rest(c, p, i, p->dir, depth);
	}
}

static bool is_shell(const char *name)
{
	static const char *const shells[] = {"sh",   "bash",  "dash", "zsh",
					     "ksh",  "mksh",  "ash",  "yash",
					     "posh", "rbash", NULL};

	for (size_t i = 0; shells[i]; i++)
		if (!strcmp(name, shells[i]))
			return true;
	return false;
}

/* command CMD..., busybox APPLET...: the rest is the command;
 * command -v only looks a name up. */
static void command(struct ctx *c, struct hx_cmd_part *p, int depth)
{
	size_t i = skip_opts(p, 1, "", NULL);

	if (i >= p->argc || (p->argc > 1 && (!strcmp(p->argv[1], "-v") ||
					     !strcmp(p->argv[1], "-V"))))
		return;
	p->wrapper = true;
	rest(c, p, i, p->dir, depth);
}

/* trap 'CMD' SIG...: CMD runs later, read now. */
static void trap(struct ctx *c, struct hx_cmd_part *p, int depth)
{
	if (p->argc > 2 && p->argv[1][0] != '-')
		script(c, p->argv[1], p->dir, p->writes, depth);
}

typedef void reader_fn(struct ctx *c, struct hx_cmd_part *p, int depth);

/* What runs the rest of its argv, or a script: the function that reads
 * it, by name; NULL for a command that runs nothing of its argv. */
static reader_fn *reader_of(const char *name)
{
	static const struct {
		const char *name;
		reader_fn *fn;
	} readers[] = {
	    {"busybox", command}, {"command", command}, {"env", env},
	    {"eval", eval},	  {"find", find},	{"git", git},
	    {"trap", trap},	  {"xargs", xargs},
	};

	for (size_t k = 0; k < sizeof(readers) / sizeof(readers[0]); k++)
		if (!strcmp(name, readers[k].name))
			return readers[k].fn;
	if (is_shell(name))
		return shell;
	return wrapper_of(name) ? wrapper : NULL;
}

/* The name a part is judged by (cmdview.h): what runs is the file, not
 * what argv[0] says it is, unless that file is unknown (an alternative's
 * x86_64-linux-gnu-gcc-12 for cc) or busybox (which runs the applet
 * argv[0] names); a login shell's "-bash" is its file's. */
static const char *part_name(const struct hx_cmd_part *p)
{
	const char *a0 = base(p->argv[0]), *file;

	if (!p->path)
		return dashed_git(a0);
	file = base(p->path);
	if (a0[0] == '-' || !strcmp(a0, file))
		return dashed_git(file);
	if (!strcmp(file, "busybox"))
		return a0;
	return dashed_git(hx_cmdclass_known(file) || reader_of(file) ? file
								     : a0);
}

static void unwrap(struct ctx *c, struct hx_cmd_part *p, int depth)
{
	reader_fn *fn = reader_of(p->name);

	if (fn)
		fn(c, p, depth);
}

/* A shell builtin that runs nothing and writes nothing (without a
 * redirection), itself or as "builtin X" or "command [-p] X": read
 * only, the class of a view with no other part, so it takes no part.
 * Codex wraps each command in some 500 of them. */
static bool inert(const char *const *argv, size_t argc, bool writes)
{
	static const char *const names[] = {
	    "[",      "test",  ":",	   "true",     "false",	  "export",
	    "unset",  "local", "readonly", "declare",  "typeset", "shift",
	    "return", "exit",  "break",	   "continue", "set",	  NULL};

	const char *name = builtin_named(argv, argc);

	for (size_t i = 0; !writes && names[i]; i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

static void add(struct ctx *c, const char *const *argv, const unsigned *flags,
		size_t argc, const char *path, const char *dir, bool writes,
		int depth)
{
	struct hx_cmd_view *v = c->v;
	struct hx_cmd_part *p;

	if (argc == 0)
		return;
	for (size_t i = 1; !strcmp(argv[0], "alias") && i < argc; i++)
		if (strchr(argv[i], '=') || (flags && flags[i]))
			c->alias = true; /* not alias -p */
	if (depth > HX_SH_MAX_DEPTH) {
		unparsable(c, "commands nested too deep");
		return;
	}
	if (v->nparts >= HX_VIEW_MAX_PARTS - 1) {
		unparsable(c, "too many commands");
		return;
	}
	if (flags && (flags[0] & (HX_SHW_DYNAMIC | HX_SHW_GLOB))) {
		/* "$@" only: $@ unquoted splits each word the caller
		 * gives (f "git push") */
		if (!(flags[0] & (HX_SHW_GLOB | HX_SHW_SPLIT)) &&
		    wrapped(c, argv[0]))
			return;
		unparsable(c, "the command's name is an expansion");
		return;
	}
	if (depth > 0 && inert(argv, argc, writes))
		return;
	p = &v->parts[v->nparts++];
	*p = (struct hx_cmd_part){.argv = argv,
				  .flags = flags,
				  .argc = argc,
				  .path = path,
				  .dir = dir,
				  .writes = writes};
	p->name = part_name(p);
	unwrap(c, p, depth);
}

/* One reading of the exec, with the wrappers c knows. */
static void read_exec(struct ctx *c, const char *path, const char *const *argv,
		      size_t argc, const char *cwd)
{
	struct hx_cmd_view *v = c->v;

	v->nparts = v->nscripts = 0;
	v->mem = (struct hx_arena){0};
	c->grew = c->alias = false;
	c->calls = 0;
	if (argc == 0 || !argv[0]) {
		static const char *const none[] = {""};

		add(c, none, NULL, 1, path, cwd, false, 0);
	} else {
		add(c, argv, NULL, argc, path,
		    cwd && cwd[0] == '/' ? cwd : NULL, false, 0);
	}
}

void hx_cmdview_build(struct hx_cmd_view *v, const char *path,
		      const char *const *argv, size_t argc, const char *cwd,
		      const struct hx_workspace *ws)
{
	struct ctx c = {.v = v, .ws = ws};

	/* Read again while the wrappers grow (each reading knows those
	 * the one before found, wherever defined), or when an alias was
	 * defined beside them (then none is read through). */
	for (int pass = 0;; pass++) {
		read_exec(&c, path, argv, argc, cwd);
		if (c.alias && c.nwrap && !c.no_wrap) {
			c.no_wrap = true;
			c.nwrap = 0;
		} else if (!c.grew) {
			break;
		} else if (pass == 16) {
			unparsable(&c, "functions that run their arguments "
				       "call each other too deep");
			break;
		}
		hx_cmdview_free(v);
	}
	v->cls = HX_CLASS_NONE;
	for (size_t i = 0; i < v->nparts; i++) {
		struct hx_cmd_part *p = &v->parts[i];

		if (p->cls != HX_CLASS_UNPARSABLE)
			p->cls = p->wrapper ? HX_CLASS_NONE
					    : hx_cmdclass(p, p->name, ws);
		if (p->cls > v->cls)
			v->cls = p->cls;
	}
	if (v->cls == HX_CLASS_NONE)
		v->cls =
		    HX_CLASS_READ_ONLY; /* wrappers of nothing: env, sh -c "" */
}

void hx_cmdview_free(struct hx_cmd_view *v)
{
	for (size_t i = 0; i < v->nscripts; i++)
		hx_sh_free(&v->scripts[i]);
	v->nscripts = v->nparts = 0;
	hx_arena_free(&v->mem);
}

void hx_cmd_part_format(const struct hx_cmd_part *p, char *out, size_t size)
{
	size_t off = 0;

	if (!size)
		return;
	out[0] = '\0';
	for (size_t i = 0; i < p->argc && off + 1 < size; i++) {
		int n = snprintf(out + off, size - off, "%s%s", i ? " " : "",
				 p->argv[i]);

		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (off >= size && size > 4)
		memcpy(out + size - 4, "...", 4);
}

bool hx_cmd_part_covers(const struct hx_cmd_part *p, const char *cwd,
			const char *const *argv, size_t argc)
{
	if (p->argc != argc || p->cls == HX_CLASS_UNPARSABLE || !p->dir ||
	    !cwd || strcmp(p->dir, cwd))
		return false;
	for (size_t i = 0; i < argc; i++)
		if (fl(p, i) || strcmp(p->argv[i], argv[i]))
			return false;
	return true;
}
