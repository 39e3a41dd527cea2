/* The embedded policies' YAML documents packed at build time
 * (policy/yamlpack.h): each unpacks into the document libyaml makes of
 * the same text, node for node, marks included (the loader's errors
 * name them); a blob that is not one is refused, and the loader then
 * parses the text. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "policy/policy.h"
#include "policy/yamlpack.h"
#include "tests/unit/check_main.h"

static void parse(const char *text, size_t len, yaml_document_t *d)
{
	yaml_parser_t ps;

	ck_assert(yaml_parser_initialize(&ps));
	yaml_parser_set_input_string(&ps, (const unsigned char *)text, len);
	ck_assert(yaml_parser_load(&ps, d));
	yaml_parser_delete(&ps);
}

static void same_mark(yaml_mark_t a, yaml_mark_t b)
{
	ck_assert_uint_eq(a.index, b.index);
	ck_assert_uint_eq(a.line, b.line);
	ck_assert_uint_eq(a.column, b.column);
}

static void same_node(const yaml_node_t *a, const yaml_node_t *b)
{
	ck_assert_int_eq(a->type, b->type);
	ck_assert_str_eq((const char *)a->tag, (const char *)b->tag);
	same_mark(a->start_mark, b->start_mark);
	same_mark(a->end_mark, b->end_mark);
	if (a->type == YAML_SCALAR_NODE) {
		ck_assert_uint_eq(a->data.scalar.length, b->data.scalar.length);
		ck_assert(!memcmp(a->data.scalar.value, b->data.scalar.value,
				  a->data.scalar.length + 1));
		ck_assert_int_eq(a->data.scalar.style, b->data.scalar.style);
	} else if (a->type == YAML_SEQUENCE_NODE) {
		ptrdiff_t n =
		    a->data.sequence.items.top - a->data.sequence.items.start;

		ck_assert_int_eq(a->data.sequence.style,
				 b->data.sequence.style);
		ck_assert_int_eq(n, b->data.sequence.items.top -
					b->data.sequence.items.start);
		for (ptrdiff_t i = 0; i < n; i++)
			ck_assert_int_eq(a->data.sequence.items.start[i],
					 b->data.sequence.items.start[i]);
	} else {
		ptrdiff_t n =
		    a->data.mapping.pairs.top - a->data.mapping.pairs.start;

		ck_assert_int_eq(a->data.mapping.style, b->data.mapping.style);
		ck_assert_int_eq(n, b->data.mapping.pairs.top -
					b->data.mapping.pairs.start);
		for (ptrdiff_t i = 0; i < n; i++) {
			ck_assert_int_eq(a->data.mapping.pairs.start[i].key,
					 b->data.mapping.pairs.start[i].key);
			ck_assert_int_eq(a->data.mapping.pairs.start[i].value,
					 b->data.mapping.pairs.start[i].value);
		}
	}
}

static void same_doc(const yaml_document_t *a, const yaml_document_t *b)
{
	ptrdiff_t n = a->nodes.top - a->nodes.start;

	ck_assert_int_eq(n, b->nodes.top - b->nodes.start);
	ck_assert_int_eq(a->start_implicit, b->start_implicit);
	ck_assert_int_eq(a->end_implicit, b->end_implicit);
	same_mark(a->start_mark, b->start_mark);
	same_mark(a->end_mark, b->end_mark);
	for (ptrdiff_t i = 0; i < n; i++)
		same_node(a->nodes.start + i, b->nodes.start + i);
}

/* The build's blob is the text's document: the default and each
 * built-in profile (a blob left from an older YAML file fails here). */
START_TEST(embedded_blobs_are_their_texts)
{
	const char *name;
	size_t n = 0;

	for (size_t i = 0;; i++) {
		const char *text;
		const void *blob;
		size_t len, size;
		yaml_document_t parsed, unpacked;

		if (i == 0) {
			text = hx_policy_default_text(&len);
		} else if ((name = hx_profile_name(i - 1))) {
			text = hx_profile_text(name, &len);
		} else {
			break;
		}
		blob = hx_yamlpack_embedded(text, &size);
		ck_assert_ptr_nonnull(blob);
		parse(text, len, &parsed);
		ck_assert_int_eq(hx_yamlpack_unpack(blob, size, &unpacked), 0);
		same_doc(&unpacked, &parsed);
		hx_yamlpack_free(&unpacked);
		yaml_document_delete(&parsed);
		n++;
	}
	ck_assert_uint_ge(n, 2);
	ck_assert_ptr_null(hx_yamlpack_embedded("version: 1\n", &n));
}
END_TEST

static const char every_kind[] =
    "%YAML 1.1\n---\n"
    "plain: a b\nsingle: 'it''s'\ndouble: \"tab\\there\\u00e9\"\n"
    "literal: |\n  two\n  lines\nfolded: >\n  one\n  line\n"
    "flow_seq: [1, two, {k: v}]\nflow_map: {a: 1, b: [x]}\n"
    "block:\n  - - nested\n  - !!str 5\n  - ~\nempty: \"\"\n"
    "...\n";

/* Every node kind and style, tags, a document with its markers:
 * packed and unpacked, the same document. */
START_TEST(round_trip_of_every_kind)
{
	yaml_document_t parsed, unpacked;
	size_t size;
	void *blob =
	    hx_yamlpack_pack(every_kind, sizeof(every_kind) - 1, &size);

	ck_assert_ptr_nonnull(blob);
	parse(every_kind, sizeof(every_kind) - 1, &parsed);
	ck_assert_int_eq(hx_yamlpack_unpack(blob, size, &unpacked), 0);
	same_doc(&unpacked, &parsed);
	hx_yamlpack_free(&unpacked);
	yaml_document_delete(&parsed);
	free(blob);
	/* Not one document: no blob (the build stops). */
	ck_assert_ptr_null(hx_yamlpack_pack("a: [", 4, &size));
	ck_assert_ptr_null(hx_yamlpack_pack("a: 1\n---\nb: 2\n", 14, &size));
	ck_assert_ptr_null(hx_yamlpack_pack("", 0, &size));
}
END_TEST

/* A blob cut short, grown, or with any one byte of its header or node
 * table changed is refused or unpacks to nodes that stay inside it:
 * every item and pair names a node, every string ends in the pool. */
START_TEST(damaged_blobs_are_refused)
{
	size_t size;
	uint8_t *blob =
		    hx_yamlpack_pack(every_kind, sizeof(every_kind) - 1, &size),
		*copy = malloc(size + 8);
	yaml_document_t d;

	ck_assert_ptr_nonnull(blob);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, blob, size);
	ck_assert_int_eq(hx_yamlpack_unpack(copy, size - 1, &d), -EINVAL);
	ck_assert_int_eq(hx_yamlpack_unpack(copy, size + 4, &d), -EINVAL);
	ck_assert_int_eq(hx_yamlpack_unpack(copy + 1, size - 1, &d), -EINVAL);
	for (size_t i = 0; i < size; i++) {
		for (int bit = 0; bit < 8; bit += 7) {
			memcpy(copy, blob, size);
			copy[i] ^= (uint8_t)(1u << bit);
			if (hx_yamlpack_unpack(copy, size, &d))
				continue;
			for (yaml_node_t *n = d.nodes.start; n < d.nodes.top;
			     n++) {
				if (n->tag)
					ck_assert(memchr(
					    n->tag, 0,
					    size - (size_t)(n->tag - copy)));
				if (n->type == YAML_SCALAR_NODE)
					ck_assert(
					    !n->data.scalar
						 .value[n->data.scalar.length]);
				else if (n->type == YAML_SEQUENCE_NODE)
					for (yaml_node_item_t *it =
						 n->data.sequence.items.start;
					     it < n->data.sequence.items.top;
					     it++)
						ck_assert(
						    *it >= 1 &&
						    *it <= d.nodes.top -
							       d.nodes.start);
				else if (n->type == YAML_MAPPING_NODE)
					for (yaml_node_pair_t *p =
						 n->data.mapping.pairs.start;
					     p < n->data.mapping.pairs.top; p++)
						ck_assert(
						    p->key >= 1 &&
						    p->value >= 1 &&
						    p->key <=
							d.nodes.top -
							    d.nodes.start &&
						    p->value <=
							d.nodes.top -
							    d.nodes.start);
				else
					ck_abort_msg("node type %d", n->type);
			}
			hx_yamlpack_free(&d);
		}
	}
	free(copy);
	free(blob);
}
END_TEST

static Suite *yamlpack_suite(void)
{
	Suite *s = suite_create("yamlpack");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, embedded_blobs_are_their_texts);
	tcase_add_test(tc, round_trip_of_every_kind);
	tcase_add_test(tc, damaged_blobs_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(yamlpack_suite)
