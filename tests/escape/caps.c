/* No capability in any set, no_new_privs set (also when root). An
 * ordinary user cannot empty the bounding set (it takes CAP_SETPCAP),
 * and needs not: with no_new_privs no exec can gain a capability, and
 * the user namespaces that would grant new ones are denied in BPF. */
#include "escape.h"

#include <sys/prctl.h>

int main(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256], bad[512] = "";
	int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), seen = 0;

	if (!f)
		SKIPPED("/proc/self/status: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		char name[32];

		if (sscanf(line, "Cap%31[^:]: %llx", name, &v) != 2)
			continue;
		seen++;
		if (v && !(strcmp(name, "Bnd") == 0 && getuid() != 0))
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
				 " Cap%s=%llx", name, v);
	}
	fclose(f);
	if (seen < 5)
		ESCAPED("only %d Cap lines in /proc/self/status", seen);
	if (bad[0] || nnp != 1)
		ESCAPED("capabilities held:%s; no_new_privs=%d (uid %d)", bad,
			nnp, (int)getuid());
	BLOCKED("CapInh/Prm/Eff/Amb (and Bnd as root) all zero, no_new_privs=1 "
		"(uid %d)",
		(int)getuid());
}
