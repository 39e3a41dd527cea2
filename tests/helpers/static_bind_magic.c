/* A unix bind through a /proc magic link, raced by a thread that moves
 * what the link names (test_attack12.py): built static (no shim), so the
 * kernel layer alone sees both threads.
 *
 *   static_bind_magic fd|cwd DENIED SECONDS
 *
 * "d" in the cwd is a directory the policy lets be written, DENIED one
 * it does not. fd: the bind is of "/proc/<pid>/fd/100/s.sock" while a
 * thread dup2()s an fd of d and one of DENIED onto 100 in turn. cwd: of
 * "/proc/<pid>/cwd/s.sock" while a thread chdir()s to d and DENIED in
 * turn. Neither is a change of a name. Prints "ok N refused M". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static atomic_bool stop;
static int dfd, xfd;
static bool by_cwd;

static void *flip(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		if (by_cwd) {
			if (fchdir(xfd) || fchdir(dfd))
				break;
		} else if (dup2(xfd, 100) < 0 || dup2(dfd, 100) < 0) {
			break;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	long ok = 0, refused = 0;
	time_t end;
	pthread_t th;
	int here;

	if (argc != 4)
		return 2;
	by_cwd = !strcmp(argv[1], "cwd");
	end = time(NULL) + atoi(argv[3]);
	here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	dfd = open("d", O_PATH | O_DIRECTORY | O_CLOEXEC);
	xfd = open(argv[2], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (here < 0 || dfd < 0 || xfd < 0 || dup2(dfd, 100) < 0)
		return 2;
	if (by_cwd) {
		char top[64], link[32];

		if (!getcwd(top, sizeof(top)))
			return 2;
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)getpid());
		if (symlink(link, "l"))
			return 2;
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/l/s.sock",
			 top);
	} else {
		snprintf(sun.sun_path, sizeof(sun.sun_path),
			 "/proc/%d/fd/100/s.sock", (int)getpid());
	}
	if (by_cwd && fchdir(dfd))
		return 2;
	if (pthread_create(&th, NULL, flip, NULL))
		return 2;
	while (time(NULL) < end) {
		int s = socket(AF_UNIX, SOCK_STREAM, 0);

		unlinkat(dfd, "s.sock", 0);
		if (s >= 0 && !bind(s, (struct sockaddr *)&sun, sizeof(sun)))
			ok++;
		else
			refused++;
		close(s);
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	unlinkat(dfd, "s.sock", 0);
	printf("ok %ld refused %ld\n", ok, refused);
	return 0;
}
