/* Build-time packer of the embedded policies' YAML documents (see
 * policy/yamlpack.h): yamlpack OUT NAME=FILE... writes, for each, the
 * name and a NUL padded to 4 bytes, the packed size (4 bytes) and the
 * packed document padded to 4 bytes. A file that does not parse stops
 * the build. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/yamlpack.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 &&
	    !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)n + 1)) &&
	    fread(buf, 1, (size_t)n, f) == (size_t)n) {
		buf[n] = '\0';
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static int pad(FILE *out, size_t n)
{
	static const char zero[4];

	return fwrite(zero, 1, (4 - n % 4) % 4, out) == (4 - n % 4) % 4 ? 0
									: -1;
}

int main(int argc, char **argv)
{
	FILE *out;

	if (argc < 2) {
		fprintf(stderr, "usage: yamlpack OUT NAME=FILE...\n");
		return 2;
	}
	if (!(out = fopen(argv[1], "wb"))) {
		perror(argv[1]);
		return 1;
	}
	for (int i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '='), *text;
		size_t len, size;
		void *blob;
		uint32_t n;

		if (!eq) {
			fprintf(stderr, "yamlpack: %s: want NAME=FILE\n",
				argv[i]);
			return 2;
		}
		*eq = '\0';
		if (!(text = slurp(eq + 1, &len))) {
			perror(eq + 1);
			return 1;
		}
		if (!(blob = hx_yamlpack_pack(text, len, &size)) ||
		    size > UINT32_MAX) {
			fprintf(stderr, "yamlpack: %s: not one YAML document\n",
				eq + 1);
			return 1;
		}
		n = (uint32_t)size;
		if (fwrite(argv[i], 1, strlen(argv[i]) + 1, out) !=
			strlen(argv[i]) + 1 ||
		    pad(out, strlen(argv[i]) + 1) ||
		    fwrite(&n, 4, 1, out) != 1 ||
		    fwrite(blob, 1, size, out) != size || pad(out, size)) {
			perror(argv[1]);
			return 1;
		}
		free(blob);
		free(text);
	}
	return fclose(out) ? 1 : 0;
}
