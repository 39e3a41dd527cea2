/* The metrics where a scraper reads them: an HTTP endpoint (GET
 * /metrics) on a loopback port or a Unix socket (--metrics), and a
 * file for node_exporter's textfile collector (--metrics-file),
 * rewritten whole (a new file renamed over it) every few seconds and
 * at the end. One thread of its own: a slow or hostile client delays
 * other scrapes, never the agent.
 *
 * Lifecycle: hx_metrics_listen (before the agent starts: a taken port
 * is an error then, and the address goes in session_start) ->
 * hx_metrics_serve_start (after the fork: no thread at fork time) ->
 * hx_metrics_serve_stop (the last file written, the socket removed). */
#ifndef HX_METRICS_SERVE_H
#define HX_METRICS_SERVE_H

#include <stddef.h>

struct hx_metrics;
struct hx_metrics_serve;

/* The socket for addr: "unix:PATH" or an absolute PATH (made 0600; an
 * existing file is an error), or [HOST:]PORT with HOST 127.0.0.1 (the
 * default), another 127/8 address, [::1] or localhost; port 0 is one
 * the kernel picks. Any other host is refused: the metrics are no
 * business of the network. Fills *fd and bound ("127.0.0.1:40123",
 * "unix:/run/x.sock"); 0, or -errno with a message in err. */
int hx_metrics_listen(const char *addr, int *fd, char *bound, size_t boundlen,
		      char *err, size_t errlen);

/* Serves m on lfd (-1: none; unix_path: the socket's file, removed at
 * the end, or NULL) and writes file (NULL: none). Takes lfd. 0 or
 * -errno. */
int hx_metrics_serve_start(struct hx_metrics *m, int lfd, const char *unix_path,
			   const char *file, struct hx_metrics_serve **out);

/* Stops the thread, writes the file a last time, removes the socket.
 * NULL: nothing. */
void hx_metrics_serve_stop(struct hx_metrics_serve *s);

/* The file's content as the textfile collector must find it: written
 * to path + ".tmp", then renamed. 0 or -errno. */
int hx_metrics_write_file(struct hx_metrics *m, const char *path);

#endif
