/* The dynamic loader run as a program (issue 10, class 6):
 * "ld.so PROGRAM ARGS" runs PROGRAM, which no exec rule saw, and
 * "ld.so /proc/self/fd/N" runs a memfd. An exec of a loader is decided
 * as the exec of the program it is asked to run. OS-touching (reads the
 * ELF headers of the image). */
#ifndef HX_LOADER_H
#define HX_LOADER_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the ELF file open at fd is a dynamic loader: a shared object
 * with no PT_INTERP of its own whose DT_SONAME is a loader's (ld-*,
 * ld.so*, ld64.so*; musl's libc.so, which is its loader). A copy keeps
 * its SONAME; a static-pie program has none. */
bool hx_loader_is(int fd);

/* Where the program is in a loader's argv (argv[0] the loader): skips
 * the options glibc's rtld takes (--list, --verify, --library-path DIR,
 * --inhibit-rpath LIST, --audit LIST, --preload LIST, --argv0 NAME,
 * --inhibit-cache, --glibc-hwcaps-prepend/-mask LIST ...); any other
 * word, "--x" included, is the program, as for rtld. Returns the
 * index of the program in argv, or 0 when there is none (the loader
 * prints its usage); *argv0 (may be NULL) gets --argv0's value. */
size_t hx_loader_program(const char *const *argv, size_t argc,
			 const char **argv0);
/* Whether the loader's option opt ("--preload") takes the next word. */
bool hx_loader_opt_takes_arg(const char *opt);

#include <sys/types.h>

struct stat;

/* A read-only, non-blocking fd of the regular file with an execute
 * bit that path names (O_NOFOLLOW with nofollow), *st its stat; or
 * -errno: -EACCES for any other (never opened, as exec never opens it:
 * an open of a FIFO, a socket or a device acts, a read of a /proc or
 * /sys file may), -ELOOP for a symlink not followed. */
int hx_open_regular(const char *path, bool nofollow, struct stat *st);

/* The program a loader exec runs, as the exec to decide instead. */
struct hx_loader_prog {
	char path[4096];   /* absolute, as the agent names it */
	const char *name;  /* as the loader's argv names it */
	const char **argv; /* malloc'd; strings borrowed from the input */
	size_t argc;
	/* The loader's own words before the program (--preload LIB...),
	 * in argv's allocation; strings borrowed from the input */
	const char **opts;
	size_t nopts;
};

/* For an exec of path (absolute, as process pid, thread tid, names it)
 * with argv: 1 when it is a loader asked to run a program (out filled:
 * free out->argv), 0 when not, -EACCES for a loader whose program
 * cannot be decided (a name without '/', which rtld looks up in the
 * library path), -ENOMEM. */
/* The same for argv of an image already known to be a loader. */
int hx_loader_args(pid_t pid, pid_t tid, const char *const *argv, size_t argc,
		   struct hx_loader_prog *out);

int hx_loader_resolve(pid_t pid, pid_t tid, const char *path,
		      const char *const *argv, size_t argc,
		      struct hx_loader_prog *out);

#endif
