/* static_attack33a OP N: N tries of OP on x/.env/key while a thread
 * renames sub to x and back, as a program without the shim makes them
 * (thirty-third attack review, part a: the kernel layer's look at the
 * agent's view, then its act in its own). Prints each secret it read
 * ("got ...") and "tries T done D".
 *   rw     open x/.env/key O_RDWR | O_CREAT, read it
 *   ln     link x/.env/key to copy, read copy
 *   mv     rename x/.env/key to moved, read moved */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_int stop;

static void *flip(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		rename("sub", "x");
		rename("x", "sub");
	}
	return NULL;
}

/* Prints what fd holds when it is a secret; closes it. */
static int show(int fd)
{
	char buf[256];
	ssize_t k = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (k <= 0)
		return 0;
	buf[k] = '\0';
	if (!strstr(buf, "SECRET"))
		return 0;
	printf("got %s", buf);
	return 1;
}

/* One try: 1 when a secret was read, -1 when the call was not made. */
static int try_once(const char *op)
{
	if (!strcmp(op, "rw"))
		return show(open("x/.env/key", O_RDWR | O_CREAT, 0644));
	if (!strcmp(op, "ln"))
		return link("x/.env/key", "copy")
			   ? 0
			   : show(open("copy", O_RDONLY));
	if (!strcmp(op, "mv"))
		return rename("x/.env/key", "moved")
			   ? 0
			   : show(open("moved", O_RDONLY));
	return -1;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0, i, got = 0;
	pthread_t th;
	int r = 0;

	if (argc < 3 || pthread_create(&th, NULL, flip, NULL))
		return 2;
	for (i = 0; i < n && !got && r >= 0; i++)
		if ((r = try_once(argv[1])) > 0)
			got++;
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	printf("tries %ld got %ld\n", i, got);
	return r < 0 ? 2 : 0;
}
