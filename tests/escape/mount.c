/* mount of a tmpfs, and the new mount API; the effect checked is the
 * directory's file system type. */
#include "escape.h"

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

int main(void)
{
	char dir[] = "mnt-XXXXXX";
	struct statfs sf;
	int r, e, fs, e2;

	if (!mkdtemp(dir))
		SKIPPED("mkdtemp: %s", strerror(errno));
	r = mount("none", dir, "tmpfs", 0, NULL);
	e = errno;
	fs = (int)syscall(__NR_fsopen, "tmpfs", 0);
	e2 = errno;
	if (!statfs(dir, &sf) && sf.f_type == TMPFS_MAGIC) {
		umount2(dir, MNT_DETACH);
		ESCAPED("tmpfs mounted on %s", dir);
	}
	rmdir(dir);
	if (r == 0 || fs >= 0)
		ESCAPED("mount %d, fsopen %d", r, fs);
	if (e != EPERM || e2 != EPERM)
		ESCAPED("unexpected errno %d/%d", e, e2);
	BLOCKED("mount/fsopen: EPERM, no tmpfs");
}
