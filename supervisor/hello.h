/* The arguments of a HELLO's process_start record (server.c): what
 * the kernel shows of the process, and its claim where it differs. */
#ifndef HX_HELLO_H
#define HX_HELLO_H

#include <jansson.h>
#include <stddef.h>

struct hx_msg;

/* Of a command line read: the kernel takes argv and envp up to 6 MiB. */
#define HX_HELLO_CMD_MAX (6u << 20)

/* A HELLO is the process's claim: its record says what the kernel
 * shows (exe, and cmd: /proc/<pid>/cmdline read now, len bytes, taken
 * over; NULL: nothing), and the claim too where it differs (m, argv:
 * its words). A field the kernel did not show is the claim's, named in
 * rec's "unverified". */
void hx_hello_args(json_t *rec, json_t *args, char *cmd, size_t len,
		   const char *exe, const struct hx_msg *m,
		   const char *const *argv);

#endif
