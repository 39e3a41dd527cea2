/* Work on the agent's trees on a confined thread; see confine.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/confine.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "supervisor/kernel/landlock.h"
#include "supervisor/kernel/landlock_int.h"

/* What a tree read and written needs: git's lock files renamed into
 * place, objects made in new directories, a restore's links. Never
 * EXECUTE, devices, sockets or fifos. */
#define RW_RIGHTS                                                              \
	(HX_LL_FS_READ_FILE | HX_LL_FS_READ_DIR | HX_LL_FS_WRITE_FILE |        \
	 HX_LL_FS_REMOVE_DIR | HX_LL_FS_REMOVE_FILE | HX_LL_FS_MAKE_DIR |      \
	 HX_LL_FS_MAKE_REG | HX_LL_FS_MAKE_SYM | HX_LL_FS_REFER |              \
	 HX_LL_FS_TRUNCATE)
#define RO_RIGHTS (HX_LL_FS_READ_FILE | HX_LL_FS_READ_DIR)

/* ABI 1 refuses every rename from one directory to another in a domain,
 * and git renames each new object from objects/ into objects/xx/. */
#define ABI_MIN 2

bool hx_confine_available(void)
{
	return hx_landlock_abi() >= ABI_MIN;
}

/* A rule granting want (what the kernel handles of it) beneath path; a
 * file gets the file rights of it. 0, 1 (path missing), or -errno. */
static int grant(int rs, const char *path, uint64_t want, uint64_t handled)
{
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC), e;

	if (fd < 0)
		return errno == ENOENT ? 1 : -errno;
	if (fstat(fd, &st))
		e = -errno;
	else
		e = hx_ll_add_path(rs, fd,
				   want & handled &
				       (S_ISDIR(st.st_mode)
					    ? ~0ull
					    : (uint64_t)HX_LL_FS_FILE_RIGHTS));
	close(fd);
	return e;
}

int hx_confine_prepare(const char *const *rw, const char *const *ro)
{
	struct hx_ll_ruleset_attr a = {0};
	int abi = hx_landlock_abi(), rs, e = 0;

	if (abi < ABI_MIN)
		return -EOPNOTSUPP;
	a.handled_access_fs =
	    hx_ll_fs_handled(abi < HX_LL_ABI_KNOWN ? abi : HX_LL_ABI_KNOWN);
	if ((rs = hx_ll_create_ruleset(&a)) < 0)
		return rs;
	for (size_t i = 0; !e && rw[i]; i++)
		if ((e = grant(rs, rw[i], RW_RIGHTS, a.handled_access_fs)) > 0)
			e = -ENOENT; /* a tree to write must be there */
	for (size_t i = 0; !e && ro[i]; i++)
		if ((e = grant(rs, ro[i], RO_RIGHTS, a.handled_access_fs)) > 0)
			e = 0;
	if (e) {
		close(rs);
		return e;
	}
	return rs;
}

struct job {
	int rs;
	int (*fn)(void *, void *);
	void *arg, *reply;
	int r;
};

/* The thread: restricted by the ruleset (Landlock and no_new_privs are
 * the thread's own, the process's other threads keep theirs), then fn. */
static void *runner(void *p)
{
	struct job *j = p;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(__NR_landlock_restrict_self, j->rs, 0))
		j->r = -errno;
	else
		j->r = j->fn(j->arg, j->reply);
	return NULL;
}

int hx_confine_run(int ruleset, int (*fn)(void *, void *), void *arg,
		   void *reply)
{
	struct job j = {ruleset, fn, arg, reply, 0};
	pthread_t t;
	int e;

	if (ruleset < 0)
		return -EBADF;
	if ((e = pthread_create(&t, NULL, runner, &j)))
		return -e;
	pthread_join(t, NULL);
	return j.r;
}
