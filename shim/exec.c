/* Executable lookup; see exec.h. */
#include "shim/exec.h"
#include "common/shebang.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/path.h"
#include "common/sys.h"

long hx_exec_access(int dirfd, const char *path)
{
	return hx_sys4(SYS_faccessat, dirfd, path, X_OK, 0);
}

long hx_exec_abs(const char *path, char *out, size_t cap)
{
	return hx_path_at(AT_FDCWD, path, out, cap);
}

long hx_exec_resolve(const char *file, const char *pathvar, char *out,
		     size_t cap)
{
	char cand[PATH_MAX];
	const char *p;
	size_t flen;

	if (!file || !*file)
		return -ENOENT;
	if (strchr(file, '/'))
		return hx_exec_abs(file, out, cap);
	flen = strlen(file);
	p = pathvar ? pathvar : HX_DEFAULT_PATH;
	for (;;) {
		size_t n = strcspn(p, ":");

		if (n + 1 + flen < sizeof(cand)) {
			if (n) {
				memcpy(cand, p, n);
				cand[n] = '/';
				memcpy(cand + n + 1, file, flen + 1);
			} else {
				memcpy(cand, file, flen + 1);
			}
			if (hx_exec_access(AT_FDCWD, cand) == 0)
				return hx_exec_abs(cand, out, cap);
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	if (flen + 1 > cap)
		return -ENAMETOOLONG;
	memcpy(out, file, flen + 1);
	return (long)flen;
}

static bool has_interp(long fd, const Elf64_Ehdr *eh)
{
	Elf64_Phdr ph[64];
	size_t len = (size_t)eh->e_phnum * sizeof(ph[0]);

	if (eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(ph[0]) || len > sizeof(ph) ||
	    hx_sys4(SYS_pread64, fd, ph, len, eh->e_phoff) != (long)len)
		return false;
	for (size_t i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_INTERP)
			return true;
	return false;
}

/* depth: one "#!" level (a script's interpreter being a script is
 * rare enough to go without the hand-over). */
static bool loads_shim(const char *path, int depth)
{
	union {
		Elf64_Ehdr eh;
		char b[HX_BINPRM_BUF + 1];
	} u;
	char *interp, *arg;
	struct stat st;
	long fd, n;
	bool r = false;

	/* Only a regular file runs (the kernel refuses the rest before it
	 * opens it): a FIFO's open would wait for a writer, forever (an
	 * exec of one hung where natively it is EACCES), and a device's
	 * open acts. Non-blocking, for one swapped in since the look. */
	if (hx_sys4(SYS_newfstatat, AT_FDCWD, path, &st, 0) < 0 ||
	    !S_ISREG(st.st_mode))
		return false;
	fd = hx_sys4(SYS_openat, AT_FDCWD, path,
		     O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0);
	if (fd < 0)
		return false;
	if (hx_sys2(SYS_fstat, fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		hx_close((int)fd);
		return false;
	}
	n = hx_sys4(SYS_pread64, fd, u.b, HX_BINPRM_BUF, 0);
	if (n >= (long)sizeof(u.eh) && !memcmp(u.b, ELFMAG, SELFMAG))
		r = has_interp(fd, &u.eh);
	else if (n > 0 && !depth &&
		 !hx_shebang_parse(u.b, (size_t)n, &interp, &arg) &&
		 interp[0] == '/')
		r = loads_shim(interp, depth + 1);
	hx_close((int)fd);
	return r;
}

bool hx_exec_loads_shim(const char *path)
{
	return loads_shim(path, 0);
}
