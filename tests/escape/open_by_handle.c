/* open_by_handle_at (shocker): name_to_handle_at needs no privilege, so
 * EPERM from it is the filter; then a forged handle for inode 2. */
#include "escape.h"

#include <fcntl.h>

int main(void)
{
	struct file_handle *h = malloc(sizeof(*h) + 128);
	int mnt, mid, r, e, fd, e2;

	if (!h)
		SKIPPED("malloc");

	h->handle_bytes = 128;
	r = name_to_handle_at(AT_FDCWD, "/", h, &mid, 0);
	e = errno;
	mnt = open("/", O_RDONLY | O_DIRECTORY);
	h->handle_bytes = 8;
	h->handle_type = 1; /* FILEID_INO32_GEN */
	memset(h->f_handle, 0, 8);
	h->f_handle[0] = 2;
	fd = open_by_handle_at(mnt, h, O_RDONLY);
	e2 = errno;
	if (r == 0 || fd >= 0)
		ESCAPED("name_to_handle_at %d, open_by_handle_at %d", r, fd);
	if (e != EPERM || e2 != EPERM)
		ESCAPED("unexpected errno %d/%d", e, e2);
	BLOCKED("name_to_handle_at/open_by_handle_at: EPERM");
}
