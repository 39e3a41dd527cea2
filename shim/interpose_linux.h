/* What the two Linux interposer files share: interpose_linux.c (libc's
 * entry points and the real functions) and interpose_linux_syscall.c
 * (syscall(2), decoded into the same families). The core (hooks.c)
 * never includes it. */
#ifndef HX_SHIM_INTERPOSE_LINUX_H
#define HX_SHIM_INTERPOSE_LINUX_H

#include <sys/socket.h>
#include <unistd.h>

#include "shim/hooks.h"

/* Which real function an exec or spawn is (struct hx_exec_call kind). */
enum exec_kind {
	EK_EXECVE,
	EK_EXECVPE,
	EK_FEXECVE,
	EK_EXECVEAT,
	EK_SPAWN,
	EK_SPAWNP,
	EK_SYSCALL_EXECVE,
	EK_SYSCALL_EXECVEAT,
};

/* Which real function an open is (struct hx_open_call kind). */
enum open_kind {
	OK_OPEN,
	OK_OPEN64,
	OK_OPENAT,
	OK_OPENAT64,
	OK_OPEN_2,
	OK_OPEN64_2,
	OK_OPENAT_2,
	OK_OPENAT64_2,
	OK_CREAT,
	OK_CREAT64,
	OK_FOPEN,
	OK_FOPEN64,
	OK_FREOPEN,
	OK_FREOPEN64,
	OK_SYS_OPEN,
	OK_SYS_OPENAT,
	OK_SYS_OPENAT2,
	OK_SYS_CREAT,
};

/* The real functions hooks.c calls through. */
extern const struct hx_real hx_linux_real;

/* The real syscall(2), resolved like the others. */
__typeof__(&syscall) hx_linux_real_syscall(void);

/* fd's protocol (SO_PROTOCOL: IPPROTO_TCP, IPPROTO_UDP) for a connect
 * or send to the IP address sa, for the policy's rules by protocol; 0
 * when unknown or sa is of another family; -1 when fd is no socket
 * (EBADF, ENOTSOCK: the call is the kernel's to fail, and the kernel
 * layer's to decide should a socket be put there meanwhile). errno
 * kept. */
int hx_sock_proto(int fd, const struct sockaddr *sa, socklen_t len);

/* hx_sock_proto for a send to sa, and -1 too when the send goes not
 * where sa names (a connected TCP or unix seqpacket socket:
 * hx_sock_name_ignored): nothing for the shim to decide. */
int hx_send_proto(int fd, const struct sockaddr *sa, socklen_t len);

#endif
