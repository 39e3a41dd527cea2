/* The shell reader; see shparse.h. A lexer that hands out one token at
 * a time and a parser that only looks for simple commands: keywords of
 * compound commands (if, while, for, { }) are separators to it, so
 * their bodies are read as the command lists they are. */
#define _GNU_SOURCE
#include "common/shparse.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct hx_sh_mem {
	struct hx_sh_mem *next;
	size_t used, cap;
	char data[];
};

enum tk {
	TK_EOF = 0,
	TK_WORD,
	TK_NL,
	TK_SEMI,
	TK_AMP,
	TK_AND,
	TK_OR,
	TK_PIPE,
	TK_LPAREN,
	TK_RPAREN,
	TK_DSEMI,
	TK_REDIR,
};

enum redir { R_READ, R_WRITE, R_DUP, R_HEREDOC, R_HEREDOC_TABS, R_HERESTR };

struct tok {
	enum tk kind;
	enum redir redir;
	char *text; /* TK_WORD: quotes removed, in the script's memory */
	unsigned flags;
	bool quoted;	  /* some of it was quoted: no keyword */
	size_t quoted_at; /* where quoting began in text, + 1; 0: none */
	size_t at;
};

/* A word being built. */
struct wbuf {
	char *p;
	size_t len, cap;
	unsigned flags;
	bool quoted;
	size_t quoted_at; /* w->len at the first quote, + 1; 0: none */
	bool brace_open, brace_list; /* unquoted "{" seen; then "," or ".." */
};

struct heredoc {
	char *delim;
	bool tabs, quoted;
};

struct ps {
	const char *s;
	size_t len, pos, base; /* base: offset of s in the outermost text */
	const char *home;
	struct hx_sh_script *out;
	size_t cmdcap;
	int depth;
	struct heredoc hd[8];
	size_t nhd;
	const char *dir; /* NULL: unknown */
	struct tok back;
	bool has_back;
	bool stop, nomem;
};

static void *mem_alloc(struct ps *ps, size_t n)
{
	struct hx_sh_mem *m = ps->out->mem;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (!m || m->cap - m->used < n) {
		size_t cap = n > 8192 ? n : 8192;

		m = malloc(sizeof(*m) + cap);
		if (!m) {
			ps->nomem = ps->stop = true;
			return NULL;
		}
		m->next = ps->out->mem;
		m->used = 0;
		m->cap = cap;
		ps->out->mem = m;
	}
	p = m->data + m->used;
	m->used += n;
	return memset(p, 0, n);
}

static char *mem_strndup(struct ps *ps, const char *s, size_t n)
{
	char *p = mem_alloc(ps, n + 1);

	if (p)
		memcpy(p, s, n);
	return p;
}

static void opaque(struct ps *ps, size_t at, const char *why)
{
	if (!ps->out->opaque) {
		ps->out->opaque = why;
		ps->out->opaque_at = ps->base + at;
	}
	ps->stop = true;
}

static int peekc(const struct ps *ps, size_t off)
{
	size_t i = ps->pos + off;

	return i < ps->len ? (unsigned char)ps->s[i] : -1;
}

static void put(struct ps *ps, struct wbuf *w, const char *s, size_t n)
{
	if (w->len + n + 1 > w->cap) {
		size_t cap = (w->len + n + 1) * 2;
		char *p = realloc(w->p, cap);

		if (!p) {
			ps->nomem = ps->stop = true;
			return;
		}
		w->p = p;
		w->cap = cap;
	}
	memcpy(w->p + w->len, s, n);
	w->len += n;
	w->p[w->len] = '\0';
}

static void mark_quoted(struct wbuf *w)
{
	if (!w->quoted)
		w->quoted_at = w->len + 1;
	w->quoted = true;
}

static void putc1(struct ps *ps, struct wbuf *w, char c)
{
	put(ps, w, &c, 1);
}

static bool is_meta(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' ||
	       c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
}

static bool is_name_start(int c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_name(int c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static void parse_list(struct ps *ps, enum tk term);
static void parse_text(struct ps *ps, const char *text, size_t len, size_t at);

/* After "((" or "$((": to the matching "))". The text is arithmetic,
 * where bash runs a $(...) or `...` too: opaque then. */
static void skip_arith(struct ps *ps)
{
	size_t start = ps->pos;
	int depth = 2;

	while (ps->pos < ps->len && depth > 0) {
		char c = ps->s[ps->pos++];

		if (c == '(')
			depth++;
		else if (c == ')')
			depth--;
		else if (c == '`' || (c == '$' && peekc(ps, 0) == '('))
			return opaque(ps, ps->pos - 1,
				      "a command inside arithmetic");
	}
	if (depth > 0)
		opaque(ps, start, "an unclosed ((");
}

/* $(...) and <(...): pos is just after the "(". */
static void read_subst(struct ps *ps, struct wbuf *w, size_t at, bool dq)
{
	const char *saved = ps->dir;

	if (++ps->depth > HX_SH_MAX_DEPTH)
		return opaque(ps, at, "commands nested too deep");
	parse_list(ps, TK_RPAREN);
	ps->depth--;
	ps->dir = saved;
	w->flags |= HX_SHW_DYNAMIC | (dq ? 0 : HX_SHW_SPLIT);
	put(ps, w, ps->s + at, ps->pos - at);
}

/* `...`: pos is just after the opening backquote. */
static void read_backquote(struct ps *ps, struct wbuf *w, bool dq)
{
	size_t at = ps->pos - 1;
	struct wbuf in = {0};

	for (;;) {
		int c = peekc(ps, 0);

		if (c < 0) {
			free(in.p);
			return opaque(ps, at, "an unclosed `");
		}
		ps->pos++;
		if (c == '`')
			break;
		if (c == '\\') {
			int n = peekc(ps, 0);

			if (n == '\\' || n == '`' || n == '$' ||
			    (dq && n == '"')) {
				putc1(ps, &in, (char)n);
				ps->pos++;
				continue;
			}
		}
		putc1(ps, &in, (char)c);
	}
	if (!ps->stop)
		parse_text(ps, in.p ? in.p : "", in.len, at + 1);
	free(in.p);
	w->flags |= HX_SHW_DYNAMIC | (dq ? 0 : HX_SHW_SPLIT);
	put(ps, w, ps->s + at, ps->pos - at);
}

/* ${...}: to the matching brace. A command inside runs (${x:-$(y)}). */
static void read_braced(struct ps *ps, struct wbuf *w, bool dq)
{
	size_t at = ps->pos;
	int depth = 0;

	ps->pos += 2;
	for (;;) {
		int c = peekc(ps, 0);

		if (c < 0)
			return opaque(ps, at, "an unclosed ${");
		ps->pos++;
		if (c == '\\') {
			ps->pos++;
		} else if (c == '`' || (c == '$' && peekc(ps, 0) == '(')) {
			return opaque(ps, ps->pos - 1,
				      "a command inside ${...}");
		} else if (c == '{') {
			depth++;
		} else if (c == '}' && depth-- == 0) {
			break;
		}
	}
	w->flags |= HX_SHW_DYNAMIC | (dq ? 0 : HX_SHW_SPLIT);
	put(ps, w, ps->s + at, ps->pos - at);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* $'...' (bash): pos is at the "'". The escapes a command line uses;
 * another (\u, \c) makes the script opaque rather than misread. */
static void read_ansi(struct ps *ps, struct wbuf *w)
{
	static const char from[] = "abefnrtv\\'\"?", to[] = "\a\b\033\f\n\r"
							    "\t\v\\'\"?";
	size_t at = ps->pos;

	ps->pos++;
	mark_quoted(w);
	for (;;) {
		int c = peekc(ps, 0), h;
		const char *e;

		if (c < 0)
			return opaque(ps, at, "an unclosed $'");
		ps->pos++;
		if (c == '\'')
			return;
		if (c != '\\') {
			putc1(ps, w, (char)c);
			continue;
		}
		c = peekc(ps, 0);
		ps->pos++;
		if (c > 0 && (e = strchr(from, c))) {
			putc1(ps, w, to[e - from]);
		} else if (c == 'x' && (h = hexval(peekc(ps, 0))) >= 0) {
			int v = h, h2;

			ps->pos++;
			if ((h2 = hexval(peekc(ps, 0))) >= 0) {
				v = v * 16 + h2;
				ps->pos++;
			}
			if (v == 0)
				return opaque(ps, at, "a NUL in $'...'");
			putc1(ps, w, (char)v);
		} else if (c >= '0' && c <= '7') {
			int v = c - '0';

			for (int i = 0; i < 2 && peekc(ps, 0) >= '0' &&
					peekc(ps, 0) <= '7';
			     i++)
				v = v * 8 + (ps->s[ps->pos++] - '0');
			if ((v & 0xff) == 0)
				return opaque(ps, at, "a NUL in $'...'");
			putc1(ps, w, (char)v);
		} else {
			return opaque(ps, at, "an escape of $'...' not read");
		}
	}
}

static void read_dquote(struct ps *ps, struct wbuf *w);

/* At a "$". */
static void read_dollar(struct ps *ps, struct wbuf *w, bool dq)
{
	size_t at = ps->pos;
	int c = peekc(ps, 1);

	if (c == '(' && peekc(ps, 2) == '(') {
		ps->pos += 3;
		skip_arith(ps);
		w->flags |= HX_SHW_DYNAMIC | (dq ? 0 : HX_SHW_SPLIT);
		put(ps, w, ps->s + at, ps->pos - at);
	} else if (c == '(') {
		ps->pos += 2;
		read_subst(ps, w, at, dq);
	} else if (c == '{') {
		read_braced(ps, w, dq);
	} else if (c == '\'' && !dq) {
		ps->pos++;
		read_ansi(ps, w);
	} else if (c == '"' && !dq) {
		ps->pos += 2;
		read_dquote(ps, w);
	} else if (is_name_start(c) || (c >= '0' && c <= '9') ||
		   (c > 0 && strchr("@*#?-$!", c))) {
		ps->pos += 2;
		if (is_name_start(c))
			while (is_name(peekc(ps, 0)))
				ps->pos++;
		w->flags |= HX_SHW_DYNAMIC | (dq ? 0 : HX_SHW_SPLIT);
		put(ps, w, ps->s + at, ps->pos - at);
	} else {
		ps->pos++;
		putc1(ps, w, '$');
	}
}

/* pos is just after the opening '"'. */
static void read_dquote(struct ps *ps, struct wbuf *w)
{
	size_t at = ps->pos - 1;

	mark_quoted(w);
	for (;;) {
		int c = peekc(ps, 0);

		if (c < 0 || ps->stop)
			return opaque(ps, at, "an unclosed \"");
		if (c == '"') {
			ps->pos++;
			return;
		}
		if (c == '\\') {
			int n = peekc(ps, 1);

			if (n == '\n') {
				ps->pos += 2;
				continue;
			}
			if (n == '$' || n == '`' || n == '"' || n == '\\') {
				putc1(ps, w, (char)n);
				ps->pos += 2;
				continue;
			}
		}
		if (c == '$') {
			read_dollar(ps, w, true);
		} else if (c == '`') {
			ps->pos++;
			read_backquote(ps, w, true);
		} else {
			putc1(ps, w, (char)c);
			ps->pos++;
		}
	}
}

/* "~" or "~/..." at a word's start; "~user" is not known. */
static void read_tilde(struct ps *ps, struct wbuf *w)
{
	int n = peekc(ps, 1);

	ps->pos++;
	if (ps->home && (n < 0 || n == '/' || is_meta(n))) {
		put(ps, w, ps->home, strlen(ps->home));
		return;
	}
	w->flags |= HX_SHW_DYNAMIC;
	putc1(ps, w, '~');
}

static void read_word(struct ps *ps, struct wbuf *w)
{
	size_t start = ps->pos;

	while (!ps->stop) {
		int c = peekc(ps, 0);

		if (c < 0 || c == '\0' || is_meta(c))
			break;
		switch (c) {
		case '\\':
			if (peekc(ps, 1) == '\n') {
				ps->pos += 2;
				break;
			}
			if (peekc(ps, 1) < 0) {
				putc1(ps, w, '\\');
				ps->pos++;
				break;
			}
			mark_quoted(w);
			putc1(ps, w, ps->s[ps->pos + 1]);
			ps->pos += 2;
			break;
		case '\'': {
			const char *end = memchr(ps->s + ps->pos + 1, '\'',
						 ps->len - ps->pos - 1);

			if (!end)
				return opaque(ps, ps->pos, "an unclosed '");
			mark_quoted(w);
			put(ps, w, ps->s + ps->pos + 1,
			    (size_t)(end - (ps->s + ps->pos + 1)));
			ps->pos = (size_t)(end - ps->s) + 1;
			break;
		}
		case '"':
			ps->pos++;
			read_dquote(ps, w);
			break;
		case '$':
			read_dollar(ps, w, false);
			break;
		case '`':
			ps->pos++;
			read_backquote(ps, w, false);
			break;
		case '~':
			if (ps->pos == start) {
				read_tilde(ps, w);
				break;
			}
			putc1(ps, w, '~');
			ps->pos++;
			break;
		case '[':
			/* "[" alone is test(1); "[ab]" a pattern */
			for (size_t k = ps->pos + 1;
			     k < ps->len && !is_meta(ps->s[k]); k++)
				if (ps->s[k] == ']') {
					w->flags |= HX_SHW_GLOB | HX_SHW_SPLIT;
					break;
				}
			putc1(ps, w, (char)c);
			ps->pos++;
			break;
		case '*':
		case '?':
			w->flags |= HX_SHW_GLOB | HX_SHW_SPLIT;
			putc1(ps, w, (char)c);
			ps->pos++;
			break;
		case '{':
		case '}':
		case ',':
		case '.':
			/* Brace expansion (bash): {a,b} and {1..3} are
			 * several words; "{}" (find -exec) is one. */
			if (c == '{')
				w->brace_open = true;
			else if (c == ',' || (c == '.' && peekc(ps, 1) == '.'))
				w->brace_list = w->brace_list || w->brace_open;
			else if (c == '}' && w->brace_list)
				w->flags |= HX_SHW_GLOB | HX_SHW_SPLIT;
			putc1(ps, w, (char)c);
			ps->pos++;
			break;
		default:
			putc1(ps, w, (char)c);
			ps->pos++;
			break;
		}
	}
}

/* The bodies of the here-documents whose line just ended: data, unless
 * an unquoted delimiter lets a $(...) in them run. */
static void skip_heredocs(struct ps *ps)
{
	for (size_t i = 0; i < ps->nhd && !ps->stop; i++) {
		const struct heredoc *h = &ps->hd[i];
		size_t dl = strlen(h->delim);

		while (ps->pos < ps->len) {
			const char *line = ps->s + ps->pos;
			const char *nl = memchr(line, '\n', ps->len - ps->pos);
			size_t n = nl ? (size_t)(nl - line) : ps->len - ps->pos;
			size_t skip = 0;

			while (h->tabs && skip < n && line[skip] == '\t')
				skip++;
			ps->pos += n + (nl ? 1 : 0);
			if (n - skip == dl &&
			    !memcmp(line + skip, h->delim, dl))
				break;
			if (!h->quoted &&
			    (memmem(line, n, "$(", 2) || memchr(line, '`', n)))
				return opaque(ps, (size_t)(line - ps->s),
					      "a here-document that runs a "
					      "command");
		}
	}
	ps->nhd = 0;
}

static void next(struct ps *ps, struct tok *t)
{
	int c;

	if (ps->has_back) {
		*t = ps->back;
		ps->has_back = false;
		return;
	}
	memset(t, 0, sizeof(*t));
	for (;;) {
		c = peekc(ps, 0);
		if (c == ' ' || c == '\t') {
			ps->pos++;
		} else if (c == '\\' && peekc(ps, 1) == '\n') {
			ps->pos += 2;
		} else if (c == '#') {
			while (peekc(ps, 0) >= 0 && peekc(ps, 0) != '\n')
				ps->pos++;
		} else {
			break;
		}
	}
	t->at = ps->pos;
	if (ps->stop || c < 0 || c == '\0')
		return;
	if (c == '\n') {
		ps->pos++;
		t->kind = TK_NL;
		skip_heredocs(ps);
		return;
	}
	if (c == ';') {
		ps->pos++;
		t->kind = TK_SEMI;
		if (peekc(ps, 0) == ';' || peekc(ps, 0) == '&')
			t->kind = TK_DSEMI;
		return;
	}
	if (c == '&' || c == '|') {
		int n = peekc(ps, 1);

		ps->pos++;
		if (c == '&' && n == '>') {
			ps->pos += peekc(ps, 1) == '>' ? 2 : 1;
			t->kind = TK_REDIR;
			t->redir = R_WRITE;
		} else if (n == c) {
			ps->pos++;
			t->kind = c == '&' ? TK_AND : TK_OR;
		} else if (c == '|') {
			ps->pos += n == '&';
			t->kind = TK_PIPE;
		} else {
			t->kind = TK_AMP;
		}
		return;
	}
	if (c == '(' || c == ')') {
		ps->pos++;
		t->kind = c == '(' ? TK_LPAREN : TK_RPAREN;
		return;
	}
	if ((c == '<' || c == '>') && peekc(ps, 1) == '(') {
		struct wbuf w = {0};

		ps->pos += 2;
		read_subst(ps, &w, t->at, false);
		t->kind = TK_WORD;
		t->text = w.p ? mem_strndup(ps, w.p, w.len) : NULL;
		t->flags = w.flags;
		free(w.p);
		return;
	}
	if (c == '<' || c == '>') {
		int n = peekc(ps, 1);

		ps->pos++;
		t->kind = TK_REDIR;
		t->redir = c == '<' ? R_READ : R_WRITE;
		if (n == '&') {
			ps->pos++;
			t->redir = R_DUP;
		} else if (c == '<' && n == '<') {
			ps->pos++;
			t->redir = R_HEREDOC;
			if (peekc(ps, 0) == '-') {
				ps->pos++;
				t->redir = R_HEREDOC_TABS;
			} else if (peekc(ps, 0) == '<') {
				ps->pos++;
				t->redir = R_HERESTR;
			}
		} else if (n == '>' || n == '|' || (c == '<' && n == '>')) {
			ps->pos++;
			t->redir = R_WRITE;
		}
		return;
	}
	{
		struct wbuf w = {0};
		bool digits;

		read_word(ps, &w);
		t->kind = TK_WORD;
		t->text = mem_strndup(ps, w.p ? w.p : "", w.len);
		t->flags = w.flags;
		t->quoted = w.quoted;
		t->quoted_at = w.quoted_at;
		digits = w.len > 0 && !w.quoted && !w.flags &&
			 strspn(w.p, "0123456789") == w.len;
		free(w.p);
		/* "2>" : the number names the descriptor. */
		c = peekc(ps, 0);
		if (digits && (c == '<' || c == '>'))
			next(ps, t);
	}
}

static void unget(struct ps *ps, const struct tok *t)
{
	ps->back = *t;
	ps->has_back = true;
}

/* NAME=VALUE with NAME unquoted (X="a b" is one, "X=1" is not). */
static bool is_assignment(const struct tok *t)
{
	const char *s = t->text;

	if (!is_name_start((unsigned char)s[0]))
		return false;
	while (is_name((unsigned char)*s))
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

	next(ps, &t);
	if (t.kind != TK_WORD || !t.text)
		return opaque(ps, op->at, "a redirection without a target");
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
			return opaque(ps, op->at, "too many here-documents");
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
	p = mem_alloc(ps, a + b + 2);
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
		return opaque(ps, words[0].at, "too many commands");
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
	argv = mem_alloc(ps, (n + 1) * sizeof(*argv));
	flags = mem_alloc(ps, n * sizeof(*flags));
	if (!argv || !flags)
		return;
	for (size_t i = 0; i < n; i++) {
		argv[i] = words[i].text;
		flags[i] = words[i].flags;
	}
	c = &o->cmds[o->ncmds++];
	*c = (struct hx_sh_cmd){argv, flags, n, ps->dir, writes};
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

	next(ps, &t);
	if (t.kind == TK_LPAREN) {
		if (peekc(ps, 0) != '(')
			return opaque(ps, kw->at,
				      "a for the reader does "
				      "not follow");
		ps->pos++;
		return skip_arith(ps);
	}
	if (t.kind != TK_WORD)
		return opaque(ps, kw->at, "a for without a name");
	next(ps, &t);
	if (!(t.kind == TK_WORD && !strcmp(t.text, "in"))) {
		unget(ps, &t);
		return;
	}
	do
		next(ps, &t);
	while (t.kind == TK_WORD && !ps->stop);
	unget(ps, &t);
}

/* [[ ... ]]: a test; its words may hold $(...), its operators are
 * not the shell's. */
static void skip_test(struct ps *ps, const struct tok *kw)
{
	static const char *const close[] = {"]]", NULL};
	struct tok t;

	do {
		next(ps, &t);
		if (t.kind == TK_EOF)
			return opaque(ps, kw->at, "an unclosed [[");
	} while (!keyword(&t, close) && !ps->stop);
}

/* One simple command, or a keyword, or a subshell. */
static void parse_command(struct ps *ps)
{
	static const char *const fors[] = {"for", "select", NULL};
	static const char *const unread[] = {"case", "coproc", NULL};
	static const char *const func[] = {"function", NULL};
	static const char *const test[] = {"[[", NULL};
	struct tok *words = NULL, t;
	size_t n = 0, cap = 0;
	bool writes = false, prefix = false;

	while (!ps->stop) {
		next(ps, &t);
		if (t.kind == TK_REDIR) {
			redirect(ps, &t, &writes);
			prefix = true;
			continue;
		}
		if (t.kind == TK_LPAREN && n == 0 && !prefix) {
			const char *saved = ps->dir;

			if (peekc(ps, 0) == '(') { /* (( arithmetic )) */
				ps->pos++;
				skip_arith(ps);
				break;
			}
			if (++ps->depth > HX_SH_MAX_DEPTH)
				return opaque(ps, t.at,
					      "commands nested too "
					      "deep");
			parse_list(ps, TK_RPAREN);
			ps->depth--;
			ps->dir = saved;
			continue;
		}
		if (t.kind == TK_LPAREN && n == 1) {
			/* NAME () BODY: the body is read as it comes. */
			next(ps, &t);
			if (t.kind != TK_RPAREN)
				opaque(ps, t.at,
				       "a ( the reader does not "
				       "follow");
			n = 0;
			break;
		}
		if (t.kind != TK_WORD) {
			unget(ps, &t);
			break;
		}
		if (n == 0) {
			if (is_assignment(&t)) {
				if (ps->s[ps->pos - 1] == '=' &&
				    peekc(ps, 0) == '(')
					opaque(ps, t.at, "an array");
				prefix = true;
				continue;
			}
			if (!prefix && keyword(&t, separators))
				break;
			if (!prefix && keyword(&t, fors)) {
				skip_for(ps, &t);
				break;
			}
			if (!prefix && keyword(&t, unread)) {
				opaque(ps, t.at,
				       !strcmp(t.text, "case") ? "a case"
							       : "a coproc");
				break;
			}
			if (!prefix && keyword(&t, func)) {
				next(ps, &t); /* the name */
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
	struct tok t;

	while (!ps->stop) {
		next(ps, &t);
		if (ps->stop || t.kind == term)
			return;
		switch (t.kind) {
		case TK_EOF:
			return opaque(ps, t.at, "an unclosed ( or $(");
		case TK_NL:
		case TK_SEMI:
		case TK_AMP:
		case TK_AND:
		case TK_OR:
		case TK_PIPE:
			continue;
		case TK_RPAREN:
			return opaque(ps, t.at, "an unexpected )");
		case TK_DSEMI:
			return opaque(ps, t.at, "a case");
		default:
			unget(ps, &t);
			parse_command(ps);
			break;
		}
	}
}

static void parse_text(struct ps *ps, const char *text, size_t len, size_t at)
{
	struct ps in = *ps;

	if (ps->depth + 1 > HX_SH_MAX_DEPTH)
		return opaque(ps, at, "commands nested too deep");
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
	parse_list(&ps, TK_EOF);
	if (ps.nhd && !ps.stop)
		skip_heredocs(&ps);
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
