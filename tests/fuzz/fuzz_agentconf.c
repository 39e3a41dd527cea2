/* libFuzzer target over an agent's own configuration the agent
 * rewrites (Claude Code's ~/.claude.json, supervisor/agentconf.c): the
 * input cut in two where its first byte says, the new file's bytes and
 * the old one's, their MCP servers compared. Nothing may crash or read
 * past them, and a file is always within itself. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "supervisor/agentconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cut = size ? 1 + data[0] % size : 0;
	char *a = malloc(cut ? cut : 1), *b = malloc(size - cut + 1);
	json_error_t err;
	json_t *o;

	if (a && b) {
		/* exact-size copies: a read past one is ASan's */
		memcpy(a, data, cut);
		memcpy(b, data + cut, size - cut);
		(void)hx_agentconf_same_servers(b, size - cut, a, cut);
		(void)hx_agentconf_same_servers(a, cut, NULL, 0);
		/* a configuration (a JSON object) is within itself */
		o = json_loadb(b, size - cut, JSON_REJECT_DUPLICATES, &err);
		if (json_is_object(o) && /* a macro: o read twice */
		    !hx_agentconf_same_servers(b, size - cut, b, size - cut))
			abort();
		json_decref(o);
	}
	free(a);
	free(b);
	return 0;
}
