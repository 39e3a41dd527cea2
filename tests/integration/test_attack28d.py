"""Attack review 28, part d: one session's agent against another running
session of the same user, in one project, under the embedded default
policy, as root and as an ordinary user.

Another session's work in the repository was the agent's to write. A
session without --worktree in the project P (rule project allows all of
P/.git but hooks and config) wrote into a --worktree session's worktree
(P/.git/harness/worktrees/<id>/, shim and static program alike), its git
admin directory (P/.git/worktrees/<id>/), its branch
(refs/heads/harness/<id>) and checkpoint refs (refs/harness/<id>/), and
removed its files: the other session's checkpoints and result branch
then carried content its agent never wrote, and its record said nothing
of it. Now rule harness:other-session refuses every write, creation,
move and removal there, in enforce and audit mode, whatever the agent's
own session kind; a --worktree session's own worktree and branch stay
its own.

Likewise another running session's own files outside the state
directory (its --audit-log, its --metrics-file, in the shared project):
each session protected only its own; they are registered in
<state>/live/ now and refused to every other session's agent. And the
objects another session made after this one began: rewritten in place,
or removed and linked in anew, they made its result say what its agent
never wrote (refused now whenever an object was made: harness:git-objects,
and harness:other-session for another's, enforced in audit mode); a pack of the agent's naming another session's object is
refused too (part a's rule on objects/pack). Its harness-mcp --http
unix: socket was reached in audit mode; and a .env checked out in its
worktree, beneath the project's .git that the walk for masks skipped,
was read by a static program."""

import json
import os
import subprocess
import time

from lib import EXEC, Started, check, harness
from test_worktree import git, make_repo, wt_run

BUSYBOX = "/bin/busybox"

# The other session's agent: writes a file of its own, then waits.
WAIT = 'echo mine > mine.txt && while [ ! -e "$1" ]; do sleep 0.05; done'

# What the agent tries ($1 the common dir, $2 the other session's id):
# the worktree's files by the shim and by a static program, its admin
# directory, its branch and checkpoints, a removal and a move.
TRY = ('G=$1; W=$G/harness/worktrees/$2; echo evil > $W/a; '
       '%(bb)s sh -c "echo evil > $W/b"; echo evil > $W/new; '
       'echo x > $G/worktrees/$2/x; %(bb)s sh -c "echo x > $G/worktrees/$2/y"; '
       'git rev-parse HEAD > $G/refs/heads/harness/$2.new; '
       '%(bb)s mkdir $G/refs/harness/$2-evil; %(bb)s rm -f $W/mine.txt; '
       'mv $W/d $W/d2; %(bb)s mv $W $G/harness/gone; echo ok > own.txt; true'
       % {"bb": BUSYBOX})

WANT = {".gitignore", "a", "b", "d", "sub/s", "mine.txt"}


def _start_other(wd, repo, other):
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    stop = os.path.join(wd.path, "stop")
    p = subprocess.Popen([EXEC, "--quiet", "--audit-log", os.path.join(wd.state, "other.jsonl"),
                          "--worktree", "--session", other, "--", "sh", "-c", WAIT, "w", stop],
                         cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    mine = os.path.join(repo, ".git", "harness", "worktrees", other, "mine.txt")
    for _ in range(400):
        if os.path.exists(mine) or p.poll() is not None:
            break
        time.sleep(0.025)
    check(os.path.exists(mine), "the other session did not start: %r" %
          (p.stderr.read() if p.poll() is not None else ""))
    return p, stop


def _files(repo, rev):
    out = git(repo, "ls-tree", "-r", "--name-only", rev)
    return set(out.split())


def _attack(wd, mode=None, own=None):
    repo = make_repo(wd)
    common = os.path.join(repo, ".git")
    # ids of their own: the run dir /tmp/harness-<uid> is every test's
    other = "othr-%d-%d" % (os.getpid(), time.monotonic_ns() % 10**6)
    own = own and "%s-%d" % (own, os.getpid())
    p, stop = _start_other(wd, repo, other)
    wt = os.path.join(common, "harness", "worktrees", other)
    extra = ["--worktree", "--session", own] if own else []
    try:
        wd.path, saved = repo, wd.path
        try:
            r = harness(["sh", "-c", TRY, "try", common, other], wd, policy=None, mode=mode,
                        extra=extra)
        finally:
            wd.path = saved
        what = "%s, %s" % (mode or "enforce", own and "--worktree" or "no worktree")
        left = set()
        for root, dirs, files in os.walk(wt):
            dirs[:] = [d for d in dirs if d != ".git"]
            left |= {os.path.relpath(os.path.join(root, f), wt) for f in files}
        left.discard(".git")
        check(left == WANT, "%s: the other worktree was changed: %r" % (what, sorted(left)))
        check(open(os.path.join(wt, "a")).read() == "a0\n", "%s: the other's a was written" % what)
        admin = os.path.join(common, "worktrees", other)
        check(not {"x", "y"} & set(os.listdir(admin)),
              "%s: its admin directory was written: %r" % (what, os.listdir(admin)))
        for bad in ("refs/heads/harness/%s.new" % other, "refs/harness/%s-evil" % other):
            check(not os.path.exists(os.path.join(common, bad)), "%s: %s was made" % (what, bad))
        # A worktree session's policy refuses these places itself (not
        # its write roots): in enforce mode its rule is the record's.
        denied = [x for x in r.records if x.get("rule") == "harness:other-session" or
                  (own and not mode and x.get("verdict") == "deny" and
                   other in json.dumps(x.get("args")))]
        check(all(x.get("verdict") == "deny" for x in denied) and
              {"write", "mkdir", "unlink", "rename"} <= {x.get("op") for x in denied} and
              any(x.get("layer") == "kernel" for x in denied),
              "%s: the refusals' records: %r" % (what, [(x.get("op"), x.get("verdict"), x.get("rule"),
                                                       x.get("layer")) for x in r.records
                                                      if x.get("op")]))
        # The agent's own file is written (a worktree's: in its result).
        check(own or open(os.path.join(repo, "own.txt")).read() == "ok\n",
              "%s: the agent's own file was not written" % what)
    finally:
        open(stop, "w").close()
        p.wait(timeout=60)
    # The other session's result is what its agent wrote, nothing else.
    got = _files(repo, "harness/" + other)
    check(got == WANT, "%s: the other session's result: %r" % (what, sorted(got)))
    check(git(repo, "show", "harness/%s:a" % other) == "a0\n", "%s: its result's a" % what)
    return repo, r, own


def test_another_sessions_worktree_branch_and_checkpoints_are_not_written(wd):
    """A session without --worktree in the project, enforce mode."""
    _attack(wd)


def test_in_audit_mode_too(wd):
    """Audit mode refuses it too: another session's work is not the
    agent's to change any more than its TMPDIR is."""
    _attack(wd, mode="audit")


def test_a_worktree_session_keeps_its_own(wd):
    """A --worktree session: the other's places refused, its own worktree
    and branch still its agent's (a commit there lands)."""
    repo, r, own = _attack(wd, own="mine")
    check("own.txt" in _files(repo, "harness/" + own),
          "the agent's own result lost its file: %r" % _files(repo, "harness/" + own))


# The other session's own files in the shared project: its log and its
# metrics textfile (and the textfile's temporary name).
FILES_TRY = ('for f in "$@"; do echo evil >> "$f"; %(bb)s sh -c "echo evil > $f"; '
             'mv "$f" "$f.x"; %(bb)s rm -f "$f"; ln "$f" "$f.l"; done; '
             'mv logs logs2; echo ok > own.txt; true' % {"bb": BUSYBOX})


def _files_attack(wd, mode):
    proj = os.path.join(wd.path, "proj")
    os.makedirs(os.path.join(proj, "logs"))
    log = os.path.join(proj, "logs", "other.jsonl")
    prom = os.path.join(proj, "other.prom")
    stop = os.path.join(wd.path, "stop")
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    p = subprocess.Popen([EXEC, "--quiet", "--audit-log", log, "--metrics-file", prom, "--",
                          "sh", "-c", 'while [ ! -e "$1" ]; do sleep 0.05; done', "w", stop],
                         cwd=proj, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    try:
        for _ in range(400):
            if os.path.exists(prom) or p.poll() is not None:
                break
            time.sleep(0.025)
        check(os.path.exists(prom), "the other session did not start: %r" %
              (p.stderr.read() if p.poll() is not None else ""))
        before = open(log, "rb").read()
        wd.path, saved = proj, wd.path
        try:
            r = harness(["sh", "-c", FILES_TRY, "try", log, prom, prom + ".tmp"], wd, policy=None,
                        mode=mode)
        finally:
            wd.path = saved
        what = mode or "enforce"
        check(open(log, "rb").read().startswith(before) and b"evil" not in open(log, "rb").read(),
              "%s: the other session's log was written" % what)
        check(b"evil" not in open(prom, "rb").read(), "%s: its metrics file was written" % what)
        check(not os.path.exists(prom + ".tmp") or b"evil" not in open(prom + ".tmp", "rb").read(),
              "%s: its metrics file's temporary name was written" % what)
        left = sorted(os.listdir(proj)) + sorted(os.listdir(os.path.join(proj, "logs")))
        check(not [x for x in left if x.endswith((".x", ".l")) or x == "logs2"],
              "%s: its files were moved or linked: %r" % (what, left))
        check(open(os.path.join(proj, "own.txt")).read() == "ok\n",
              "%s: the agent's own file was not written" % what)
        denied = [x for x in r.records if x.get("rule") == "harness:other-session"]
        check(all(x.get("verdict") == "deny" for x in denied) and
              {"write", "rename", "unlink", "link"} <= {x.get("op") for x in denied} and
              any(x.get("layer") == "kernel" for x in denied),
              "%s: the refusals' records: %r" % (what, [(x.get("op"), x.get("verdict"),
                                                       x.get("rule"), x.get("layer"))
                                                      for x in r.records if x.get("op")]))
    finally:
        open(stop, "w").close()
        p.wait(timeout=60)
    # Its log verifies: nothing of the agent's in it.
    v = subprocess.run([os.path.join(os.path.dirname(EXEC), "harness-audit"), "verify", log],
                       capture_output=True, text=True, env=env)
    check(v.returncode == 0, "the other session's log does not verify: %s" % v.stdout + v.stderr)


def test_another_sessions_log_and_metrics_in_the_project(wd):
    """Its --audit-log and --metrics-file in the shared project (a write
    root): neither written, moved, removed nor linked, enforce mode."""
    _files_attack(wd, None)


def test_another_sessions_log_and_metrics_in_audit_mode(wd):
    """And in audit mode, where the agent writes anything."""
    _files_attack(wd, "audit")


# The agent, started before the other session, waits for its result and
# then rewrites the blob of the other's file: in place, removed and made
# anew, removed and linked or renamed in from a file of its own.
FORGE = r'''
import os, subprocess, sys, time, zlib
stop, rev, bb = sys.argv[1:4]
while not os.path.exists(stop):
    time.sleep(0.05)
oid = subprocess.run(["git", "rev-parse", rev], capture_output=True, text=True).stdout.strip()
p = ".git/objects/%s/%s" % (oid[:2], oid[2:])
evil = zlib.compress(b"blob 5\0evil\n")
os.chmod(p, 0o644)
for how in ("inplace", "anew"):
    try:
        if how == "anew":
            os.unlink(p)
        open(p, "wb").write(evil)
    except OSError as e:
        print(how, e.errno)
open(".git/objects/tmpx", "wb").write(evil)
for how in (os.link, os.rename):
    try:
        how(".git/objects/tmpx", p)
    except OSError as e:
        print(how.__name__, e.errno)
subprocess.run([bb, "sh", "-c", "rm -f %s; cp .git/objects/tmpx %s; echo evil >> %s" % (p, p, p)])
print("done", oid)
'''


def _forged(wd, script, extra, mode):
    """The agent (script, its arguments: a stop file, the other
    session's file's rev, then extra(repo)) waits while a worktree
    session makes its result in a new repository, then forges. What the
    agent's session recorded, the other session's name, and what its
    result's file reads now."""
    repo = make_repo(wd, files={"a": "a0\n"})
    other = "othr-%d-%d" % (os.getpid(), time.monotonic_ns() % 10**6)
    go = os.path.join(wd.path, "go")
    wd.path, saved = repo, wd.path
    try:
        agent = Started(["python3", "-c", script, go, "harness/%s:mine.txt" % other] + extra(repo),
                        wd, policy=None, mode=mode)
        time.sleep(1)
        w = wt_run(wd, repo, ["sh", "-c", "echo mine-%s > mine.txt" % other], other)
        w.expect_status(0)
        open(go, "w").close()
        r = agent.join(timeout=120)
    finally:
        wd.path = saved
    check(r is not None, "the agent did not end")
    return r, other, git(repo, "show", "harness/%s:mine.txt" % other, check_rc=False)


def test_another_sessions_objects_are_not_rewritten(wd):
    _objects(wd, None)


def test_another_sessions_objects_are_not_rewritten_in_audit_mode(wd):
    """And in audit mode (harness:other-session: enforced there too)."""
    _objects(wd, "audit")


def _objects(wd, mode):
    """Objects made after the agent's session began (the other session's
    checkpoints and result, here) were the agent's to rewrite: git does
    not check a loose object against its name, and `git show` of the
    other session's result printed the agent's content. No object is
    written in place, made at its name, moved onto, or removed unless the
    session made it (harness:git-objects)."""
    r, other, got = _forged(wd, FORGE, lambda repo: [BUSYBOX], mode)
    check(got == "mine-%s\n" % other, "the other session's result says %r: %r %r" % (got, r.stdout, [
              (x.get("op"), x.get("verdict"), x.get("rule"), x.get("layer"), x.get("args"))
              for x in r.records if x.get("op") not in ("read", "exec")]))
    denied = [x for x in r.records if x.get("rule") == "harness:other-session"]
    check({"write", "unlink", "rename"} <= {x.get("op") for x in denied} and
          any(x.get("layer") == "kernel" for x in denied),
          "the refusals' records: %r" % [(x.get("op"), x.get("verdict"), x.get("rule"), x.get("layer"))
                                         for x in r.records if x.get("op") not in ("read", "exec")])


# A pack of the agent's own making: "evil\n" packed by git in a scratch
# repository, its index's one name replaced by the other session's
# object's, renamed into the project's objects/pack (new names, as git
# writes packs). Git looks in packs before loose objects.
FORGE_PACK = r'''
import hashlib, os, struct, subprocess, sys, time
stop, rev, scratch = sys.argv[1:4]
while not os.path.exists(stop):
    time.sleep(0.05)
oid = bytes.fromhex(subprocess.run(["git", "rev-parse", rev], capture_output=True,
                                   text=True).stdout.strip())
subprocess.run(["git", "init", "-q", scratch], check=True)
evil = subprocess.run(["git", "-C", scratch, "hash-object", "-w", "--stdin"], input=b"evil\n",
                      capture_output=True, check=True).stdout.strip()
base = subprocess.run(["git", "-C", scratch, "pack-objects", "-q", scratch + "/p"],
                      input=evil + b"\n", capture_output=True, check=True).stdout.decode().strip()
pack = open("%s/p-%s.pack" % (scratch, base), "rb").read()
idx = bytearray(open("%s/p-%s.idx" % (scratch, base), "rb").read())
for b in range(256):
    struct.pack_into(">I", idx, 8 + 4 * b, 1 if b >= oid[0] else 0)
idx[1032:1052] = oid
idx[-20:] = hashlib.sha1(bytes(idx[:-20])).digest()
for ext, data in (("pack", pack), ("idx", bytes(idx))):
    open(".git/objects/pack/tmp_" + ext, "wb").write(data)
    os.rename(".git/objects/pack/tmp_" + ext, ".git/objects/pack/pack-%s.%s" % (base, ext))
print("forged", base)
'''


def test_a_pack_of_the_agents_does_not_stand_for_another_sessions_object(wd):
    """A pack the agent writes may name any object with any content
    (git checks neither when it reads) and git reads a packed object
    before a loose one: the other session's result would show the
    agent's text. Held by the twenty-eighth review's part a (nothing of
    the session's repository's objects/pack is the agent's to write,
    harness:git-objects); here against another session's object."""
    r, other, got = _forged(wd, FORGE_PACK, lambda repo: [os.path.join(repo, "scratch")], None)
    check(got == "mine-%s\n" % other, "the other session's result says %r: %r %r" %
          (got, r.stdout, r.stderr[-300:]))
    check([x for x in r.records if x.get("rule") == "harness:git-objects" and
           x.get("verdict") == "deny" and "/objects/pack/" in str(x.get("args"))],
          "no refusal of the pack on record")


def test_another_sessions_mcp_socket_is_not_reached(wd):
    """harness-mcp --http unix:PATH of another session, in the shared
    project: its listener is protected from its own session's processes
    only. A connect to it, through the shim (python) and from a static
    program, is refused now (harness:other-session), in audit mode too."""
    from lib import HELPERS
    mcp = os.path.join(os.path.dirname(EXEC), "harness-mcp")
    sock = os.path.join(wd.path, "mcp.sock")
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    p = subprocess.Popen([mcp, "--quiet", "--audit-log", os.path.join(wd.state, "mcp.jsonl"),
                          "--http", "unix:" + sock], cwd=wd.path, env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        check("unix:%s" % sock in line, "harness-mcp did not listen: %r" % line)
        try_it = ("import socket, sys\ns = socket.socket(socket.AF_UNIX)\n"
                  "try:\n    s.connect(sys.argv[1]); print('connected')\n"
                  "except OSError as e:\n    print('refused', e.errno)\n")
        for mode in (None, "audit"):
            r = harness(["sh", "-c", 'python3 -c "$1" "$2"; "$3" http-unix "$2"; true', "t",
                         try_it, sock, os.path.join(HELPERS, "static_outside")], wd, policy=None,
                        mode=mode)
            what = mode or "enforce"
            check("connected" not in r.stdout and "answer 0" not in r.stdout,
                  "%s: the other session's MCP socket was reached: %r" % (what, r.stdout))
            denied = [x for x in r.records if x.get("op") == "connect" and
                      sock in str(x.get("args"))]
            check(len(denied) >= 2 and all(x.get("verdict") == "deny" and
                                           x.get("rule") == "harness:other-session" for x in denied),
                  "%s: the connects' records: %r" % (what, [(x.get("verdict"), x.get("rule"),
                                                             x.get("layer")) for x in denied]))
    finally:
        p.terminate()
        p.wait(timeout=60)


def test_another_sessions_worktree_secret_is_not_read(wd):
    """A tracked .env is checked out in a --worktree session's worktree
    beneath the project's .git, which the walk for masks skipped: a
    static program of a session in the project read it there (the
    shim refused it). Its worktrees are walked and watched now, the
    directory made at start so that one made later is seen: here the
    other session starts after the agent's."""
    repo = make_repo(wd, files={".env": "SECRET=hunter2\n", "a": "a0\n"})
    other = "othr-%d-%d" % (os.getpid(), time.monotonic_ns() % 10**6)
    go = os.path.join(wd.path, "go")
    env = os.path.join(repo, ".git", "harness", "worktrees", other, ".env")
    wd.path, saved = repo, wd.path
    try:
        agent = Started(["sh", "-c", 'while [ ! -e "$1" ]; do sleep 0.05; done; "$2" cat "$3"; '
                         'cat "$3"; true', "t", go, BUSYBOX, env], wd, policy=None)
        time.sleep(1)
        b = Started(["sh", "-c", 'while [ ! -e "$1" ]; do sleep 0.05; done', "w", go + ".b"],
                    wd, policy=None, extra=["--worktree", "--session", other])
        for _ in range(400):
            if os.path.exists(env):
                break
            time.sleep(0.025)
        check(os.path.exists(env), "the other session made no worktree")
        open(go, "w").close()
        r = agent.join(timeout=120)
        open(go + ".b", "w").close()
        b.join(timeout=120)
    finally:
        wd.path = saved
    check(r is not None and "hunter2" not in r.stdout,
          "the other session's worktree's .env was read: %r" % (r and r.stdout))
    reads = [x for x in r.records if x.get("op") == "read" and env in str(x.get("args"))]
    check(len(reads) >= 2 and all(x.get("verdict") == "deny" for x in reads) and
          any(x.get("layer") == "mask" for x in reads),
          "the reads' records: %r" % [(x.get("verdict"), x.get("rule"), x.get("layer"))
                                      for x in reads])
