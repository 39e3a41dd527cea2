/* Probes the Landlock scopes from a static program (no shim: only the
 * kernel can stop it), for tests/integration/test_landlock.py.
 *
 *   static_ll_probe signal-parent   signals its parent (harness-exec when
 *                                   run as the command): SIGSTOP, then
 *                                   SIGKILL; prints "comm NAME",
 *                                   "SIGSTOP <ok|ERRNO>", "SIGKILL ..."
 *                                   and the controls "self ok",
 *                                   "child ok" (same domain)
 *   static_ll_probe abstract NAME   connects to the abstract unix socket
 *                                   "\0NAME"; prints "connect ok" or
 *                                   "connect ERRNO"
 *   static_ll_probe abstract-self   listens on an abstract socket of its
 *                                   own and connects to it (allowed:
 *                                   same domain); prints "self-connect .."
 *   static_ll_probe tcp PORT        connects to 127.0.0.1:PORT and sends
 *                                   "leak"; prints "tcp ok" or "tcp ERRNO"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *err_name(int e)
{
	switch (e) {
	case 0:
		return "ok";
	case EPERM:
		return "EPERM";
	case EACCES:
		return "EACCES";
	case ECONNREFUSED:
		return "ECONNREFUSED";
	case ESRCH:
		return "ESRCH";
	case EADDRNOTAVAIL:
		return "EADDRNOTAVAIL";
	default:
		return strerror(e);
	}
}

static int sig(pid_t pid, int s)
{
	return kill(pid, s) ? errno : 0;
}

static int signal_parent(void)
{
	pid_t pp = getppid(), child;
	char path[64], comm[64] = "?";
	FILE *f;
	int e, st;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pp);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	printf("comm %s\n", comm);
	e = sig(pp, SIGSTOP);
	printf("SIGSTOP %s\n", err_name(e));
	fflush(stdout);
	if (!e) /* do not leave the supervisor stopped: the test would hang */
		kill(pp, SIGCONT);
	e = sig(pp, SIGKILL);
	printf("SIGKILL %s\n", err_name(e));
	printf("self %s\n", err_name(sig(getpid(), 0)));
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	e = child > 0 ? sig(child, SIGKILL) : errno;
	if (child > 0)
		waitpid(child, &st, 0);
	printf("child %s\n", err_name(e));
	return 0;
}

static socklen_t abstract_addr(struct sockaddr_un *sa, const char *name)
{
	size_t n = strlen(name);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n > sizeof(sa->sun_path) - 1)
		n = sizeof(sa->sun_path) - 1;
	memcpy(sa->sun_path + 1, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static int dial(const char *name)
{
	struct sockaddr_un sa;
	socklen_t len = abstract_addr(&sa, name);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0), e;

	if (fd < 0)
		return errno;
	e = connect(fd, (struct sockaddr *)&sa, len) ? errno : 0;
	if (!e && write(fd, "leak\n", 5) < 0)
		e = errno;
	close(fd);
	return e;
}

static int abstract_self(void)
{
	struct sockaddr_un sa;
	char name[64];
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(name, sizeof(name), "hx-ll-self-%d", (int)getpid());
	len = abstract_addr(&sa, name);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) || listen(fd, 1)) {
		printf("self-listen %s\n", err_name(errno));
		return 1;
	}
	printf("self-connect %s\n", err_name(dial(name)));
	close(fd);
	return 0;
}

static int tcp(const char *port)
{
	struct sockaddr_in sa = {
	    .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)atoi(port)),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_STREAM, 0), e;

	if (fd < 0)
		return errno;
	e = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ? errno : 0;
	if (!e && write(fd, "leak\n", 5) < 0)
		e = errno;
	close(fd);
	return e;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "signal-parent"))
		return signal_parent();
	if (argc == 3 && !strcmp(argv[1], "abstract")) {
		printf("connect %s\n", err_name(dial(argv[2])));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "tcp")) {
		printf("tcp %s\n", err_name(tcp(argv[2])));
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "abstract-self"))
		return abstract_self();
	fprintf(stderr, "usage: static_ll_probe signal-parent | abstract NAME "
			"| abstract-self\n");
	return 2;
}
