/* The shell reader; see shparse.h. A parser that only looks for simple
 * commands: keywords of compound commands (if, while, for, { }) are
 * separators to it, so their bodies are read as the command lists they
 * are. The tokens are shlex.c's. */
#include "policy/shparse.h"
#include "policy/shlex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void parse_list(struct ps *ps, enum tk term);

/* NAME=VALUE with NAME unquoted (X="a b" is one, "X=1" is not). */
static bool is_assignment(const struct tok *t)
{
	const char *s = t->text;

	if (!hx_shl_name_start((unsigned char)s[0]))
		return false;
	while (hx_shl_name((unsigned char)*s))
		s++;
	if (t->quoted_at && (size_t)(s - t->text) + 1 >= t->quoted_at)
		return false;
	return *s == '=' || (s[0] == '+' && s[1] == '=');
}

static bool quiet_target(const char *t)
{
	return !strcmp(t, "/dev/null") || !strcmp(t, "/dev/stdout") ||
	       !strcmp(t, "/dev/stderr") || !strcmp(t, "/dev/tty") ||
	       !strncmp(t, "/dev/fd/", 8);
}

static void redirect(struct ps *ps, const struct tok *op, bool *writes)
{
	struct tok t;

	hx_shl_next(ps, &t);
	if (t.kind != TK_WORD || !t.text)
		return hx_shl_opaque(ps, op->at,
				     "a redirection without a target");
	switch (op->redir) {
	case R_WRITE:
		if ((t.flags & HX_SHW_DYNAMIC) || !quiet_target(t.text))
			*writes = true;
		break;
	case R_DUP:
		if (strspn(t.text, "0123456789-") != strlen(t.text))
			*writes = true; /* bash: >&file is &>file */
		break;
	case R_HEREDOC:
	case R_HEREDOC_TABS:
		if (ps->nhd == sizeof(ps->hd) / sizeof(ps->hd[0]))
			return hx_shl_opaque(ps, op->at,
					     "too many here-documents");
		ps->hd[ps->nhd++] = (struct heredoc){
		    t.text, op->redir == R_HEREDOC_TABS, t.quoted};
		break;
	case R_READ:
	case R_HERESTR:
		break;
	}
}

static const char *dir_join(struct ps *ps, const char *dir, const char *to)
{
	size_t a, b;
	char *p;

	if (to[0] == '/' || !dir)
		return to[0] == '/' ? to : NULL;
	if (!dir[0])
		return to;
	a = strlen(dir);
	b = strlen(to);
	p = hx_shl_alloc(ps, a + b + 2);
	if (p) {
		memcpy(p, dir, a);
		p[a] = '/';
		memcpy(p + a + 1, to, b);
	}
	return p;
}

/* cd and pushd move what follows; a cd the reader cannot follow makes
 * the directory unknown, never a guess. */
static void track_cd(struct ps *ps, const struct hx_sh_cmd *c)
{
	size_t i = 1;

	if (!strcmp(c->argv[0], "popd")) {
		ps->dir = NULL;
		return;
	}
	if (strcmp(c->argv[0], "cd") && strcmp(c->argv[0], "pushd"))
		return;
	while (i < c->argc && c->argv[i][0] == '-' && c->argv[i][1] &&
	       !(c->flags[i] & HX_SHW_DYNAMIC))
		i++;
	if (i < c->argc && !strcmp(c->argv[i], "--"))
		i++;
	if (i >= c->argc)
		ps->dir = ps->home ? ps->home : NULL;
	else if (c->flags[i] || !strcmp(c->argv[i], "-"))
		ps->dir = NULL;
	else
		ps->dir = dir_join(ps, ps->dir, c->argv[i]);
}

static void add_cmd(struct ps *ps, struct tok *words, size_t n, bool writes)
{
	struct hx_sh_script *o = ps->out;
	struct hx_sh_cmd *c;
	const char **argv;
	unsigned *flags;

	if (o->ncmds == HX_SH_MAX_CMDS)
		return hx_shl_opaque(ps, words[0].at, "too many commands");
	if (o->ncmds == ps->cmdcap) {
		size_t cap = ps->cmdcap ? ps->cmdcap * 2 : 8;
		struct hx_sh_cmd *p = realloc(o->cmds, cap * sizeof(*p));

		if (!p) {
			ps->nomem = ps->stop = true;
			return;
		}
		o->cmds = p;
		ps->cmdcap = cap;
	}
	argv = hx_shl_alloc(ps, (n + 1) * sizeof(*argv));
	flags = hx_shl_alloc(ps, n * sizeof(*flags));
	if (!argv || !flags)
		return;
	for (size_t i = 0; i < n; i++) {
		argv[i] = words[i].text;
		flags[i] = words[i].flags;
	}
	c = &o->cmds[o->ncmds++];
	*c = (struct hx_sh_cmd){argv,	flags,
				n,	ps->dir,
				writes, ps->nfn ? ps->fn[ps->nfn - 1] : NULL};
	track_cd(ps, c);
}

static bool keyword(const struct tok *t, const char *const *list)
{
	if (t->kind != TK_WORD || t->quoted || !t->text)
		return false;
	for (; *list; list++)
		if (!strcmp(t->text, *list))
			return true;
	return false;
}

static const char *const separators[] = {"!",	  "{",	   "}",	 "if", "then",
					 "else",  "elif",  "fi", "do", "done",
					 "while", "until", NULL};

/* for NAME [in WORD...]: the words are read (their $(...) run), the
 * body follows as a list. */
static void skip_for(struct ps *ps, const struct tok *kw)
{
	struct tok t;

	hx_shl_next(ps, &t);
	if (t.kind == TK_LPAREN) {
		if (hx_shl_peekc(ps, 0) != '(')
			return hx_shl_opaque(ps, kw->at,
					     "a for the reader does "
					     "not follow");
		ps->pos++;
		if (!hx_shl_skip_arith(ps))
			hx_shl_opaque(ps, kw->at,
				      "a for (( the reader does "
				      "not follow");
		return;
	}
	if (t.kind != TK_WORD)
		return hx_shl_opaque(ps, kw->at, "a for without a name");
	hx_shl_next(ps, &t);
	if (!(t.kind == TK_WORD && !strcmp(t.text, "in"))) {
		hx_shl_unget(ps, &t);
		return;
	}
	do
		hx_shl_next(ps, &t);
	while (t.kind == TK_WORD && !ps->stop);
	hx_shl_unget(ps, &t);
}

static bool keyword(const struct tok *t, const char *const *list);

/* case WORD in [(]PATTERN[|PATTERN]...) LIST ;; ... esac: the word and
 * the patterns are words (their $(...) run), each branch a list. */
static void parse_case(struct ps *ps, const struct tok *kw)
{
	static const char *const in[] = {"in", NULL}, *const esac[] = {"esac",
								       NULL};
	struct tok t;

	hx_shl_next(ps, &t);
	if (t.kind != TK_WORD)
		return hx_shl_opaque(ps, kw->at, "a case without a word");
	do
		hx_shl_next(ps, &t);
	while (t.kind == TK_NL);
	if (!keyword(&t, in))
		return hx_shl_opaque(ps, kw->at, "a case without in");
	while (!ps->stop) {
		do
			hx_shl_next(ps, &t);
		while (t.kind == TK_NL);
		if (keyword(&t, esac))
			return;
		if (t.kind == TK_LPAREN)
			hx_shl_next(ps, &t);
		while (t.kind == TK_WORD) {
			hx_shl_next(ps, &t);
			if (t.kind == TK_PIPE)
				hx_shl_next(ps, &t);
		}
		if (t.kind != TK_RPAREN)
			return hx_shl_opaque(
			    ps, kw->at, "a case the reader does not follow");
		parse_list(ps, TK_DSEMI);
	}
}

/* NAME=(WORD...): an array's words (their $(...) run), to its ")". */
static void skip_array(struct ps *ps, const struct tok *name)
{
	struct tok t;

	ps->pos++; /* the "(" */
	do
		hx_shl_next(ps, &t);
	while ((t.kind == TK_WORD || t.kind == TK_NL) && !ps->stop);
	if (t.kind != TK_RPAREN)
		hx_shl_opaque(ps, name->at, "an unclosed array");
}

/* [[ ... ]]: a test; its words may hold $(...), its operators are
 * not the shell's. */
static void skip_test(struct ps *ps, const struct tok *kw)
{
	static const char *const close[] = {"]]", NULL};
	struct tok t;

	do {
		hx_shl_next(ps, &t);
		if (t.kind == TK_EOF)
			return hx_shl_opaque(ps, kw->at, "an unclosed [[");
	} while (!keyword(&t, close) && !ps->stop);
}

/* A { or } at a command's start: the body of the function just named
 * opens with a {, and ends with its }. A body of another kind (a
 * subshell, an if) is read as commands outside any function. */
static void brace(struct ps *ps, const struct tok *t)
{
	if (!strcmp(t->text, "{")) {
		ps->braces++;
		if (ps->fn_pending && ps->nfn == 4)
			return hx_shl_opaque(ps, t->at,
					     "functions nested too deep");
		if (ps->fn_pending) {
			ps->fn[ps->nfn] = ps->fn_pending;
			ps->fn_at[ps->nfn++] = ps->braces;
		}
	} else if (!strcmp(t->text, "}")) {
		if (ps->nfn && ps->fn_at[ps->nfn - 1] == ps->braces)
			ps->nfn--;
		ps->braces--;
	}
	ps->fn_pending = NULL;
}

/* function NAME [()]: the body follows. */
static void function_keyword(struct ps *ps)
{
	struct tok t, u;

	hx_shl_next(ps, &t);
	if (t.kind != TK_WORD || ps->stop)
		return hx_shl_unget(ps, &t);
	hx_shl_next(ps, &u);
	if (u.kind == TK_LPAREN) {
		hx_shl_next(ps, &u);
		if (u.kind != TK_RPAREN)
			return hx_shl_opaque(ps, u.at,
					     "a ( the reader does not follow");
	} else {
		hx_shl_unget(ps, &u);
	}
	ps->fn_pending = t.text;
}

/* One simple command, or a keyword, or a subshell. */
static void parse_command(struct ps *ps)
{
	static const char *const fors[] = {"for", "select", NULL};
	static const char *const unread[] = {"coproc", NULL};
	static const char *const cases[] = {"case", NULL};
	static const char *const func[] = {"function", NULL};
	static const char *const test[] = {"[[", NULL};
	struct tok *words = NULL, t;
	size_t n = 0, cap = 0;
	bool writes = false, prefix = false;

	while (!ps->stop) {
		hx_shl_next(ps, &t);
		if (t.kind == TK_REDIR) {
			redirect(ps, &t, &writes);
			prefix = true;
			continue;
		}
		if (t.kind == TK_LPAREN && n == 0 && !prefix) {
			const char *saved = ps->dir;

			ps->fn_pending = NULL;
			if (hx_shl_peekc(ps, 0) == '(') { /* (( arithmetic )) */
				ps->pos++;
				if (hx_shl_skip_arith(ps))
					break;
				ps->pos--; /* ((cmd) ): subshells */
			}
			if (++ps->depth > HX_SH_MAX_DEPTH)
				return hx_shl_opaque(ps, t.at,
						     "commands nested too "
						     "deep");
			parse_list(ps, TK_RPAREN);
			ps->depth--;
			ps->dir = saved;
			continue;
		}
		if (t.kind == TK_LPAREN && n == 1) {
			/* NAME () BODY: the body is read as it comes. */
			hx_shl_next(ps, &t);
			if (t.kind != TK_RPAREN)
				hx_shl_opaque(ps, t.at,
					      "a ( the reader does not "
					      "follow");
			ps->fn_pending = words[0].text;
			n = 0;
			break;
		}
		if (t.kind != TK_WORD) {
			hx_shl_unget(ps, &t);
			break;
		}
		if (n == 0) {
			if (is_assignment(&t)) {
				if (ps->s[ps->pos - 1] == '=' &&
				    hx_shl_peekc(ps, 0) == '(')
					skip_array(ps, &t);
				prefix = true;
				continue;
			}
			if (!prefix && keyword(&t, separators)) {
				brace(ps, &t);
				break;
			}
			ps->fn_pending = NULL;
			if (!prefix && keyword(&t, fors)) {
				skip_for(ps, &t);
				break;
			}
			if (!prefix && keyword(&t, unread)) {
				hx_shl_opaque(ps, t.at, "a coproc");
				break;
			}
			if (!prefix && keyword(&t, cases)) {
				parse_case(ps, &t);
				break;
			}
			if (!prefix && keyword(&t, func)) {
				function_keyword(ps);
				break;
			}
			if (!prefix && keyword(&t, test)) {
				skip_test(ps, &t);
				break;
			}
		}
		if (n == cap) {
			struct tok *p;

			cap = cap ? cap * 2 : 8;
			p = realloc(words, cap * sizeof(*p));
			if (!p) {
				ps->nomem = ps->stop = true;
				break;
			}
			words = p;
		}
		words[n++] = t;
	}
	if (n > 0 && !ps->stop)
		add_cmd(ps, words, n, writes);
	free(words);
}

static void parse_list(struct ps *ps, enum tk term)
{
	static const char *const esac[] = {"esac", NULL};
	struct tok t;

	while (!ps->stop) {
		hx_shl_next(ps, &t);
		if (ps->stop || t.kind == term)
			return;
		switch (t.kind) {
		case TK_EOF:
			return hx_shl_opaque(ps, t.at,
					     term == TK_DSEMI
						 ? "an unclosed case"
						 : "an unclosed ( or $(");
		case TK_NL:
		case TK_SEMI:
		case TK_AMP:
		case TK_AND:
		case TK_OR:
		case TK_PIPE:
			continue;
		case TK_RPAREN:
			return hx_shl_opaque(ps, t.at, "an unexpected )");
		case TK_DSEMI:
			return hx_shl_opaque(ps, t.at, "a ;; outside a case");
		default:
			/* a case's branch ends at ;; or at its esac */
			if (term == TK_DSEMI && keyword(&t, esac)) {
				hx_shl_unget(ps, &t);
				return;
			}
			hx_shl_unget(ps, &t);
			parse_command(ps);
			break;
		}
	}
}

static void parse_text(struct ps *ps, const char *text, size_t len, size_t at)
{
	struct ps in = *ps;

	if (ps->depth + 1 > HX_SH_MAX_DEPTH)
		return hx_shl_opaque(ps, at, "commands nested too deep");
	in.s = text;
	in.len = len;
	in.pos = 0;
	in.base = ps->base + at;
	in.depth = ps->depth + 1;
	in.nhd = 0;
	in.has_back = false;
	parse_list(&in, TK_EOF);
	ps->cmdcap = in.cmdcap;
	ps->stop = in.stop;
	ps->nomem = in.nomem;
}

int hx_sh_parse(const char *text, size_t len, const char *home,
		struct hx_sh_script *out)
{
	struct ps ps = {0};
	const char *nul = memchr(text, '\0', len);

	memset(out, 0, sizeof(*out));
	ps.s = text;
	ps.len = nul ? (size_t)(nul - text) : len;
	ps.home = home;
	ps.out = out;
	ps.dir = "";
	ps.list = parse_list;
	ps.text = parse_text;
	parse_list(&ps, TK_EOF);
	if (ps.nhd && !ps.stop)
		hx_shl_skip_heredocs(&ps);
	if (ps.nomem) {
		hx_sh_free(out);
		return -ENOMEM;
	}
	return 0;
}

void hx_sh_free(struct hx_sh_script *s)
{
	if (!s)
		return;
	while (s->mem) {
		struct hx_sh_mem *m = s->mem;

		s->mem = m->next;
		free(m);
	}
	free(s->cmds);
	memset(s, 0, sizeof(*s));
}

long hx_sh_words(const char *text, char *buf, size_t bufsize,
		 const char **words, size_t max)
{
	struct hx_sh_script s;
	const struct hx_sh_cmd *c;
	size_t used = 0;
	long n = -1;

	if (hx_sh_parse(text, strlen(text), NULL, &s))
		return -1;
	if (s.opaque || s.ncmds != 1 || s.cmds[0].argc > max ||
	    s.cmds[0].writes)
		goto out;
	c = &s.cmds[0];
	for (size_t i = 0; i < c->argc; i++) {
		size_t l = strlen(c->argv[i]) + 1;

		if ((c->flags[i] & HX_SHW_DYNAMIC) || used + l > bufsize)
			goto out;
		words[i] = memcpy(buf + used, c->argv[i], l);
		used += l;
	}
	n = (long)c->argc;
out:
	hx_sh_free(&s);
	return n;
}
