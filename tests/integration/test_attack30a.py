"""Attack review 30, part a: the twenty-ninth review's fixes attacked
(the masks' records read from the agent's mount table, ...), under the
embedded default policy, as root and as an ordinary user.

A refused read of a masked file is recorded under where the mask is
bound now, read from the agent's mountinfo (supervisor/kernel/maskfs.c,
mask_now). A line of that table longer than PATH_MAX was passed over,
and the record fell back to the path known at the start."""

import os

from lib import HELPERS, check, harness


def test_a_masked_secret_moved_under_a_long_name_is_recorded_where_it_is(wd):
    """The agent moves the directory above a masked .env under a path
    whose mountinfo line is longer than 4,096 bytes (names of spaces,
    each written \\040 there), makes the old name again, and reads the
    moved file: the refusal named the old path, a directory of the
    agent's that held no secret, not the file that was read."""
    secret = "LONG-MOVED-SECRET-30a"
    wd.file(os.path.join("sub", ".env"), secret + "\n")
    deep = "/".join([" " * 250] * 5)
    os.makedirs(os.path.join(wd.path, deep))
    script = "\n".join([
        "busybox mv sub '%s/sub' && echo MOVED" % deep,
        "busybox mkdir sub",
        "busybox cat '%s/sub/.env'" % deep,
        "true",
    ])
    r = harness(["busybox", "sh", "-c", script], wd, policy=None)
    r.expect_status(0)
    check("MOVED" in r.stdout, "move: %s\n%s" % (r.stdout, r.stderr[-2000:]))
    check(secret not in r.stdout, "the secret was read: %s" % r.stdout)
    real = os.path.realpath(wd.path)
    masked = [x for x in r.records if x.get("layer") == "mask"]
    paths = [x.get("args", {}).get("path") for x in masked]
    want = os.path.join(real, deep, "sub", ".env")
    check(paths == [want], "the masks' records name %r, the read was of %r"
          % ([p if p is None or len(p) < 200 else p[:60] + "..." + p[-60:] for p in paths],
             want[:60] + "..." + want[-60:]))
    check(all(x.get("verdict") == "deny" for x in masked), "verdicts: %r" % masked)


def _claim_then_exec(wd, mode):
    """P, a static program, sends the shim's request for a write of
    good-0 (allowed), then execs busybox (its own thread, or a second
    thread of its) which writes good-0 at once, within the 2 s a claim
    waits for the kernel layer's sight of its call."""
    claimer = os.path.join(HELPERS, "static_claim")
    target = os.path.join(os.path.realpath(wd.path), "good-0")
    script = "%s %s %s /usr/bin/busybox sh -c 'echo q > %s' > claim.out; true" % (
        claimer, mode, target, target)
    r = harness(["sh", "-c", script], wd, policy=None)
    r.expect_status(0)
    with open(os.path.join(wd.path, "claim.out")) as f:
        check(f.read().strip() == "verdict 0", "P's claim was not allowed")
    with open(target) as f:
        check(f.read() == "q\n", "busybox wrote nothing")
    writes = [x for x in r.records if x.get("event") != "kernel_unconfirmed" and
              x.get("args", {}).get("path") == target]
    claim = [x for x in writes if x.get("exe") == os.path.realpath(claimer)]
    check(len(claim) == 1, "P's claim's record: %r" % writes)
    ran = [x for x in writes if x.get("exe") == os.path.realpath("/usr/bin/busybox")]
    check(len(ran) == 1 and ran[0]["layer"] == "kernel" and ran[0]["verdict"] == "allow"
          and ran[0].get("pid") == claim[0].get("pid"),
          "busybox's write (after P's exec) has no record of its own, the "
          "claim of P's old image stood for it: %r" % writes)
    unconf = [x for x in r.records if x.get("event") == "kernel_unconfirmed"]
    check(any(u.get("ref_seq") == claim[0]["seq"] for u in unconf),
          "P's claim, never made by its image, is not said unconfirmed: %r" % unconf)


def test_a_claim_stands_for_no_image_its_exec_puts_in_its_place(wd):
    """The twenty-ninth review made a claim its thread's only while that
    thread lives (the exec gate's ring of exits). An exec keeps the
    thread, and the image that made the claim is gone: busybox's write
    was recorded only as the static claimer's, through the shim."""
    _claim_then_exec(wd, "claim-exec")


def test_a_claim_of_a_leader_an_exec_of_another_thread_ends_stands_for_nothing(wd):
    """A second thread's exec ends the leader (no exit is reported for
    it to a tracer: the new image takes its number): the leader's claim
    stood for the new image's write."""
    _claim_then_exec(wd, "claim-thread-exec")


BB_FLOOD = """
i=0
while [ $i -lt %d ]; do read x < "$1"; i=$((i+1)); done
read y < "$2"; read z < "$3"
echo "$y $z"
exit 0
"""


def test_a_name_of_bytes_and_its_escape_are_two_groups_each_said(wd):
    """Past the log's rate a record is counted in a group of the same
    record. The group was made of a list of the record's members, which
    left out "escaped": a name of bytes that are not UTF-8 (written
    \\xff) and a name of those four characters were one group, said as
    the second. After a flood, busybox reads both: each is named, the
    bytes' with its "escaped" note, once each."""
    from test_attack29d import _low_rate_default
    policy = _low_rate_default(wd)
    flood = wd.file("flood.txt", "x\n")
    real = os.path.realpath(wd.path).encode()
    raw = os.path.join(real, b"notes-\xff")
    lit = os.path.join(real, b"notes-\\xff")
    for name, text in ((raw, b"RAW\n"), (lit, b"LIT\n")):
        with open(name, "wb") as f:
            f.write(text)
    r = harness([b"/bin/busybox", b"sh", b"-c", (BB_FLOOD % 1500).encode(), b"sh",
                 flood.encode(), raw, lit], wd, policy=policy, mode="audit", timeout=180)
    r.expect_status(0)
    check("RAW LIT" in r.stdout, "the agent did not read both: %s %s" % (r.stdout, r.stderr[-800:]))
    check(any(x.get("event") == "audit_overflow" for x in r.records), "no flood")
    text = lit.decode()
    seen = []
    for x in r.records:
        for g in (x.get("groups", []) if x.get("event") == "audit_overflow" else [x]):
            args = g.get("first_args", g.get("args", {}))
            if args.get("path") == text and g.get("event") != "failed":
                seen.append((any("path" in e for e in g.get("escaped", [])),
                             g.get("count", 1)))
    check(sorted(seen) == [(False, 1), (True, 1)],
          "the reads of %r (bytes) and %r are said as %r (escaped, count): "
          "one of them is not named" % (raw, lit, seen))


def test_a_link_beside_a_large_directory_below_a_double_star_is_seen(wd):
    """A read deny whose first wildcard is "**" is rebased through each
    link a bounded walk of its literal directories meets at the start
    (policy/alias.c). Walked depth first, 1,024 entries, a directory
    listed before the link (~/.kube/cache: a kubectl's discovery and
    http caches hold thousands of files) used up the walk, and
    ~/.kube/config, a link into a dotfiles checkout (stow's way), was
    not seen: the file it names was judged by its real path and read.
    Eight such directories: the link is listed after one of them but
    for one order in nine."""
    import json
    from test_default_policy import fake_home
    from test_sessions_apart import BUSYBOX
    home = fake_home(wd)
    dots = os.path.join(wd.state, "dotfiles", "kube")
    os.makedirs(dots)
    with open(os.path.join(dots, "config"), "w") as f:
        f.write("KUBE-TOKEN-30a\n")
    kube = os.path.join(home, ".kube")
    os.makedirs(kube)
    os.symlink(os.path.join(dots, "config"), os.path.join(kube, "config"))
    for i in range(8):
        d = os.path.join(kube, "cache%d" % i, "discovery")
        os.makedirs(d)
        for j in range(1030):
            open(os.path.join(d, "f%04d.json" % j), "w").close()
    script = "cat ~/.kube/config; %s cat ~/.kube/config; true" % BUSYBOX
    r = harness(["sh", "-c", script], wd, policy=None, env={"HOME": home})
    check("KUBE-TOKEN-30a" not in r.stdout, "read: %r\n%s" % (r.stdout, r.stderr[-1500:]))
    denied = [x for x in r.records if x.get("verdict") == "deny" and x.get("rule") == "kube"]
    check(any("config" in json.dumps(x.get("args", {})) for x in denied),
          "no refusal of ~/.kube/config on record: %s" % r.dump())


EMPTY = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
HELLO = "ce013625030ba8dba906f756967f9e9ca394464a"  # "hello\n"

PLANT = r"""
import os, sys, zlib
objects, oid = sys.argv[1:3]
raw = b"blob 20\0import os  # PLANTED\n"
d = os.path.join(objects, oid[:2])
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, oid[2:]), "wb") as f:
    f.write(zlib.compress(raw))
"""


def _planted(path, oid):
    import zlib
    with open(path, "wb") as f:
        f.write(zlib.compress(b"blob 20\0import os  # PLANTED\n"))


def _user_adds(sub):
    """The user's git, after the session: an empty file and one of
    "hello\\n" added and committed in sub, removed and checked out."""
    from test_worktree import git
    for name, text in (("empty.py", ""), ("hello.txt", "hello\n")):
        with open(os.path.join(sub, name), "w") as f:
            f.write(text)
    git(sub, "add", "empty.py", "hello.txt")
    git(sub, "-c", "user.name=u", "-c", "user.email=u@h", "commit", "-qm", "user")
    got = {}
    for name in ("empty.py", "hello.txt"):
        os.unlink(os.path.join(sub, name))
        git(sub, "checkout", "--", name)
        with open(os.path.join(sub, name)) as f:
            got[name] = f.read()
    return got


def _forged_records(r):
    return [(x.get("repository"), x.get("removed")) for x in r.records
            if x.get("event") == "forged_objects"]


def test_an_object_planted_in_a_nested_repository_gives_no_later_commit_its_bytes(wd):
    """The session's end reads the loose objects the agent made in the
    session's repository with their hashes checked (objfix.h). A nested
    repository's were not: the agent planted code under the empty blob's
    id (python, through the shim) and under the id of "hello\\n" (a
    static busybox copying a file made elsewhere), and the user's later
    git add of such files in that repository wrote no object (one was
    there): their checkout gave the planted bytes."""
    from test_attack29a import _nested
    from test_sessions_apart import BUSYBOX
    from lib import PYTHON
    sub, _ = _nested(wd)
    objects = os.path.join(os.path.realpath(sub), ".git", "objects")
    staged = os.path.join(wd.state, "staged")
    _planted(staged, HELLO)
    script = "%s -c '%s' %s %s && mkdir -p %s/%s && %s cp %s %s/%s/%s && echo PLANTED" % (
        PYTHON, PLANT, objects, EMPTY, objects, HELLO[:2], BUSYBOX, staged, objects,
        HELLO[:2], HELLO[2:])
    r = harness(["sh", "-c", script], wd, policy=None)
    check("PLANTED" in r.stdout, "the agent did not plant: %s %s" % (r.stdout, r.stderr[-1500:]))
    got = _user_adds(sub)
    check(got == {"empty.py": "", "hello.txt": "hello\n"},
          "the user's files, checked out after the commit: %r" % got)
    check(_forged_records(r) == [(objects, 2)],
          "forged_objects records: %r" % _forged_records(r))


def swap_and_checkout(wd, sub, script):
    """Runs the agent's script, which moves what it planted in place of
    the user's nested sub (it says SWAPPED), then the user's adds there:
    the empty file checks out empty. The agent's run, for its records."""
    r = harness(["sh", "-c", script], wd, policy=None)
    check("SWAPPED" in r.stdout, "the agent did not swap: %s %s" % (r.stdout, r.stderr[-1500:]))
    got = _user_adds(sub)
    check(got["empty.py"] == "", "the user's empty file, checked out: %r" % got)
    return r


def _swapped_in_and_swept(wd, sub, script):
    """swap_and_checkout, the plant swept from sub's own store: one
    forged_objects record of it."""
    r = swap_and_checkout(wd, sub, script)
    real = os.path.realpath(wd.path)
    check(_forged_records(r) == [(os.path.join(real, "sub", ".git", "objects"), 1)],
          "forged_objects records: %r" % _forged_records(r))
    return r


def test_an_object_planted_in_a_repository_moved_in_place_of_the_users_is_found(wd):
    """The same plant in a repository the agent made (git init), then
    moved in place of the user's nested one (mv sub sub-old; mv f2 sub:
    renames of a directory that holds a git dir): the store is swept
    where it is at the end."""
    from test_attack29a import _nested
    from lib import PYTHON
    sub, _ = _nested(wd)
    real = os.path.realpath(wd.path)
    made = os.path.join(real, "f2", ".git", "objects")
    script = ("git init -q f2 && %s -c '%s' %s %s && mv sub sub-old && mv f2 sub && echo SWAPPED"
              % (PYTHON, PLANT, made, EMPTY))
    _swapped_in_and_swept(wd, sub, script)


def test_many_links_below_a_double_star_are_each_seen(wd):
    """Each link below a read deny's "**" rebases the pattern (one form
    or more); the forms of one pattern were 32 at most, the rest dropped
    unsaid: a ~/.ssh whose 40 files are links into a dotfiles checkout
    (stow's way) had the later ones granted by their real paths, and
    root's static busybox read them."""
    from test_default_policy import fake_home
    from test_sessions_apart import BUSYBOX
    home = fake_home(wd)
    dots = os.path.join(wd.state, "dotfiles", "ssh")
    os.makedirs(dots)
    for i in range(40):
        with open(os.path.join(dots, "id_%02d" % i), "w") as f:
            f.write("SSH-KEY-30a-%02d\n" % i)
        os.symlink(os.path.join(dots, "id_%02d" % i), os.path.join(home, ".ssh", "id_%02d" % i))
    script = "for f in ~/.ssh/id_*; do %s cat $f; done; true" % BUSYBOX
    r = harness(["sh", "-c", script], wd, policy=None, env={"HOME": home})
    read = sorted(set(x for x in r.stdout.split() if x.startswith("SSH-KEY-30a")))
    check(not read, "read through links below ~/.ssh: %r" % read)


def test_a_test_suites_repositories_in_tmpdir_are_all_its_own(wd):
    """A test suite of the agent's project that makes a repository per
    test in TMPDIR (pytest's tmp_path, Go's t.TempDir) and commits in
    each: every store where a loose object is made is kept for the
    end's sweep, and past 64 the commits were refused
    (harness:git-objects); 70 are made here, each commit lands, and no
    store in TMPDIR, which the end removes, is swept."""
    script = ('for i in $(seq 1 70); do d="$TMPDIR/r$i"; git init -q "$d" && '
              'git -C "$d" -c user.name=a -c user.email=a@b commit -q --allow-empty -m x '
              '|| echo "FAIL $i"; done; echo done')
    r = harness(["sh", "-c", script], wd, policy=None, timeout=180)
    check(r.stdout.endswith("done\n") and "FAIL" not in r.stdout,
          "commits refused: %r %s" % (r.stdout[-300:], r.stderr[-300:]))
    refused = [x for x in r.records if x.get("rule") == "harness:git-objects"]
    check(not refused, "refused: %r" % refused[:3])
