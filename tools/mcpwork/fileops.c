/* file_read, file_write, file_patch; see fileops.h. */
#define _GNU_SOURCE
#include "tools/mcpwork/fileops.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "tools/mcpwork/args.h"
#include "tools/mcpwork/bounds.h"
#include "tools/mcpwork/patch.h"
#include "tools/mcpwork/text.h"

#define CHUNK	(64u << 10)
#define HEX_LEN (2 * SHA256_DIGEST_SIZE)

static void hex_of(struct sha256_ctx *c, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	uint8_t md[SHA256_DIGEST_SIZE];
	size_t i;

	sha256_digest(c, sizeof(md), md);
	for (i = 0; i < sizeof(md); i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[HEX_LEN] = 0;
}

static void sha_hex(const char *p, size_t n, char *hex)
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, n, (const uint8_t *)p);
	hex_of(&c, hex);
}

static ssize_t read_some(int fd, char *p, size_t n)
{
	ssize_t r;

	do
		r = read(fd, p, n);
	while (r < 0 && errno == EINTR);
	return r;
}

/* Opens path for reading as cat would (following symlinks), without
 * hanging on a FIFO or taking a terminal, and only a regular file.
 * The fd, or -errno (and *res). */
static int open_regular(const char *path, struct stat *st, json_t **res)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	int e;

	if (fd < 0) {
		e = errno;
		return hx_mw_args_error(res, e, "open %s: %s", path,
					strerror(e));
	}
	if (fstat(fd, st) < 0) {
		e = errno;
		close(fd);
		return hx_mw_args_error(res, e, "stat %s: %s", path,
					strerror(e));
	}
	if (S_ISDIR(st->st_mode)) {
		close(fd);
		return hx_mw_args_error(res, EISDIR, "%s is a directory", path);
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return hx_mw_args_error(res, EINVAL,
					"%s is not a regular file (a FIFO, "
					"socket or device)",
					path);
	}
	return fd;
}

/* The whole file at path, at most max bytes (EFBIG past), malloc'd. */
static int slurp(const char *path, size_t max, char **out, size_t *outn,
		 json_t **res)
{
	struct stat st;
	size_t len = 0, cap;
	char *buf = NULL, *nb;
	ssize_t r;
	int fd = open_regular(path, &st, res), e;

	if (fd < 0)
		return fd;
	cap =
	    (size_t)st.st_size + 1 < max + 1 ? (size_t)st.st_size + 1 : max + 1;
	for (;;) {
		if (len == cap || !buf) {
			cap = buf ? cap * 2 : cap;
			if (cap > max + 1)
				cap = max + 1;
			nb = realloc(buf, cap);
			if (!nb) {
				e = ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		r = read_some(fd, buf + len, cap - len);
		if (r < 0) {
			e = errno;
			goto fail;
		}
		if (!r)
			break;
		len += (size_t)r;
		if (len > max) {
			close(fd);
			free(buf);
			return hx_mw_args_error(res, EFBIG,
						"%s is larger than %zu bytes",
						path, max);
		}
	}
	close(fd);
	*out = buf;
	*outn = len;
	return 0;
fail:
	close(fd);
	free(buf);
	return hx_mw_args_error(res, e, "read %s: %s", path, strerror(e));
}

struct range {
	bool lines, base64;
	uint64_t a, b, max;
};

static int read_args(json_t *args, struct range *r, json_t **res)
{
	static const char *const keys[] = {"path",	 "offset",   "length",
					   "start_line", "end_line", "encoding",
					   "max_bytes",	 NULL};
	uint64_t off, len, sl, el;
	bool goff, glen, gsl, gel;
	int rc;

	if ((rc = hx_mw_args_only(args, keys, res)) < 0 ||
	    (rc = hx_mw_args_uint(args, "offset", 0, 0, INT64_MAX, &off, &goff,
				  res)) < 0 ||
	    (rc = hx_mw_args_uint(args, "length", 0, 0, INT64_MAX, &len, &glen,
				  res)) < 0 ||
	    (rc = hx_mw_args_uint(args, "start_line", 1, 1, INT64_MAX, &sl,
				  &gsl, res)) < 0 ||
	    (rc = hx_mw_args_uint(args, "end_line", 0, 1, INT64_MAX, &el, &gel,
				  res)) < 0 ||
	    (rc = hx_mw_args_uint(args, "max_bytes", HX_MW_READ_DEFAULT, 0,
				  HX_MW_READ_MAX, &r->max, NULL, res)) < 0 ||
	    (rc = hx_mw_args_encoding(args, &r->base64, res)) < 0)
		return rc;
	if ((goff || glen) && (gsl || gel))
		return hx_mw_args_error(res, EINVAL,
					"give a byte range (offset, length) "
					"or a line range (start_line, "
					"end_line), not both");
	r->lines = gsl || gel;
	if (r->lines) {
		if (gel && el < sl)
			return hx_mw_args_error(
			    res, EINVAL,
			    "end_line %llu is before start_line %llu",
			    (unsigned long long)el, (unsigned long long)sl);
		r->a = sl;
		r->b = gel ? el : UINT64_MAX;
	} else {
		r->a = off;
		r->b = glen && len < UINT64_MAX - off ? off + len : UINT64_MAX;
	}
	return 0;
}

/* Reads the whole file: its hash, and the range kept in s (NULL:
 * none). */
static int read_range(const char *path, struct hx_mw_text_sel *s, char *hex,
		      json_t **res)
{
	struct sha256_ctx c;
	struct stat st;
	char *chunk = malloc(CHUNK);
	ssize_t r;
	int fd, rc = 0, e;

	if (!chunk)
		return hx_mw_args_error(res, ENOMEM, "out of memory");
	fd = open_regular(path, &st, res);
	if (fd < 0) {
		free(chunk);
		return fd;
	}
	sha256_init(&c);
	while ((r = read_some(fd, chunk, CHUNK)) > 0) {
		sha256_update(&c, (size_t)r, (uint8_t *)chunk);
		if (s && hx_mw_text_sel_feed(s, chunk, (size_t)r) < 0) {
			rc = hx_mw_args_error(res, ENOMEM, "out of memory");
			goto out;
		}
	}
	if (r < 0) {
		e = errno;
		rc = hx_mw_args_error(res, e, "read %s: %s", path, strerror(e));
		goto out;
	}
	hex_of(&c, hex);
out:
	close(fd);
	free(chunk);
	return rc;
}

static json_t *content_of(const struct hx_mw_text_sel *s, bool base64)
{
	json_t *j;
	size_t n;
	char *b;

	if (!base64)
		return json_stringn(s->buf ? s->buf : "", s->len);
	b = hx_mw_text_b64_encode(s->buf ? s->buf : "", s->len, &n);
	if (!b)
		return NULL;
	j = json_stringn(b, n);
	free(b);
	return j;
}

int hx_mw_fileops_read(json_t *args, json_t **res)
{
	struct hx_mw_text_sel s = {0};
	struct range r;
	char hex[HEX_LEN + 1];
	const char *path;
	size_t bad;
	uint64_t start, last_line;
	json_t *content;
	int rc;

	if ((rc = hx_mw_args_path(args, "path", &path, res)) < 0 ||
	    (rc = read_args(args, &r, res)) < 0)
		return rc;
	s.lines = r.lines;
	s.a = r.a;
	s.b = r.b;
	s.max = r.max;
	if ((rc = read_range(path, &s, hex, res)) < 0)
		goto out;
	/* Cut by max_bytes, not by the caller: keep whole characters. */
	if (s.over && !r.base64)
		s.len = hx_mw_text_utf8_cut(s.buf, s.len);
	if (!r.base64 && !hx_mw_text_utf8_valid(s.buf, s.len, &bad)) {
		rc = hx_mw_args_error(
		    res, EILSEQ,
		    "%s is not valid UTF-8 (at byte %llu); read it with "
		    "\"encoding\": \"base64\"",
		    path, (unsigned long long)(s.first + bad));
		goto out;
	}
	start = s.any ? s.first : r.lines ? s.pos : r.a;
	content = content_of(&s, r.base64);
	*res = json_pack("{s:s, s:I, s:I, s:I, s:o*, s:s, s:b, s:s}", "path",
			 path, "size", (json_int_t)s.pos, "offset",
			 (json_int_t)(r.lines ? start : r.a), "bytes",
			 (json_int_t)s.len, "content", content, "encoding",
			 r.base64 ? "base64" : "utf-8", "truncated",
			 start + s.len < s.pos, "sha256", hex);
	if (!*res || !content) {
		json_decref(*res);
		rc = hx_mw_args_error(res, ENOMEM, "out of memory");
		goto out;
	}
	if (r.lines) {
		/* The line of the last byte returned; start_line - 1 when
		 * nothing was. */
		last_line = r.a - 1;
		if (s.len) {
			const char *p = s.buf, *end = s.buf + s.len - 1;

			last_line = r.a;
			while ((p = memchr(p, '\n', (size_t)(end - p))))
				last_line++, p++;
		}
		json_object_set_new(*res, "start_line",
				    json_integer((json_int_t)r.a));
		json_object_set_new(*res, "end_line",
				    json_integer((json_int_t)last_line));
		json_object_set_new(
		    *res, "total_lines",
		    json_integer((json_int_t)hx_mw_text_sel_total_lines(&s)));
	}
out:
	free(s.buf);
	return rc;
}

static int write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The temporary file's name: ".NAME.hxtmp.XXXXXX" beside path, NAME
 * cut so that the name stays within NAME_MAX. */
static int temp_name(const char *path, char *tmp, size_t size)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash + 1;
	int dirlen = (int)(slash - path);
	int baselen = (int)strlen(base);
	int n;

	if (baselen > NAME_MAX - 20)
		baselen = NAME_MAX - 20;
	n = snprintf(tmp, size, "%.*s/.%.*s.hxtmp.XXXXXX", dirlen, path,
		     baselen, base);
	return n > 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

/* mkostemp's job through open(2) itself: glibc's mkostemp calls its
 * internal openat, which the shim cannot see, and each write would be
 * recorded as a call that bypassed the shim (DESIGN.md: a signal). */
static int make_temp(char *tmp)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t n = strlen(tmp), i;
	unsigned char r[6];
	uint64_t x;
	int tries, fd;

	for (tries = 0; tries < 100; tries++) {
		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != sizeof(r)) {
			x = hx_mono_ns() * 0x9e3779b97f4a7c15ull ^
			    (uint64_t)getpid() << 20 ^ (uint64_t)tries;
			memcpy(r, &x, sizeof(r));
		}
		for (i = 0; i < sizeof(r); i++)
			tmp[n - sizeof(r) + i] =
			    chars[r[i] % (sizeof(chars) - 1)];
		fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

static void sync_dir(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd;

	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path) ?: 1, path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd); /* the rename's durability; not fatal */
		close(fd);
	}
}

static int place_file(const char *tmp, const char *path, int create)
{
	struct stat st;

	if (!create)
		return rename(tmp, path) < 0 ? -errno : 0;
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* A file system without RENAME_NOREPLACE: checked, then renamed
	 * (a creator racing in between is overwritten). */
	if (lstat(path, &st) == 0)
		return -EEXIST;
	return rename(tmp, path) < 0 ? -errno : 0;
}

int hx_mw_fileops_replace(const char *path, const char *data, size_t n,
			  unsigned mode, int create, json_t **res)
{
	char tmp[PATH_MAX];
	const char *step;
	int fd, rc;

	if (!strrchr(path, '/')[1])
		return hx_mw_args_error(res, EISDIR, "%s names a directory",
					path);
	if (temp_name(path, tmp, sizeof(tmp)) < 0)
		return hx_mw_args_error(res, ENAMETOOLONG,
					"%s: the path is too long", path);
	fd = make_temp(tmp);
	if (fd < 0) {
		rc = errno;
		return hx_mw_args_error(res, rc,
					"create a temporary file beside %s: %s",
					path, strerror(rc));
	}
	step = "write";
	if ((rc = write_all(fd, data, n)) < 0)
		goto fail;
	step = "chmod";
	if (fchmod(fd, mode & 07777) < 0)
		goto fail_errno;
	step = "fsync";
	if (fsync(fd) < 0)
		goto fail_errno;
	step = "close";
	rc = close(fd);
	fd = -1;
	if (rc < 0)
		goto fail_errno;
	step = create ? "create" : "rename over";
	if ((rc = place_file(tmp, path, create)) < 0)
		goto fail;
	sync_dir(path);
	return 0;
fail_errno:
	rc = -errno;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	if (rc == -EEXIST)
		return hx_mw_args_error(res, EEXIST, "%s exists", path);
	return hx_mw_args_error(res, -rc, "%s %s: %s (nothing was changed)",
				step, path, strerror(-rc));
}

/* The SHA-256 of the file at path, read in chunks. */
static int hash_file(const char *path, char *hex, json_t **res)
{
	return read_range(path, NULL, hex, res);
}

/* What path is now, for a write: whether it exists, its mode, its hash
 * when asked (hex not NULL); a symlink is written through, like cat >
 * does, so *real is what is replaced. */
struct current {
	bool exists;
	unsigned mode;
	char real[PATH_MAX];
};

static unsigned new_mode(void)
{
	mode_t m = umask(0);

	umask(m);
	return 0666 & ~m;
}

static int current(const char *path, struct current *c, char *hex, json_t **res)
{
	struct stat st;
	int e;

	memset(c, 0, sizeof(*c));
	snprintf(c->real, sizeof(c->real), "%s", path);
	c->mode = new_mode();
	if (hex)
		hex[0] = 0;
	if (lstat(path, &st) < 0) {
		e = errno;
		if (e == ENOENT)
			return 0;
		return hx_mw_args_error(res, e, "stat %s: %s", path,
					strerror(e));
	}
	if (S_ISLNK(st.st_mode)) {
		if (!realpath(path, c->real)) {
			e = errno;
			return hx_mw_args_error(res, e,
						"%s is a symlink that does not "
						"resolve: %s",
						path, strerror(e));
		}
		if (stat(c->real, &st) < 0) {
			e = errno;
			return hx_mw_args_error(res, e, "stat %s: %s", path,
						strerror(e));
		}
	}
	if (S_ISDIR(st.st_mode))
		return hx_mw_args_error(res, EISDIR, "%s is a directory", path);
	if (!S_ISREG(st.st_mode))
		return hx_mw_args_error(res, EINVAL, "%s is not a regular file",
					path);
	c->exists = true;
	c->mode = st.st_mode & 07777;
	return hex ? hash_file(c->real, hex, res) : 0;
}

/* The current content must hash to want ("" for no file). */
static int check_expected(const char *path, const char *want,
			  const struct current *c, const char *hex,
			  json_t **res)
{
	int rc;

	if (c->exists ? !strcasecmp(want, hex) : !want[0])
		return 0;
	rc =
	    hx_mw_args_error(res, ESTALE,
			     c->exists ? "%s changed since it was read: its "
					 "SHA-256 is not the expected one"
				       : "%s does not exist, but a SHA-256 was "
					 "expected",
			     path);
	json_object_set_new(*res, "actual_sha256",
			    json_string(c->exists ? hex : ""));
	json_object_set_new(*res, "path", json_string(path));
	return rc;
}

static int expected_arg(json_t *args, const char **want, json_t **res)
{
	size_t n, i;
	int rc = hx_mw_args_str(args, "expected_sha256", want, &n, res);

	if (rc <= 0) {
		*want = NULL;
		return rc;
	}
	for (i = 0; i < n; i++)
		if (!strchr("0123456789abcdefABCDEF", (*want)[i]) ||
		    !(*want)[i])
			break;
	if ((n && n != HEX_LEN) || i != n)
		return hx_mw_args_error(res, EINVAL,
					"expected_sha256 must be 64 hex "
					"digits, or \"\" for a file that "
					"must not exist");
	return 0;
}

/* mkdir -p of path's parent: only the parts that are missing, so that
 * an existing ancestor the policy keeps read-only (/tmp) is not asked
 * for, and refused, in the audit log. */
static int make_parents(const char *path, json_t **res)
{
	char dir[PATH_MAX];
	struct stat st;
	size_t i, end = (size_t)(strrchr(path, '/') - path);
	int e;

	/* Back to the deepest ancestor that exists, then down again. */
	for (i = end; i > 0; i--) {
		if (i < end && path[i] != '/')
			continue;
		snprintf(dir, sizeof(dir), "%.*s", (int)i, path);
		if (stat(dir, &st) == 0)
			break;
	}
	for (i = i + 1; i <= end; i++) {
		if (i < end && path[i] != '/')
			continue;
		snprintf(dir, sizeof(dir), "%.*s", (int)i, path);
		if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
			e = errno;
			return hx_mw_args_error(res, e, "mkdir %s: %s", dir,
						strerror(e));
		}
	}
	return 0;
}

static json_t *written(const char *path, const char *data, size_t n,
		       const char *key, json_t *extra)
{
	char hex[HEX_LEN + 1];

	sha_hex(data, n, hex);
	return json_pack("{s:s, s:I, s:s, s:o}", "path", path, "bytes",
			 (json_int_t)n, "sha256", hex, key, extra);
}

static int decode_content(json_t *args, char **data, size_t *n, json_t **res)
{
	const char *s = NULL;
	size_t len = 0;
	bool base64;
	int rc;

	rc = hx_mw_args_str(args, "content", &s, &len, res);
	if (rc < 0)
		return rc;
	if (!rc)
		return hx_mw_args_error(res, EINVAL,
					"argument \"content\" missing");
	if ((rc = hx_mw_args_encoding(args, &base64, res)) < 0)
		return rc;
	if (base64) {
		if (hx_mw_text_b64_decode(s, len, data, n) < 0)
			return hx_mw_args_error(res, EINVAL,
						"content is not valid base64");
		return 0;
	}
	*data = malloc(len + 1);
	if (!*data)
		return hx_mw_args_error(res, ENOMEM, "out of memory");
	memcpy(*data, s, len);
	*n = len;
	return 0;
}

int hx_mw_fileops_write(json_t *args, json_t **res)
{
	static const char *const keys[] = {
	    "path",	   "content", "encoding", "mode", "expected_sha256",
	    "create_dirs", NULL};
	struct current c;
	char hex[HEX_LEN + 1];
	const char *path, *mode = "overwrite", *want;
	char *data = NULL;
	size_t n = 0;
	bool create_dirs;
	int rc;

	if ((rc = hx_mw_args_only(args, keys, res)) < 0 ||
	    (rc = hx_mw_args_path(args, "path", &path, res)) < 0 ||
	    (rc = hx_mw_args_str(args, "mode", &mode, NULL, res)) < 0 ||
	    (rc = expected_arg(args, &want, res)) < 0 ||
	    (rc = hx_mw_args_bool(args, "create_dirs", false, &create_dirs,
				  res)) < 0)
		return rc;
	if (strcmp(mode, "overwrite") && strcmp(mode, "create"))
		return hx_mw_args_error(res, EINVAL,
					"mode must be \"overwrite\" or "
					"\"create\"");
	if ((rc = decode_content(args, &data, &n, res)) < 0)
		return rc;
	if ((rc = current(path, &c, want ? hex : NULL, res)) < 0)
		goto out;
	if (!strcmp(mode, "create") && c.exists) {
		rc = hx_mw_args_error(res, EEXIST, "%s exists", path);
		goto out;
	}
	if (want && (rc = check_expected(path, want, &c, hex, res)) < 0)
		goto out;
	if (create_dirs && !c.exists && (rc = make_parents(c.real, res)) < 0)
		goto out;
	rc = hx_mw_fileops_replace(c.real, data, n, c.mode, !c.exists, res);
	if (rc < 0)
		goto out;
	*res = written(path, data, n, "created", json_boolean(!c.exists));
out:
	free(data);
	return rc;
}

static int edits_arg(json_t *arr, struct hx_mw_patch_edit **out, size_t *ne,
		     json_t **res)
{
	static const char *const keys[] = {"search", "replace", "all", NULL};
	struct hx_mw_patch_edit *e;
	json_t *v;
	size_t i;
	int rc;

	if (!json_is_array(arr) || !json_array_size(arr) ||
	    json_array_size(arr) > HX_MW_PATCH_HUNKS_MAX)
		return hx_mw_args_error(res, EINVAL,
					"edits must be an array of 1 to %u "
					"{search, replace, all?}",
					HX_MW_PATCH_HUNKS_MAX);
	e = calloc(json_array_size(arr), sizeof(*e));
	if (!e)
		return hx_mw_args_error(res, ENOMEM, "out of memory");
	json_array_foreach(arr, i, v)
	{
		*res = NULL;
		rc = -EINVAL;
		if (!json_is_object(v) || hx_mw_args_only(v, keys, res) < 0 ||
		    hx_mw_args_str(v, "search", &e[i].search, &e[i].slen,
				   res) != 1 ||
		    hx_mw_args_str(v, "replace", &e[i].replace, &e[i].rlen,
				   res) != 1 ||
		    (rc = hx_mw_args_bool(v, "all", false, &e[i].all, res)) <
			0) {
			json_decref(*res);
			free(e);
			rc = hx_mw_args_error(res, EINVAL,
					      "edit %zu must be {search: "
					      "string, replace: string, all?: "
					      "bool}",
					      i + 1);
			json_object_set_new(*res, "hunk",
					    json_integer((json_int_t)i + 1));
			return rc;
		}
	}
	*out = e;
	*ne = json_array_size(arr);
	return 0;
}

/* The patch or the edits applied to data (n bytes). */
static int patch_content(json_t *args, const char *path, const char *data,
			 size_t n, char **out, size_t *outn, unsigned *hunks,
			 json_t **res)
{
	struct hx_mw_patch_edit *e = NULL;
	struct hx_mw_patch_fail f;
	json_t *edits = json_object_get(args, "edits");
	const char *diff = NULL;
	size_t dn = 0, ne = 0;
	int rc = hx_mw_args_str(args, "patch", &diff, &dn, res);

	if (rc < 0)
		return rc;
	if (!diff == !edits)
		return hx_mw_args_error(res, EINVAL,
					"give exactly one of patch and edits");
	if (diff) {
		rc = hx_mw_patch_diff(data, n, diff, dn, HX_MW_PATCH_FILE_MAX,
				      out, outn, hunks, &f);
	} else {
		if ((rc = edits_arg(edits, &e, &ne, res)) < 0)
			return rc;
		rc = hx_mw_patch_edits(data, n, e, ne, HX_MW_PATCH_FILE_MAX,
				       out, outn, &f);
		*hunks = (unsigned)ne;
		free(e);
	}
	if (rc == -ENOMEM)
		return hx_mw_args_error(res, ENOMEM, "out of memory");
	if (rc < 0) {
		rc = hx_mw_args_error(res, -rc, "%s: %s (nothing was changed)",
				      path, f.why);
		json_object_set_new(*res, "path", json_string(path));
		if (f.hunk)
			json_object_set_new(*res, "hunk", json_integer(f.hunk));
		if (f.line)
			json_object_set_new(*res, "line",
					    json_integer((json_int_t)f.line));
	}
	return rc;
}

int hx_mw_fileops_patch(json_t *args, json_t **res)
{
	static const char *const keys[] = {"path", "patch", "edits",
					   "expected_sha256", NULL};
	struct current c;
	char hex[HEX_LEN + 1];
	const char *path, *want;
	char *data = NULL, *out = NULL;
	size_t n = 0, outn = 0;
	unsigned hunks = 0;
	int rc;

	if ((rc = hx_mw_args_only(args, keys, res)) < 0 ||
	    (rc = hx_mw_args_path(args, "path", &path, res)) < 0 ||
	    (rc = expected_arg(args, &want, res)) < 0 ||
	    (rc = current(path, &c, NULL, res)) < 0)
		return rc;
	if (!c.exists)
		return hx_mw_args_error(res, ENOENT, "%s does not exist", path);
	if ((rc = slurp(c.real, HX_MW_PATCH_FILE_MAX, &data, &n, res)) < 0)
		return rc;
	sha_hex(data, n, hex);
	if (want && (rc = check_expected(path, want, &c, hex, res)) < 0)
		goto out;
	if ((rc = patch_content(args, path, data, n, &out, &outn, &hunks,
				res)) < 0)
		goto out;
	if ((rc = hx_mw_fileops_replace(c.real, out, outn, c.mode, 0, res)) < 0)
		goto out;
	*res = written(path, out, outn, "hunks", json_integer(hunks));
out:
	free(data);
	free(out);
	return rc;
}
