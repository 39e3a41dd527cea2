/* Devices opened by the kernel layer, bounded as the agent's own.
 *
 * Landlock bounds a device's ioctls (IOCTL_DEV, ABI 5) by the rights of
 * the domain that opened the file, fixed at its open: a device the
 * agent opens itself outside its write roots (/dev/kvm, /dev/urandom,
 * /dev/loop-control, an i2c bus, a BMC's ipmi device) takes no ioctl.
 * The kernel layer opens for the agent (openat2 always, every open
 * under --trace-reads, writes) in a worker, a thread in no Landlock
 * domain, and hands that file over: its ioctls were the worker's, so a
 * root agent created a KVM virtual machine through an openat2 of
 * /dev/kvm (thirteenth attack review).
 *
 * So such a device is opened again, through the worker's descriptor,
 * by one thread of harness-exec restricted by the agent's own ruleset
 * (no capability, no_new_privs), and that file is the one handed over:
 * its rights are those Landlock gives the agent's own open of the same
 * file, read, write and ioctl alike. That thread never traces or reads
 * another process (a domain would refuse it), it only opens its own
 * /proc/thread-self/fd links.
 *
 * Lifecycle: hx_devbound_start (after the agent's first process has
 * restricted itself with the ruleset, before its calls are served) ->
 * hx_devbound_reopen (any thread) -> hx_devbound_stop.
 * hx_devbound_stop(NULL) is a no-op. */
#ifndef HX_DEVBOUND_H
#define HX_DEVBOUND_H

struct hx_landlock;
struct hx_devbound;

/* Starts the thread, restricted by ll's ruleset. *out is NULL, and 0
 * returned, when ll bounds no device ioctl (no Landlock, audit mode, an
 * ABI before 5): the worker's file is then what the agent's would be.
 * Else 0, or -errno (no such thread: the caller must not serve). */
int hx_devbound_start(const struct hx_landlock *ll, struct hx_devbound **out);

/* Whether fd is a device whose file must be reopened here: a character
 * or block device other than those without ioctls (/dev/null, zero,
 * full) and those the agent's ruleset always grants them on (/dev/tty,
 * /dev/ptmx, the pty slaves). */
int hx_devbound_wants(int fd);

/* A new descriptor of the file fd names, opened with flags (access
 * mode and status flags; nothing that creates or truncates) by the
 * restricted thread, or -errno (EACCES: Landlock refuses the agent
 * that open). Does not close fd. d NULL: -EACCES (fails closed). */
int hx_devbound_reopen(struct hx_devbound *d, int fd, int flags);

void hx_devbound_stop(struct hx_devbound *d);

#endif
