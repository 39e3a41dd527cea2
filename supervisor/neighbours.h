/* Trusted neighbours (issue 10, class 4): services outside the sandbox
 * that trust whoever has the user's uid, announced to the agent by its
 * environment: the ssh agent, the X server and Wayland compositor, the
 * D-Bus session bus, the terminal multiplexer or editor the agent runs
 * in. Each becomes a deny rule of the session (harness:ssh-agent,
 * harness:display, harness:session-bus, harness:terminal), so they hold
 * wherever the sockets live; a profile opens one with `disable:` (the
 * built-in ssh-agent profile, for git over ssh), and then the socket
 * $SSH_AUTH_SOCK names is allowed as the neighbour it is (rule
 * harness:ssh-agent-socket, which the deny outranks until then). The
 * well-known places are the default policy's rule neighbour-sockets. */
#ifndef HX_NEIGHBOURS_H
#define HX_NEIGHBOURS_H

#include <stddef.h>

#include "policy/policy.h"

#define HX_NEIGHBOUR_RULES 5
#define HX_NEIGHBOUR_MAX   8 /* patterns per rule */

struct hx_neighbours {
	struct hx_session_rule rules[HX_NEIGHBOUR_RULES];
	const char *pats[HX_NEIGHBOUR_RULES][HX_NEIGHBOUR_MAX];
	char buf[HX_NEIGHBOUR_RULES][HX_NEIGHBOUR_MAX][4200];
};

/* Fills n from the environment (getenv). The rules point into n. */
void hx_neighbours_from_env(struct hx_neighbours *n);

#endif
