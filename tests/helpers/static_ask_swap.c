/* An agent that asks the supervisor about one call, as the shim would,
 * and makes another with a raw system call once allowed: the answer
 * "once" must be for the call shown only (test_ask.py). Static, so no
 * shim is loaded into it.
 *
 *   static_ask_swap exec SHOWN... -- REAL...   asks about /usr/bin/git
 *                       SHOWN, then execve()s /usr/bin/git REAL; prints
 *                       "execve: ERROR" when refused
 *   static_ask_swap write PATH LINK TARGET   asks about a write of PATH,
 *                       then points the symlink LINK at TARGET and opens
 *                       PATH for writing; prints "wrote" or "open: ERROR" */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/wire.h"

static int ask(uint8_t *buf, size_t n)
{
	const char *path = getenv(HX_ENV_SOCKET);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	static struct hx_msg m;
	ssize_t r;
	int fd;

	if (!path || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(fd, buf, n, 0) != (ssize_t)n)
		return -1;
	r = recv(fd, buf, HX_WIRE_MAX, 0);
	if (r <= 0 || hx_wire_decode(buf, (size_t)r, &m))
		return -1;
	printf("asked: verdict %u\n", m.verdict);
	fflush(stdout);
	return (int)m.verdict;
}

static void begin(struct hx_wbuf *w, uint8_t *buf, uint32_t call, enum hx_op op,
		  const char *path)
{
	hx_wire_begin(w, buf, HX_WIRE_MAX, HX_MSG_REQUEST, 1);
	hx_wire_put_u32(w, HX_TAG_PID, (uint32_t)getpid());
	hx_wire_put_u32(w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_u32(w, HX_TAG_CALL, call);
	hx_wire_put_u32(w, HX_TAG_OP, op);
	hx_wire_put_str(w, HX_TAG_PATH, path);
}

int main(int argc, char **argv)
{
	static uint8_t buf[HX_WIRE_MAX];
	struct hx_wbuf w;
	int sep = 2, fd;

	if (argc > 3 && !strcmp(argv[1], "exec")) {
		char *env[] = {"PATH=/usr/bin:/bin", NULL};

		while (sep < argc && strcmp(argv[sep], "--"))
			sep++;
		begin(&w, buf, HX_CALL_EXECVE, HX_OP_EXEC, "/usr/bin/git");
		for (int i = 2; i < sep; i++)
			hx_wire_put_str(&w, HX_TAG_ARG, argv[i]);
		if (ask(buf, hx_wire_finish(&w)) < 0 || sep + 1 >= argc)
			return 2;
		syscall(SYS_execve, "/usr/bin/git", argv + sep + 1, env);
		printf("execve: %s\n", strerror(errno));
		return 1;
	}
	if (argc == 5 && !strcmp(argv[1], "write")) {
		begin(&w, buf, HX_CALL_OPEN, HX_OP_WRITE, argv[2]);
		hx_wire_put_u32(&w, HX_TAG_FLAGS, O_WRONLY | O_CREAT);
		hx_wire_put_u32(&w, HX_TAG_MODE, 0644);
		if (ask(buf, hx_wire_finish(&w)) < 0)
			return 2;
		unlink(argv[3]);
		if (symlink(argv[4], argv[3]))
			return 2;
		fd = (int)syscall(SYS_openat, AT_FDCWD, argv[2],
				  O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			printf("open: %s\n", strerror(errno));
			return 1;
		}
		printf("wrote\n");
		return 0;
	}
	return 2;
}
