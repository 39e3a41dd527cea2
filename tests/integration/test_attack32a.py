"""Attack review 32, part a: the thirty-first review's fixes attacked
(the stores kept for the end's sweep by a loose object's shape, the
project files a tool the user runs later reads), under the embedded
default policy, as root and as an ordinary user.

A store was kept by its name: a directory made again under a name
already kept (the first moved away) was never swept, its fd the first
one's. Lefthook reads eight more names than the two the default asked
about (its -local configs, which git ignores, among them)."""

import os

from lib import check, harness
from test_attack30a import EMPTY, HELLO, PLANT, _forged_records, _user_adds, swap_and_checkout


def test_a_store_made_again_under_a_kept_name_is_swept(wd):
    """The agent planted in store (kept: an O_PATH fd of it), moved it
    to store-old, made store again and planted the empty blob's id in
    it (the name was kept already: no fd of the new one), named store
    in the alternates of a repository it made, and moved that in place
    of the user's nested sub: the user's checkout of an empty file gave
    the planted code."""
    from test_attack29a import _nested
    from lib import PYTHON
    sub, _ = _nested(wd)
    real = os.path.realpath(wd.path)
    store = os.path.join(real, "store")
    script = ("%s -c '%s' store %s && mv store store-old && %s -c '%s' store %s"
              " && git init -q f2 && echo %s > f2/.git/objects/info/alternates"
              " && mv sub sub-old && mv f2 sub && echo SWAPPED"
              % (PYTHON, PLANT, HELLO, PYTHON, PLANT, EMPTY, store))
    r = swap_and_checkout(wd, sub, script)
    recs = _forged_records(r)
    check((store, 1) in recs and (store + "-old", 1) in recs,
          "forged_objects records: %r" % recs)


RUNS_LATER = ["lefthook-local.yml", ".config/lefthook.yaml", "web/.lefthook-local.json",
              "lefthook.toml", ".lefthook/pre-commit/lint.sh", ".lefthook-local/pre-push/x.sh",
              ".huskyrc.json", "husky.config.js", ".lintstagedrc", "lint-staged.config.mjs",
              ".yarn/releases/yarn-4.1.0.cjs", ".yarn/plugins/plugin-x.cjs", ".gitmodules"]


def test_what_the_users_next_commit_or_yarn_runs_is_asked(wd):
    """The default asked about lefthook.yml and .lefthook.yml only:
    lefthook reads eight more names, and merges a -local config (which
    git ignores: a review of the diff shows nothing) and the scripts of
    .lefthook/ and .lefthook-local/ at the user's next commit; husky 4
    runs what .huskyrc says, a hook's lint-staged what its config says;
    the user's next yarn runs the release and plugins .yarnrc.yml names
    in .yarn (as the Gradle wrapper's jar, which was asked); and the
    user's next submodule update clones from .gitmodules' url (as
    .lfsconfig's). Each written by a static busybox, asked (no
    terminal: refused) and recorded as project-autorun."""
    from test_default_policy import fake_home
    from test_sessions_apart import BUSYBOX
    home = fake_home(wd)
    script = "; ".join("mkdir -p $(dirname %s); echo 'x: [run]' > %s" % (p, p) for p in RUNS_LATER)
    r = harness([BUSYBOX, "sh", "-c", script + "; echo ok > plain.txt"], wd, policy=None,
                env={"HOME": home})
    check(os.path.exists(os.path.join(wd.path, "plain.txt")), "stderr %r" % r.stderr)
    real = os.path.realpath(wd.path)
    for rel in RUNS_LATER:
        path = os.path.join(real, rel)
        check(not os.path.exists(path), "%s written" % rel)
        recs = [x for x in r.records if path in (x.get("args", {}).get("path"),
                                                 x.get("args", {}).get("path2"))]
        check(recs and all(x["verdict"] == "ask" and x["rule"] == "project-autorun" for x in recs),
              "%s: records %r" % (rel, recs))


EMPTY256 = "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813"

# The plant, its header after 25 KiB of empty deflate blocks: git reads
# it; a reader that wants the header in its first read does not.
SLOW = r"""
import os, sys, zlib
objects, oid = sys.argv[1:3]
raw = b"blob 20\0import os  # PLANTED\n"
z = zlib.compressobj(9, zlib.DEFLATED, -15)
data = b"\x78\x9c" + b"\x00\x00\x00\xff\xff" * 5000
data += z.compress(raw) + z.flush() + zlib.adler32(raw).to_bytes(4, "big")
d = os.path.join(objects, oid[:2])
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, oid[2:]), "wb") as f:
    f.write(data)
"""


def test_an_object_planted_in_a_sha256_repository_is_swept(wd):
    """A loose object of a SHA-256 repository (xx/<62 hex>) kept its
    store for the sweep, which read SHA-1 names only: the agent planted
    code under the ids of the empty blob and of "hello\\n" (its header
    after 25 KiB of empty deflate blocks) in the user's nested sub (git
    init --object-format=sha256), and the user's checkout of those
    files, added and committed after the session, gave the planted
    code. The object of the agent's own git add stays."""
    import hashlib
    from test_worktree import git
    from lib import PYTHON
    sub = os.path.join(wd.path, "sub")
    os.makedirs(sub)
    git(sub, "init", "-q", "--object-format=sha256")
    wd.file("sub/s", "s\n")
    git(sub, "add", "s")
    git(sub, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "s")
    objects = os.path.join(os.path.realpath(sub), ".git", "objects")
    hello = hashlib.sha256(b"blob 6\0hello\n").hexdigest()
    mine = hashlib.sha256(b"blob 5\0mine\n").hexdigest()
    script = ("%s -c '%s' %s %s && %s -c '%s' %s %s && echo mine > sub/m && git -C sub add m"
              " && echo PLANTED" % (PYTHON, PLANT, objects, EMPTY256, PYTHON, SLOW, objects, hello))
    r = harness(["sh", "-c", script], wd, policy=None)
    check("PLANTED" in r.stdout, "the agent did not plant: %s %s" % (r.stdout, r.stderr[-1500:]))
    check(os.path.exists(os.path.join(objects, mine[:2], mine[2:])), "the agent's own object went")
    got = _user_adds(sub)
    check(got == {"empty.py": "", "hello.txt": "hello\n"},
          "the user's files, checked out after the commit: %r" % got)
    check(_forged_records(r) == [(objects, 2)], "forged_objects records: %r" % _forged_records(r))


FORKED = r"""
import os, sys, time
bad = sys.argv[1]


def flood(seconds, name):
    end = time.time() + seconds
    while time.time() < end:
        try:
            os.open(name, os.O_WRONLY | os.O_CREAT, 0o600)
        except OSError:
            pass


flood(0.3, bad)  # the burst spent
pid = os.fork()
if pid == 0:
    for i in range(40):
        try:
            os.open(bad + "-child", os.O_WRONLY | os.O_CREAT, 0o600)
        except OSError:
            pass
    os._exit(0)
flood(0.7, bad)
os.waitpid(pid, 0)
print("child", pid)
"""


def test_a_child_whose_every_record_was_coalesced_is_in_the_tree(wd):
    """Past the log's rate, a child forked by the agent made 40 refused
    writes while its parent flooded: every record of the child (its
    shim's process_start too) was coalesced into audit_overflow groups,
    and harness-audit tree (and export, which reads the same tree)
    counted a group only in a process that had a record of its own:
    the child and its 40 refusals were nowhere in it. Now the child is
    made from its groups (pid, ppid, exe) under its parent."""
    import json
    import subprocess
    from lib import AUDIT_TOOL, PYTHON
    from test_attack29d import _low_rate_default
    policy = _low_rate_default(wd)
    with open(policy) as f:
        text = f.read()
    check("  rate: 50\n" in text, "no rate to lower")
    text = text.replace("  rate: 50\n", "  rate: 1\n", 1)
    with open(policy, "w") as f:
        f.write(text)
    bad = os.path.join(wd.state, "outside")
    r = harness([PYTHON, "-c", FORKED, bad], wd, policy=policy, timeout=180)
    check("child" in r.stdout, "the agent did not run: %s %s" % (r.stdout, r.stderr[-800:]))
    child = int(r.stdout.split()[-1])
    logged = sum(1 for x in r.records if x.get("pid") == child and x.get("verdict") == "deny")
    logged += sum(g.get("count", 0) for x in r.records if x.get("event") == "audit_overflow"
                  for g in x.get("groups", []) if g.get("pid") == child and g.get("verdict") == "deny")
    check(logged == 40, "the log's refusals of the child: %d" % logged)
    t = subprocess.run([AUDIT_TOOL, "tree", r.log, "--json"], capture_output=True, text=True,
                       env=dict(os.environ, XDG_STATE_HOME=wd.state))
    procs = {p["pid"]: p for p in map(json.loads, t.stdout.splitlines())}
    check(child in procs, "the child is not in the tree: %r" % sorted(procs))
    check(procs[child]["refused"] == 40 and procs[child]["ppid"] in procs,
          "the child in the tree: %r" % procs[child])


AGAIN = r"""
import os, shutil, sys
d, oid = sys.argv[1:3]
for i in range(1100):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, oid[:2]))
    with open(os.path.join(d, oid[:2], oid[2:]), "w") as f:
        f.write("x")
print("made", i + 1)
"""


def test_a_store_made_again_at_one_name_for_each_test_takes_one_place(wd):
    """A test suite that makes its repository again at one name for each
    test (rm -rf, git init, a commit) is kept once, not once a test: a
    removed directory's place goes to the new one, so the 1,100th
    test's object is written (past 1,024 places it would be refused)."""
    from lib import PYTHON
    r = harness([PYTHON, "-c", AGAIN, os.path.join(wd.path, "fixture", "objects"), EMPTY], wd,
                policy=None, timeout=300)
    check("made 1100" in r.stdout, "the suite stopped: %s %s" % (r.stdout, r.stderr[-800:]))
    refused = [x for x in r.records if x.get("rule") == "harness:git-objects"]
    check(not refused, "refused: %r" % refused[:2])


def test_what_a_nested_repositorys_configuration_runs_is_not_written(wd):
    """Only the project repository's configuration was read at start
    for the places it runs code from: the user's nested sub (made before
    the session, core.hooksPath .githooks as a team's hooks are kept,
    an include of ../team.gitconfig, beside .git) had its hook and its
    include
    written by a static busybox, and the user's next commit in sub ran
    the agent's hook. Now the repositories two levels beneath the work
    tree are read too: refused, harness:git-config."""
    from test_attack29a import _nested
    from test_sessions_apart import BUSYBOX
    from test_worktree import git
    sub, _ = _nested(wd)
    os.makedirs(os.path.join(sub, ".githooks"))
    git(sub, "config", "core.hooksPath", ".githooks")
    git(sub, "config", "include.path", "../team.gitconfig")
    script = ("printf '#!/bin/sh\\necho PWNED\\n' > sub/.githooks/pre-commit;"
              " printf '[core]\\n\\tfsmonitor = /tmp/x\\n' > sub/team.gitconfig; echo ok > plain.txt")
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None)
    check(os.path.exists(os.path.join(wd.path, "plain.txt")), "stderr %r" % r.stderr)
    real = os.path.realpath(wd.path)
    for rel in ("sub/.githooks/pre-commit", "sub/team.gitconfig"):
        path = os.path.join(real, rel)
        check(not os.path.exists(path), "%s written" % rel)
        recs = [x for x in r.records if x.get("args", {}).get("path") == path]
        check(recs and all(x["verdict"] == "deny" and x["rule"] == "harness:git-config"
                           for x in recs), "%s: records %r" % (rel, recs))
