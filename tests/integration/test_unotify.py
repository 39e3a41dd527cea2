"""The seccomp user-notify layer (supervisor/unotify*.c): static programs
(no shim) and raw syscalls are decided by the kernel layer, emulated in
the supervisor, and logged once with layer "kernel"; the shim's own
events are not logged twice."""

import os
import socket
import time

from lib import BUILD, HELPERS, Listener, Skip, check, harness

STATIC = os.path.join(HELPERS, "static_unotify")
RAW = os.path.join(HELPERS, "raw_syscall")


def _kernel(r, **want):
    return [x for x in r.events(layer="kernel", **want)]


def test_static_open_denied_outside_and_in_denied_subtree(wd):
    os.makedirs(os.path.join(wd.path, "ask"), exist_ok=True)
    outside = "/tmp/hx-unotify-%d" % os.getpid()
    for target in (outside, "ask/x", "secret/new"):
        r = harness([STATIC, "open", target], wd)
        check(r.stdout.strip() == "err EACCES", "%s: %r %r" % (target, r.stdout, r.stderr))
        full = target if target.startswith("/") else os.path.join(wd.path, target)
        check(not os.path.exists(full), "%s was created" % full)
        rec = _kernel(r, event="openat")
        check(rec and rec[0]["verdict"] in ("deny", "ask"), r.dump())
        check(not rec[0].get("shim_bypass"), "a static program has no shim: %r" % rec[0])


def test_static_open_allowed_and_fd_usable(wd):
    for how in ("open", "openat2"):
        r = harness([STATIC, how, "made-%s.txt" % how], wd)
        check(r.stdout.strip() == "ok open", "%s: %r %r" % (how, r.stdout, r.stderr))
        with open(os.path.join(wd.path, "made-%s.txt" % how)) as f:
            check(f.read() == "data\n", "written through the injected fd")
        mode = os.stat(os.path.join(wd.path, "made-%s.txt" % how)).st_mode & 0o777
        check(mode == 0o644 & ~0o022 or mode == 0o644, "mode %o" % mode)
        check(_kernel(r, verdict="allow"), r.dump())


def test_static_connect_denied_and_allowed(wd):
    denied = Listener(range(21000, 21100))
    allowed = Listener(range(20000, 20100))
    try:
        r = harness([STATIC, "connect", str(denied.port)], wd)
        check(r.stdout.strip() == "err EACCES", repr((r.stdout, r.stderr)))
        r2 = harness([STATIC, "connect", str(allowed.port)], wd)
        check(r2.stdout.strip() == "ok connect", repr((r2.stdout, r2.stderr)))
        time.sleep(0.5)
    finally:
        denied.close()
        allowed.close()
    check(denied.accepted == 0, "the denied listener saw a connection")
    check(allowed.accepted == 1 and b"ping" in allowed.received,
          "allowed connect: %d %r" % (allowed.accepted, allowed.received))
    check(_kernel(r, event="connect", verdict="deny"), r.dump())


def _udp(ports):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for p in ports:
        try:
            s.bind(("127.0.0.1", p))
            break
        except OSError:
            continue
    s.settimeout(0.5)
    return s


def test_static_udp_send_with_address(wd):
    for how in ("sendto", "sendmsg", "sendmmsg"):
        d = _udp(range(21100, 21200))
        a = _udp(range(20100, 20200))
        try:
            r = harness([STATIC, how, str(d.getsockname()[1])], wd)
            check(r.stdout.strip() == "err EACCES", repr((how, r.stdout, r.stderr)))
            r2 = harness([STATIC, how, str(a.getsockname()[1])], wd)
            check(r2.stdout.strip() == "ok " + how, repr((how, r2.stdout, r2.stderr)))
            try:
                d.recv(100)
                check(False, "%s: a datagram reached the denied port" % how)
            except socket.timeout:
                pass
            check(a.recv(100) == b"dgram\n", "allowed datagram")
        finally:
            d.close()
            a.close()


def test_datagram_sendmsg_without_destination_is_emulated(wd):
    a = _udp(range(20100, 20200))
    try:
        r = harness([STATIC, "sendmsg-peer", str(a.getsockname()[1])], wd)
        check(r.stdout.strip() == "ok sendmsg-peer", repr((r.stdout, r.stderr)))
        check(a.recv(100) == b"dgram\n", "the datagram did not reach the connected peer")
    finally:
        a.close()
    end = r.one(event="session_end")
    check(end.get("kernel_notify", {}).get("emulated", 0) >= 2, "not emulated: %r" % end)


def test_toctou_path_swap_never_creates_denied(wd):
    r = harness([STATIC, "toctou", "ok-file", "secret/pwned", "2"], wd, timeout=60)
    check(r.stdout.startswith("ok toctou"), repr((r.stdout, r.stderr)))
    check(not os.path.exists(os.path.join(wd.path, "secret", "pwned")),
          "the denied file was created by a racing thread")
    check(os.path.exists(os.path.join(wd.path, "ok-file")), "allowed opens worked")


def test_raw_syscall_from_shim_process_flagged(wd):
    r = harness([RAW, "raw.txt"], wd)
    check(r.stdout.strip() == "ok", repr((r.stdout, r.stderr)))
    rec = _kernel(r, event="openat")
    check(rec and rec[0].get("shim_bypass") is True, r.dump())
    r = harness([RAW, "secret/raw"], wd)
    check(r.stdout.strip() == "err EACCES", repr((r.stdout, r.stderr)))
    check(not os.path.exists(os.path.join(wd.path, "secret", "raw")), "created")


PY = r'''
import socket, sys
open("py-out.txt", "w").write("x")
s = socket.socket()
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
except OSError as e:
    print("connect", e.errno)
'''


def test_one_record_per_event_with_shim(wd):
    lst = Listener(range(20200, 20300))
    try:
        r = harness(["python3", "-c", PY, str(lst.port)], wd)
    finally:
        lst.close()
    r.expect_status(0)
    writes = [x for x in r.records if (x.get("args") or {}).get("path", "").endswith("/py-out.txt")]
    check(len(writes) == 1, "write records: %r" % writes)
    check(writes[0]["layer"] == "shim+kernel", writes[0])
    conns = r.events(event="connect")
    check(len(conns) == 1, "connect records: %r" % conns)
    check(conns[0]["layer"] == "shim+kernel", conns[0])
    r.none(event="kernel_unconfirmed")
    end = r.one(event="session_end")
    check(end.get("kernel_notify", {}).get("notifications", 0) >= 2, end)


def test_no_kernel_notify_option(wd):
    r = harness([STATIC, "open", "plain.txt"], wd, extra=["--no-kernel-notify"])
    check(r.stdout.strip() == "ok open", repr((r.stdout, r.stderr)))
    check(not _kernel(r), "kernel records without the layer")
    start = r.one(event="session_start")
    check(start["kernel"].get("user_notify_used") is False, start)


# ---- file mutations (rename, unlink, mkdir, link, symlink, truncate,
# chmod/chown): decided by the kernel layer and emulated on the decided
# parent. ----

def _p(wd, *rel):
    return os.path.join(wd.path, *rel)


def _static(wd, *args):
    return harness([STATIC] + list(args), wd)


def _mkfile(path, data="x\n"):
    with open(path, "w") as f:
        f.write(data)


def test_static_mutations_denied(wd):
    os.makedirs(_p(wd, "ask"), exist_ok=True)
    key = _p(wd, "secret", "key")
    with open(key) as f:
        content = f.read()
    mode = os.stat(key).st_mode & 0o7777
    _mkfile(_p(wd, "a"))
    outside = "/var/tmp/hx-unotify-mv-%d" % os.getpid()

    r = _static(wd, "rename", "a", "ask/a")
    check(r.stdout.strip() == "err EACCES", repr((r.stdout, r.stderr)))
    check(os.path.exists(_p(wd, "a")) and not os.path.exists(_p(wd, "ask", "a")), "a moved")
    rec = _kernel(r, event="rename")
    check(rec and rec[0]["verdict"] == "ask" and rec[0]["op"] == "rename", r.dump())

    r = _static(wd, "rename", "a", outside)
    check(r.stdout.strip() in ("err EACCES", "err EXDEV"), repr((r.stdout, r.stderr)))
    check(os.path.exists(_p(wd, "a")) and not os.path.exists(outside), "a moved out")

    for args, gone in ((("unlink", "secret/key"), None),
                       (("mkdir", "ask/d"), "ask/d"),
                       (("link", "secret/key", "stolen"), "stolen"),
                       (("symlink", "/etc/passwd", "ask/l"), "ask/l"),
                       (("truncate", "secret/key"), None),
                       (("chmod", "secret/key"), None),
                       (("fchmodat", "secret/key"), None),
                       (("chown", "secret/key"), None),
                       (("rmdirat", "secret"), None)):
        r = _static(wd, *args)
        check(r.stdout.strip() == "err EACCES", "%r: %r %r" % (args, r.stdout, r.stderr))
        if gone:
            check(not os.path.lexists(_p(wd, gone)), "%r: %s exists" % (args, gone))
        check(_kernel(r), "%r: no kernel record\n%s" % (args, r.dump()))
    check(os.path.exists(key), "the secret was removed")
    with open(key) as f:
        check(f.read() == content, "the secret's content changed")
    check(os.stat(key).st_mode & 0o7777 == mode, "the secret's mode changed")
    link_rec = None
    r = _static(wd, "link", "secret/key", "stolen")
    link_rec = _kernel(r, event="link")
    check(link_rec and link_rec[0]["verdict"] == "deny", r.dump())


def test_static_mutations_allowed(wd):
    _mkfile(_p(wd, "a"), "hello world\n")
    r = _static(wd, "rename", "a", "b")
    check(r.stdout.strip() == "ok rename", repr((r.stdout, r.stderr)))
    check(not os.path.exists(_p(wd, "a")) and os.path.exists(_p(wd, "b")), "rename")
    check(_kernel(r, event="rename", verdict="allow"), r.dump())

    _mkfile(_p(wd, "c"))
    r = _static(wd, "renameat2", "b", "c")
    check(r.stdout.strip() == "err EEXIST", "NOREPLACE flag kept: %r" % r.stdout)
    check(os.path.exists(_p(wd, "b")), "b replaced c")

    r = _static(wd, "symlink", "b", "sl")
    check(r.stdout.strip() == "ok symlink", repr((r.stdout, r.stderr)))
    check(os.readlink(_p(wd, "sl")) == "b", "symlink text")

    r = _static(wd, "truncate", "b")
    check(r.stdout.strip() == "ok truncate", repr((r.stdout, r.stderr)))
    check(os.path.getsize(_p(wd, "b")) == 2, "truncated to 2")

    r = _static(wd, "chmod", "b")
    check(r.stdout.strip() == "ok chmod", repr((r.stdout, r.stderr)))
    check(os.stat(_p(wd, "b")).st_mode & 0o7777 == 0o600, "mode 600")
    r = _static(wd, "fchmodat", "b")
    check(r.stdout.strip() == "ok fchmodat", repr((r.stdout, r.stderr)))
    check(os.stat(_p(wd, "b")).st_mode & 0o7777 == 0o640, "mode 640")
    r = _static(wd, "chown", "b")
    check(r.stdout.strip() == "ok chown", repr((r.stdout, r.stderr)))

    # after the changes in place: a file linked in an earlier session
    # is not changed in place (harness:shared-file, test_attack19b)
    r = _static(wd, "link", "b", "b2")
    check(r.stdout.strip() == "ok link", repr((r.stdout, r.stderr)))
    check(os.stat(_p(wd, "b")).st_ino == os.stat(_p(wd, "b2")).st_ino, "not a hard link")

    r = _static(wd, "unlink", "b2")
    check(r.stdout.strip() == "ok unlink", repr((r.stdout, r.stderr)))
    check(not os.path.exists(_p(wd, "b2")), "unlink")
    r = _static(wd, "unlink", "nothing-here")
    check(r.stdout.strip() == "err ENOENT", "errno passed back: %r" % r.stdout)

    r = _static(wd, "mkdir", "d")
    check(r.stdout.strip() == "ok mkdir", repr((r.stdout, r.stderr)))
    check(os.path.isdir(_p(wd, "d")), "mkdir")
    check(os.stat(_p(wd, "d")).st_mode & 0o777 == 0o750 & ~0o022, "umask applied")
    r = _static(wd, "mkdir", "d")
    check(r.stdout.strip() == "err EEXIST", repr(r.stdout))
    r = _static(wd, "rmdir", "d")
    check(r.stdout.strip() == "ok rmdir" and not os.path.exists(_p(wd, "d")), repr(r.stdout))
    os.mkdir(_p(wd, "d2"))
    r = _static(wd, "rmdirat", "d2")
    check(r.stdout.strip() == "ok rmdirat" and not os.path.exists(_p(wd, "d2")), repr(r.stdout))


def test_static_mutation_null_second_path_is_efault(wd):
    # rename, link and symlink with their second path NULL: the kernel
    # says EFAULT and does nothing. The handler must not fall back on a
    # second path an earlier call left in its buffers (invariant 2: it
    # acts only on what this call names), which made a link or a symlink
    # whose text this call never gave.
    _mkfile(_p(wd, "f1"))
    r = _static(wd, "nullpath2")
    got = dict(line.split() for line in r.stdout.split("\n") if line)
    for name in ("plant-symlink", "plant-rename", "plant-link"):
        check(got.get(name) == "ok", "%s: %r %r" % (name, r.stdout, r.stderr))
    for name in ("symlink", "symlinkat", "rename", "renameat2", "link", "linkat"):
        check(got.get(name) == "EFAULT", "%s: %r %r" % (name, r.stdout, r.stderr))
    for name in ("n1", "n2", "n3", "n4"):
        check(not os.path.lexists(_p(wd, name)), "%s was made: %r" % (name, r.stdout))
    check(os.path.exists(_p(wd, "f2")) and os.path.exists(_p(wd, "f3")),
          "the planted rename or link is gone: %r" % r.stdout)


def test_static_mutation_symlinked_parent_into_secret(wd):
    # A symlinked directory in the project that points into the secret
    # directory: decided on the resolved form, so denied.
    os.symlink(_p(wd, "secret"), _p(wd, "door"))
    r = _static(wd, "unlink", "door/key")
    check(r.stdout.strip() == "err EACCES", repr((r.stdout, r.stderr)))
    check(os.path.exists(_p(wd, "secret", "key")), "removed through the symlink")
    _mkfile(_p(wd, "f"))
    r = _static(wd, "rename", "f", "door/f")
    check(r.stdout.strip() == "err EACCES", repr((r.stdout, r.stderr)))
    check(os.path.exists(_p(wd, "f")), "moved through the symlink")


PY_MUT = r'''
import os
open("m1", "w").write("x")
os.rename("m1", "m2")
os.mkdir("md")
os.rmdir("md")
os.unlink("m2")
'''


def test_one_record_per_mutation_with_shim(wd):
    r = harness(["python3", "-c", PY_MUT], wd)
    r.expect_status(0)
    for ev in ("rename", "mkdir", "rmdir", "unlink"):
        recs = [x for x in r.events(event=ev)
                if os.path.basename((x.get("args") or {}).get("path", "")) in ("m1", "m2", "md")]
        check(len(recs) == 1, "%s records: %r" % (ev, recs))
        check(recs[0]["layer"] in ("shim", "shim+kernel"), recs[0])
    check(not os.path.exists(_p(wd, "m2")), "unlinked")
    end = r.one(event="session_end")
    check(end.get("kernel_notify", {}).get("emulated", 0) >= 4, end)


def test_mutation_through_symlink_to_secret_denied(wd):
    key = _p(wd, "secret", "key")
    mode = os.stat(key).st_mode & 0o7777
    os.symlink(key, _p(wd, "kl"))
    for how in ("chmod", "truncate"):
        r = _static(wd, how, "kl")
        check(r.stdout.strip() == "err EACCES", "%s: %r %r" % (how, r.stdout, r.stderr))
    check(os.stat(key).st_mode & 0o7777 == mode, "mode changed through a symlink")
    check(os.path.getsize(key) > 2, "truncated through a symlink")
    # The link itself may go: unlink does not follow it.
    r = _static(wd, "unlink", "kl")
    check(r.stdout.strip() == "ok unlink" and os.path.exists(key), repr(r.stdout))


def test_mutation_race_parent_swapped_to_symlink(wd):
    # "p" is a directory of the project and "q" a symlink into the secret
    # directory; a thread exchanges them while another unlinks, chmods and
    # recreates p/key. A decision on the directory must never act through
    # the symlink (openat2 RESOLVE_NO_SYMLINKS on the decided parent).
    key = _p(wd, "secret", "key")
    mode = os.stat(key).st_mode & 0o7777
    os.mkdir(_p(wd, "p"))
    _mkfile(_p(wd, "p", "key"))
    os.symlink(_p(wd, "secret"), _p(wd, "q"))
    r = harness([STATIC, "mutrace", "3"], wd, timeout=60)
    check(r.stdout.startswith("ok mutrace"), repr((r.stdout, r.stderr)))
    check(os.path.exists(key), "the secret was unlinked by the race: %s" % r.stdout)
    check(os.stat(key).st_mode & 0o7777 == mode, "the secret's mode changed")
    fields = dict(x.split("=") for x in r.stdout.split()[2:])
    check(int(fields["swaps"]) > 0 and int(fields["unlinks"]) > 0,
          "the race did not run: %s" % r.stdout)


def _foreign_file(wd, name):
    """A file in the project owned by another user, mode 0644: the
    capability-less agent may read it, not write it or give it away."""
    path = os.path.join(wd.path, name)
    with open(path, "w") as f:
        f.write("theirs\n")
    os.chown(path, 65534, 65534)
    os.chmod(path, 0o644)
    return path


def test_emulation_has_no_more_rights_than_the_agent(wd):
    # The supervisor is root with every capability; the agent has none.
    # What it does for the agent must be checked by the kernel as for the
    # agent: file modes, ownership, chown.
    if os.geteuid() != 0:
        return
    _foreign_file(wd, "theirs.txt")
    r = harness([STATIC, "wopen", "theirs.txt"], wd)
    check(r.stdout.strip() == "err EACCES", "write-open of another user's 0644 file: %r" % r.stdout)
    r = harness([STATIC, "rename", "theirs.txt", "mine.txt"], wd)
    check(r.stdout.strip() == "ok rename", "renaming in its own directory works: %r" % r.stdout)
    mine = os.path.join(wd.path, "own.txt")
    with open(mine, "w") as f:
        f.write("x")
    r = harness([STATIC, "chownto", "own.txt", "65534"], wd)
    check(r.stdout.strip() == "err EPERM", "chown to another user without CAP_CHOWN: %r" % r.stdout)
    check(os.stat(mine).st_uid == 0, "owner changed")
    r = harness([STATIC, "chmod", "mine.txt"], wd)
    check(r.stdout.strip() == "err EPERM", "chmod of another user's file: %r" % r.stdout)
    check(os.stat(os.path.join(wd.path, "mine.txt")).st_mode & 0o777 == 0o644, "mode changed")
    with open(os.path.join(wd.path, "mine.txt")) as f:
        check(f.read() == "theirs\n", "content changed")


def test_write_through_proc_self_fd_decided_on_the_directory(wd):
    # Claude Code writes "/proc/self/fd/N/name" with N an O_PATH fd of
    # the parent: decided on the directory it names, not on the text.
    os.makedirs(os.path.join(wd.path, "ask"), exist_ok=True)
    r = harness([STATIC, "fdopen", wd.path, "made.txt"], wd)
    check(r.stdout.strip() == "ok open", repr((r.stdout, r.stderr)) + r.dump())
    with open(os.path.join(wd.path, "made.txt")) as f:
        check(f.read() == "data\n", "written through the fd path")
    rec = _kernel(r, event="openat", verdict="allow")
    check(rec and rec[0]["args"]["path_resolved"] == os.path.join(wd.path, "made.txt")
          and rec[0].get("decided_on_resolved"), r.dump())
    # The same way into a denied place stays denied.
    for d in ("/etc", os.path.join(wd.path, "ask")):
        r = harness([STATIC, "fdopen", d, "x"], wd)
        check(r.stdout.strip() == "err EACCES", "%s: %r" % (d, r.stdout))
        check(not os.path.exists(os.path.join(d, "x")), "%s/x was created" % d)
    code = ("import os; d = os.open(%r, os.O_PATH)\n"
            "fd = os.open('/proc/self/fd/%%d/py.txt' %% d, os.O_WRONLY | os.O_CREAT)\n"
            "os.write(fd, b'py')" % wd.path)
    r = harness(["/usr/bin/python3", "-c", code], wd)
    r.expect_status(0)
    check(os.path.exists(os.path.join(wd.path, "py.txt")), "not written through the shim")


def test_denied_mkdir_of_existing_directory_is_eexist(wd):
    # mkdir -p and recursive mkdirs take EEXIST as "there already";
    # EACCES for a directory that exists breaks them at $HOME.
    for cmd in ([STATIC, "mkdir", "/etc"], [STATIC, "mkdir", "/tmp/hx-no-such-%d" % os.getpid()]):
        r = harness(cmd, wd)
        want = "err EEXIST" if cmd[2] == "/etc" else "err EACCES"
        check(r.stdout.strip() == want, "%s: %r" % (cmd[2], r.stdout))
        check(r.one(event="mkdir")["verdict"] == "deny", r.dump())
    r = harness(["/usr/bin/python3", "-c", "import os; os.makedirs('/usr/share', exist_ok=True)"], wd)
    r.expect_status(0)
    check("harness: denied" not in r.stderr, "a notice for an EEXIST: %r" % r.stderr)


def test_directory_open_under_trace_reads_is_a_read(wd):
    # O_TMPFILE is O_DIRECTORY plus a bit: an O_DIRECTORY open is a read.
    for d in ("/etc", wd.path):
        r = harness([STATIC, "diropen", d], wd, extra=["--trace-reads"])
        check(r.stdout.strip() == "ok diropen", "%s: %r" % (d, r.stdout))
        rec = _kernel(r, event="openat")
        check(rec and rec[0]["op"] == "read" and rec[0]["verdict"] == "allow", r.dump())


def test_who_a_thread_is_follows_its_changes(wd):
    # The kernel layer remembers who a thread is between its calls
    # (unotify_ident.c); each change must show in the next call: a umask
    # set between two creates, a parent that exits (the child is
    # reparented), an exec of another program by the same process.
    copy = os.path.join(wd.path, "other-static")
    with open(STATIC, "rb") as src, open(copy, "wb") as dst:
        dst.write(src.read())
    os.chmod(copy, 0o755)
    r = _static(wd, "ident", wd.path, copy)
    line = [x for x in r.stdout.splitlines() if x.startswith("ok ident ")]
    check(len(line) == 1 and "ok open" in r.stdout, repr((r.stdout, r.stderr)))
    words = line[0].split()
    old, new = int(words[2]), int(words[3])
    check(old != new, words)
    check(os.stat(_p(wd, "a")).st_mode & 0o777 == 0o644, oct(os.stat(_p(wd, "a")).st_mode))
    check(os.stat(_p(wd, "b")).st_mode & 0o777 == 0o600,
          "umask 077 not applied: %s" % oct(os.stat(_p(wd, "b")).st_mode))

    def rec(name):
        got = [x for x in r.events(event="openat", layer="kernel")
               if x["args"].get("path") == _p(wd, name)]
        check(len(got) == 1, "%s: %r" % (name, got))
        return got[0]
    check(rec("c")["ppid"] == old, rec("c"))
    check(rec("d")["ppid"] == new, "the parent after reparenting: %r" % rec("d"))
    check(rec("d")["pid"] == rec("c")["pid"], (rec("c"), rec("d")))
    check(rec("d")["exe"] == STATIC, rec("d"))
    check(rec("e")["exe"] == copy, "the exe after the exec: %r" % rec("e"))
    # e is made by open(O_CREAT) without O_EXCL, tried first without
    # O_CREAT (unotify_open.c open_existing): the umask still applies.
    check(os.stat(_p(wd, "e")).st_mode & 0o777 == 0o600, oct(os.stat(_p(wd, "e")).st_mode))
    check(rec("e")["pid"] == rec("d")["pid"], (rec("d"), rec("e")))


def test_create_open_of_what_is_there(wd):
    # open(O_CREAT) without O_EXCL of what exists is tried without O_CREAT
    # first (no umask to read, nothing made); a directory still answers
    # EISDIR, and an existing file is opened, not made again.
    os.makedirs(_p(wd, "adir"))
    r = _static(wd, "open", _p(wd, "adir"))
    check(r.stdout.strip() == "err EISDIR", repr((r.stdout, r.stderr)))
    _mkfile(_p(wd, "there"), "old content\n")
    os.chmod(_p(wd, "there"), 0o640)
    r = _static(wd, "open", _p(wd, "there"))
    check(r.stdout.strip() == "ok open", repr((r.stdout, r.stderr)))
    check(os.stat(_p(wd, "there")).st_mode & 0o777 == 0o640, oct(os.stat(_p(wd, "there")).st_mode))
    with open(_p(wd, "there")) as f:
        got = f.read()
    check(got == "data\nontent\n", "written over from the start, not truncated nor made anew: %r" % got)


def test_open_dotdot_after_a_symlink_decided_where_the_kernel_goes(wd):
    # The same walk for an emulated open: a/b/l/../ask/new, l -> x/, is
    # $CWD/ask/new (an ask subtree: refused), not a lexical a/b/ask/new;
    # the record names where the kernel would have gone.
    os.makedirs(_p(wd, "x"))
    os.makedirs(_p(wd, "a", "b"))
    os.makedirs(_p(wd, "ask"), exist_ok=True)
    os.symlink(_p(wd, "x"), _p(wd, "a", "b", "l"))
    r = _static(wd, "open", _p(wd, "a", "b", "l", "..", "ask", "new"))
    check(r.stdout.strip().startswith("err"), repr((r.stdout, r.stderr)))
    check(not os.path.exists(_p(wd, "ask", "new")), "made through the walk")
    rec = [x for x in r.events(event="openat", layer="kernel")
           if x["args"].get("path_resolved") == _p(wd, "ask", "new")]
    check(len(rec) == 1 and rec[0]["verdict"] != "allow", r.dump())


def test_a_signal_storm_never_makes_a_call_twice(wd):
    # A call broken off by a signal while the supervisor decides it is
    # restarted by the kernel (SA_RESTART), unseen by the shim. Unless
    # the listener waits killably (WAIT_KILLABLE_RECV, 5.19), the
    # supervisor sees it twice: an emulated mkdir is made, then fails
    # with EEXIST when made again, and its second sight is recorded as
    # a raw syscall that bypassed the shim.
    rounds = 200
    r = harness([os.path.join(HELPERS, "signal_storm"), wd.path, str(rounds)], wd)
    if not r.one(event="session_start")["kernel"].get("notify_killable"):
        raise Skip("no WAIT_KILLABLE_RECV: a restarted call is seen twice")
    check(r.stdout.strip() == "errors 0", "the program's calls failed: %r" % r.stdout)
    mine = [x for x in r.records if x.get("args", {}).get("path", "").startswith(wd.path + "/")]
    check(not [x for x in mine if x.get("shim_bypass") or x.get("layer") == "kernel"],
          "a call seen twice:\n" + r.dump())
    for event, n in (("mkdir", rounds), ("rename", rounds), ("unlink", rounds)):
        got = len([x for x in mine if x["event"] == event])
        check(got == n, "%d %s records, not %d" % (got, event, n))


# Calls the supervisor makes for a thread that wait on the agent: a
# FIFO's open (for its other end), a unix connect to a full backlog.
WAITS = r"""
import os, signal, socket, time
os.mkfifo("f")
full = socket.socket(socket.AF_UNIX); full.bind("full.sock"); full.listen(0)
ok = socket.socket(socket.AF_UNIX); ok.bind("ok.sock"); ok.listen(64)

def waiter(what):
    pid = os.fork()
    if pid == 0:
        if what == "fifo":
            os.open("f", os.O_WRONLY)
        else:
            for i in range(4):
                socket.socket(socket.AF_UNIX).connect("full.sock")
        os._exit(0)
    return pid

# more waits than the supervisor has workers, killed: nothing waits on
kids = [waiter("fifo") for i in range(8)] + [waiter("unix") for i in range(8)]
time.sleep(1)
for k in kids:
    os.kill(k, signal.SIGKILL)
    os.waitpid(k, 0)
signal.alarm(10)
os.close(os.open("after", os.O_WRONLY | os.O_CREAT, 0o644))
for i in range(8):
    socket.socket(socket.AF_UNIX).connect("ok.sock")
print("served after", flush=True)
# a waiting call ends on a signal that ends its process, as it would
for what in ("fifo", "unix"):
    pid = waiter(what)
    time.sleep(0.3)
    os.kill(pid, signal.SIGTERM)
    t0 = time.monotonic()
    _, st = os.waitpid(pid, 0)
    print(what, "SIGTERM", os.WTERMSIG(st) if os.WIFSIGNALED(st) else "exit", "%.1f" % (time.monotonic() - t0))
# a handler with SA_RESTART runs, the open is restarted and completes
pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGUSR1, lambda *a: os.write(1, b"handler\n"))
    signal.siginterrupt(signal.SIGUSR1, False)
    fd = os.open("f", os.O_WRONLY)
    os.write(fd, b"x")
    os._exit(0)
time.sleep(0.3)
os.kill(pid, signal.SIGUSR1)
time.sleep(0.3)
print("read", os.read(os.open("f", os.O_RDONLY), 1).decode(), flush=True)
os.waitpid(pid, 0)
"""


def test_a_call_that_waits_on_the_agent_holds_no_worker_for_good(wd):
    # A worker that opens a FIFO or connects to a full backlog for a
    # thread waits as long as the agent wants: 4 such waits took every
    # worker and every later call of the tree waited too, for good,
    # even once their threads were killed (the workers' own opens and
    # connects went on). And since the listener waits killably
    # (WAIT_KILLABLE_RECV), a traced thread in such a wait ignored a
    # SIGTERM (and a handler's signal) that would have ended it.
    r = harness(["python3", "-c", WAITS], wd, timeout=60)
    out = r.stdout.splitlines()
    check("served after" in out, "the tree was not served after the waits were killed: %r %s" % (out, r.stderr))
    for what in ("fifo", "unix"):
        line = [x for x in out if x.startswith(what + " SIGTERM")]
        check(line and line[0].split()[2] == "15" and float(line[0].split()[3]) < 2,
              "a waiting %s call did not end on SIGTERM: %r" % (what, line))
    check("handler" in out and "read x" in out, "the handler or the restarted open: %r" % out)
    opens = [x for x in r.records if x.get("args", {}).get("path") == os.path.join(os.path.realpath(wd.path), "f")
             and x["event"] == "open"]
    check(len(opens) >= 10, "the FIFO's opens are not recorded: %r" % opens)
    check(not [x for x in opens if x.get("shim_bypass") or x.get("layer") == "kernel"],
          "a restarted open was seen as another call: %r" % opens)
