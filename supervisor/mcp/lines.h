/* Newline-delimited messages on a non-blocking fd, both ways: MCP's
 * stdio transport and the worker's socket. Input is bounded: a line
 * longer than the limit is reported once (HX_LINES_TOO_LONG) and its
 * bytes are dropped up to its newline, so one oversized message costs
 * that message only. Output is queued and written as the fd takes it,
 * so a client that does not read never blocks the supervisor's loop;
 * past out_max queued bytes the peer is given up (hx_lines_write
 * fails). */
#ifndef HX_MCP_LINES_H
#define HX_MCP_LINES_H

#include <stdbool.h>
#include <stddef.h>

struct hx_lines {
	int in_fd, out_fd;
	char *in;
	size_t in_len, in_cap, in_max;
	size_t used;   /* of in, by the line last returned */
	bool skipping; /* inside a line past in_max */
	bool eof;
	char *out;
	size_t out_len, out_off, out_max;
};

enum hx_lines_got {
	HX_LINES_NONE = 0, /* nothing complete yet */
	HX_LINES_LINE,	   /* *line (NUL-terminated, no '\n'), *len */
	HX_LINES_TOO_LONG, /* a line was cut: answer it, read on */
	HX_LINES_EOF,	   /* the peer closed (or a read error) */
};

/* in_max: longest line; out_max: most bytes queued. */
void hx_lines_init(struct hx_lines *l, int in_fd, int out_fd, size_t in_max,
		   size_t out_max);
void hx_lines_free(struct hx_lines *l);

/* Reads what in_fd has (once), then returns the next complete line;
 * call until HX_LINES_NONE. The line is valid until the next call. */
enum hx_lines_got hx_lines_next(struct hx_lines *l, char **line, size_t *len);

/* Queues s and a newline and writes what the fd takes. 0, or -EPIPE /
 * -ENOBUFS (past out_max) / -errno: the peer is lost. */
int hx_lines_write(struct hx_lines *l, const char *s, size_t n);
/* Writes more of the queue (EPOLLOUT). 0, or -errno. */
int hx_lines_flush(struct hx_lines *l);
/* Whether bytes wait to be written. */
bool hx_lines_pending(const struct hx_lines *l);

#endif
