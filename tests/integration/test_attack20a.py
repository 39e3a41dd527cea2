"""The twentieth attack review (a): the fixes of the hours before it,
attacked from outside under the default policy in enforce mode: the
check that reports new files a forged untracked cache in .git/index
hides from the user's git status, harness:shared-file, the bare
repositories of caches and harness-audit export's verification."""

import os
import shutil
import subprocess
import threading

from gitrepo import GIT_ENV, UNTR_TOOLS, hidden, project, status
from lib import AUDIT_TOOL, PYTHON, check, harness
from test_attack19b import _git, _users_next_fetch
from test_default_policy import fake_home

# Has git make the index's untracked cache, makes 64 new files in a/ and
# tests/conftest.py, then writes the cache's stat data of tests/ as the
# directory's now (git trusts the cached list: conftest.py hidden) and
# that of a/ as its now but for its ctime (git reads a/ again and shows
# the 64 files, which the check took for hidden).
FORGE_DECOYS = UNTR_TOOLS + r'''
subprocess.run(["git", "-c", "core.untrackedCache=true", "status", "--porcelain"], check=True)
old = {d: stat36(d) for d in ("a", "tests")}
time.sleep(1.1)
if sys.argv[2] == "decoys":
    for i in range(64):
        open("a/d%02d.txt" % i, "w").write("decoy\n")
    open("tests/conftest.py", "w").write("import os\n")
elif sys.argv[2] == "ignore-link":
    open(".git/ign", "w").write("*\n")
    os.symlink("../.git/ign", "tests/x")
    os.rename("tests/x", "tests/.gitignore")
    open("tests/conftest.py", "w").write("import os\n")
else:
    deep = os.path.join("tests", *["d%d" % i for i in range(int(sys.argv[2]))])
    os.makedirs(deep)
    open(os.path.join(deep, "conftest.py"), "w").write("import os\n")
time.sleep(1.1)  # a directory changed in the index's second is "racy": git reads it
data = bytearray(open(".git/index", "rb").read())
off, size = untr(data)
for d, ctime_off in (("a", int(sys.argv[1])), ("tests", 0)):
    at = bytes(data[off:off + size]).rindex(old[d]) + off
    data[at:at + 36] = stat36(d, ctime_off)
write_index(data)
print("forged")
'''


def test_decoys_git_shows_do_not_drown_the_hidden_file(wd):
    """The check trusted a cached directory whose mtime and size matched
    (git compares its ctime, inode and owner too) and kept 64 reports:
    64 new files of a/, whose cached stat the agent bent in its ctime,
    were reported as hidden (git status shows them: a false alarm to
    the user's eye), and tests/conftest.py, which the cache does hide,
    was left out of the record."""
    env = project(wd, {"a/keep": "k\n", "tests/a.py": "a\n", "main.py": "x\n"})
    r = harness([PYTHON, "-c", FORGE_DECOYS, "5", "decoys"], wd, policy=None,
                env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0 and "forged" in r.stdout, r.stderr[-800:])
    shown = status(wd, env).splitlines()
    check(len(shown) == 64 and "?? tests/conftest.py" not in shown,
          "the user's git status: %r" % shown)
    hidden(r, [("tests/conftest.py", "untracked-cache")])


def test_a_hidden_file_past_the_record_s_bound_is_said(wd):
    """65 new files the cache does hide: 64 are named, and the 65th was
    dropped without a word (unchecked 0). It is now counted unchecked
    (and harness-exec says so, past the changes listed, or too deep)."""
    env = project(wd, {"a/keep": "k\n", "tests/a.py": "a\n", "main.py": "x\n"})
    r = harness([PYTHON, "-c", FORGE_DECOYS, "0", "decoys"], wd, policy=None,
                env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0 and "forged" in r.stdout, r.stderr[-800:])
    check(status(wd, env) == "", "the user's git status: %r" % status(wd, env))
    rec = r.one(event="hidden_changes")
    check(len(rec["changes"]) == 64 and rec["unchecked"] == 1,
          "recorded: %d changes, unchecked %r" % (len(rec["changes"]), rec["unchecked"]))


def test_a_new_file_deeper_than_the_walk_is_said(wd):
    """A new directory tests/d0 the trusted cache of tests/ leaves out
    is one git never looks into, and the check walked it 32 levels deep:
    a conftest.py (which pytest collects at any depth) 40 levels down
    was neither reported nor said unchecked. The walk's bound now
    counts unchecked."""
    env = project(wd, {"a/keep": "k\n", "tests/a.py": "a\n", "main.py": "x\n"})
    r = harness([PYTHON, "-c", FORGE_DECOYS, "0", "40"], wd, policy=None,
                env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0 and "forged" in r.stdout, r.stderr[-800:])
    check(status(wd, env) == "", "the user's git status: %r" % status(wd, env))
    recs = r.events(event="hidden_changes")
    check(recs and (recs[0]["changes"] or recs[0]["unchecked"]),
          "neither recorded nor said unchecked: %s" % r.dump()[-1500:])


# As FORGE_UNTRACKED of test_hidden_changes.py (tests/conftest.py made,
# the cache's stat of tests/ written as the directory's now), and the
# root block's count of untracked names written plus 2^N: git keeps a
# count in 32 bits, and reads the same cache.
FORGE_COUNT = UNTR_TOOLS + r'''
def enc(v):
    out = [v & 127]
    v >>= 7
    while v:
        v -= 1
        out.insert(0, 128 | (v & 127))
        v >>= 7
    return bytes(out)
def dec(b, i):
    c = b[i]; i += 1; v = c & 127
    while c & 128:
        v += 1; c = b[i]; i += 1; v = (v << 7) + (c & 127)
    return v, i
old, data, off, size = cache_then(lambda: open("tests/conftest.py", "w").write("import os\n"))
ext = bytearray(data[off:off + size])
at = bytes(ext).rindex(old)
ext[at:at + 36] = stat36("tests")
n, i = dec(ext, 0)
i += n + 2 * 36 + 4 + 2 * 20
i = ext.index(b"\0", i) + 1
ndirs, i = dec(ext, i)
nn, j = dec(ext, i)   # root's nnames
ext[i:j] = enc(nn + (1 << int(sys.argv[1])))
data[off - 4:off + size] = struct.pack(">I", len(ext)) + ext
write_index(data)
print("forged")
'''


def test_a_count_git_cuts_to_32_bits_hides_nothing(wd):
    """git reads a block's counts of names and of subdirectories into
    32 bits (read_one_dir's unsigned int): a count of 2^32 is 0 to it.
    The check read the 64-bit value, took the cache for malformed and
    looked at nothing: tests/conftest.py hidden, nothing recorded."""
    env = project(wd, {"tests/a.py": "a\n", "main.py": "x\n"})
    r = harness([PYTHON, "-c", FORGE_COUNT, "32"], wd, policy=None,
                env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0 and "forged" in r.stdout, r.stderr[-800:])
    check(status(wd, env) == "", "the user's git status: %r" % status(wd, env))
    hidden(r, [("tests/conftest.py", "untracked-cache")])


def test_a_config_where_a_moved_cache_makes_its_repositories_runs_nothing(wd):
    """A config put where a toolchain will make a bare repository (git
    init --bare keeps it, core.hooksPath and all) was judged as a .git's
    only at the default places: ~/go/pkg/mod/cache/vcs, ~/.cargo/git/db.
    With GOMODCACHE=~/.cache/gomod, or CARGO_HOME=~/.cache/cargo (XDG
    layouts), the agent's config there named its own hooks, and the
    user's next go get or cargo fetch ran them. Any .../cache/vcs/HASH,
    .../git/db/NAME or .../git-v0/db/HASH is such a place now."""
    home = fake_home(wd)
    env = dict(os.environ, HOME=home, **GIT_ENV)
    env.pop("LD_PRELOAD", None)
    origin = os.path.join(home, "origin")
    _git(env, "init", "-q", origin)
    _git(env, "-C", origin, "commit", "-q", "--allow-empty", "-m", "1")
    ran = os.path.join(home, "ran")
    places = [os.path.join(home, ".cache", "gomod", "cache", "vcs", "0a1b2c"),
              os.path.join(home, ".cache", "cargo", "git", "db", "dep-0a1b2c")]
    h = os.path.join(home, ".cache", "h")
    script = ("mkdir -p %(h)s && printf '#!/bin/sh\\necho \"$PWD\" >> %(ran)s\\n' > "
              "%(h)s/reference-transaction && chmod +x %(h)s/reference-transaction; "
              "for d in %(places)s; do mkdir -p $d && "
              "printf '[core]\\n\\thooksPath = %(h)s\\n' > $d/config; done; true") % dict(
                  h=h, ran=ran, places=" ".join(places))
    r = harness(["sh", "-c", script], wd, policy=None, env=dict(GIT_ENV, HOME=home))
    for d in places:
        _users_next_fetch(env, origin, d)
    got = open(ran).read() if os.path.exists(ran) else ""
    check(not got, "the user's next fetch ran the agent's hook in: %r; %s" % (got, r.dump()[-1500:]))


def test_a_log_swapped_after_its_verification_is_not_exported(wd):
    """harness-audit export verified the log by its name, then read it
    by its name again: the next session's agent, whose project holds the
    log, swapped a rewritten copy (evidence gone, chain computed again)
    in after the verification, and that copy went out as verified. The
    log is now opened once, verified and read from that one file, and
    not exported if it changed in between."""
    from test_attack11 import FORGE
    from test_otlp import log_in_the_project
    log, e = log_in_the_project(wd)
    good, bad = log + ".good", log + ".bad"
    shutil.copy(log, good)
    shutil.copy(log, bad)
    subprocess.run([PYTHON, "-c", FORGE, bad], check=True, capture_output=True)
    out = os.path.join(wd.state, "t.pb")

    def export():
        if os.path.exists(out):
            os.unlink(out)
        x = subprocess.run([AUDIT_TOOL, "export", "--otlp", out, log],
                           capture_output=True, text=True, timeout=60, env=e)
        return x.returncode, open(out, "rb").read() if os.path.exists(out) else None

    code, want = export()
    check(code == 0 and want, "the log as written was not exported")
    stop = threading.Event()

    def swap():
        n = 0
        while not stop.is_set():
            src = (good, bad)[n % 2]
            shutil.copy(src, log + ".tmp")
            os.rename(log + ".tmp", log)
            n += 1

    t = threading.Thread(target=swap)
    t.start()
    forged = 0
    try:
        for _ in range(150):
            code, got = export()
            forged += code == 0 and got is not None and got != want
    finally:
        stop.set()
        t.join()
    check(not forged, "%d exports of the swapped-in copy, as verified" % forged)


def test_a_gitignore_that_is_a_symlink_hides_nothing(wd):
    """git does not follow a .gitignore that is a symbolic link (since
    2.32: it says it cannot read it and ignores nothing by it); libgit2
    does. The agent linked tests/.gitignore to a file of "*" of its own
    (.git/ign; a link out of the project is asked) and made
    tests/conftest.py, which a forged cache hides from git status: the
    check asked libgit2, took both for ignored, and recorded nothing."""
    env = project(wd, {"a/keep": "k\n", "tests/a.py": "a\n", "main.py": "x\n"})
    r = harness([PYTHON, "-c", FORGE_DECOYS, "0", "ignore-link"], wd, policy=None,
                env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0 and "forged" in r.stdout, r.stderr[-800:])
    check(status(wd, env) == "", "the user's git status: %r" % status(wd, env))
    plain = subprocess.run(["git", "-c", "core.untrackedCache=false", "status", "--short"],
                           cwd=wd.path, capture_output=True, text=True, env=env).stdout
    check("?? tests/" in plain, "without the cache: %r" % plain)
    recs = r.events(event="hidden_changes")
    got = sorted(c["path"] for c in recs[0]["changes"]) if recs else []
    check("tests/conftest.py" in got, "recorded: %r" % got)


# As FORGE_UNTRACKED (the cache's stat of tests/ as it is, once
# tests/conftest.py is made), an UNTR extension git drops (4 bytes of
# 0xff) put before the extensions, and an EOIE extension (their offset,
# behind it, and a hash of their headers) at the end.
FORGE_EOIE = UNTR_TOOLS + r'''
old, data, off, size = cache_then(lambda: open("tests/conftest.py", "w").write("import os\n"))
at = bytes(data[off:off + size]).rindex(old) + off
data[at:at + 36] = stat36("tests")
E = entries_end(data)
exts = bytes(data[E:-20])
junk = b"UNTR" + struct.pack(">I", 4) + b"\xff" * 4
h = hashlib.sha1()
p = 0
while p < len(exts):
    h.update(exts[p:p + 8]); p += 8 + struct.unpack(">I", exts[p + 4:p + 8])[0]
eoie = b"EOIE" + struct.pack(">I", 24) + struct.pack(">I", E + len(junk)) + h.digest()
data = bytearray(bytes(data[:E]) + junk + exts + eoie + b"\0" * 20)
write_index(data)
print("forged")
'''


def test_an_untracked_cache_git_takes_second_is_read(wd):
    """git takes the last UNTR extension of an index that parses (a
    second read replaces the first's), and reads the extensions from
    the offset an EOIE extension gives when it loads them in a thread
    (index.threads, or 20000 entries on two CPUs); the check took the
    first UNTR from the entries' end: one git drops, put before the
    forged one, made it look at nothing, and git trusted the forged
    cache and hid tests/conftest.py. Every UNTR either way is read."""
    env = project(wd, {"tests/a.py": "a\n", "main.py": "x\n"})
    r = harness([PYTHON, "-c", FORGE_EOIE], wd, policy=None,
                env=dict(GIT_ENV, HOME=wd.state))
    check(r.status == 0 and "forged" in r.stdout, r.stderr[-800:])
    for threads in ("1", "2"):
        got = subprocess.run(["git", "-c", "index.threads=" + threads, "status", "--short"],
                             cwd=wd.path, capture_output=True, text=True, env=env)
        check(got.stdout == "" and not got.stderr, "the user's git status: %r" % (got,))
    hidden(r, [("tests/conftest.py", "untracked-cache")])
