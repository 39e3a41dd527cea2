"""The nineteenth attack review (a): seams where the kernel layer acts on
its own view of a name, and records that name another object than the
one the kernel used. Each attack is a static program (no shim) under
the default policy in enforce mode."""

import errno
import os
import time

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
    allows = {x.get("seq"): x for x in r.records
              if x.get("event") == "execve" and x.get("verdict") == "allow"}
    for pid in killed:
        hits = [x for x in r.records if x.get("exec_gate") == "mismatch" and
                x.get("pid") == pid]
        check(hits and hits[0].get("killed") is True,
              "pid %d was killed without its mismatch record:\n%s" % (pid, r.dump()))
        # which allow did not run: the mismatch names it
        broke = allows.get(hits[0].get("ref_seq"))
        check(broke and broke.get("pid") == pid,
              "pid %d: the mismatch names no allow of it: %r" % (pid, hits[0]))


def test_a_name_the_kernel_refuses_makes_nothing(wd):
    """The kernel layer acted on the name normalized (its trailing slash
    and a ".." walked through a file gone), and made what the kernel
    refuses: open("new/", O_CREAT) made a file "new" (the kernel: EISDIR),
    open("f/../x", O_CREAT) and mkdir("f/../d"), with f a file, made x
    and d (the kernel: ENOTDIR); inotify_add_watch("f/../w") watched w;
    through a symlink whose text ends with a slash, open("dn", O_CREAT)
    with dn -> newdir/ made a file newdir (EISDIR), and truncate("dl")
    and chmod("dl") with dl -> f/ emptied and re-moded f (ENOTDIR);
    bind("f/../s.sock") was refused with a "revoked" record saying the
    directory had been swapped since the decision, which nothing did.
    Now each fails as the kernel fails it, nothing is made, and the log
    says so (a "failed" record after the allow of a write, never a
    revoke; a read of a name that is not there has none, by design)."""
    f = wd.file("f", "data\n")
    os.mkdir(os.path.join(wd.path, "w"))  # watched, were f a directory
    os.symlink("newdir/", os.path.join(wd.path, "dn"))  # a slash in its text
    os.symlink("f/", os.path.join(wd.path, "dl"))
    cases = [
        (["creat", "new/"], "new", "EISDIR"),
        (["creat", "f/../x"], "x", "ENOTDIR"),
        (["mkdir", "f/../d"], "d", "ENOTDIR"),
        (["creat", os.path.join(f, "..", "y")], "y", "ENOTDIR"),
        (["bind", "f/../s.sock"], "s.sock", "ENOTDIR"),
        (["watch", "f/../w"], None, "ENOTDIR"),
        (["creat", "dn"], "newdir", "EISDIR"),
        (["truncate", "dl"], None, "ENOTDIR"),
        (["chmod", "dl"], None, "ENOTDIR"),
    ]
    for argv, made, err in cases:
        r = harness([STATIC] + argv, wd, policy=None)
        what = " ".join(argv)
        check(r.stdout.strip() == "err %d" % getattr(errno, err),
              "%s: %r, the kernel says %s" % (what, r.stdout, err))
        check(made is None or not os.path.lexists(os.path.join(wd.path, made)),
              "%s made %s" % (what, made))
        r.none(event="revoked")
        st = os.stat(f)
        check(st.st_size == 5 and st.st_mode & 0o777 == 0o644,
              "%s changed f through dl -> f/: %r" % (what, st))
        allowed = [x for x in r.records if x.get("layer") == "kernel" and
                   x.get("verdict") == "allow" and
                   x.get("event") in ("openat", "mkdir", "bind", "inotify_add_watch",
                                      "truncate", "chmod")]
        for x in allowed:
            if x.get("op") == "read":
                continue  # a read of a name not there: no failed record
            after = [y for y in r.records if y.get("event") == "failed" and
                     y.get("ref_seq") == x.get("seq")]
            check(after and after[0].get("errno") == err,
                  "%s: an allow with no failed %s after it:\n%s" % (what, err, r.dump()))


def _two_dirs_and_a_git(wd, body="touch pushed"):
    """Directories a/ and b/ of the project and a script bin/git of the
    state's that runs body (by default: touches "pushed" where it
    runs)."""
    a, b = (os.path.join(wd.path, d) for d in ("a", "b"))
    for d in (a, b):
        os.mkdir(d)
    bindir = os.path.join(wd.state, "bin")
    os.mkdir(bindir)
    git = os.path.join(bindir, "git")
    with open(git, "w") as f:
        f.write("#!/bin/sh\n%s\n" % body)
    os.chmod(git, 0o755)
    return a, b, git


def test_an_approved_exec_runs_in_the_cwd_shown(wd):
    """The question about an exec shows its cwd ("git push origin main
    (in a/)"), and a relative name in its argv means what it names from
    there; a thread of the agent moved the cwd to b/ while the question
    waited, and the approved command ran in b/ under a record saying
    a/. The exec gate now checks at the exec event that the new image's
    cwd is the one decided (and shown); another is killed."""
    from test_ask import Session, answer, wait_pending
    a, b, git = _two_dirs_and_a_git(wd)
    s = Session(wd, [STATIC, "askcwd", a, b, git, "push", "origin", "main"])
    q = wait_pending(wd, s)
    check(q.get("cwd") == a and q.get("argv") == [git, "push", "origin", "main"],
          "the question: %r" % q)
    time.sleep(1.0)  # the thread has moved the cwd by now
    answer(wd, "approve", q["id"])
    s.finish()
    check(not os.path.exists(os.path.join(b, "pushed")),
          "the approved exec ran in b/: %r %r" % (s.stdout, s.stderr[-600:]))
    ran = os.path.exists(os.path.join(a, "pushed"))
    killed = [r for r in s.records if r.get("exec_gate") == "mismatch"]
    check(ran or (killed and killed[0].get("killed") is True),
          "neither ran in a/ nor killed: %r" % (s.records[-6:],))


PY_ASK_CWD = r'''
import os, sys, threading, time
a, b, prog = sys.argv[1:4]
os.chdir(a)
def later():
    time.sleep(0.5)
    os.chdir(b)
threading.Thread(target=later, daemon=True).start()
# through libc (the shim's execv), the GIL let go while it asks
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
args = [prog, "push", "origin", "main"]
argv = (ctypes.c_char_p * 5)(*[x.encode() for x in args], None)
libc.execv(prog.encode(), argv)
print("exec errno", ctypes.get_errno(), flush=True)
'''


def test_an_answer_once_is_for_the_cwd_shown(wd):
    """Through the shim (python): the shim asks about the exec, a person
    answers "once" for it shown in a/, a thread moves the cwd to b/
    while the question waits, and the kernel layer's sight of the call
    took that answer as its own (the same process, argv and path) and
    let it run in b/. An answer "once" for an exec now holds for its
    cwd too: in another, it is asked again."""
    from test_ask import Session, answer, pending, wait_pending
    from lib import PYTHON
    a, b, git = _two_dirs_and_a_git(wd)
    s = Session(wd, [PYTHON, "-c", PY_ASK_CWD, a, b, git], timeout=5)
    q = wait_pending(wd, s)
    check(q.get("cwd") == a, "the question: %r" % q)
    time.sleep(1.0)  # the thread has moved the cwd by now
    answer(wd, "approve", q["id"])
    end = time.time() + 8
    while time.time() < end and s.p.poll() is None:
        again = [x for x in pending(wd) if x["id"] != q["id"]]
        if again:
            check(again[0].get("cwd") == b, "asked again: %r" % again[0])
            answer(wd, "deny", again[0]["id"])
            break
        time.sleep(0.05)
    s.finish()
    check(not os.path.exists(os.path.join(b, "pushed")),
          "the exec answered for a/ ran in b/: %r %r" % (s.stdout, s.stderr[-600:]))


PY_FLIP = r'''
import ctypes, os, sys, threading
a, b, prog, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
libc = ctypes.CDLL(None, use_errno=True)
for i in range(n):
    pid = os.fork()
    if pid == 0:
        os.chdir(a)
        def flip():
            while True:
                libc.chdir(b.encode())
                libc.chdir(a.encode())
        threading.Thread(target=flip, daemon=True).start()
        argv = (ctypes.c_char_p * 2)(prog.encode(), None)
        libc.execv(prog.encode(), argv)  # the shim's execv
        os._exit(3)
    os.waitpid(pid, 0)
'''


def test_an_exec_through_the_shim_is_recorded_in_the_cwd_it_ran_in(wd):
    """Python's execv of a script by its absolute name, through the
    shim, while a thread moves the cwd between a/ and b/: the shim's
    request (decided in one cwd) and the kernel layer's sight of the
    exec (in the other) had one key, path and argv, so the log kept one
    "shim+kernel" record with the shim's cwd, and one exec in fifteen or
    so ran in the other directory. The key of an exec now holds its cwd:
    the kernel layer's own record names where it ran."""
    from lib import PYTHON
    a, b = (os.path.join(wd.path, d) for d in ("a", "b"))
    for d in (a, b):
        os.mkdir(d)
    prog = wd.file("s.sh", SCRIPT)
    os.chmod(prog, 0o755)
    r = harness([PYTHON, "-c", PY_FLIP, a, b, prog, "40"], wd, policy=None,
                timeout=240)
    ran = _ran(r)
    check(ran, "nothing ran: %r" % ((r.status, r.stdout[-600:], r.stderr[-600:]),))
    # the records the log stands by: a claim the kernel layer did not
    # confirm is marked so (kernel_unconfirmed)
    unconfirmed = {x.get("ref_seq") for x in r.records
                   if x.get("event") == "kernel_unconfirmed"}
    cwds = {}
    for x in r.records:
        if x.get("event") in ("execve", "execv") and x.get("verdict") == "allow" and \
                x.get("args", {}).get("path") == prog and x.get("seq") not in unconfirmed:
            cwds.setdefault(x.get("pid"), []).append(x.get("cwd"))
    wrong = [(where, pid, cwds.get(pid)) for where, pid in ran
             if where not in cwds.get(pid, [])]
    check(not wrong, "execs recorded in another cwd than they ran in "
          "(ran in, pid, recorded): %r" % wrong)


def _env_of(x, name):
    """The entries of record (or question) x's environment that set or
    unset name."""
    env = x.get("args", x).get("env") or []
    return [e for e in env if e.split("=", 1)[0] in (name, "-" + name)]


def test_an_approved_exec_shows_the_environment_that_steers_it(wd):
    """A question about an exec showed its path, argv and cwd, not its
    environment, which the agent sets: "git push origin main (in a/)"
    approved, run with GIT_WORK_TREE=b/ (or GIT_DIR, GIT_SSH_COMMAND,
    LD_PRELOAD, BASH_ENV...), worked on b/. What differs from the
    session's environment is now part of the exec's call: shown in the
    question, recorded (args.env). Refused on seeing it: nothing ran."""
    from test_ask import Session, answer, wait_pending
    a, b, git = _two_dirs_and_a_git(wd, 'cd "${GIT_WORK_TREE:-.}" && touch pushed')
    s = Session(wd, [STATIC, "askenv", a, "-", "GIT_WORK_TREE=" + b, git, "push",
                     "origin", "main"])
    q = wait_pending(wd, s)
    check(q.get("cwd") == a, "the question: %r" % q)
    check(_env_of(q, "GIT_WORK_TREE") == ["GIT_WORK_TREE=" + b] and
          "GIT_WORK_TREE=" + b in q.get("what", ""),
          "the question does not show the environment: %r" % q)
    answer(wd, "deny", q["id"])
    s.finish()
    check(not os.path.exists(os.path.join(b, "pushed")) and
          not os.path.exists(os.path.join(a, "pushed")),
          "it ran: %r" % ((s.stdout, s.stderr[-400:]),))
    asked = [x for x in s.asked() if x.get("op") == "exec"]
    check(asked and _env_of(asked[0], "GIT_WORK_TREE") == ["GIT_WORK_TREE=" + b],
          "the record does not name the environment: %r" % asked)


PY_ASK_ENV = r'''
import ctypes, os, sys, threading, time
b, prog = sys.argv[1:3]
env = [k.encode() + b"=" + v.encode() for k, v in os.environ.items()]
# a copy of an entry (no difference) in the slot the thread fills later
envp = (ctypes.c_char_p * (len(env) + 2))(*env, env[0], None)
def later():
    time.sleep(0.5)
    envp[len(env)] = b"GIT_WORK_TREE=" + b.encode()
threading.Thread(target=later, daemon=True).start()
libc = ctypes.CDLL(None, use_errno=True)
argv = (ctypes.c_char_p * 5)(prog.encode(), b"push", b"origin", b"main", None)
libc.execve(prog.encode(), argv, envp)  # the shim's execve: it asks first
print("exec errno", ctypes.get_errno(), flush=True)
'''


def _deny_the_next_question(wd, s, q):
    """The question s asks after q, denied (None: none within 8 s)."""
    from test_ask import answer, pending
    end = time.time() + 8
    while time.time() < end and s.p.poll() is None:
        again = ([x for x in pending(wd) if x["id"] != q["id"]] or [None])[0]
        if again:
            answer(wd, "deny", again["id"])
            return again
        time.sleep(0.05)
    return None


def test_an_answer_once_is_for_the_environment_shown(wd):
    """Through the shim: the question shows the exec's environment (the
    shim tells where its caller's is), a person answers "once" for it
    with no GIT_WORK_TREE, and a thread puts GIT_WORK_TREE=b/ into the
    environment while the question waits. The kernel layer's sight of
    the exec took that answer as its own (the same process, path, argv
    and cwd) and git worked on b/. An answer "once" now holds for the
    environment shown: another is asked again, showing it."""
    from test_ask import Session, answer, wait_pending
    from lib import PYTHON
    a, b, git = _two_dirs_and_a_git(wd, 'cd "${GIT_WORK_TREE:-.}" && touch pushed')
    s = Session(wd, [PYTHON, "-c", PY_ASK_ENV, b, git], timeout=5)
    q = wait_pending(wd, s)
    check(not _env_of(q, "GIT_WORK_TREE") and not q.get("env_unread"),
          "the question: %r" % q)
    time.sleep(1.0)  # the thread has set GIT_WORK_TREE by now
    answer(wd, "approve", q["id"])
    again = _deny_the_next_question(wd, s, q)
    s.finish()
    check(not os.path.exists(os.path.join(b, "pushed")),
          "the exec answered for no GIT_WORK_TREE ran with it: %r %r" %
          (s.stdout, s.stderr[-600:]))
    check(again and _env_of(again, "GIT_WORK_TREE") == ["GIT_WORK_TREE=" + b],
          "not asked again with the environment shown: %r" % again)
    kernel = [x for x in s.asked() if x.get("layer") == "kernel" and x.get("op") == "exec"]
    check(kernel and _env_of(kernel[-1], "GIT_WORK_TREE") == ["GIT_WORK_TREE=" + b],
          "the kernel layer's record: %r" % kernel)


PY_GRANT_ENV = r'''
import ctypes, os, sys
prog, extra = sys.argv[1], sys.argv[2:]
libc = ctypes.CDLL(None, use_errno=True)
for e in [None] + extra:
    pid = os.fork()
    if pid == 0:
        if e:
            os.environ[e.split("=")[0]] = e.split("=", 1)[1]
        argv = (ctypes.c_char_p * 5)(prog.encode(), b"push", b"origin", b"main", None)
        libc.execv(prog.encode(), argv)  # the shim's execv, environ
        os._exit(3)
    os.waitpid(pid, 0)
'''


def test_a_grant_is_for_the_environment_shown(wd):
    """A "session" grant for git push given with no changed environment
    held for git push with GIT_DIR set by the agent (a grant was keyed on
    the file and argv only). It is keyed on the environment's difference
    too (but a shell's PWD, SHLVL...): the second exec is asked again."""
    from test_ask import Session, answer, wait_pending
    from lib import PYTHON
    a, b, git = _two_dirs_and_a_git(wd, 'echo "PUSHED ${GIT_DIR:-here}"')
    s = Session(wd, [PYTHON, "-c", PY_GRANT_ENV, git, "GIT_DIR=" + b], timeout=3)
    q = wait_pending(wd, s)
    check(not _env_of(q, "GIT_DIR"), "the question: %r" % q)
    answer(wd, "approve", q["id"], "session")
    again = _deny_the_next_question(wd, s, q)
    s.finish()
    check("PUSHED here" in s.stdout, "the granted exec did not run: %r %r" %
          (s.stdout, s.stderr[-400:]))
    check("PUSHED " + b not in s.stdout,
          "the grant held for GIT_DIR set: %r" % s.stdout)
    check(again and _env_of(again, "GIT_DIR") == ["GIT_DIR=" + b],
          "not asked again with GIT_DIR shown: %r" % again)


def test_an_environment_swapped_after_the_decision_is_caught(wd):
    """A static program's thread rewrote its exec's environment string
    ("MODE=safe" <-> "MODE=evil") while the kernel layer decided it: the
    kernel copied another environment than the one read and recorded.
    The exec gate now holds the new image's environment (as the kernel
    copied it, /proc/PID/environ) to the one approved: each script that
    ran is recorded with the MODE it ran with, and the others were killed
    with a mismatch record (env_changed) naming the allow they broke."""
    prog = wd.file("mode.sh", "#!/bin/sh\necho RAN \"$MODE\" $$\n")
    os.chmod(prog, 0o755)
    r = harness([os.path.join(HELPERS, "static_envswap"), prog, "40"], wd,
                policy=None, timeout=240)
    ran = [(w[1], int(w[2])) for w in (line.split() for line in r.stdout.splitlines())
           if len(w) == 3 and w[0] == "RAN"]
    killed = [int(line.split()[1]) for line in r.stdout.splitlines()
              if line.startswith("killed ")]
    check(ran, "nothing ran: %r" % ((r.status, r.stdout[-600:], r.stderr[-600:]),))
    dec = {x.get("pid"): _env_of(x, "MODE") for x in r.records
           if x.get("event") == "execve" and x.get("layer") == "kernel" and
           x.get("verdict") == "allow"}
    wrong = [(mode, pid, dec.get(pid)) for mode, pid in ran
             if dec.get(pid) != ["MODE=" + mode]]
    check(not wrong, "scripts that ran with another environment than recorded "
          "(ran with, pid, recorded): %r" % wrong)
    for pid in killed:
        hits = [x for x in r.records if x.get("exec_gate") == "mismatch" and
                x.get("pid") == pid]
        check(hits and hits[0].get("killed") is True and
              hits[0].get("env_changed") is True and hits[0].get("ref_seq"),
              "pid %d was killed without its mismatch record:\n%s" % (pid, r.dump()))


def test_a_script_named_through_another_processs_cwd_is_refused(wd):
    """An exec of /proc/CHILD/cwd/run.sh, CHILD a process of the agent in
    a/ that moved to b/ once the exec gate had looked (no cwd shared,
    nothing written): the shell opened the name and read b/run.sh under
    a record naming a/run.sh, three runs in four. A name the new image
    opens after the gate's look that goes through another process's
    /proc entry (cwd, root, fds) is refused: the allow taken back
    (revoked, harness:exec-name)."""
    a, b = _two_scripts(wd)
    with open(os.path.join(b, "run.sh"), "w") as f:
        f.write("#!/bin/sh\necho OTHER-RAN\n")
    r = harness([STATIC, "proccwd", a, b, "run.sh"], wd, policy=None)
    check("OTHER-RAN" not in r.stdout, "b/run.sh ran: %r\n%s" % (r.stdout, r.dump()))
    ran = _ran(r)
    allowed = [x for x in r.records if x.get("event") == "execve" and
               x.get("verdict") == "allow" and "/cwd/run.sh" in x.get("args", {}).get("path", "")]
    for x in allowed:
        back = [y for y in r.records if y.get("event") == "revoked" and
                y.get("ref_seq") == x.get("seq")]
        check(back and back[0].get("rule") == "harness:exec-name" or ran,
              "an allow neither taken back nor run as recorded:\n%s" % r.dump())
    check(not ran, "ran through another process's cwd: %r" % r.stdout)
    check("exec err %d" % errno.EACCES in r.stdout, "%r" % r.stdout)


def test_an_exec_of_dev_fd_is_the_agents_fd(wd):
    """/dev/fd/N (and /dev/stdin...) are links into /proc/self/fd: the
    kernel layer read an exec of /dev/fd/5, or of a symlink to it, in
    its own view, looked at harness-exec's fd 5 for the image (ENXIO, a
    socket) and refused the agent's script; the kernel runs the agent's
    fd 5. Likewise a symlink to /proc/self/cwd/run.sh, the exec's own
    cwd, runs (it is not another process's /proc entry)."""
    prog = wd.file("run.sh", SCRIPT)
    os.chmod(prog, 0o755)
    os.symlink("/dev/fd/5", os.path.join(wd.path, "lnk"))
    os.symlink("/proc/self/cwd/run.sh", os.path.join(wd.path, "lnk2"))
    for name in ("/dev/fd/5", "./lnk", "./lnk2"):
        r = harness(["/bin/sh", "-c", "exec 5<run.sh; " + name], wd, policy=None)
        check(_ran(r), "%s did not run: %r" % (name, (r.stdout, r.stderr[-400:])))
        r.one(event="execve", args_path=os.path.join(wd.path, name[2:])
              if name.startswith("./") else name, verdict="allow")


PY_THREAD_CWD = r'''
import ctypes, os, sys, threading
a, b = sys.argv[1], sys.argv[2]
os.chdir(a)
libc = ctypes.CDLL(None, use_errno=True)
def t():
    libc.unshare(0x200)  # CLONE_FS: a cwd of this thread's own
    libc.chdir(b.encode())
    print("open", libc.open(b"made", os.O_CREAT | os.O_WRONLY, 0o644), flush=True)
th = threading.Thread(target=t)
th.start()
th.join()
'''


def test_a_calls_record_names_its_threads_cwd(wd):
    """A thread that made a cwd of its own (unshare(CLONE_FS)) and
    opened "made" there: the record's cwd was the process's (a/), its
    path b/made. A call's record names the cwd of the thread that made
    it, whose relative names it resolved."""
    from lib import PYTHON
    a, b = (os.path.join(wd.path, d) for d in ("a", "b"))
    for d in (a, b):
        os.mkdir(d)
    r = harness([PYTHON, "-c", PY_THREAD_CWD, a, b], wd, policy=None)
    check(os.path.exists(os.path.join(b, "made")), "%r" % ((r.stdout, r.stderr[-400:]),))
    recs = [x for x in r.records if x.get("args", {}).get("path") == os.path.join(b, "made")]
    check(recs and all(x.get("cwd") == b for x in recs),
          "the record's cwd is not the thread's: %r" % [(x.get("layer"), x.get("cwd")) for x in recs])


PY_SWAP = r'''
import ctypes, os, sys, threading, time
prog, other = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
def later():
    time.sleep(0.5)
    os.rename(other, prog)  # another file in its place, the question up
threading.Thread(target=later, daemon=True).start()
argv = (ctypes.c_char_p * 5)(prog.encode(), b"push", b"origin", b"main", None)
libc.execv(prog.encode(), argv)  # the shim's execv: it asks first
print("exec errno", ctypes.get_errno(), flush=True)
'''


def test_an_answer_once_is_for_the_file_shown(wd):
    """Through the shim: a person answers "once" for the exec of
    bin/git shown, a thread renames another script over bin/git while
    the question waits, and the kernel layer's sight of the exec (the
    same process, path, argv and cwd) took that answer for its own: the
    other script ran (SWAPPED). A grant "session" or "always" is keyed
    on the file's identity; an answer once now is too (its device,
    inode, size and change time as the question showed it): another
    file in its place is asked again."""
    from test_ask import Session, answer, pending, wait_pending
    from lib import PYTHON
    bindir = os.path.join(wd.path, "bin")
    os.mkdir(bindir)
    git, other = os.path.join(bindir, "git"), os.path.join(bindir, "other")
    for p, word in ((git, "ORIGINAL"), (other, "SWAPPED")):
        with open(p, "w") as f:
            f.write("#!/bin/sh\necho %s\n" % word)
        os.chmod(p, 0o755)
    s = Session(wd, [PYTHON, "-c", PY_SWAP, git, other], timeout=5)
    q = wait_pending(wd, s)
    time.sleep(1.0)  # the other file is in its place by now
    answer(wd, "approve", q["id"])
    end = time.time() + 8
    while time.time() < end and s.p.poll() is None:
        again = [x for x in pending(wd) if x["id"] != q["id"]]
        if again:
            answer(wd, "deny", again[0]["id"])
            break
        time.sleep(0.05)
    s.finish()
    check("SWAPPED" not in s.stdout,
          "the file put in its place ran under the answer: %r" % s.stdout)


PY_TWICE = r'''
import ctypes, os, sys
prog = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
for i in range(2):
    pid = os.fork()
    if pid == 0:
        argv = (ctypes.c_char_p * 5)(prog.encode(), b"push", b"origin", b"main", None)
        libc.execv(prog.encode(), argv)  # the shim's execv
        os._exit(3)
    os.waitpid(pid, 0)
'''


def test_a_session_grant_is_for_the_script_shown(wd):
    """The kernel layer keyed an exec's grant on its final image, a
    script's interpreter: a "session" answer for the script bin/git
    (from a static program) held for another script renamed into its
    place (the other ran, unasked), and one given to the shim's question
    (keyed on the script) did not hold for the kernel layer's sight of
    the same exec (asked again, refused). A grant is keyed on the file
    the path names, in both layers."""
    from test_ask import Session, answer, pending, wait_pending
    from lib import PYTHON
    bindir = os.path.join(wd.path, "bin")
    os.mkdir(bindir)
    git, other = os.path.join(bindir, "git"), os.path.join(bindir, "other")

    def scripts():
        for p, word in ((git, "ORIGINAL"), (other, "SWAPPED")):
            with open(p, "w") as f:
                f.write("#!/bin/sh\necho %s\n" % word)
            os.chmod(p, 0o755)

    scripts()
    s = Session(wd, [STATIC, "twice", git, other], timeout=2)
    answer(wd, "approve", wait_pending(wd, s)["id"], "session")
    s.finish()
    check("SWAPPED" not in s.stdout,
          "a session grant for one script held for another: %r" % s.stdout)
    scripts()
    s = Session(wd, [PYTHON, "-c", PY_TWICE, git], timeout=2)
    answer(wd, "approve", wait_pending(wd, s)["id"], "session")
    time.sleep(0.5)
    check(not pending(wd), "the same script asked again: %r" % pending(wd))
    s.finish()
    check(s.stdout.count("ORIGINAL") == 2,
          "the session grant did not hold for the same script: %r %r" %
          (s.stdout, s.stderr[-300:]))
