/* The embedded policies' YAML documents, parsed at build time. libyaml
 * took 1.6 of the 2 ms a start spent compiling the default policy and
 * its profiles, the same text every time: tools/gen/yamlpack.c packs
 * each document's nodes into a blob (embedded by policy_nodes.S), and
 * the loader unpacks it into the yaml_document_t libyaml would have
 * made, its strings pointing into the blob. A text that is not an
 * embedded one, or a blob that does not check out, is parsed as ever. */
#ifndef HX_POLICY_YAMLPACK_H
#define HX_POLICY_YAMLPACK_H

#include <stddef.h>
#include <yaml.h>

/* text (len bytes, one YAML document) packed into a malloc'd blob of
 * *size bytes; NULL on a parse error or out of memory. */
void *hx_yamlpack_pack(const char *text, size_t len, size_t *size);

/* doc made from a packed blob: 0, or -EINVAL (the blob is not one) or
 * -ENOMEM. Free it with hx_yamlpack_free, never yaml_document_delete. */
int hx_yamlpack_unpack(const void *blob, size_t size, yaml_document_t *doc);
void hx_yamlpack_free(yaml_document_t *doc);

/* The blob packed at build time for an embedded text (the default
 * policy's or a built-in profile's, by address), or NULL. */
const void *hx_yamlpack_embedded(const char *text, size_t *size);

#endif
