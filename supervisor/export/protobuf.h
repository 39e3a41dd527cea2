/* The protocol buffers wire format, written: what the OTLP export
 * needs (varints, fixed64, length-delimited bytes and messages), into
 * a growing buffer. A field is written only when it is given; a failed
 * allocation is remembered (oom) and makes the rest nothing. */
#ifndef HX_PROTOBUF_H
#define HX_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hx_pb {
	unsigned char *p;
	size_t len, cap;
	bool oom;
};

void hx_pb_uint(struct hx_pb *b, unsigned field, uint64_t v); /* varint */
void hx_pb_fixed64(struct hx_pb *b, unsigned field, uint64_t v);
void hx_pb_bytes(struct hx_pb *b, unsigned field, const void *p, size_t n);
void hx_pb_string(struct hx_pb *b, unsigned field, const char *s);
/* sub as an embedded message (its bytes, length first). */
void hx_pb_message(struct hx_pb *b, unsigned field, const struct hx_pb *sub);
void hx_pb_free(struct hx_pb *b);

#endif
