/* Hash-chained JSON Lines audit log; see audit.h. */
#define _GNU_SOURCE
#include "supervisor/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "supervisor/fmt.h"
#include "supervisor/jsontext.h"
#include "supervisor/sha256.h"

#define HASH_KEY     ",\"hash\":\""
#define HASH_KEY_LEN (sizeof(HASH_KEY) - 1)
/* `,"hash":"` + 64 hex + `"}` */
#define SUFFIX_LEN (HASH_KEY_LEN + 64 + 2)
/* Space kept allocated past the end (FALLOC_FL_KEEP_SIZE) so that the
 * records saying why a session ended fit on a full disk; topped up
 * when less than half of it is left. */
#define RESERVE (256u << 10)

struct hx_audit {
	pthread_mutex_t lock;
	int fd;
	bool dirty;
	bool created; /* its directory entry is not synced yet */
	bool syncing; /* hx_audit_sync_start's thread to join */
	int also_fd;  /* hx_audit_sync_also's, or -1 */
	int sync_err;
	pthread_t syncer;
	bool closing;	/* the last records: the reserve may be used up */
	bool broken;	/* a torn line could not be cut off: append nothing */
	bool reserving; /* the file system keeps a reserve (fallocate) */
	uint64_t seq;
	off_t size;	    /* the file's size after our last append */
	off_t reserved_end; /* end of the reserve, when reserving */
	uint64_t written;   /* bytes appended through this handle */
	mode_t mode;	    /* the log's permissions at open */
	unsigned restored;  /* times they were put back (hx_audit_sync) */
	char prev[65];
	char *path;
};

/* Keeps RESERVE bytes allocated past the end. -ENOSPC (or -EFBIG)
 * when the file system has no room left for it. */
static int top_up(struct hx_audit *a)
{
	struct rlimit fsz;

	if (!a->reserving || a->reserved_end - a->size >= (off_t)RESERVE / 2)
		return 0;
	/* fallocate past RLIMIT_FSIZE succeeds; the writes would not. */
	if (!getrlimit(RLIMIT_FSIZE, &fsz) && fsz.rlim_cur != RLIM_INFINITY &&
	    (rlim_t)(a->size + (off_t)RESERVE) > fsz.rlim_cur)
		return -EFBIG;
	if (fallocate(a->fd, FALLOC_FL_KEEP_SIZE, a->size, RESERVE)) {
		if (errno == EOPNOTSUPP || errno == ENOSYS) {
			a->reserving = false; /* nothing kept: no check */
			return 0;
		}
		return -errno;
	}
	a->reserved_end = a->size + (off_t)RESERVE;
	return 0;
}

static bool is_hex64(const char *p)
{
	for (int i = 0; i < 64; i++)
		if (!((p[i] >= '0' && p[i] <= '9') ||
		      (p[i] >= 'a' && p[i] <= 'f')))
			return false;
	return true;
}

/* The hash field is the last one and has a fixed shape; anything else
 * there means the line was cut or rewritten. */
static bool has_suffix(const char *line, size_t len)
{
	const char *s;

	if (len < SUFFIX_LEN + 1)
		return false;
	s = line + len - SUFFIX_LEN;
	return !memcmp(s, HASH_KEY, HASH_KEY_LEN) &&
	       is_hex64(s + HASH_KEY_LEN) && s[HASH_KEY_LEN + 64] == '"' &&
	       s[HASH_KEY_LEN + 65] == '}';
}

int hx_audit_line_hash(const char *line, size_t len, char *hex)
{
	if (!has_suffix(line, len))
		return -1;
	hx_sha256_hex2(line, len - SUFFIX_LEN, "}", 1, hex);
	return 0;
}

#define LAST_LINE_MAX (1u << 20)

/* Reads the last line of fd (at most LAST_LINE_MAX back) into a malloc'd
 * string; NULL with *empty set when the file is empty. The tail is read
 * in windows of 4 KiB, 64 KiB, then 1 MiB: a record is a few hundred
 * bytes, and a long log is not read whole at every start. */
static int read_last_line(int fd, char **out, bool *empty)
{
	struct stat st;
	off_t start;
	size_t n, i, want;
	char *buf;
	ssize_t r;

	*out = NULL;
	*empty = false;
	if (fstat(fd, &st))
		return -errno;
	if (st.st_size == 0) {
		*empty = true;
		return 0;
	}
	for (want = 4096;; want *= 16) {
		if (want > LAST_LINE_MAX)
			want = LAST_LINE_MAX;
		n = st.st_size > (off_t)want ? want : (size_t)st.st_size;
		start = st.st_size - (off_t)n;
		buf = malloc(n + 1);
		if (!buf)
			return -ENOMEM;
		do
			r = pread(fd, buf, n, start);
		while (r < 0 && errno == EINTR);
		if (r != (ssize_t)n || buf[n - 1] != '\n') {
			free(buf);
			return r != (ssize_t)n ? -EIO : -EBADMSG;
		}
		buf[n - 1] = '\0';
		for (i = n - 1; i > 0 && buf[i - 1] != '\n'; i--)
			;
		if (i > 0 || start == 0)
			break;
		free(buf);
		if (want == LAST_LINE_MAX)
			return -EBADMSG;
	}
	memmove(buf, buf + i, n - i);
	*out = buf;
	return 0;
}

static int resume_chain(struct hx_audit *a)
{
	char *line = NULL, hex[65];
	bool empty;
	json_t *j = NULL, *seq;
	int r;

	r = read_last_line(a->fd, &line, &empty);
	if (r || empty)
		return r;
	r = -EBADMSG;
	if (hx_audit_line_hash(line, strlen(line), hex))
		goto out;
	if (memcmp(line + strlen(line) - 66, hex, 64))
		goto out;
	j = json_loads(line, 0, NULL);
	seq = j ? json_object_get(j, "seq") : NULL;
	if (!json_is_integer(seq) || json_integer_value(seq) < 1)
		goto out;
	a->seq = (uint64_t)json_integer_value(seq);
	memcpy(a->prev, hex, 65);
	r = 0;
out:
	json_decref(j);
	free(line);
	return r;
}

int hx_audit_open(const char *path, struct hx_audit **out)
{
	struct hx_audit *a;
	struct stat st;
	int r;

	*out = NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	pthread_mutex_init(&a->lock, NULL);
	a->also_fd = -1;
	memset(a->prev, '0', 64);
	a->path = strdup(path);
	do {
		a->fd = open(path,
			     O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC |
				 O_NOFOLLOW,
			     0600);
		a->created = a->fd >= 0;
		if (a->fd < 0 && errno == EEXIST)
			a->fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC |
					       O_NOFOLLOW);
	} while (a->fd < 0 && errno == EINTR);
	if (a->fd < 0 || !a->path) {
		r = a->path ? -errno : -ENOMEM;
		goto fail;
	}
	/* One session writes a log at a time: two appending to one
	 * --audit-log interleaved their chains, and verify then called
	 * the log tampered with (the eleventh attack review). Held until
	 * the log is closed; a file system without locks goes on. */
	if (flock(a->fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK) {
		r = -EBUSY;
		goto fail;
	}
	r = resume_chain(a);
	if (r)
		goto fail;
	if (fstat(a->fd, &st)) {
		r = -errno;
		goto fail;
	}
	a->size = st.st_size;
	a->mode = st.st_mode & 07777;
	a->reserving = true;
	r = top_up(a);
	if (r)
		goto fail;
	*out = a;
	return 0;
fail:
	if (a->fd >= 0)
		close(a->fd);
	free(a->path);
	pthread_mutex_destroy(&a->lock);
	free(a);
	return r;
}

/* The members the chain writes itself, whatever the record holds. */
static bool chain_member(const char *key)
{
	switch (key[0]) {
	case 't':
		return !strcmp(key, "time");
	case 's':
		return !strcmp(key, "seq");
	case 'p':
		return !strcmp(key, "prev");
	case 'h':
		return !strcmp(key, "hash");
	default:
		return false;
	}
}

/* The record's text: "time" first (the record's, else now), "seq",
 * the rest in the record's order, "prev" last; then the hash of that
 * text, and the line. */
char *hx_audit_line(json_t *record, uint64_t seq, const char *prev, size_t *len,
		    char hex[65])
{
	struct hx_jtext t = {0};
	json_t *time = json_object_get(record, "time"), *val;
	const char *key;
	char now[HX_FMT_TIME_LEN], num[32];
	struct timespec ts;
	int n;

	hx_jtext_put(&t, "{\"time\":", 8);
	if (time) {
		hx_jtext_value(&t, time);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		hx_fmt_time(&ts, now, sizeof(now));
		hx_jtext_string(&t, now, strlen(now));
	}
	n = snprintf(num, sizeof(num), ",\"seq\":%llu",
		     (unsigned long long)seq);
	hx_jtext_put(&t, num, (size_t)n);
	json_object_foreach(record, key, val)
	{
		if (chain_member(key))
			continue;
		hx_jtext_put(&t, ",", 1);
		hx_jtext_string(&t, key, strlen(key));
		hx_jtext_put(&t, ":", 1);
		hx_jtext_value(&t, val);
	}
	hx_jtext_put(&t, ",\"prev\":", 8);
	hx_jtext_string(&t, prev, strlen(prev));
	hx_jtext_put(&t, "}", 1);
	if (!t.failed)
		hx_sha256_hex(t.p, t.len, hex);
	/* The line: the text less its '}', the hash, "}\n". */
	t.len--;
	hx_jtext_put(&t, HASH_KEY, HASH_KEY_LEN);
	hx_jtext_put(&t, hex, 64);
	hx_jtext_put(&t, "\"}\n", 3);
	if (t.failed) {
		free(t.p);
		return NULL;
	}
	*len = t.len;
	return t.p;
}

int hx_audit_append(struct hx_audit *a, json_t *record, uint64_t *seq)
{
	char *line = NULL, hex[65];
	size_t linelen;
	struct stat st;
	ssize_t w;
	int r = -ENOMEM;

	if (!json_is_object(record))
		return -EINVAL;
	pthread_mutex_lock(&a->lock);
	line = hx_audit_line(record, a->seq + 1, a->prev, &linelen, hex);
	if (!line)
		goto out;
	if (a->broken) {
		r = -EIO;
		goto out;
	}
	/* Out of room for the reserve: refuse now, while the records that
	 * end the session still fit in what is left of it. */
	if (!a->closing && (r = top_up(a)))
		goto out;
	/* One write: a record is either whole in the file or absent. A
	 * short write (a full disk, RLIMIT_FSIZE) is cut off again, so the
	 * next record never follows half of this one. */
	do
		w = write(a->fd, line, linelen);
	while (w < 0 && errno == EINTR);
	if (w < 0 || (size_t)w != linelen) {
		r = w < 0 ? -errno : -ENOSPC;
		if (w > 0) {
			/* The rest, only to learn why (ENOSPC, EFBIG). */
			ssize_t w2 =
			    write(a->fd, line + w, linelen - (size_t)w);

			if (w2 < 0)
				r = -errno;
			else
				w += w2;
		}
		/* Our bytes are the last ones (O_APPEND): cut them off. */
		if (w > 0 && (fstat(a->fd, &st) ||
			      ftruncate(a->fd, st.st_size - (off_t)w)))
			a->broken = true;
		goto out;
	}
	a->size += (off_t)linelen;
	a->written += linelen;
	a->seq++;
	memcpy(a->prev, hex, 65);
	a->dirty = true;
	if (seq)
		*seq = a->seq;
	r = 0;
out:
	pthread_mutex_unlock(&a->lock);
	free(line);
	return r;
}

/* A new log's name survives a crash only once its directory is synced. */
static int sync_dir(const char *path)
{
	char *dir = strdup(path), *slash;
	int fd, r = 0;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (fsync(fd) && errno != EINVAL))
		r = -errno;
	if (fd >= 0)
		close(fd);
	free(dir);
	return r;
}

/* An fd opened for reading is enough for fchmod, which passes the
 * kernel layer (audit mode has no Landlock to refuse the open): the
 * mode is put back within a second, and counted. Under a->lock. */
static void check_mode(struct hx_audit *a)
{
	struct stat st;

	if (!fstat(a->fd, &st) && (st.st_mode & 07777) != a->mode &&
	    !fchmod(a->fd, a->mode))
		a->restored++;
}

void hx_audit_check_mode(struct hx_audit *a)
{
	pthread_mutex_lock(&a->lock);
	check_mode(a);
	pthread_mutex_unlock(&a->lock);
}

int hx_audit_sync_timed(struct hx_audit *a, uint64_t *ns)
{
	uint64_t t0 = 0;
	int r = 0;

	if (ns)
		*ns = 0;
	pthread_mutex_lock(&a->lock);
	check_mode(a);
	if (a->created && !(r = sync_dir(a->path)))
		a->created = false;
	/* The data and the size it needs: an append-only log has no other
	 * metadata to keep. */
	if (!r && a->dirty) {
		if (ns)
			t0 = hx_mono_ns();
		if (fdatasync(a->fd) && errno != EINVAL)
			r = -errno;
		else
			a->dirty = false;
		if (ns) /* at least 1: "a sync happened" */
			*ns = hx_mono_ns() - t0 ?: 1;
	}
	pthread_mutex_unlock(&a->lock);
	return r;
}

int hx_audit_sync(struct hx_audit *a)
{
	return hx_audit_sync_timed(a, NULL);
}

/* The log, then what goes with it (hx_audit_sync_also). */
static int sync_all(struct hx_audit *a)
{
	int r = hx_audit_sync(a);

	if (a->also_fd >= 0) {
		if (fsync(a->also_fd) && !r)
			r = -errno;
		close(a->also_fd);
		a->also_fd = -1;
	}
	return r;
}

static void *syncer(void *arg)
{
	struct hx_audit *a = arg;

	a->sync_err = sync_all(a);
	return NULL;
}

void hx_audit_sync_also(struct hx_audit *a, int fd)
{
	if (!a || a->syncing) {
		if (fd >= 0)
			close(fd);
		return;
	}
	if (a->also_fd >= 0)
		close(a->also_fd);
	a->also_fd = fd;
}

void hx_audit_sync_start(struct hx_audit *a)
{
	/* Without a thread, hx_audit_close syncs by itself. */
	if (a && !a->syncing)
		a->syncing = !pthread_create(&a->syncer, NULL, syncer, a);
}

int hx_audit_close(struct hx_audit *a)
{
	struct stat st;
	int r = 0;

	if (!a)
		return 0;
	if (a->syncing) {
		pthread_join(a->syncer, NULL);
		r = a->sync_err;
	}
	if (!r)
		r = sync_all(a);
	/* Give back what the reserve holds past the end: a truncate to
	 * the size it has frees it (a hole punch stops at the end). */
	if (a->reserving && !fstat(a->fd, &st) &&
	    ftruncate(a->fd, st.st_size)) {
		/* Only space is lost; the records are synced. */
	}
	if (close(a->fd) && !r && errno != EINTR)
		r = -errno;
	if (a->also_fd >= 0) /* the log's sync failed first */
		close(a->also_fd);
	pthread_mutex_destroy(&a->lock);
	free(a->path);
	free(a);
	return r;
}

unsigned hx_audit_mode_restored(const struct hx_audit *a)
{
	return a->restored;
}

int hx_audit_fd(const struct hx_audit *a)
{
	return a->fd;
}

const char *hx_audit_path(const struct hx_audit *a)
{
	return a->path;
}

void hx_audit_closing(struct hx_audit *a)
{
	pthread_mutex_lock(&a->lock);
	a->closing = true;
	pthread_mutex_unlock(&a->lock);
}

uint64_t hx_audit_written(struct hx_audit *a)
{
	uint64_t n;

	pthread_mutex_lock(&a->lock);
	n = a->written;
	pthread_mutex_unlock(&a->lock);
	return n;
}

uint64_t hx_audit_last_seq(const struct hx_audit *a)
{
	return a->seq;
}

const char *hx_audit_last_hash(const struct hx_audit *a)
{
	return a->prev;
}

static uint64_t seq_of(const char *line)
{
	json_t *j = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL);
	json_t *s = j ? json_object_get(j, "seq") : NULL;
	uint64_t v = json_is_integer(s) && json_integer_value(s) > 0
			 ? (uint64_t)json_integer_value(s)
			 : 0;

	json_decref(j);
	return v;
}

/* Checks one complete line against the chain state; returns NULL when it
 * is a good record (and advances v), else the reason. */
static const char *check_line(char *line, size_t len, struct hx_audit_verify *v)
{
	char hex[65];
	json_t *j, *seq, *prev, *ev;
	const char *why = NULL;

	if (!has_suffix(line, len)) {
		j = json_loads(line, 0, NULL);
		why = j ? "hash mismatch (record edited)" : "not JSON";
		json_decref(j);
		return why;
	}
	if (hx_audit_line_hash(line, len, hex) ||
	    memcmp(line + len - 66, hex, 64))
		return "hash mismatch (record edited)";
	j = json_loads(line, 0, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		return "not JSON";
	}
	seq = json_object_get(j, "seq");
	prev = json_object_get(j, "prev");
	ev = json_object_get(j, "event");
	/* A compacted log (harness-audit compact) begins where the chain it
	 * replaced ended: its record names that chain's last hash. */
	if (!v->records && json_is_string(ev) &&
	    !strcmp(json_string_value(ev), "compacted") &&
	    json_is_string(prev) && strlen(json_string_value(prev)) == 64 &&
	    json_is_integer(seq) && json_integer_value(seq) > 1) {
		snprintf(v->last_hash, sizeof(v->last_hash), "%s",
			 json_string_value(prev));
		v->last_seq = (uint64_t)json_integer_value(seq) - 1;
		v->compacted = v->last_seq;
	}
	if (!json_is_string(prev) ||
	    strcmp(json_string_value(prev), v->last_hash))
		why = "prev mismatch (record deleted or reordered)";
	else if (!json_is_integer(seq) ||
		 (uint64_t)json_integer_value(seq) != v->last_seq + 1)
		why = "seq gap";
	if (!why) {
		if (!v->records++)
			memcpy(v->first_hash, hex, 65);
		v->last_seq++;
		memcpy(v->last_hash, hex, 65);
		/* a compacted record holds its session_end */
		v->last_is_end =
		    json_is_string(ev) &&
		    (!strcmp(json_string_value(ev), "session_end") ||
		     (v->compacted && v->records == 1 &&
		      !strcmp(json_string_value(ev), "compacted")));
	}
	json_decref(j);
	return why;
}

int hx_audit_verify(const char *path, struct hx_audit_verify *v)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0, len;
	ssize_t n;
	uint64_t lineno = 0;
	int r = 0;

	memset(v, 0, sizeof(*v));
	memset(v->last_hash, '0', 64);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) > 0) {
		lineno++;
		len = (size_t)n;
		if (line[len - 1] != '\n') {
			v->reason = "torn line";
		} else {
			line[--len] = '\0';
			v->reason = memchr(line, '\0', len)
					? "not JSON"
					: check_line(line, len, v);
		}
		if (v->reason) {
			v->bad_line = lineno;
			v->bad_seq = seq_of(line);
			r = 1;
			break;
		}
	}
	if (!r && ferror(f))
		r = -EIO;
	free(line);
	fclose(f);
	return r;
}
