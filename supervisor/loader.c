/* The dynamic loader as a program; see loader.h. */
#define _GNU_SOURCE
#include "supervisor/loader.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/path_resolve.h"
#include "supervisor/proc.h"

#define PHNUM_MAX 64
#define DYN_MAX	  512

static bool full_pread(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	return n >= 0 && (size_t)n == len;
}

/* The file offset of virtual address va, from the PT_LOAD headers. */
static bool va_to_off(const Elf64_Phdr *ph, size_t n, Elf64_Addr va,
		      Elf64_Off *off)
{
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && va >= ph[i].p_vaddr &&
		    va < ph[i].p_vaddr + ph[i].p_filesz) {
			*off = ph[i].p_offset + (va - ph[i].p_vaddr);
			return true;
		}
	return false;
}

static bool loader_soname(const char *s)
{
	return !strncmp(s, "ld-", 3) || !strncmp(s, "ld.so", 5) ||
	       !strncmp(s, "ld64.so", 7) || !strcmp(s, "libc.so");
}

bool hx_loader_is(int fd)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[PHNUM_MAX];
	Elf64_Dyn dyn[DYN_MAX];
	Elf64_Addr strtab = 0;
	Elf64_Off stroff, soname = (Elf64_Off)-1;
	const Elf64_Phdr *dynh = NULL;
	char name[32];
	size_t nd;

	if (!full_pread(fd, &eh, sizeof(eh), 0) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_DYN ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum ||
	    eh.e_phnum > PHNUM_MAX ||
	    !full_pread(fd, ph, eh.e_phnum * sizeof(*ph), (off_t)eh.e_phoff))
		return false;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_INTERP)
			return false; /* a program: the kernel loads its loader
				       */
		if (ph[i].p_type == PT_DYNAMIC)
			dynh = &ph[i];
	}
	if (!dynh)
		return false; /* static-pie without dynamic section */
	nd = dynh->p_filesz / sizeof(Elf64_Dyn);
	if (nd > DYN_MAX)
		nd = DYN_MAX;
	if (!nd ||
	    !full_pread(fd, dyn, nd * sizeof(*dyn), (off_t)dynh->p_offset))
		return false;
	for (size_t i = 0; i < nd && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = dyn[i].d_un.d_ptr;
		else if (dyn[i].d_tag == DT_SONAME)
			soname = dyn[i].d_un.d_val;
	}
	if (soname == (Elf64_Off)-1 || !strtab ||
	    !va_to_off(ph, eh.e_phnum, strtab, &stroff))
		return false;
	memset(name, 0, sizeof(name));
	if (pread(fd, name, sizeof(name) - 1, (off_t)(stroff + soname)) <= 0)
		return false;
	return loader_soname(name);
}

/* rtld.c: options that take the next word */
static const char *const with_arg[] = {
    "--library-path",	  "--inhibit-rpath", "--audit",
    "--preload",	  "--argv0",	     "--glibc-hwcaps-prepend",
    "--glibc-hwcaps-mask"};

bool hx_loader_opt_takes_arg(const char *opt)
{
	for (size_t k = 0; k < sizeof(with_arg) / sizeof(*with_arg); k++)
		if (!strcmp(opt, with_arg[k]))
			return true;
	return false;
}

size_t hx_loader_program(const char *const *argv, size_t argc,
			 const char **argv0)
{
	/* rtld.c: options that take the next word (with_arg), and those
	 * that do not; the first word that is neither is the program. */
	static const char *const no_arg[] = {
	    "--list",	       "--verify",	     "--inhibit-cache",
	    "--list-tunables", "--list-diagnostics", "--help",
	    "--version"};
	size_t i = 1;

	if (argv0)
		*argv0 = NULL;
	while (i < argc) {
		const char *a = argv[i];
		bool arg = hx_loader_opt_takes_arg(a), flag = false;

		for (size_t k = 0; k < sizeof(no_arg) / sizeof(*no_arg); k++)
			flag |= !strcmp(a, no_arg[k]);
		/* Anything else, "--x" included, is the program (rtld
		 * stops there too). */
		if (!arg && !flag)
			return i;
		if (arg) {
			if (i + 1 >= argc)
				return 0;
			if (argv0 && !strcmp(a, "--argv0"))
				*argv0 = argv[i + 1];
			i += 2;
		} else
			i++;
	}
	return 0;
}

int hx_loader_args(pid_t pid, pid_t tid, const char *const *argv, size_t argc,
		   struct hx_loader_prog *out)
{
	const char *a0, *prog;
	size_t pi;
	int e;

	out->argv = out->opts = NULL;
	out->argc = out->nopts = 0;
	if (!(pi = hx_loader_program(argv, argc, &a0)))
		return 0;
	prog = out->name = argv[pi];
	if (!strchr(prog, '/'))
		return -EACCES;
	e = hx_path_absolute(pid, tid, AT_FDCWD, prog, out->path,
			     sizeof(out->path));
	if (e)
		return e == -ENAMETOOLONG ? -EACCES : e;
	/* the program's argv, its NULL, then the loader's words */
	out->argv = calloc(argc - pi + 1 + pi - 1, sizeof(*out->argv));
	if (!out->argv)
		return -ENOMEM;
	out->argv[0] = a0 ? a0 : prog;
	out->argc = 1;
	for (size_t i = pi + 1; i < argc; i++)
		out->argv[out->argc++] = argv[i];
	out->opts = out->argv + out->argc + 1;
	for (size_t i = 1; i < pi; i++)
		out->opts[out->nopts++] = argv[i];
	return 1;
}

/* A read-only fd of the regular file path names (O_NOFOLLOW with
 * nofollow), or -errno: -EACCES for anything else, as the kernel refuses
 * it before it opens it (-ELOOP for a symlink not followed). Its type is
 * looked at through an O_PATH fd first: an open of a FIFO, a socket or a
 * device acts (a FIFO's waiting writer let go, a terminal made ours, a
 * tape rewound, a watchdog armed), as the supervisor, for the agent.
 * See loader.h. */
int hx_open_regular(const char *path, bool nofollow, struct stat *st)
{
	char self[64];
	int pfd = open(path, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	int fd, e = 0;

	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st))
		e = -errno;
	else if (S_ISLNK(st->st_mode))
		e = -ELOOP;
	else if (!S_ISREG(st->st_mode) || !(st->st_mode & 0111))
		e = -EACCES; /* no execute bit: not even root's exec opens it */
	if (e) {
		close(pfd);
		return e;
	}
	/* The same inode, opened again with the permission checks. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	e = fd < 0 ? -errno : fd;
	close(pfd);
	return e;
}

int hx_loader_resolve(pid_t pid, pid_t tid, const char *path,
		      const char *const *argv, size_t argc,
		      struct hx_loader_prog *out)
{
	char h[PATH_MAX + 64];
	struct stat st;
	bool is;
	int fd;

	out->argv = out->opts = NULL;
	out->argc = out->nopts = 0;
	if (!path || path[0] != '/')
		return 0;
	hx_proc_self_path(pid, tid, path, h, sizeof(h));
	fd = hx_open_regular(h, false, &st);
	if (fd < 0)
		return 0; /* not a readable file: the kernel's own check */
	is = hx_loader_is(fd);
	close(fd);
	return is ? hx_loader_args(pid, tid, argv, argc, out) : 0;
}
