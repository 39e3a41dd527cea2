/* No call may leave a setuid or setgid file behind: a root agent's
 * setuid binary is root for whoever runs it later, a setgid one has its
 * groups. Tries every door (chmod family, an fd, creating with the
 * bits, openat2, mknod) in the current directory, then checks the files
 * themselves. */
#include "escape.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static const char *const names[] = {"s-chmod",	 "s-fchmod", "s-fchmodat",
				    "s-open",	 "s-openat", "s-creat",
				    "s-openat2", "s-mknod",  "s-gid"};

static void mk(const char *n)
{
	int fd = open(n, O_WRONLY | O_CREAT | O_TRUNC, 0755);

	if (fd < 0)
		SKIPPED("cannot create %s: %s", n, strerror(errno));
	close(fd);
}

int main(void)
{
	struct open_how how = {.flags = O_WRONLY | O_CREAT, .mode = 04755};
	struct stat st;
	int fd;

	mk("s-chmod");
	chmod("s-chmod", 04755);
	mk("s-fchmod");
	if ((fd = open("s-fchmod", O_RDONLY)) >= 0) {
		fchmod(fd, 04755);
		close(fd);
	}
	mk("s-fchmodat");
	fchmodat(AT_FDCWD, "s-fchmodat", 04755, 0);
	syscall(SYS_open, "s-open", O_WRONLY | O_CREAT, 04755);
	syscall(SYS_openat, AT_FDCWD, "s-openat", O_WRONLY | O_CREAT, 04755);
	syscall(SYS_creat, "s-creat", 04755);
	syscall(SYS_openat2, AT_FDCWD, "s-openat2", &how, sizeof(how));
	syscall(SYS_mknod, "s-mknod", S_IFREG | 04755, 0);
	mk("s-gid");
	chmod("s-gid", 02755);
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!stat(names[i], &st) && (st.st_mode & (S_ISUID | S_ISGID)))
			ESCAPED("%s has mode %o", names[i],
				(unsigned)st.st_mode & 07777);
	/* (compat) an ordinary chmod still works */
	if (chmod("s-chmod", 0700) || stat("s-chmod", &st) ||
	    (st.st_mode & 07777) != 0700)
		ESCAPED("(compat) chmod 0700 failed");
	BLOCKED("no setuid or setgid bit set by chmod, fchmod, fchmodat, "
		"open, openat, creat, openat2, mknod");
}
