/* harness-audit tag; see tag_cli.h. */
#include "tools/tag_cli.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "supervisor/redact.h"
#include "supervisor/session.h"

static const char usage[] =
    "Usage: harness-audit tag < FILE\n"
    "\n"
    "Prints the HASH your sessions write as «redacted:TYPE:HASH» in place\n"
    "of the secret read from stdin (one trailing newline dropped), keyed\n"
    "with your redact.key, to find where a leaked secret was used:\n"
    "  grep -l \"$(harness-audit tag < token):\" \\\n"
    "    ~/.local/state/harness/sessions/*/audit.jsonl\n"
    "The secret is read from stdin so that it is in no argv either.\n";

#define SECRET_MAX 65536

int hx_tag_cli(int argc, char *const *argv, FILE *in, FILE *out, FILE *err)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], hex[HX_REDACT_HASH_LEN + 1];
	uint8_t key[HX_REDACT_KEY_LEN];
	struct hx_redact *r = NULL;
	struct stat st;
	char *buf = NULL;
	size_t n;
	int e, code = 2;

	if (argc > 2) {
		bool help =
		    !strcmp(argv[2], "--help") || !strcmp(argv[2], "-h");

		fputs(usage, help ? out : err);
		return help ? 0 : 2;
	}
	if ((e = hx_session_state_dir(dir, sizeof(dir)))) {
		fprintf(err, "harness-audit: tag: %s\n", strerror(-e));
		return 2;
	}
	/* Made on a session's first redaction; made here, it would tag
	 * what no log holds. */
	snprintf(path, sizeof(path), "%s/redact.key", dir);
	if (stat(path, &st)) {
		fprintf(err, "harness-audit: tag: %s: %s\n", path,
			strerror(errno));
		return 2;
	}
	if ((e = hx_redact_key_load(dir, key))) {
		fprintf(err, "harness-audit: tag: %s: %s\n", path,
			strerror(-e));
		goto out;
	}
	if (!(buf = malloc(SECRET_MAX + 1)) || hx_redact_new(NULL, key, &r)) {
		fprintf(err, "harness-audit: tag: %s\n", strerror(ENOMEM));
		goto out;
	}
	n = fread(buf, 1, SECRET_MAX + 1, in);
	if (n > SECRET_MAX || ferror(in)) {
		fprintf(err, "harness-audit: tag: cannot read a secret of up "
			     "to 64 KiB from stdin\n");
		goto out;
	}
	if (n && buf[n - 1] == '\n')
		n--;
	hx_redact_hash(r, buf, n, hex);
	fprintf(out, "%s\n", hex);
	code = 0;
out:
	explicit_bzero(key, sizeof(key));
	if (buf)
		explicit_bzero(buf, SECRET_MAX + 1);
	free(buf);
	hx_redact_free(r);
	return code;
}
