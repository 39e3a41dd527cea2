/* A control socket of the supervisor: a SOCK_SEQPACKET listener in the
 * session dir through which another terminal asks for a checkpoint
 * (`harness-exec checkpoint`) or answers a question (`harness-exec
 * approve`, ask.h). One request, one reply, per connection.
 *
 * Only the user's own processes that are not part of the agent's tree
 * are served: the agent cannot reach the session dir through the policy,
 * and a peer that descends from the supervisor is refused anyway. */
#ifndef HX_CONTROL_H
#define HX_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

struct hx_server;
struct hx_control;

/* Handles one request (a NUL-terminated line) of the user's process pid
 * and writes the reply. */
typedef void (*hx_control_fn)(void *arg, pid_t pid, const char *request,
			      char *reply, size_t size);

/* Binds path (0600) and registers it with srv. Returns 0 or -errno. */
int hx_control_listen(struct hx_server *srv, const char *path, hx_control_fn fn,
		      void *arg, struct hx_control **out);
/* Closes the listener and unlinks its file. NULL is a no-op. */
void hx_control_free(struct hx_control *c);

/* Client side: sends request to the socket at path and waits up to
 * timeout_ms for the reply. Returns 0 or -errno. */
int hx_control_request(const char *path, const char *request, char *reply,
		       size_t size, int timeout_ms);

#endif
