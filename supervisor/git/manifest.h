/* The session manifest: every file created, modified or deleted between
 * the base commit and the final tree, with its SHA-256 (of the content
 * committed; none for a deletion) and the process that last wrote it
 * (pid, exe, argv, audit seq), from the provenance tracker. */
#ifndef HX_MANIFEST_H
#define HX_MANIFEST_H

#include <stddef.h>

struct hx_prov;

/* Builds the manifest as JSON text (sorted keys off, indent 2, with a
 * final newline) into *out (the caller frees it). commondir: the common
 * git dir; base_hex: a commit; tree_hex: the final tree. Returns 0 or
 * -errno with a message in err. */
int hx_manifest_build(const char *commondir, const char *session,
		      const char *base_hex, const char *tree_hex,
		      const struct hx_prov *prov, char **out, char *err,
		      size_t errlen);

#endif
