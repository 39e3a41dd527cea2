/* Runs outside a session: makes and reaps children until one is given
 * the number TARGET - 1, then writes "go" to FIFO, so that the next
 * process made on the machine (the agent's fork the FIFO releases) is
 * given TARGET: an ordinary user's way to a chosen pid, without
 * ns_last_pid.
 *   pid_cycle TARGET FIFO
 * Exit 0 when it wrote, 1 when three rounds of the numbers passed by
 * (other processes kept taking TARGET - 1), 2 on a usage error. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

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
		if (p < 0)
			return 1;
		waitpid(p, NULL, 0);
		if (p == before) {
			fd = open(argv[2], O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, "go\n", 3) != 3)
				return 1;
			close(fd);
			return 0;
		}
	}
	return 1;
}
