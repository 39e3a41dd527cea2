/* The one line a denial prints on the agent's stderr:
 *   harness: denied <op> <target> (rule <rule>)
 *   harness: denied <op> <target> (supervisor unreachable)
 * Formatted without stdio or malloc and written with one write(2). */
#ifndef HX_SHIM_NOTICE_H
#define HX_SHIM_NOTICE_H

#include <stddef.h>
#include <sys/socket.h>

#include "../policy/types.h"

/* "exec", "read", "write", ...; "event" when out of range. */
const char *hx_notice_op_name(unsigned op);

/* Formats the notice (newline included, NUL-terminated, truncated to
 * cap). rule NULL means the supervisor could not be asked. Returns the
 * length written. */
size_t hx_notice_format(char *buf, size_t cap, enum hx_op op,
			const char *target, const char *rule);

/* Formats and writes it to fd 2. */
void hx_notice_write(enum hx_op op, const char *target, const char *rule);

/* A sockaddr as notice text: "1.2.3.4:80", "[::1]:443", the unix path,
 * "@name" for abstract sockets, "family N" otherwise. */
void hx_addr_format(const struct sockaddr *sa, size_t len, char *buf,
		    size_t cap);

#endif
