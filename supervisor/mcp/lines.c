/* Newline-delimited messages on non-blocking fds; see lines.h. */
#define _GNU_SOURCE
#include "supervisor/mcp/lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_CHUNK 65536

void hx_lines_init(struct hx_lines *l, int in_fd, int out_fd, size_t in_max,
		   size_t out_max)
{
	memset(l, 0, sizeof(*l));
	l->in_fd = in_fd;
	l->out_fd = out_fd;
	l->in_max = in_max;
	l->out_max = out_max;
}

void hx_lines_free(struct hx_lines *l)
{
	free(l->in);
	free(l->out);
	l->in = l->out = NULL;
	l->in_len = l->in_cap = l->out_len = l->out_off = 0;
}

/* One read of what in_fd has: 1 read, 0 nothing now, -1 end. */
static int fill(struct hx_lines *l)
{
	ssize_t n;

	if (l->in_cap - l->in_len < READ_CHUNK) {
		size_t cap = l->in_len + READ_CHUNK + 1;
		char *p = realloc(l->in, cap);

		if (!p)
			return -1;
		l->in = p;
		l->in_cap = cap;
	}
	do
		n = read(l->in_fd, l->in + l->in_len, READ_CHUNK);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n <= 0)
		return -1;
	l->in_len += (size_t)n;
	return 1;
}

enum hx_lines_got hx_lines_next(struct hx_lines *l, char **line, size_t *len)
{
	bool have_read = false;
	char *nl;

	if (l->used) {
		memmove(l->in, l->in + l->used, l->in_len - l->used);
		l->in_len -= l->used;
		l->used = 0;
	}
	for (;;) {
		nl = l->in_len ? memchr(l->in, '\n', l->in_len) : NULL;
		if (nl) {
			l->used = (size_t)(nl - l->in) + 1;
			if (l->skipping || (size_t)(nl - l->in) > l->in_max) {
				l->skipping = false;
				return HX_LINES_TOO_LONG;
			}
			*nl = '\0';
			*line = l->in;
			*len = (size_t)(nl - l->in);
			return HX_LINES_LINE;
		}
		if (l->in_len > l->in_max) { /* drop it, keep looking */
			l->skipping = true;
			l->in_len = 0;
		}
		if (l->eof)
			return HX_LINES_EOF;
		if (have_read)
			return HX_LINES_NONE;
		have_read = true;
		switch (fill(l)) {
		case 0:
			return HX_LINES_NONE;
		case -1:
			l->eof = true;
			break;
		}
	}
}

int hx_lines_flush(struct hx_lines *l)
{
	ssize_t n;

	while (l->out_off < l->out_len) {
		n = write(l->out_fd, l->out + l->out_off,
			  l->out_len - l->out_off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return -errno;
		l->out_off += (size_t)n;
	}
	l->out_off = l->out_len = 0;
	return 0;
}

int hx_lines_write(struct hx_lines *l, const char *s, size_t n)
{
	size_t need;
	char *p;

	if (l->out_off) { /* what is written is gone */
		memmove(l->out, l->out + l->out_off, l->out_len - l->out_off);
		l->out_len -= l->out_off;
		l->out_off = 0;
	}
	need = l->out_len + n + 1;
	if (need > l->out_max)
		return -ENOBUFS;
	p = realloc(l->out, need);
	if (!p)
		return -ENOMEM;
	l->out = p;
	memcpy(l->out + l->out_len, s, n);
	l->out[l->out_len + n] = '\n';
	l->out_len = need;
	return hx_lines_flush(l);
}

bool hx_lines_pending(const struct hx_lines *l)
{
	return l->out_off < l->out_len;
}
