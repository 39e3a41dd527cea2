/* Exercises shim hooks that shells and Python do not reach: execl*,
 * syscall(), system/popen, fork with a held connection, threads, dup2
 * over the shim's socket. Usage: shim_probe CASE; prints one line per
 * step and exits 0 when every step behaved. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int fails;

static void expect(const char *what, int ok)
{
	printf("%s %s\n", ok ? "ok" : "FAIL", what);
	fails += !ok;
}

static void *worker(void *arg)
{
	char path[64];

	for (int i = 0; i < 200; i++) {
		snprintf(path, sizeof(path), "/tmp/shimtest/t%ld-%d", (long)arg,
			 i % 4);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0)
			return (void *)1;
		close(fd);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "all";
	int st;

	if (!strcmp(c, "syscall") || !strcmp(c, "all")) {
		long fd = syscall(SYS_openat, AT_FDCWD, "/tmp/denied-sys",
				  O_WRONLY | O_CREAT, 0644);
		expect("syscall openat denied", fd == -1 && errno == EACCES);
		fd = syscall(SYS_openat, AT_FDCWD, "/etc/hostname", O_RDONLY);
		expect("syscall openat read allowed", fd >= 0);
		expect("syscall getpid passes",
		       syscall(SYS_getpid) == getpid());
		expect("syscall mkdir denied",
		       syscall(SYS_mkdir, "/tmp/denied-dir", 0755) == -1 &&
			   errno == EACCES);
	}
	if (!strcmp(c, "shell") || !strcmp(c, "all")) {
		unsetenv("LD_PRELOAD");
		st = system("echo from-system $HARNESS_SOCKET");
		expect("system ran", st == 0);
		/* A denied system() is checked against a real policy. */
		FILE *p = popen("echo from-popen", "r");
		char line[64] = "";
		expect("popen ran", p && fgets(line, sizeof(line), p) &&
					!strcmp(line, "from-popen\n"));
		if (p)
			pclose(p);
	}
	if (!strcmp(c, "threads") || !strcmp(c, "all")) {
		pthread_t t[4];
		void *r;
		int ok = 1;

		for (long i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, worker, (void *)i);
		/* fork while the workers hold the connection */
		for (int i = 0; i < 20; i++) {
			pid_t pid = fork();

			if (pid == 0) {
				int fd = open("/tmp/shimtest/forked",
					      O_WRONLY | O_CREAT, 0644);
				_exit(fd >= 0 ? 0 : 1);
			}
			waitpid(pid, &st, 0);
			ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
		}
		for (int i = 0; i < 4; i++) {
			pthread_join(t[i], &r);
			ok &= r == NULL;
		}
		expect("threads + fork", ok);
	}
	if (!strcmp(c, "dup2") || !strcmp(c, "all")) {
		/* Put our own file on every high fd the shim might use. */
		int fd = open("/tmp/shimtest/mine", O_RDWR | O_CREAT | O_TRUNC,
			      0644);
		for (int i = 990; i < 1010; i++)
			dup2(fd, i);
		int w =
		    open("/tmp/shimtest/after-dup2", O_WRONLY | O_CREAT, 0644);
		expect("open after dup2 over shim fd", w >= 0);
		off_t end = lseek(fd, 0, SEEK_END);
		expect("shim wrote nothing into program fd", end == 0);
	}
	if (!strcmp(c, "execl")) {
		execlp("echo", "echo", "via-execlp", (char *)NULL);
		perror("execlp");
		return 1;
	}
	if (!strcmp(c, "execl-denied")) {
		execl("/tmp/denied-bin", "x", (char *)NULL);
		expect("execl denied", errno == EACCES);
	}
	return fails ? 1 : 0;
}
