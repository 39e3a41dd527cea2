/* libFuzzer target over the head of a file the agent execs: the #!
 * line the exec gate follows (common/shebang.c, as
 * supervisor/kernel/unotify_exec.c reads it: HX_BINPRM_BUF bytes and
 * one for the NUL) and the ELF program and dynamic headers
 * supervisor/loader.c reads to tell a dynamic loader (its PT_INTERP, its
 * DT_SONAME), from a memfd of the input. Nothing may crash or read
 * past its buffer; a #! that parses names an interpreter within it. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/shebang.h"
#include "supervisor/loader.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* loader.c's other functions reach the agent's /proc: not here */
int hx_path_absolute(pid_t pid, pid_t tid, int dirfd, const char *path,
		     char *out, size_t size)
{
	(void)pid, (void)tid, (void)dirfd, (void)path, (void)out, (void)size;
	return -ENOENT;
}

static void shebang(const uint8_t *data, size_t size)
{
	char buf[HX_BINPRM_BUF + 1], *name, *arg;
	size_t n = size < HX_BINPRM_BUF ? size : HX_BINPRM_BUF;

	memcpy(buf, data, n);
	if (hx_shebang_parse(buf, n, &name, &arg))
		return;
	if (name < buf || name >= buf + sizeof(buf) || !*name ||
	    strlen(name) >= sizeof(buf) ||
	    (arg && (arg < buf || arg >= buf + sizeof(buf))))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;

	shebang(data, size);
	if (fd < 0 && (fd = memfd_create("exechead", MFD_CLOEXEC)) < 0)
		return 0;
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	(void)hx_loader_is(fd);
	return 0;
}
