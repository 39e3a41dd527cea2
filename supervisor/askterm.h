/* The questions of ask.h on harness-exec's terminal, not the agent's
 * view of it: the agent may own stdin and stdout, or draw a full-screen
 * UI in raw mode. While a question is on the screen, a helper process
 * holds the terminal: it is the terminal's foreground process group;
 * every process of the agent's tree but one waiting on a question is
 * stopped (a read begun before, or a writer that ignores SIGTTOU, would
 * take the key or draw a question of its own over it; one that holds
 * the terminal where no fd table shows it, or continues another) and
 * nothing of the agent's opens it for writing meanwhile; input typed
 * before the question is discarded; the agent's terminal modes are put
 * back after, and what was stopped is continued. The
 * agent cannot type an answer: it cannot push input into a terminal
 * (TIOCSTI is refused in the kernel sandbox) and has no master side.
 *
 * A call's question is answered with one key; the agent's own question
 * (askuser.h) with a line the person types (echoed by the helper, its
 * text checked before it is sent) or a digit that picks a choice, and
 * declined with Esc. The agent's text is shown with its control and
 * bidirectional characters escaped.
 *
 * A question is put only when harness-exec (or a process group of the
 * agent's tree) is in the terminal's foreground: a session started in
 * the background, or with no terminal, prints a line saying how to
 * answer (harness-exec approve) and waits for that or the timeout. */
#ifndef HX_ASKTERM_H
#define HX_ASKTERM_H

#include <stdbool.h>

struct hx_ask;
struct hx_server;
struct hx_pipeline;
struct hx_askterm;
struct hx_execgate;

/* Puts a's questions on the controlling terminal, as they come (quiet:
 * no line when they cannot be put). *gate (may be NULL, or point to
 * NULL until the exec gate starts) holds the tree while a question is
 * up. Returns NULL when out of memory; without a terminal it only
 * prints the lines. */
struct hx_askterm *hx_askterm_new(struct hx_ask *a, struct hx_pipeline *pl,
				  struct hx_server *srv,
				  struct hx_execgate *const *gate, bool quiet);
/* Takes a question off the screen (its helper puts the terminal back);
 * NULL is a no-op. */
void hx_askterm_free(struct hx_askterm *t);

#endif
