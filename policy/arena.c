/* A bump allocator for the compiled policy: one free for everything. */
#include "policy/policy_int.h"

#include <stdlib.h>
#include <string.h>

struct hx_arena_block {
	struct hx_arena_block *next;
	size_t size, used;
	_Alignas(max_align_t) unsigned char data[];
};

#define HX_ARENA_BLOCK 16384u

void *hx_arena_alloc(struct hx_arena *a, size_t size)
{
	struct hx_arena_block *b = a->head;
	size_t align = _Alignof(max_align_t);

	size = (size + align - 1) & ~(align - 1);
	if (size == 0)
		size = align;
	if (!b || b->size - b->used < size) {
		size_t want = size > HX_ARENA_BLOCK ? size : HX_ARENA_BLOCK;

		b = malloc(sizeof(*b) + want);
		if (!b)
			return NULL;
		b->size = want;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	void *p = b->data + b->used;

	b->used += size;
	memset(p, 0, size);
	return p;
}

char *hx_arena_strndup(struct hx_arena *a, const char *s, size_t n)
{
	char *d = hx_arena_alloc(a, n + 1);

	if (d)
		memcpy(d, s, n);
	return d;
}

char *hx_arena_strdup(struct hx_arena *a, const char *s)
{
	return hx_arena_strndup(a, s, strlen(s));
}

void hx_arena_free(struct hx_arena *a)
{
	struct hx_arena_block *b = a->head, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	a->head = NULL;
}
