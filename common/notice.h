/* The one line a denial prints on the agent's stderr, naming the rule
 * (and where it is written) and what to do, for a person and for an
 * agent that reads its stderr and would retry:
 *   harness: denied <op> <target>[ -> <target2>][: <argv>] (rule <rule>[ at
 * <file:line>]; the policy refuses it: do not retry) harness: not approved:
 * <op> <target>... (rule <rule>[ at ...]; it needs a person's approval: ask the
 * user, do not retry) harness: denied <op> <target> (supervisor unreachable)
 * Formatted without stdio or malloc and written with one write(2). */
#ifndef HX_COMMON_NOTICE_H
#define HX_COMMON_NOTICE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "common/types.h"

/* What a refusal says. rule NULL: the supervisor could not be asked. */
struct hx_notice {
	enum hx_op op;
	enum hx_verdict verdict; /* deny, or ask (refused for now) */
	const char *target;	 /* path or address */
	const char *target2;	 /* rename's destination, link's existing
				  * file, symlink's text (other ops': not
				  * printed); or NULL */
	bool spelled;		 /* target is an address's text, already
				  * terminal-safe (sockaddr.h): not escaped
				  * again */
	const char *const *argv; /* exec: NULL-terminated, or NULL */
	const char *rule;
	const char *origin; /* "file:line" of the rule, or NULL */
};

/* A line's bytes at most (the shim's, on its stack), and its rule's
 * part: what was refused is cut first, never the rule and the advice. */
#define HX_NOTICE_LINE 2048
#define HX_NOTICE_WHY  512

/* Formats the notice (newline included, NUL-terminated, truncated to
 * cap: what was refused is cut first, marked "..."). Returns the
 * length written. Pure: the supervisor formats the
 * notices of kernel-layer refusals with it too. */
size_t hx_notice_format(char *buf, size_t cap, const struct hx_notice *n);

/* s with every byte but printable ASCII as \xNN and '\\' doubled
 * (NUL-terminated, truncated to cap): agent-chosen text for a terminal.
 * Returns the length written. The notice escapes its path, argv and
 * rule so. */
size_t hx_text_escape(char *buf, size_t cap, const char *s);

/* hx_text_escape into buf, returning buf ("" for NULL): for a printf
 * argument. Every human output of the tools prints a record's strings
 * through it (the eleventh attack review: a path's ESC [1A ESC [2K,
 * OSC 8 link, right-to-left override or newline rewrote what a
 * reviewer read in harness-audit summary). */
const char *hx_text_safe(char *buf, size_t cap, const char *s);

/* True when process pid's last notice was this one (then it is not
 * printed again); remembers it otherwise. */
bool hx_notice_repeat(const struct hx_notice *n, long pid);

/* Formats and writes it to fd 2, once (hx_notice_repeat). */
void hx_notice_write(const struct hx_notice *n);

#endif
