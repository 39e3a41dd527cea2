/* Plain files for the worktree; see wtfiles.h. */
#include "supervisor/git/wtfiles.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#include "supervisor/say.h"

int hx_wtfiles_mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, mode) && errno != EEXIST)
			return -errno;
		buf[i] = path[i];
	}
	return 0;
}

int hx_wtfiles_copy(const char *from, const char *to)
{
	struct stat st;
	char buf[65536], link[PATH_MAX], dir[2 * PATH_MAX], *slash;
	int in = -1, out = -1, r = 0;
	ssize_t n, k;

	if (lstat(from, &st))
		return -errno;
	snprintf(dir, sizeof(dir), "%s", to);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		r = hx_wtfiles_mkdirs(dir, 0755);
		if (r)
			return r;
	}
	if (S_ISLNK(st.st_mode)) {
		n = readlink(from, link, sizeof(link) - 1);
		if (n < 0)
			return -errno;
		link[n] = '\0';
		return symlink(link, to) ? -errno : 0;
	}
	if (!S_ISREG(st.st_mode))
		return 0;
	in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		   st.st_mode & 07777);
	if (out < 0) {
		r = -errno;
		goto out;
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto out;
		}
		for (ssize_t off = 0; off < n; off += k) {
			k = write(out, buf + off, (size_t)(n - off));
			if (k < 0) {
				if (errno == EINTR) {
					k = 0;
					continue;
				}
				r = -errno;
				goto out;
			}
		}
	}
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return r;
}

void hx_wtfiles_append_json(const char *dir, const char *file, json_t *o)
{
	char path[PATH_MAX + 64], *text;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!text)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0) {
		size_t n = strlen(text);

		text[n] = '\n';
		if (write(fd, text, n + 1) < 0)
			hx_say("%s: %s", path, strerror(errno));
		close(fd);
	}
	free(text);
}
