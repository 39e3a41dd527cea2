/* The shell reader's lexer; see shlex.h. Words are read with their
 * quotes removed and what is not known of them marked (HX_SHW_*). */
#define _GNU_SOURCE
#include "policy/shlex.h"
#include "common/sbuf.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *hx_shl_alloc(struct ps *ps, size_t n)
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

char *hx_shl_strndup(struct ps *ps, const char *s, size_t n)
{
	char *p = hx_shl_alloc(ps, n + 1);

	if (p)
		memcpy(p, s, n);
	return p;
}

void hx_shl_opaque(struct ps *ps, size_t at, const char *why)
{
	if (!ps->out->opaque) {
		ps->out->opaque = why;
		ps->out->opaque_at = ps->base + at;
	}
	ps->stop = true;
}

int hx_shl_peekc(const struct ps *ps, size_t off)
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

bool hx_shl_name_start(int c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool hx_shl_name(int c)
{
	return hx_shl_name_start(c) || (c >= '0' && c <= '9');
}

/* After "((" or "$((": to the matching "))". False, pos as it was,
 * when it is no arithmetic: bash and dash read "((cmd) )" as two
 * subshells. A $(...) inside runs: read as commands; a `...`, opaque. */
bool hx_shl_skip_arith(struct ps *ps)
{
	size_t start = ps->pos;
	int depth = 2;

	while (ps->pos < ps->len && depth > 0 && !ps->stop) {
		char c = ps->s[ps->pos++];

		if (c == '(') {
			depth++;
		} else if (c == ')') {
			if (--depth == 1 && hx_shl_peekc(ps, 0) != ')') {
				ps->pos = start;
				return false;
			}
		} else if (c == '$' && hx_shl_peekc(ps, 0) == '(' &&
			   hx_shl_peekc(ps, 1) != '(') {
			ps->pos++;
			ps->list(ps, TK_RPAREN);
		} else if (c == '`') {
			hx_shl_opaque(ps, ps->pos - 1,
				      "a `...` inside arithmetic");
			return true;
		}
	}
	if (depth > 0)
		hx_shl_opaque(ps, start, "an unclosed ((");
	return true;
}

/* $(...) and <(...): pos is just after the "(". */
static void read_subst(struct ps *ps, struct wbuf *w, size_t at, bool dq)
{
	const char *saved = ps->dir;

	if (++ps->depth > HX_SH_MAX_DEPTH)
		return hx_shl_opaque(ps, at, "commands nested too deep");
	ps->list(ps, TK_RPAREN);
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
		int c = hx_shl_peekc(ps, 0);

		if (c < 0) {
			free(in.p);
			return hx_shl_opaque(ps, at, "an unclosed `");
		}
		ps->pos++;
		if (c == '`')
			break;
		if (c == '\\') {
			int n = hx_shl_peekc(ps, 0);

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
		ps->text(ps, in.p ? in.p : "", in.len, at + 1);
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
		int c = hx_shl_peekc(ps, 0);

		if (c < 0)
			return hx_shl_opaque(ps, at, "an unclosed ${");
		ps->pos++;
		if (c == '\\') {
			ps->pos++;
		} else if (c == '`' ||
			   (c == '$' && hx_shl_peekc(ps, 0) == '(')) {
			return hx_shl_opaque(ps, ps->pos - 1,
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
		int c = hx_shl_peekc(ps, 0), h;
		const char *e;

		if (c < 0)
			return hx_shl_opaque(ps, at, "an unclosed $'");
		ps->pos++;
		if (c == '\'')
			return;
		if (c != '\\') {
			putc1(ps, w, (char)c);
			continue;
		}
		c = hx_shl_peekc(ps, 0);
		ps->pos++;
		/* dash has no $'...': to it "\'" ends a '...' of its own
		 * and what follows is commands; the readings part there. */
		if (c == '\'')
			return hx_shl_opaque(ps, at, "a \\' in $'...'");
		if (c > 0 && (e = strchr(from, c))) {
			putc1(ps, w, to[e - from]);
		} else if (c == 'x' &&
			   (h = hx_hex_value(hx_shl_peekc(ps, 0))) >= 0) {
			int v = h, h2;

			ps->pos++;
			if ((h2 = hx_hex_value(hx_shl_peekc(ps, 0))) >= 0) {
				v = v * 16 + h2;
				ps->pos++;
			}
			if (v == 0)
				return hx_shl_opaque(ps, at, "a NUL in $'...'");
			putc1(ps, w, (char)v);
		} else if (c >= '0' && c <= '7') {
			int v = c - '0';

			for (int i = 0; i < 2 && hx_shl_peekc(ps, 0) >= '0' &&
					hx_shl_peekc(ps, 0) <= '7';
			     i++)
				v = v * 8 + (ps->s[ps->pos++] - '0');
			if ((v & 0xff) == 0)
				return hx_shl_opaque(ps, at, "a NUL in $'...'");
			putc1(ps, w, (char)v);
		} else {
			return hx_shl_opaque(ps, at,
					     "an escape of $'...' not read");
		}
	}
}

static void read_dquote(struct ps *ps, struct wbuf *w);

/* At a "$". */
static void read_dollar(struct ps *ps, struct wbuf *w, bool dq)
{
	size_t at = ps->pos;
	int c = hx_shl_peekc(ps, 1);

	if (c == '(' && hx_shl_peekc(ps, 2) == '(') {
		ps->pos += 3;
		if (!hx_shl_skip_arith(ps)) {
			ps->pos = at + 2; /* $( (cmd) ) */
			return read_subst(ps, w, at, dq);
		}
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
	} else if (hx_shl_name_start(c) || (c >= '0' && c <= '9') ||
		   (c > 0 && strchr("@*#?-$!", c))) {
		ps->pos += 2;
		if (hx_shl_name_start(c))
			while (hx_shl_name(hx_shl_peekc(ps, 0)))
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
		int c = hx_shl_peekc(ps, 0);

		if (c < 0 || ps->stop)
			return hx_shl_opaque(ps, at, "an unclosed \"");
		if (c == '"') {
			ps->pos++;
			return;
		}
		if (c == '\\') {
			int n = hx_shl_peekc(ps, 1);

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
	int n = hx_shl_peekc(ps, 1);

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
		int c = hx_shl_peekc(ps, 0);

		if (c < 0 || c == '\0' || is_meta(c))
			break;
		switch (c) {
		case '\\':
			if (hx_shl_peekc(ps, 1) == '\n') {
				ps->pos += 2;
				break;
			}
			if (hx_shl_peekc(ps, 1) < 0) {
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
				return hx_shl_opaque(ps, ps->pos,
						     "an unclosed '");
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
			/* "[" alone is test(1); "[ab]" a pattern. Each byte
			 * is looked at once: "[[[[..." stays linear. */
			if (!(w->flags & HX_SHW_GLOB) &&
			    ps->pos >= w->no_close) {
				size_t k = ps->pos + 1;

				while (k < ps->len && !is_meta(ps->s[k]) &&
				       ps->s[k] != ']')
					k++;
				if (k < ps->len && ps->s[k] == ']')
					w->flags |= HX_SHW_GLOB | HX_SHW_SPLIT;
				else
					w->no_close = k;
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
			else if (c == ',' ||
				 (c == '.' && hx_shl_peekc(ps, 1) == '.'))
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
void hx_shl_skip_heredocs(struct ps *ps)
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
				return hx_shl_opaque(
				    ps, (size_t)(line - ps->s),
				    "a here-document that runs a "
				    "command");
		}
	}
	ps->nhd = 0;
}

/* Whether quoted text holds an expansion in an array subscript
 * (NAME[...$(cmd)...]): bash runs it when arithmetic reads the text
 * (unset 'a[$(cmd)]', test -v, test X -eq, declare, let, (( x )) with
 * x='a[$(cmd)]'), though the quotes kept it from the reader. Quotes
 * within the subscript keep it open. */
static bool subscript_subst(const char *p, size_t n)
{
	size_t depth = 0;
	char q = 0;

	for (size_t i = 0; i < n; i++) {
		char c = p[i];

		if (q) {
			q = c == q ? 0 : q;
		} else if (depth && (c == '\'' || c == '"')) {
			q = c;
		} else if (c == '[' &&
			   (depth || (i && (isalnum((unsigned char)p[i - 1]) ||
					    p[i - 1] == '_')))) {
			depth++;
		} else if (c == ']' && depth) {
			depth--;
			continue;
		}
		if (depth &&
		    (c == '`' || (c == '$' && i + 1 < n &&
				  (p[i + 1] == '(' || p[i + 1] == '{'))))
			return true;
	}
	return false;
}

void hx_shl_next(struct ps *ps, struct tok *t)
{
	int c;

	if (ps->has_back) {
		*t = ps->back;
		ps->has_back = false;
		return;
	}
	memset(t, 0, sizeof(*t));
	for (;;) {
		c = hx_shl_peekc(ps, 0);
		if (c == ' ' || c == '\t') {
			ps->pos++;
		} else if (c == '\\' && hx_shl_peekc(ps, 1) == '\n') {
			ps->pos += 2;
		} else if (c == '#') {
			while (hx_shl_peekc(ps, 0) >= 0 &&
			       hx_shl_peekc(ps, 0) != '\n')
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
		hx_shl_skip_heredocs(ps);
		return;
	}
	if (c == ';') {
		ps->pos++;
		t->kind = TK_SEMI;
		if (hx_shl_peekc(ps, 0) == ';' || hx_shl_peekc(ps, 0) == '&') {
			/* ;; ;& ;;& end a case's branch */
			t->kind = TK_DSEMI;
			ps->pos++;
			if (ps->s[ps->pos - 1] == ';' &&
			    hx_shl_peekc(ps, 0) == '&')
				ps->pos++;
		}
		return;
	}
	if (c == '&' || c == '|') {
		int n = hx_shl_peekc(ps, 1);

		ps->pos++;
		if (c == '&' && n == '>') {
			ps->pos += hx_shl_peekc(ps, 1) == '>' ? 2 : 1;
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
	if ((c == '<' || c == '>') && hx_shl_peekc(ps, 1) == '(') {
		struct wbuf w = {0};

		ps->pos += 2;
		read_subst(ps, &w, t->at, false);
		t->kind = TK_WORD;
		t->text = w.p ? hx_shl_strndup(ps, w.p, w.len) : NULL;
		t->flags = w.flags;
		free(w.p);
		return;
	}
	if (c == '<' || c == '>') {
		int n = hx_shl_peekc(ps, 1);

		ps->pos++;
		t->kind = TK_REDIR;
		t->redir = c == '<' ? R_READ : R_WRITE;
		if (n == '&') {
			ps->pos++;
			t->redir = R_DUP;
		} else if (c == '<' && n == '<') {
			ps->pos++;
			t->redir = R_HEREDOC;
			if (hx_shl_peekc(ps, 0) == '-') {
				ps->pos++;
				t->redir = R_HEREDOC_TABS;
			} else if (hx_shl_peekc(ps, 0) == '<') {
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
		t->text = hx_shl_strndup(ps, w.p ? w.p : "", w.len);
		t->flags = w.flags;
		t->quoted = w.quoted;
		t->quoted_at = w.quoted_at;
		if (w.quoted && w.p && subscript_subst(w.p, w.len))
			hx_shl_opaque(
			    ps, t->at,
			    "a quoted command substitution in a "
			    "[subscript] (bash's arithmetic runs it)");
		digits = w.len > 0 && !w.quoted && !w.flags &&
			 strspn(w.p, "0123456789") == w.len;
		free(w.p);
		/* "2>" : the number names the descriptor. */
		c = hx_shl_peekc(ps, 0);
		if (digits && (c == '<' || c == '>'))
			hx_shl_next(ps, t);
	}
}

void hx_shl_unget(struct ps *ps, const struct tok *t)
{
	ps->back = *t;
	ps->has_back = true;
}
