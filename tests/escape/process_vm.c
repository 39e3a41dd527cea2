/* process_vm_writev into a forked sibling, process_vm_readv of the
 * supervisor. */
#include "escape.h"

#include <signal.h>
#include <sys/uio.h>
#include <sys/wait.h>

static volatile char target[16] = "untouched";

int main(void)
{
	int go[2], done[2];
	char res[16] = "", val[] = "OVERWRITTEN";
	pid_t sib, sup = find_supervisor();
	struct iovec l = {val, sizeof(val)}, r = {(void *)target, sizeof(val)};
	struct iovec rl = {res, sizeof(res)}, rr = {(void *)target, 8};
	ssize_t w, rd = -1;
	int ew, er = 0, st;

	if (pipe(go) || pipe(done))
		SKIPPED("pipe");
	sib = fork();
	if (sib == 0) {
		char c;

		if (read(go[0], &c, 1) != 1)
			_exit(2);
		/* Report what our memory holds now. */
		_exit(strcmp((const char *)target, "untouched") ? 1 : 0);
	}
	w = process_vm_writev(sib, &l, 1, &r, 1, 0);
	ew = errno;
	if (sup > 0) {
		rd = process_vm_readv(sup, &rl, 1, &rr, 1, 0);
		er = errno;
	}
	if (write(go[1], "x", 1) != 1)
		SKIPPED("pipe write");
	waitpid(sib, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
		ESCAPED("sibling's memory was overwritten");
	if (w >= 0 || rd >= 0)
		ESCAPED("process_vm_* returned %zd/%zd", w, rd);
	if (ew != EPERM || (sup > 0 && er != EPERM))
		ESCAPED("unexpected errno %d/%d", ew, er);
	BLOCKED("process_vm_writev/readv: EPERM, sibling memory intact");
}
