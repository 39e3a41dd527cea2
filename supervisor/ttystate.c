/* The user's terminal's settings, kept and put back; see ttystate.h. */
#include "supervisor/ttystate.h"

#include <signal.h>
#include <unistd.h>

void hx_ttystate_save(struct hx_ttystate *s)
{
	s->fd = -1;
	for (int fd = 0; fd < 3; fd++)
		if (isatty(fd) && !tcgetattr(fd, &s->t)) {
			if (tcgetpgrp(fd) == getpgrp())
				s->fd = fd;
			return;
		}
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
