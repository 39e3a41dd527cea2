/* Session anchors; see anchor.h. */
#define _GNU_SOURCE
#include "supervisor/anchor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/notice.h"
#include "supervisor/audit.h"
#include "supervisor/session.h"

/* The longest anchor: 20 digits, a space, 64 hex digits, a newline. */
#define ANCHOR_MAX 86

int hx_anchor_reserve(const char *session_dir)
{
	char path[PATH_MAX], line[ANCHOR_MAX];
	int fd, e = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", session_dir,
			     HX_ANCHOR_FILE) >= sizeof(path))
		return -ENAMETOOLONG;
	/* Malformed on purpose: read as no anchor until it is one. */
	memset(line, ' ', sizeof(line));
	memcpy(line, "running", 7);
	line[sizeof(line) - 1] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return -errno;
	if (write(fd, line, sizeof(line)) != (ssize_t)sizeof(line))
		e = errno ? -errno : -ENOSPC;
	if (close(fd) && !e)
		e = -errno;
	if (e)
		unlink(path);
	return e;
}

/* Over the placeholder: fd, or -errno (-ENOENT: none there). */
static int write_in_place(const char *path, const char *line, int n)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW), e = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < n)
		e = -ENOENT; /* not a placeholder of ours: a new file */
	else if (pwrite(fd, line, (size_t)n, 0) != n)
		e = errno ? -errno : -EIO;
	else if (ftruncate(fd, n)) /* shrinks: no new block */
		e = -errno;
	if (e) {
		close(fd);
		return e;
	}
	return fd;
}

int hx_anchor_write(const char *session_dir, uint64_t seq, const char *hex)
{
	char path[PATH_MAX], tmp[PATH_MAX], line[96];
	int fd, n, e = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", session_dir,
			     HX_ANCHOR_FILE) >= sizeof(path) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	n = snprintf(line, sizeof(line), "%llu %.64s\n",
		     (unsigned long long)seq, hex);
	if ((fd = write_in_place(path, line, n)) != -ENOENT)
		return fd;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return -errno;
	if (write(fd, line, (size_t)n) != n)
		e = errno ? -errno : -EIO;
	if (!e && rename(tmp, path))
		e = -errno;
	if (e) {
		close(fd);
		unlink(tmp);
		return e;
	}
	return fd;
}

int hx_anchor_read(const char *id, uint64_t *seq, char hex[65])
{
	char state[PATH_MAX], path[PATH_MAX], line[96], *end;
	int fd, r;
	ssize_t n;

	if (!hx_session_name_valid(id))
		return -EINVAL;
	if ((r = hx_session_state_dir(state, sizeof(state))))
		return r;
	if ((size_t)snprintf(path, sizeof(path), "%s/sessions/%s/%s", state, id,
			     HX_ANCHOR_FILE) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	line[n] = '\0';
	*seq = strtoull(line, &end, 10);
	if (end == line || *end != ' ' || strlen(end + 1) != 65 ||
	    strspn(end + 1, "0123456789abcdef") != 64 || end[65] != '\n')
		return -EINVAL;
	memcpy(hex, end + 1, 64);
	hex[64] = '\0';
	return 0;
}

/* One session the log names: its anchor, whether its record was seen,
 * and whether the log is that session's own in the state directory
 * (no later session's agent writes it; harness-audit compact compacts
 * no other). */
struct anchored {
	uint64_t seq;
	char hex[65];
	bool has, seen, own;
};

/* Whether the log (log: its stat) is the session id's own file in the
 * state directory, not a link to an --audit-log elsewhere. */
static bool own_log(const char *id, const struct stat *log)
{
	char state[PATH_MAX], path[PATH_MAX];
	struct stat st;

	return !hx_session_state_dir(state, sizeof(state)) &&
	       (size_t)snprintf(path, sizeof(path),
				"%s/sessions/%s/audit.jsonl", state,
				id) < sizeof(path) &&
	       !lstat(path, &st) && S_ISREG(st.st_mode) &&
	       st.st_dev == log->st_dev && st.st_ino == log->st_ino;
}

static struct anchored *session_of(json_t *tab, const char *id,
				   const struct stat *log)
{
	json_t *v = json_object_get(tab, id);
	struct anchored *a;

	if (v)
		return json_integer_value(v)
			   ? (struct anchored *)(intptr_t)json_integer_value(v)
			   : NULL;
	a = calloc(1, sizeof(*a));
	if (a && hx_anchor_read(id, &a->seq, a->hex) == 0) {
		a->has = true;
		a->own = own_log(id, log);
	}
	json_object_set_new(tab, id, json_integer((json_int_t)(intptr_t)a));
	return a;
}

/* Whether link (a session directory's audit.jsonl) is a link to the
 * log (log: its stat; real: its path with no link in it, or ""). */
static bool links_to(const char *link, const struct stat *log, const char *real)
{
	char to[PATH_MAX];
	struct stat st;

	if (lstat(link, &st) || !S_ISLNK(st.st_mode))
		return false;
	if (!stat(link, &st) && st.st_dev == log->st_dev &&
	    st.st_ino == log->st_ino)
		return true;
	/* a file renamed over the log's name is still the one named */
	return real[0] && realpath(link, to) && !strcmp(to, real);
}

/* Every anchored session whose --audit-log is this file (the link its
 * directory keeps, by the file or its name) into tab: its anchored
 * record must be there even when none of its records is. A log given
 * by its path was checked against the sessions it still named, so a
 * later session's agent that removed a whole session from it (or
 * emptied it) left it verifying, "ok". */
static void add_linked(json_t *tab, const char *path, const struct stat *log)
{
	char state[PATH_MAX], dir[PATH_MAX], link[PATH_MAX], real[PATH_MAX];
	struct dirent *d;
	DIR *dh;

	if (hx_session_state_dir(state, sizeof(state)) ||
	    (size_t)snprintf(dir, sizeof(dir), "%s/sessions", state) >=
		sizeof(dir) ||
	    !(dh = opendir(dir)))
		return;
	if (!realpath(path, real))
		real[0] = '\0';
	while ((d = readdir(dh))) {
		struct anchored *a;

		if (!hx_session_name_valid(d->d_name) ||
		    json_object_get(tab, d->d_name) ||
		    (size_t)snprintf(link, sizeof(link), "%s/%s/audit.jsonl",
				     dir, d->d_name) >= sizeof(link) ||
		    !links_to(link, log, real))
			continue;
		a = session_of(tab, d->d_name, log);
		if (a && !a->has) { /* running, or killed: said elsewhere */
			free(a);
			json_object_del(tab, d->d_name);
		}
	}
	closedir(dh);
}

/* The record (line, len bytes, its newline cut) against its session's
 * anchor: the one record of seq, or a compacted record standing for
 * the chain that ended there. Read as the chain's check and every tool
 * read it (JSON, its hash that of its bytes): a scanner of its own
 * skipped a line it did not follow ("{ " and a space) and took member
 * names as bytes ("sess\u0069on"), so a record appended after the
 * anchor, which learn then took, verified (the fourteenth attack
 * review). */
static const char *one(json_t *tab, const char *line, size_t len,
		       const struct stat *log)
{
	char hex[65];
	json_t *j = json_loadb(line, len, 0, NULL), *m;
	const char *id, *prev, *ev, *bad = NULL;
	long long seq;
	struct anchored *a;

	if (!json_is_object(j) || hx_audit_line_hash(line, len, hex)) {
		json_decref(j);
		return "a record that is not one (the chain's check says so)";
	}
	m = json_object_get(j, "session");
	id = json_string_value(m);
	seq = json_is_integer(json_object_get(j, "seq"))
		  ? json_integer_value(json_object_get(j, "seq"))
		  : -1;
	prev = json_string_value(json_object_get(j, "prev"));
	ev = json_string_value(json_object_get(j, "event"));
	if (!id || seq < 0) {
		bad = "a record of no session or seq";
		goto out;
	}
	if (!(a = session_of(tab, id, log)) || !a->has)
		goto out;
	if ((uint64_t)seq == a->seq) {
		a->seen = true;
		if (strcmp(hex, a->hex))
			bad = "its record differs from the session's anchor "
			      "(rewritten)";
	} else if (ev && !strcmp(ev, "compacted") &&
		   (uint64_t)seq == a->seq + 1) {
		a->seen = true;
		/* Made by compact in the state directory only: in a log
		 * elsewhere, whoever may write it can make one, its prev
		 * read from the log it replaces (the fourteenth attack
		 * review). */
		if (!a->own)
			bad = "a compacted record outside the session's own "
			      "log in the state directory (made up)";
		else if (!prev || strcmp(prev, a->hex))
			bad = "its compacted record differs from the "
			      "session's anchor";
	} else if ((uint64_t)seq > a->seq) {
		/* the session wrote nothing after its anchor: another did */
		bad = "a record of the session after its last (appended)";
	}
out:
	json_decref(j);
	return bad;
}

static int scan(FILE *f, json_t *tab, const struct stat *log, char *why,
		size_t wsize)
{
	char *line = NULL, safe[512];
	size_t cap = 0, len;
	ssize_t n;
	int r = 0;

	while (!r && (n = getline(&line, &cap, f)) > 0) {
		const char *bad;

		len = (size_t)n;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if ((bad = one(tab, line, len, log))) {
			json_t *j = json_loadb(line, len, 0, NULL);
			const char *id =
			    json_string_value(json_object_get(j, "session"));
			json_t *sq = json_object_get(j, "seq");

			/* a record's own text: terminal-safe (notice.h) */
			snprintf(
			    why, wsize, "session %s, record seq %lld: %s",
			    id ? hx_text_safe(safe, sizeof(safe), id) : "?",
			    json_is_integer(sq) ? json_integer_value(sq) : -1LL,
			    bad);
			json_decref(j);
			r = 1;
		}
	}
	free(line);
	return r;
}

int hx_anchor_check(const char *path, const char *only, bool strict,
		    size_t *checked, char *why, size_t wsize)
{
	json_t *tab = json_object(), *v;
	FILE *f = fopen(path, "re");
	struct stat log;
	const char *id;
	/* the log's session names, as a terminal may show them: the record
	 * of a session without an anchor is one added afterwards, and its
	 * name, ESC [2K CR ESC [8m, erased verify's warning of it (the
	 * seventeenth attack review) */
	char safe[512];
	int r;

	*checked = 0;
	if (!f || !tab || fstat(fileno(f), &log)) {
		r = !f ? -errno : !tab ? -ENOMEM : -errno;
		goto out;
	}
	if (only)
		session_of(tab, only, &log);
	add_linked(tab, path, &log);
	r = scan(f, tab, &log, why, wsize);
	json_object_foreach(tab, id, v)
	{
		struct anchored *a =
		    (struct anchored *)(intptr_t)json_integer_value(v);

		if (!r && strict && (!a || !a->has)) {
			snprintf(why, wsize,
				 "session %s has no anchor (still running, "
				 "its harness-exec killed, not yours, or not "
				 "a session)",
				 hx_text_safe(safe, sizeof(safe), id));
			r = 1;
		}
		if (!r && a && a->has && !a->seen) {
			snprintf(why, wsize,
				 "session %s: the log holds no record seq "
				 "%llu, the session's last (cut, or "
				 "rewritten)",
				 hx_text_safe(safe, sizeof(safe), id),
				 (unsigned long long)a->seq);
			r = 1;
		}
		*checked += a && a->has && a->seen;
		free(a);
	}
out:
	if (f)
		fclose(f);
	json_decref(tab);
	return r;
}
