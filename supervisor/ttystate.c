/* The user's terminal's settings, kept and put back; see ttystate.h. */
#include "supervisor/ttystate.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

void hx_ttystate_save(struct hx_ttystate *s)
{
	struct stat in, out;

	s->fd = -1;
	/* The terminal both ends of harness-exec are: in a pipeline
	 * (harness-exec ... | less) another program of the group uses it
	 * too, and what it set would be undone under it. */
	if (!isatty(0) || !isatty(1) || fstat(0, &in) || fstat(1, &out) ||
	    in.st_rdev != out.st_rdev || tcgetpgrp(0) != getpgrp() ||
	    tcgetattr(0, &s->t))
		return;
	s->fd = 0;
}

void hx_ttystate_restore(const struct hx_ttystate *s)
{
	sigset_t ttou, old;

	if (s->fd < 0)
		return;
	/* Blocked, SIGTTOU lets a group not in the foreground do both. */
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	pthread_sigmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(s->fd, getpgrp());
	tcsetattr(s->fd, TCSANOW, &s->t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
