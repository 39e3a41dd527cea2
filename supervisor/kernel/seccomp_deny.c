/* The static deny list and its BPF; see seccomp_deny.h. */
#define _GNU_SOURCE
#include "supervisor/kernel/seccomp_deny.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <linux/fsverity.h>
#include <linux/kd.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <linux/vt.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef IOPRIO_WHO_PGRP
#define IOPRIO_WHO_PGRP 2 /* linux/ioprio.h, not in every libc */
#define IOPRIO_WHO_USER 3
#endif
#ifndef EXT4_IOC_SETVERSION
#define EXT4_IOC_SETVERSION _IOW('f', 4, long) /* fs/ext4/ext4.h */
#endif
/* fs/btrfs/ioctl.c: the 32-bit layout's number, which a 64-bit kernel
 * takes too (192 bytes: packed, 12-byte times). */
#define BTRFS_IOC_SET_RECEIVED_SUBVOL_32                                       \
	_IOC(_IOC_READ | _IOC_WRITE, BTRFS_IOCTL_MAGIC, 37, 192)
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#define TCOOFF_ 0 /* termios.h's TCOOFF, which asm's ioctls clash with */

#define ALWAYS                                                                 \
	{                                                                      \
		{HX_SC_ALWAYS, 0, false, 0, 0},                                \
		{                                                              \
			HX_SC_ALWAYS, 0, false, 0, 0                           \
		}                                                              \
	}
#define DENY(n, e, why)                                                        \
	{                                                                      \
		n, HX_SC_ERRNO, e, ALWAYS, why                                 \
	}
#define BIT(i, m)                                                              \
	{                                                                      \
		HX_SC_BITS, i, false, m, 0                                     \
	}
#define MASKED(i, m, v)                                                        \
	{                                                                      \
		HX_SC_MASKED, i, false, v, m                                   \
	}
#define EQ32(i, v)                                                             \
	{                                                                      \
		HX_SC_EQ, i, true, v, 0                                        \
	}
#define NONE                                                                   \
	{                                                                      \
		HX_SC_ALWAYS, 0, false, 0, 0                                   \
	}

/* setsockopt(fd, level, opt): EPERM, as without the capability. */
#define ROUTES "routes past the decided address"
#define SOURCE "a source that is not the machine's"
#define CORK   "a datagram that takes later sends' bytes"
#define MCAST  "reports a multicast group out of an interface"
#define SOCKOPT_ROW(level, opt, why)                                           \
	{                                                                      \
		"setsockopt", HX_SC_ERRNO, EPERM,                              \
		    {EQ32(1, level), EQ32(2, opt)}, why                        \
	}
/* socket(family, ...) with a second condition: EPROTONOSUPPORT, as
 * from a kernel without that protocol (one errno for the syscall). */
#define SOCKET_ROW(family, cond)                                               \
	{                                                                      \
		"socket", HX_SC_ERRNO, EPROTONOSUPPORT,                        \
		    {EQ32(0, family), cond},                                   \
		    "sends where no notified call names the address"           \
	}

/* Denied with EPERM unless a runtime is known to fall back on ENOSYS
 * (io_uring: libuv, liburing users; clone3: glibc uses clone). */
#define SETID_ROWS(n, i)                                                       \
	{n, HX_SC_ERRNO, EPERM, {BIT(i, S_ISUID), NONE}, "sets setuid"},       \
	{                                                                      \
		n, HX_SC_ERRNO, EPERM, {BIT(i, S_ISGID), NONE}, "sets setgid"  \
	}
/* open's mode counts only with O_CREAT (else it is garbage). */
#define SETID_CREATE(n, fl, mo)                                                \
	{n,                                                                    \
	 HX_SC_ERRNO,                                                          \
	 EPERM,                                                                \
	 {BIT(fl, O_CREAT), BIT(mo, S_ISUID)},                                 \
	 "creates a setuid file"},                                             \
	{                                                                      \
		n, HX_SC_ERRNO, EPERM, {BIT(fl, O_CREAT), BIT(mo, S_ISGID)},   \
		    "creates a setgid file"                                    \
	}

/* An ioctl refused by its number (the kernel reads cmd as 32 bits). */
#define IOCTL_ROW(cmd, why)                                                    \
	{                                                                      \
		"ioctl", HX_SC_ERRNO, EPERM, {EQ32(1, cmd), NONE}, why         \
	}

#define BTRFS_ROW(cmd)                                                         \
	{                                                                      \
		"ioctl", HX_SC_ERRNO, EPERM, {EQ32(1, cmd), NONE},             \
		    "makes or removes a btrfs subvolume"                       \
	}

const struct hx_sc_rule hx_seccomp_deny[] = {
    /* io_uring runs opens and connects in a kernel worker, out of reach
     * of every per-syscall check. */
    DENY("io_uring_setup", ENOSYS, "io_uring bypasses syscall filtering"),
    DENY("io_uring_enter", ENOSYS, "io_uring bypasses syscall filtering"),
    DENY("io_uring_register", ENOSYS, "io_uring bypasses syscall filtering"),
    /* Reaching into another process: the supervisor, or a sibling whose
     * memory holds an approved path (TOCTOU). */
    DENY("ptrace", EPERM, "control of another process"),
    DENY("process_vm_readv", EPERM, "reads another process's memory"),
    DENY("process_vm_writev", EPERM, "writes another process's memory"),
    DENY("pidfd_getfd", EPERM, "steals another process's fds"),
    /* userfaultfd stalls the supervisor's reads of agent memory. */
    DENY("userfaultfd", EPERM, "stalls reads of agent memory"),
    {"ioctl",
     HX_SC_ERRNO,
     EPERM,
     {EQ32(1, USERFAULTFD_IOC_NEW), NONE},
     "userfaultfd through /dev/userfaultfd (root owns it; caps do not "
     "matter)"},
    /* Opening by handle skips path resolution, so every path rule. */
    DENY("open_by_handle_at", EPERM, "opens a file without a path"),
    DENY("name_to_handle_at", EPERM, "prepares open_by_handle_at"),
    /* fanotify's inode marks tell what inotify's watches do, on any
     * directory the agent may read (~/.ssh: Landlock has no hook):
     * watches are decided one by one in the kernel layer instead
     * (unotify_watch.c), and fanotify's rare users fall back. */
    DENY("fanotify_init", EPERM, "watches denied directories"),
    DENY("fanotify_mark", EPERM, "watches denied directories"),
    DENY("bpf", EPERM, "kernel programs"),
    DENY("perf_event_open", EPERM, "kernel tracing and side channels"),
    /* Keyrings are shared beyond the process tree. */
    DENY("keyctl", EPERM, "kernel keyrings"),
    DENY("add_key", EPERM, "kernel keyrings"),
    DENY("request_key", EPERM, "kernel keyrings"),
    /* A new mount would remap the paths every rule is written in. */
    DENY("mount", EPERM, "changes the file system view"),
    DENY("umount2", EPERM, "changes the file system view"),
    DENY("move_mount", EPERM, "changes the file system view"),
    DENY("open_tree", EPERM, "changes the file system view"),
    DENY("fsopen", EPERM, "changes the file system view"),
    DENY("fsmount", EPERM, "changes the file system view"),
    DENY("fsconfig", EPERM, "changes the file system view"),
    DENY("fspick", EPERM, "changes the file system view"),
    DENY("mount_setattr", EPERM, "changes the file system view"),
    DENY("pivot_root", EPERM, "changes the file system view"),
    DENY("chroot", EPERM, "changes the file system view"),
    DENY("kexec_load", EPERM, "replaces the kernel"),
    DENY("kexec_file_load", EPERM, "replaces the kernel"),
    DENY("init_module", EPERM, "loads kernel code"),
    DENY("finit_module", EPERM, "loads kernel code"),
    DENY("delete_module", EPERM, "unloads kernel code"),
    /* A user namespace grants every capability inside it, a mount
     * namespace a private file system view; both OR'ed rows. */
    {"unshare",
     HX_SC_ERRNO,
     EPERM,
     {BIT(0, CLONE_NEWUSER), NONE},
     "new user namespace"},
    {"unshare",
     HX_SC_ERRNO,
     EPERM,
     {BIT(0, CLONE_NEWNS), NONE},
     "new mount namespace"},
    {"clone",
     HX_SC_ERRNO,
     EPERM,
     {BIT(0, CLONE_NEWUSER), NONE},
     "new user namespace"},
    {"clone",
     HX_SC_ERRNO,
     EPERM,
     {BIT(0, CLONE_NEWNS), NONE},
     "new mount namespace"},
    /* An untraced child would escape the exec gate, and with it the
     * tracer's kill-on-exit that ends the tree without a cgroup. */
    {"clone",
     HX_SC_ERRNO,
     EPERM,
     {BIT(0, CLONE_UNTRACED), NONE},
     "untraced child (escapes the exec gate)"},
    /* A process sharing another's cwd, root and umask (CLONE_FS, not a
     * thread: threads are gone once an exec is under way) moved the cwd
     * of a new image after the exec gate's look, so that the script its
     * interpreter opened by a relative name was another than the one
     * decided and recorded (nineteenth attack review). */
    {"clone",
     HX_SC_ERRNO,
     EPERM,
     {MASKED(0, CLONE_FS | CLONE_THREAD, CLONE_FS), NONE},
     "shares its cwd with another process (what an exec opens by name)"},
    DENY("setns", EPERM, "joins another namespace"),
    /* clone3 takes its flags through a pointer BPF cannot read. */
    DENY("clone3", ENOSYS, "flags out of BPF's reach"),
    /* A second listener would let the agent answer its own syscalls;
     * plain filters (a browser's sandbox) stay allowed. */
    {"seccomp",
     HX_SC_ERRNO,
     EPERM,
     {EQ32(0, SECCOMP_SET_MODE_FILTER),
      BIT(1, SECCOMP_FILTER_FLAG_NEW_LISTENER)},
     "a second user-notify listener"},
    /* The kernel reads ioctl's cmd as 32 bits: compare those. */
    IOCTL_ROW(TIOCSTI, "types into the terminal"),
    IOCTL_ROW(TIOCLINUX, "console selection injection"),
    /* What outlasts the session on the user's terminal (harness-exec's,
     * the agent's too): its line discipline (n_null: the user's shell
     * could neither read nor write it), exclusive mode (every later open
     * refused: ssh's, sudo's and gpg's prompts on /dev/tty). */
    IOCTL_ROW(TIOCSETD,
	      "changes the terminal's line discipline (outlasts the session)"),
    IOCTL_ROW(TIOCEXCL, "makes the terminal exclusive (outlasts the session)"),
    /* Output stopped (tcflow), IXON off: every later write blocked. */
    {"ioctl",
     HX_SC_ERRNO,
     EPERM,
     {EQ32(1, TCXONC), EQ32(2, TCOOFF_)},
     "stops the terminal's output (outlasts the session)"},
    /* On a Linux console (a text login, a server's screen), state that
     * every console shares or that outlasts the session, which the
     * kernel lets the terminal's own processes set with no capability
     * (vt_ioctl's perm: the caller's controlling terminal): the colour
     * map, screen maps, font and accent table are shared by every
     * console (all black: each unreadable; a glyph map: `rm` shows as
     * `ls`), the display and keyboard modes outlast the session (a
     * blank console, a dead keyboard), the keymap and function-key
     * strings type for whoever presses a key next, and VT switching
     * moves the screen and keyboard to another console. The queries
     * stay allowed. */
    IOCTL_ROW(KDSETMODE, "console display mode (a blank console)"),
    IOCTL_ROW(KDSKBMODE, "console keyboard mode"),
    IOCTL_ROW(KDSKBMETA, "console keyboard mode"),
    IOCTL_ROW(KDSKBENT, "console keymap (types for the next key press)"),
    IOCTL_ROW(KDSKBSENT, "console function-key strings (typed later)"),
    IOCTL_ROW(KDSETKEYCODE, "console keymap (types for the next key press)"),
    IOCTL_ROW(KDSKBDIACR, "console accent table (every console)"),
    IOCTL_ROW(KDSKBDIACRUC, "console accent table (every console)"),
    IOCTL_ROW(KDSIGACCEPT, "console's spawn-key signal"),
    IOCTL_ROW(PIO_FONT, "console font (what characters show as)"),
    IOCTL_ROW(PIO_FONTX, "console font (what characters show as)"),
    IOCTL_ROW(PIO_FONTRESET, "console font (what characters show as)"),
    IOCTL_ROW(KDFONTOP, "console font (what characters show as)"),
    IOCTL_ROW(PIO_SCRNMAP, "console screen map (every console)"),
    IOCTL_ROW(PIO_UNISCRNMAP, "console screen map (every console)"),
    IOCTL_ROW(PIO_UNIMAP, "console Unicode map"),
    IOCTL_ROW(PIO_UNIMAPCLR, "console Unicode map"),
    IOCTL_ROW(PIO_CMAP, "console colour map (every console)"),
    IOCTL_ROW(VT_SETMODE, "takes over console switching"),
    IOCTL_ROW(VT_RELDISP, "takes over console switching"),
    IOCTL_ROW(VT_ACTIVATE, "switches the screen to another console"),
    IOCTL_ROW(VT_SETACTIVATE, "switches the screen to another console"),
    IOCTL_ROW(VT_DISALLOCATE, "removes consoles"),
    IOCTL_ROW(VT_RESIZE, "resizes every console"),
    IOCTL_ROW(VT_RESIZEX, "resizes every console"),
    IOCTL_ROW(VT_LOCKSWITCH, "locks console switching"),
    IOCTL_ROW(VT_UNLOCKSWITCH, "locks console switching"),
    /* The keyboard's lock flags and their defaults (Caps Lock left on:
     * the next login's password typed wrong), the LEDs, and a tone
     * with no end (KIOCSOUND, KDMKTONE of no duration): each outlasts
     * the session (twenty-sixth attack review, part b). */
    IOCTL_ROW(KDSKBLED, "console keyboard lock flags (outlast the session)"),
    IOCTL_ROW(KDSETLED, "console LEDs (outlast the session)"),
    IOCTL_ROW(KIOCSOUND, "console tone (outlasts the session)"),
    IOCTL_ROW(KDMKTONE, "console tone (outlasts the session)"),
    /* Fileless exec of a memfd; execveat with a path stays allowed. */
    {"execveat",
     HX_SC_ERRNO,
     EPERM,
     {BIT(4, AT_EMPTY_PATH), NONE},
     "fileless exec (memfd)"},
    /* READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE and old ABIs weaken the
     * process; PER_LINUX and the 0xffffffff query are what libc uses. */
    {"personality",
     HX_SC_ERRNO,
     EPERM,
     {{HX_SC_NOTIN2, 0, false, 0, 0xffffffffu}, NONE},
     "weakens memory protections"},
    /* A setuid or setgid file made by the agent runs with its (or, as
     * root, root's) rights for whoever starts it later, a setgid one
     * with its groups' (docker, shadow): never set, by any call. */
    SETID_ROWS("chmod", 1),
    SETID_ROWS("fchmod", 1),
    SETID_ROWS("fchmodat", 2),
    SETID_ROWS("fchmodat2", 2),
    SETID_ROWS("creat", 1),
    SETID_ROWS("mknod", 1),
    SETID_ROWS("mknodat", 2),
    SETID_CREATE("open", 1, 2),
    SETID_CREATE("openat", 2, 3),
    /* Calls that act on another process by pid with only a uid check,
     * which Landlock does not scope (it scopes signals and ptrace): as
     * the user, any of the user's processes outside the session (the
     * supervisor too); as root, every root daemon. A limit of 0 open
     * files or 1 s of CPU disables or kills them. On oneself (pid 0,
     * what setrlimit and glibc's prlimit send) or as a query they stay
     * allowed. */
    {"prlimit64",
     HX_SC_ERRNO,
     EPERM,
     {{HX_SC_NONZERO, 0, false, 0, 0}, {HX_SC_NONZERO, 2, false, 0, 0}},
     "sets another process's limits"},
    {"setpriority",
     HX_SC_ERRNO,
     EPERM,
     {EQ32(0, PRIO_PGRP), NONE},
     "renices a process group (outside processes in it)"},
    {"setpriority",
     HX_SC_ERRNO,
     EPERM,
     {EQ32(0, PRIO_USER), NONE},
     "renices every process of a user"},
    {"ioprio_set",
     HX_SC_ERRNO,
     EPERM,
     {EQ32(0, IOPRIO_WHO_PGRP), NONE},
     "I/O priority of a process group"},
    {"ioprio_set",
     HX_SC_ERRNO,
     EPERM,
     {EQ32(0, IOPRIO_WHO_USER), NONE},
     "I/O priority of every process of a user"},
    /* What a file's owner may do to it through any fd, read-only ones
     * too, beyond its attribute flags (decided, unotify_mut.c): make it
     * unwritable for good (fs-verity), encrypt a directory, change its
     * generation. No agent needs them. */
    IOCTL_ROW(FS_IOC_ENABLE_VERITY, "makes a file immutable (fs-verity)"),
    IOCTL_ROW(FS_IOC_SET_ENCRYPTION_POLICY, "encrypts a directory (fscrypt)"),
    /* The user's own key, removed through any fd on its file system:
     * the user's encrypted directories locked (a review's reading). */
    IOCTL_ROW(FS_IOC_REMOVE_ENCRYPTION_KEY, "locks encrypted directories"),
    IOCTL_ROW(FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS,
	      "locks encrypted directories"),
    IOCTL_ROW(FS_IOC_SETVERSION, "changes a file's generation"),
    /* ext4's own number for it (an attack review found it open). */
    IOCTL_ROW(EXT4_IOC_SETVERSION, "changes a file's generation"),
#include "supervisor/kernel/seccomp_net_rows.h"
    /* A btrfs subvolume is a directory the file system makes, no mkdir:
     * no Landlock hook sees it and ioctl is not notified, so a snapshot
     * of one the agent filled put a tree anywhere its uid may write
     * (~/.config/fish). Made, snapshotted, removed or made read-only:
     * refused (cp --reflink's FICLONE stays). */
    BTRFS_ROW(BTRFS_IOC_SUBVOL_CREATE),
    BTRFS_ROW(BTRFS_IOC_SUBVOL_CREATE_V2),
    BTRFS_ROW(BTRFS_IOC_SNAP_CREATE),
    BTRFS_ROW(BTRFS_IOC_SNAP_CREATE_V2),
    BTRFS_ROW(BTRFS_IOC_SNAP_DESTROY),
    BTRFS_ROW(BTRFS_IOC_SNAP_DESTROY_V2),
    BTRFS_ROW(BTRFS_IOC_SUBVOL_SETFLAGS),
    BTRFS_ROW(BTRFS_IOC_SET_RECEIVED_SUBVOL),
    BTRFS_ROW(BTRFS_IOC_SET_RECEIVED_SUBVOL_32),
    /* A lease on a file the agent owns held another program's open for
     * writing until the lease-break time (45 s) ran out: the user's
     * tools outside the session wait on the agent. */
    {"fcntl",
     HX_SC_ERRNO,
     EPERM,
     {EQ32(1, F_SETLEASE), NONE},
     "a lease (holds other programs' opens)"},
    DENY("acct", EPERM, "host administration"),
    DENY("swapon", EPERM, "host administration"),
    DENY("swapoff", EPERM, "host administration"),
    DENY("reboot", EPERM, "host administration"),
    DENY("settimeofday", EPERM, "host clock (audit timestamps)"),
    DENY("clock_settime", EPERM, "host clock (audit timestamps)"),
    DENY("adjtimex", EPERM, "host clock (audit timestamps)"),
    DENY("clock_adjtime", EPERM, "host clock (audit timestamps)"),
    DENY("iopl", EPERM, "raw hardware access"),
    DENY("ioperm", EPERM, "raw hardware access"),
    DENY("quotactl", EPERM, "host administration"),
    DENY("quotactl_fd", EPERM, "host administration"),
    DENY("lookup_dcookie", EPERM, "kernel profiling"),
    DENY("vhangup", EPERM, "hangs up the terminal"),
    DENY("nfsservctl", EPERM, "host administration"),
};

const size_t hx_seccomp_ndeny =
    sizeof(hx_seccomp_deny) / sizeof(*hx_seccomp_deny);

/* SysV IPC and POSIX message queues name their objects host-wide (a
 * key, an id that /proc/sysvipc lists, a queue name), with no check
 * Landlock makes: the shared memory, queues and semaphores of every
 * process of the agent's uid outside the session (as root, root's)
 * could be read, written or removed. The agent gets an IPC namespace of
 * its own where it can (hx_sandbox_enter: as root, or in the user
 * namespace of the masks, its message queue mounts covered: ipcns.h);
 * where it cannot, these are refused. */
const struct hx_sc_rule hx_seccomp_ipc[] = {
    DENY("shmget", EPERM, "SysV shared memory outside the session"),
    DENY("shmat", EPERM, "SysV shared memory outside the session"),
    DENY("shmctl", EPERM, "SysV shared memory outside the session"),
    DENY("msgget", EPERM, "SysV message queues outside the session"),
    DENY("msgsnd", EPERM, "SysV message queues outside the session"),
    DENY("msgrcv", EPERM, "SysV message queues outside the session"),
    DENY("msgctl", EPERM, "SysV message queues outside the session"),
    DENY("semget", EPERM, "SysV semaphores outside the session"),
    DENY("semop", EPERM, "SysV semaphores outside the session"),
    DENY("semtimedop", EPERM, "SysV semaphores outside the session"),
    DENY("semctl", EPERM, "SysV semaphores outside the session"),
    DENY("mq_open", EPERM, "POSIX message queues outside the session"),
    DENY("mq_unlink", EPERM, "POSIX message queues outside the session"),
    /* On an fd of a queue opened by its path in the host's mqueue
     * mount (ipcns.h): none of the agent's own exists here. */
    DENY("mq_timedsend", EPERM, "POSIX message queues outside the session"),
    DENY("mq_timedreceive", EPERM, "POSIX message queues outside the session"),
    DENY("mq_notify", EPERM, "POSIX message queues outside the session"),
    DENY("mq_getsetattr", EPERM, "POSIX message queues outside the session"),
};

const size_t hx_seccomp_nipc = sizeof(hx_seccomp_ipc) / sizeof(*hx_seccomp_ipc);

#define NOTIFY(n, why)                                                         \
	{                                                                      \
		n, HX_SC_NOTIFY, 0, ALWAYS, why                                \
	}
#define NOTIFY_BIT(n, i, m, why)                                               \
	{                                                                      \
		n, HX_SC_NOTIFY, 0, {BIT(i, m), NONE}, why                     \
	}
/* A call naming a pid or tid in argument i: notified unless it is 0. */
#define ON_PID(n, i, why)                                                      \
	{                                                                      \
		n, HX_SC_NOTIFY, 0, {{HX_SC_NONZERO, i, false, 0, 0}, NONE},   \
		    why                                                        \
	}
/* Opens that can write: any of these flag bits (one row each, ORed).
 * Read-only opens pass in BPF and are bounded by Landlock. A BIT row
 * matches when every bit of its mask is set: O_TMPFILE is 020000000 |
 * O_DIRECTORY, so an O_RDONLY|O_DIRECTORY open (ls, find, readdir)
 * passes, and only a real O_TMPFILE is notified. */
#define OPEN_WRITE(n, i)                                                       \
	NOTIFY_BIT(n, i, O_WRONLY, "open for writing"),                        \
	    NOTIFY_BIT(n, i, O_RDWR, "open for writing"),                      \
	    NOTIFY_BIT(n, i, O_CREAT, "open that creates"),                    \
	    NOTIFY_BIT(n, i, O_TRUNC, "open that truncates"),                  \
	    NOTIFY_BIT(n, i, O_APPEND, "open for appending"),                  \
	    NOTIFY_BIT(n, i, O_TMPFILE, "anonymous file creation")

/* socket(AF_NETLINK, *, proto): decided (unotify_net.c). */
#define NETLINK_ROW(proto)                                                     \
	{                                                                      \
		"socket", HX_SC_NOTIFY, 0,                                     \
		    {EQ32(0, AF_NETLINK), EQ32(2, proto)},                     \
		    "a netlink socket whose sends need no address"             \
	}

const struct hx_sc_rule hx_seccomp_notify[] = {
    OPEN_WRITE("open", 1),
    OPEN_WRITE("openat", 2),
    NOTIFY("creat", "creates a file"),
    /* Its flags are behind a pointer: every openat2 is decided. */
    NOTIFY("openat2", "flags out of BPF's reach"),
    NOTIFY("connect", "network or unix connection"),
    /* sendto without an address (connected socket) passes in BPF. */
    {"sendto",
     HX_SC_NOTIFY,
     0,
     {{HX_SC_NONZERO, 4, false, 0, 0}, NONE},
     "datagram with a destination"},
    /* msg_name is behind a pointer: every sendmsg is looked at. */
    NOTIFY("sendmsg", "message that may carry a destination"),
    /* Every sendmmsg: each of its messages is emulated in turn. */
    NOTIFY("sendmmsg", "messages that may carry destinations"),
    /* File mutations, emulated on the decided parent (unotify_mut.c).
     * ftruncate and fallocate need an fd open for writing (decided at
     * its open) and pass; the fd forms below do not (fchmod works on
     * an O_RDONLY fd), so they are decided on the file the fd names. */
    /* A watch tells names and times of a directory's files: decided as
     * a read of its path (unotify_watch.c). */
    NOTIFY("inotify_add_watch", "watches a file or directory"),
    NOTIFY("rename", "moves a file"),
    NOTIFY("renameat", "moves a file"),
    NOTIFY("renameat2", "moves or exchanges files"),
    NOTIFY("unlink", "removes a file"),
    NOTIFY("unlinkat", "removes a file or directory"),
    NOTIFY("rmdir", "removes a directory"),
    NOTIFY("mkdir", "creates a directory"),
    NOTIFY("mkdirat", "creates a directory"),
    NOTIFY("link", "hard link: a new name for a file"),
    NOTIFY("linkat", "hard link: a new name for a file"),
    NOTIFY("symlink", "creates a symlink"),
    NOTIFY("symlinkat", "creates a symlink"),
    NOTIFY("truncate", "truncates a file by name"),
    NOTIFY("chmod", "changes a file's mode"),
    NOTIFY("fchmodat", "changes a file's mode"),
    NOTIFY("fchmodat2", "changes a file's mode"),
    NOTIFY("chown", "changes a file's owner"),
    NOTIFY("lchown", "changes a link's owner"),
    NOTIFY("fchownat", "changes a file's owner"),
    NOTIFY("fchmod", "changes the mode of an open file"),
    NOTIFY("fchown", "changes the owner of an open file"),
    NOTIFY("mknod", "creates a file, fifo or socket node"),
    NOTIFY("mknodat", "creates a file, fifo or socket node"),
    NOTIFY("utime", "sets a file's times"),
    NOTIFY("utimes", "sets a file's times"),
    NOTIFY("futimesat", "sets a file's times"),
    NOTIFY("utimensat", "sets a file's times (by path or fd)"),
    NOTIFY("setxattr", "sets an extended attribute"),
    NOTIFY("lsetxattr", "sets an extended attribute"),
    NOTIFY("fsetxattr", "sets an extended attribute of an open file"),
    NOTIFY("removexattr", "removes an extended attribute"),
    NOTIFY("lremovexattr", "removes an extended attribute"),
    NOTIFY("fremovexattr", "removes an extended attribute of an open file"),
    /* chattr: on any fd of a file its owner holds, read-only ones too. */
    {"ioctl",
     HX_SC_NOTIFY,
     0,
     {EQ32(1, FS_IOC_SETFLAGS), NONE},
     "sets a file's attribute flags"},
    {"ioctl",
     HX_SC_NOTIFY,
     0,
     {EQ32(1, FS_IOC_FSSETXATTR), NONE},
     "sets a file's attribute flags"},
    /* A unix socket's bind creates a file; the address is behind a
     * pointer, so every bind (rare: servers) is emulated. */
    NOTIFY("bind", "names a socket (a unix one creates a file)"),
    /* A server's address (net_listen): an unbound socket's listen
     * takes one of every interface. Emulated on the socket taken. */
    NOTIFY("listen", "serves on an address, every interface when unbound"),
    /* A netlink socket of a protocol but route's and uevent's: decided
     * as the send to the kernel every later send without an address
     * is (write, send: never notified), which netfamily.c refuses
     * (generic netlink's tcp_metrics told an attack review the peers
     * of every TCP connection of the machine; sock_diag lists its
     * sockets). Route's changes need CAP_NET_ADMIN; uevent takes
     * nothing from a process. 16 to 31 by their bit (MAX_LINKS 32). */
    NETLINK_ROW(1),
    NETLINK_ROW(2),
    NETLINK_ROW(3),
    NETLINK_ROW(4),
    NETLINK_ROW(5),
    NETLINK_ROW(6),
    NETLINK_ROW(7),
    NETLINK_ROW(8),
    NETLINK_ROW(9),
    NETLINK_ROW(10),
    NETLINK_ROW(11),
    NETLINK_ROW(12),
    NETLINK_ROW(13),
    NETLINK_ROW(14),
    {"socket",
     HX_SC_NOTIFY,
     0,
     {EQ32(0, AF_NETLINK), BIT(2, 16)},
     "a netlink socket whose sends need no address"},
    /* Priorities and scheduling of another thread or process by id:
     * only a uid check, which Landlock does not scope; done for the
     * agent's own tree only (unotify_sched.c). Id 0, oneself, passes. */
    ON_PID("setpriority", 1, "priority of another process"),
    ON_PID("ioprio_set", 1, "I/O priority of another process"),
    ON_PID("sched_setaffinity", 0, "CPUs of another thread"),
    ON_PID("sched_setscheduler", 0, "scheduling of another thread"),
    ON_PID("sched_setparam", 0, "scheduling of another thread"),
    ON_PID("sched_setattr", 0, "scheduling of another thread"),
};

const size_t hx_seccomp_nnotify =
    sizeof(hx_seccomp_notify) / sizeof(*hx_seccomp_notify);

/* execveat with AT_EMPTY_PATH stays refused by the deny filter above
 * (ERRNO outranks USER_NOTIF); every other exec is decided. */
const struct hx_sc_rule hx_seccomp_notify_exec[] = {
    NOTIFY("execve", "runs a program (checked again by the exec gate)"),
    NOTIFY("execveat", "runs a program (checked again by the exec gate)"),
};

const size_t hx_seccomp_nnotify_exec =
    sizeof(hx_seccomp_notify_exec) / sizeof(*hx_seccomp_notify_exec);

/* --trace-reads: every open is decided, read-only ones too; these take
 * the place of the write-intent rows for open and openat. */
const struct hx_sc_rule hx_seccomp_notify_reads[] = {
    NOTIFY("open", "every open (--trace-reads)"),
    NOTIFY("openat", "every open (--trace-reads)"),
};

const size_t hx_seccomp_nnotify_reads =
    sizeof(hx_seccomp_notify_reads) / sizeof(*hx_seccomp_notify_reads);

/* Two filters: libseccomp's, and a small hand-written one for rows
 * libseccomp cannot express (two comparisons on one argument). The
 * kernel runs both and the most restrictive answer wins. */
struct hx_seccomp_prog {
	struct sock_fprog fprog;
	struct sock_fprog extra;
	struct sock_fprog notify; /* len 0: not built */
	struct sock_fprog ipc;	  /* hx_seccomp_ipc */
};

#define EXTRA_ROW 8

/* Calls newer than libseccomp 2.5's table (seccomp_rule_add cannot
 * name them, so they would pass): refused by number in the extra
 * filter, with ENOSYS, which callers take as "kernel too old" and fall
 * back to the calls above (setxattr...), which are decided. */
static const struct {
	int nr;
	const char *name;
} unknown_nr[] = {
    {463, "setxattrat"},     /* 6.13: xattr by dirfd + path */
    {466, "removexattrat"},  /* 6.13 */
    {467, "open_tree_attr"}, /* 6.15: mount family */
    {469, "file_setattr"},   /* 6.17: inode flags by dirfd + path */
};
#define N_UNKNOWN (sizeof(unknown_nr) / sizeof(*unknown_nr))

static int add_cmp(const struct hx_sc_arg *g, struct scmp_arg_cmp *c)
{
	int n = 0;

	switch (g->cond) {
	case HX_SC_ALWAYS:
		break;
	case HX_SC_BITS:
		c[n++] =
		    SCMP_CMP64(g->idx, SCMP_CMP_MASKED_EQ, g->value, g->value);
		break;
	case HX_SC_EQ:
		if (g->cmp32)
			c[n++] = SCMP_CMP64(g->idx, SCMP_CMP_MASKED_EQ,
					    0xffffffffu, g->value);
		else
			c[n++] = SCMP_CMP64(g->idx, SCMP_CMP_EQ, g->value, 0);
		break;
	case HX_SC_NOTIN2:
		break; /* in the extra filter */
	case HX_SC_NONZERO:
		c[n++] = SCMP_CMP64(g->idx, SCMP_CMP_NE, 0, 0);
		break;
	case HX_SC_MASKED:
		c[n++] =
		    SCMP_CMP64(g->idx, SCMP_CMP_MASKED_EQ, g->value2, g->value);
		break;
	}
	return n;
}

static int add_rule(scmp_filter_ctx ctx, const struct hx_sc_rule *r, char *err,
		    size_t errlen)
{
	struct scmp_arg_cmp cmp[4];
	unsigned ncmp = 0;
	uint32_t act;
	int nr, e;

	nr = seccomp_syscall_resolve_name(r->name);
	if (nr == __NR_SCMP_ERROR) {
		snprintf(err, errlen, "libseccomp does not know syscall %s",
			 r->name);
		return -ENOSYS;
	}
	if (r->a[0].cond == HX_SC_NOTIN2)
		return 0;
	switch (r->action) {
	case HX_SC_ERRNO:
		act = SCMP_ACT_ERRNO((uint32_t)r->err);
		break;
	case HX_SC_KILL:
		act = SCMP_ACT_KILL_PROCESS;
		break;
	case HX_SC_NOTIFY:
		act = SCMP_ACT_NOTIFY;
		break;
	default:
		snprintf(err, errlen, "%s: action not supported yet", r->name);
		return -EINVAL;
	}
	for (int i = 0; i < 2; i++)
		ncmp += (unsigned)add_cmp(&r->a[i], cmp + ncmp);
	e = seccomp_rule_add_array(ctx, act, nr, ncmp, cmp);
	if (e)
		snprintf(err, errlen, "seccomp rule for %s: %s", r->name,
			 strerror(-e));
	return e;
}

static bool is_extra(const struct hx_sc_rule *r)
{
	return r->a[0].cond == HX_SC_NOTIN2;
}

/* One block per NOTIN2 row: deny unless the argument is one of the two
 * values; a set high half (the values are 32-bit) denies too. */
static int build_extra(struct hx_seccomp_prog *p, char *err, size_t errlen)
{
	size_t rows = 0, k = 0;
	struct sock_filter *f;

	for (size_t i = 0; i < hx_seccomp_ndeny; i++)
		rows += is_extra(&hx_seccomp_deny[i]);
	f = calloc(3 + rows * EXTRA_ROW + 2 * N_UNKNOWN + 1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	/* The main filter kills foreign arches; here they just pass. */
	f[k++] = (struct sock_filter)BPF_STMT(
	    BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(
	    BPF_JMP | BPF_JEQ | BPF_K, SCMP_ARCH_X86_64, 0,
	    (uint8_t)(rows * EXTRA_ROW + 2 * N_UNKNOWN + 1));
	for (size_t i = 0; i < hx_seccomp_ndeny; i++) {
		const struct hx_sc_rule *r = &hx_seccomp_deny[i];
		uint32_t off =
		    (uint32_t)offsetof(struct seccomp_data, args[r->a[0].idx]);
		int nr = seccomp_syscall_resolve_name(r->name);

		if (!is_extra(r))
			continue;
		if (nr < 0 || r->a[0].value >> 32 || r->a[0].value2 >> 32 ||
		    r->action != HX_SC_ERRNO) {
			snprintf(err, errlen, "%s: bad extra row", r->name);
			free(f);
			return -EINVAL;
		}
		f[k++] = (struct sock_filter)BPF_STMT(
		    BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr));
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (uint32_t)nr, 0, 6);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      off + 4); /* high half */
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      0, 0, 3);
		f[k++] =
		    (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, off);
		f[k++] = (struct sock_filter)BPF_JUMP(
		    BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->a[0].value, 2, 0);
		f[k++] = (struct sock_filter)BPF_JUMP(
		    BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->a[0].value2, 1, 0);
		f[k++] = (struct sock_filter)BPF_STMT(
		    BPF_RET | BPF_K,
		    SECCOMP_RET_ERRNO | ((uint32_t)r->err & SECCOMP_RET_DATA));
	}
	f[k++] = (struct sock_filter)BPF_STMT(
	    BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < N_UNKNOWN; i++) {
		/* Only while libseccomp does not know it (a newer one puts
		 * it in the main filter... or should: see hx_seccomp_deny). */
		f[k++] = (struct sock_filter)BPF_JUMP(
		    BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)unknown_nr[i].nr, 0,
		    1);
		f[k++] = (struct sock_filter)BPF_STMT(
		    BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
	}
	f[k++] =
	    (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	p->extra.filter = f;
	p->extra.len = (unsigned short)k;
	return 0;
}

/* libseccomp 2.5 exports to an fd only: go through a memfd. */
static int export(scmp_filter_ctx ctx, struct sock_fprog *fp)
{
	int fd = memfd_create("hx-seccomp", MFD_CLOEXEC), e = 0;
	off_t len;
	ssize_t k;
	size_t n = 0;

	if (fd < 0)
		return -errno;
	e = seccomp_export_bpf(ctx, fd);
	if (e)
		goto out;
	len = lseek(fd, 0, SEEK_END);
	if (len <= 0 || len % sizeof(struct sock_filter) ||
	    len / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		e = -E2BIG;
		goto out;
	}
	fp->filter = malloc((size_t)len);
	if (!fp->filter) {
		e = -ENOMEM;
		goto out;
	}
	while (n < (size_t)len) {
		k = pread(fd, (char *)fp->filter + n, (size_t)len - n,
			  (off_t)n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			e = k < 0 ? -errno : -EIO;
			goto out;
		}
		n += (size_t)k;
	}
	fp->len = (unsigned short)(len / sizeof(struct sock_filter));
out:
	close(fd);
	return e;
}

/* The IPC rows, a filter of their own: installed only where the agent
 * has no IPC namespace of its own. Foreign arches pass (the deny filter
 * kills them). */
static int build_ipc(struct hx_seccomp_prog *p, char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int e;

	if (!ctx) {
		snprintf(err, errlen, "seccomp_init failed");
		return -ENOMEM;
	}
	e = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
	for (size_t i = 0; i < hx_seccomp_nipc && !e; i++)
		e = add_rule(ctx, &hx_seccomp_ipc[i], err, errlen);
	if (!e && (e = export(ctx, &p->ipc)))
		snprintf(err, errlen, "seccomp ipc export: %s", strerror(-e));
	seccomp_release(ctx);
	return e;
}

int hx_seccomp_build(struct hx_seccomp_prog **out, char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	struct hx_seccomp_prog *p = NULL;
	int e = 0;

	*out = NULL;
	if (!ctx) {
		snprintf(err, errlen, "seccomp_init failed");
		return -ENOMEM;
	}
	/* Only the native arch is in the filter; i386 (int 0x80) and x32
	 * (nr | 0x40000000) get the bad-arch action: the process dies
	 * rather than talk to a syscall table no rule was written for. */
	e = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
			     SCMP_ACT_KILL_PROCESS);
	if (e) {
		snprintf(err, errlen, "seccomp bad-arch action: %s",
			 strerror(-e));
		goto out;
	}
	for (size_t i = 0; i < hx_seccomp_ndeny && !e; i++)
		e = add_rule(ctx, &hx_seccomp_deny[i], err, errlen);
	if (e)
		goto out;
	p = calloc(1, sizeof(*p));
	if (!p) {
		e = -ENOMEM;
		goto out;
	}
	e = export(ctx, &p->fprog);
	if (e) {
		snprintf(err, errlen, "seccomp export: %s", strerror(-e));
		goto out;
	}
	e = build_extra(p, err, errlen);
	if (e)
		goto out;
	e = build_ipc(p, err, errlen);
	if (e)
		goto out;
	*out = p;
	p = NULL;
out:
	hx_seccomp_prog_free(p);
	seccomp_release(ctx);
	return e;
}

/* Whether r is one of the rows hx_seccomp_notify_reads replaces. */
static bool replaced_by_reads(const struct hx_sc_rule *r)
{
	for (size_t i = 0; i < hx_seccomp_nnotify_reads; i++)
		if (!strcmp(r->name, hx_seccomp_notify_reads[i].name))
			return true;
	return false;
}

int hx_seccomp_build_notify(struct hx_seccomp_prog *p, bool exec, bool reads,
			    char *err, size_t errlen)
{
	/* Foreign arches pass here: the deny filter kills them, and a kill
	 * outranks everything. */
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int e = 0;

	if (!ctx) {
		snprintf(err, errlen, "seccomp_init failed");
		return -ENOMEM;
	}
	e = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
	for (size_t i = 0; i < hx_seccomp_nnotify && !e; i++)
		if (!reads || !replaced_by_reads(&hx_seccomp_notify[i]))
			e = add_rule(ctx, &hx_seccomp_notify[i], err, errlen);
	for (size_t i = 0; reads && i < hx_seccomp_nnotify_reads && !e; i++)
		e = add_rule(ctx, &hx_seccomp_notify_reads[i], err, errlen);
	for (size_t i = 0; exec && i < hx_seccomp_nnotify_exec && !e; i++)
		e = add_rule(ctx, &hx_seccomp_notify_exec[i], err, errlen);
	if (!e) {
		/* Built again (hx_sandbox_ready: every open after all): the
		 * one before stays until this one is whole. */
		struct sock_fprog fp = {0};

		e = export(ctx, &fp);
		if (e) {
			free(fp.filter);
			snprintf(err, errlen, "seccomp notify export: %s",
				 strerror(-e));
		} else {
			free(p->notify.filter);
			p->notify = fp;
		}
	}
	seccomp_release(ctx);
	return e;
}

int hx_seccomp_install_notify(const struct hx_seccomp_prog *p)
{
	long fd;

	if (!p->notify.len)
		return -ENOENT;
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_NEW_LISTENER |
			 SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
		     &p->notify);
	if (fd < 0 && errno == EINVAL) /* before 5.19 */
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			     SECCOMP_FILTER_FLAG_NEW_LISTENER, &p->notify);
	return fd < 0 ? -errno : (int)fd;
}

int hx_seccomp_install(const struct hx_seccomp_prog *p)
{
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p->extra))
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p->fprog))
		return -errno;
	return 0;
}

int hx_seccomp_install_ipc(const struct hx_seccomp_prog *p)
{
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p->ipc))
		return -errno;
	return 0;
}

size_t hx_seccomp_prog_len(const struct hx_seccomp_prog *p)
{
	return p ? (size_t)p->fprog.len + p->extra.len : 0;
}

void hx_seccomp_prog_free(struct hx_seccomp_prog *p)
{
	if (!p)
		return;
	free(p->fprog.filter);
	free(p->extra.filter);
	free(p->notify.filter);
	free(p->ipc.filter);
	free(p);
}
