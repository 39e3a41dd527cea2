/* libFuzzer target over the shell reader and the parts of an exec
 * (policy/shparse.c, policy/cmdview.c): the input is the text of
 * sh -c. Whatever it is, the reading ends, stays within its bounds,
 * frees what it took (ASan), and its invariants hold: a part never has
 * a NULL word, the view's class is its strongest part's, an unreadable
 * script is never read as harmless, and the same text gives the same
 * reading twice. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/cmdview.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct hx_workspace ws = {
    .roots = {"/work/proj", "/work/proj", "/tmp/s", NULL},
    .home = "/home/u",
    .resolve = NULL,
    .resolve_arg = NULL};

static void view(const char *text, struct hx_cmd_view *v)
{
	static const char *argv[4];

	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = text;
	hx_cmdview_build(v, "/bin/sh", argv, 3, "/work/proj", &ws);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct hx_cmd_view a, b;
	struct hx_sh_script s;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (hx_sh_parse(text, size, "/home/u", &s) == 0) {
		if (s.ncmds > HX_SH_MAX_CMDS)
			abort();
		for (size_t i = 0; i < s.ncmds; i++)
			for (size_t k = 0; k <= s.cmds[i].argc; k++)
				if ((k < s.cmds[i].argc) != !!s.cmds[i].argv[k])
					abort();
		hx_sh_free(&s);
	}
	view(text, &a);
	view(text, &b);
	if (a.nparts != b.nparts || a.cls != b.cls || a.nparts == 0 ||
	    a.nparts > HX_VIEW_MAX_PARTS)
		abort();
	for (size_t i = 0; i < a.nparts; i++) {
		if (a.parts[i].cls > a.cls || a.parts[i].cls != b.parts[i].cls)
			abort();
		if (a.parts[i].cls == HX_CLASS_UNPARSABLE &&
		    a.cls < HX_CLASS_UNPARSABLE)
			abort();
		for (size_t k = 0; k < a.parts[i].argc; k++)
			if (!a.parts[i].argv[k])
				abort();
	}
	hx_cmdview_free(&a);
	hx_cmdview_free(&b);
	free(text);
	return 0;
}
