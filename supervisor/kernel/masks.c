/* Masks of denied files inside write roots; see masks.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/masks.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "common/glob.h"
#include "supervisor/kernel/landlock_tree.h"
#include "supervisor/kernel/maskfs.h"
#include "supervisor/kernel/masktrig.h"
#include "supervisor/kernel/maskwatch.h"
#include "policy/policy.h"

struct hx_masks {
	char **paths;
	bool *is_dir;
	size_t n, cap;
	char file[PATH_MAX], dir[PATH_MAX]; /* what covers them */
	char stage[PATH_MAX]; /* where the masks' FUSE root is mounted */
	bool covers_made;
};

struct walk {
	const struct hx_policy *p;
	struct hx_masks *m;
	struct hx_maskwatch *watch; /* each directory walked, or NULL */
	size_t seen, max;
	bool truncated;
	struct hx_masktrig *trig; /* NULL: decide each entry */
	size_t root_len;	  /* the root being walked's path's */
};

static int add(struct hx_masks *m, const char *path, bool is_dir)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		char **p = realloc(m->paths, cap * sizeof(*p));
		bool *d;

		if (!p)
			return -ENOMEM;
		m->paths = p;
		d = realloc(m->is_dir, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		m->is_dir = d;
		m->cap = cap;
	}
	if (!(m->paths[m->n] = strdup(path)))
		return -ENOMEM;
	m->is_dir[m->n++] = is_dir;
	return 0;
}

static bool readable(const struct hx_policy *p, const char *path)
{
	struct hx_event ev = {.op = HX_OP_READ, .path = path};
	struct hx_decision d;

	hx_policy_decide(p, &ev, &d);
	return d.verdict == HX_VERDICT_ALLOW;
}

/* A kernel file system mounted beneath a root (a project at / meets
 * /proc and /sys): nothing in it is a file a policy pattern names, and
 * /proc alone has more entries than the walk's cap. */
static bool pseudo_fs(int fd)
{
	static const long types[] = {
	    PROC_SUPER_MAGIC,	 SYSFS_MAGIC,	    CGROUP_SUPER_MAGIC,
	    CGROUP2_SUPER_MAGIC, DEBUGFS_MAGIC,	    TRACEFS_MAGIC,
	    SECURITYFS_MAGIC,	 BPF_FS_MAGIC,	    PSTOREFS_MAGIC,
	    BINFMTFS_MAGIC,	 DEVPTS_SUPER_MAGIC};
	struct statfs sf;

	if (fstatfs(fd, &sf))
		return true;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if ((long)sf.f_type == types[i])
			return true;
	return false;
}

static int walk_dir(struct walk *w, int dfd, char *path, size_t len, dev_t dev);

/* <.git of dfd>/harness/worktrees made, as a worktree session makes it:
 * each step opened without following a link (the one mkdirat of the
 * whole path went through ".git/harness" wherever it led), and only in
 * a repository of harness-exec's own uid (root's 0700 directory in a
 * user's repository would refuse the user's own worktree sessions). */
static void make_worktrees_dir(int dfd)
{
	int g = openat(dfd, ".git",
		       O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
	    h = -1;
	struct stat st;

	if (g >= 0 && !fstat(g, &st) && st.st_uid == geteuid() &&
	    !faccessat(g, "HEAD", F_OK, AT_SYMLINK_NOFOLLOW)) {
		mkdirat(g, "harness", 0700);
		h = openat(g, "harness",
			   O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (h >= 0)
			mkdirat(h, "worktrees", 0700);
	}
	if (h >= 0)
		close(h);
	if (g >= 0)
		close(g);
}

/* The --worktree sessions' checkouts in the git dir .git of dfd, whose
 * path is path (len bytes): another session's worktree held a copy of
 * the project's .env, unmasked (the walk skipped .git), and a static
 * program of a session in the project read it (twenty-eighth attack
 * review, part d). Walked, the directory is watched: a worktree made
 * later is looked into as it appears (maskwatch.h). */
static int walk_worktrees(struct walk *w, int dfd, char *path, size_t len,
			  dev_t dev)
{
	static const char sub[] = "/harness/worktrees";
	struct stat st;
	int fd;

	if (len + sizeof(sub) >= PATH_MAX)
		return 0;
	/* A root's repository gets the directory a worktree session makes
	 * (as it does, 0700), so that one started later is watched for. */
	if (len == w->root_len + 5)
		make_worktrees_dir(dfd);
	fd = openat(dfd, ".git/harness/worktrees",
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* not through a link: ".git/harness" is refused as one (gitconf) */
	if (fstat(fd, &st) || st.st_dev != dev) {
		close(fd);
		return 0;
	}
	memcpy(path + len, sub, sizeof(sub));
	return walk_dir(w, fd, path, len + sizeof(sub) - 1, dev);
}

/* One entry of a walked directory (dfd), named name, of type type (as
 * getdents64 says), whose path is path (len bytes); maybe: a trigger
 * matched it; dev: its directory's file system. */
static int walk_entry(struct walk *w, int dfd, const char *name,
		      unsigned char type, bool maybe, char *path, size_t len,
		      dev_t dev)
{
	struct stat st;
	int sub;

	/* A symlink's target is what Landlock judges, and the walk when it
	 * is beneath a root; a denied name is masked itself all the same
	 * (cover binds on it, never through it): a project's .env linked to
	 * a file the policy does not name was read by a static program
	 * (twenty-sixth attack review, part b). A regular file or a
	 * directory needs no stat to say what it is. */
	if (type == DT_REG || type == DT_DIR)
		st.st_mode = type == DT_REG ? S_IFREG : S_IFDIR;
	else if (type == DT_LNK)
		st.st_mode = S_IFLNK;
	else if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return 0;
	if (S_ISLNK(st.st_mode))
		return maybe && !readable(w->p, path) ? add(w->m, path, false)
						      : 0;
	if (maybe && !readable(w->p, path))
		return add(w->m, path, S_ISDIR(st.st_mode)); /* hides its
							      * content */
	/* git's own files are no secrets a pattern names, and a
	 * repository's objects are most of a project's entries; but the
	 * --worktree sessions' checkouts beneath it are work trees. */
	if (S_ISDIR(st.st_mode) && !strcmp(name, ".git"))
		return walk_worktrees(w, dfd, path, len, dev);
	if (!S_ISDIR(st.st_mode))
		return 0;
	/* Other file systems mounted beneath a root too: Landlock's grant
	 * of the root covers them (a tmpfs or a volume at $CWD/data held
	 * an unmasked .env). Its file system is the opened one's. */
	sub =
	    openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0)
		return 0; /* unreadable to us: unreadable to the agent too */
	if (fstat(sub, &st) || (st.st_dev != dev && pseudo_fs(sub))) {
		close(sub);
		return 0;
	}
	return walk_dir(w, sub, path, len, st.st_dev);
}

/* Walks the directory open at dfd, whose path is path (consumes dfd):
 * its entries by getdents64 into one buffer (readdir's fdopendir adds
 * three system calls a directory, and a project has thousands). */
static int walk_dir(struct walk *w, int dfd, char *path, size_t len, dev_t dev)
{
	enum { BUF = 32768 };
	char *buf = malloc(BUF);
	unsigned short act[HX_MASKTRIG_WILD_MAX];
	size_t nact;
	long got;
	int ret = 0;

	if (!buf) {
		close(dfd);
		return -ENOMEM;
	}
	path[len] = '/';
	nact = hx_masktrig_enter(w->trig, path, len, act);
	path[len] = '\0';
	if (w->watch) /* what is made in it later (maskwatch.h) */
		hx_maskwatch_add(w->watch, dfd, len ? path : "/");
	while (!ret && !w->truncated &&
	       (got = syscall(SYS_getdents64, dfd, buf, BUF)) > 0) {
		for (long off = 0; !ret && off < got;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			size_t n = strlen(de->d_name);

			off += de->d_reclen;
			if (!strcmp(de->d_name, ".") ||
			    !strcmp(de->d_name, ".."))
				continue;
			if (++w->seen > w->max) {
				w->truncated = true;
				break;
			}
			/* Past PATH_MAX no mask can be bound, but the agent
			 * reaches it by relative names (a cwd, a dirfd): an
			 * earlier session's agent moved the user's config/.env
			 * there by short renames, and this one's static program
			 * read it. The walk stops short: every open decided. */
			if (len + 1 + n >= PATH_MAX) {
				w->truncated = true;
				break;
			}
			path[len] = '/';
			memcpy(path + len + 1, de->d_name, n + 1);
			ret = walk_entry(
			    w, dfd, de->d_name, de->d_type,
			    hx_masktrig_may_deny(w->trig, act, nact, path, len),
			    path, len + 1 + n, dev);
		}
	}
	path[len] = '\0';
	free(buf);
	close(dfd);
	return ret;
}

static int make_covers(struct hx_masks *m, const char *mask_dir)
{
	int fd;

	if (m->covers_made)
		return 0;
	m->covers_made = true;
	if ((size_t)snprintf(m->file, sizeof(m->file), "%s/mask-file",
			     mask_dir) >= sizeof(m->file) ||
	    (size_t)snprintf(m->dir, sizeof(m->dir), "%s/mask-dir", mask_dir) >=
		sizeof(m->dir) ||
	    (size_t)snprintf(m->stage, sizeof(m->stage), "%s/mask-fuse",
			     mask_dir) >= sizeof(m->stage))
		return -ENAMETOOLONG;
	fd = open(m->file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	close(fd);
	if (mkdir(m->dir, 0) || mkdir(m->stage, 0700))
		return -errno;
	return 0;
}

int hx_masks_find(const struct hx_policy *p, const char *const *roots,
		  size_t nroots, const char *mask_dir, size_t max_entries,
		  struct hx_maskwatch *watch, struct hx_masks **out,
		  bool *truncated)
{
	struct hx_masks *m = calloc(1, sizeof(*m));
	struct walk w = {.p = p, .m = m, .watch = watch, .max = max_entries};
	char path[PATH_MAX];
	int ret = 0;

	*out = NULL;
	*truncated = false;
	if (!m)
		return -ENOMEM;
	if ((ret = hx_masktrig_build(p, &w.trig))) {
		free(m);
		return ret;
	}
	for (size_t i = 0; !ret && i < nroots && !w.truncated; i++) {
		struct stat st;
		int fd;

		if (!roots[i] || strlen(roots[i]) >= sizeof(path))
			continue;
		fd = open(roots[i],
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st)) {
			close(fd);
			continue;
		}
		snprintf(path, sizeof(path), "%s", roots[i]);
		/* "/" walks as "" + "/name". */
		w.root_len = strcmp(path, "/") ? strlen(path) : 0;
		ret = walk_dir(&w, fd, path, w.root_len, st.st_dev);
	}
	hx_masktrig_free(w.trig);
	if (!ret && (m->n || watch)) /* a watch may need the stage */
		ret = make_covers(m, mask_dir);
	if (ret) {
		hx_masks_free(m);
		return ret;
	}
	*truncated = w.truncated;
	*out = m;
	return 0;
}

int hx_masks_add(struct hx_masks **mp, const char *const *paths, size_t n,
		 const char *skip, const char *mask_dir)
{
	struct hx_masks *m = *mp;
	struct stat st;
	size_t had = m ? m->n : 0;
	int r = 0;

	if (!n)
		return 0;
	if (!m && !(m = *mp = calloc(1, sizeof(*m))))
		return -ENOMEM;
	for (size_t i = 0; !r && i < n; i++) {
		bool dup = false;

		if (skip && hx_ll_within(skip, paths[i]))
			continue;
		if (lstat(paths[i], &st) || S_ISLNK(st.st_mode))
			continue;
		for (size_t k = 0; k < m->n && !dup; k++)
			dup = !strcmp(m->paths[k], paths[i]);
		if (!dup)
			r = add(m, paths[i], S_ISDIR(st.st_mode));
	}
	if (!r && !had && m->n)
		r = make_covers(m, mask_dir);
	return r;
}

static atomic_bool dirs_noted;

void hx_masks_note_dirs(const struct hx_masks *m, const struct hx_policy *p)
{
	char in[PATH_MAX + 2];

	for (size_t i = 0; m && i < m->n && !atomic_load(&dirs_noted); i++)
		if (m->is_dir[i] &&
		    (size_t)snprintf(in, sizeof(in), "%s/x", m->paths[i]) <
			sizeof(in) &&
		    readable(p, in))
			atomic_store(&dirs_noted, true);
}

void hx_masks_note_dir(void)
{
	atomic_store(&dirs_noted, true);
}

bool hx_masks_dir_noted(void)
{
	return atomic_load_explicit(&dirs_noted, memory_order_relaxed);
}

size_t hx_masks_count(const struct hx_masks *m)
{
	return m ? m->n : 0;
}

const char *hx_masks_path(const struct hx_masks *m, size_t i)
{
	return m && i < m->n ? m->paths[i] : NULL;
}

bool hx_masks_is_dir(const struct hx_masks *m, size_t i)
{
	return m && i < m->n && m->is_dir[i];
}

/* Whether path lies beneath a directory masked before mask i. */
static bool beneath_earlier(const struct hx_masks *m, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (m->is_dir[k] && strcmp(m->paths[k], m->paths[i]) &&
		    hx_ll_within(m->paths[i], m->paths[k]))
			return true;
	return false;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), e = 0;
	size_t n = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n)
		e = -errno;
	close(fd);
	return e;
}

/* An ordinary user's own user namespace, in which it is itself: its uid
 * and gid map to themselves, so files and processes keep their owners. */
static int own_userns(void)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int e;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return -errno;
	/* harness-exec is non-dumpable, and so were we: /proc/self would
	 * be root's and its maps unwritable. The exec sets it again. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return -errno;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if ((e = write_file("/proc/self/uid_map", map)))
		return e;
	if ((e = write_file("/proc/self/setgroups", "deny")))
		return e;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	return write_file("/proc/self/gid_map", map);
}

/* Set in the agent's first process once it has its namespace. */
static bool in_private_ns;

int hx_masks_private_ns(void)
{
	int e;

	if (in_private_ns)
		return 0;
	e = geteuid() == 0 ? (unshare(CLONE_NEWNS) ? -errno : 0) : own_userns();
	if (e)
		return e;
	/* Ours alone: nothing propagates back to the user's mounts. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	in_private_ns = true;
	return 0;
}

bool hx_masks_in_private_ns(void)
{
	return in_private_ns;
}

/* The covers by fd, taken before any mount: a mask over a directory
 * above them (the session's own, harness:protect) must not hide them
 * from the masks that follow. */
static int open_covers(const struct hx_masks *m, char file[32], char dir[32])
{
	int f = open(m->file, O_PATH | O_CLOEXEC),
	    d = open(m->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (f < 0 || d < 0) {
		int e = -errno;

		if (f >= 0)
			close(f);
		if (d >= 0)
			close(d);
		return e;
	}
	snprintf(file, 32, "/proc/self/fd/%d", f);
	snprintf(dir, 32, "/proc/self/fd/%d", d);
	return 0;
}

/* A detached copy of src (a FUSE node or an empty cover), its flags set
 * before it is seen anywhere: read-only, nosuid, nodev, and noexec for
 * a cover. *st: what it shows. Returns its fd, or -errno. */
static int cover_tree(const char *src, bool noexec, struct stat *st)
{
	struct mount_attr a = {
	    .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			MOUNT_ATTR_NODEV | (noexec ? MOUNT_ATTR_NOEXEC : 0)};
	int t = open_tree(AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);

	if (t < 0)
		return -errno;
	if (mount_setattr(t, "", AT_EMPTY_PATH, &a, sizeof(a)) ||
	    fstat(t, st)) {
		int e = -errno;

		close(t);
		return e;
	}
	return t;
}

/* The tree that covers what fd (mask i's name, now) is: its node of the
 * FUSE root (fd root), which refuses an exec itself, or an empty cover
 * of its kind, noexec too; the empty one too where the file's kind
 * changed since the walk (a directory renamed over a file: a node of
 * the other kind would not bind, and the start failed). */
static int pick_tree(const struct hx_masks *m, size_t i, int fd, int root,
		     const char *const covers[2], bool *fuse, struct stat *st)
{
	char node[64];
	bool dir;
	int t = -1;

	if (fstat(fd, st))
		return -errno;
	dir = S_ISDIR(st->st_mode);
	if (root >= 0 && dir == m->is_dir[i]) {
		snprintf(node, sizeof(node), "/proc/self/fd/%d/%zu", root, i);
		t = cover_tree(node, false, st);
	}
	*fuse = t >= 0;
	return t >= 0 ? t : cover_tree(covers[dir], true, st);
}

/* Before Linux 5.12 (no mount_setattr): bound through fd, then made
 * read-only by the name, which a file renamed over it since names. */
static int cover_legacy(const struct hx_masks *m, size_t i, int fd, int root,
			const char *const covers[2], bool dir, bool *fuse)
{
	unsigned long ro =
	    MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV;
	char node[64], at[32];

	snprintf(at, sizeof(at), "/proc/self/fd/%d", fd);
	snprintf(node, sizeof(node), "/proc/self/fd/%d/%zu", root, i);
	*fuse = root >= 0 && dir == m->is_dir[i] &&
		!mount(node, at, NULL, MS_BIND, NULL);
	if ((!*fuse && mount(covers[dir], at, NULL, MS_BIND, NULL)) ||
	    mount(NULL, m->paths[i], NULL, *fuse ? ro : ro | MS_NOEXEC, NULL))
		return -errno;
	return 0;
}

/* One try of mask i: a tree attached on the dentry its name has now
 * (an O_NOFOLLOW fd: a symlink is covered itself). 1: the name was
 * renamed over meanwhile (a process outside the session: the user's
 * editor, a git pull), the new file not covered: try again; 0, or
 * -errno (-ENOENT: gone). */
static int cover_once(const struct hx_masks *m, size_t i, int root,
		      const char *const covers[2], bool *fuse)
{
	struct stat want, now;
	int t, e = 0, fd = open(m->paths[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	t = pick_tree(m, i, fd, root, covers, fuse, &want);
	if (t == -ENOSYS) {
		e = cover_legacy(m, i, fd, root, covers, S_ISDIR(want.st_mode),
				 fuse);
		close(fd);
		return e;
	}
	if (t < 0)
		e = t;
	else if (move_mount(t, "", fd, "",
			    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH))
		e = errno == ENOENT ? 1 : -errno; /* unlinked since open */
	if (t >= 0)
		close(t);
	close(fd);
	/* Renamed over after the attach: the kernel dropped the mask with
	 * the old file, and the name shows the new one. */
	if (!e && lstat(m->paths[i], &now))
		e = -errno;
	else if (!e && (now.st_dev != want.st_dev || now.st_ino != want.st_ino))
		e = 1;
	return e;
}

/* Mask i over its path, read-only, nosuid, nodev, set on the detached
 * tree, never by the name after the attach: a file renamed over the
 * name between the two was no mount point, and the start failed
 * (EINVAL). A name renamed over while it is covered is covered again,
 * its new file; past the tries the watch on its directory sees the next
 * rename (maskwatch.h). covers: the empty file and directory. -ENOENT:
 * gone since the walk. */
static int cover(const struct hx_masks *m, size_t i, int root,
		 const char *const covers[2], bool *fuse_out)
{
	int e = 1;

	for (int tries = 0; e == 1 && tries < 64; tries++)
		e = cover_once(m, i, root, covers, fuse_out);
	return e == 1 ? 0 : e;
}

/* bound told of node i of the FUSE root: the node itself, whatever its
 * path shows now (the bind's dentry dropped for a file renamed over it
 * by a process outside, and the grant on that file). */
static int bound_node(int root, size_t i, hx_masks_bound_fn bound, void *arg)
{
	char name[32];
	int fd, e;

	snprintf(name, sizeof(name), "%zu", i);
	if ((fd = openat(root, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	e = bound(fd, arg);
	close(fd);
	return e;
}

int hx_masks_apply(const struct hx_masks *m, int fuse_chan, size_t kept,
		   hx_masks_bound_fn bound, void *arg)
{
	char file[32], dir[32];
	const char *const covers[2] = {file, dir};
	int e, root = -1;

	if (!m || (!m->n && fuse_chan < 0))
		return 0;
	if ((e = hx_masks_private_ns()) || (e = open_covers(m, file, dir)))
		return e;
	/* Before any bind: a mask over the session's directory would hide
	 * the stage; any failure, the empty covers. */
	if (fuse_chan >= 0 &&
	    (root = hx_maskfs_attach(fuse_chan, m->stage)) >= 0)
		hx_maskfs_prefetch(root);
	for (size_t i = 0; i < m->n; i++) {
		bool fuse = false;

		/* Its look-up would be a refusal of the child's. */
		if (beneath_earlier(m, i))
			continue;
		e = cover(m, i, root, covers, &fuse);
		if (e && e != -ENOENT) /* -ENOENT: gone since the walk */
			return e;
		if (!e && fuse && !m->is_dir[i] && bound &&
		    (e = bound_node(root, i, bound, arg)))
			return e;
	}
	/* The nodes kept for files not there yet: granted now (no rule can
	 * be added later), bound when one appears (maskwatch.h). */
	for (size_t i = m->n; root >= 0 && bound && i < m->n + kept; i++)
		if ((e = bound_node(root, i, bound, arg)))
			return e;
	/* The root stays mounted on the stage, in the session's directory
	 * the agent cannot reach: the masks bound later bind from it. */
	if (root >= 0)
		close(root);
	return 0;
}

void hx_masks_free(struct hx_masks *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->paths[i]);
	free(m->paths);
	free(m->is_dir);
	free(m);
}

struct hx_masks_job {
	pthread_t thread;
	const struct hx_policy *p;
	const char *roots[4];
	size_t nroots, max;
	struct hx_maskwatch *watch;
	char mask_dir[PATH_MAX];
	struct hx_masks *m;
	bool truncated;
	int ret;
};

static void *find_thread(void *arg)
{
	struct hx_masks_job *j = arg;

	j->ret = hx_masks_find(j->p, j->roots, j->nroots, j->mask_dir, j->max,
			       j->watch, &j->m, &j->truncated);
	return NULL;
}

int hx_masks_start(const struct hx_policy *p, const char *const *roots,
		   size_t nroots, const char *mask_dir, size_t max_entries,
		   struct hx_maskwatch *watch, struct hx_masks_job **out)
{
	struct hx_masks_job *j = calloc(1, sizeof(*j));
	sigset_t all, old;
	int e;

	*out = NULL;
	if (!j)
		return -ENOMEM;
	if (nroots > 4 || strlen(mask_dir) >= sizeof(j->mask_dir)) {
		free(j);
		return -EINVAL;
	}
	j->p = p;
	memcpy(j->roots, roots, nroots * sizeof(*roots));
	j->nroots = nroots;
	j->max = max_entries;
	j->watch = watch;
	strcpy(j->mask_dir, mask_dir);
	/* No signal of the loop's (signalfd) may land on this thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&j->thread, NULL, find_thread, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		free(j);
		return -e;
	}
	*out = j;
	return 0;
}

int hx_masks_join(struct hx_masks_job *j, struct hx_masks **out,
		  bool *truncated)
{
	int ret;

	*out = NULL;
	*truncated = false;
	if (!j)
		return 0;
	pthread_join(j->thread, NULL);
	ret = j->ret;
	*out = j->m;
	*truncated = j->truncated;
	free(j);
	return ret;
}
