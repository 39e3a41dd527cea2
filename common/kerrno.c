/* The kernel's answer to a denied call; see kerrno.h. The order of the
 * checks follows fs/namei.c, fs/open.c and fs/attr.c (6.x). */
#define _GNU_SOURCE
#include "common/kerrno.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sys.h"

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE	 (1 << 1)
#endif

/* A path split as the kernel's last-component lookup sees it. */
struct split {
	char parent[PATH_MAX]; /* "." when the path has no slash */
	const char *last;      /* into the path */
	size_t lastlen;
	bool slash; /* written with a trailing "/" */
};

static int split_path(const char *path, struct split *s)
{
	size_t n = strlen(path), end, start;

	if (!n)
		return -ENOENT;
	if (n >= sizeof(s->parent))
		return -ENAMETOOLONG;
	end = n;
	while (end > 1 && path[end - 1] == '/')
		end--;
	s->slash = end < n;
	start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	s->last = path + start;
	s->lastlen = end - start;
	if (!start) {
		strcpy(s->parent, ".");
	} else {
		size_t p = start;

		while (p > 1 && path[p - 1] == '/')
			p--;
		memcpy(s->parent, path, p);
		s->parent[p] = '\0';
	}
	return 0;
}

static bool last_is(const struct split *s, const char *name)
{
	return s->lastlen == strlen(name) && !memcmp(s->last, name, s->lastlen);
}

static int kstat(int dirfd, const char *path, bool follow, struct stat *st)
{
	return (int)hx_sys4(SYS_newfstatat, dirfd, path, st,
			    follow ? 0 : AT_SYMLINK_NOFOLLOW);
}

/* Write and search permission as the caller has them (AT_EACCESS: the
 * effective ids and capabilities, not access(2)'s real ones). */
static int may(int dirfd, const char *path, int mode)
{
	return (int)hx_sys4(SYS_faccessat2, dirfd, path, mode, AT_EACCESS);
}

/* The parent must be a directory the caller can search. */
static int lookup_parent(int dirfd, const struct split *s)
{
	struct stat st;
	int e = kstat(dirfd, s->parent, true, &st);

	if (e)
		return e;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int may_parent(int dirfd, const struct split *s)
{
	return may(dirfd, s->parent, W_OK | X_OK);
}

static uint64_t mnt_id(int dirfd, const char *path)
{
	struct statx stx;

	memset(&stx, 0, sizeof(stx));
	if (hx_sys5(SYS_statx, dirfd, path, 0, STATX_MNT_ID, &stx) ||
	    !(stx.stx_mask & STATX_MNT_ID))
		return 0;
	return stx.stx_mnt_id;
}

/* Whether a directory has entries besides "." and "..". */
static bool dir_busy(int dirfd, const char *path)
{
	char buf[512];
	long fd = hx_sys4(SYS_openat, dirfd, path,
			  O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	long n;
	bool busy = false;

	if (fd < 0)
		return false;
	while (!busy && (n = hx_sys3(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			unsigned short reclen;
			const char *name = buf + off + 19;

			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			if (strcmp(name, ".") && strcmp(name, ".."))
				busy = true;
			off += reclen;
		}
	hx_close((int)fd);
	return busy;
}

static int k_open(const struct hx_kargs *k, const struct split *s)
{
	unsigned f = k->flags, acc = f & O_ACCMODE;
	bool creat = f & O_CREAT, excl = creat && (f & O_EXCL);
	bool tmp = (f & O_TMPFILE) == O_TMPFILE;
	bool wr = acc != O_RDONLY || (f & O_TRUNC);
	struct stat st;
	int e;

	/* build_open_flags() refuses these before any lookup. */
	if ((creat && (f & O_DIRECTORY)) || (tmp && acc == O_RDONLY))
		return -EINVAL;
	if (creat || tmp) {
		if ((e = lookup_parent(k->dirfd, s)))
			return e;
		if (creat && s->slash)
			return -EISDIR;
	}
	e = kstat(k->dirfd, k->path, !(excl || (f & O_NOFOLLOW)), &st);
	if (e == -ENOENT && creat)
		return may_parent(k->dirfd, s);
	if (e)
		return e;
	if (tmp)
		return S_ISDIR(st.st_mode) ? may(k->dirfd, k->path, W_OK | X_OK)
					   : -ENOTDIR;
	if (excl)
		return -EEXIST;
	if (S_ISLNK(st.st_mode))
		return -ELOOP; /* O_NOFOLLOW met a link */
	if (S_ISDIR(st.st_mode) && (creat || wr))
		return -EISDIR;
	if ((f & O_DIRECTORY) && !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return may(k->dirfd, k->path,
		   (acc != O_WRONLY ? R_OK : 0) | (wr ? W_OK : 0));
}

/* mkdir, symlink and link's new name: filename_create(). */
static int k_create(int dirfd, const char *path, const struct split *s,
		    bool dir)
{
	struct stat st;
	int e;

	if ((e = lookup_parent(dirfd, s)))
		return e;
	if (last_is(s, ".") || last_is(s, ".."))
		return -EEXIST;
	e = kstat(dirfd, path, false, &st);
	if (!e)
		return -EEXIST;
	if (e != -ENOENT)
		return e;
	if (s->slash && !dir)
		return -ENOENT;
	return 0;
}

static int k_link(const struct hx_kargs *k, const struct split *s)
{
	struct stat old;
	struct split os;
	int e;

	if ((e = kstat(k->dirfd2, k->path2, k->flags & AT_SYMLINK_FOLLOW,
		       &old)))
		return e;
	if ((e = k_create(k->dirfd, k->path, s, false)))
		return e;
	if (split_path(k->path2, &os) == 0 &&
	    mnt_id(k->dirfd2, os.parent) != mnt_id(k->dirfd, s->parent))
		return -EXDEV;
	if ((e = may_parent(k->dirfd, s)))
		return e;
	return S_ISDIR(old.st_mode) ? -EPERM : 0;
}

/* unlink and rmdir: do_unlinkat(), do_rmdir(), may_delete(). */
static int k_remove(const struct hx_kargs *k, const struct split *s, bool dir)
{
	struct stat st;
	int e;

	if ((e = lookup_parent(k->dirfd, s)))
		return e;
	if (last_is(s, "."))
		return dir ? -EINVAL : -EISDIR;
	if (last_is(s, ".."))
		return dir ? -ENOTEMPTY : -EISDIR;
	if ((e = kstat(k->dirfd, k->path, false, &st)))
		return e;
	if (!dir && s->slash)
		return S_ISDIR(st.st_mode) ? -EISDIR : -ENOTDIR;
	if ((e = may_parent(k->dirfd, s)))
		return e;
	if (!dir)
		return S_ISDIR(st.st_mode) ? -EISDIR : 0;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return dir_busy(k->dirfd, k->path) ? -ENOTEMPTY : 0;
}

static int k_rename(const struct hx_kargs *k, const struct split *s)
{
	struct stat old, new;
	struct split ns;
	bool noreplace = k->flags & RENAME_NOREPLACE;
	bool exchange = k->flags & RENAME_EXCHANGE;
	int e, en;

	if ((e = split_path(k->path2, &ns)) ||
	    (e = lookup_parent(k->dirfd, s)) ||
	    (e = lookup_parent(k->dirfd2, &ns)))
		return e;
	if (mnt_id(k->dirfd, s->parent) != mnt_id(k->dirfd2, ns.parent))
		return -EXDEV;
	if (last_is(s, ".") || last_is(s, ".."))
		return -EBUSY;
	if (last_is(&ns, ".") || last_is(&ns, ".."))
		return noreplace ? -EEXIST : -EBUSY;
	if ((e = kstat(k->dirfd, k->path, false, &old)))
		return e;
	en = kstat(k->dirfd2, k->path2, false, &new);
	if (en && en != -ENOENT)
		return en;
	if (noreplace && !en)
		return -EEXIST;
	if (exchange && en)
		return -ENOENT;
	if (!S_ISDIR(old.st_mode) && (s->slash || (!exchange && ns.slash)))
		return -ENOTDIR;
	if ((e = may_parent(k->dirfd, s)) || (e = may_parent(k->dirfd2, &ns)))
		return e;
	if (en || exchange ||
	    (old.st_dev == new.st_dev &&old.st_ino == new.st_ino))
		return 0;
	if (S_ISDIR(old.st_mode) != S_ISDIR(new.st_mode))
		return S_ISDIR(old.st_mode) ? -ENOTDIR : -EISDIR;
	if (S_ISDIR(new.st_mode) && dir_busy(k->dirfd2, k->path2))
		return -ENOTEMPTY;
	return 0;
}

static bool in_group(uint32_t gid)
{
	uint32_t groups[256];
	long n = hx_sys2(SYS_getgroups, 256, groups);

	if ((uint32_t)hx_sys0(SYS_getegid) == gid)
		return true;
	for (long i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/* truncate, chmod, chown: vfs_truncate(), setattr_prepare(). */
static int k_attr(const struct hx_kargs *k)
{
	bool nofollow = k->flags & AT_SYMLINK_NOFOLLOW;
	uint32_t euid = (uint32_t)hx_sys0(SYS_geteuid);
	struct stat st;
	int e;

	if ((e = kstat(k->dirfd, k->path, !nofollow, &st)))
		return e;
	switch (k->call) {
	case HX_KC_TRUNCATE:
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (!S_ISREG(st.st_mode))
			return -EINVAL;
		return may(k->dirfd, k->path, W_OK);
	case HX_KC_CHMOD:
		if (S_ISLNK(st.st_mode))
			return -EOPNOTSUPP;
		return st.st_uid == euid ? 0 : -EPERM;
	default:
		if (k->uid != (uint32_t)-1 &&
		    (st.st_uid != euid || k->uid != st.st_uid))
			return -EPERM;
		if (k->gid != (uint32_t)-1 &&
		    (st.st_uid != euid ||
		     (k->gid != st.st_gid && !in_group(k->gid))))
			return -EPERM;
		return 0;
	}
}

/* unix_find_bsd(): the lookup, write permission, then the type. */
static int k_connect(const struct hx_kargs *k)
{
	struct stat st;
	int e;

	if ((e = kstat(k->dirfd, k->path, true, &st)) ||
	    (e = may(k->dirfd, k->path, W_OK)))
		return e;
	return S_ISSOCK(st.st_mode) ? 0 : -ECONNREFUSED;
}

static int kernel_check(const struct hx_kargs *k)
{
	struct split s;
	int e;

	if (!k->path || (k->call == HX_KC_RENAME && !k->path2) ||
	    (k->call == HX_KC_LINK && !k->path2))
		return -EFAULT;
	if ((e = split_path(k->path, &s)))
		return e;
	switch (k->call) {
	case HX_KC_OPEN:
		return k_open(k, &s);
	case HX_KC_MKDIR:
	case HX_KC_SYMLINK:
		if ((e = k_create(k->dirfd, k->path, &s,
				  k->call == HX_KC_MKDIR)))
			return e;
		return may_parent(k->dirfd, &s);
	case HX_KC_LINK:
		return k_link(k, &s);
	case HX_KC_RMDIR:
	case HX_KC_UNLINK:
		return k_remove(k, &s, k->call == HX_KC_RMDIR);
	case HX_KC_RENAME:
		return k_rename(k, &s);
	case HX_KC_CONNECT:
		return k_connect(k);
	default:
		return k_attr(k);
	}
}

int hx_kerrno(const struct hx_kargs *k)
{
	int e = kernel_check(k);

	/* Every check passed: the policy is what refuses it. */
	return e < 0 && e > -4096 ? -e : EACCES;
}
