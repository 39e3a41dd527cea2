"""The seventh attack review: where the kernel layer acts for the agent
(it makes the open, truncate, rename... itself and hands back the fd or
the answer) and its view differs from the kernel's. Each test runs the
call bare and under harness from a static program (the kernel layer
alone) and checks that the emulated call does what the kernel does for
the agent: no more."""

import os
import shutil
import socket
import struct
import subprocess
import tempfile

from lib import BUILD, EXEC, PYTHON, Skip, check, harness

SEAM = os.path.join(BUILD, "helpers", "static_seam7")


def _bare(args, cwd):
    return subprocess.run([SEAM] + args, cwd=cwd, capture_output=True, text=True,
                          timeout=60).stdout


def _both(wd, args, reset=None):
    """The helper's output bare, then under harness, in the project;
    reset() puts the fixture back before each run."""
    if reset:
        reset()
    bare = _bare(args, wd.path)
    if reset:
        reset()
    run = harness([SEAM] + args, wd)
    return bare, run.stdout, run


def test_truncate_keeps_the_agents_file_size_limit(wd):
    """truncate(2) was done by the worker under the supervisor's own
    RLIMIT_FSIZE, not the agent's: a truncate to 10 MB under a 1 MB
    limit (the agent's own, or the policy's `limits: file_size`) grew
    the file, where the kernel answers EFBIG and sends SIGXFSZ. Now the
    growth past the target's limit is refused as the kernel refuses it,
    the signal included; a shrink, or a growth within the limit, is
    done."""
    path = os.path.join(wd.path, "grow")

    def reset():
        with open(path, "w") as f:
            f.write("x" * 100)

    rows = [(["truncate", "grow", str(10 << 20), str(1 << 20)], ["EFBIG", "sigxfsz 1", "size 100"]),
            (["truncate", "grow", "4096", str(1 << 20)], ["OK", "sigxfsz 0", "size 4096"]),
            (["truncate", "grow", "10", "50"], ["OK", "sigxfsz 0", "size 10"])]
    for args, want in rows:
        bare, got, run = _both(wd, args, reset)
        check(bare.split("\n")[:3] == want, "bare %s: %r" % (args, bare))
        check(got == bare, "%s: bare %r, under harness %r\n%s" % (args, bare, got, run.stderr))
        check(len(run.failed("EFBIG")) == (want[0] == "EFBIG"), "%s: %r" % (args, run.failed("EFBIG")))
    # Through the shim (python ignores SIGXFSZ: the errno alone).
    reset()
    code = ("import os, resource\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))\n"
            "try:\n    os.truncate('grow', 10 << 20); print('OK')\n"
            "except OSError as e: print(e.errno == 27 and 'EFBIG' or e)\n"
            "print(os.stat('grow').st_size)\n")
    run = harness([PYTHON, "-c", code], wd)
    check(run.stdout.split() == ["EFBIG", "100"], "python: %r %s" % (run.stdout, run.stderr))


def test_openat2_walk_limits_hold(wd):
    """openat2's RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS and
    RESOLVE_NO_XDEV, which a program sets to be safe from a tree it
    does not trust (an archive it unpacks, a checkout), were dropped by
    the emulation: it opens the decided path, every symlink resolved,
    from its own root. A file was made through a symlink under
    RESOLVE_NO_SYMLINKS, an existing one opened for writing through it,
    /proc/self/exe and /proc/self/fd/N opened under
    RESOLVE_NO_MAGICLINKS; and RESOLVE_NO_XDEV failed with EXDEV a
    lookup from a directory on a mount of its own (/dev/shm) that
    crossed nothing, the decided path being walked from /. And a
    read-only open with O_NOFOLLOW of a symlink, which the kernel fails
    with ELOOP, was decided on the link's target and opened it. Each row
    answers as the bare call."""
    os.makedirs(os.path.join(wd.path, "real"))
    with open(os.path.join(wd.path, "real", "g"), "w") as f:
        f.write("g\n")
    os.symlink("real", os.path.join(wd.path, "lnk"))
    with open(os.path.join(wd.path, "plain"), "w") as f:
        f.write("p\n")
    os.symlink("plain", os.path.join(wd.path, "glink"))
    shm = tempfile.mkdtemp(prefix="hx-seam7-", dir="/dev/shm")
    try:
        os.makedirs(os.path.join(shm, "d"))
        with open(os.path.join(shm, "d", "y"), "w") as f:
            f.write("y\n")
        rows = [
            (["openat2", "lnk/g", "WRONLY", "NO_SYMLINKS"], "ELOOP"),
            (["openat2", "lnk/new", "WRONLY|CREAT", "NO_SYMLINKS"], "ELOOP"),
            (["openat2", "lnk/new", "WRONLY|CREAT|EXCL", "NO_SYMLINKS"], "ELOOP"),
            (["openat2", "lnk", "RDONLY|NOFOLLOW", "NO_SYMLINKS"], "ELOOP"),
            # O_NOFOLLOW alone: the read was decided on the link's target,
            # which the kernel layer then opened.
            (["openat2", "lnk", "RDONLY|NOFOLLOW", "0"], "ELOOP"),
            (["openat2", "glink", "RDONLY|NOFOLLOW", "0"], "ELOOP"),
            (["openat2", "plain", "RDONLY|NOFOLLOW", "0"], "OK"),
            (["openat2", "real/g", "WRONLY", "NO_SYMLINKS"], "OK"),
            (["openat2", "real/new2", "WRONLY|CREAT", "NO_SYMLINKS"], "OK"),
            (["openat2", "/proc/self/exe", "RDONLY", "NO_MAGICLINKS"], "ELOOP"),
            (["openat2", "/proc/self/status", "RDONLY", "NO_SYMLINKS"], "ELOOP"),
            (["openat2", "/proc/self/status", "RDONLY", "NO_MAGICLINKS"], "OK"),
            (["fdopen", "plain", "NO_MAGICLINKS"], "ELOOP"),
            (["fdopen", "plain", "0"], "OK"),
            (["openat2", "y", "RDONLY", "NO_XDEV", os.path.join(shm, "d")], "OK"),
            (["openat2", "../../../etc/hostname", "RDONLY", "NO_XDEV",
              os.path.join(shm, "d")], "EXDEV"),
            (["openat2", "lnk/g", "WRONLY", "NO_XDEV"], "OK"),
        ]
        made = os.path.join(wd.path, "real", "new")
        for args, want in rows:
            bare = _bare(args, wd.path).split("\n")[0]
            check(bare == want, "bare %s: %r, expected %r" % (args, bare, want))
            for p in (made, os.path.join(wd.path, "real", "new2")):
                if os.path.exists(p):
                    os.unlink(p)
            run = harness([SEAM] + args, wd)
            got = run.stdout.split("\n")[0]
            check(got == bare, "%s: bare %r, under harness %r\n%s" % (args, bare, got, run.stderr))
            # A refusal of the walk after the policy's allow is recorded.
            failed = run.failed("EACCES")
            check(len(failed) == (want == "EACCES") and all(d and d["verdict"] == "allow" for f, d in failed),
                  "%s: %r" % (args, failed))
            check(not os.path.exists(made), "%s made %s through the symlink" % (args, made))
    finally:
        shutil.rmtree(shm, ignore_errors=True)


def test_o_trunc_of_an_append_only_file_is_refused(wd):
    """An emulated open with O_TRUNC truncates only once the descriptor
    is in the agent (so that EMFILE makes nothing), and that truncation's
    failure was dropped: O_WRONLY|O_APPEND|O_TRUNC of an append-only file
    (chattr +a), which the kernel refuses with EPERM, succeeded under
    harness with the file whole. Now what refuses that truncation is
    looked at before the descriptor goes in."""
    if os.geteuid() != 0:
        raise Skip("chattr +a needs CAP_LINUX_IMMUTABLE (root)")
    chattr = shutil.which("chattr")
    if not chattr:
        raise Skip("no chattr")
    path = os.path.join(wd.path, "log")
    with open(path, "w") as f:
        f.write("kept\n")
    if subprocess.run([chattr, "+a", path], capture_output=True).returncode:
        raise Skip("this file system has no append-only flag")
    try:
        for flags, want in (("WRONLY|APPEND|TRUNC", "EPERM"), ("RDWR|APPEND|TRUNC", "EPERM"),
                            ("WRONLY|TRUNC", "EPERM"), ("WRONLY|APPEND", "OK")):
            bare = _bare(["open", "log", flags], wd.path)
            check(bare.split("\n")[:2] == [want, "size 5"], "bare %s: %r" % (flags, bare))
            run = harness([SEAM, "open", "log", flags], wd)
            check(run.stdout == bare, "%s: bare %r, under harness %r\n%s"
                  % (flags, bare, run.stdout, run.stderr))
            # The allow it follows says so (a "failed" record).
            check(len(run.failed("EPERM")) == (want == "EPERM"), "%s: %r" % (flags, run.failed("EPERM")))
    finally:
        subprocess.run([chattr, "-a", path], capture_output=True)


PROTECTED = ("protected_symlinks", "protected_regular", "protected_fifos")


def _sysctls(values):
    old = {}
    for name in PROTECTED:
        path = "/proc/sys/fs/" + name
        with open(path) as f:
            old[name] = f.read().strip()
        if values:
            with open(path, "w") as f:
                f.write(values[name])
    return old


def test_the_kernels_protections_of_the_agents_own_walk_hold(wd):
    """The kernel layer resolves a name's symlinks by reading them and
    acts on the decided path; the kernel's own checks on the caller's
    walk were not made. With fs.protected_symlinks (set by systemd on
    most distributions), a symlink in a sticky world-writable directory
    (/tmp) that neither the follower nor the directory's owner owns is
    not followed: another user's `/tmp/x -> ~/project/file` is the
    classic trap, and the agent's write open or truncate through such a
    link was done, as its connect through one to a Unix socket (the
    connector reached the decided socket). With fs.protected_regular and
    fs.protected_fifos, an O_CREAT open of another user's file or FIFO
    there is refused: the kernel layer opened an existing file without
    O_CREAT first, and wrote it. Each is now the kernel's answer, bare
    and under harness alike. Root: the test makes other users' files
    and sets the three sysctls for its length."""
    if os.geteuid() != 0:
        raise Skip("makes another user's files and sets fs.protected_* (root)")
    other, owner = 65534, 1
    stk = os.path.join(wd.path, "stk")
    os.mkdir(stk)
    os.chmod(stk, 0o1777)
    os.chown(stk, owner, owner)
    target = wd.file("target", "kept\n")
    os.makedirs(os.path.join(wd.path, "real"))
    wd.file("tomove", "m\n")
    theirs = os.path.join(stk, "theirs")
    with open(theirs, "w") as f:
        f.write("theirs\n")
    os.chmod(theirs, 0o666)
    os.chown(theirs, other, other)
    os.mkfifo(os.path.join(stk, "fifo"), 0o666)
    os.chown(os.path.join(stk, "fifo"), other, other)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(os.path.join(wd.path, "srv.sock"))
    srv.listen(8)
    for name, to in (("flink", target), ("dlink", os.path.join(wd.path, "real")),
                     ("slink", os.path.join(wd.path, "srv.sock"))):
        os.symlink(to, os.path.join(stk, name))
        os.lchown(os.path.join(stk, name), other, other)
    rows = [
        (["open", "stk/theirs", "WRONLY|CREAT|APPEND"], "EACCES"),
        (["open", "stk/fifo", "RDWR|CREAT"], "EACCES"),
        (["open", "stk/flink", "WRONLY"], "EACCES"),
        (["open", "stk/flink", "WRONLY|CREAT|TRUNC"], "EACCES"),
        (["truncate", "stk/flink", "0", str(1 << 30)], "EACCES"),
        (["openat2", "stk/flink", "WRONLY", "0"], "EACCES"),
        (["connect", "stk/slink"], "EACCES"),
        (["connect", "srv.sock"], "OK"),
        # Not refused: the kernel judges a trailing symlink only, and
        # the opener's own file.
        (["open", "stk/dlink/new", "WRONLY|CREAT"], "OK"),
        (["mkdir", "stk/dlink/sub"], "OK"),
        (["rename", "tomove", "stk/dlink/moved"], "OK"),
        (["open", "stk/mine", "WRONLY|CREAT"], "OK"),
    ]
    old = _sysctls({"protected_symlinks": "1", "protected_regular": "1",
                    "protected_fifos": "1"})
    try:
        for args, want in rows:
            bare = _bare(args, wd.path).split("\n")[0]
            check(bare == want, "bare %s: %r, expected %r" % (args, bare, want))
            for p in ("stk/mine", "real/new", "real/moved"):
                if os.path.exists(os.path.join(wd.path, p)):
                    os.rename(os.path.join(wd.path, p), os.path.join(wd.path, "tomove"))
            if os.path.exists(os.path.join(wd.path, "real", "sub")):
                os.rmdir(os.path.join(wd.path, "real", "sub"))
            run = harness([SEAM] + args, wd)
            got = run.stdout.split("\n")[0]
            check(got == bare, "%s: bare %r, under harness %r\n%s" % (args, bare, got, run.stderr))
            # A refusal of the walk after the policy's allow is recorded.
            failed = run.failed("EACCES")
            check(len(failed) == (want == "EACCES") and all(d and d["verdict"] == "allow" for f, d in failed),
                  "%s: %r" % (args, failed))
    finally:
        _sysctls(old)
        srv.close()
    with open(theirs) as f:
        check(f.read() == "theirs\n", "another user's file in a sticky directory was written")
    with open(target) as f:
        check(f.read() == "kept\n", "the file behind another user's symlink was written")


CTTY = r'''
import errno, os, pty, sys
pid, master = pty.fork()
if pid == 0:
    fd = os.open("/dev/tty", os.O_WRONLY)
    os.write(fd, b"MARK" + b"-INNER\n")
    os._exit(0)
data = b""
while True:
    try:
        chunk = os.read(master, 1024)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
os.waitpid(pid, 0)
print("inner pty got it:", (b"MARK" + b"-INNER") in data)
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    os.setsid()
    try:
        os.open("/dev/tty", os.O_WRONLY)
        print("no terminal: opened")
    except OSError as e:
        print("no terminal:", errno.errorcode[e.errno])
    sys.stdout.flush()
    os._exit(0)
os.waitpid(pid, 0)
'''


def test_dev_tty_is_the_agents_own_terminal(wd):
    """/dev/tty is the opener's controlling terminal; the kernel layer
    opened it in harness-exec, where it is harness-exec's: a program of
    the agent on a pty the agent made (script, a terminal tool, Python's
    pty: where ssh, sudo, git and gpg ask for a password) that opened
    /dev/tty was handed the user's terminal instead, its prompt drawn
    there and the user's keys read; a process without a terminal
    (setsid) got the user's terminal where the kernel says ENXIO. Run
    under a real terminal (script(1)), bare and under harness: the
    line reaches the agent's own pty, never the user's terminal."""
    if not os.path.exists("/usr/bin/script"):
        raise Skip("no script(1)")
    prog = os.path.join(wd.state, "ctty.py")
    with open(prog, "w") as f:
        f.write(CTTY)
    log = os.path.join(wd.state, "ctty.jsonl")
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    outs = []
    for cmd in ("%s %s" % (PYTHON, prog),
                "%s --quiet --audit-log %s -- %s %s" % (EXEC, log, PYTHON, prog)):
        p = subprocess.run(["script", "-qec", cmd, "/dev/null"], cwd=wd.path, env=env,
                           capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        outs.append(p.stdout.replace("\r", ""))
    for name, out in zip(("bare", "under harness"), outs):
        if "other terminals stay reachable" in out:
            raise Skip("no devpts of the agent's own here")
        check("inner pty got it: True" in out, "%s: the agent's pty missed it: %r" % (name, out))
        check("MARK-INNER" not in out, "%s: written on the user's terminal: %r" % (name, out))
        check("no terminal: ENXIO" in out, "%s: /dev/tty without a terminal: %r" % (name, out))


def test_a_removed_cwd_is_not_the_directory_named_like_it(wd):
    """A removed directory's /proc link reads "/x/d (deleted)", and the
    kernel layer made a relative path absolute from that text: with a
    directory made under that very name beside it, a file and a
    directory created "in" the removed cwd, which the kernel refuses
    (ENOENT: nothing is made in a removed directory), were made in the
    other one. Now a removed base is told from a directory so named (by
    inode), and only its ".." is walked, as the kernel walks it."""
    outs = []
    for run in (lambda: _bare(["removed", "d"], wd.path),
                lambda: harness([SEAM, "removed", "d"], wd).stdout):
        for p in ("d (deleted)", "up"):
            shutil.rmtree(os.path.join(wd.path, p), ignore_errors=True)
        outs.append(run())
        made = sorted(os.listdir(os.path.join(wd.path, "d (deleted)")))
        check(made == [], "made in the directory named like the removed cwd: %r" % made)
        check(os.path.isdir(os.path.join(wd.path, "up")), "../up from the removed cwd: %r" % outs)
    check(outs[0].split() == ["ENOENT", "ENOENT", "OK"], "bare: %r" % outs[0])
    check(outs[1] == outs[0], "bare %r, under harness %r" % (outs[0], outs[1]))


def test_a_removed_files_link_text_names_no_file(wd):
    """The same text in a /proc/<pid>/fd link: an O_TMPFILE file (or one
    removed while open) reads "/dir/#INODE (deleted)", and the kernel
    layer's resolution took that text for a path: with a file made under
    that name, linkat(/proc/self/fd/N, NEW, AT_SYMLINK_FOLLOW), which
    the kernel does by linking the unnamed file, linked that other file
    instead. Now such a link is not followed by its text (it is decided
    as /proc/self/fd/N, which the test policy refuses: linking an
    unnamed file is not done by the kernel layer); whatever the answer,
    it never links another file."""
    new = os.path.join(wd.path, "new")
    bare = _bare(["tmplink", "new"], wd.path)
    check(bare.split() == ["OK", "size", "0"], "bare: %r" % bare)
    os.unlink(new)
    run = harness([SEAM, "tmplink", "new"], wd)
    got = run.stdout.split()
    check(got[:1] != ["OK"] or got[1:] == ["size", "0"],
          "another file was linked: %r %s" % (run.stdout, run.stderr))
    check(not os.path.exists(new) or os.path.getsize(new) == 0, "NEW is another file")


def test_proc_files_are_opened_with_the_agents_rights(wd):
    """The kernel checks /proc/<pid>/mem, environ, auxv, maps... against
    whoever opens them (ptrace_may_access, when opened), and an emulated
    open's opener is a worker: a thread of harness-exec (which passes for
    harness-exec's own files, its thread group) that keeps
    CAP_SYS_PTRACE as root (which passes for any process). Through
    openat2, which always reaches the kernel layer, a root agent read
    the environment and memory of root's other processes and of
    harness-exec itself, and a user's agent harness-exec's maps; the
    kernel refuses the agent all of them. Now harness-exec's own are
    refused and another process's are opened without CAP_SYS_PTRACE, as
    the walk of a name through another process's /proc/<pid>/cwd (a
    root process's cwd was followed, and acted in); the agent's own
    children stay readable."""
    files = ["environ", "mem", "maps", "auxv"]
    run = harness([SEAM, "procread", "0"] + files, wd)  # harness-exec
    check(run.stdout.split("\n")[:4] == ["%s EACCES" % f for f in files],
          "harness-exec's own: %r %s" % (run.stdout, run.stderr))
    # Recorded as refused, not only as the allow of a read of /proc.
    check(len(run.events(event="revoked", rule="harness:protect")) >= 2,
          "no refusal recorded:\n%s" % run.dump())
    outside = subprocess.Popen(["sleep", "60"])
    try:
        nocaps = ["setpriv", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
        args = [SEAM, "procread", str(outside.pid)] + files
        if os.geteuid() == 0 and not shutil.which("setpriv"):
            raise Skip("no setpriv to run the bare call without capabilities")
        bare = subprocess.run((nocaps if os.geteuid() == 0 else []) + args, cwd=wd.path,
                              capture_output=True, text=True, timeout=60).stdout
        if os.geteuid() == 0:
            check(bare.split("\n")[:4] == ["%s EACCES" % f for f in files], "bare: %r" % bare)
        # Refused as Landlock refuses the agent's own open (its ptrace
        # scope: a process outside its domain), which bare, outside any
        # domain, an ordinary user passes where no Yama is
        # (test_attack10.py).
        run = harness(args, wd)
        check(run.stdout.split("\n")[:4] == ["%s EACCES" % f for f in files],
              "another process's: bare %r, under harness %r" % (bare, run.stdout))
        # Its cwd link, walked by the kernel layer's resolution: the
        # name's own walk decides (EACCES as root, as bare).
        args = [SEAM, "openat2", "/proc/%d/cwd/nothere" % outside.pid, "RDONLY", "0"]
        bare = subprocess.run((nocaps if os.geteuid() == 0 else []) + args, cwd=wd.path,
                              capture_output=True, text=True, timeout=60).stdout
        if os.geteuid() == 0:
            check(bare.startswith("EACCES"), "bare cwd: %r" % bare)
        run = harness(args, wd)
        check(run.stdout.startswith("EACCES"), "another process's cwd: bare %r, under harness %r"
              % (bare, run.stdout))
    finally:
        outside.kill()
        outside.wait()
    run = harness([SEAM, "procread", "child"] + files, wd)
    check(run.stdout.split("\n")[:4] == ["%s OK" % f for f in files],
          "the agent's own child: %r %s" % (run.stdout, run.stderr))


def _default_acl(path):
    """A default ACL of user::rwx, group::rwx, other::rwx on path."""
    entries = [(0x01, 7), (0x04, 7), (0x20, 7)]  # USER_OBJ, GROUP_OBJ, OTHER
    value = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, 0xffffffff)
                                            for t, p in entries)
    os.setxattr(path, "system.posix_acl_default", value)


def test_a_default_acl_replaces_the_umask(wd):
    """Under a directory's default ACL the kernel gives a new file or
    directory the ACL's mode and no umask (posix_acl_create); the kernel
    layer applied the agent's umask by hand first: under umask 022 a
    directory made where the ACL grants the group and others all was
    0755 for the kernel's 0777, a file 0644 for 0666 (a shared
    directory's group lost its write). Now the umask is left to the
    kernel there, and applied elsewhere."""
    shared = os.path.join(wd.path, "shared")
    os.mkdir(shared)
    try:
        _default_acl(shared)
    except OSError as e:
        raise Skip("no POSIX ACLs here: %s" % e)
    for kind in ("file", "dir", "fifo"):
        for where in ("shared", "."):
            args = ["create", "022", "%s/new-%s" % (where, kind), kind]
            path = os.path.join(wd.path, where, "new-" + kind)
            bare = _bare(args, wd.path)
            (os.rmdir if kind == "dir" else os.unlink)(path)
            run = harness([SEAM] + args, wd)
            (os.rmdir if kind == "dir" else os.unlink)(path)
            check(bare.split("\n")[0] == "OK", "bare %s: %r" % (args, bare))
            check(run.stdout == bare, "%s: bare %r, under harness %r %s"
                  % (args, bare, run.stdout, run.stderr))
