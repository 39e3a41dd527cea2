/* Masks as FUSE file systems that record who looked; see maskfs.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/maskfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <linux/fuse.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fdpass.h"
#include "supervisor/kernel/maskbind.h"
#include "supervisor/pipeline.h"
#include "supervisor/proc.h"
#include "supervisor/record.h"
#include "supervisor/refusal.h"
#include "supervisor/server.h"

#define RING	  256
#define REPEAT_MS 1000
/* FUSE_MIN_READ_BUFFER, and room for the largest request we take. */
#define REQ_BUF 16384
/* include/linux/fuse_i.h: a name longer than this is refused first. */
#define FUSE_NAME_MAX 1024
#define DAY	      (24 * 3600)
/* Linux 6.6 (protocol 7.39), newer than Debian 12's <linux/fuse.h>. */
#define HX_FUSE_STATX 52

/* One refusal, from the thread to the loop. */
struct ent {
	struct timespec when;
	pid_t pid, tid, ppid;
	uid_t uid;
	long sysnr;
	size_t mask;
	char exe[PATH_MAX]; /* read while it waits: it may be gone soon */
	/* looked up in a masked directory, or "": FUSE asks up to 1024 */
	char name[FUSE_NAME_MAX + 1];
};

struct hx_maskfs {
	char **paths; /* mask i's; room for HX_MASKFS_LATE more */
	bool *dirs;
	mode_t *xbits; /* a file's execute bits: its exec is an OPEN then */
	/* Masks [0, n) are known; the loop adds late ones (hx_maskfs_add)
	 * and the thread reads n with acquire. */
	_Atomic size_t n;
	size_t cap;
	/* O_PATH of the FUSE root, from the child; set after fd (the
	 * loop's sign that it is served) */
	_Atomic int root;
	struct hx_maskbind *bind; /* binds the late ones, started on need */
	_Atomic pid_t bind_pid;	  /* its requests are no refusals */
	uint64_t late, late_failed;
	int chan[2]; /* [0] ours, [1] the child's */
	int fd;	     /* the connection, or -1 until the child sends it */
	int stop_efd, ready_efd;
	pthread_t thread;
	bool running;
	pid_t self, child;
	/* The agent's mount namespace, where the masks are: another
	 * process reaches them only through /proc/<pid>/root, and is no
	 * part of the session (refused, unrecorded). 0: not known yet. */
	struct hx_nsid mnt;
	uid_t uid;
	gid_t gid;
	time_t made;	      /* the masks' times */
	pthread_mutex_t lock; /* the ring */
	struct ent ring[RING];
	size_t head, count;
	atomic_ullong served, dropped;
	/* The loop's: the record being counted. */
	struct hx_pipeline *pl;
	struct hx_server *srv;
	struct hx_source src;
	/* The agent's namespace's mountinfo (opened where the child is
	 * in it: its own requests are the only ones recorded), or -1. */
	_Atomic int minfo;
	struct ent last;
	bool have_last;
	uint64_t last_ms, last_seq, repeats, records, repeated;
};

int hx_maskfs_probe(void)
{
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Mask i's path and attributes (not yet published). */
static int put(struct hx_maskfs *fs, size_t i, const char *path, bool dir)
{
	struct stat st;

	fs->dirs[i] = dir;
	if (!dir && !lstat(path, &st))
		fs->xbits[i] = st.st_mode & 0111;
	return (fs->paths[i] = strdup(path)) ? 0 : -ENOMEM;
}

int hx_maskfs_new(const char *const *paths, const bool *dirs, size_t n,
		  struct hx_maskfs **out)
{
	struct hx_maskfs *fs = calloc(1, sizeof(*fs));
	int e = -ENOMEM;

	*out = NULL;
	if (!fs)
		return -ENOMEM;
	fs->chan[0] = fs->chan[1] = fs->stop_efd = fs->ready_efd = fs->fd = -1;
	fs->src.fd = -1;
	pthread_mutex_init(&fs->lock, NULL);
	fs->root = fs->minfo = -1;
	fs->cap = n + HX_MASKFS_LATE;
	if (!(fs->paths = calloc(fs->cap, sizeof(char *))) ||
	    !(fs->dirs = calloc(fs->cap, sizeof(bool))) ||
	    !(fs->xbits = calloc(fs->cap, sizeof(mode_t))))
		goto fail;
	for (size_t i = 0; i < n; i++)
		if ((e = put(fs, i, paths[i], dirs[i])))
			goto fail;
	fs->n = n;
	e = -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, fs->chan)) {
		e = -errno;
		fs->chan[0] = fs->chan[1] = -1;
		goto fail;
	}
	fs->self = getpid();
	fs->uid = geteuid();
	fs->gid = getegid();
	fs->made = time(NULL);
	*out = fs;
	return 0;
fail:
	hx_maskfs_free(fs);
	return e;
}

int hx_maskfs_child_fd(const struct hx_maskfs *fs)
{
	return fs ? fs->chan[1] : -1;
}

/* Child side: no allocation, no stdio (after the fork). */
int hx_maskfs_attach(int chan, const char *stage)
{
	char opts[128];
	uint64_t one = 1;
	int fd, root, e;

	if ((fd = open("/dev/fuse", O_RDWR | O_CLOEXEC)) < 0)
		return -errno;
	/* allow_other: a process of the tree that changed its uid (root's
	 * agent running `su nobody`) is refused and recorded too, not
	 * turned away by FUSE before we see it. */
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=%o,user_id=%u,group_id=%u,allow_other", fd,
		 S_IFDIR, (unsigned)geteuid(), (unsigned)getegid());
	/* Not noexec: an exec of a mask is an OPEN, refused and recorded
	 * (noexec refused it unrecorded, after an exec record "allow"). */
	if (mount("harness-mask", stage, "fuse",
		  MS_RDONLY | MS_NOSUID | MS_NODEV, opts)) {
		e = -errno;
		close(fd);
		return e;
	}
	/* Served from here on: each bind's look-up of its node waits for
	 * the thread, which takes the connection first; the root's fd is
	 * for the masks bound later (maskbind.h). */
	root = open(stage, O_PATH | O_DIRECTORY | O_CLOEXEC);
	e = root < 0
		? -errno
		: hx_fd_send(chan, &one, sizeof(one), (int[]){fd, root}, 2);
	close(fd);
	if (e) {
		if (root >= 0)
			close(root);
		umount2(stage,
			MNT_DETACH); /* unserved: it would wait on nobody */
		return e;
	}
	return root;
}

void hx_maskfs_prefetch(int root)
{
	char buf[4096] __attribute__((aligned(8)));
	int d = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (d < 0)
		return; /* each bind looks its node up */
	while (syscall(SYS_getdents64, d, buf, sizeof(buf)) > 0) {
	}
	close(d);
}

/* ---- the thread ---- */

static void reply(int fd, uint64_t unique, int error, const void *body,
		  size_t len)
{
	struct fuse_out_header h = {.len = (uint32_t)(sizeof(h) + len),
				    .error = error,
				    .unique = unique};
	struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)body, len}};

	/* ENOENT: the request was interrupted meanwhile. */
	if (writev(fd, iov, body ? 2 : 1) < 0) {
	}
}

static void attr_of(const struct hx_maskfs *fs, size_t i, struct fuse_attr *a)
{
	bool dir = fs->dirs[i];

	memset(a, 0, sizeof(*a));
	a->ino = 2 + i;
	/* No read or write bits; a file's execute bits, which the kernel
	 * wants before it asks to OPEN for an exec (refused, recorded). */
	a->mode = dir ? S_IFDIR : S_IFREG | fs->xbits[i];
	a->nlink = dir ? 2 : 1;
	a->uid = fs->uid;
	a->gid = fs->gid;
	a->blksize = 4096;
	a->atime = a->mtime = a->ctime = (uint64_t)fs->made;
}

static void root_attr(const struct hx_maskfs *fs, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = FUSE_ROOT_ID;
	a->mode = S_IFDIR | 0500; /* the child's binds look up in it */
	a->nlink = 2;
	a->uid = fs->uid;
	a->gid = fs->gid;
	a->atime = a->mtime = a->ctime = (uint64_t)fs->made;
}

/* Whether tid is in the agent's mount namespace. */
static bool in_session(const struct hx_maskfs *fs, pid_t tid)
{
	struct hx_nsid ns;

	return fs->mnt.ino && !hx_proc_ns(tid, "mnt", &ns) &&
	       ns.ino == fs->mnt.ino && ns.dev == fs->mnt.dev;
}

/* Who tid is (its process, parent, uid, exe) and the syscall it waits
 * in (the request is answered before it returns: "257 0x..."); false
 * when it is gone. */
static bool who(pid_t tid, struct ent *e)
{
	struct hx_procstatus st;
	char path[64], buf[64];
	ssize_t n;
	int fd;

	if (hx_proc_status(tid, &st))
		return false;
	e->pid = st.tgid;
	e->ppid = st.ppid;
	e->uid = st.uid;
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	e->sysnr = -1;
	/* "running" until the thread is asleep on its request: it may not
	 * be yet when the request is read. */
	for (int tries = 0; e->sysnr < 0 && tries < 3; tries++) {
		if (tries)
			sched_yield();
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			break;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			break;
		buf[n] = '\0';
		if (sscanf(buf, "%ld", &e->sysnr) != 1)
			e->sysnr = -1;
	}
	hx_proc_exe(e->pid, e->exe, sizeof(e->exe));
	return true;
}

static bool same(const struct ent *a, const struct ent *b)
{
	/* an unknown syscall (-1) is no other one */
	return a->pid == b->pid && a->mask == b->mask &&
	       (a->sysnr == b->sysnr || a->sysnr < 0 || b->sysnr < 0) &&
	       !strcmp(a->name, b->name);
}

/* Queues a refusal of mask i (name: looked up in it) by tid. */
static void refused(struct hx_maskfs *fs, size_t i, pid_t tid, const char *name,
		    size_t namelen)
{
	struct ent e = {.tid = tid, .mask = i};
	uint64_t one = 1;

	clock_gettime(CLOCK_REALTIME, &e.when);
	if (tid > 0 && !who(tid, &e))
		e.pid = e.tid = 0; /* gone already: unknown */
	/* harness-exec's own walk through the agent's view, or another
	 * process's through /proc/<pid>/root: no refusal of the session */
	if (e.pid == fs->self || e.pid == atomic_load(&fs->bind_pid) ||
	    (e.pid && !in_session(fs, tid)))
		return;
	if (namelen >= sizeof(e.name))
		namelen = sizeof(e.name) - 1;
	memcpy(e.name, name, namelen);
	e.name[namelen] = '\0';
	pthread_mutex_lock(&fs->lock);
	if (fs->count == RING)
		atomic_fetch_add(&fs->dropped, 1);
	else
		fs->ring[(fs->head + fs->count++) % RING] = e;
	pthread_mutex_unlock(&fs->lock);
	if (write(fs->ready_efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, the loop is woken anyway */
	}
}

/* The entry of mask i, the root's name for it in decimal (the child's
 * binds look it up). */
static void entry(const struct hx_maskfs *fs, const struct fuse_in_header *h,
		  const char *name)
{
	struct fuse_entry_out o = {.entry_valid = DAY, .attr_valid = DAY};
	char *end;
	unsigned long i = strtoul(name, &end, 10);

	if (!*name || *end || i >= atomic_load(&fs->n)) {
		reply(fs->fd, h->unique, -ENOENT, NULL, 0);
		return;
	}
	o.nodeid = i + 2;
	attr_of(fs, i, &o.attr);
	reply(fs->fd, h->unique, 0, &o, sizeof(o));
}

/* The root's entries from in->offset, each with its node's entry and
 * attributes (READDIRPLUS): the kernel makes the nodes as it reads them,
 * so that the binds and the grants of the child look up none (a round
 * trip each: 2 ms a start for 40 held files). */
static void readdir_nodes(struct hx_maskfs *fs, const struct fuse_in_header *h,
			  const struct fuse_read_in *in)
{
	char buf[8192] __attribute__((aligned(8)));
	size_t n = atomic_load(&fs->n), len = 0,
	       size = in->size < sizeof(buf) ? in->size : sizeof(buf);

	for (uint64_t k = in->offset; k < n; k++) {
		struct fuse_direntplus *d = (void *)(buf + len);
		char name[24];
		size_t nl = (size_t)snprintf(name, sizeof(name), "%llu",
					     (unsigned long long)k),
		       rec =
			   FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET_DIRENTPLUS + nl);

		if (len + rec > size)
			break;
		memset(d, 0, rec);
		d->entry_out.nodeid = k + 2;
		d->entry_out.entry_valid = d->entry_out.attr_valid = DAY;
		attr_of(fs, (size_t)k, &d->entry_out.attr);
		d->dirent.ino = k + 2;
		d->dirent.off = k + 1;
		d->dirent.namelen = (uint32_t)nl;
		d->dirent.type = fs->dirs[k] ? DT_DIR : DT_REG;
		memcpy(d->dirent.name, name, nl);
		len += rec;
	}
	reply(fs->fd, h->unique, 0, len ? buf : NULL, len);
}

/* Node 1 is the root, never reached once the child detached it; node
 * i + 2 is mask i. */
static void handle(struct hx_maskfs *fs, const char *buf, size_t len)
{
	const struct fuse_in_header *h = (const void *)buf;
	const char *arg = buf + sizeof(*h);
	size_t alen = len - sizeof(*h);
	bool mask = h->nodeid >= 2 && h->nodeid - 2 < atomic_load(&fs->n);
	size_t i = mask ? (size_t)(h->nodeid - 2) : 0;
	int fd = fs->fd;

	switch (h->opcode) {
	case FUSE_INIT: {
		const struct fuse_init_in *in = (const void *)arg;
		struct fuse_init_out o = {.major = FUSE_KERNEL_VERSION,
					  .minor = FUSE_KERNEL_MINOR_VERSION,
					  .max_write = 4096};

		if (alen >= 12)
			o.max_readahead = in->max_readahead;
		/* The root's listing makes every node in one request
		 * (readdir_nodes), not a look-up each. */
		if (alen >= 16)
			o.flags = in->flags & FUSE_DO_READDIRPLUS;
		reply(fd, h->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_READDIRPLUS:
		if (h->nodeid == FUSE_ROOT_ID &&
		    alen >= sizeof(struct fuse_read_in))
			readdir_nodes(fs, h, (const void *)arg);
		else
			reply(fd, h->unique, -EACCES, NULL, 0);
		return;
	case FUSE_RELEASEDIR:
		reply(fd, h->unique, 0, NULL, 0);
		return;
	case FUSE_GETATTR: {
		struct fuse_attr_out o = {.attr_valid = DAY};

		if (mask)
			attr_of(fs, i, &o.attr);
		else
			root_attr(fs, &o.attr);
		reply(fd, h->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_STATFS: {
		struct fuse_statfs_out o = {
		    .st = {.bsize = 4096, .namelen = 255, .frsize = 4096}};

		reply(fd, h->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_LOOKUP:
		if (h->nodeid == FUSE_ROOT_ID) {
			entry(fs, h, arg);
			return;
		}
		/* a name inside a masked directory */
		if (mask)
			refused(fs, i, (pid_t)h->pid, arg, strnlen(arg, alen));
		reply(fd, h->unique, -EACCES, NULL, 0);
		return;
	case FUSE_ACCESS: {
		const struct fuse_access_in *in = (const void *)arg;

		/* access(2), F_OK: it is there (stat says so too); asking
		 * to read, write or run it is refused, and a record. */
		if (mask && alen >= sizeof(*in) && !in->mask) {
			reply(fd, h->unique, 0, NULL, 0);
			return;
		}
		if (mask)
			refused(fs, i, (pid_t)h->pid, "", 0);
		reply(fd, h->unique, -EACCES, NULL, 0);
		return;
	}
	case FUSE_OPENDIR:
		/* The root, by the agent's first process only: it lists it
		 * before the binds (hx_maskfs_prefetch). */
		if (h->nodeid == FUSE_ROOT_ID && (pid_t)h->pid == fs->child) {
			struct fuse_open_out o = {0};

			reply(fd, h->unique, 0, &o, sizeof(o));
			return;
		}
		/* fall through */
	case FUSE_OPEN:
		if (mask)
			refused(fs, i, (pid_t)h->pid, "", 0);
		reply(fd, h->unique, -EACCES, NULL, 0);
		return;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT: /* every request is answered at once */
		return;
	case FUSE_GETXATTR:
	case FUSE_LISTXATTR:
	case HX_FUSE_STATX: /* the kernel falls back to GETATTR */
	case FUSE_DESTROY:
		reply(fd, h->unique, -ENOSYS, NULL, 0);
		return;
	default:
		/* Never ENOSYS for the rest: for OPEN, ACCESS and a few
		 * others it means "always allowed". */
		reply(fd, h->unique, -EACCES, NULL, 0);
	}
}

/* Holds pid's mountinfo, the namespace with it, once (either thread:
 * the first to open it keeps it). */
static void open_mountinfo(struct hx_maskfs *fs, pid_t pid)
{
	char path[64];
	int fd, none = -1;

	if (pid <= 0 || atomic_load(&fs->minfo) >= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0 &&
	    !atomic_compare_exchange_strong(&fs->minfo, &none, fd))
		close(fd);
}

/* Takes the connection and the root the child sends. */
static void take(struct hx_maskfs *fs)
{
	uint64_t one;
	size_t n;
	int fds[2];

	if (hx_fd_recv(fs->chan[0], &one, sizeof(one), fds, 2, &n,
		       MSG_DONTWAIT) != (ssize_t)sizeof(one) ||
	    n != 2 || fs->fd >= 0) {
		while (n)
			close(fds[--n]);
		return;
	}
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	fs->fd = fds[0];
	atomic_store(&fs->root, fds[1]);
	/* the child mounted it in its namespace */
	if (!fs->mnt.ino && hx_proc_ns(fs->child, "mnt", &fs->mnt))
		fs->mnt.ino = 0;
	open_mountinfo(fs, fs->child);
}

static void *serve(void *arg)
{
	struct hx_maskfs *fs = arg;
	char buf[REQ_BUF];

	for (;;) {
		struct pollfd p[3] = {{.fd = fs->stop_efd, .events = POLLIN},
				      {.fd = fs->chan[0], .events = POLLIN},
				      {.fd = fs->fd, .events = POLLIN}};
		ssize_t n;

		if (poll(p, fs->fd >= 0 ? 3 : 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents)
			break;
		if (p[1].revents & POLLIN)
			take(fs);
		if (fs->fd < 0 || !p[2].revents)
			continue;
		n = read(fs->fd, buf, sizeof(buf));
		if (n < 0 &&
		    (errno == EAGAIN || errno == EINTR || errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(struct fuse_in_header)) {
			/* ENODEV: unmounted (the namespace ended) */
			close(fs->fd);
			fs->fd = -1;
			continue;
		}
		atomic_fetch_add(&fs->served, 1);
		handle(fs, buf, (size_t)n);
	}
	return NULL;
}

/* ---- the loop's end: records ---- */

/* A mountinfo field's escapes (\ooo: a space, tab, newline or
 * backslash) undone in place. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++, w++) {
		*w = *s;
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				    (s[3] - '0'));
			s += 3;
		}
	}
	*w = '\0';
}

/* The agent's mount namespace's mountinfo as it reads now (malloc'd),
 * or NULL. */
static char *mountinfo_now(struct hx_maskfs *fs, pid_t pid)
{
	char *buf = NULL, *more;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd;

	open_mountinfo(fs, pid);
	if ((fd = atomic_load(&fs->minfo)) < 0 || lseek(fd, 0, SEEK_SET))
		return NULL;
	do {
		if (len + 4096 > cap) {
			if (cap > (64u << 20) ||
			    !(more = realloc(buf, cap + 65536))) {
				free(buf);
				return NULL;
			}
			buf = more;
			cap += 65536;
		}
		n = read(fd, buf + len, cap - len - 1);
		len += n > 0 ? (size_t)n : 0;
	} while (n > 0);
	buf[len] = '\0';
	return buf;
}

/* The n-th (from 0) field of a mountinfo line, ended in place, or
 * NULL. Fields are split by one space: the kernel writes a space in a
 * path as \040. */
static char *field_of(char *line, int n)
{
	char *end;

	for (; n > 0 && line; n--)
		if ((line = strchr(line, ' ')))
			line++;
	if (!line)
		return NULL;
	if ((end = strchr(line, ' ')))
		*end = '\0';
	return line;
}

/* Where mask i is bound now (malloc'd), or NULL. A directory above it
 * renamed by the agent (the rename is made in harness-exec's namespace,
 * and the bind goes with its dentry) left the path known at start
 * naming nothing, or another file, and the record of a refused read
 * there named that path. From the agent's mountinfo: its bind of node
 * "/<i>" of our file system (fstat of its root would ask our own
 * server, which refuses; no process of the agent can mount one of that
 * name, nor another session's in its namespace); NULL when not found
 * (the path known at start stands). A line is read however long: one
 * longer than PATH_MAX (a path of names of spaces, each \040 there)
 * was passed over, and the record named the path known at start
 * (thirtieth attack review, part a).
 * Costs a read of the mount table, made only for a record. */
static char *mask_now(struct hx_maskfs *fs, pid_t pid, size_t i)
{
	char want[32], *buf, *line, *next, *at, *root, *found = NULL;

	if (!(buf = mountinfo_now(fs, pid)))
		return NULL;
	snprintf(want, sizeof(want), "/%zu", i);
	for (line = buf; line && *line; line = next) {
		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		if (!strstr(line, " - fuse harness-mask ") ||
		    !(at = field_of(line, 4)) || !(root = field_of(line, 3)) ||
		    strcmp(root, want))
			continue;
		unescape(at);
		free(found);
		found = strdup(at); /* the last: the topmost */
	}
	free(buf);
	return found;
}

static void write_rec(struct hx_maskfs *fs, const struct ent *e,
		      uint64_t repeated)
{
	char *path = NULL, name[64], *now = mask_now(fs, e->pid, e->mask);
	const char *mask = now ? now : fs->paths[e->mask];
	struct hx_peer peer = {
	    .pid = e->pid, .tid = e->tid, .ppid = e->ppid, .uid = e->uid};
	char *sys = e->sysnr >= 0 ? seccomp_syscall_resolve_num_arch(
					SCMP_ARCH_NATIVE, (int)e->sysnr)
				  : NULL;
	struct hx_refusal r;
	json_t *rec, *args;
	uint64_t seq;

	if (asprintf(&path, "%s%s%s", mask, e->name[0] ? "/" : "", e->name) < 0)
		path = NULL;
	snprintf(name, sizeof(name), "%s", sys ? sys : "open");
	free(sys);
	peer.exe = e->exe[0] ? e->exe : NULL;
	r = (struct hx_refusal){.peer = e->pid > 0 ? &peer : NULL,
				.event = name,
				.when = &e->when,
				.op = HX_OP_READ,
				.path = path ? path : mask,
				.cat = HX_CAT_FILE_READ,
				.risk = HX_RISK_HIGH,
				.rule = "harness:mask",
				.layer = "mask",
				.repeated = repeated,
				.ref_seq = repeated ? fs->last_seq : 0};
	if ((rec = hx_refusal_record(fs->pl, &r, &args))) {
		if (e->name[0])
			json_object_set_new(args, "mask", json_string(mask));
		seq = hx_refusal_append(fs->pl, &r, rec);
		json_decref(rec);
		if (!repeated) {
			fs->last_seq = seq;
			fs->records++;
		}
	}
	free(path);
	free(now);
}

static void flush_repeats(struct hx_maskfs *fs)
{
	if (fs->have_last && fs->repeats) {
		write_rec(fs, &fs->last, fs->repeats);
		fs->repeats = 0;
	}
}

static void drain(struct hx_maskfs *fs)
{
	uint64_t v;

	if (read(fs->ready_efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: drained before */
	}
	for (;;) {
		struct ent e;
		uint64_t t = hx_mono_ms();

		pthread_mutex_lock(&fs->lock);
		if (!fs->count) {
			pthread_mutex_unlock(&fs->lock);
			return;
		}
		e = fs->ring[fs->head];
		fs->head = (fs->head + 1) % RING;
		fs->count--;
		pthread_mutex_unlock(&fs->lock);
		fs->pl->events++;
		fs->pl->verdicts[HX_VERDICT_DENY]++;
		/* A storm (a loop of the same refused open) is one record
		 * and a count. */
		if (fs->have_last && same(&e, &fs->last) &&
		    t - fs->last_ms < REPEAT_MS) {
			fs->repeats++;
			fs->repeated++;
			continue;
		}
		flush_repeats(fs);
		write_rec(fs, &e, 0);
		fs->last = e;
		fs->have_last = true;
		fs->last_ms = t;
	}
}

static void on_ready(struct hx_server *s, struct hx_source *src,
		     uint32_t events)
{
	(void)s;
	(void)events;
	drain(src->arg);
}

int hx_maskfs_start(struct hx_maskfs *fs, pid_t child, struct hx_pipeline *pl,
		    struct hx_server *srv)
{
	sigset_t all, old;
	int e;

	close(fs->chan[1]); /* the child's */
	fs->chan[1] = -1;
	fs->pl = pl;
	fs->child = child;
	if ((fs->stop_efd = eventfd(0, EFD_CLOEXEC)) < 0 ||
	    (fs->ready_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return -errno;
	fs->src = (struct hx_source){
	    .fd = fs->ready_efd, .handle = on_ready, .arg = fs};
	if ((e = hx_server_add(srv, &fs->src, EPOLLIN)))
		return e;
	fs->srv = srv;
	/* No signal of the loop's (signalfd) may land on this thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&fs->thread, NULL, serve, fs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e)
		return -e;
	fs->running = true;
	return 0;
}

/* What a full queue dropped is said, never silently lost. */
static void report_dropped(struct hx_maskfs *fs)
{
	uint64_t n = atomic_load(&fs->dropped);
	json_t *rec;

	if (!n || !(rec = hx_record_new(fs->pl, NULL, "mask_overflow", NULL)))
		return;
	json_object_set_new(rec, "layer", json_string("mask"));
	json_object_set_new(rec, "dropped", json_integer((json_int_t)n));
	hx_record_append(fs->pl, rec, NULL);
	json_decref(rec);
	fprintf(stderr,
		"harness-exec: warning: %llu refusals of the masks were not "
		"recorded (a storm filled the queue)\n",
		(unsigned long long)n);
}

void hx_maskfs_stop(struct hx_maskfs *fs)
{
	uint64_t one = 1;

	if (!fs || !fs->running)
		return;
	if (write(fs->stop_efd, &one, sizeof(one)) < 0) {
		/* an eventfd takes 1 */
	}
	pthread_join(fs->thread, NULL);
	fs->running = false;
	drain(fs);
	flush_repeats(fs);
	report_dropped(fs);
}

/* The node for path: its own (a mask whose file was replaced: the
 * kernel dropped the bind with the old dentry), or a new one. */
static int node_for(struct hx_maskfs *fs, const char *path, bool is_dir,
		    size_t *out)
{
	size_t n = atomic_load(&fs->n);
	int e;

	for (size_t k = 0; k < n; k++)
		if (!strcmp(fs->paths[k], path) && fs->dirs[k] == is_dir) {
			*out = k;
			return 0;
		}
	if (n == fs->cap)
		return -ENOSPC;
	if ((e = put(fs, n, path, is_dir)))
		return e;
	atomic_store(&fs->n, n + 1); /* before the bind looks it up */
	*out = n;
	return 0;
}

int hx_maskfs_add(struct hx_maskfs *fs, const char *path, bool is_dir)
{
	int root = atomic_load(&fs->root), e;
	json_t *rec;
	size_t i;

	if (root < 0) /* not served yet: no root to bind from */
		e = -EAGAIN;
	else if (!(e = node_for(fs, path, is_dir, &i)) &&
		 (fs->bind ||
		  !(e = hx_maskbind_start(fs->child, root, &fs->bind)))) {
		atomic_store(&fs->bind_pid, hx_maskbind_pid(fs->bind));
		e = hx_maskbind_bind(fs->bind, i, path);
	}
	if (e == -ENOENT || e == 1)
		return 0; /* gone meanwhile, or a mask already */
	e ? fs->late_failed++ : fs->late++;
	if ((rec = hx_record_new(fs->pl, NULL, "mask_added", NULL))) {
		json_t *args = json_object();

		json_object_set_new(args, "path",
				    hx_record_text(rec, "args.path", path));
		if (e)
			json_object_set_new(args, "error",
					    json_string(strerror(-e)));
		json_object_set_new(rec, "args", args);
		json_object_set_new(rec, "layer", json_string("mask"));
		hx_record_append(fs->pl, rec, NULL);
		json_decref(rec);
	}
	return e;
}

json_t *hx_maskfs_json(const struct hx_maskfs *fs)
{
	json_t *o = json_object();

	json_object_set_new(o, "late", json_integer((json_int_t)fs->late));
	if (fs->late_failed)
		json_object_set_new(o, "late_failed",
				    json_integer((json_int_t)fs->late_failed));

	json_object_set_new(o, "served",
			    json_integer((json_int_t)atomic_load(&fs->served)));
	json_object_set_new(o, "records",
			    json_integer((json_int_t)fs->records));
	json_object_set_new(o, "repeated",
			    json_integer((json_int_t)fs->repeated));
	json_object_set_new(
	    o, "dropped", json_integer((json_int_t)atomic_load(&fs->dropped)));
	return o;
}

void hx_maskfs_free(struct hx_maskfs *fs)
{
	if (!fs)
		return;
	hx_maskfs_stop(fs);
	if (fs->srv)
		hx_server_del(fs->srv, &fs->src);
	hx_maskbind_free(fs->bind);
	if (fs->fd >= 0)
		close(fs->fd);
	if (fs->root >= 0)
		close(fs->root);
	if (fs->minfo >= 0)
		close(fs->minfo);
	for (int i = 0; i < 2; i++)
		if (fs->chan[i] >= 0)
			close(fs->chan[i]);
	if (fs->stop_efd >= 0)
		close(fs->stop_efd);
	if (fs->ready_efd >= 0)
		close(fs->ready_efd);
	pthread_mutex_destroy(&fs->lock);
	for (size_t i = 0; fs->paths && i < fs->cap; i++)
		free(fs->paths[i]);
	free(fs->paths);
	free(fs->dirs);
	free(fs->xbits);
	free(fs);
}
