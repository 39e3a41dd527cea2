/* A forged loose object of the result written again; see objfix.h. */
#define _GNU_SOURCE
#include "supervisor/git/objfix.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/git/checkpoint.h"

/* Whether the directory of file is wt or beneath it, resolved. */
static bool dir_within(const char *wt, const char *file)
{
	char dir[PATH_MAX], real[PATH_MAX], rwt[PATH_MAX];
	const char *slash = strrchr(file, '/');
	size_t n;

	if (!slash ||
	    snprintf(dir, sizeof(dir), "%.*s", (int)(slash - file), file) >=
		(int)sizeof(dir) ||
	    !realpath(dir, real) || !realpath(wt, rwt))
		return false;
	n = strlen(rwt);
	return !strncmp(real, rwt, n) && (!real[n] || real[n] == '/');
}

/* The content of the worktree's file as a blob of mode would hold it,
 * into *buf (malloc'd); its length, or -1. */
static ssize_t file_content(const char *file, unsigned mode, char **buf)
{
	struct stat st;
	ssize_t n = -1;
	int fd;

	*buf = NULL;
	if (lstat(file, &st) ||
	    (unsigned long long)st.st_size > HX_CKPT_FILE_MAX ||
	    !(*buf = malloc((size_t)st.st_size + 1)))
		return -1;
	if (mode == GIT_FILEMODE_LINK && S_ISLNK(st.st_mode)) {
		n = readlink(file, *buf, (size_t)st.st_size + 1);
	} else if (mode != GIT_FILEMODE_LINK && S_ISREG(st.st_mode) &&
		   (fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		n = read(fd, *buf, (size_t)st.st_size + 1);
		close(fd);
	}
	if (n != (ssize_t)st.st_size) { /* changed meanwhile */
		free(*buf);
		*buf = NULL;
		return -1;
	}
	return n;
}

bool hx_objfix_blob(git_repository *repo, const char *commondir, const char *wt,
		    const char *path, unsigned mode, const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1], obj[PATH_MAX], file[PATH_MAX], *buf;
	git_odb *odb = NULL;
	git_oid got;
	ssize_t n;
	bool ok = false;

	git_oid_tostr(hex, sizeof(hex), id);
	if (snprintf(obj, sizeof(obj), "%s/objects/%.2s/%s", commondir, hex,
		     hex + 2) >= (int)sizeof(obj) ||
	    snprintf(file, sizeof(file), "%s/%s", wt, path) >=
		(int)sizeof(file) ||
	    !dir_within(wt, file) || unlink(obj))
		return false;
	if ((n = file_content(file, mode, &buf)) < 0)
		return false;
	if (!git_repository_odb(&odb, repo) &&
	    !git_odb_write(&got, odb, buf, (size_t)n, GIT_OBJECT_BLOB))
		ok = git_oid_equal(&got, id);
	git_odb_free(odb);
	free(buf);
	return ok;
}
