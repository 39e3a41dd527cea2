/* A unix bind raced by a directory swap (test_unix_sockets.py): built
 * static (no shim), so the kernel layer alone sees both threads.
 *
 *   static_bind_race SECONDS
 *
 * In the cwd, "d" is a directory and "dlink" a symlink to a denied one;
 * one thread swaps the two names by renames, the other binds "d/s.sock"
 * (removing what it made first). Prints "ok N refused M". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static atomic_bool stop;

static void *swap(void *arg)
{
	static const char *const moves[][2] = {
	    {"d", "d.real"}, {"dlink", "d"}, {"d", "dlink"}, {"d.real", "d"}};

	(void)arg;
	while (!atomic_load(&stop))
		for (size_t i = 0; i < 4; i++)
			rename(moves[i][0], moves[i][1]);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX,
				  .sun_path = "d/s.sock"};
	long ok = 0, refused = 0;
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 3);
	pthread_t th;

	if (pthread_create(&th, NULL, swap, NULL))
		return 2;
	while (time(NULL) < end) {
		int s = socket(AF_UNIX, SOCK_STREAM, 0);

		unlink("d/s.sock");
		unlink("d.real/s.sock");
		if (s >= 0 && !bind(s, (struct sockaddr *)&sun, sizeof(sun)))
			ok++;
		else
			refused++;
		close(s);
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	printf("ok %ld refused %ld\n", ok, refused);
	return 0;
}
