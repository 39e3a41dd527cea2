/* A dynamic program (the shim is loaded and says HELLO) that opens PATH
 * for writing with a raw `syscall` instruction, skipping libc and the
 * shim: the kernel layer must decide it and flag shim_bypass. Prints
 * "ok" or "err ERRNO". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long r;
	if (argc != 2)
		return 2;
	/* Something through libc first, so the shim is surely loaded. */
	if (access(".", F_OK))
		return 2;
	/* Declared here, after the call: r10 is caller-saved, and GCC
	 * keeps a register variable in it only where an asm uses it. */
	register long mode __asm__("r10") = 0644;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"((long)SYS_openat), "D"((long)AT_FDCWD),
			   "S"(argv[1]), "d"((long)(O_WRONLY | O_CREAT)),
			   "r"(mode)
			 : "rcx", "r11", "memory");
	if (r < 0) {
		printf("err %s\n", strerrorname_np((int)-r));
		return 1;
	}
	printf("ok\n");
	return 0;
}
