"""Processes outside the session, reached by an id rather than a path or
a signal: calls whose only check is the uid, which Landlock does not
scope (prlimit64, setpriority and ioprio_set of a group or a user), and
SysV IPC and POSIX message queues, named host-wide. The victims are this
test's own processes and objects (the agent's uid, as root and as the
ordinary user); the attacker is static (tests/helpers/static_outside.c),
so only the kernel layers see it. The static deny list and the IPC
namespace are the sandbox's integrity: they hold in audit mode too."""

import ctypes
import os
import socket
import subprocess
import uuid

from lib import HELPERS, PYTHON, Listener, Skip, check, harness

HELPER = os.path.join(HELPERS, "static_outside")
IPC_CREAT, IPC_RMID, GETVAL, IPC_NOWAIT = 0o1000, 0, 12, 0o4000
O_RDONLY, O_CREAT, O_NONBLOCK = 0, 0o100, 0o4000

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]


def _lines(r):
    return dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)


def _nice(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[16])


def _nofile(pid):
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max open files"):
                return line.split()[3:5]
    return None


def test_limits_and_priorities_of_outside_processes_unchanged(wd):
    """prlimit64 of another pid (RLIMIT_NOFILE 0 or RLIMIT_CPU 1 stops
    any daemon of the uid, the supervisor too) and setpriority /
    ioprio_set of a group or a user passed: Landlock scopes signals and
    ptrace only. Refused in BPF; the same calls on oneself pass."""
    victim = subprocess.Popen(["sleep", "120"], start_new_session=True)
    try:
        before = (_nofile(victim.pid), _nice(victim.pid))
        io_before = subprocess.run([HELPER, "ioprio", str(victim.pid)],
                                   capture_output=True, text=True).stdout
        for mode in (None, "audit"):
            r = harness([HELPER, "limits", str(victim.pid)], wd, policy=None, mode=mode)
            r.expect_status(0)
            got = _lines(r)
            for call in ("prlimit", "setpriority-pgrp", "setpriority-user", "ioprio-pgrp"):
                check(got.get(call) == "EPERM", "[%s] %s: %r (%r)" % (
                    mode or "enforce", call, got.get(call), r.stdout))
            r.one(event="session_start")
        after = (_nofile(victim.pid), _nice(victim.pid))
        check(after == before, "the outside process changed: %r -> %r" % (before, after))
        io_after = subprocess.run([HELPER, "ioprio", str(victim.pid)],
                                  capture_output=True, text=True).stdout
        check(io_after == io_before, "its I/O priority changed: %r -> %r" % (io_before, io_after))
    finally:
        victim.kill()
        victim.wait()
    r = harness([HELPER, "self"], wd, policy=None)
    r.expect_status(0)
    check(_lines(r) == {"prlimit": "ok", "setpriority": "ok", "ioprio": "ok"},
          "calls on oneself refused: %r" % r.stdout)


def _sched_state(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    with open("/proc/%d/status" % pid) as f:
        cpus = [line for line in f if line.startswith("Cpus_allowed_list")]
    io = subprocess.run([HELPER, "ioprio", str(pid)], capture_output=True, text=True).stdout
    return fields[16], fields[38], cpus, io  # nice, policy, CPUs, I/O priority


def test_scheduling_of_outside_processes_unchanged(wd):
    """setpriority, ioprio_set, sched_setaffinity, sched_setscheduler,
    sched_setparam and sched_setattr of another pid passed with a uid
    check only: as the user, any process of the user outside the session
    was set to nice 19, SCHED_IDLE or one CPU. Now notified when the id
    is not 0 and done by the supervisor for the agent's own tree only;
    a child of the agent and its own thread (pthread_setaffinity_np) are
    still served, in both modes."""
    victim = subprocess.Popen(["sleep", "120"])
    try:
        before = _sched_state(victim.pid)
        for mode in (None, "audit"):
            r = harness([HELPER, "sched", str(victim.pid)], wd, policy=None, mode=mode)
            r.expect_status(0)
            got = _lines(r)
            for call in ("setpriority", "ioprio", "affinity", "scheduler", "param", "attr"):
                check(got.get(call) == "EPERM", "[%s] %s: %r" % (mode or "enforce", call, r.stdout))
        after = _sched_state(victim.pid)
        check(after == before, "the outside process changed: %r -> %r" % (before, after))
    finally:
        victim.kill()
        victim.wait()
    r = harness([HELPER, "sched-own"], wd, policy=None)
    r.expect_status(0)
    got = _lines(r)
    for call in ("setpriority", "ioprio", "affinity", "scheduler", "param", "attr",
                 "thread-affinity"):
        check(got.get(call) == "ok", "%s on the agent's own: %r" % (call, r.stdout))


def test_sysv_ipc_and_message_queues_outside_unreachable(wd):
    """An outside process's SysV shared memory, message queue and
    semaphore (found by id in /proc/sysvipc) and its POSIX message queue
    (by name) were written by the agent: no check of Landlock's covers
    them. The agent now has an IPC namespace of its own (as root, or in
    the masks' user namespace), where those ids and names do not exist,
    or the calls are refused; session_start says which, and the agent's
    own objects work where it has its own namespace."""
    shm = libc.shmget(0, 4096, IPC_CREAT | 0o600)
    msg = libc.msgget(0, IPC_CREAT | 0o600)
    sem = libc.semget(0, 1, IPC_CREAT | 0o600)
    name = ("/hx-%s" % uuid.uuid4().hex[:12]).encode()
    mq = libc.mq_open(name, O_RDONLY | O_CREAT | O_NONBLOCK, 0o600, None)
    check(min(shm, msg, sem, mq) >= 0, "cannot make the outside objects: errno %d" % ctypes.get_errno())
    addr = libc.shmat(shm, None, 0)
    try:
        for mode in (None, "audit"):
            r = harness([HELPER, "sysv", str(shm), str(msg), str(sem)], wd, policy=None, mode=mode)
            r.expect_status(0)
            got = _lines(r)
            r2 = harness([HELPER, "mq", name.decode()], wd, policy=None, mode=mode)
            r2.expect_status(0)
            got.update(_lines(r2))
            for call in ("shmat", "msgsnd", "semop", "mq_open"):
                check(got.get(call) not in (None, "ok"), "[%s] %s: %r" % (
                    mode or "enforce", call, got))
        check(ctypes.string_at(addr, 5) == b"\0" * 5, "shared memory written: %r" % ctypes.string_at(addr, 5))
        buf = ctypes.create_string_buffer(64)
        check(libc.msgrcv(msg, buf, 56, 0, IPC_NOWAIT) < 0, "a message reached the outside queue")
        check(libc.semctl(sem, 0, GETVAL) == 0, "the outside semaphore moved")
        mbuf = ctypes.create_string_buffer(1 << 16)
        check(libc.mq_receive(mq, mbuf, len(mbuf), None) < 0, "a message reached the outside mqueue")
    finally:
        libc.shmdt(ctypes.c_void_p(addr))
        libc.shmctl(shm, IPC_RMID, None)
        libc.msgctl(msg, IPC_RMID, None)
        libc.semctl(sem, 0, IPC_RMID)
        libc.mq_close(mq)
        libc.mq_unlink(name)
    r = harness([HELPER, "own"], wd, policy=None)
    r.expect_status(0)
    # Seen by harness-exec in the agent's first process (its ns/ipc),
    # so the record says what happened, not what was expected.
    how = r.one(event="session_end").get("sysv_ipc")
    want = {"own namespace": "ok", "refused": "EPERM"}
    check(how in want, "session_end sysv_ipc: %r" % how)
    if os.geteuid() == 0:
        check(how == "own namespace", "root gets no IPC namespace: %r" % how)
    check(_lines(r).get("own") == want[how], "%s, yet the agent's own objects: %r" % (how, r.stdout))


STATIC_UNOTIFY = os.path.join(HELPERS, "static_unotify")
CONNECT = ("import socket, sys\n"
           "s = socket.socket(socket.AF_UNIX)\n"
           "try:\n"
           "    s.connect(sys.argv[1]); s.send(b'cmd'); print('ok')\n"
           "except OSError as e:\n"
           "    print(e.errno)\n")


def _unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def test_sockets_of_the_users_services_outside_are_neighbours(wd):
    """A service of the user's outside the sandbox that obeys its uid
    (tmux -S /tmp/x, ssh-agent -a /tmp/x, an ssh control master, a
    compositor's IPC) was reached wherever no list named its place: the
    default allows unix:/tmp/** and unix:$CWD/**. A socket file of the
    agent's uid that no process of the session bound is now refused,
    rule harness:neighbour, from a static program and through the shim;
    the session's own sockets work, in a race that swaps hard links of
    the two under one name too; another uid's socket is the policy's."""
    tag = uuid.uuid4().hex[:8]
    places = ["/tmp/hx-nb-%s.sock" % tag, os.path.join(wd.path, "nb.sock")]
    dgram = "/tmp/hx-nb-%s.dgram" % tag
    listeners = [Listener(path=p) for p in places]
    d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    d.bind(dgram)
    d.setblocking(False)
    try:
        for path, lst in zip(places, listeners):
            r = harness([STATIC_UNOTIFY, "uconnect", path], wd, policy=None)
            check(r.stdout.strip() == "err EACCES", "%s: %r" % (path, (r.stdout, r.stderr[-300:])))
            rec = r.one(event="connect", args_addr="unix:" + path)
            check(rec["verdict"] == "deny" and rec["rule"] == "harness:neighbour" and
                  rec["layer"] == "kernel", rec)
            r = harness([PYTHON, "-c", CONNECT, path], wd, policy=None)
            check(r.stdout.strip() == "13", "%s through the shim: %r" % (path, r.stdout))
            check(r.one(op="connect", args_addr="unix:" + path)["rule"] == "harness:neighbour",
                  r.dump())
            check(lst.accepted == 0, "%s: the neighbour was reached" % path)
        r = harness([STATIC_UNOTIFY, "usendto", dgram], wd, policy=None)
        check(r.stdout.strip() == "err EACCES", "datagram: %r" % r.stdout)
        check(r.one(args_addr="unix:" + dgram)["rule"] == "harness:neighbour", r.dump())
        try:
            got = d.recv(100)
        except BlockingIOError:
            got = None
        check(got is None, "a datagram reached the neighbour: %r" % got)
        # Audit mode records the same verdict (and enforces nothing).
        r = harness([STATIC_UNOTIFY, "uconnect", places[0]], wd, policy=None, mode="audit")
        rec = r.one(event="connect", args_addr="unix:" + places[0])
        check(rec["verdict"] == "deny" and rec["rule"] == "harness:neighbour", rec)
        # The session's own socket, in the project, while a thread swaps
        # "sw.sock" between hard links of it and of the neighbour's.
        before = listeners[1].accepted
        r = harness([os.path.join(HELPERS, "static_outside"), "linkrace", places[1], "2"], wd,
                    policy=None, timeout=60)
        check(r.stdout.startswith("own ") and int(r.stdout.split()[1]) > 0,
              "the session's own socket was never reached: %r" % ((r.stdout, r.stderr[-300:]),))
        check(listeners[1].accepted == before,
              "the race reached the neighbour %d times" % (listeners[1].accepted - before))
        # A socket of another uid (a daemon's) is not the agent's neighbour.
        if os.geteuid() == 0:
            before = listeners[0].accepted
            os.chown(places[0], 65534, 65534)
            os.chmod(places[0], 0o777)
            r = harness([STATIC_UNOTIFY, "uconnect", places[0]], wd, policy=None)
            check(r.stdout.strip() == "ok uconnect", "another uid's socket: %r" % r.stdout)
            check(listeners[0].accepted == before + 1, "accepted %d" % listeners[0].accepted)
    finally:
        for lst in listeners:
            lst.close()
        d.close()
        for p in places[:1] + [dgram]:
            _unlink(p)


def test_loopback_service_of_the_user_outside(wd):
    """The default allowed loopback for "servers the agent runs", and a
    TCP listener of the user's outside the session was reached as well:
    an ssh -D or corporate HTTP proxy gives network egress past every
    network rule, node --inspect or a browser's debugging port runs code
    outside. Loopback is ask now, and only a port the session's own
    processes listen on is allowed (harness:own-listener,
    test_loopback.py): a static agent's connect is refused in the kernel
    layer and never reaches the listener."""
    lst = Listener(range(30000, 31000))
    try:
        r = harness([STATIC_UNOTIFY, "connect", str(lst.port)], wd, policy=None)
    finally:
        lst.close()
    rec = r.one(event="connect", args_addr="127.0.0.1:%d" % lst.port)
    check(rec["layer"] == "kernel" and rec["rule"] == "loopback" and rec["verdict"] == "ask", rec)
    check(r.stdout.strip() == "err EACCES", "connect: %r" % r.stdout)
    check(lst.accepted == 0, "a static agent reached a loopback listener of the user's "
          "outside the session %d times" % lst.accepted)


def test_listening_on_every_interface(wd):
    """A bind to 0.0.0.0 or :: serves the network (an attacker connecting
    in takes data out, or drives the agent). It is decided (net_listen,
    the rules' listen: patterns) and recorded: the default allows it,
    as many dev servers bind every interface by default (Node's
    listen(port), python -m http.server); a policy can refuse it, for
    an explicit bind, and for a listen() on a socket no bind named,
    which takes an address of every interface."""
    r = harness([HELPER, "listen-any"], wd, policy=None)
    r.expect_status(0)
    check(r.stdout.startswith("listening "), "no listener: %r %r" % (r.stdout, r.stderr[-300:]))
    rec = r.one(event="bind", op="listen")
    check(rec["verdict"] == "allow" and rec["rule"] == "default:net_listen" and
          rec["args"]["addr"] == "0.0.0.0:0" and rec["category"] == "net_listen", rec)
    pol = wd.file("listen.yaml", LISTEN_POLICY)
    r = harness([HELPER, "listen-any"], wd, policy=pol)
    check(r.stdout.strip() == "listen-any EACCES", "served: %r" % r.stdout)
    check(r.one(event="bind", op="listen")["rule"] == "no-network-servers", r.dump())
    code = ("import socket\n"
            "l = socket.socket(); l.bind(('127.0.0.1', 0)); l.listen(); print('local ok')\n"
            "s = socket.socket()\n"
            "try:\n"
            "    s.listen(); print('listened', s.getsockname())\n"
            "except OSError as e:\n"
            "    print('refused', e.errno)\n")
    r = harness([PYTHON, "-c", code], wd, policy=pol)
    check(r.stdout.split("\n")[:2] == ["local ok", "refused 13"], "python: %r %r" % (r.stdout, r.stderr))
    rec = r.one(event="listen", op="listen")
    check(rec["verdict"] == "deny" and rec["args"]["addr"] == "0.0.0.0:0", rec)
    # The spellings the kernel takes too: AF_UNSPEC with 0.0.0.0 on an
    # IPv4 socket, a 24-byte sockaddr_in6 (no scope id) for [::].
    r = harness([PYTHON, "-c", ODD_BINDS], wd, policy=pol)
    check(r.stdout.split() == ["unspec", "13", "short6", "13"], "odd binds: %r %r" % (r.stdout, r.stderr))
    recs = r.events(event="bind", op="listen")
    check(len(recs) == 2 and all(x["verdict"] == "deny" for x in recs), recs)


ODD_BINDS = r'''
import ctypes, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
s = socket.socket()
sa = struct.pack("=HH4s8x", 0, socket.htons(0), b"\0" * 4)
print("unspec", ctypes.get_errno() if libc.bind(s.fileno(), sa, 16) else "bound")
s6 = socket.socket(socket.AF_INET6)
sa6 = struct.pack("=HHI16s", socket.AF_INET6, 0, 0, b"\0" * 16)
print("short6", ctypes.get_errno() if libc.bind(s6.fileno(), sa6, 24) else "bound")
'''


LISTEN_POLICY = """version: 1
network:
  - id: no-network-servers
    deny: ["listen:0.0.0.0:*", "listen:[::]:*"]
    match: ["listen:0.0.0.0:8000", "listen:[::]:3000"]
    not_match: ["listen:127.0.0.1:8000", "0.0.0.0:8000"]
"""


def test_shared_memory_files_of_outside_processes(wd):
    """/dev/shm is shared with every process of the machine and the
    default lets the agent write it (semaphores, Python's
    multiprocessing): a POSIX shared memory object of an outside process
    of the user's (shm_open) was rewritten under it. A file there of the
    agent's uid that no process of the session made is now refused, rule
    harness:neighbour, for writes, truncation and unlinking; the
    session's own objects (made by its opens) work."""
    victim = "/dev/shm/hx-victim-%s" % uuid.uuid4().hex[:8]
    with open(victim, "w") as f:
        f.write("outside\n")
    _attack_shm(wd, victim, "the outside object changed")
    code = ("import multiprocessing as m\n"
            "from multiprocessing import shared_memory as s\n"
            "lock = m.Lock(); lock.acquire(); lock.release()\n"
            "a = s.SharedMemory(create=True, size=16); a.buf[0] = 7\n"
            "b = s.SharedMemory(a.name); print('own', b.buf[0]); b.close(); a.close(); a.unlink()\n")
    r = harness([PYTHON, "-c", code], wd, policy=None)
    check(r.stdout.strip() == "own 7", "the session's own objects: %r %r" % (r.stdout, r.stderr[-400:]))


def _attack_shm(wd, victim, changed):
    """A static program writes, truncates and unlinks victim, a /dev/shm
    file no process of the session made: each refused in the kernel
    layer as harness:neighbour, the file left as it was; then removed."""
    try:
        for cmd in (["wopen", victim], ["truncate", victim], ["unlink", victim]):
            r = harness([STATIC_UNOTIFY] + cmd, wd, policy=None)
            check(r.stdout.strip() == "err EACCES", "%s: %r" % (cmd[0], r.stdout))
            rec = r.one(args_path=victim)
            check(rec["verdict"] == "deny" and rec["rule"] == "harness:neighbour" and
                  rec["layer"] == "kernel", rec)
        with open(victim) as f:
            check(f.read() == "outside\n", changed)
    finally:
        _unlink(victim)


def test_shared_memory_files_of_other_users(wd):
    """Found by an attack review: the neighbour check above held only for
    files of the agent's own uid, so a world-writable object of another
    user's process (a semaphore or a segment made 0666, a daemon's) was
    rewritten, recorded as allowed by rule devices. Any file there that no
    process of the session made is a neighbour's, whoever owns it."""
    if os.geteuid() != 0:
        raise Skip("needs a file of another uid in /dev/shm, which only root can make")
    victim = "/dev/shm/hx-other-%s" % uuid.uuid4().hex[:8]
    with open(victim, "w") as f:
        f.write("outside\n")
    os.chown(victim, 65534, 65534)
    os.chmod(victim, 0o666)
    _attack_shm(wd, victim, "the other user's object changed")


ZERO_DEST = r'''
import socket, sys
port = int(sys.argv[1])
own = socket.socket(); own.bind(("127.0.0.1", port)); own.listen()
s = socket.socket(); s.bind(("127.0.0.2", 0))
try:
    s.connect(("0.0.0.0", port)); own.settimeout(2); own.accept(); print("own")
except OSError as e:
    print("refused", e.errno)
'''


def test_connect_to_0_0_0_0_reaches_what_was_judged(wd):
    """0.0.0.0 as a destination is the socket's own bound address to
    the kernel (127.0.0.2 here, or an external one), ::1 only when
    unbound: judged as loopback, it must be connected as that, not let
    the kernel pick an outside listener on the bound address."""
    outside = socket.socket()
    outside.bind(("127.0.0.2", 0))
    outside.listen(4)
    outside.setblocking(False)
    port = outside.getsockname()[1]
    try:
        r = harness([PYTHON, "-c", ZERO_DEST, str(port)], wd, policy=None)
        check(r.stdout.strip() == "own", "agent: %r %r" % (r.stdout, r.stderr[-300:]))
        try:
            outside.accept()
            reached = True
        except BlockingIOError:
            reached = False
        check(not reached, "the outside listener on the bound address was reached")
    finally:
        outside.close()
