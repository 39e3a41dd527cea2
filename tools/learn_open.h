/* harness-policy learn: what the sessions' own policy allowed that the
 * default's protections (include: default-protections) refuse or ask.
 * A learned policy keeps every such rule but for the patterns that
 * refuse a call the run was allowed: the rule is disabled and the rest
 * of it copied. */
#ifndef HX_LEARN_OPEN_H
#define HX_LEARN_OPEN_H

#include <jansson.h>
#include <stdio.h>

struct hx_learn_open;

struct hx_learn_open *hx_learn_open_new(void);
void hx_learn_open_free(struct hx_learn_open *o);

/* A session starts (its session_start record): the protections
 * composed with its $CWD, $HOME and $TMPDIR. -1 on a policy error
 * (said on err). */
int hx_learn_open_session(struct hx_learn_open *o, json_t *start, FILE *err);

/* rec is a call the session's policy allowed: the protection's rule and
 * pattern that would refuse it are noted, with rec as an example. */
void hx_learn_open_note(struct hx_learn_open *o, json_t *rec);

/* The policy's disable: key for the rules noted, commented with what
 * needed each; nothing when none was. */
void hx_learn_open_disable(const struct hx_learn_open *o, FILE *out);

/* The rest of each noted rule of section ("files", "exec", "network"),
 * copied, with its origin; how many rules were written. */
size_t hx_learn_open_rules(const struct hx_learn_open *o, FILE *out,
			   const char *section);

#endif
