/* harness-audit: see supervisor/auditcli.h. */
#include <stdio.h>

#include "tools/audit_cli.h"

int main(int argc, char **argv)
{
	return hx_audit_cli(argc, argv, stdout, stderr);
}
