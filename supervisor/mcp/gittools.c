/* diff and restore as git in the sandbox; see gittools.h. */
#define _GNU_SOURCE
#include "supervisor/mcp/gittools.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "supervisor/session.h"

#define GIT_TIMEOUT_MS 120000
#define DIFF_DEFAULT   (256 * 1024)

/* Exit 3: no such checkpoint. The checkpoint's tree in a private index,
 * written out, and what it does not hold removed (ignored files kept):
 * the agent's own index and HEAD are not touched. The private indexes
 * stay in the session's $TMPDIR, removed with it (an rm of a path the
 * policy cannot read would make the script "destructive"; git clean
 * is, and the default policy asks before it). */
static const char restore_script[] =
    "set -e\n"
    "git rev-parse -q --verify \"$1^{commit}\" >/dev/null || exit 3\n"
    "idx=\"${TMPDIR:-/tmp}/hx-restore-index.$$\"\n"
    "GIT_INDEX_FILE=\"$idx\" git read-tree \"$1\"\n"
    "GIT_INDEX_FILE=\"$idx\" git checkout-index -a -f\n"
    "GIT_INDEX_FILE=\"$idx\" git clean -fdq\n";

/* Checkpoint $1 against the working tree as it is, untracked files
 * too (ignored ones not): a private index made of it with git add -A;
 * a file the sandbox does not let git read is said on stderr and left
 * out (--ignore-errors). */
static const char diff_now_script[] =
    "idx=\"${TMPDIR:-/tmp}/hx-diff-index.$$\"\n"
    "GIT_INDEX_FILE=\"$idx\" git read-tree \"$1\" || exit 128\n"
    "GIT_INDEX_FILE=\"$idx\" git add -A --ignore-errors .\n"
    "GIT_INDEX_FILE=\"$idx\" git --no-pager diff --cached --no-color "
    "--no-ext-diff --no-textconv \"$1\"\n";

/* Checkpoint n's ref (the schema bounds n). */
static void ref(char *buf, size_t size, const char *session, json_t *n)
{
	hx_session_checkpoint_ref(session, (unsigned)json_integer_value(n), buf,
				  size);
}

json_t *hx_gittool_run(const char *tool, json_t *args, const char *session,
		       const char *project)
{
	json_t *from = json_object_get(args, "from");
	json_t *to = json_object_get(args, "to");
	json_t *max = json_object_get(args, "max_output_bytes");
	char a[256], b[256];
	json_t *argv, *zero = json_integer(0);

	if (!strcmp(tool, "restore")) {
		ref(a, sizeof(a), session, json_object_get(args, "checkpoint"));
		argv = json_pack("[s,s,s,s,s]", "sh", "-c", restore_script,
				 "harness-restore", a);
	} else if (to) {
		ref(a, sizeof(a), session, from ? from : zero);
		ref(b, sizeof(b), session, to);
		argv = json_pack("[s,s,s,s,s,s,s,s]", "git", "--no-pager",
				 "diff", "--no-color", "--no-ext-diff",
				 "--no-textconv", a, b);
	} else {
		ref(a, sizeof(a), session, from ? from : zero);
		argv = json_pack("[s,s,s,s,s]", "sh", "-c", diff_now_script,
				 "harness-diff", a);
	}
	json_decref(zero);
	return json_pack(
	    "{s:o,s:s,s:i,s:I}", "argv", argv, "cwd", project, "timeout_ms",
	    GIT_TIMEOUT_MS, "max_output_bytes",
	    (json_int_t)(max ? json_integer_value(max) : DIFF_DEFAULT));
}

static int failed(json_t *run, json_t **error, const char *err,
		  const char *what)
{
	char msg[1024];

	snprintf(msg, sizeof(msg), "%s: %.900s", what,
		 json_string_value(json_object_get(run, "stderr")));
	*error = json_pack("{s:s,s:s}", "errno", err, "message", msg);
	return -1;
}

int hx_gittool_result(const char *tool, json_t *args, json_t *run,
		      json_t **result, json_t **error)
{
	json_t *code = json_object_get(run, "exit_code");
	json_t *to = json_object_get(args, "to");
	json_t *from = json_object_get(args, "from");

	*result = *error = NULL;
	if (!json_is_integer(code))
		return failed(run, error, "EINTR", "git did not finish");
	if (!strcmp(tool, "restore")) {
		if (json_integer_value(code) == 3)
			return failed(run, error, "ENOENT",
				      "no such checkpoint in this session");
		if (json_integer_value(code))
			return failed(run, error, "EIO", "git failed");
		*result = json_pack("{s:O,s:b}", "checkpoint",
				    json_object_get(args, "checkpoint"),
				    "restored", 1);
		return 0;
	}
	/* git diff: 0 or 1 is a diff; 128, an unknown revision */
	if (json_integer_value(code) > 1)
		return failed(run, error,
			      json_integer_value(code) == 128 ? "ENOENT"
							      : "EIO",
			      "git diff failed (a checkpoint that does not "
			      "exist?)");
	*result =
	    json_pack("{s:I,s:O,s:O,s:O}", "from",
		      (json_int_t)(from ? json_integer_value(from) : 0), "to",
		      to ? to : json_null(), "diff",
		      json_object_get(run, "stdout"), "truncated",
		      json_is_true(json_object_get(run, "stdout_truncated"))
			  ? json_true()
			  : json_false());
	return 0;
}
