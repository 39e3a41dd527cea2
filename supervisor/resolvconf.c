/* resolv.conf's name servers; see resolvconf.h. */
#include "supervisor/resolvconf.h"

#include <arpa/inet.h>

#include "policy/policy.h"
#include <stdio.h>
#include <string.h>

size_t hx_resolvconf_read(const char *path, char out[][HX_RESOLVER_LEN],
			  size_t max)
{
	FILE *f = fopen(path, "re");
	char line[512], addr[64]; /* %63s below */
	unsigned char bin[16];
	size_t n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		char *pct;

		if (sscanf(line, " nameserver %63s", addr) != 1)
			continue;
		if ((pct = strchr(addr, '%')))
			*pct = '\0'; /* fe80::1%eth0: the scope is no part */
		if (inet_pton(AF_INET, addr, bin) == 1)
			snprintf(out[n++], HX_RESOLVER_LEN, "%.46s:53", addr);
		else if (inet_pton(AF_INET6, addr, bin) == 1)
			snprintf(out[n++], HX_RESOLVER_LEN, "[%.46s]:53", addr);
	}
	fclose(f);
	return n;
}

void hx_resolver_rule(struct hx_resolver *res, bool sealed,
		      struct hx_session_rule *rule)
{
	*rule = (struct hx_session_rule){.name = "harness:resolver",
					 .verdict = HX_VERDICT_ALLOW,
					 .patterns = res->pats};
	if (sealed) {
		/* Addresses, not "*": no name's lookup is allowed by it;
		 * decisive, as no address rule means anything here. */
		res->pats[0] = "0.0.0.0/0:53";
		res->pats[1] = "[::/0]:53";
		rule->npatterns = 2;
		rule->decisive = true;
		return;
	}
	rule->npatterns = hx_resolvconf_read("/etc/resolv.conf", res->servers,
					     HX_MAX_RESOLVERS);
	for (size_t i = 0; i < rule->npatterns; i++)
		res->pats[i] = res->servers[i];
}
