/* The JSON Schema keywords harness-mcp's own tool schemas use
 * (tools.json), checked against a client's arguments before anything
 * else looks at them: type (a name or a list), properties, required,
 * additionalProperties (false or a schema), enum, minimum, maximum,
 * minLength and maxLength (in code points), minItems, maxItems, items.
 * A keyword outside that set is an error of the schema, found by the
 * unit test over tools.json, never ignored at run time. Pure. */
#ifndef HX_MCP_SCHEMA_H
#define HX_MCP_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

struct json_t;

/* Whether v satisfies schema; if not, err gets "where: what", where
 * the dotted path from `at` ("arguments.edits[2].search"). */
bool hx_schema_check(const struct json_t *schema, const struct json_t *v,
		     const char *at, char *err, size_t errlen);

/* Whether schema uses only the keywords above (err: the first other). */
bool hx_schema_supported(const struct json_t *schema, char *err, size_t errlen);

#endif
