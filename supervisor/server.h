/* The supervisor's event loop: epoll over the shim socket, its
 * connections and any other source a layer registers (signalfd, pidfd,
 * the user-notify workers' queue, timers).
 *
 * Every datagram from a shim is decoded strictly; a malformed, oversized
 * or unexpected one is logged as a "protocol_error" record and closes
 * that connection only. Replies are sent without blocking: a client that
 * does not read them is dropped.
 *
 * Lifecycle: hx_server_new -> hx_server_listen -> hx_server_add ... ->
 * hx_server_run_once (repeatedly) -> hx_server_free. */
#ifndef HX_SERVER_H
#define HX_SERVER_H

#include <stdbool.h>
#include <sys/socket.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct hx_server;
struct hx_pipeline;

/* An fd the loop watches; handle is called with the epoll events. The
 * source must outlive its registration. */
struct hx_source {
	int fd;
	void (*handle)(struct hx_server *s, struct hx_source *src,
		       uint32_t events);
	void *arg;
};

#define HX_SERVER_MAX_CONNS 1024

/* Creates the loop for pl (borrowed; its policy gives the read rules
 * sent in HELLO replies). Also arms a 1 s timer that fsyncs the audit
 * log when dirty. The calling thread becomes the loop's thread and holds
 * the loop's lock (hx_server_lock). Returns 0 or -errno. */
int hx_server_new(struct hx_pipeline *pl, struct hx_server **out);

/* The loop's lock. The loop's thread holds it except while
 * hx_server_run_once waits for events; another thread that holds it may
 * do what the loop's thread does (decide with the pipeline, append
 * records) without handing the work over. Every decision and record of
 * the pipeline is made holding it, so they never run on two threads at
 * once (what else it reads, the policy and the mode, does not change).
 * hx_server_unlock lets the lock go for a while (a thread that must wait
 * for those that want it, e.g. to join them). */
void hx_server_lock(struct hx_server *s);
void hx_server_unlock(struct hx_server *s);
/* Binds a SOCK_SEQPACKET listener at path (0600, an existing socket file
 * there is an error) and serves it. Returns 0 or -errno. */
int hx_server_listen(struct hx_server *s, const char *path);
/* A listening Unix socket of type (SOCK_STREAM, SOCK_SEQPACKET, with
 * SOCK_NONBLOCK or not) at path, made 0600 before anyone can reach it
 * (hx_unix_listen: in a private directory, then renamed there); an
 * existing file there is an error (-EADDRINUSE). The fd, or -errno
 * (-ENAMETOOLONG: path does not fit a socket address). */
int hx_server_listen_unix(const char *path, int type, int backlog);
/* Registers / removes another source. */
int hx_server_add(struct hx_server *s, struct hx_source *src, uint32_t events);
int hx_server_del(struct hx_server *s, struct hx_source *src);

/* Waits up to timeout_ms (-1: forever), the loop's lock let go
 * meanwhile, and handles what is ready, holding it.
 * Returns the number of ready sources handled (0 on timeout), or -errno
 * when epoll itself fails. */
int hx_server_run_once(struct hx_server *s, int timeout_ms);

/* Closes every connection, the listener and the timer (the socket file
 * is the caller's to unlink); the caller holds the loop's lock, and no
 * other thread may want it any more. NULL is a no-op. */
void hx_server_free(struct hx_server *s);

/* Serves fd (a SOCK_SEQPACKET socket, taken over: closed on failure) as
 * a shim connection of pid and uid, as if accepted from the listener:
 * the user-notify layer hands in its end of a socketpair when it answers
 * a connect to the session socket itself (unotify_net.c). pidfd: pid's
 * (taken over), or -1. On the loop's thread only. Returns 0 or -errno. */
int hx_server_adopt(struct hx_server *s, int fd, pid_t pid, uid_t uid,
		    int pidfd);

/* A place for a connection, taken before its fds are made (a connect
 * to the session socket answered by the user-notify layer), and handed
 * with fd to hx_server_adopt, which keeps it until the connection
 * closes; given back with hx_server_unreserve when none is adopted.
 * There are HX_SERVER_MAX_CONNS, fewer where RLIMIT_NOFILE would not
 * leave the rest of harness-exec its fds. Thread-safe. */
bool hx_server_reserve(struct hx_server *s);

/* Whether name (getpeername's, len bytes) is our end of one of the
 * connections: a socket of the agent's whose peer it is speaks to us.
 * Takes the loop's lock. */
bool hx_server_conn_named(struct hx_server *s, const void *name, socklen_t len);
void hx_server_unreserve(struct hx_server *s);

/* accept4(lfd) non-blocking and close-on-exec, retrying EINTR and
 * ECONNABORTED. Returns the fd, or -1 (EAGAIN; EMFILE waits for the
 * next wake-up). */
int hx_server_accept(int lfd);

/* Calls fn with the connecting pid whenever a shim connection closes
 * (that process image ended: it exited or exec'd). Not called from
 * hx_server_free. fn NULL: none. */
void hx_server_on_close(struct hx_server *s, void (*fn)(void *arg, int pid),
			void *arg);

struct hx_server_stats {
	uint64_t conns_accepted, conns_open, protocol_errors, messages;
	uint64_t conns_refused; /* for the bound (hx_server_reserve) */
};
void hx_server_stats(const struct hx_server *s, struct hx_server_stats *st);
/* The connections refused for the bound since the last call, as one
 * record (connection_refused, its count): each such process's shim
 * refuses its calls ("supervisor unreachable"), which no other record
 * says. The loop's timer calls it each second; the end, once more. */
void hx_server_say_refused(struct hx_server *s);

#endif
