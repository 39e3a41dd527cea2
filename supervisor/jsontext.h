/* JSON text of jansson values, written as json_dumps(JSON_COMPACT)
 * writes it, byte for byte, without its cost: jansson checks every
 * object and array for a loop through a hash table keyed by the
 * value's address printed with snprintf, and a record of 500 bytes
 * took 7 us to dump. The audit log's lines are written with it. */
#ifndef HX_JSONTEXT_H
#define HX_JSONTEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A growing buffer; failed once an allocation failed or a string was not
 * UTF-8 (then nothing more is added and the text is not to be used). */
struct hx_jtext {
	char *p;
	size_t len, cap;
	bool failed;
};

void hx_jtext_put(struct hx_jtext *t, const char *s, size_t n);
/* s as a JSON string, quoted and escaped as jansson does. */
void hx_jtext_string(struct hx_jtext *t, const char *s, size_t n);
/* v as json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) writes it. */
void hx_jtext_value(struct hx_jtext *t, const json_t *v);

#endif
