"""Issue 10, classes 1, 2 and 6: the supervisor acting on what the
kernel would act on, CONTINUE answers that an agent could change under
the supervisor, and execs through the dynamic loader. Each test runs an
attack (tests/helpers/static_attack10.c: raw syscalls, no shim; some
through the shim as well), checks that the forbidden effect did not
happen, and reads the audit record."""

import fcntl
import os
import shutil
import socket
import stat
import struct
import subprocess
import uuid

from lib import (ALLOWED_PORTS, DENIED_PORTS, HELPERS, PYTHON, Listener, alone,
                 Skip, check, harness)

ATTACK = os.path.join(HELPERS, "static_attack10")
LDSO = "/lib64/ld-linux-x86-64.so.2"


def _outside(wd, name, text="orig\n"):
    """A file outside every write root (the state dir): readable, not
    writable by the policy."""
    p = os.path.join(wd.state, name)
    with open(p, "w") as f:
        f.write(text)
    os.chmod(p, 0o644)
    if os.geteuid() != 0:
        pass
    return p


# Alone: it races two threads for 2 s and wants a send of the racer's
# through; beside a busy suite one landed of 13,786 once, and its bytes
# not read by the check.
@alone
def test_send_fd_swap_does_not_reach_denied_udp(wd):
    """Class 2: a sendmsg without a name on a TCP socket was CONTINUEd
    ("the kernel ignores msg_name on a stream"); a racing dup2 of a UDP
    socket onto that number, with msg_name set, sent to any address."""
    tcp = Listener(ALLOWED_PORTS)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for port in DENIED_PORTS:
        try:
            udp.bind(("127.0.0.1", port))
            break
        except OSError:
            continue
    udp.setblocking(False)
    try:
        r = harness([ATTACK, "send-swap", str(tcp.port), str(udp.getsockname()[1])], wd,
                    timeout=60)
    finally:
        tcp.close()
    got = 0
    while True:
        try:
            udp.recv(100)
            got += 1
        except BlockingIOError:
            break
    udp.close()
    check(r.stdout.startswith("sends "), "attack did not run: %r %r" % (r.stdout, r.stderr[-300:]))
    check(got == 0, "%d datagrams reached the denied UDP port (%s)" % (got, r.stdout.strip()))
    check(tcp.received.count(b"leak") > 0, "no send reached the allowed TCP peer: %r" % r.stdout)


def test_abstract_connect_swap_does_not_reach_denied_host(wd):
    """Class 2: an abstract connect was CONTINUEd ("Landlock's scope holds
    it"); a racing thread turned the address into 127.0.0.2 on a port
    Landlock lets through (test.yaml bounds ports, not hosts), which the
    policy denies: the kernel connected there (656 of 12637 tries before
    the fix). Now emulated; an abstract name nobody in the tree bound is
    EPERM, as Landlock says."""
    lis = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lis.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    for port in ALLOWED_PORTS:
        try:
            lis.bind(("127.0.0.2", port))
            break
        except OSError:
            continue
    lis.listen(128)
    lis.setblocking(False)
    try:
        r = harness([ATTACK, "abstract-swap", "hx-nobody-%s" % uuid.uuid4().hex,
                     "inet:%d" % lis.getsockname()[1]], wd, timeout=60)
        reached = 0
        while True:
            try:
                c, _ = lis.accept()
                c.close()
                reached += 1
            except BlockingIOError:
                break
    finally:
        lis.close()
    check(r.stdout.startswith("connects "), "attack did not run: %r %r" % (r.stdout, r.stderr[-300:]))
    check(reached == 0, "%d connections reached the denied address (%s)" % (reached, r.stdout.strip()))
    check(r.stdout.startswith("connects 0 ok"), "a connect succeeded: %r" % r.stdout)
    check("EPERM" in r.stdout, "the abstract tries were not refused as Landlock does: %r" % r.stdout)
    rec = r.one(event="connect", verdict="deny")
    check(rec["args"]["addr"].startswith("127.0.0.2:") and rec["layer"] == "kernel", "record: %r" % rec)


def test_magic_link_reopen_after_dup2(wd):
    """Class 1: open("/proc/self/fd/1", O_WRONLY) decided while fd 1 is a
    pipe was emulated by following that magic link again; a racing dup2
    of a read-only fd of a write-denied file onto 1 opened that file for
    writing."""
    target = _outside(wd, "target.txt")
    # The default policy allows writes to /proc/self/fd/[12].
    r = harness([ATTACK, "magic-open", target], wd, policy=None, timeout=60)
    with open(target) as f:
        text = f.read()
    check("opens " in r.stderr or "opens " in r.stdout, "attack did not run: %r %r" % (r.stdout, r.stderr[-300:]))
    check(text == "orig\n", "the write-denied file was written through /proc/self/fd/1: %r" % text[:40])
    # Each refusal on the file's path is a record that names it.
    for rec in r.events(event="open", verdict="deny"):
        a = rec["args"]
        check(target in (a.get("path"), a.get("path_resolved")) or a.get("path") == "/proc/self/fd/1",
              "odd record %r" % rec)


META = ["fchmod", "fchown", "fsetxattr", "futimens", "fchownat-empty", "setxattr",
        "utimes", "utimensat", "mknod", "mkfifo", "bind"]


def _meta_lines(r):
    return dict(l.split(" ", 1) for l in r.stdout.splitlines() if " " in l)


def test_metadata_changes_decided_as_writes(wd):
    """Class 1: fchmod, fchown, fchownat(""), fsetxattr, futimens on a
    read-only fd of a write-denied file, and setxattr, utimes, utimensat,
    mknod, mkfifo and a unix bind by path, were not notified (Landlock
    does not cover them, or not inside a write root). Now each is decided
    as a write and logged; setxattrat (newer than libseccomp) is ENOSYS."""
    target = _outside(wd, "meta.txt")
    outdir = os.path.join(wd.state, "out")
    os.mkdir(outdir)
    before = os.stat(target)
    r = harness([ATTACK, "meta", target, outdir], wd, timeout=60)
    got = _meta_lines(r)
    for k in META:
        check(got.get(k) == "EACCES", "%s: %r (all: %r)" % (k, got.get(k), r.stdout))
    check(got.get("setxattrat") == "ENOSYS", "setxattrat: %r" % got.get("setxattrat"))
    after = os.stat(target)
    check(stat.S_IMODE(after.st_mode) == 0o644, "mode changed: %o" % after.st_mode)
    check(after.st_mtime == before.st_mtime, "mtime changed")
    try:
        check(not os.listxattr(target), "xattrs set: %r" % os.listxattr(target))
    except OSError:
        pass
    check(os.listdir(outdir) == [], "created in a denied directory: %r" % os.listdir(outdir))
    for ev in ("fchmod", "fchown", "setxattr", "utimensat"):
        rec = r.one(event=ev, verdict="deny", args_path=target)
        check(rec["op"] == "write" and rec["layer"] == "kernel" and rec["rule"] == "default:file_write",
              "%s record: %r" % (ev, rec))
    for name, ev in (("node", "mknod"), ("fifo", "mknod"), ("s.sock", "bind")):
        r.one(event=ev, verdict="deny", args_path=os.path.join(outdir, name))


def test_metadata_changes_allowed_in_project(wd):
    """The same calls in a write root work, as the kernel would do them
    (the socket and nodes get the agent's umask)."""
    f = wd.file("mine.txt", "x\n")
    r = harness([ATTACK, "meta", f, wd.path], wd, timeout=60)
    got = _meta_lines(r)
    for k in META:
        check(got.get(k) == "ok", "%s: %r (all: %r %r)" % (k, got.get(k), r.stdout, r.stderr[-300:]))
    st = os.stat(f)
    check(stat.S_IMODE(st.st_mode) == 0o777 and int(st.st_mtime) == 1, "not applied: %o %s" % (st.st_mode, st.st_mtime))
    check(stat.S_ISFIFO(os.stat(os.path.join(wd.path, "fifo")).st_mode), "no fifo")
    s = os.stat(os.path.join(wd.path, "s.sock"))
    check(stat.S_ISSOCK(s.st_mode) and stat.S_IMODE(s.st_mode) == 0o755, "socket mode %o" % s.st_mode)
    r.one(event="bind", verdict="allow", args_path=os.path.join(wd.path, "s.sock"))


def _forbidden(wd):
    """$CWD/forbidden.sh, which test.yaml denies running: an ELF here."""
    p = os.path.join(wd.path, "forbidden.sh")
    shutil.copy("/bin/true", p)
    os.chmod(p, 0o755)
    return p


def test_ldso_runs_denied_program_kernel(wd):
    """Class 6: "ld.so PROGRAM" ran a program the exec rules deny, the
    exec decided being ld.so's. Decided as PROGRAM's exec (argv as the
    program sees it), by a static program and as a #! interpreter."""
    prog = _forbidden(wd)
    r = harness([ATTACK, "ldso", prog, "arg"], wd)
    check(r.stdout == "exec EACCES\n", "ld.so ran the denied program: %r %r" % (r.stdout, r.stderr[-300:]))
    rec = r.one(event="execve", verdict="deny", args_path=prog)
    check(rec["rule"] == "forbidden-tool" and rec["layer"] == "kernel" and
          rec["args"].get("loader", "").endswith("ld-linux-x86-64.so.2") and
          rec["args"]["argv"] == [prog, "arg"], "record: %r" % rec)
    r = harness([ATTACK, "ldso", "/usr/bin/git", "push", "origin"], wd)
    check(r.stdout == "exec EACCES\n", "ld.so ran git push: %r" % r.stdout)
    r.one(event="execve", verdict="deny", rule="no-push", args_path="/usr/bin/git")
    # A name without '/': rtld searches the library path (--library-path
    # /usr/bin finds sudo): refused.
    r = harness([ATTACK, "ldso", "--library-path", wd.path, "forbidden.sh"], wd)
    check(r.stdout == "exec EACCES\n", "ld.so searched a program: %r" % r.stdout)
    # Through #!: the kernel runs ld.so with the script's argument.
    script = wd.file("viald", "#!%s %s\n" % (LDSO, prog))
    os.chmod(script, 0o755)
    r = harness([ATTACK, "ldso", "--verify", "/bin/true"], wd)  # control: options skipped
    r2 = harness(["/bin/sh", "-c", "./viald; echo status $?"], wd)
    check("status 0" not in r2.stdout, "the script ran the denied program: %r %r" % (r2.stdout, r2.stderr[-300:]))
    r2.one(event="execve", verdict="deny", args_path=prog)
    # Control: ld.so running an allowed program works.
    r = harness(["/bin/sh", "-c", "%s /bin/true && echo ran" % LDSO], wd)
    check(r.stdout == "ran\n", "ld.so /bin/true broke: %r %r" % (r.stdout, r.stderr[-300:]))


def test_ldso_runs_denied_program_shim(wd):
    """The same through the shim (a dynamic program's execv)."""
    prog = _forbidden(wd)
    code = ("import os\ntry:\n    os.execv(%r, [%r, %r, 'x'])\nexcept OSError as e:\n"
            "    print('exec', e.errno)\n") % (LDSO, LDSO, prog)
    r = harness([PYTHON, "-c", code], wd)
    check(r.stdout == "exec 13\n", "ld.so ran the denied program: %r %r" % (r.stdout, r.stderr[-300:]))
    rec = r.one(event="execv", verdict="deny", args_path=prog)
    check(rec["layer"] == "shim" and rec["rule"] == "forbidden-tool" and rec["args"].get("loader") == LDSO,
          "record: %r" % rec)


def test_ldso_runs_memfd(wd):
    """Class 6: "ld.so /proc/self/fd/N" of a memfd: fileless exec."""
    r = harness([ATTACK, "ldso-memfd"], wd)
    check(r.stdout == "exec EACCES\n", "the memfd ran: %r %r" % (r.stdout, r.stderr[-300:]))


def _fsflags(path):
    import array
    import fcntl
    buf = array.array("i", [0])
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, 0x80086601, buf)  # FS_IOC_GETFLAGS
    finally:
        os.close(fd)
    return buf[0]


def _generation(path):
    """The inode's generation (FS_IOC_GETVERSION), or None."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return struct.unpack("l", fcntl.ioctl(fd, 0x80087601, b"\0" * 8))[0]
    except OSError:
        return None
    finally:
        os.close(fd)


def test_attribute_flags_decided_as_writes(wd):
    """Class 1: chattr's FS_IOC_SETFLAGS and FS_IOC_FSSETXATTR work on a
    read-only fd of a file its owner holds, and set nodump (out of the
    backups), noatime, nocow on a write-denied one (~/.bashrc) unseen.
    Now notified and decided as writes on the file the fd names, done on
    the taken fd; fs-verity (a file made unwritable for good) and a new
    generation are refused outright. In the project they still work."""
    target = _outside(wd, "flags.txt")
    mine = os.path.join(wd.path, "mine.txt")
    with open(mine, "w") as f:
        f.write("x\n")
    gen = _generation(target)
    r = harness([ATTACK, "chattr", target], wd, timeout=60)
    if r.stdout.startswith("SKIPPED"):
        raise Skip("no attribute flags on this file system")
    got = _meta_lines(r)
    check(got.get("setflags", "").split()[0] == "EACCES", "outside: %r" % r.stdout)
    check(" fssetxattr EACCES" in r.stdout or "fssetxattr" not in r.stdout, "outside: %r" % r.stdout)
    check(r.stdout.strip().endswith("setversion EPERM ext4-setversion EPERM verity EPERM"),
          "outside: %r" % r.stdout)
    check(_generation(target) == gen, "the generation changed outside the write roots")
    check(not _fsflags(target) & 0x40, "the nodump flag was set outside the write roots")
    rec = r.one(event="ioctl", args_path=target)
    check(rec["verdict"] == "deny" and rec["layer"] == "kernel" and rec["op"] == "write", rec)
    r = harness([ATTACK, "chattr", mine], wd, timeout=60)
    check(r.stdout.startswith("setflags ok"), "in the project: %r" % r.stdout)
    check(_fsflags(mine) & 0x40, "the project file has no nodump flag")
    check(r.one(event="ioctl", args_path=mine)["verdict"] == "allow", r.dump())


def test_existing_git_objects_never_rewritten(wd):
    """Class 5: an existing loose object or pack is never written, moved,
    removed or hard-linked (a new name would let it be written), by a
    program with the shim or a static one, under the default policy;
    the agent's own commits, which make new objects, work."""
    env = {"HOME": wd.path, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b",
           "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b"}
    subprocess.run(["git", "init", "-q", wd.path], check=True)
    wd.file("a.txt", "one\n")
    subprocess.run(["git", "add", "a.txt"], cwd=wd.path, check=True)
    subprocess.run(["git", "commit", "-qm", "one"], cwd=wd.path, env=dict(os.environ, **env),
                   check=True)
    objs = sorted(os.path.relpath(os.path.join(d, n), wd.path)
                  for d, _, ns in os.walk(os.path.join(wd.path, ".git", "objects"))
                  for n in ns if len(n) == 38)
    obj = objs[0]
    before = open(os.path.join(wd.path, obj), "rb").read()
    bb = shutil.which("busybox")
    script = ("chmod u+w {o}; echo x >> {o}; true > {o}; rm -f {o}; mv {o} moved; ln {o} hl; "
              "cp a.txt {o}; "
              "{bb} sh -c 'echo y >> {o}; rm -f {o}; mv {o} moved2; ln {o} hl2'; "
              "echo two > b.txt && git add b.txt && git commit -qm two && echo committed"
              ).format(o=obj, bb=bb)
    r = harness(["sh", "-c", script], wd, policy=None, env=env)
    check(r.stdout.strip().endswith("committed"), "the agent's commit failed: %r %r" % (
        r.stdout, r.stderr))
    check(open(os.path.join(wd.path, obj), "rb").read() == before, "an existing object changed")
    for name in ("moved", "hl", "moved2", "hl2"):
        check(not os.path.exists(os.path.join(wd.path, name)), "%s made from the object" % name)
    denied = [x for x in r.records if x.get("rule") == "harness:git-objects"]
    check(len(denied) >= 8, "denials not recorded: %r" % [(x.get("op"), x.get("layer"))
                                                          for x in denied])
    check(any(x.get("layer") == "kernel" for x in denied), "the static program's not recorded")
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=wd.path, capture_output=True,
                          text=True)
    check(fsck.returncode == 0, fsck.stdout + fsck.stderr)
