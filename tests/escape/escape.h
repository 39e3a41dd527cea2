/* Shared by the escape programs: each tries one technique under
 * harness-exec and prints exactly one line, "BLOCKED <how>",
 * "ESCAPED <what happened>" or "SKIPPED <why>". Built static and
 * without sanitizers: the shim never sees them, only the kernel does. */
#ifndef HX_ESCAPE_H
#define HX_ESCAPE_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

__attribute__((noreturn, format(printf, 2, 3))) static inline void
result(const char *word, const char *fmt, ...)
{
	va_list ap;

	printf("%s ", word);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	exit(0);
}

#define BLOCKED(...) result("BLOCKED", __VA_ARGS__)
#define ESCAPED(...) result("ESCAPED", __VA_ARGS__)
#define SKIPPED(...) result("SKIPPED", __VA_ARGS__)

/* The nearest ancestor whose comm is harness-exec: the supervisor. */
static inline pid_t find_supervisor(void)
{
	pid_t pid = getppid();

	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		char path[64], buf[512], *p;
		FILE *f;
		int ppid = 0;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "re");
		/* Refused: harness-exec's own /proc files, where every open
		 * is decided (audit mode, --trace-reads), are not the
		 * agent's to read; the first ancestor it may not read is
		 * harness-exec (the tree's are its own). */
		if (!f && errno == EACCES)
			return pid;
		if (!f)
			return -1;
		if (!fgets(buf, sizeof(buf), f)) {
			fclose(f);
			return -1;
		}
		fclose(f);
		if (strstr(buf, "(harness-exec)"))
			return pid;
		p = strrchr(buf, ')');
		if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
			return -1;
		pid = ppid;
	}
	return -1;
}

/* A sibling that waits until killed (fork and pause). */
static inline pid_t spawn_sleeper(void)
{
	pid_t p = fork();

	if (p == 0) {
		for (;;)
			pause();
	}
	return p;
}

#endif
