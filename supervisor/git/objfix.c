/* Loose objects that are not what their names say; see objfix.h. */
#define _GNU_SOURCE
#include "supervisor/git/objfix.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/git/gitutil.h"

static bool changed_since(const struct stat *st, const struct timespec *t)
{
	return st->st_ctim.tv_sec > t->tv_sec ||
	       (st->st_ctim.tv_sec == t->tv_sec &&
		st->st_ctim.tv_nsec >= t->tv_nsec);
}

/* The loose objects of directory xx (at dfd) changed since `since`,
 * read; one that is not its content removed. The number removed. */
static size_t sweep_dir(git_odb *odb, int dfd, const char *xx,
			const struct timespec *since)
{
	char hex[GIT_OID_HEXSZ + 1];
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	struct stat st;
	git_odb_object *obj;
	git_oid id;
	size_t n = 0;

	if (!d) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(d))) {
		if (strlen(de->d_name) != GIT_OID_HEXSZ - 2 ||
		    snprintf(hex, sizeof(hex), "%s%s", xx, de->d_name) !=
			GIT_OID_HEXSZ ||
		    git_oid_fromstr(&id, hex) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || !changed_since(&st, since))
			continue;
		obj = NULL;
		if (git_odb_read(&obj, odb, &id) == GIT_EMISMATCH &&
		    !unlinkat(dirfd(d), de->d_name, 0))
			n++;
		git_odb_object_free(obj);
	}
	closedir(d);
	return n;
}

size_t hx_objfix_sweep(const char *objects, const struct timespec *since)
{
	char xx[3];
	git_odb *odb = NULL;
	size_t n = 0;
	int ofd, dfd;

	if (hx_git_init() ||
	    (ofd = open(objects, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	if (!git_odb_open(&odb, objects)) {
		for (int i = 0; i < 256; i++) {
			snprintf(xx, sizeof(xx), "%02x", i);
			dfd = openat(ofd, xx,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);
			if (dfd >= 0)
				n += sweep_dir(odb, dfd, xx, since);
		}
		git_odb_free(odb);
	}
	close(ofd);
	return n;
}
