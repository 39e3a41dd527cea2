/* No fd inherited from harness-exec: a static program (no shim) has
 * only 0, 1 and 2. */
#include "escape.h"

#include <dirent.h>

int main(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	char extra[1024] = "";

	if (!d)
		SKIPPED("/proc/self/fd: %s", strerror(errno));
	while ((de = readdir(d))) {
		char path[300], target[256] = "";
		int fd = atoi(de->d_name);

		if (de->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		if (readlink(path, target, sizeof(target) - 1) < 0)
			strcpy(target, "?");
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
			 " %d->%s", fd, target);
	}
	closedir(d);
	if (extra[0])
		ESCAPED("inherited fds:%s", extra);
	BLOCKED("only fds 0, 1, 2 are open");
}
