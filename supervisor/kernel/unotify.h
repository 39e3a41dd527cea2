/* The dynamic kernel layer (DESIGN.md sections 2-3, issue 3 items 3, 4,
 * 6, 7): the seccomp user-notify listener of the agent tree, served by a
 * small pool of threads.
 *
 * The filter (hx_seccomp_notify in seccomp_deny.c) sends opens that can
 * write, openat2, creat, connect, sendto with an address, sendmsg and
 * the file mutations (rename, renameat, renameat2, unlink, unlinkat,
 * rmdir, mkdir, mkdirat, link, linkat, symlink, symlinkat, truncate,
 * chmod, fchmodat, fchmodat2, chown, lchown, fchownat), and with
 * --exec-gate execve and execveat (answered CONTINUE behind the exec
 * gate, execgate.h), here. Each is decided through the one pipeline
 * (hx_pipeline_decide_kernel, called on the event loop's thread:
 * workers hand the request over an eventfd and wait, so the pipeline
 * and the audit chain stay single-threaded) and then emulated in the
 * supervisor: the open is done here and its fd injected with ADDFD +
 * ADDFD_FLAG_SEND; connect and sends with an address are done on the socket
 * taken with pidfd_getfd (by the connector process for unix sockets,
 * connector.h; a connect to the session socket is answered with a
 * socketpair served by the loop); a mutation is done relative to an O_PATH fd
 * of the decided parent opened with RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS,
 * and refused (EACCES) when the target's uid is not the supervisor's
 * euid. Workers act with no capability but CAP_SYS_PTRACE, so the kernel
 * checks what they do as for the agent. Target memory is read once, bounded,
 * with process_vm_readv, and SECCOMP_IOCTL_NOTIF_ID_VALID is checked after
 * every read and before acting. Every error path answers an error
 * (EACCES unless a truer errno exists); the CONTINUE sites are listed
 * where they are, with the reason each is sound or the gap it leaves.
 *
 * Lifecycle (harness-exec): socketpair -> hx_sandbox_enable_notify ->
 * fork -> hx_unotify_receive (takes the listener from the child) ->
 * hx_unotify_release_child ->
 * hx_unotify_start -> event loop ... -> hx_unotify_stop (before
 * hx_server_free). If the supervisor dies, the kernel closes the
 * listener and every notified syscall fails with ENOSYS. */
#ifndef HX_UNOTIFY_H
#define HX_UNOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "supervisor/kernel/dnsns.h"

struct hx_pipeline;
struct hx_server;
struct hx_unotify;
struct hx_execgate;

/* Reads the child's listener fd number on sock and takes the fd with
 * pidfd_getfd (the child made itself dumpable for it and now waits for
 * hx_unotify_release_child). Returns the listener fd or -errno (the
 * child then exits 126 on its own). */
int hx_unotify_receive(int sock, pid_t child, int timeout_ms);

/* Lets the child go on (it closes its copy of the listener and execs).
 * Returns 0 or -EPIPE. */
int hx_unotify_release_child(int sock);

/* The agent's DNS, served from the sealed namespace ns (dnsns.h,
 * borrowed, ready): every socket of the tree that connects or sends to
 * port 53 is sealed into it, and each question there is judged by its
 * name, recorded and answered by the supervisor through upstream (NULL:
 * the system's resolvers); a denied one is answered denied_rcode
 * (NXDOMAIN, REFUSED). */
struct sockaddr_in;
struct hx_unotify_dns {
	struct hx_dnsns *ns;
	struct hx_dnsns_listeners l;
	const struct sockaddr_in *upstream;
	int denied_rcode;
};

/* Starts nthreads workers on listener (owned from here on) deciding
 * through pl on srv's loop. sock_path: the session socket, whose
 * connects (the shim's own channel) pass unlogged. gate: the exec gate
 * (borrowed) when the filter notifies execve/execveat, else NULL (a
 * notified exec is then refused); root: harness-exec's child, whose
 * first exec run.c has decided already. dns: the agent's DNS (its
 * listeners owned from here on, whatever the outcome), or NULL; set up
 * before the first notification is served, since the policy lets port
 * 53 through for it to answer, and its threads made when the first
 * socket is sealed into it. Returns 0 or -errno. */
int hx_unotify_start(int listener, struct hx_pipeline *pl,
		     struct hx_server *srv, const char *sock_path, int nthreads,
		     struct hx_execgate *gate, pid_t root,
		     const struct hx_unotify_dns *dns, struct hx_unotify **out);

/* Answers what is pending with EACCES, stops the workers, closes the
 * listener (later notified syscalls get ENOSYS). NULL: no-op. Call on
 * the loop's thread. */
void hx_unotify_stop(struct hx_unotify *u);

/* Whether processes of the agent's tree hold every one of the n socket
 * inodes (and n > 0): self, the asking process, is looked at first,
 * then every process /proc lists. What exists now: a socket the tree
 * held a moment ago and passed on or closed is not its own. For the
 * pipeline's loopback judge (loopback.h), from any thread. */
bool hx_unotify_tree_holds(const struct hx_unotify *u, pid_t self,
			   const unsigned long *inos, size_t n);

/* Counters for session_end. */
struct hx_unotify_stats {
	unsigned long long notifications, emulated, denied, continued, errors;
};
void hx_unotify_stats(const struct hx_unotify *u, struct hx_unotify_stats *st);

#endif
