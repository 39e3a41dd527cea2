"""The twenty-fourth attack review, part c: calls the kernel layer
decides on one view of a file and acts on another. An outside
attacker's agent under the embedded default policy, static programs
(raw system calls, no shim)."""

import os
import shutil
import subprocess

from lib import HELPERS, check, harness
from test_default_policy import fake_home

BUSYBOX = shutil.which("busybox") or "/bin/busybox"
PROBE = os.path.join(HELPERS, "static_attack24c")

# Each change through an fd: fchmod, fchmodat2(fd, "", AT_EMPTY_PATH)
# and fchownat on an O_PATH fd, futimens, utimensat(fd, ""), chattr.
FD_CHANGES = ("fchmod", "fchmodat2", "fchown", "futimens", "utimensat", "chattr")


def _flags(path):
    p = subprocess.run(["lsattr", "-d", path], capture_output=True, text=True)
    return p.stdout.split()[0] if p.returncode == 0 and p.stdout else ""


def test_a_linked_files_fd_changes_nothing_once_its_name_is_removed(wd):
    """The fd forms of chmod, chown, utimes and chattr are decided on
    the name the fd's /proc link reads. pnpm links its store's files
    into every project's node_modules: the agent opened the project's
    name of one (read-only, or O_PATH), removed that name (allowed: a
    name may be removed), and the link then read
    ".../node_modules/lodash/index.js (deleted)", a path in the project,
    allowed by the project rule; the change was made on the store's
    file, outside the write roots and kept besides (0444 made 0666, its
    time set to 1970, its nodump flag set). The file acted on is looked
    at again now: not at the name decided and with names elsewhere, it
    is not changed (harness:shared-file); a file of no name is the
    agent's to change."""
    home = fake_home(wd)
    store = os.path.join(home, ".local", "share", "pnpm", "store", "v3", "files", "ab")
    mine = os.path.join(wd.path, "node_modules", "lodash")
    os.makedirs(store)
    os.makedirs(mine)
    blob = os.path.join(store, "cdef01-index")
    name = os.path.join(mine, "index.js")
    with open(blob, "w") as f:
        f.write("module.exports = 1\n")
    for how in FD_CHANGES:
        os.chmod(blob, 0o444)
        os.utime(blob, (1577836800, 1577836800))
        before = (os.stat(blob).st_mode, os.stat(blob).st_mtime, _flags(blob))
        if os.path.lexists(name):
            os.unlink(name)
        os.link(blob, name)
        r = harness([PROBE, "unlinked", "node_modules/lodash/index.js", how], wd,
                    policy=None, env={"HOME": home})
        after = (os.stat(blob).st_mode, os.stat(blob).st_mtime, _flags(blob))
        check(after == before, "%s: the store's file changed: %r -> %r (%r)"
              % (how, before, after, r.stdout))
        check(r.stdout.strip() == "err EACCES", "%s: %r %r" % (how, r.stdout, r.stderr[-300:]))
        recs = [x for x in r.records if x.get("rule") == "harness:shared-file"]
        check(len(recs) == 1 and recs[0]["verdict"] == "deny"
              and recs[0]["args"]["path"] == name + " (deleted)",
              "%s: records %r" % (how, recs))
    # A file of the project's own with no other name: changed as asked,
    # by a removed name too; and one the agent linked itself.
    own = wd.file("own.txt", "x\n")
    os.chmod(own, 0o444)
    r = harness([BUSYBOX, "sh", "-c",
                 "%s unlinked own.txt fchmod; echo y > made && ln made also && "
                 "%s unlinked made fchmod && stat -c %%a also" % (PROBE, PROBE)],
                wd, policy=None, env={"HOME": home})
    check(r.stdout.split() == ["ok", "ok", "666"], "the agent's own files: %r %r"
          % (r.stdout, r.stderr[-300:]))
    # A project file of before the session, by its name, from a process
    # whose /proc/<pid>/root a user's harness-exec may not open.
    kept = wd.file("kept.txt", "k\n")
    r = harness([PROBE, "nodump", "kept.txt"], wd, policy=None, env={"HOME": home})
    check(r.stdout.strip() == "ok" and os.stat(kept).st_mode & 0o777 == 0o640,
          "a non-dumpable process's fchmod: %r %r" % (r.stdout, r.stderr[-300:]))


def test_a_linked_file_renamed_onto_a_decided_name_is_not_changed_through_an_fd(wd):
    """The other half of the look at the fd's file: the decision judges
    the name its link read when the worker read it, and a thread
    renaming the store's file away from that name and a file of the
    agent's own onto it (and back) had the decision look at the agent's
    file while the fd's, the store's, was changed (10 fchmods in 3000
    made it 0666). The file acted on is looked at again, after the
    decision: it has other names from before the session, so it is not
    changed."""
    home = fake_home(wd)
    store = os.path.join(home, ".local", "share", "pnpm", "store", "v3", "files", "cd")
    os.makedirs(store)
    blob = os.path.join(store, "ef0123-index")
    with open(blob, "w") as f:
        f.write("module.exports = 2\n")
    os.chmod(blob, 0o444)
    os.link(blob, os.path.join(wd.path, "a.js"))
    r = harness([PROBE, "swap", "a.js", "3000"], wd, policy=None, env={"HOME": home},
                timeout=120)
    mode = os.stat(blob).st_mode & 0o7777
    check(mode == 0o444, "the store's file made %o (%r)" % (mode, r.stdout))
    check(r.stdout.strip() == "changed 0", "%r %r" % (r.stdout, r.stderr[-300:]))
    check(r.one(event="revoked", rule="harness:shared-file"), "no refusal recorded")


def test_the_agent_makes_no_case_insensitive_directory(wd):
    """On a file system with casefold (ext4 made with it, tmpfs mounted
    with it), chattr +F makes an empty directory of the agent's match
    names whatever their case, and every rule compares names as bytes:
    ".GIT/hooks/pre-commit" or ".ENVRC" made there match no rule, and
    git and direnv open them as ".git/hooks/pre-commit" and ".envrc".
    FS_IOC_SETFLAGS was decided as a write of the directory only. The
    flag is refused now (harness:casefold); other flags are set as
    before. (This kernel has no casefold: natively +F fails there with
    EOPNOTSUPP, so what is checked is the refusal and its record.)"""
    home = fake_home(wd)
    os.makedirs(os.path.join(wd.path, "ci"))
    r = harness([PROBE, "casefold", "ci"], wd, policy=None, env={"HOME": home})
    check(r.stdout.split() == ["err", "EPERM", "ok"], "%r %r" % (r.stdout, r.stderr[-300:]))
    rec = r.one(event="revoked", rule="harness:casefold")
    check(rec["args"]["path"] == os.path.join(wd.path, "ci"), "record %r" % rec)
    check("d" in _flags(os.path.join(wd.path, "ci")).split("-"), "nodump not set: %r"
          % _flags(os.path.join(wd.path, "ci")))
