/* oom_score_adj for harness-exec and the agent (oomshield.h). */
#include "supervisor/kernel/oomshield.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#define OOM_FILE "/proc/self/oom_score_adj"

int hx_oom_adj(int *out)
{
	char buf[16];
	int fd = open(OOM_FILE, O_RDONLY | O_CLOEXEC), e;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	e = errno;
	close(fd);
	if (n <= 0)
		return n < 0 ? -e : -EIO;
	buf[n] = '\0';
	*out = atoi(buf);
	return 0;
}

/* The calling process's oom_score_adj, open for writing. One that is
 * not dumpable (harness-exec and its children are not) has its /proc
 * files owned by root, so an ordinary user opens its own only while
 * dumpable: for that one open, before anything of the agent's runs. */
static int open_adj(void)
{
	int fd = open(OOM_FILE, O_WRONLY | O_CLOEXEC), e;

	if (fd >= 0 || errno != EACCES || prctl(PR_GET_DUMPABLE, 0, 0, 0, 0))
		return fd;
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return -1;
	fd = open(OOM_FILE, O_WRONLY | O_CLOEXEC);
	e = errno;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	errno = e;
	return fd;
}

static int write_adj(int v)
{
	char buf[16];
	int fd = open_adj(), e = 0, len = snprintf(buf, sizeof(buf), "%d", v);

	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)len) != len)
		e = -errno;
	close(fd);
	return e;
}

int hx_oom_expose_agent(void)
{
	int now, e = hx_oom_adj(&now);

	if (e)
		return e;
	return now >= HX_OOM_AGENT_ADJ ? 0 : write_adj(HX_OOM_AGENT_ADJ);
}
