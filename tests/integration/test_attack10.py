"""The tenth attack review: services and kernel objects outside the
sandbox that trust the agent's uid, and kernel interfaces neither
notified nor bounded. Each hole tried as the attacker would, from inside
the default policy, against a process of the same uid started by the
test outside the session, and checked for its effect and its record."""

import array
import fcntl
import glob
import os
import pwd
import shutil
import struct
import subprocess
import tempfile
import time
import uuid

from lib import PYTHON, Listener, Skip, Started, check, harness
from test_default_policy import fake_home

# The agent's side: openat2 (always decided by the kernel layer, which
# opens for it) of another process's environ, maps and mem, and of a
# file through its cwd link; a plain open too (decided there under
# --trace-reads). Prints what it read, or the errno.
PROC_READ = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]
def openat2(path):
    how = How(os.O_RDONLY, 0, 0)
    fd = libc.syscall(437, -100, path.encode(), ctypes.byref(how), ctypes.sizeof(how))
    if fd < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return fd
def show(name, f):
    try:
        print(name, f())
    except OSError as e:
        print(name, "errno", e.errno)
def slurp(fd):
    out = b""
    while True:
        b = os.read(fd, 65536)
        if not b:
            os.close(fd)
            return out
        out += b
def mem():
    fd = openat2("/proc/%s/mem" % pid)
    maps = slurp(openat2("/proc/%s/maps" % pid)).decode()
    for line in maps.splitlines():
        if line.endswith("[stack]"):
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            return os.pread(fd, hi - lo, lo)
    return b""
pid, plain = sys.argv[1], sys.argv[2:] == ["plain"]
show("environ", lambda: slurp(openat2("/proc/%s/environ" % pid)))
show("mem", mem)
show("cwd", lambda: slurp(openat2("/proc/%s/cwd/note" % pid)))
if plain:
    show("plain", lambda: slurp(os.open("/proc/%s/environ" % pid, os.O_RDONLY)))
# The agent's own child stays as readable as natively.
import subprocess
child = subprocess.Popen(["sleep", "30"], env={"OWN": "own-child-env"})
def own():
    import time
    for _ in range(1000):  # its exec may not have set its environment yet
        got = slurp(openat2("/proc/%d/environ" % child.pid))
        if got:
            return got
        time.sleep(0.02)
    return got
show("own", own)
child.kill()
"""


def _victim(wd, secret):
    """A process of the agent's uid outside the session, with a secret
    in its environment and a file in its cwd (as root: one that dropped
    its capabilities, as many root daemons do, so that the uid is the
    only check; a root process keeping its capabilities is kept from a
    capability-less opener by the kernel already)."""
    home = os.path.join(wd.state, "victim")
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, "note"), "w") as f:
        f.write("note-%s\n" % secret)
    argv = ["sleep", "120"]
    if os.geteuid() == 0:
        argv = ["setpriv", "--inh-caps=-all", "--bounding-set=-all"] + argv
    env = dict(os.environ, HX_VICTIM_TOKEN=secret)
    return subprocess.Popen(argv, cwd=home, env=env)


def test_other_processes_memory_and_environment_through_the_kernel_layer(wd):
    """Landlock refuses the agent another process's environ, mem, maps
    and fd, cwd and root links (its ptrace scope: the kernel asks
    whether the opener may trace the process), but the kernel layer
    opens for the agent as harness-exec, in no Landlock domain, with
    only CAP_SYS_PTRACE dropped: through openat2 (always emulated), and
    with --trace-reads any open, an ordinary user's agent read the
    environment and the stack of the user's other processes (no Yama
    here: the uid is the only other check), and a file through one's
    cwd link; a root agent those of root processes without
    capabilities. Now refused (rule harness:outside-process, a revoked
    record), for a process outside the agent's tree only."""
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        check(False, "no setpriv to start a root victim without capabilities")
    secret = uuid.uuid4().hex
    victim = _victim(wd, secret)
    try:
        for extra in ((), ("--trace-reads",)):
            args = [PYTHON, "-c", PROC_READ, str(victim.pid)] + (["plain"] if extra else [])
            r = harness(args, wd, policy=None, extra=extra)
            r.expect_status(0)
            lines = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
            check(secret not in r.stdout, "%s: the outside process's secret was read by %s" % (
                extra, [k for k, v in lines.items() if secret in v]))
            for what in ["environ", "mem", "cwd"] + (["plain"] if extra else []):
                check(lines.get(what) == "errno 13",
                      "%s %s: %r" % (extra, what, (lines.get(what) or "")[:200]))
            check("own-child-env" in lines.get("own", ""),
                  "the agent's own child's environ: %r" % lines.get("own"))
            for name in ("environ", "mem", "cwd/note"):
                rec = r.one(event="revoked", rule="harness:outside-process",
                            args_path="/proc/%d/%s" % (victim.pid, name))
                check(rec["verdict"] == "deny", "record: %r" % rec)
    finally:
        victim.kill()
        victim.wait()


def _postgres(wd):
    """A PostgreSQL server of the machine's (run as its own user, the
    socket in /run/postgresql, peer authentication, as Debian sets it
    up) with a superuser role of the agent's uid, as a developer makes
    one. Returns (data dir, port, stop)."""
    if os.geteuid() != 0:
        raise Skip("needs root to run a server as the postgres user")
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        bins = []
    if not bins:
        raise Skip("no PostgreSQL server here")
    bindir = os.path.dirname(bins[-1])
    top = tempfile.mkdtemp(prefix="hx-pg-")
    shutil.chown(top, "postgres")
    made_run = not os.path.isdir("/run/postgresql")
    if made_run:
        os.mkdir("/run/postgresql", 0o2775)
        shutil.chown("/run/postgresql", "postgres", "postgres")
    port = str(50000 + uuid.uuid4().int % 9000)
    as_pg = ["setpriv", "--reuid", "postgres", "--regid", "postgres", "--init-groups"]
    data = os.path.join(top, "data")
    subprocess.run(as_pg + [os.path.join(bindir, "initdb"), "-D", data, "-A", "peer",
                            "-U", "postgres"], check=True, capture_output=True, cwd=top)
    subprocess.run(as_pg + [os.path.join(bindir, "pg_ctl"), "-D", data, "-w", "-l",
                            os.path.join(top, "log"), "-o",
                            "-k /run/postgresql -p %s -c listen_addresses=" % port, "start"],
                   check=True, capture_output=True, cwd=top)

    def stop():
        subprocess.run(as_pg + [os.path.join(bindir, "pg_ctl"), "-D", data, "-w", "-m",
                                "immediate", "stop"], capture_output=True, cwd=top)
        shutil.rmtree(top, ignore_errors=True)
        if made_run:
            shutil.rmtree("/run/postgresql", ignore_errors=True)

    try:
        user = pwd.getpwuid(os.geteuid()).pw_name
        subprocess.run(as_pg + ["psql", "-h", "/run/postgresql", "-p", port, "-d", "postgres",
                                "-c", 'CREATE ROLE "%s" SUPERUSER LOGIN' % user],
                       check=True, capture_output=True, cwd=top)
    except BaseException:
        stop()
        raise
    return top, port, stop


def test_a_database_server_that_trusts_the_uid(wd):
    """The loopback rule asks about a database's TCP port, but its Unix
    socket in /run (PostgreSQL's /run/postgresql, MySQL's /run/mysqld)
    was let through by local-sockets (unix:/run/**): such servers trust
    the peer's uid there (peer authentication), so the agent was the
    user's role, and with the superuser role a developer gives himself
    it ran a program outside the sandbox as the postgres user (COPY ...
    TO PROGRAM: an id written where the agent may not write). Now asked
    (rule local-databases; refused here, where no one answers)."""
    if not shutil.which("psql"):
        raise Skip("no psql here")
    top, port, stop = _postgres(wd)
    marker = os.path.join(top, "outside")
    try:
        sql = "COPY (SELECT 1) TO PROGRAM 'id > %s'" % marker
        r = harness(["psql", "-h", "/run/postgresql", "-p", port, "-d", "postgres",
                     "-c", sql], wd, policy=None)
        if os.path.exists(marker):
            with open(marker) as f:
                check(False, "a program ran outside the sandbox: %r" % f.read())
        check(r.status != 0, "psql succeeded: %r" % r.stdout)
        rec = r.one(event="connect", args_addr="unix:/run/postgresql/.s.PGSQL.%s" % port)
        check(rec["verdict"] == "ask" and rec["rule"] == "local-databases",
              "record: %r" % rec)
    finally:
        stop()


# The agent's side on a Linux console: ioctls of its controlling
# terminal whose state every console shares or that outlasts the session
# (the kernel allows them to the terminal's own processes: no
# capability). Prints each errno.
CONSOLE = r"""
import fcntl, os, struct
KDSKBDIACR, PIO_CMAP, PIO_SCRNMAP, KDSETMODE, VT_ACTIVATE = 0x4B4B, 0x4B71, 0x4B41, 0x4B3A, 0x5606
fd = os.open("/dev/tty", os.O_RDWR)
for name, req, arg in (("cmap", PIO_CMAP, bytes(48)),
                       ("scrnmap", PIO_SCRNMAP, bytes([ord("x")] * 256)),
                       ("diacr", KDSKBDIACR, struct.pack("I", 0)),
                       ("mode", KDSETMODE, 1),
                       ("activate", VT_ACTIVATE, int(os.environ["HX_VT"]))):
    try:
        fcntl.ioctl(fd, req, arg)
        print(name, "ok")
    except OSError as e:
        print(name, "errno", e.errno)
"""
GIO_CMAP, GIO_SCRNMAP, KDGKBDIACR, KDGETMODE = 0x4B70, 0x4B40, 0x4B4A, 0x4B3B
PIO_CMAP, PIO_SCRNMAP, KDSKBDIACR, KDSETMODE = 0x4B71, 0x4B41, 0x4B4B, 0x4B3A
VT_GETSTATE, VT_ACTIVATE = 0x5603, 0x5606


def _console_state(path):
    """The colours, screen map and accent table every console shares,
    the display mode of this one and the active console. (A fresh open:
    the session's end hangs up the fds its terminal had.)"""
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    try:
        mode = array.array("i", [0])
        fcntl.ioctl(fd, KDGETMODE, mode)
        active = struct.unpack("HHH", fcntl.ioctl(fd, VT_GETSTATE, bytes(6)))[0]
        return (fcntl.ioctl(fd, GIO_CMAP, bytes(48)), fcntl.ioctl(fd, GIO_SCRNMAP, bytes(256)),
                fcntl.ioctl(fd, KDGKBDIACR, bytes(4 + 256 * 3)), mode[0], active)
    finally:
        os.close(fd)


def test_console_state_shared_by_every_console(wd):
    """On a Linux console (a VT as the agent's terminal: a text login,
    a server's screen), the kernel lets the terminal's own processes,
    with no capability, set what every console shares and what outlasts
    them: the colour map (all black: every console unreadable), the
    screen map (what each character shows as), the accent table, the
    display mode (graphics: the console left blank after the session)
    and the active console. TIOCSTI and TIOCLINUX were refused, these
    passed. Now refused in BPF (no record: the deny list)."""
    if os.geteuid() != 0:
        raise Skip("needs root to give the agent a console as its terminal")
    vt = 9
    path = "/dev/tty%d" % vt
    try:
        before = _console_state(path)
    except OSError as e:
        raise Skip("no console here: %s" % e)
    try:
        # The agent's terminal is the console: harness-exec started in a
        # session of its own whose controlling terminal it is.
        start = ("import os, sys; os.setsid(); f = os.open(%r, os.O_RDWR); "
                 "os.dup2(f, 0); os.execv(sys.argv[1], sys.argv[1:])" % path)
        r = harness([PYTHON, "-c", CONSOLE], wd, policy=None, env={"HX_VT": str(vt)},
                    wrap=[PYTHON, "-c", start])
        after = _console_state(path)
        lines = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
        check(after == before, "the console's state changed: %r" % (
            [n for n, b, a in zip(("cmap", "scrnmap", "diacr", "mode", "active"), before, after)
             if a != b]))
        for name in ("cmap", "scrnmap", "diacr", "mode", "activate"):
            check(lines.get(name) == "errno 1", "%s: %r (%r)" % (name, lines.get(name), r.stdout))
    finally:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        fcntl.ioctl(fd, PIO_CMAP, before[0])
        fcntl.ioctl(fd, PIO_SCRNMAP, before[1])
        fcntl.ioctl(fd, KDSKBDIACR, before[2])
        fcntl.ioctl(fd, KDSETMODE, before[3])
        fcntl.ioctl(fd, VT_ACTIVATE, before[4])
        os.close(fd)


def test_kerberos_tickets_in_tmp(wd):
    """Kerberos keeps the user's tickets by default in /tmp/krb5cc_UID
    (MIT's and Heimdal's FILE: cache; the KEYRING: one is keyctl's,
    refused in BPF): a ticket-granting ticket is the user's password for
    every service of the realm until it expires. The default denied
    ~/.ssh and ~/.aws, and let cat and a static busybox read the ticket
    cache in /tmp (a write root, which Landlock grants whole). Now
    denied (rule kerberos-tickets), for the static program by the mask
    over the cache found at start."""
    path = "/tmp/krb5cc_%d_hx%s" % (os.geteuid(), uuid.uuid4().hex[:8])
    secret = "tgt-%s" % uuid.uuid4().hex
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, secret.encode())
    os.close(fd)
    try:
        progs = [["cat", path]]
        if shutil.which("busybox"):
            progs.append([shutil.which("busybox"), "cat", path])
        for argv in progs:
            r = harness(argv, wd, policy=None)
            check(secret not in r.stdout, "%s read the ticket cache" % argv[0])
        r = harness(["cat", path], wd, policy=None)
        rec = r.one(event="open", args_path=path)
        check(rec["verdict"] == "deny" and rec["rule"] == "kerberos-tickets", "record: %r" % rec)
    finally:
        os.unlink(path)


# The agent's side: a service at a socket path in a write root that the
# user's programs outside the session connect to; the service's socket
# there first removed (argv[2] "replace"). Prints what its clients sent.
FAKE_SERVICE = r"""
import os, socket, sys
path = sys.argv[1]
try:
    os.makedirs(os.path.dirname(path), exist_ok=True)
except OSError as e:
    print("mkdir errno", e.errno, flush=True)
    sys.exit(0)
if sys.argv[2] == "replace":
    try:
        os.unlink(path)
        print("removed", flush=True)
    except OSError as e:
        print("remove errno", e.errno, flush=True)
s = socket.socket(socket.AF_UNIX)
try:
    s.bind(path)
except OSError as e:
    print("bind errno", e.errno, flush=True)
    sys.exit(0)
s.listen(4)
print("serving", flush=True)
s.settimeout(float(sys.argv[3]))
got = b""
try:
    while True:
        c, _ = s.accept()
        c.settimeout(2)
        try:
            while True:
                b = c.recv(4096)
                if not b:
                    break
                got += b
        except socket.timeout:
            pass
        c.close()
except socket.timeout:
    pass
print("got", got)
"""


def test_a_socket_the_users_programs_connect_to(wd):
    """The agent bound a socket where the user's programs outside the
    session connect to a service of the user's: git's credential cache
    (credential-cache's socket in ~/.cache/git/credential, a write
    root), and the user's next `git credential-cache store` (every
    successful git push over HTTPS with that helper) gave the agent the
    password. It could also remove a running service's socket in a write
    root and serve its own in its place. Now the bind there is denied
    (rule service-sockets) and a neighbour's socket is not the agent's
    to remove or rename over (harness:neighbour)."""
    git = shutil.which("git")
    if not git or not os.path.exists("/usr/lib/git-core/git-credential-cache"):
        raise Skip("no git credential-cache here")
    home = os.path.expanduser("~")
    place = os.path.join(home, ".cache", "git", "credential", "socket")
    if os.path.exists(place):
        raise Skip("a credential cache of the user's is running here")
    made = [d for d in (os.path.join(home, ".cache", "git"), os.path.join(home, ".cache"))
            if not os.path.exists(d)]
    secret = "pw-%s" % uuid.uuid4().hex
    s = Started([PYTHON, "-c", FAKE_SERVICE, place, "bind", "6"], wd, policy=None)
    try:
        for _ in range(400):
            if os.path.exists(place) or not s.alive():
                break
            time.sleep(0.05)
        # The user's git, outside the session, after a push.
        subprocess.run([git, "credential-cache", "store"], timeout=30, capture_output=True,
                       input=("protocol=https\nhost=example.com\nusername=me\npassword=%s\n\n"
                              % secret).encode())
    finally:
        r = s.join(60)
        subprocess.run([git, "credential-cache", "exit"], capture_output=True, timeout=30)
        shutil.rmtree(os.path.join(home, ".cache", "git", "credential"), ignore_errors=True)
        for d in made:
            try:
                os.rmdir(d)
            except OSError:
                pass
    check(secret not in r.stdout, "the agent got the user's password: %r" % r.stdout[-300:])
    # Its directory's mkdir, or the bind where the directory is there.
    recs = r.events(rule="service-sockets")
    check(recs and all(x["verdict"] == "deny" for x in recs), "records:\n%s" % r.dump())
    # A service of the user's running in a write root: its socket is
    # not the agent's to remove and serve in its place.
    place = os.path.join(home, ".cache", "hx-svc-%s" % uuid.uuid4().hex[:8], "sock")
    os.makedirs(os.path.dirname(place))
    service = Listener(path=place)
    try:
        r = harness([PYTHON, "-c", FAKE_SERVICE, place, "replace", "1"], wd, policy=None)
        check("removed" not in r.stdout and os.path.exists(place),
              "the service's socket was removed: %r" % r.stdout)
        rec = r.one(event="unlink", args_path=place)
        check(rec["verdict"] == "deny" and rec["rule"] == "harness:neighbour", "record: %r" % rec)
    finally:
        service.close()
        shutil.rmtree(os.path.dirname(place), ignore_errors=True)


WATCH = r"""
import ctypes, os, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
for p in sys.argv[1:]:
    wd = libc.inotify_add_watch(fd, p.encode(), 0xfff)  # IN_ALL_EVENTS
    print(p, wd if wd >= 0 else os.strerror(ctypes.get_errno()))
sys.stdout.flush()
open("watched/new", "w").close()
time.sleep(float(os.environ.get("HX_WATCH_WAIT", "0")))
try:
    data = os.read(fd, 65536)
except BlockingIOError:
    data = b""
names = []
while data:
    wd, mask, cookie, ln = struct.unpack_from("iIII", data)
    names.append(data[16:16 + ln].rstrip(b"\0").decode())
    data = data[16 + ln:]
print("events", sorted(set(names) - {""}))  # "": the directory itself
"""


def test_a_watch_on_a_denied_directory_is_refused(wd):
    """inotify_add_watch was neither notified nor seen by Landlock (it
    has no hook there): a root agent watched ~/.ssh and was told the
    name of every file the user's programs made or opened there, and
    when (found by this review, left open at first). A watch is now
    decided as the read of its path: refused on a denied directory
    (its refusal recorded), added by the kernel layer on the decided
    file for the rest, and its events come as before. The test's own
    process, outside the session, opens the key while the agent
    watches."""
    home = fake_home(wd)
    os.makedirs(os.path.join(wd.path, "watched"))
    ssh = os.path.join(home, ".ssh")
    t = Started([PYTHON, "-c", WATCH, "watched", ssh], wd, policy=None,
                env={"HOME": home, "HX_WATCH_WAIT": "2"})
    deadline = time.time() + 20
    while t.alive() and time.time() < deadline:
        # The user's ssh reading its key, meanwhile.
        open(os.path.join(ssh, "id_rsa")).read()
        time.sleep(0.05)
    r = t.join(60)
    lines = r.stdout.splitlines()
    check(lines[:2] == ["watched 1", ssh + " Permission denied"], repr((r.stdout, r.stderr[-500:])))
    check(lines[2] == "events ['new']", "what the watches told: %r" % lines[2:])
    rec = r.one(event="inotify_add_watch", args_path=ssh)
    check(rec["verdict"] == "deny" and rec["rule"] == "ssh", rec)
    check(r.one(event="inotify_add_watch", args_path=os.path.join(wd.path, "watched"))["verdict"] == "allow",
          "the project's watch")


FANOTIFY = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.fanotify_init(0x00000c00, os.O_RDONLY)  # FAN_REPORT_DFID_NAME
print("fanotify", fd if fd < 0 else "made", os.strerror(ctypes.get_errno()) if fd < 0 else "")
"""


def test_fanotify_marks_are_refused(wd):
    """fanotify's inode marks (no capability needed, Linux 5.13) tell
    the names of the files made and opened in a directory as inotify's
    watches do, and Landlock has no hook there either: a root agent
    marked ~/.ssh. Refused in BPF (EPERM), as its programs expect where
    it is not allowed."""
    r = harness([PYTHON, "-c", FANOTIFY], wd, policy=None)
    check(r.stdout.strip() == "fanotify -1 Operation not permitted", repr((r.stdout, r.stderr[-300:])))
