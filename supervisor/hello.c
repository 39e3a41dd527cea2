/* The arguments of a HELLO's process_start record; see hello.h. */
#include "supervisor/hello.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "supervisor/record.h"

/* Whether the NUL-separated cmd (len bytes) is the argv v (n words). */
static bool same_argv(const char *cmd, size_t len, const char *const *v,
		      size_t n)
{
	size_t off = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(v[i]) + 1;

		if (off + k > len || memcmp(cmd + off, v[i], k))
			return false;
		off += k;
	}
	return off == len;
}

/* A HELLO is the process's claim: its record says what the kernel
 * shows (the image, /proc/<pid>/cmdline read now), and the claim too
 * where it differs (a program that speaks the protocol itself). A
 * process that exited before its HELLO was read (the shim does not wait
 * for the reply) shows the kernel nothing: a zombie has no image and an
 * empty cmdline; one reaped shows what has its number now, or nothing.
 * Its record then carries the claim, and names those fields in
 * "unverified". cmd: what /proc showed, taken over (NULL: nothing). */
void hx_hello_args(json_t *rec, json_t *args, char *cmd, size_t len,
		   const char *exe, const struct hx_msg *m,
		   const char *const *argv)
{
	const char *path = exe ? exe : m->path.s;
	json_t *unverified = json_array();

	if (cmd && !len) {
		free(cmd);
		cmd = NULL;
	}
	if (path)
		json_object_set_new(args, "path",
				    hx_record_text(rec, "args.path", path));
	if (!exe && path)
		json_array_append_new(unverified, json_string("args.path"));
	if (exe && m->path.s && strcmp(exe, m->path.s))
		json_object_set_new(
		    args, "claimed_path",
		    hx_record_text(rec, "args.claimed_path", m->path.s));
	if (cmd)
		hx_record_cmdline(rec, args, "argv", "args.argv", cmd,
				  len > HX_HELLO_CMD_MAX ? HX_HELLO_CMD_MAX
							 : len);
	if (!cmd && m->nargs) {
		hx_record_argv(rec, args, "argv", "args.argv", argv, m->nargs);
		json_array_append_new(unverified, json_string("args.argv"));
	} else if (m->nargs &&
		   (!hx_msg_has(m, HX_TAG_TRUNCATED) || !m->truncated) &&
		   !same_argv(cmd, len, argv, m->nargs))
		hx_record_argv(rec, args, "claimed_argv", "args.claimed_argv",
			       argv, m->nargs);
	if (json_array_size(unverified))
		json_object_set(rec, "unverified", unverified);
	json_decref(unverified);
	free(cmd);
}
