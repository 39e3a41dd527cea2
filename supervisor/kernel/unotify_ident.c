/* Who a notification's thread is (unotify_int.h): its process, parent,
 * uid and executable, remembered by thread id and checked at each call.
 *
 * /proc/<tid>/status costs 14 us on a small VM, most of a notified call
 * that is not a decision; what it says changes only when the thread
 * goes (its tid may then name another task), its process execs, its
 * parent goes (it is reparented) or its uids change. Each is seen
 * without reading it again:
 * - /proc/<pid>/task/<tid> is there only while tid is a thread of pid,
 *   and its owner is the thread's euid (root while it is not dumpable,
 *   which a change of uids makes it);
 * - /proc/<pid>/exe is read anyway (the record names it);
 * - a pidfd of the parent polls readable once the parent has exited;
 * - a pidfd of the thread itself polls readable once it has exited:
 *   its number may then be another task's, of another parent, with the
 *   same image, and the checks above all hold for that one (an attack
 *   review gave a process's number to one forked by another shell of
 *   the same static image: its records named the first one's parent).
 *   Polled with the parent's in the one poll(2): no call more a hit.
 * Its umask (any umask(2) changes it, unseen) and its tracer are read
 * afresh where they are used (hx_un_umask, hx_un_tracer). */
#define _GNU_SOURCE
#include "supervisor/kernel/unotify_int.h"
#include "supervisor/path_resolve.h"
#include "supervisor/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define IDENT_SLOTS 64 /* threads that make calls now; a power of 2 */

struct ident {
	pid_t tid, pid, ppid; /* tid 0: empty */
	uid_t uid, owner;     /* Uid: (real), the task dir's owner */
	int parent_fd;	      /* pidfd of ppid, or -1 */
	int self_fd;	      /* thread pidfd of tid itself, or -1 */
	bool root_ours;	      /* hx_peer.root_ours */
	char exe[PATH_MAX];
};

struct hx_un_idents {
	pthread_mutex_t lock;
	struct ident slot[IDENT_SLOTS];
};

struct hx_un_idents *hx_un_idents_new(void)
{
	struct hx_un_idents *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	for (size_t i = 0; i < IDENT_SLOTS; i++)
		c->slot[i].parent_fd = c->slot[i].self_fd = -1;
	return c;
}

static void drop(struct ident *id)
{
	if (id->parent_fd >= 0)
		close(id->parent_fd);
	if (id->self_fd >= 0)
		close(id->self_fd);
	id->parent_fd = id->self_fd = -1;
}

void hx_un_idents_free(struct hx_un_idents *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < IDENT_SLOTS; i++)
		drop(&c->slot[i]);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* The owner of /proc/<pid>/task/<tid>, or -1 when tid is no thread of
 * pid (any more). */
static long task_owner(pid_t pid, pid_t tid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	return stat(path, &st) ? -1 : (long)st.st_uid;
}

/* Whether the thread or its parent has exited since the slot was
 * filled (either pidfd polls readable), or the slot keeps no pidfd. */
static bool gone(const struct ident *id)
{
	struct pollfd p[2] = {{.fd = id->self_fd, .events = POLLIN},
			      {.fd = id->parent_fd, .events = POLLIN}};

	return id->self_fd < 0 || id->parent_fd < 0 || poll(p, 2, 0) != 0;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* linux/pidfd.h, Linux 6.9 */
#endif

/* A pidfd that polls readable once thread tid has exited (a leader's
 * process pidfd before 6.9, once its whole group has), or -1. */
static int self_pidfd(pid_t tid)
{
	int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);

	if (fd < 0 && errno == EINVAL)
		fd = (int)syscall(SYS_pidfd_open, tid, 0); /* a leader only */
	return fd;
}

/* What the slot remembers of tid still holds, its parent aside (the
 * exe as read now). */
static bool still(const struct ident *id, pid_t tid, const char *exe)
{
	return id->tid == tid && !strcmp(id->exe, exe) &&
	       task_owner(id->pid, tid) == (long)id->owner;
}

static void fill(struct target *t, const struct ident *id)
{
	t->peer.pid = id->pid;
	t->peer.ppid = id->ppid;
	t->peer.uid = id->uid;
	t->peer.root_ours = id->root_ours;
	snprintf(t->exe, sizeof(t->exe), "%s", id->exe);
	t->peer.exe = t->exe[0] ? t->exe : NULL;
}

int hx_un_target_info(struct hx_unotify *u, pid_t tid, struct target *t)
{
	struct hx_un_idents *c = u ? u->idents : NULL;
	struct ident *slot = NULL, id;
	struct hx_procstatus st;
	char exe[PATH_MAX];
	long owner;
	int e, self_fd;

	memset(t, 0, sizeof(*t));
	t->tid = t->peer.tid = tid;
	if (c) {
		bool parent_here;

		slot = &c->slot[(unsigned)tid & (IDENT_SLOTS - 1)];
		pthread_mutex_lock(&c->lock);
		id = *slot;
		/* Under the lock: the slot's fds are closed when replaced. */
		parent_here = id.tid == tid && !gone(&id);
		pthread_mutex_unlock(&c->lock);
		if (parent_here && hx_proc_exe(id.pid, exe, sizeof(exe)) >= 0 &&
		    still(&id, tid, exe)) {
			fill(t, &id);
			return 0;
		}
	}
	/* Afresh: the thread's pidfd first (while it does not poll
	 * readable, what is read next is of the task it names), status,
	 * then the exe, then the checks' own reading (a change between
	 * them only makes the next call read again). */
	self_fd = c ? self_pidfd(tid) : -1;
	if ((e = hx_proc_status(tid, &st))) {
		if (self_fd >= 0)
			close(self_fd);
		return e;
	}
	t->peer.pid = st.tgid;
	t->peer.ppid = st.ppid;
	t->peer.uid = st.uid;
	t->umask = st.umask;
	t->tracer = st.tracer;
	t->status_read = true;
	if (hx_proc_exe(t->peer.pid, t->exe, sizeof(t->exe)) > 0)
		t->peer.exe = t->exe;
	/* Read once a process: the agent's tree cannot chroot, pivot_root
	 * or enter another mount namespace (seccomp_deny.c). */
	t->peer.root_ours = hx_path_root_ours(t->peer.pid);
	owner = task_owner(t->peer.pid, tid);
	if (!c || owner < 0) {
		if (self_fd >= 0)
			close(self_fd);
		return 0;
	}
	id = (struct ident){
	    .tid = tid,
	    .pid = t->peer.pid,
	    .ppid = t->peer.ppid,
	    .uid = t->peer.uid,
	    .owner = (uid_t)owner,
	    .root_ours = t->peer.root_ours,
	    .parent_fd = t->peer.ppid > 0
			     ? (int)syscall(SYS_pidfd_open, t->peer.ppid, 0)
			     : -1,
	    .self_fd = self_fd};
	snprintf(id.exe, sizeof(id.exe), "%s", t->exe);
	if (gone(&id)) {
		drop(&id); /* nothing would see a reparenting or an exit */
		return 0;
	}
	pthread_mutex_lock(&c->lock);
	drop(slot);
	*slot = id;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* t's umask and tracer: as read with t, else now. */
static int status_now(const struct target *t, mode_t *um, pid_t *tracer)
{
	struct hx_procstatus st;
	int e;

	if (t->status_read) {
		*um = t->umask;
		*tracer = t->tracer;
		return 0;
	}
	if ((e = hx_proc_status(t->tid, &st)))
		return e;
	*um = st.umask;
	*tracer = st.tracer;
	return 0;
}

mode_t hx_un_umask(const struct target *t)
{
	pid_t tracer;
	mode_t um;

	/* Gone: nothing made is granted to anyone. */
	return status_now(t, &um, &tracer) ? 0777 : um;
}

pid_t hx_un_tracer(const struct target *t)
{
	pid_t tracer;
	mode_t um;

	return status_now(t, &um, &tracer) ? 0 : tracer;
}

/* id as t's user namespace names it, in ours (map: "uid_map" or
 * "gid_map", whose outside ids /proc gives in the reader's namespace):
 * 0, or -EINVAL for an id that namespace does not map. */
static int map_id(const struct target *t, const char *map, uint32_t *id)
{
	char path[64], line[128];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)t->peer.pid, map);
	if (!(f = fopen(path, "re")))
		return -ESRCH;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long in, out, n;

		if (sscanf(line, "%lu %lu %lu", &in, &out, &n) == 3 &&
		    *id >= in && *id - in < n) {
			*id = (uint32_t)(out + (*id - in));
			found = true;
		}
	}
	fclose(f);
	return found ? 0 : -EINVAL;
}

/* Whether t is in our user namespace: its maps then read as those of
 * the namespace above (user_namespaces(7)), and ids are the same. */
static bool same_userns(const struct target *t)
{
	struct stat a, b;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)t->peer.pid);
	return !stat(path, &a) && !stat("/proc/self/ns/user", &b) &&
	       a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

int hx_un_map_ids(const struct target *t, uid_t *uid, gid_t *gid)
{
	int e = 0;

	if ((!uid || *uid == (uid_t)-1) && (!gid || *gid == (gid_t)-1))
		return 0;
	if (same_userns(t))
		return 0;
	if (uid && *uid != (uid_t)-1)
		e = map_id(t, "uid_map", uid);
	if (!e && gid && *gid != (gid_t)-1)
		e = map_id(t, "gid_map", gid);
	return e;
}

/* A POSIX ACL's xattr: version 2, then entries of a tag, the
 * permissions and an id (linux/posix_acl_xattr.h). */
#define ACL_XATTR_VERSION 2
#define ACL_USER_TAG	  0x02
#define ACL_GROUP_TAG	  0x08

int hx_un_map_acl(const struct target *t, const char *name, void *val,
		  size_t size)
{
	unsigned char *p = val;
	uint32_t version;
	int e = 0;

	if (strcmp(name, "system.posix_acl_access") &&
	    strcmp(name, "system.posix_acl_default"))
		return 0;
	if (size < 4 || (size - 4) % 8)
		return 0; /* the kernel's EINVAL, unchanged */
	memcpy(&version, p, 4);
	if (version != ACL_XATTR_VERSION || same_userns(t))
		return 0;
	for (size_t off = 4; off < size && !e; off += 8) {
		uint16_t tag;
		uint32_t id;

		memcpy(&tag, p + off, 2);
		if (tag != ACL_USER_TAG && tag != ACL_GROUP_TAG)
			continue;
		memcpy(&id, p + off + 4, 4);
		e = map_id(t, tag == ACL_USER_TAG ? "uid_map" : "gid_map", &id);
		memcpy(p + off + 4, &id, 4);
	}
	return e;
}
