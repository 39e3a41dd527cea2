/* search; see search.h. */
#define _GNU_SOURCE
#include "tools/mcpwork/search.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/glob.h"
#include "tools/mcpwork/args.h"
#include "tools/mcpwork/bounds.h"
#include "tools/mcpwork/text.h"
#include "tools/mcpwork/walk.h"

#define PATTERN_MAX 4096

struct search {
	char *glob; /* "/" + the glob, as common/glob.h wants paths */
	regex_t re;
	bool has_re;
	uint64_t max;
	json_t *out; /* matches or files */
	uint64_t scanned, unreadable, seen, long_lines;
	bool truncated, timed_out;
	uint64_t deadline; /* hx_mono_ms() */
	char *buf;	   /* a file's content, HX_MW_SEARCH_FILE_MAX + 1 */
	char gpath[PATH_MAX + 1];
};

static bool glob_ok(struct search *s, const char *rel)
{
	size_t n = strlen(rel);

	if (!s->glob)
		return true;
	if (n + 1 >= sizeof(s->gpath))
		return false;
	s->gpath[0] = '/';
	memcpy(s->gpath + 1, rel, n + 1);
	return hx_glob_match(s->glob, s->gpath);
}

/* The file's content into s->buf: its length, -1 when it is skipped
 * (too large, binary, not regular), -2 when it cannot be read. */
static ssize_t load(struct search *s, const struct hx_mw_walk_entry *e)
{
	struct stat st;
	size_t len = 0;
	ssize_t r;
	int fd;

	if (e->size > HX_MW_SEARCH_FILE_MAX)
		return -1;
	fd = openat(e->dirfd, e->name,
		    O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -2;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	for (;;) {
		r = read(fd, s->buf + len, HX_MW_SEARCH_FILE_MAX + 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len > HX_MW_SEARCH_FILE_MAX)
			break;
	}
	close(fd);
	if (r < 0)
		return -2;
	if (len > HX_MW_SEARCH_FILE_MAX) /* it grew */
		return -1;
	if (memchr(s->buf, 0, len < HX_MW_SNIFF ? len : HX_MW_SNIFF))
		return -1;
	return (ssize_t)len;
}

static int add_match(struct search *s, const char *rel, size_t line,
		     const char *p, size_t n)
{
	json_t *o;

	if (n > HX_MW_MATCH_TEXT)
		n = hx_mw_text_utf8_cut(p, HX_MW_MATCH_TEXT);
	o = json_pack("{s:o, s:I, s:o}", "path",
		      hx_mw_args_string_lossy(rel, strlen(rel), NULL), "line",
		      (json_int_t)line, "text",
		      hx_mw_args_string_lossy(p, n, NULL));
	if (!o || json_array_append_new(s->out, o) < 0)
		return -1;
	return 0;
}

/* Past the search's time: it stops, truncated and timed_out. */
static bool out_of_time(struct search *s)
{
	if (hx_mono_ms() < s->deadline)
		return false;
	s->truncated = s->timed_out = true;
	return true;
}

static int grep(struct search *s, const struct hx_mw_walk_entry *e, size_t len)
{
	size_t off = 0, line = 1;

	while (off < len) {
		if (out_of_time(s))
			return 1;
		const char *nl = memchr(s->buf + off, '\n', len - off);
		size_t end = nl ? (size_t)(nl - s->buf) : len;
		regmatch_t m = {.rm_so = 0, .rm_eo = (regoff_t)(end - off)};

		if (end - off > HX_MW_SEARCH_LINE_MAX) {
			s->long_lines++;
			m.rm_eo = 0; /* not matched: counted */
		}
		/* REG_STARTEND: the line as it is, NUL bytes and all. */
		if (m.rm_eo &&
		    !regexec(&s->re, s->buf + off, 1, &m, REG_STARTEND)) {
			if (json_array_size(s->out) >= s->max) {
				s->truncated = true;
				return 1;
			}
			if (add_match(s, e->rel, line, s->buf + off,
				      end - off) < 0)
				return 1;
		}
		off = end + 1;
		line++;
	}
	return 0;
}

static int on_entry(void *ctx, const struct hx_mw_walk_entry *e)
{
	struct search *s = ctx;
	ssize_t len;

	if (out_of_time(s))
		return 1;
	if (e->type != 'f' || !glob_ok(s, e->rel))
		return 0;
	if (++s->seen > HX_MW_SEARCH_FILES_MAX) {
		s->truncated = true;
		return 1;
	}
	if (!s->has_re) {
		if (json_array_size(s->out) >= s->max) {
			s->truncated = true;
			return 1;
		}
		json_array_append_new(
		    s->out,
		    hx_mw_args_string_lossy(e->rel, strlen(e->rel), NULL));
		return 0;
	}
	len = load(s, e);
	if (len == -2)
		s->unreadable++;
	if (len < 0)
		return 0;
	s->scanned++;
	return grep(s, e, (size_t)len);
}

static void on_error(void *ctx, const char *rel, int err)
{
	struct search *s = ctx;

	(void)rel;
	(void)err;
	s->unreadable++;
}

/* Where pattern has a back-reference (\1 to \9 outside a bracket
 * expression, a glibc extension to ERE), or -1. Matching one can take
 * time exponential in the line's length: refused, not bounded. */
static long backref_at(const char *p)
{
	for (const char *c = p; *c; c++) {
		if (*c == '\\') {
			if (c[1] >= '1' && c[1] <= '9')
				return c - p;
			if (c[1])
				c++;
		} else if (*c == '[') {
			c++;
			c += *c == '^';
			c += *c == ']';
			while (*c && *c != ']') {
				if (*c == '[' && (c[1] == ':' || c[1] == '.' ||
						  c[1] == '=')) {
					const char *e = strchr(c + 2, c[1]);

					c = e && e[1] == ']' ? e + 1 : c;
				}
				c++;
			}
			if (!*c)
				return -1;
		}
	}
	return -1;
}

static int setup(json_t *args, struct search *s, struct hx_mw_walk *w,
		 json_t **res)
{
	static const char *const keys[] = {
	    "path",	   "glob",	     "pattern", "ignore_case",
	    "max_results", "include_hidden", NULL};
	const char *glob = NULL, *pattern = NULL, *why;
	size_t gn = 0, pn = 0, at;
	bool icase;
	char err[256];
	int rc, grc, prc;

	if ((rc = hx_mw_args_only(args, keys, res)) < 0 ||
	    (grc = rc = hx_mw_args_str(args, "glob", &glob, &gn, res)) < 0 ||
	    (prc = rc = hx_mw_args_str(args, "pattern", &pattern, &pn, res)) <
		0 ||
	    (rc = hx_mw_args_bool(args, "ignore_case", false, &icase, res)) <
		0 ||
	    (rc = hx_mw_args_bool(args, "include_hidden", false, &w->hidden,
				  res)) < 0 ||
	    (rc = hx_mw_args_uint(args, "max_results", HX_MW_RESULTS_DEFAULT, 1,
				  HX_MW_RESULTS_MAX, &s->max, NULL, res)) < 0)
		return rc;
	if (!grc && !prc)
		return hx_mw_args_error(res, EINVAL,
					"give a glob, a pattern, or both");
	if (grc) {
		if (strlen(glob) != gn || gn > PATTERN_MAX)
			return hx_mw_args_error(res, EINVAL,
						"glob: a NUL byte, or longer "
						"than %u bytes",
						PATTERN_MAX);
		if (asprintf(&s->glob, "/%s", glob) < 0) {
			s->glob = NULL;
			return hx_mw_args_error(res, ENOMEM, "out of memory");
		}
		if (hx_glob_validate(s->glob, &at, &why) < 0)
			return hx_mw_args_error(res, EINVAL,
						"glob \"%s\": %s at byte %zu",
						glob, why, at ? at - 1 : 0);
	}
	if (prc) {
		if (strlen(pattern) != pn || pn > PATTERN_MAX)
			return hx_mw_args_error(res, EINVAL,
						"pattern: a NUL byte, or "
						"longer than %u bytes",
						PATTERN_MAX);
		if (backref_at(pattern) >= 0)
			return hx_mw_args_error(
			    res, EINVAL,
			    "pattern: a back-reference at byte %ld; they are "
			    "not supported (matching one has no time bound)",
			    backref_at(pattern));
		rc = regcomp(&s->re, pattern,
			     REG_EXTENDED | REG_NEWLINE | REG_NOSUB |
				 (icase ? REG_ICASE : 0));
		if (rc) {
			regerror(rc, &s->re, err, sizeof(err));
			return hx_mw_args_error(
			    res, EINVAL, "pattern \"%s\": %s", pattern, err);
		}
		s->has_re = true;
		s->buf = malloc(HX_MW_SEARCH_FILE_MAX + 1);
		if (!s->buf)
			return hx_mw_args_error(res, ENOMEM, "out of memory");
	}
	return 0;
}

int hx_mw_search_run(json_t *args, json_t **res)
{
	struct search s = {0};
	struct hx_mw_walk w = {.depth = HX_MW_DEPTH_MAX,
			       .entry = on_entry,
			       .error = on_error,
			       .ctx = &s};
	const char *path;
	int rc;

	if ((rc = hx_mw_args_path(args, "path", &path, res)) < 0 ||
	    (rc = setup(args, &s, &w, res)) < 0)
		goto out;
	s.deadline = hx_mono_ms() + HX_MW_SEARCH_TIME_MS;
	s.out = json_array();
	if (!s.out) {
		rc = hx_mw_args_error(res, ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = hx_mw_walk_run(path, &w, res)) < 0)
		goto out;
	rc = 0;
	if (s.has_re)
		*res = json_pack("{s:O, s:I, s:b, s:I}", "matches", s.out,
				 "files_scanned", (json_int_t)s.scanned,
				 "truncated", s.truncated || w.capped,
				 "unreadable", (json_int_t)s.unreadable);
	else
		*res = json_pack("{s:O, s:b, s:I}", "files", s.out, "truncated",
				 s.truncated || w.capped, "unreadable",
				 (json_int_t)s.unreadable);
	if (*res && s.timed_out)
		json_object_set_new(*res, "timed_out", json_true());
	if (*res && s.long_lines)
		json_object_set_new(*res, "long_lines_skipped",
				    json_integer((json_int_t)s.long_lines));
	if (!*res)
		rc = hx_mw_args_error(res, ENOMEM, "out of memory");
out:
	json_decref(s.out);
	if (s.has_re)
		regfree(&s.re);
	free(s.glob);
	free(s.buf);
	return rc;
}
