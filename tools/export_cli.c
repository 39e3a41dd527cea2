/* harness-audit export; see export_cli.h. */
#define _GNU_SOURCE
#include "tools/export_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/export/httppost.h"
#include "supervisor/export/otlp.h"
#include "supervisor/export/proctree.h"
#include "supervisor/export/protobuf.h"
#include "tools/logverify.h"
#include "tools/sessions_cli.h"

static const char usage[] =
    "Usage: harness-audit export --otlp FILE|URL [--unverified]\n"
    "                            [LOG | SESSION | --last]\n"
    "\n"
    "Writes the session as OpenTelemetry traces (OTLP, protobuf): one\n"
    "trace, the session's span, a span per process under its parent's\n"
    "(pid, executable, command line, exit status; from its first record\n"
    "to its exit) and an event per refused call (verdict, call, target,\n"
    "rule). The resource names the session, its policy's hash and mode.\n"
    "\n"
    "  --otlp FILE  the ExportTraceServiceRequest, as bytes\n"
    "  --otlp URL   POSTed to an OTLP/HTTP collector: http://HOST:4318\n"
    "               (then /v1/traces) or a full http:// URL; a reply\n"
    "               other than 2xx is an error (exit 1)\n"
    "  --unverified export a log that does not verify (below)\n"
    "\n"
    "The log is exported only once it verifies as harness-audit verify\n"
    "checks it (its chain, and the anchor each session it names left in\n"
    "its own directory): a log in the project is the next session's\n"
    "agent's to rewrite. One that does not is said and not exported\n"
    "(exit 2); with --unverified it is, and the resource says so\n"
    "(harness.log.verified false; true for a log that verifies).\n";

static int post(const char *url, const struct hx_pb *b, FILE *out, FILE *err)
{
	char full[2048], why[512];
	int code;

	code = hx_http_post(hx_otlp_url(url, full, sizeof(full)),
			    "application/x-protobuf", b->p, b->len, 10000, why,
			    sizeof(why));
	if (code >= 200 && code < 300) {
		fprintf(out, "%s\n", why);
		return 0;
	}
	fprintf(err, "harness-audit: export: %s\n", why);
	return code < 0 ? 2 : 1;
}

/* t to url, a request within HX_OTLP_BATCH_BYTES at a time (the
 * session's span with the last): one request of a whole session was
 * past what a collector takes. */
static int post_all(const char *url, const struct hx_ptree *t, FILE *out,
		    FILE *err)
{
	size_t at = 0, k;
	int r;

	do {
		struct hx_pb b = {0};

		if (hx_otlp_batch_fit(t, t->all + at, t->n - at, true,
				      "harness-audit export",
				      HX_OTLP_BATCH_BYTES, &b, &k)) {
			hx_pb_free(&b);
			fprintf(err, "harness-audit: export: no memory\n");
			return 2;
		}
		r = post(url, &b, out, err);
		hx_pb_free(&b);
		at += k;
	} while (!r && at < t->n);
	return r;
}

static int write_file(const char *path, const struct hx_pb *b, FILE *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int e = 0;

	if (fd < 0 || write(fd, b->p, b->len) != (ssize_t)b->len)
		e = errno ? errno : EIO;
	if (fd >= 0 && close(fd) && !e)
		e = errno;
	if (e)
		fprintf(err, "harness-audit: export: %s: %s\n", path,
			strerror(e));
	return e ? 2 : 0;
}

/* The log at path read into t, verified first: 1 verified, 0 not (with
 * check false), -1 not read (said on err). The log is held open from
 * its verification to its read (hx_log_hold): verified and read by its
 * name twice, a rewritten copy renamed over it in between went out as
 * verified (twentieth attack review). Said either way: unverified, the
 * log is exported marked so. */
static int read_verified(const char *path, bool check, struct hx_ptree *t,
			 FILE *err)
{
	char id[NAME_MAX + 1];
	const char *only = hx_sessions_only(path, id, sizeof(id));
	static const char tool[] = "harness-audit export";
	const char *skipped = check ? "not exported (--unverified exports it)"
				    : "exported as unverified";
	struct hx_log_held h;
	int v = hx_log_hold(tool, path, skipped, &h, err), r;

	if (v < 0 || (!v && check)) {
		if (v == 0)
			hx_log_release(tool, path, NULL, &h, err);
		return -1;
	}
	if ((r = hx_ptree_read_of(t, h.at, only))) {
		fprintf(err, "harness-audit: %s: %s\n", path, strerror(-r));
		hx_log_release(tool, path, NULL, &h, err);
		return -1;
	}
	if (!hx_log_release(tool, path, v ? skipped : NULL, &h, err) && v) {
		v = 0;
		if (check) {
			hx_ptree_free(t);
			return -1;
		}
	}
	return v;
}

int hx_export_cli(int argc, char *const *argv, FILE *out, FILE *err)
{
	const char *to = NULL, *log = NULL;
	struct hx_ptree t;
	struct hx_pb b = {0};
	char path[PATH_MAX];
	bool check = true;
	int r;

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, out);
			return 0;
		} else if (!strcmp(argv[i], "--otlp") && i + 1 < argc) {
			to = argv[++i];
		} else if (!strcmp(argv[i], "--unverified")) {
			check = false;
		} else if ((argv[i][0] != '-' || !strcmp(argv[i], "--last")) &&
			   !log) {
			log = argv[i];
		} else {
			fputs(usage, err);
			return 2;
		}
	}
	if (!to) {
		fprintf(err,
			"harness-audit: export: give --otlp FILE|URL\n\n%s",
			usage);
		return 2;
	}
	if (hx_sessions_log(log, path, sizeof(path), err))
		return 2;
	if ((r = read_verified(path, check, &t, err)) < 0)
		return 2;
	t.log_verified = r ? 1 : -1;
	if (hx_otlp_traces(&t, &b)) {
		fprintf(err,
			"harness-audit: export: %s: no session_start record\n",
			path);
		r = 2;
	} else {
		r = !strncmp(to, "http://", 7) ? post_all(to, &t, out, err)
					       : write_file(to, &b, err);
	}
	hx_pb_free(&b);
	hx_ptree_free(&t);
	return r;
}
