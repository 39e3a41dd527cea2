/* A setuid-root copy of this program (argv[1], made by the test) must
 * not gain euid 0 or any capability: `setuid PATH` execs PATH --probe. */
#include "escape.h"

#include <sys/prctl.h>
#include <sys/wait.h>

static int probe(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long eff = 1, prm = 1;

	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "CapEff: %llx", &eff);
		sscanf(line, "CapPrm: %llx", &prm);
	}
	if (f)
		fclose(f);
	printf("%d %d %llx %llx %d\n", (int)getuid(), (int)geteuid(), eff, prm,
	       prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	return 0;
}

int main(int argc, char **argv)
{
	int pfd[2], uid, euid, nnp, st;
	unsigned long long eff, prm;
	char buf[128] = "";
	pid_t p;

	if (argc > 1 && !strcmp(argv[1], "--probe"))
		return probe();
	if (argc < 2)
		SKIPPED("usage: setuid SETUID-COPY");
	if (pipe(pfd))
		SKIPPED("pipe");
	p = fork();
	if (p == 0) {
		dup2(pfd[1], 1);
		execl(argv[1], argv[1], "--probe", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	if (read(pfd[0], buf, sizeof(buf) - 1) <= 0)
		SKIPPED("the setuid copy did not run");
	waitpid(p, &st, 0);
	if (sscanf(buf, "%d %d %llx %llx %d", &uid, &euid, &eff, &prm, &nnp) !=
	    5)
		ESCAPED("probe said %s", buf);
	if (euid != uid || eff || prm || nnp != 1)
		ESCAPED("after setuid exec: uid %d euid %d CapEff %llx CapPrm "
			"%llx nnp %d",
			uid, euid, eff, prm, nnp);
	BLOCKED("setuid-root exec: euid stays %d, no capabilities, nnp=1",
		euid);
}
