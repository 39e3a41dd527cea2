/* Session ids, directories and cleanup; see session.h. */
#define _GNU_SOURCE
#include "supervisor/session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/glob.h"
#include "common/path.h"

/* In each session's tmp_root, flocked while the session lives. */
#define LOCK_NAME "harness-session.lock"

bool hx_session_name_valid(const char *name)
{
	size_t n = strlen(name), i;

	if (n == 0 || n > HX_SESSION_ID_MAX || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return false;
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return false;
	}
	return true;
}

int hx_session_new_id(char *buf, size_t size)
{
	uint8_t rnd[3];
	struct tm tm;
	time_t now = time(NULL);
	char stamp[20];
	ssize_t r;

	do
		r = getrandom(rnd, sizeof(rnd), 0);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof(rnd))
		return -EIO;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if ((size_t)snprintf(buf, size, "%s-%02x%02x%02x", stamp, rnd[0],
			     rnd[1], rnd[2]) >= size)
		return -ENAMETOOLONG;
	return 0;
}

#define FMT(buf, ...)                                                          \
	((size_t)snprintf(buf, sizeof(buf), __VA_ARGS__) >= sizeof(buf))

static int add_protect(struct hx_session *s, const char *path,
		       const char *suffix)
{
	char *b = s->protect_buf[s->nbuf];
	size_t n;

	if (s->nbuf == HX_SESSION_NPROTECT)
		return -ENOSPC;
	if (hx_glob_escape(path, b, PATH_MAX))
		return -ENAMETOOLONG;
	n = strlen(b);
	if (n + strlen(suffix) + 1 > sizeof(s->protect_buf[0]))
		return -ENAMETOOLONG;
	strcpy(b + n, suffix);
	s->nbuf++;
	s->protect[s->nprotect++] = b;
	return 0;
}

/* One glob of other sessions' tmp_roots: the first len bytes of the id,
 * then rest, beneath the run dir (whose name needs no escape). */
static int add_other(struct hx_session *s, size_t len, const char *rest)
{
	char *b = s->others_buf[s->nothers], g[sizeof(s->others_buf[0])];

	if (FMT(g, "%s/%.*s%s/**", s->run_dir, (int)len, s->id, rest))
		return -ENAMETOOLONG;
	memcpy(b, g, sizeof(g));
	s->nothers++;
	s->protect[s->nprotect++] = b;
	return 0;
}

/* Every other session's tmp_root (the run dir's entries not named as
 * this id), in globs: the glob language has no "not this word", so one
 * for each place where a name first differs from the id, one for each
 * proper prefix of it and one for a longer name. Another session's
 * agent read this one's TMPDIR, and in audit mode wrote it (twenty-sixth
 * attack review, part c). A session started later is unreadable by
 * Landlock as well: its entry is new in a directory Landlock grants
 * entry by entry (for the sockets' globs). */
static int protect_others(struct hx_session *s)
{
	size_t n = strlen(s->id);
	char rest[8];
	int r = 0;

	for (size_t i = 0; i < n && !r; i++) {
		snprintf(rest, sizeof(rest), "[!%c]*", s->id[i]);
		r = add_other(s, i, rest);
		if (i && !r)
			r = add_other(s, i, "");
	}
	return r ? r : add_other(s, n, "?*");
}

/* in made absolute and written as judged paths are (hx_path_normalize):
 * the protections are globs of these paths, and "logs/../a.jsonl" or
 * a $HOME of "/home/u/." named none that is ever judged (the state
 * directory, its redaction key among it, was readable). */
static int absolute(const char *in, char *out, size_t size)
{
	char cwd[PATH_MAX], head[PATH_MAX], real[PATH_MAX];
	size_t cut;
	long n;

	if (in[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return -errno;
	n = hx_path_normalize(in[0] == '/' ? NULL : cwd, in, out, size);
	if (n < 0)
		return (int)n;
	/* And with the symlinks of its longest existing head resolved, as
	 * judged paths are: --audit-log link/a.jsonl, link a directory in
	 * the project, left the log readable by a static program. */
	for (cut = strlen(out); cut > 1; cut--) {
		if (out[cut] && out[cut] != '/')
			continue;
		memcpy(head, out, cut);
		head[cut] = '\0';
		if (!realpath(head, real))
			continue;
		if ((size_t)snprintf(head, sizeof(head), "%s%s",
				     strcmp(real, "/") ? real : "",
				     out + cut) >= size)
			return -ENAMETOOLONG;
		strcpy(out, head);
		break;
	}
	return 0;
}

int hx_session_state_dir(char *out, size_t size)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char raw[PATH_MAX];
	int n;

	/* XDG says relative values are invalid and must be ignored. */
	if (xdg && xdg[0] == '/') {
		n = snprintf(raw, sizeof(raw), "%s/harness", xdg);
	} else {
		if (!home || home[0] != '/')
			home = "/";
		n = snprintf(raw, sizeof(raw), "%s/.local/state/harness", home);
	}
	if (n < 0 || (size_t)n >= sizeof(raw))
		return -ENAMETOOLONG;
	return absolute(raw, out, size);
}

int hx_session_init(struct hx_session *s, const char *name,
		    const char *audit_log, const char *policy_path)
{
	int r;

	memset(s, 0, sizeof(*s));
	s->tmp_lock = s->run_fd = -1;
	if (name) {
		if (!hx_session_name_valid(name))
			return -EINVAL;
		snprintf(s->id, sizeof(s->id), "%s", name);
	} else {
		r = hx_session_new_id(s->id, sizeof(s->id));
		if (r)
			return r;
	}
	if ((r = hx_session_state_dir(s->state_dir, sizeof(s->state_dir))))
		return r;
	if (FMT(s->dir, "%s/sessions/%s", s->state_dir, s->id))
		return -ENAMETOOLONG;
	if (audit_log) {
		r = absolute(audit_log, s->audit_path, sizeof(s->audit_path));
		if (r)
			return r;
		if ((r = hx_session_note_file(s, s->audit_path)))
			return r;
	} else if (FMT(s->audit_path, "%s/audit.jsonl", s->dir)) {
		return -ENAMETOOLONG;
	}
	if (FMT(s->run_dir, "/tmp/harness-%u", (unsigned)getuid()) ||
	    FMT(s->tmp_root, "%s/%s", s->run_dir, s->id) ||
	    FMT(s->tmpdir, "%s/tmp", s->tmp_root))
		return -ENAMETOOLONG;
	/* sun_path is 108 bytes; a deep $HOME does not fit. */
	if (FMT(s->sock_path, "%s/sock", s->dir) &&
	    FMT(s->sock_path, "%s/%s.sock", s->run_dir, s->id))
		return -ENAMETOOLONG;
	if (FMT(s->ask_path, "%s/ask", s->dir) &&
	    FMT(s->ask_path, "%s/%s.ask", s->run_dir, s->id))
		return -ENAMETOOLONG;
	if ((r = add_protect(s, s->dir, "/**")) ||
	    (r = add_protect(s, s->state_dir, "/**")) ||
	    (r = add_protect(s, s->audit_path, "")) ||
	    (r = add_protect(s, s->sock_path, "")))
		return r;
	/* Beside the socket in the run dir when the session dir's path is
	 * too long for it (otherwise under the session dir's glob). */
	if (strncmp(s->ask_path, s->dir, strlen(s->dir)) &&
	    (r = add_protect(s, s->ask_path, "")))
		return r;
	/* Every session's sockets that fell back to the run dir (the shim's,
	 * the questions', a worktree's control): another session's agent
	 * that reached them, in audit mode, approved this session's
	 * questions and spoke into its log (twenty-sixth attack review). */
	if ((r = add_protect(s, s->run_dir, "/*.sock")) ||
	    (r = add_protect(s, s->run_dir, "/*.ask")) ||
	    (r = add_protect(s, s->run_dir, "/*.control")) ||
	    /* and their TMPDIRs' locks: one replaced by an unheld file had
	     * the next start remove that live session's TMPDIR */
	    (r = add_protect(s, s->run_dir, "/*/" LOCK_NAME)) ||
	    (r = protect_others(s)))
		return r;
	return policy_path ? hx_session_protect(s, policy_path) : 0;
}

int hx_session_sock_in_run_dir(struct hx_session *s)
{
	if (FMT(s->sock_path, "%s/%s.sock", s->run_dir, s->id))
		return -ENAMETOOLONG;
	return add_protect(s, s->sock_path, "");
}

int hx_session_note_file(struct hx_session *s, const char *path)
{
	if (s->nfiles == HX_SESSION_NFILES)
		return -ENOSPC;
	snprintf(s->files[s->nfiles++], PATH_MAX, "%s", path);
	return 0;
}

int hx_session_protect(struct hx_session *s, const char *path)
{
	char abs[PATH_MAX];
	int r = absolute(path, abs, sizeof(abs));

	if (!r)
		r = add_protect(s, abs, "");
	return r ? r : hx_session_note_file(s, abs);
}

/* A new file renamed into place: the directory's change is what the
 * other sessions' pipelines look for before they read it again. */
int hx_session_register(struct hx_session *s)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 8], live[PATH_MAX];
	int e = 0;
	FILE *f;

	if (FMT(dir, "%s/" HX_SESSION_LIVE, s->state_dir) ||
	    FMT(live, "%s/%s", dir, s->id) || FMT(tmp, "%s/.%s", dir, s->id))
		return -ENAMETOOLONG;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (!(f = fopen(tmp, "we")))
		return -errno;
	for (size_t i = 0; i < s->nfiles; i++)
		fwrite(s->files[i], 1, strlen(s->files[i]) + 1, f);
	if (fclose(f) || rename(tmp, live))
		e = -errno;
	if (e)
		unlink(tmp);
	s->registered = !e;
	return e;
}

/* mkdir -p with 0700 for what it creates. */
static int mkdirs(const char *path)
{
	char buf[PATH_MAX];
	size_t i, n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		buf[i] = path[i];
	}
	return 0;
}

/* /tmp is shared: the run dir must be a real directory of ours that
 * nobody else can enter, or another user could pre-create it. Held open
 * (O_NOFOLLOW): what is made and removed in it is named from the fd,
 * so a run dir swapped for a symlink afterwards is not followed. One of
 * ours whose mode is not 0700 is made so again, through an O_PATH fd
 * held on it: an agent of ours in audit mode chmod'ed it 0755 (or 0),
 * and every later start of the user refused to run (EPERM). */
static int open_private_dir(const char *path)
{
	struct stat st;
	char proc[64];
	int pfd, fd;

	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	pfd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return errno == ELOOP || errno == ENOTDIR ? -EPERM : -errno;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	if (fstat(pfd, &st) || st.st_uid != getuid() ||
	    ((st.st_mode & 07777) != 0700 && chmod(proc, 0700))) {
		close(pfd);
		return -EPERM;
	}
	fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(pfd);
	return fd < 0 ? -errno : fd;
}

/* A session's tmp_root no harness-exec holds: killed, its cleanup never
 * ran. Its processes are gone with it (the reaper, or the exec gate's
 * kill on exit); an agent of another session in audit mode may write
 * there still, which the removal's walk is proof against (treewalk.h).
 * A tmp_root with no lock file is an older harness-exec's, maybe
 * alive: left alone. */
static bool stale_dir(int run_fd, const char *name)
{
	char lock[NAME_MAX + sizeof(LOCK_NAME) + 1];
	struct stat st;
	bool stale;
	int fd;

	/* Non-blocking: a FIFO planted at the lock's name (an agent in
	 * audit mode, or one whose policy writes /tmp) held every later
	 * start of the user in this open for good. Only a regular file
	 * of ours is a lock. */
	snprintf(lock, sizeof(lock), "%s/%s", name, LOCK_NAME);
	fd = openat(run_fd, lock,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	stale = !fstat(fd, &st) && S_ISREG(st.st_mode) &&
		st.st_uid == geteuid() && !flock(fd, LOCK_EX | LOCK_NB);
	close(fd);
	return stale;
}

/* A killed session's entry of the live files (hx_session_register). */
static void unregister(const struct hx_session *s, const char *id)
{
	char live[PATH_MAX + 80];

	snprintf(live, sizeof(live), "%s/" HX_SESSION_LIVE "/%s", s->state_dir,
		 id);
	unlink(live);
}

/* Removes what killed sessions left in the run dir: their TMPDIRs and
 * the sockets beside them (a <id>.sock or <id>.ask whose <id> directory
 * is gone: a live session's lasts from before its socket to after).
 * Dot names are skipped: a tmp_root being made (make_tmp_root). */
static void sweep_run_dir(const struct hx_session *s)
{
	char id[NAME_MAX + 1];
	struct dirent *d;
	struct stat st;
	int fd = dup(s->run_fd);
	DIR *dir = fd < 0 ? NULL : fdopendir(fd);
	char *dot;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' || !strcmp(d->d_name, s->id))
			continue;
		if (d->d_type == DT_DIR) {
			if (stale_dir(s->run_fd, d->d_name)) {
				hx_rmtree_at(s->run_fd, d->d_name);
				unregister(s, d->d_name);
			}
			continue;
		}
		snprintf(id, sizeof(id), "%s", d->d_name);
		dot = strrchr(id, '.');
		if (d->d_type != DT_SOCK || !dot ||
		    (strcmp(dot, ".sock") && strcmp(dot, ".ask")))
			continue;
		*dot = '\0';
		if (fstatat(s->run_fd, id, &st, AT_SYMLINK_NOFOLLOW) &&
		    errno == ENOENT)
			unlinkat(s->run_fd, d->d_name, 0);
	}
	closedir(dir);
}

/* tmp_root, with its lock file held: made under a dot name, which the
 * sweep of another session's start passes by, then renamed into place. */
static int make_tmp_root(struct hx_session *s)
{
	char made[NAME_MAX + 1];
	int e = 0, fd;

	if (FMT(made, ".%s.new", s->id))
		return -ENAMETOOLONG;
	if (mkdirat(s->run_fd, made, 0700))
		return -errno;
	fd = openat(s->run_fd, made,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		s->tmp_lock =
		    openat(fd, LOCK_NAME,
			   O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || s->tmp_lock < 0 || flock(s->tmp_lock, LOCK_EX) ||
	    renameat2(s->run_fd, made, s->run_fd, s->id, RENAME_NOREPLACE))
		e = -errno;
	if (fd >= 0)
		close(fd);
	if (e)
		hx_rmtree_at(s->run_fd, made);
	return e;
}

int hx_session_create(struct hx_session *s)
{
	int r;

	char sessions[PATH_MAX + 16];

	r = mkdirs(s->state_dir);
	if (r)
		return r;
	snprintf(sessions, sizeof(sessions), "%s/sessions", s->state_dir);
	if (mkdir(sessions, 0700) && errno != EEXIST)
		return -errno;
	if (mkdir(s->dir, 0700))
		return -errno;
	/* An --audit-log elsewhere: found by its session too (harness-audit
	 * sessions, harness-audit verify ID). */
	snprintf(sessions, sizeof(sessions), "%s/audit.jsonl", s->dir);
	if (strcmp(sessions, s->audit_path) && symlink(s->audit_path, sessions))
		return -errno;
	s->run_fd = open_private_dir(s->run_dir);
	if (s->run_fd < 0)
		return s->run_fd;
	sweep_run_dir(s);
	if ((r = make_tmp_root(s)))
		return r;
	s->created_tmp = true;
	if (mkdir(s->tmpdir, 0700))
		return -errno;
	return 0;
}

/* The TMPDIR, from the run dir's fd: most agents leave it empty, so
 * two empty directories and the lock, no walk. The lock goes last: a
 * tree that could not all be removed keeps it, unheld, for the next
 * start's sweep (without it the tmp_root is an older harness-exec's,
 * left alone for good). */
static int remove_tmp_root(struct hx_session *s)
{
	int fd = openat(s->run_fd, s->id,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int e = 0;

	if (fd < 0)
		return -errno;
	if (unlinkat(fd, "tmp", AT_REMOVEDIR) && errno != ENOENT)
		e = hx_rmtree_at(fd, "tmp");
	if (!e)
		unlinkat(fd, LOCK_NAME, 0);
	close(fd);
	if (!e && !unlinkat(s->run_fd, s->id, AT_REMOVEDIR))
		return 0;
	return e ? e : hx_rmtree_at(s->run_fd, s->id);
}

int hx_session_cleanup(struct hx_session *s)
{
	int r = 0, e;

	if (s->registered) {
		unregister(s, s->id);
		s->registered = false;
	}
	if (s->created_tmp) {
		e = remove_tmp_root(s);
		if (e && e != -ENOENT)
			r = e;
		s->created_tmp = false;
	}
	if (s->sock_path[0] && unlink(s->sock_path) && errno != ENOENT && !r)
		r = -errno;
	if (s->tmp_lock >= 0)
		close(s->tmp_lock);
	s->tmp_lock = -1;
	if (s->run_fd >= 0)
		close(s->run_fd);
	s->run_fd = -1;
	return r;
}

int hx_session_checkpoint_ref(const char *session, unsigned n, char *buf,
			      size_t size)
{
	if ((size_t)snprintf(buf, size, "refs/harness/%s/checkpoints/%u",
			     session, n) >= size)
		return -ENAMETOOLONG;
	return 0;
}
