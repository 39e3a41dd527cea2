"""The nineteenth attack review (a): seams where the kernel layer acts on
its own view of a name, and records that name another object than the
one the kernel used. Each attack is a static program (no shim) under
the default policy in enforce mode."""

import errno
import os

from lib import HELPERS, check, harness

STATIC = os.path.join(HELPERS, "static_attack19a")

SCRIPT = "#!/bin/sh\necho RAN \"$(pwd)\" $$\n"


def _two_scripts(wd, name="run.sh"):
    """The same script name in two directories of the project, with one
    interpreter: the exec gate's look at the interpreter's inode and the
    argv cannot tell them apart."""
    dirs = []
    for d in ("a", "b"):
        p = os.path.join(wd.path, d)
        os.makedirs(p, exist_ok=True)
        with open(os.path.join(p, name), "w") as f:
            f.write(SCRIPT)
        os.chmod(os.path.join(p, name), 0o755)
        dirs.append(p)
    return dirs


def _ran(r):
    """(directory, pid) of each script that ran (its cwd is the
    directory it was read from: sh opens ./run.sh there)."""
    out = []
    for line in r.stdout.splitlines():
        w = line.split()
        if len(w) == 3 and w[0] == "RAN":
            out.append((w[1], int(w[2])))
    return out


def _decided(r):
    """pid -> the script the kernel layer's execve record names."""
    return {x.get("pid"): x.get("args", {}).get("path")
            for x in r.records
            if x.get("event") == "execve" and x.get("layer") == "kernel" and
            x.get("verdict") == "allow"}


def test_a_script_named_from_a_cwd_another_process_moves_is_the_one_recorded(wd):
    """A process of the agent made with clone(CLONE_FS) (not a thread)
    shares its parent's cwd: it moved it from a/ to b/ once the parent's
    exec of ./run.sh was decided and let through, and the shell the
    kernel started read b/run.sh, while the log said a/run.sh ran (the
    exec gate checks a script's interpreter and the name in its argv,
    both the same). Such a clone is refused: nothing outside a process's
    own threads changes its cwd, its root or its umask between the
    decision and what the new image opens by name."""
    a, b = _two_scripts(wd)
    r = harness([STATIC, "sharedcwd", a, b, "run.sh"], wd, policy=None)
    ran = _ran(r)
    check(len(ran) == 1, "the script did not run: %r" % ((r.status, r.stdout, r.stderr[-600:]),))
    dec = _decided(r)
    where, pid = ran[0]
    check(dec.get(pid) == os.path.join(where, "run.sh"),
          "the log names %r, %s/run.sh ran:\n%s" % (dec.get(pid), where, r.dump()))
    check(where == a, "the script of b/ ran: %r" % r.stdout)
    check("clone refused %d" % errno.EPERM in r.stdout,
          "a clone sharing the cwd was made: %r" % r.stdout)


def test_a_script_named_from_a_cwd_a_thread_moves_is_the_one_recorded(wd):
    """A thread of the process moved the cwd between a/ and b/ while its
    sibling exec'd ./run.sh: the kernel layer decided on the cwd it read,
    the kernel walked the name from the one it found a moment later, and
    one exec in seven or so ran the other directory's script under a
    record naming the first. The exec gate now looks, at the exec event
    (the threads gone), at what each name the new image opens by name
    (a script's, an interpreter's that is a script, a loader's program)
    leads to from there: another file is killed as a mismatch."""
    a, b = _two_scripts(wd)
    r = harness([STATIC, "threadcwd", a, b, "run.sh", "40"], wd, policy=None,
                timeout=240)
    ran = _ran(r)
    killed = [int(line.split()[1]) for line in r.stdout.splitlines()
              if line.startswith("killed ")]
    check(ran, "no script ran: %r" % ((r.status, r.stdout[-800:], r.stderr[-600:]),))
    dec = _decided(r)
    wrong = [(where, pid, dec.get(pid)) for where, pid in ran
             if dec.get(pid) != os.path.join(where, "run.sh")]
    check(not wrong, "scripts that ran under a record naming another "
          "(ran in, pid, recorded): %r\n%s" % (wrong, r.dump()))
    for pid in killed:
        hits = [x for x in r.records if x.get("exec_gate") == "mismatch" and
                x.get("pid") == pid]
        check(hits and hits[0].get("killed") is True,
              "pid %d was killed without its mismatch record:\n%s" % (pid, r.dump()))


def test_a_name_the_kernel_refuses_makes_nothing(wd):
    """The kernel layer acted on the name normalized (its trailing slash
    and a ".." walked through a file gone), and made what the kernel
    refuses: open("new/", O_CREAT) made a file "new" (the kernel: EISDIR),
    open("f/../x", O_CREAT) and mkdir("f/../d"), with f a file, made x
    and d (the kernel: ENOTDIR); inotify_add_watch("f/../w") watched w;
    bind("f/../s.sock") was refused with a "revoked" record saying the
    directory had been swapped since the decision, which nothing did.
    Now each fails as the kernel fails it, nothing is made, and the log
    says so (a "failed" record after the allow of a write, never a
    revoke; a read of a name that is not there has none, by design)."""
    f = wd.file("f", "data\n")
    os.mkdir(os.path.join(wd.path, "w"))  # watched, were f a directory
    cases = [
        (["creat", "new/"], "new", "EISDIR"),
        (["creat", "f/../x"], "x", "ENOTDIR"),
        (["mkdir", "f/../d"], "d", "ENOTDIR"),
        (["creat", os.path.join(f, "..", "y")], "y", "ENOTDIR"),
        (["bind", "f/../s.sock"], "s.sock", "ENOTDIR"),
        (["watch", "f/../w"], None, "ENOTDIR"),
    ]
    for argv, made, err in cases:
        r = harness([STATIC] + argv, wd, policy=None)
        what = " ".join(argv)
        check(r.stdout.strip() == "err %d" % getattr(errno, err),
              "%s: %r, the kernel says %s" % (what, r.stdout, err))
        check(made is None or not os.path.lexists(os.path.join(wd.path, made)),
              "%s made %s" % (what, made))
        r.none(event="revoked")
        allowed = [x for x in r.records if x.get("layer") == "kernel" and
                   x.get("verdict") == "allow" and
                   x.get("event") in ("openat", "mkdir", "bind", "inotify_add_watch")]
        for x in allowed:
            if x.get("op") == "read":
                continue  # a read of a name not there: no failed record
            after = [y for y in r.records if y.get("event") == "failed" and
                     y.get("ref_seq") == x.get("seq")]
            check(after and after[0].get("errno") == err,
                  "%s: an allow with no failed %s after it:\n%s" % (what, err, r.dump()))
