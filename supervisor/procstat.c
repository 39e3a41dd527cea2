/* /proc/<pid>/stat; see procstat.h. */
#include "supervisor/procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int hx_procstat_read(pid_t pid, struct hx_procstat *st)
{
	char path[64], buf[1024], *p;
	int fd, ppid = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ESRCH;
	buf[n] = '\0';
	/* The command name (field 2) may hold spaces and parentheses:
	 * fields 3 on follow the last ')'. starttime is field 22. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2,
			 "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
			 "%*d %*d %*d %*d %*d %*d %llu",
			 &st->state, &ppid, &st->starttime) != 3)
		return -EBADMSG;
	st->ppid = ppid;
	return 0;
}
