/* TIOCSTI (and TIOCLINUX) on a terminal we control: a pty made here, as
 * its session's controlling tty, so the kernel would accept it without
 * any capability. The effect checked: no byte in the tty's input. */
#include "escape.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>

int main(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), st, pfd[2];
	pid_t p;
	char res[128] = "";

	if (m < 0 || grantpt(m) || unlockpt(m))
		SKIPPED("no tty: cannot make a pty (%s)", strerror(errno));
	if (pipe(pfd))
		SKIPPED("pipe");
	p = fork();
	if (p == 0) {
		char c = 'X', got = 0, sub = 2;
		int s, r, e, r2, e2, n;
		struct pollfd q;

		setsid();
		s = open(ptsname(m), O_RDWR); /* our controlling tty now */
		if (s < 0)
			_exit(2);
		r = ioctl(s, TIOCSTI, &c);
		e = errno;
		r2 = ioctl(s, TIOCLINUX, &sub);
		e2 = errno;
		q.fd = s;
		q.events = POLLIN;
		n = poll(&q, 1, 100);
		if (n > 0 && read(s, &got, 1) == 1)
			n = snprintf(res, sizeof(res),
				     "ESCAPED TIOCSTI injected '%c'", got);
		else if (r == 0)
			n = snprintf(res, sizeof(res),
				     "ESCAPED TIOCSTI returned 0");
		else if (e != EPERM || e2 != EPERM)
			n = snprintf(res, sizeof(res),
				     "ESCAPED unexpected errno %d/%d (r2 %d)",
				     e, e2, r2);
		else
			n = snprintf(res, sizeof(res),
				     "BLOCKED TIOCSTI and TIOCLINUX on the "
				     "controlling pty: EPERM, no input");
		if (write(pfd[1], res, (size_t)n) < 0)
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	waitpid(p, &st, 0);
	if (read(pfd[0], res, sizeof(res) - 1) <= 0)
		SKIPPED("no tty: the pty child failed (status 0x%x)", st);
	puts(res);
	return 0;
}
