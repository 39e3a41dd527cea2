"""The twenty-fourth attack review, part b: an outside attacker's agent
under the embedded default policy, in enforce mode (audit mode where
the kernel layers hold there too), that acts outside its sandbox
through kernel objects it shares with the user's other processes.
Static attackers (tests/helpers/static_attack24b.c): only the kernel
layers see them."""

import os
import subprocess

from lib import HELPERS, PYTHON, Skip, check, harness
from ptywrap import PRELUDE

HELPER = os.path.join(HELPERS, "static_attack24b")

# The user's message queue mount (systemd's /dev/mqueue, which this
# machine lacks): a mount namespace of the test's own (and, for an
# ordinary user, a user and IPC namespace of its own, which a mqueue
# mount needs) with a queue holding one message, then harness-exec in
# it. Prints whether the message is still there once the session ends.
MQ_OUTSIDE = r'''
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
NEWNS, NEWUSER, NEWIPC = 0x20000, 0x10000000, 0x08000000
where, name = sys.argv[1], b"/hx-attack24b"
os.makedirs(where, exist_ok=True)
uid, gid = os.getuid(), os.getgid()
if uid:
    if libc.unshare(NEWNS | NEWUSER | NEWIPC):
        sys.exit("unshare: errno %d" % ctypes.get_errno())
    for f, t in (("uid_map", "%d %d 1\n" % (uid, uid)), ("setgroups", "deny"),
                 ("gid_map", "%d %d 1\n" % (gid, gid))):
        with open("/proc/self/" + f, "w") as fh:
            fh.write(t)
elif libc.unshare(NEWNS):
    sys.exit("unshare: errno %d" % ctypes.get_errno())
if libc.mount(b"none", b"/", None, 0x4000 | 0x40000, None) or \
        libc.mount(b"mqueue", where.encode(), b"mqueue", 0, None):
    sys.exit("mount: errno %d" % ctypes.get_errno())
for n in (name, name + b".new"):  # as root: the host's namespace
    libc.mq_unlink(n)
q = libc.mq_open(name, 0o2 | 0o100 | 0o4000, 0o600, None)
if q < 0 or libc.mq_send(q, b"secret", 6, 0):
    sys.exit("mq: errno %d" % ctypes.get_errno())
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, st = os.waitpid(pid, 0)
buf = ctypes.create_string_buffer(1 << 16)
n = libc.mq_receive(q, buf, len(buf), None)
print("outside: " + (buf.raw[:n].decode() if n >= 0 else "empty"))
print("outside names: " + " ".join(sorted(os.listdir(where))))
for n in (name, name + b".new"):
    libc.mq_unlink(n)
sys.exit(os.waitstatus_to_exitcode(st))
'''


def test_a_queue_in_the_users_mqueue_mount_is_not_the_agents(wd):
    """A mount of the message queue file system is its IPC namespace's,
    not the looker's: the agent's IPC namespace of its own hid the
    user's queues from mq_open only, and an open of one by its path in
    the user's /dev/mqueue (read-only: no rule decides it) gave an fd
    on which mq_timedreceive took the user's message, as root and as an
    ordinary user. The agent's view now has its own namespace's queues
    there, or the queue calls are refused (audit mode as an ordinary
    user: no mount namespace of the agent's)."""
    script = wd.file("mq_outside.py", MQ_OUTSIDE)
    # In the project: a write root, so the policy lets the queue be made
    # (in the agent's own namespace, not the user's).
    where = os.path.join(wd.path, "mq")
    for mode, extra in ((None, ()), ("audit", ()), (None, ("--trace-reads",))):
        r = harness([HELPER, "mq", where + "/hx-attack24b"], wd, policy=None, mode=mode,
                    extra=extra, wrap=[PYTHON, script, where])
        r.expect_status(0)
        lines = r.stdout.splitlines()
        check("receive ok secret" not in lines, "[%s] the agent took the user's message: %r" % (
            mode or "enforce", r.stdout))
        check("outside: secret" in lines, "[%s] the user's message is gone: %r (%r)" % (
            mode or "enforce", r.stdout, r.stderr))
        check("outside names: hx-attack24b" in lines, "[%s] the user's queues changed: %r" % (
            mode or "enforce", r.stdout))
        # Audit mode makes no mount namespace for an ordinary user: its
        # kernel layer refuses the open there (every open is decided).
        own = mode is None or os.geteuid() == 0
        want = ["open ENOENT", "make ok"] if own else ["open EPERM", "make EPERM"]
        check(lines[:2] == want, "[%s %s] %r, not %r" % (mode or "enforce", extra, r.stdout, want))
        how = r.one(event="session_end").get("sysv_ipc")
        check(how == ("own namespace" if own else "refused"),
              "[%s] session_end sysv_ipc: %r" % (mode or "enforce", how))


# The user's terminal: a pty whose slave is harness-exec's controlling
# terminal and standard input and output (stderr stays the test's
# pipe), then, once the session ends, what the user's shell finds: its
# line discipline, whether it opens again, whether a line typed reads.
ON_A_TERMINAL = PRELUDE + r'''
name = os.ttyname(s)
before = termios.tcgetattr(s)
p = subprocess.Popen(sys.argv[1:], stdin=s, stdout=s, preexec_fn=own)
drain(p)
print("after: settings %s" % settings(before))
ld = struct.unpack("i", fcntl.ioctl(s, termios.TIOCGETD, b"\0" * 4))[0]
print("after: ldisc %d" % ld)
try:
    os.close(os.open(name, os.O_RDWR | os.O_NOCTTY))
    print("after: opens")
except OSError as e:
    print("after: open %s" % e.strerror)
os.set_blocking(s, False)
try:
    os.write(s, b"$ ")
    print("after: writes")
except OSError as e:
    print("after: write %s" % e.strerror)
os.set_blocking(s, True)
os.write(m, b"echo hi\n")
try:
    print("after: reads %r" % os.read(s, 100))
except OSError as e:
    print("after: read %s" % e.strerror)
sys.exit(p.returncode)
'''

PY_TTY = ("import fcntl, termios, struct, sys\n"
          "t = termios.tcgetattr(0); t[0] &= ~termios.IXON; termios.tcsetattr(0, termios.TCSANOW, t)\n"
          "for n, a in ((termios.TIOCEXCL, 0), (termios.TIOCSETD, struct.pack('i', 27)),\n"
          "             (termios.TCXONC, termios.TCOOFF)):\n"
          "    try:\n"
          "        fcntl.ioctl(0, n, a); sys.stderr.write('ok\\n')\n"
          "    except OSError as e:\n"
          "        sys.stderr.write('%s\\n' % e.strerror)\n")


def test_the_users_terminal_keeps_its_line_discipline_and_opens(wd):
    """The agent shares the user's terminal (harness-exec's), and the
    kernel lets a terminal's own processes set its line discipline and
    exclusive mode with no capability; both outlast the session. A
    static program and Python gave it n_null (built in: the user's
    shell then could neither read nor write its terminal, EOPNOTSUPP)
    and made it exclusive (every later open refused, EBUSY: ssh's, sudo's
    and gpg's prompts on /dev/tty), and stopped its output with IXON
    off (every later write blocked, ^Q or not: the user's shell's
    prompt, harness-exec's own last line), as root and as an ordinary
    user. Each is refused in BPF, in audit mode too."""
    script = wd.file("on_a_terminal.py", ON_A_TERMINAL)
    cmds = ([HELPER, "tty"], [PYTHON, "-c", PY_TTY])
    for mode in (None, "audit"):
        for cmd in cmds:
            r = harness(cmd, wd, policy=None, mode=mode, wrap=[PYTHON, script])
            r.expect_status(0)
            tag = "[%s %s]" % (mode or "enforce", cmd[0])
            lines = r.stdout.splitlines()
            check("after: ldisc 0" in lines, "%s the line discipline changed: %r" % (tag, r.stdout))
            check("after: opens" in lines, "%s the terminal no longer opens: %r" % (tag, r.stdout))
            check("after: reads b'echo hi\\n'" in lines, "%s the shell cannot read: %r" % (
                tag, r.stdout))
            check("after: writes" in lines, "%s the shell cannot write: %r" % (tag, r.stdout))
            said = r.stderr.split()
            check(("excl EPERM setd EPERM stop EPERM" in r.stderr) if cmd[0] == HELPER
                  else said.count("permitted") == 3, "%s %r" % (tag, r.stderr))
            r.one(event="session_end")


# The system bus of a machine whose /run/dbus is mounted a second time
# before the session (a container's or toolbox's view of the host's
# /run): in a mount namespace of the test's own, a tmpfs over
# /run/dbus holding a listening system_bus_socket of another user's
# (nobody's, 0666: a root agent's uid is not its owner, so not its
# neighbour), bound a second time at ALIAS; then harness-exec there.
SECOND_RUN = r'''
import ctypes, os, socket, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
alias = sys.argv[1]
os.makedirs(alias, exist_ok=True)
if libc.unshare(0x20000) or libc.mount(b"none", b"/", None, 0x4000 | 0x40000, None) or \
        libc.mount(b"tmpfs", b"/run/dbus", b"tmpfs", 0, b"mode=755"):
    sys.exit("mount: errno %d" % ctypes.get_errno())
srv = socket.socket(socket.AF_UNIX)
srv.bind("/run/dbus/system_bus_socket")
os.chown("/run/dbus/system_bus_socket", 65534, 65534)
os.chmod("/run/dbus/system_bus_socket", 0o666)
srv.listen(8)
def serve():
    while True:
        c, _ = srv.accept()
        c.send(b"system-bus")
        c.close()
threading.Thread(target=serve, daemon=True).start()
if libc.mount(b"/run/dbus", alias.encode(), None, 0x1000, None):
    sys.exit("bind: errno %d" % ctypes.get_errno())
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
'''

PY_CONNECT = ("import socket, sys\n"
              "s = socket.socket(socket.AF_UNIX)\n"
              "try:\n"
              "    s.connect(sys.argv[1]); print('said', s.recv(64).decode())\n"
              "except OSError as e:\n"
              "    print('connect', e.strerror)\n")


def test_a_denied_socket_under_a_second_mount_is_denied(wd):
    """A second mount of a directory made before the session rebased
    the file rules onto it (test_attack4), not the unix socket rules: a
    root agent connected to the system bus (root's bus: systemd runs
    what uid 0 asks) under a second mount of /run/dbus, where the
    same socket at /run/dbus/system_bus_socket is refused by
    neighbour-sockets, from a static program and from Python. A unix
    socket pattern of a network deny or ask is now rebased as a file
    rule is; the record names the rule and the path as named. Root
    only: the set-up mounts over /run/dbus and makes a socket of
    another user's."""
    if os.geteuid() != 0:
        raise Skip("only root can mount over /run/dbus")
    if not os.path.isdir("/run/dbus"):
        raise Skip("no /run/dbus here")
    script = wd.file("second_run.py", SECOND_RUN)
    alias = os.path.join(wd.path, "alias")
    via = os.path.join(alias, "system_bus_socket")
    for cmd in ([HELPER, "connect", via], [PYTHON, "-c", PY_CONNECT, via]):
        r = harness(cmd, wd, policy=None, wrap=[PYTHON, script, alias])
        r.expect_status(0)
        check("said system-bus" not in r.stdout, "[%s] the agent reached the bus: %r" % (
            cmd[0], r.stdout))
        check("connect Permission denied" in r.stdout, "[%s] %r" % (cmd[0], r.stdout))
        rec = [x for x in r.events(op="connect") if via in str(x.get("args"))]
        check(rec and all(x["verdict"] == "deny" and x.get("rule") == "neighbour-sockets"
                          for x in rec), "[%s] records: %r" % (cmd[0], rec))


VICTIM = ("import signal, sys\n"
          "got = []\n"
          "signal.signal(signal.SIGUSR1, lambda *a: got.append(1))\n"
          "print('ready', flush=True)\n"
          "sys.stdin.readline()\n"
          "print('signals', len(got), flush=True)\n")


def test_audit_mode_signals_nothing_outside(wd):
    """Audit mode enforces nothing of the policy, and so made no Landlock
    domain at all: its agent signalled the user's processes outside the
    session (SIGUSR1 by kill and by pidfd_send_signal reached a process
    of the test's) and harness-exec itself (a SIGSTOP holds every
    decided call, a SIGKILL ends the session with no anchor), and read
    their environments (/proc/PID/environ), where the static deny list
    keeps it from their limits and priorities in both modes. The agent
    now has a domain with the signal scope alone in audit mode (which
    also holds the ptrace checks); enforce mode held all of it before."""
    victim = subprocess.Popen([PYTHON, "-c", VICTIM], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env={"HX_SECRET_ENV": "x"},
                              start_new_session=True)
    try:
        check(victim.stdout.readline().strip() == "ready", "the victim did not start")
        for mode in (None, "audit"):
            r = harness([HELPER, "signal", str(victim.pid)], wd, policy=None, mode=mode)
            r.expect_status(0)
            lines = r.stdout.splitlines()
            for want in ("kill EPERM", "pidfd EPERM", "harness EPERM"):
                check(want in lines, "[%s] %r, not %r" % (mode or "enforce", r.stdout, want))
            check("environ ok" not in lines, "[%s] the agent read the environment: %r" % (
                mode or "enforce", r.stdout))
            ll = r.one(event="session_start").get("kernel", {}).get("landlock")
            check(ll == ("applied" if mode is None else "signal scope only (audit mode)"),
                  "[%s] session_start kernel.landlock: %r" % (mode or "enforce", ll))
            r.one(event="session_end")
    finally:
        out = victim.communicate("\n", timeout=30)[0]
    check("signals 0" in out, "a signal reached the process outside: %r" % out)


def test_the_sessions_shared_memory_files_end_with_it(wd):
    """/dev/shm is the machine's one tmpfs, in memory: a file the agent
    made there (64 MiB here; half of the machine's memory is the
    default size) outlasted the session, as did its name, the one a
    program of the user's opens next, where the session's TMPDIR is
    removed at its end. The session's own files there (the kernel layer
    sees every create) are removed once its tree is gone, both names of
    one; session_end says how many; a file of the user's there stays."""
    tag = "hx-attack24b-%d" % os.getpid()
    users = "/dev/shm/%s-user" % tag
    with open(users, "w") as f:
        f.write("the user's")
    try:
        for mode in (None, "audit"):
            r = harness([HELPER, "shm", tag], wd, policy=None, mode=mode)
            r.expect_status(0)
            check(r.stdout.strip() == "shm ok", "[%s] %r" % (mode or "enforce", r.stdout))
            left = [n for n in os.listdir("/dev/shm") if n.startswith(tag) and n != tag + "-user"]
            check(not left, "[%s] the session's files outlasted it: %r" % (mode or "enforce", left))
            got = r.one(event="session_end").get("dev_shm")
            check(got == {"removed": 2, "left": False}, "[%s] session_end dev_shm: %r" % (
                mode or "enforce", got))
        check(os.path.exists(users), "the user's file was removed")
    finally:
        for n in os.listdir("/dev/shm"):
            if n.startswith(tag):
                os.unlink(os.path.join("/dev/shm", n))


# Local daemons that the user's uid (or a root agent's) reaches through
# local-sockets' unix:/run/**, and the rule that now refuses each.
SERVICES = (
    ("/run/cups/cups.sock", "network-daemons"),
    ("/var/run/cups/cups.sock", "network-daemons"),
    ("/run/chrony/chronyd.sock", "network-daemons"),
    ("/run/supervisor.sock", "code-servers"),
    ("/run/fail2ban/fail2ban.sock", "code-servers"),
    ("/run/pcscd/pcscd.comm", "ssh-agent-sockets"),
)


def test_local_daemons_that_act_for_any_caller_are_not_reached(wd):
    """local-sockets allowed unix:/run/**, and a socket of another uid
    is the policy's alone (harness:neighbour takes the user's own): CUPS
    (0666: it prints what anyone sends to its printers, network ones
    too, data off the machine past every network rule; for root a new
    printer at any URI), pcscd (0666: the user's smart cards and
    security keys, a PIN already given being the card's), and for a root
    agent chrony's (new time servers, the clock stepped), supervisord's
    (starts its programs) and fail2ban's (a jail's action runs as root).
    No such daemon runs here: the default policy's verdict is checked,
    as for the daemons of the nineteenth review."""
    from lib import POLICY_TOOL
    for path, rule in SERVICES:
        out = subprocess.run([POLICY_TOOL, "explain", "--", "connect", "unix:" + path],
                             capture_output=True, text=True).stdout
        check(out.startswith("deny ") and "rule=%s" % rule in out, "%s: %r" % (path, out))


# fscrypt's key removal through any fd of the file system (a directory
# of the project): the user's own key goes, and with it access to every
# directory it unlocks, until the user unlocks them again.
REMOVE_KEY = r'''
import errno, fcntl, os
out = []
for cmd in (0xC0406618, 0xC0406619):  # FS_IOC_REMOVE_ENCRYPTION_KEY(_ALL_USERS)
    fd = os.open(".", os.O_RDONLY)
    try:
        fcntl.ioctl(fd, cmd, bytearray(64))
        out.append("done")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
    os.close(fd)
print(" ".join(out))
'''


def test_the_users_encryption_keys_are_not_the_agents_to_remove(wd):
    """FS_IOC_REMOVE_ENCRYPTION_KEY takes any fd on the file system and
    removes the caller's own key (the user's, for an agent of the user),
    locking the user's encrypted directories (a review's reading: this
    machine has no fscrypt, so natively the call fails EOPNOTSUPP or
    EINVAL here). Refused in BPF with EPERM, in both modes, whatever the
    file system."""
    for mode in (None, "audit"):
        r = harness([PYTHON, "-c", REMOVE_KEY], wd, policy=None, mode=mode)
        check(r.stdout.split() == ["EPERM", "EPERM"], "%s: %r %r" % (mode, r.stdout, r.stderr))
    bare = subprocess.run([PYTHON, "-c", REMOVE_KEY], cwd=wd.path, capture_output=True, text=True)
    check("EPERM" not in bare.stdout, "natively: %r" % bare.stdout)


# A read lease, then another process's open for writing, which the
# lease holds (EWOULDBLOCK with O_NONBLOCK: the lease's break begins).
LEASE = ("import errno, fcntl, os, sys\n"
         "fd = os.open('leased', os.O_RDONLY | os.O_CREAT, 0o644)\n"
         "try:\n"
         "    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)\n"
         "except OSError as e:\n"
         "    print(errno.errorcode[e.errno]); sys.exit(0)\n"
         "print('leased', flush=True)\n"
         "if os.fork() == 0:\n"
         "    try:\n"
         "        os.open('leased', os.O_WRONLY | os.O_NONBLOCK); print('opened', flush=True)\n"
         "    except OSError as e:\n"
         "        print(errno.errorcode[e.errno], flush=True)\n"
         "    os._exit(0)\n"
         "os.wait()\n")


def test_a_lease_holds_no_other_programs_open(wd):
    """A read lease (F_SETLEASE) needs only a read-only fd on a file the
    caller owns, the user's files for an agent of the user; while it is
    held, another program's open for writing waits up to the lease-break
    time (45 s; EWOULDBLOCK with O_NONBLOCK), the user's editor or build
    outside the session too (twenty-fourth attack review, part b: found
    and not fixed then). Refused in BPF with EPERM, in both modes."""
    bare = subprocess.run([PYTHON, "-c", LEASE], cwd=wd.path, capture_output=True, text=True)
    if bare.stdout.split() not in (["leased", "EWOULDBLOCK"], ["leased", "EAGAIN"]):
        raise Skip("leases do not hold here: %r %r" % (bare.stdout, bare.stderr))
    for mode in (None, "audit"):
        r = harness([PYTHON, "-c", LEASE], wd, policy=None, mode=mode)
        check(r.stdout.split() == ["EPERM"], "%s: %r %r" % (mode, r.stdout, r.stderr))


def test_the_users_terminal_settings_are_put_back(wd):
    """The agent shares the user's terminal, whose settings (echo,
    canonical input, signal keys, flow control) are every program's to
    change and outlast the session: an agent that ended in raw mode
    with echo off left the user's shell typing blind (noted by the
    twenty-fourth attack review, part b). harness-exec keeps them at
    the start and puts them back at the end, with the foreground, as ssh
    and script(1) do; in audit mode too."""
    script = wd.file("on_a_terminal.py", ON_A_TERMINAL)
    for mode in (None, "audit"):
        for cmd in (["stty", "raw", "-echo", "-ixon"],
                    [PYTHON, "-c", "import tty; tty.setraw(0)"]):
            r = harness(cmd, wd, policy=None, mode=mode, wrap=[PYTHON, script])
            r.expect_status(0)
            check("after: settings same" in r.stdout.splitlines(),
                  "%s %s: %r" % (mode, cmd[0], r.stdout))


# harness-exec as the first of a pipeline on a terminal (... | less):
# its stdout a pipe, the terminal the pager's, which sets raw mode
# while the session runs.
PIPELINE_PEER = PRELUDE + r'''
p = subprocess.Popen(sys.argv[1:], stdin=s, stdout=subprocess.PIPE, preexec_fn=own)
time.sleep(0.3)
tty.setraw(s)  # the pager's
raw = termios.tcgetattr(s)
p.communicate()
print("after: %s" % ("kept" if termios.tcgetattr(s)[:6] == raw[:6] else "undone"))
sys.exit(p.returncode)
'''


def test_a_pipeline_peers_terminal_settings_are_not_undone(wd):
    """harness-exec puts the terminal's settings back only when its
    stdin and stdout are that one terminal: in a pipeline (harness-exec
    ... | less) the pager sets raw mode while the session runs, and
    putting back what harness-exec saw at its start undid it under the
    pager."""
    script = wd.file("pipeline_peer.py", PIPELINE_PEER)
    r = harness(["sh", "-c", "sleep 1"], wd, policy=None, wrap=[PYTHON, script])
    r.expect_status(0)
    check("after: kept" in r.stdout.splitlines(), "%r %r" % (r.stdout, r.stderr))
