/* libFuzzer target over a repository's git configuration, which the
 * agent writes (supervisor/gitconf.c): the check of a config file the
 * agent copies or renames in (whether it names code git would run:
 * continued lines, NULs, long lines, sections on one line), and the
 * start's reading of it for the programs and includes it names, from a
 * file of the input (an include of itself read again, to the depth
 * allowed). Nothing may crash, hang or read past the input. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/gitconf.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/fuzz_gitconf.XXXXXX", file[64];

static void cleanup(void)
{
	unlink(file);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hx_gitconf c;
	char *copy = malloc(size ? size : 1);
	FILE *f;

	if (!copy)
		return 0;
	/* an exact-size copy: a read past it is ASan's */
	memcpy(copy, data, size);
	(void)hx_gitconf_names_code(copy, size);
	free(copy);
	if (!file[0]) {
		if (!mkdtemp(dir))
			abort();
		snprintf(file, sizeof(file), "%s/config", dir);
		atexit(cleanup);
	}
	if (size > HX_GITCONF_COPY_MAX || !(f = fopen(file, "we")))
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	c.n = c.nsecrets = c.nparsed = c.nread = 0;
	parse(&c, file, "/work/p", "/home/u", 0);
	for (size_t i = 0; i < c.n; i++)
		if (strlen(c.globs[i]) >= sizeof(c.globs[i]))
			abort();
	return 0;
}
