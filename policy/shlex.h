/* The shell reader's lexer, shared by policy/shlex.c (tokens, words,
 * here-documents) and policy/shparse.c (commands). Internal to them. */
#ifndef HX_POLICY_SHLEX_H
#define HX_POLICY_SHLEX_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/shparse.h"

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
	size_t no_close;	     /* no "]" before this offset of the text */
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
	/* Function bodies: the name of one just defined whose { has not
	 * come yet, and those whose body is being read, each with the
	 * depth of { } its body opened (innermost last). */
	const char *fn_pending;
	const char *fn[4];
	int fn_at[4], nfn, braces;
	/* The parser, for what the lexer finds inside a word: $(...) and
	 * <(...) read to term, `...` read as a text of its own. */
	void (*list)(struct ps *ps, enum tk term);
	void (*text)(struct ps *ps, const char *text, size_t len, size_t at);
};

/* Zeroed memory of the script, NULL (and ps->nomem) when out. */
void *hx_shl_alloc(struct ps *ps, size_t n);
char *hx_shl_strndup(struct ps *ps, const char *s, size_t n);
/* The script cannot be read: why, at offset at of ps->s; stops. */
void hx_shl_opaque(struct ps *ps, size_t at, const char *why);
/* The byte off past pos, or -1 past the end. */
int hx_shl_peekc(const struct ps *ps, size_t off);
bool hx_shl_name_start(int c);
bool hx_shl_name(int c);
/* After "((": to the matching "))"; false (pos as it was) when what
 * follows is subshells, not arithmetic. */
bool hx_shl_skip_arith(struct ps *ps);
/* The bodies of the here-documents whose line just ended. */
void hx_shl_skip_heredocs(struct ps *ps);
/* The next token (the one given back first). */
void hx_shl_next(struct ps *ps, struct tok *t);
void hx_shl_unget(struct ps *ps, const struct tok *t);

#endif
