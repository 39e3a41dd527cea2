"""Attack review 29, part a: the last day's changes attacked (other
sessions' TMPDIRs, the masks' triggers, the live registry, the git
objects' rules, rules rebased through links, the records' keys), under
the embedded default policy, as root and as an ordinary user.

harness:protect's patterns are dismissed by their literal start, with
what each pattern's matches must hold computed once (its "needs"). They
were computed before the aliases were added: a second mount of a
directory (a bind mount of /tmp, of a home) or the account's own home
under another $HOME appends harness:protect patterns past the array's
end, whose needs were read out of bounds. harness-exec died of SIGSEGV
at the start in any mount namespace where /tmp had a second mount, and
where it did not, an aliased pattern was dismissed: another session's
TMPDIR and this session's own audit log were the agent's under the
other name."""

import json
import os
import subprocess

from lib import check, harness
from test_sessions_apart import BUSYBOX, SECRET, _other, _stop


def _can_bind_mount():
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                       capture_output=True)
    return os.getuid() == 0 and r.returncode == 0


def _needs_bind_mount():
    if not _can_bind_mount():
        from lib import Skip
        raise Skip("a second mount needs root (a user namespace would make "
                   "the session's uid 0, another run dir)")


def test_protected_paths_hold_under_a_second_mount_of_tmp(wd):
    """/tmp bind-mounted beneath the project (the agent's write root):
    the other session's TMPDIR and this session's log under that name
    are harness:protect, through the shim and from a static program,
    in both modes, and the session runs (it died of SIGSEGV)."""
    _needs_bind_mount()
    p, base, tmp = _other(wd, "earlier")
    alias = os.path.join(wd.path, "alias")
    os.makedirs(alias)
    atmp = alias + tmp[len("/tmp"):]
    try:
        for mode in ("enforce", "audit"):
            log = os.path.join(wd.state, "a-%s.jsonl" % mode)
            alog = alias + log[len("/tmp"):]
            script = ('cat %s/note; %s cat %s/note; echo X >> %s/note; '
                      '%s sh -c "echo Y >> %s/d/f"; echo FORGED >> %s; '
                      '%s sh -c "echo F2 >> %s"; echo DONE' %
                      (atmp, BUSYBOX, atmp, atmp, BUSYBOX, atmp, alog, BUSYBOX, alog))
            r = harness(["sh", "-c", script], wd, policy=None, mode=mode, log=log,
                        wrap=["unshare", "-m", "--propagation", "private", "sh", "-c",
                              'mount --bind /tmp "$0" && exec "$@"', alias])
            check(r.status == 0 and "DONE" in r.stdout,
                  "%s: the session did not run: status %s %r" % (mode, r.status, r.stderr[-500:]))
            check(SECRET not in r.stdout, "%s: read through the alias: %r" % (mode, r.stdout))
            for f in ("note", "d/f"):
                got = open(os.path.join(tmp, f)).read()
                check(got == SECRET + "\n", "%s: %s written: %r" % (mode, f, got))
            lines = open(log).read().splitlines()
            check("FORGED" not in lines and "F2" not in lines,
                  "%s: the log took the agent's line" % mode)
            for path in (atmp + "/note", atmp + "/d/f", alog):
                recs = [x for x in r.records if x.get("args", {}).get("path") == path]
                check(recs and all(x.get("verdict") == "deny" and
                                   x.get("rule") == "harness:protect" for x in recs),
                      "%s: %s's records: %r" % (mode, path, [(x.get("op"), x.get("verdict"),
                                                              x.get("rule")) for x in recs]))
    finally:
        _stop(p, base)


def test_another_sessions_log_holds_under_a_second_mount(wd):
    """Another session's --audit-log in the project, its live/ entry's
    path: under a second mount of /tmp it was written (through the shim
    and from a static program) and moved, in both modes. Its other name
    is harness:other-session too."""
    _needs_bind_mount()
    p, base, tmp = _other(wd, "earlier")
    alias = os.path.join(wd.path, "alias")
    os.makedirs(alias)
    olog = base + ".jsonl"
    aolog = alias + olog[len("/tmp"):]
    amoved = os.path.join(os.path.dirname(aolog), "moved.jsonl")
    script = ('echo FORGED1 >> %s; %s sh -c "echo FORGED2 >> %s"; %s mv %s %s; '
              'mv %s %s; echo DONE' % (aolog, BUSYBOX, aolog, BUSYBOX, aolog, amoved,
                                       aolog, wd.path + "/moved2.jsonl"))
    try:
        for mode in ("enforce", "audit"):
            r = harness(["sh", "-c", script], wd, policy=None, mode=mode,
                        wrap=["unshare", "-m", "--propagation", "private", "sh", "-c",
                              'mount --bind /tmp "$0" && exec "$@"', alias])
            check(r.status == 0 and "DONE" in r.stdout,
                  "%s: the session did not run: %s %r" % (mode, r.status, r.stderr[-500:]))
            check(os.path.exists(olog), "%s: the other session's log was moved" % mode)
            lines = open(olog).read().splitlines()
            check(not any(x.startswith("FORGED") for x in lines),
                  "%s: the other session's log took the agent's line" % mode)
            recs = [x for x in r.records if x.get("args", {}).get("path") == aolog and
                    x.get("op") != "read"]  # mv's copy across the mounts reads it
            ops = {x.get("op") for x in recs}
            check(recs and all(x.get("verdict") == "deny" and x.get("rule") == "harness:other-session"
                               for x in recs) and "rename" in ops,
                  "%s: the records: %r" % (mode, [(x.get("op"), x.get("verdict"), x.get("rule"))
                                                  for x in recs]))
    finally:
        _stop(p, base)


REPLACE = r'''
cd sub
b=$(git rev-parse HEAD:s)
n=$(echo FORGED | git hash-object -w --stdin)
git replace "$b" "$n" 2>/dev/null && echo "MADE replace"
%(bb)s sh -c "echo $n > .git/refs/replace/$b" 2>/dev/null && echo "MADE bbreplace"
%(py)s -c "import os; open('.git/rr', 'w').write('$n\n'); os.rename('.git/rr', '.git/refs/replace/$b')" 2>/dev/null && echo "MADE pyreplace"
echo "SHOW $(git show HEAD:s)"
git repack -a -q 2>/dev/null && echo "MADE subrepack"
p=$(ls $TMPDIR/p/*.pack); i=$(ls $TMPDIR/p/*.idx)
%(bb)s cp "$p" .git/objects/pack/ 2>/dev/null && %(bb)s cp "$i" .git/objects/pack/ 2>/dev/null && echo "MADE subpack"
cd ..
mkdir fresh && cd fresh && git init -q && echo x > f && git add f &&
  git -c user.name=a -c user.email=a@b commit -qm x && git repack -a -q && echo "MADE freshrepack"
'''


def _nested(wd):
    """The project's repository, and a nested one (sub) made before the
    session, its blob of s; packed refs in both."""
    from test_worktree import git
    _user_repo(wd)
    sub = os.path.join(wd.path, "sub")
    os.makedirs(sub)
    git(sub, "init", "-q")
    wd.file("sub/s", "s\n")
    git(sub, "add", "s")
    git(sub, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "s")
    git(sub, "pack-refs", "--all")
    os.makedirs(os.path.join(sub, ".git", "refs", "replace"))
    return sub, git(sub, "rev-parse", "HEAD:s").strip()


def _sub_show(sub):
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    return subprocess.run(["git", "-C", sub, "show", "HEAD:s"], capture_output=True,
                          text=True, env=e).stdout


def test_replace_refs_and_a_nested_repositorys_packs_redefine_no_object(wd):
    """In a repository nested in the project that predates the session
    (a submodule's git dir alike), git replace (or its ref written by a
    static program or renamed in) made the user's committed s read as
    the agent's blob, and a pack copied in whose index claims its id
    with other bytes did too; the end of the session records replace
    refs of the session's own repository only (history_rewritten), and
    packs are refused there only. Both are harness:git-objects in such
    a repository now; a repository the agent makes keeps its packs."""
    from test_worktree import git
    from lib import PYTHON
    sub, blob = _nested(wd)
    # A pack claiming the nested repository's blob with other bytes.
    forge = os.path.join(wd.state, "forge")
    git(wd.state, "init", "-q", "forge")
    with open(os.path.join(forge, "s"), "w") as f:
        f.write("FORGED\n")
    git(forge, "add", "s")
    git(forge, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "f")
    git(forge, "repack", "-a", "-q")
    script = REPLACE % {"bb": BUSYBOX, "py": PYTHON}
    setup = 'mkdir -p "$TMPDIR/p" && cp %s/.git/objects/pack/* "$TMPDIR/p/" && ' % forge
    r = harness(["sh", "-c", setup + script], wd, policy=None)
    out = r.stdout
    for what in ("replace", "bbreplace", "pyreplace", "subrepack", "subpack"):
        check("MADE " + what not in out, "%s: %s\n%s" % (what, out, r.stderr[-2000:]))
    check("MADE freshrepack" in out, "the agent's own clone's packs: %s\n%s" % (out, r.stderr[-2000:]))
    check("SHOW s" in out, "the agent's own git read the forgery: %s" % out)
    check(_sub_show(sub) == "s\n", "the user's git show: %r" % _sub_show(sub))
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    got = subprocess.run(["git", "-C", sub, "cat-file", "-p", blob], capture_output=True,
                         text=True, env=e).stdout
    check(got == "s\n", "the nested repository's blob: %r" % got)
    check(not os.listdir(os.path.join(sub, ".git", "refs", "replace")),
          "a replace ref: %r" % os.listdir(os.path.join(sub, ".git", "refs", "replace")))
    denied = [x for x in r.records if x.get("verdict") == "deny" and
              ("/sub/.git/refs/replace" in str(x.get("args")) or
               "/sub/.git/objects/pack" in str(x.get("args")))]
    check(denied and all(x.get("rule") == "harness:git-objects" for x in denied) and
          {"write", "rename"} <= {x.get("op") for x in denied},
          "the refusals' records: %r" % [(x.get("op"), x.get("rule"), x.get("args", {}).get("path"))
                                          for x in denied])


EMPTY = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
REMADE = r'''
o=.git/objects/%(a)s/%(b)s
git hash-object -w /dev/null >/dev/null && [ -e $o ] && echo "MADE own"
rm $o && echo "REMOVED own"
: > "$1.step"
while [ ! -e "$1.go" ]; do sleep 0.05; done
rm -f $o 2>/dev/null; %(bb)s rm -f $o 2>/dev/null
[ -e $o ] && echo "KEPT other"
'''


def _others_object_once_under_way(wd, base):
    """Another session's object, as its git makes it: the empty blob,
    written from outside once the agent's script says it is under way
    (BASE.step), which is then told to go on (BASE.go). The thread."""
    import threading
    import time
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)

    def other():
        for _ in range(600):
            if os.path.exists(base + ".step"):
                break
            time.sleep(0.05)
        subprocess.run(["git", "-C", wd.path, "hash-object", "-w", "/dev/null"], env=e,
                       capture_output=True)
        open(base + ".go", "w").close()
    t = threading.Thread(target=other)
    t.start()
    return t


def test_an_object_removed_then_made_by_another_session_is_not_removed_again(wd):
    """The session's own objects were kept by name: the empty blob the
    agent made and removed, made again by another session's checkpoint
    (here the user's git, after the agent's removal), was the agent's
    to remove again, and that session's result lost it. An object of
    the session's is bound to its file when it is taken away."""
    from test_worktree import git
    git(wd.path, "init", "-q", "-b", "main")
    for k, v in (("user.name", "t"), ("user.email", "t@example.com")):
        git(wd.path, "config", k, v)
    wd.file("a.txt", "hello\n")
    git(wd.path, "add", "a.txt")
    git(wd.path, "commit", "-qm", "init")
    obj = os.path.join(wd.path, ".git", "objects", EMPTY[:2], EMPTY[2:])
    check(not os.path.exists(obj), "the empty blob is there at the start")
    base = os.path.join(wd.path, "remade")
    t = _others_object_once_under_way(wd, base)
    script = REMADE % {"a": EMPTY[:2], "b": EMPTY[2:], "bb": BUSYBOX}
    r = harness(["sh", "-c", script, "remade", base], wd, policy=None)
    t.join(60)
    out = r.stdout
    check("MADE own" in out and "REMOVED own" in out,
          "the session's own object: %s\n%s" % (out, r.stderr[-2000:]))
    check("KEPT other" in out and os.path.exists(obj),
          "the other's object was removed: %s\n%s" % (out, r.stderr[-2000:]))
    unl = [x for x in r.records if x.get("op") == "unlink" and
           x.get("args", {}).get("path") == obj]
    check(len(unl) >= 3 and unl[0].get("verdict") == "allow" and
          all(x.get("verdict") == "deny" and x.get("rule") == "harness:other-session"
              for x in unl[-2:]),
          "the records: %r" % [(x.get("verdict"), x.get("rule")) for x in unl])


PACKED = r'''
cd sub
b=$(git rev-parse HEAD:s)
n=$(echo FORGED | git hash-object -w --stdin)
echo "$n refs/replace/$b" >> .git/packed-refs 2>/dev/null && echo "MADE append"
%(bb)s sh -c "echo '$n refs/replace/$b' >> .git/packed-refs" 2>/dev/null && echo "MADE bbappend"
%(py)s -c "
import os
t = open('.git/packed-refs').read()
open('.git/pr.new', 'w').write(t + '$n refs/replace/$b\n')
os.rename('.git/pr.new', '.git/packed-refs')" 2>/dev/null && echo "MADE pyrename"
echo "SHOW $(git show HEAD:s)"
git branch x && git pack-refs --all && echo "MADE packrefs"
%(py)s -c "
import os
t = open('.git/packed-refs').read()
f = open('.git/pr.new', 'w'); f.write(t); f.flush()
os.rename('.git/pr.new', '.git/packed-refs')
f.write('$n refs/replace/$b\n'); f.close()" 2>/dev/null && echo "MADE heldfd"
'''


def _user_repo(wd):
    from test_worktree import git
    git(wd.path, "init", "-q", "-b", "main")
    for k, v in (("user.name", "t"), ("user.email", "t@example.com")):
        git(wd.path, "config", k, v)
    wd.file("a.txt", "hello\n")
    git(wd.path, "add", "a.txt")
    git(wd.path, "commit", "-qm", "init")
    git(wd.path, "pack-refs", "--all")


def test_a_replace_ref_in_packed_refs_redefines_no_object(wd):
    """A line "<forged> refs/replace/<s's blob>" appended to a nested
    repository's packed-refs is a replace ref as one in refs/replace:
    the user's git show HEAD:s read FORGED. packed-refs written in place
    (which git never does), or a file naming a replace ref renamed
    there, is harness:git-objects; git pack-refs still works. A file
    renamed there clean and written after through a descriptor held
    open is not seen (XFAIL)."""
    from lib import PYTHON, xfail
    sub, _ = _nested(wd)
    r = harness(["sh", "-c", PACKED % {"bb": BUSYBOX, "py": PYTHON}], wd, policy=None)
    out = r.stdout
    for what in ("append", "bbappend", "pyrename"):
        check("MADE " + what not in out, "%s: %s\n%s" % (what, out, r.stderr[-2000:]))
    check("SHOW s" in out and "MADE packrefs" in out, "git pack-refs: %s\n%s" % (out, r.stderr[-2000:]))
    denied = [x for x in r.records if x.get("verdict") == "deny" and
              "/sub/.git/packed-refs" in json.dumps(x.get("args", {}))]
    check({"write", "rename"} <= {x.get("op") for x in denied} and
          all(x.get("rule") == "harness:git-objects" for x in denied),
          "the refusals' records: %r" % [(x.get("op"), x.get("rule")) for x in denied])
    if "MADE heldfd" in out and _sub_show(sub) != "s\n":
        xfail("a replace ref written into packed-refs through a descriptor held open "
              "past its rename redefines the user's blob")
        return
    check(_sub_show(sub) == "s\n", "the user's git show: %r" % _sub_show(sub))


MOVED = r'''
: > "$1.step"
while [ ! -e "$1.go" ]; do sleep 0.05; done
o=.git/objects/%(a)s/%(b)s
rm -f $o 2>/dev/null
%(py)s -c "import os; os.rename('.git/objects/%(a)s', '.git/objects/%(a)s.x')" 2>/dev/null && echo "MADE fanout"
%(bb)s mv .git/objects/%(a)s .git/objects/%(a)s.y 2>/dev/null && echo "MADE bbfanout"
%(bb)s mv .git/objects .git/objects.z 2>/dev/null && echo "MADE bbobjects"
[ -e $o ] && echo "KEPT other"
'''


def test_another_sessions_objects_do_not_go_with_their_directory_in_audit_mode(wd):
    """Another session's object (made since the start, not by the
    session) is refused to remove one by one in audit mode
    (harness:other-session), but a move of its objects/xx or of
    objects/ itself took it away from its refs (a git-config or
    git-hooks refusal, which audit mode lets by); the move is
    harness:other-session now, from the shim and a static program."""
    from lib import PYTHON
    _user_repo(wd)
    obj = os.path.join(wd.path, ".git", "objects", EMPTY[:2], EMPTY[2:])
    base = os.path.join(wd.path, "moved")
    t = _others_object_once_under_way(wd, base)
    script = MOVED % {"a": EMPTY[:2], "b": EMPTY[2:], "bb": BUSYBOX, "py": PYTHON}
    r = harness(["sh", "-c", script, "moved", base], wd, policy=None, mode="audit")
    t.join(60)
    out = r.stdout
    for what in ("fanout", "bbfanout", "bbobjects"):
        check("MADE " + what not in out, "%s: %s\n%s" % (what, out, r.stderr[-2000:]))
    check("KEPT other" in out and os.path.exists(obj), "the other's object: %s" % out)
    mv = [x for x in r.records if x.get("op") == "rename" and x.get("args", {}).get("path") in
          (os.path.dirname(obj), os.path.dirname(os.path.dirname(obj)))]
    check(len(mv) >= 3 and all(x.get("verdict") == "deny" and x.get("enforced") is not False and
                               x.get("rule") == "harness:other-session" for x in mv),
          "the records: %r" % [(x.get("verdict"), x.get("enforced"), x.get("rule")) for x in mv])


LINKED = r'''
: > "$1.step"
while [ ! -e "$1.go" ]; do sleep 0.05; done
o=.git/objects/%(a)s/%(b)s
ln $o cp 2>/dev/null && echo "MADE link"; chmod u+w cp 2>/dev/null; echo FORGED > cp 2>/dev/null
%(bb)s ln $o cp2 2>/dev/null && echo "MADE bblink"; %(bb)s chmod u+w cp2 2>/dev/null
%(bb)s sh -c "echo FORGED2 >> cp2" 2>/dev/null
true
'''


def test_another_sessions_object_is_not_linked_and_written(wd):
    """Another session's loose object (made since the start, not by
    the session) was refused to write in place, but a hard link of it
    to a name of the agent's was not: chmod u+w, then > through the
    link, rewrote the object (git reads it unhashed). The link is
    harness:other-session now, from the shim and a static program."""
    _user_repo(wd)
    obj = os.path.join(wd.path, ".git", "objects", EMPTY[:2], EMPTY[2:])
    base = os.path.join(wd.path, "linked")
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    t = _others_object_once_under_way(wd, base)
    r = harness(["sh", "-c", LINKED % {"a": EMPTY[:2], "b": EMPTY[2:], "bb": BUSYBOX},
                 "linked", base], wd, policy=None)
    t.join(60)
    check("MADE" not in r.stdout, "linked: %s\n%s" % (r.stdout, r.stderr[-2000:]))
    got = subprocess.run(["git", "-C", wd.path, "cat-file", "-p", EMPTY], env=e,
                         capture_output=True, text=True)
    check(got.returncode == 0 and got.stdout == "", "the other's object: %r %r" % (
        got.stdout, got.stderr))
    links = [x for x in r.records if x.get("op") == "link" and x.get("verdict") == "deny"]
    check(len(links) >= 2 and all(x.get("rule") == "harness:other-session" for x in links),
          "the records: %r" % [(x.get("verdict"), x.get("rule")) for x in links])


def test_a_secret_through_a_link_below_a_double_star_is_not_read(wd):
    """A read deny whose first wildcard component is "**" ($HOME/.ssh/
    and everything beneath, $HOME/.minikube/<any>/*.key) was rebased at
    the start through a link on its literal directories, not through one
    below them: with ~/.ssh/keys a link to /secure/keys (a directory) or
    ~/.ssh/id_linked one to a file, and ~/.minikube/profiles one to the
    user's synced directory, the file was judged by its real path, which
    no rule names, and Landlock granted it: a static busybox of root's
    read each (the user's masks cover the link's name). Such a pattern
    is rebased through each link a bounded walk of its literal
    directories meets (policy/alias.c, deep_walk)."""
    from test_default_policy import fake_home
    home = fake_home(wd)
    synced = os.path.join(wd.state, "synced")
    for d in ("profiles/p", "keys"):
        os.makedirs(os.path.join(synced, d))
    for rel, text in (("profiles/p/client.key", "MINIKUBE-KEY"), ("keys/id_x", "DIR-LINKED-KEY"),
                      ("id_linked", "FILE-LINKED-KEY")):
        with open(os.path.join(synced, rel), "w") as f:
            f.write(text + "\n")
    os.makedirs(os.path.join(home, ".minikube"))
    os.symlink(os.path.join(synced, "profiles"), os.path.join(home, ".minikube", "profiles"))
    os.symlink(os.path.join(synced, "keys"), os.path.join(home, ".ssh", "keys"))
    os.symlink(os.path.join(synced, "id_linked"), os.path.join(home, ".ssh", "id_linked"))
    names = ("~/.minikube/profiles/p/client.key", "~/.ssh/keys/id_x", "~/.ssh/id_linked")
    script = " ".join("cat %s; %s cat %s;" % (n, BUSYBOX, n) for n in names) + " true"
    r = harness(["sh", "-c", script], wd, policy=None, env={"HOME": home})
    for text in ("MINIKUBE-KEY", "DIR-LINKED-KEY", "FILE-LINKED-KEY"):
        check(text not in r.stdout, "%s read: %r\n%s" % (text, r.stdout, r.stderr[-1500:]))
    denied = [x for x in r.records if x.get("verdict") == "deny" and
              x.get("rule") in ("ssh", "tool-credentials")]
    for part in ("client.key", "id_x", "id_linked"):
        check(any(part in json.dumps(x.get("args", {})) for x in denied),
              "no refusal of %s on record: %s" % (part, r.dump()))
