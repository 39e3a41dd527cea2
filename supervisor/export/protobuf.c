/* Protocol buffers, written; see protobuf.h. */
#include "supervisor/export/protobuf.h"

#include <stdlib.h>
#include <string.h>

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2 };

static void put(struct hx_pb *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		unsigned char *q;

		while (cap < b->len + n)
			cap *= 2;
		if (!(q = realloc(b->p, cap))) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void varint(struct hx_pb *b, uint64_t v)
{
	unsigned char buf[10];
	size_t n = 0;

	do {
		buf[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			buf[n] |= 0x80;
		n++;
	} while (v);
	put(b, buf, n);
}

static void tag(struct hx_pb *b, unsigned field, unsigned wire)
{
	varint(b, (uint64_t)field << 3 | wire);
}

void hx_pb_uint(struct hx_pb *b, unsigned field, uint64_t v)
{
	tag(b, field, WIRE_VARINT);
	varint(b, v);
}

void hx_pb_fixed64(struct hx_pb *b, unsigned field, uint64_t v)
{
	unsigned char le[8];

	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)(v >> (8 * i));
	tag(b, field, WIRE_I64);
	put(b, le, 8);
}

void hx_pb_bytes(struct hx_pb *b, unsigned field, const void *p, size_t n)
{
	tag(b, field, WIRE_LEN);
	varint(b, n);
	put(b, p, n);
}

void hx_pb_string(struct hx_pb *b, unsigned field, const char *s)
{
	if (s)
		hx_pb_bytes(b, field, s, strlen(s));
}

void hx_pb_message(struct hx_pb *b, unsigned field, const struct hx_pb *sub)
{
	if (sub->oom)
		b->oom = true;
	hx_pb_bytes(b, field, sub->p ? sub->p : (const unsigned char *)"",
		    sub->len);
}

void hx_pb_free(struct hx_pb *b)
{
	free(b->p);
	*b = (struct hx_pb){0};
}
