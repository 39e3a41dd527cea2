/* Runs outside a session: makes and reaps children until one is given
 * the number TARGET - 1, then writes "go" to FIFO, so that the next
 * process made on the machine (the agent's fork the FIFO releases) is
 * given TARGET: an ordinary user's way to a chosen pid, without
 * ns_last_pid.
 *   pid_cycle TARGET FIFO
 * (Or once each number between its child's and TARGET is in use.)
 * Exit 0 when it wrote, 1 when three rounds of the numbers passed by
 * (other processes kept taking TARGET - 1), 2 on a usage error. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Whether every number after last and before target is in use (the
 * shell that forked TARGET's process is often TARGET - 1): the next
 * process made is then given target, once it is free. */
static int taken_between(long last, long target)
{
	char path[32];

	if (last >= target || target - last > 64)
		return 0;
	for (long n = last + 1; n < target; n++) {
		snprintf(path, sizeof(path), "/proc/%ld", n);
		if (access(path, F_OK))
			return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	long target, before, max = 32768;
	FILE *f;
	int fd;

	if (argc != 3 || (target = strtol(argv[1], NULL, 10)) < 2)
		return 2;
	if ((f = fopen("/proc/sys/kernel/pid_max", "re"))) {
		if (fscanf(f, "%ld", &max) != 1)
			max = 32768;
		fclose(f);
	}
	before = target - 1;
	for (long n = 0; n < 3 * max; n++) {
		pid_t p = vfork();

		if (p == 0)
			_exit(0);
		if (p < 0) {
			usleep(1000); /* EAGAIN: a process count */
			continue;
		}
		waitpid(p, NULL, 0);
		if (p == before || taken_between(p, target)) {
			fd = open(argv[2], O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, "go\n", 3) != 3)
				return 1;
			close(fd);
			return 0;
		}
	}
	return 1;
}
