/* A blocking TCP connect broken off by a signal (test_attack12.py):
 * built static (no shim), so the kernel layer alone sees it.
 *
 *   static_connect_eintr PORT
 *
 * A thread connects to 127.0.0.1:PORT, whose accept queue the test
 * keeps full (the SYN dropped: the connect waits); the process is sent
 * SIGUSR1, which only that thread takes (a handler without SA_RESTART).
 * The connect fails with EINTR, as natively, and the connection goes
 * on: once it is made, "late" is sent on it, which is kept open until
 * the test closes it. Prints "connect E", then "sent N" or "not
 * connected E". */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int port;

static void on_usr1(int sig)
{
	(void)sig;
}

static void *dial(void *arg)
{
	struct sockaddr_in to = {.sin_family = AF_INET};
	struct pollfd p = {.events = POLLOUT};
	sigset_t s;
	socklen_t el = sizeof(int);
	int fd, r, e = 0;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	to.sin_port = htons((unsigned short)port);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	r = connect(fd, (struct sockaddr *)&to, sizeof(to));
	printf("connect %s\n", r ? strerrorname_np(errno) : "0");
	fflush(stdout);
	p.fd = fd;
	if (r && (poll(&p, 1, 10000) != 1 ||
		  getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) || e)) {
		printf("not connected %s\n", e ? strerrorname_np(e) : "-");
		return NULL;
	}
	printf("sent %zd\n", send(fd, "late", 4, MSG_NOSIGNAL));
	fflush(stdout);
	/* Kept until the test has read it (its end, or 10 s): a handshake
	 * whose last ACK met the full queue ends with the data's resend. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){.tv_sec = 10},
		   sizeof(struct timeval));
	(void)recv(fd, &e, 1, 0);
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_usr1}; /* no SA_RESTART */
	pthread_t th;
	sigset_t s;

	if (argc != 2)
		return 2;
	port = atoi(argv[1]);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	if (pthread_create(&th, NULL, dial, NULL))
		return 2;
	usleep(300 * 1000);
	kill(getpid(), SIGUSR1);
	pthread_join(th, NULL);
	return 0;
}
