/* A shim request that claims one call, then another call on the same
 * path by raw syscall (it is linked statically: no shim). Each pair has
 * the same op, path and verdict; what differs is what the record shows
 * of the call besides its path.
 *
 *   static_mut_claim symlink LINK CLAIMED_TARGET REAL_TARGET
 *   static_mut_claim rename FROM CLAIMED_TO REAL_TO
 *   static_mut_claim chmod PATH       (claims an open for append, chmods 0777)
 *   static_mut_claim trunc PATH       (claims an open for append, O_TRUNC)
 *
 * Prints "verdict V" for the claim, then "done" or the call's error. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "tests/helpers/wire_client.h"

static int claim(enum hx_call call, enum hx_op op, const char *path,
		 const char *path2, int flags, int mode)
{
	static uint8_t buf[HX_WIRE_MAX];
	struct hx_wbuf w;
	int fd = wire_session();

	if (fd < 0)
		return -1;
	hx_wire_begin(&w, buf, sizeof(buf), HX_MSG_REQUEST, 7);
	hx_wire_put_u32(&w, HX_TAG_CALL, call);
	hx_wire_put_u32(&w, HX_TAG_OP, op);
	hx_wire_put_u32(&w, HX_TAG_TID, (uint32_t)getpid());
	hx_wire_put_str(&w, HX_TAG_PATH, path);
	if (path2)
		hx_wire_put_str(&w, HX_TAG_PATH2, path2);
	if (flags >= 0)
		hx_wire_put_u32(&w, HX_TAG_FLAGS, (uint32_t)flags);
	if (mode >= 0)
		hx_wire_put_u32(&w, HX_TAG_MODE, (uint32_t)mode);
	return wire_ask(fd, buf, &w);
}

int main(int argc, char **argv)
{
	long r;
	int fd;

	if (argc == 5 && !strcmp(argv[1], "symlink")) {
		claim(HX_CALL_SYMLINK, HX_OP_SYMLINK, argv[2], argv[3], -1, -1);
		r = syscall(SYS_symlink, argv[4], argv[2]);
	} else if (argc == 5 && !strcmp(argv[1], "rename")) {
		claim(HX_CALL_RENAME, HX_OP_RENAME, argv[2], argv[3], -1, -1);
		r = syscall(SYS_rename, argv[2], argv[4]);
	} else if (argc == 3 && !strcmp(argv[1], "chmod")) {
		claim(HX_CALL_OPENAT, HX_OP_WRITE, argv[2], NULL,
		      O_WRONLY | O_APPEND, -1);
		r = syscall(SYS_chmod, argv[2], 0777);
	} else if (argc == 3 && !strcmp(argv[1], "trunc")) {
		claim(HX_CALL_OPENAT, HX_OP_WRITE, argv[2], NULL,
		      O_WRONLY | O_APPEND, -1);
		fd = (int)syscall(SYS_openat, AT_FDCWD, argv[2],
				  O_WRONLY | O_TRUNC, 0);
		r = fd < 0 ? -1 : 0;
	} else {
		return 2;
	}
	if (r < 0)
		printf("error %s\n", strerror(errno));
	else
		printf("done\n");
	return 0;
}
