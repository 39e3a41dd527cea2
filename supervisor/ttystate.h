/* The user's terminal as the session found it, put back at its end: an
 * agent's stty -echo, raw mode, or flow control left off outlasts it
 * (the user's shell then types blind, or its ^C does nothing). What a
 * terminal's own process may also change and the kernel keeps (its line
 * discipline, exclusive mode, stopped output) is refused in BPF
 * (seccomp_deny.c); its settings are every TUI's to change, so they are
 * restored instead, as ssh and script(1) do. */
#ifndef HX_TTYSTATE_H
#define HX_TTYSTATE_H

#include <stdbool.h>
#include <termios.h>

struct hx_ttystate {
	int fd; /* 0: stdin and stdout are one terminal whose foreground is
		 * harness-exec's; -1: not so (a pipeline, a background
		 * job, no terminal): nothing is put back */
	struct termios t;
};

/* Before the agent starts. */
void hx_ttystate_save(struct hx_ttystate *s);

/* Once no process of the session is left: the settings, and the
 * foreground back to harness-exec's group (an agent that made its own
 * the foreground and ended left the user's shell a terminal it does not
 * own). */
void hx_ttystate_restore(const struct hx_ttystate *s);

#endif
