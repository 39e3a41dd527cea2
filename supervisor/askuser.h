/* A question of the agent's own, put through the approvals (ask.h):
 * harness-mcp's ask_user when its client cannot show one (issue 15).
 * Free text and, optionally, the choices its answer must be one of; the
 * answer is a line a person gives. Pure helpers: a copy, the checks of
 * an answer, the choice a typed line names, and the agent's text made
 * safe for a terminal (it may hold escape sequences that would move the
 * cursor or write over the question). Apart from hx_askuser_dup, nothing
 * here allocates or uses stdio: askterm.c's helper, a child forked from
 * a threaded process, calls them. */
#ifndef HX_ASKUSER_H
#define HX_ASKUSER_H

#include <stdbool.h>
#include <stddef.h>

struct hx_sbuf;

/* Bytes of an answer: a line typed on a terminal or given on a command
 * line, not a document. */
#define HX_ASK_ANSWER_MAX 2048

struct hx_ask_question {
	const char *text;
	const char *const *choices; /* nchoices of them; 0: any answer */
	size_t nchoices;
	const char *call_id; /* the tool call that asks ("mcp-3"), or NULL */
};

/* Copies in into out, every string owned by out: 0, or -ENOMEM (out
 * then holds nothing). */
int hx_askuser_dup(const struct hx_ask_question *in,
		   struct hx_ask_question *out);
/* Frees what hx_askuser_dup made; an empty one is a no-op. */
void hx_askuser_free(struct hx_ask_question *q);

/* Whether answer may answer q: 1 to HX_ASK_ANSWER_MAX bytes of UTF-8
 * without a control character (C0, DEL, C1), and exactly one of q's
 * choices when it has them. 0, or -EINVAL with why (for people; the
 * choices in it made terminal-safe). */
int hx_askuser_check(const struct hx_ask_question *q, const char *answer,
		     char *why, size_t wlen);

/* The choice a typed line names: its very text, else its number
 * (1-based, decimal). Returns its index, or -1. */
int hx_askuser_choice(const struct hx_ask_question *q, const char *typed);

/* Whether a digit key may pick a choice at once: there are 1 to 9 and
 * none begins with a digit (then a digit cannot begin one's text). */
bool hx_askuser_digit_picks(const struct hx_ask_question *q);

/* s for a terminal: UTF-8 as it is, but a control character (C0, DEL,
 * C1), a character that reorders the text around it (the bidirectional
 * controls) and a byte that is no UTF-8 escaped (\xNN, \uNNNN), a
 * backslash doubled; a newline is nl, or escaped when nl is NULL. */
void hx_askuser_put_text(struct hx_sbuf *b, const char *s, const char *nl);

#endif
