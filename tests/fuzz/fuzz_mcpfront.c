/* libFuzzer target over what harness-mcp's front takes from a client
 * before the policy sees it: a tool's arguments (any JSON) through the
 * schema subset and the checks a schema cannot make. Every input is
 * taken with every path absolute, or refused with a reason; never a
 * crash. Input: a selector byte (the tool), then the arguments. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/mcp/tools.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct hx_tool *all;
	json_t *args, *out;
	const char *path;
	char err[512];
	size_t n;

	if (size < 1 || hx_tools_load())
		return 0;
	all = hx_tools_all(&n);
	args = json_loadb((const char *)data + 1, size - 1,
			  JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (!args)
		return 0;
	err[0] = '\0';
	if (hx_tool_prepare(&all[data[0] % n], args, "/p", &out, err,
			    sizeof(err))) {
		path = hx_tool_path(&all[data[0] % n], out);
		if (path && path[0] != '/')
			abort(); /* the worker takes absolute paths only */
		json_decref(out);
	} else if (!err[0] || out) {
		abort(); /* a refusal says why, and gives nothing */
	}
	json_decref(args);
	return 0;
}
