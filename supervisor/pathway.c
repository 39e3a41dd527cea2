/* See pathway.h. */
#define _GNU_SOURCE
#include "supervisor/pathway.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINKS_MAX 40

/* cur, the resolved directory so far, goes up one (it has no symlink
 * left, so ".." is its parent by name). */
static void up(char *cur)
{
	char *s = strrchr(cur, '/');

	if (s == cur)
		cur[1] = '\0';
	else if (s)
		*s = '\0';
}

/* A symlink's text replaces it: todo becomes text "/" rest. */
static int splice(char *todo, size_t size, const char **rest, const char *l,
		  size_t k)
{
	size_t n = strlen(*rest);

	if (k + 1 + n >= size)
		return -ENAMETOOLONG;
	memmove(todo + k + 1, *rest, n + 1);
	memcpy(todo, l, k);
	todo[k] = '/';
	*rest = todo;
	return 0;
}

int hx_path_way(const char *path, int (*fn)(dev_t dev, ino_t ino, void *arg),
		void *arg)
{
	char todo[2 * PATH_MAX], cur[PATH_MAX], next[PATH_MAX], l[PATH_MAX];
	const char *last = strrchr(path, '/'), *p = todo;
	char comp[NAME_MAX + 1];
	struct stat st;
	int links = 0, e;
	ssize_t k;
	size_t n;

	if (path[0] != '/' || !last)
		return -EINVAL;
	if ((size_t)(last - path) >= sizeof(todo))
		return -ENAMETOOLONG;
	memcpy(todo, path, (size_t)(last - path));
	todo[last - path] = '\0';
	strcpy(cur, "/");
	if (lstat(cur, &st))
		return -errno;
	if ((e = fn(st.st_dev, st.st_ino, arg)))
		return e;
	while (*(p += strspn(p, "/"))) {
		n = strcspn(p, "/");
		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			up(cur);
			continue;
		}
		if (snprintf(next, sizeof(next), "%s/%s", cur[1] ? cur : "",
			     comp) >= (int)sizeof(next))
			return -ENAMETOOLONG;
		if (lstat(next, &st))
			return -errno;
		if ((e = fn(st.st_dev, st.st_ino, arg)))
			return e;
		if (S_ISLNK(st.st_mode)) {
			if (++links > LINKS_MAX)
				return -ELOOP;
			if ((k = readlink(next, l, sizeof(l) - 1)) <= 0)
				return k ? -errno : -ENOENT;
			if ((e = splice(todo, sizeof(todo), &p, l, (size_t)k)))
				return e;
			if (l[0] == '/')
				strcpy(cur, "/");
			continue;
		}
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		strcpy(cur, next);
	}
	return 0;
}
