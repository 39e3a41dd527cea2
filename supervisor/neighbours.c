/* The environment's neighbour sockets; see neighbours.h. */
#include "supervisor/neighbours.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/session.h"
#include "common/glob.h"
#include "common/path.h"

enum { NB_SSH, NB_DISPLAY, NB_BUS, NB_TERMINAL, NB_SSH_OPEN };

static const char *const names[HX_NEIGHBOUR_RULES] = {
    "harness:ssh-agent", "harness:display", "harness:session-bus",
    "harness:terminal", "harness:ssh-agent-socket"};

/* Adds "unix:" + the socket at path (len bytes; '@' first: abstract),
 * written as judged paths are (SSH_AUTH_SOCK=/tmp/ssh-x/./agent named
 * none) and its glob characters escaped. Relative or empty paths are no
 * socket anyone can reach by that name: skipped. */
static void add(struct hx_neighbours *n, int rule, const char *path, size_t len)
{
	struct hx_session_rule *r = &n->rules[rule];
	char raw[4096], norm[4096], esc[4096];
	char *out;

	if (!len || len >= sizeof(raw) || r->npatterns == HX_NEIGHBOUR_MAX ||
	    (path[0] != '/' && path[0] != '@'))
		return;
	memcpy(raw, path, len);
	raw[len] = '\0';
	if (raw[0] == '/' &&
	    hx_path_normalize(NULL, raw, norm, sizeof(norm)) >= 0)
		memcpy(raw, norm, strlen(norm) + 1);
	if (hx_glob_escape(raw, esc, sizeof(esc)))
		return;
	out = n->buf[rule][r->npatterns];
	snprintf(out, sizeof(n->buf[0][0]), "unix:%s", esc);
	n->pats[rule][r->npatterns++] = out;
}

static void add_env(struct hx_neighbours *n, int rule, const char *var,
		    const char *stop)
{
	const char *v = getenv(var);

	if (v)
		add(n, rule, v, strcspn(v, stop));
}

/* $DISPLAY ":N" or ":N.S" (local): the X server's path and abstract
 * sockets. A remote display is a TCP address, the network rules'. */
static void add_display(struct hx_neighbours *n)
{
	const char *d = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY"),
		   *rt = getenv("XDG_RUNTIME_DIR");
	char p[4200];
	int num;

	if (d && (d[0] == ':' || !strncmp(d, "unix:", 5)) &&
	    sscanf(strchr(d, ':') + 1, "%d", &num) == 1 && num >= 0) {
		snprintf(p, sizeof(p), "/tmp/.X11-unix/X%d", num);
		add(n, NB_DISPLAY, p, strlen(p));
		snprintf(p, sizeof(p), "@/tmp/.X11-unix/X%d", num);
		add(n, NB_DISPLAY, p, strlen(p));
	}
	if (w && w[0] == '/')
		add(n, NB_DISPLAY, w, strlen(w));
	else if (w && *w && rt &&
		 snprintf(p, sizeof(p), "%s/%s", rt, w) < (int)sizeof(p))
		add(n, NB_DISPLAY, p, strlen(p));
}

/* $DBUS_SESSION_BUS_ADDRESS: "unix:path=P" or "unix:abstract=A", with
 * ",guid=..." and ";"-separated alternatives; and the runtime dir's bus. */
static void add_bus(struct hx_neighbours *n)
{
	const char *a = getenv("DBUS_SESSION_BUS_ADDRESS"),
		   *rt = getenv("XDG_RUNTIME_DIR");
	char p[4200];

	for (const char *s = a; s && *s;) {
		const char *path = strstr(s, "path="),
			   *abs = strstr(s, "abstract="), *end = strchr(s, ';');

		if (path && (!end || path < end))
			add(n, NB_BUS, path + 5, strcspn(path + 5, ",;"));
		if (abs && (!end || abs < end) &&
		    snprintf(p, sizeof(p), "@%.*s", (int)strcspn(abs + 9, ",;"),
			     abs + 9) < (int)sizeof(p))
			add(n, NB_BUS, p, strlen(p));
		s = end ? end + 1 : NULL;
	}
	if (rt && snprintf(p, sizeof(p), "%s/bus", rt) < (int)sizeof(p))
		add(n, NB_BUS, p, strlen(p));
}

void hx_neighbours_from_env(struct hx_neighbours *n)
{
	/* Not buf (168 KB, written where used): touched whole, its pages
	 * were 40 faults of every start. */
	memset(n->rules, 0, sizeof(n->rules));
	memset(n->pats, 0, sizeof(n->pats));
	for (int i = 0; i < HX_NEIGHBOUR_RULES; i++) {
		n->rules[i].name = names[i];
		n->rules[i].verdict = HX_VERDICT_DENY;
		n->rules[i].patterns = n->pats[i];
	}
	add_env(n, NB_SSH, "SSH_AUTH_SOCK", "");
	/* What disabling harness:ssh-agent opens: that socket, a service
	 * of the user's outside the session (pipeline.c). */
	n->rules[NB_SSH_OPEN].verdict = HX_VERDICT_ALLOW;
	n->rules[NB_SSH_OPEN].neighbours = true;
	n->rules[NB_SSH_OPEN].patterns = n->pats[NB_SSH];
	n->rules[NB_SSH_OPEN].npatterns = n->rules[NB_SSH].npatterns;
	add_display(n);
	add_bus(n);
	/* $TMUX is "socket,pid,session"; the others name a socket. */
	add_env(n, NB_TERMINAL, "TMUX", ",");
	add_env(n, NB_TERMINAL, "NVIM", "");
	add_env(n, NB_TERMINAL, "NVIM_LISTEN_ADDRESS", "");
	add_env(n, NB_TERMINAL, "VSCODE_IPC_HOOK_CLI", "");
	add_env(n, NB_TERMINAL, "WEZTERM_UNIX_SOCKET", "");
	{
		const char *k = getenv("KITTY_LISTEN_ON");

		if (k && !strncmp(k, "unix:", 5))
			add(n, NB_TERMINAL, k + 5, strlen(k + 5));
	}
}
