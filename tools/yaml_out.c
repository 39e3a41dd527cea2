/* YAML strings as learn writes them; see yaml_out.h. */
#include "tools/yaml_out.h"

#include <stdint.h>
#include <string.h>

#include "supervisor/fmt.h"

/* A YAML double-quoted scalar that reads back as s, byte for byte:
 * everything but printable ASCII is an escape. A character written raw
 * is read as the YAML reader takes it, and it takes NEL (U+0085), a C1
 * control valid in UTF-8, for a line break and folds it into a space:
 * an audit run's program "/p/a<NEL>b" was learned as "/p/a b *", the
 * program /p/a with "b" first (the eleventh review's split, spelled so;
 * the seventeenth attack review). A byte that is no UTF-8 (records
 * escape those) is U+FFFD, which names nothing. */
void hx_yaml_quoted(FILE *out, const char *s)
{
	size_t n = strlen(s), k;
	uint32_t cp;

	fputc('"', out);
	for (; n; s += k, n -= k) {
		k = hx_utf8_char(s, n, &cp);
		if (!k)
			k = 1, cp = 0xfffd;
		if (cp == '"' || cp == '\\')
			fprintf(out, "\\%c", (char)cp);
		else if (cp >= 0x20 && cp < 0x7f)
			fputc((int)cp, out);
		else if (cp < 0x80)
			fprintf(out, "\\x%02x", cp);
		else if (cp <= 0xffff)
			fprintf(out, "\\u%04x", cp);
		else
			fprintf(out, "\\U%08x", cp);
	}
	fputc('"', out);
}

void hx_yaml_list(FILE *out, const char *key, json_t *arr)
{
	size_t i;
	json_t *v;

	fprintf(out, "    %s: [", key);
	json_array_foreach(arr, i, v)
	{
		fputs(i ? ", " : "", out);
		hx_yaml_quoted(out, json_string_value(v));
	}
	fputs("]\n", out);
}
