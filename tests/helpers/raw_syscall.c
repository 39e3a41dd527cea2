/* A dynamic program (the shim is loaded and says HELLO) that opens PATH
 * for writing with a raw `syscall` instruction, skipping libc and the
 * shim: the kernel layer must decide it and flag shim_bypass. Prints
 * "ok" or "err ERRNO". With "zombie" after PATH, a second thread makes
 * the call once the first has exited (a zombie leader: /proc/PID/exe
 * reads nothing while the process runs on). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static char *path;

static long raw_open(void)
{
	long r;
	/* Declared here, after a call: r10 is caller-saved, and GCC
	 * keeps a register variable in it only where an asm uses it. */
	register long mode __asm__("r10") = 0644;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"((long)SYS_openat), "D"((long)AT_FDCWD),
			   "S"(path), "d"((long)(O_WRONLY | O_CREAT)), "r"(mode)
			 : "rcx", "r11", "memory");
	return r;
}

static int report(long r)
{
	if (r < 0) {
		printf("err %s\n", strerrorname_np((int)-r));
		return 1;
	}
	printf("ok\n");
	return 0;
}

static void *second(void *leader)
{
	char exe[64];

	/* the first thread gone: its exe link reads nothing */
	snprintf(exe, sizeof(exe), "/proc/%d/exe", *(int *)leader);
	for (int i = 0; i < 500 && !access(exe, F_OK); i++)
		usleep(2000);
	int rc = report(raw_open());

	fflush(stdout);
	_exit(rc);
}

int main(int argc, char **argv)
{
	static int leader;
	pthread_t t;

	if (argc != 2 && (argc != 3 || strcmp(argv[2], "zombie")))
		return 2;
	path = argv[1];
	/* Something through libc first, so the shim is surely loaded. */
	if (access(".", F_OK))
		return 2;
	if (argc == 2)
		return report(raw_open());
	leader = getpid();
	if (pthread_create(&t, NULL, second, &leader))
		return 2;
	pthread_exit(NULL);
}
