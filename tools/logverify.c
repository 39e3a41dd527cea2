/* Logs verified before a policy tool reads them; see logverify.h. */
#define _GNU_SOURCE
#include "tools/logverify.h"

#include <string.h>

#include "supervisor/anchor.h"
#include "supervisor/audit.h"

int hx_log_verified(const char *tool, const char *log, const char *skipped,
		    FILE *err)
{
	return hx_log_verified_at(tool, log, log, skipped, err);
}

int hx_log_verified_at(const char *tool, const char *shown, const char *log,
		       const char *skipped, FILE *err)
{
	struct hx_audit_verify v;
	char why[512];
	size_t n;
	int r = hx_audit_verify(log, &v);

	if (r == 1)
		snprintf(why, sizeof(why), "line %llu: %s",
			 (unsigned long long)v.bad_line, v.reason);
	else if (r == 0)
		r = hx_anchor_check(log, NULL, true, &n, why, sizeof(why));
	if (r < 0)
		snprintf(why, sizeof(why), "%s", strerror(-r));
	if (r)
		fprintf(err, "%s: %s: %s: does not verify, %s\n", tool, shown,
			why, skipped);
	return r ? -1 : 0;
}
