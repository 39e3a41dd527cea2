"""The fourth outside attack round (issue 10): holes found at the seams
and fixed, each tried as the attacker would and checked for its effect
and its record."""

import os
import pwd
import re
import shutil
import subprocess
import tempfile

from lib import EXEC, PYTHON, Skip, check, harness
from test_audit_attacks import verify
from test_default_policy import fake_home

BUSYBOX = shutil.which("busybox")
GIT_ENV = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x"}


def _user_git_status(wd, home):
    """The user's next git status in the project, outside the harness."""
    env = dict(os.environ, HOME=home, GIT_CEILING_DIRECTORIES=os.path.dirname(wd.path))
    env.pop("LD_PRELOAD", None)
    return subprocess.run(["git", "status"], cwd=wd.path, capture_output=True, text=True,
                          timeout=60, env=env)


def test_nested_repository_config_names_no_code(wd):
    """Found last round, not fixed then: `git init sub`, a configuration
    key that names a program in sub/.git/config (core.fsmonitor) and a
    gitlink to sub in the project's index ran that program on the
    user's next `git status` in the project (git recurses into the
    submodule), outside the harness. Every way of putting such a key or
    a hook in a repository the agent made is refused: git config (a
    lock file renamed over the config), an append, a rename by python, a
    static busybox, an include, a hook, a gitfile or a bare repository's
    layout pointing git at a directory no name guards, a directory moved
    in as .git. The agent's own git in sub keeps working: init, config
    of a plain key, commit."""
    home = fake_home(wd)
    mark = os.path.join(wd.state, "fsmonitor-ran")
    evil = "touch %s; false" % mark
    env = dict(GIT_ENV, HOME=home)
    subprocess.run(["git", "init", "-q", wd.path], check=True)
    subprocess.run(["git", "-C", wd.path, "commit", "-q", "--allow-empty", "-m", "0"],
                   check=True, env=dict(os.environ, **GIT_ENV))
    sub = os.path.join(wd.path, "sub")
    cfg = os.path.join(sub, ".git", "config")
    script = (
        "git init -q sub && git -C sub config user.name agent && "
        "echo a > sub/a && git -C sub add a && git -C sub commit -q -m 1 && "
        "git add sub 2>/dev/null && echo ordinary-ok; "
        "git -C sub config core.fsmonitor '%s'; "
        "printf '[core]\\n\\tfsmonitor = \"%s\"\\n' >> sub/.git/config; "
        "printf '[include]\\n\\tpath = ../../inc\\n' >> sub/.git/config; "
        "echo 'touch %s' > sub/.git/hooks/post-checkout; "
        "%s -c \"import os; open('sub/.git/config.lock','w').write("
        "open('sub/.git/config').read()+'[core] fsmonitor = %s\\n'); "
        "os.rename('sub/.git/config.lock','sub/.git/config')\"; "
        "mkdir -p sub2/gd/objects sub2/gd/refs; echo 'ref: refs/heads/m' > sub2/gd/HEAD; "
        "echo 'gitdir: gd' > sub2/.git; ln -s gd sub2/.git; "
        "mkdir -p gd3/objects && mv gd3 sub/.git/modules; mv sub/.git/hooks hk; "
        "echo done") % (evil, evil.replace('"', '\\"'), mark, PYTHON, evil)
    r = harness(["sh", "-c", script], wd, policy=None, env=env)
    check("ordinary-ok" in r.stdout and "done" in r.stdout, "stdout %r %r" % (r.stdout, r.stderr))
    st = _user_git_status(wd, home)
    check("sub" in st.stdout or "sub" in st.stderr or st.returncode == 0, "git status %r" % st)
    check(not os.path.exists(mark), "the agent's fsmonitor ran in the user's git status")
    text = open(cfg).read()
    check("fsmonitor" not in text and "include" not in text, "sub's config names code: %r" % text)
    check("agent" in text, "a plain key was refused: %r" % text)
    check(not os.path.exists(os.path.join(sub, ".git", "hooks", "post-checkout")), "hook written")
    check(not os.path.lexists(os.path.join(wd.path, "sub2", ".git")), "a gitfile or link made")
    check(not os.path.exists(os.path.join(wd.path, "sub2", "gd", "HEAD")), "a bare layout made")
    check(not os.path.exists(os.path.join(sub, ".git", "modules")), "a directory moved into .git")
    check(os.path.isdir(os.path.join(sub, ".git", "hooks")), "hooks moved out of .git")
    ren = [x for x in r.events(op="rename", args_path2=cfg) if x["verdict"] == "deny"]
    check(len(ren) >= 2, "refused renames onto sub's config: %s" % r.dump())
    for rec in ren:
        check(rec["rule"] == "harness:git-config", "record %r" % rec)
    rec = r.one(op="write", args_path=cfg, verdict="deny")
    check(rec["rule"] == "harness:git-config", "record %r" % rec)

    # The kernel layer alone (a static program), the same refusals.
    os.unlink(mark) if os.path.exists(mark) else None
    script = ("printf '[core]\\n\\tfsmonitor = x\\n' >> sub/.git/config; "
              "cp sub/.git/config c.lock && echo '[alias] x = !sh' >> c.lock && "
              "mv c.lock sub/.git/config; echo hook > sub/.git/hooks/pre-push; "
              "mkfifo sub/.git/hooks/post-merge; "
              "ln sub/.git/config lnk && printf '[core]\\n\\tfsmonitor = y\\n' >> lnk; "
              "cp sub/.git/config ok.lock && mv ok.lock sub/.git/config && echo plain-ok")
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home})
    text = open(cfg).read()
    check("fsmonitor" not in text and "alias" not in text, "busybox: config names code: %r" % text)
    check("plain-ok" in r.stdout, "busybox: a clean config refused: %r %r" % (r.stdout, r.stderr))
    check(not os.path.exists(os.path.join(sub, ".git", "hooks", "pre-push")), "busybox: hook written")
    check(not os.path.lexists(os.path.join(sub, ".git", "hooks", "post-merge")),
          "busybox: a fifo made as a hook (git would block on it)")
    rec = r.one(op="rename", args_path2=cfg, verdict="deny")
    check(rec["rule"] == "harness:git-config" and rec["layer"] == "kernel", "record %r" % rec)


def test_a_checked_config_is_not_written_through_the_renamed_file(wd):
    """A rename onto a nested repository's config is decided on the
    bytes that land: the agent keeps an fd on the lock file (or a hard
    link to it) and writes a key after the check. What lands is a copy
    of the checked bytes, so neither reaches the config."""
    home = fake_home(wd)
    sub = os.path.join(wd.path, "sub")
    subprocess.run(["git", "init", "-q", sub], check=True)
    cfg = os.path.join(sub, ".git", "config")
    prog = ("import os\n"
            "f = open('sub/.git/config.lock', 'w'); f.write(open('sub/.git/config').read()); f.flush()\n"
            "os.link('sub/.git/config.lock', 'alias')\n"
            "os.rename('sub/.git/config.lock', 'sub/.git/config')\n"
            "f.write('[core]\\n\\tfsmonitor = ./evil\\n'); f.close()\n"
            "open('alias', 'a').write('[core]\\n\\thooksPath = ./h\\n')\n"
            "print('renamed')\n")
    r = harness([PYTHON, "-c", prog], wd, policy=None, env={"HOME": home})
    check("renamed" in r.stdout, "stdout %r %r" % (r.stdout, r.stderr))
    text = open(cfg).read()
    check("fsmonitor" not in text and "hooksPath" not in text, "written after the check: %r" % text)
    rec = r.one(op="rename", args_path2=cfg)
    check(rec["verdict"] == "allow", "record %r" % rec)


def test_a_link_into_a_place_the_agent_fills_is_not_made_in_the_project(wd):
    """A bare repository's layout made in ~/.cache (which the agent may
    write, where HEAD is nobody's concern) would run its config when
    the user cds through a link to it from the project and runs git.
    The default policy refuses the link however it is made: by ln, by
    a static busybox, or made elsewhere and renamed in. (The layout's
    config is written as git writes one, by a rename: it is judged as a
    .git's, test_attack19b.py.)"""
    home = fake_home(wd)
    bare = os.path.join(home, ".cache", "hx-bare")
    os.makedirs(os.path.join(bare, "objects"))
    os.makedirs(os.path.join(bare, "refs"))
    script = ("ln -s %s l1; echo ln $?; busybox ln -s %s l2; echo bb $?; "
              "ln -s %s $TMPDIR/l3 && mv $TMPDIR/l3 l3; echo mv $?; "
              "ln -s .cache $TMPDIR/c; ln -s $TMPDIR/c/hx-bare l4; echo via $?; "
              "printf 'ref: refs/heads/x\\n' > %s/HEAD; printf '[core]\\n\\tbare = true\\n' > %s/config.lock; "
              "mv %s/config.lock %s/config; echo layout $?" % (bare, bare, bare, bare, bare, bare, bare))
    r = harness(["sh", "-c", script], wd, policy=None, env={"HOME": home})
    for name in ("l1", "l2", "l3", "l4"):
        check(not os.path.lexists(os.path.join(wd.path, name)), "%s was made: %r %r" % (name, r.stdout, r.stderr))
    check(all(w in r.stdout for w in ("ln 1", "bb 1", "mv 1", "via 1", "layout 0")),
          "what each step said: %r %r" % (r.stdout, r.stderr))
    made = [x for x in r.records if x.get("op") == "symlink" and x["args"]["path"].startswith(wd.path + "/")]
    check(made and all(x["verdict"] != "allow" for x in made), "the links' records %r" % made)


RACE_CONFIG = """
import os, threading
good = open('sub/.git/config').read()
bad = good + '[core]\\n\\tfsmonitor = ./evil\\n'
ok = refused = 0
for i in range(300):
    f = open('sub/.git/config.lock', 'w')
    f.write(good); f.flush()
    stop = False
    def flip():
        n = 0
        while not stop:
            f.seek(0); f.truncate(); f.write(bad if n % 2 else good); f.flush(); n += 1
    t = threading.Thread(target=flip); t.start()
    try:
        os.rename('sub/.git/config.lock', 'sub/.git/config'); ok += 1
    except PermissionError:
        refused += 1
    stop = True; t.join(); f.close()
    if os.path.exists('sub/.git/config.lock'):
        os.unlink('sub/.git/config.lock')
print('ok', ok, 'refused', refused)
"""


def test_a_config_changed_after_its_decision_is_recorded_refused(wd):
    # The lock file's bytes change between the decision (names no code:
    # allowed, and recorded so) and the copy (names code: refused). Each
    # such refusal must be in the log too: a "revoked" record that
    # points at the decision's, never an allow alone. Which outcome a
    # round gets is a race; the counts must agree whatever they are.
    home = fake_home(wd)
    subprocess.run(["git", "init", "-q", os.path.join(wd.path, "sub")], check=True)
    cfg = os.path.join(wd.path, "sub", ".git", "config")
    r = harness([PYTHON, "-c", RACE_CONFIG], wd, policy=None, env={"HOME": home})
    m = re.search(r"ok (\d+) refused (\d+)", r.stdout)
    check(m, "stdout %r %r" % (r.stdout, r.stderr))
    ok, refused = int(m.group(1)), int(m.group(2))
    check("fsmonitor" not in open(cfg).read(), "the code landed")
    recs = [x for x in r.records if x.get("op") == "rename" and x.get("args", {}).get("path2") == cfg]
    decisions = [x for x in recs if x["event"] not in ("revoked", "failed")]
    allowed = [x for x in decisions if x["verdict"] == "allow"]
    denied = [x for x in decisions if x["verdict"] != "allow"]
    # the kernel's view of a call the shim allowed: refused by the
    # kernel layer (its own record) or, after, revoked
    seqs = {a["seq"] for a in allowed}
    unconfirmed = [x for x in r.records if x["event"] == "kernel_unconfirmed" and x.get("ref_seq") in seqs]
    revoked = [x for x in r.records if x["event"] == "revoked"]
    # and an allow the kernel then refused for its own reasons: failed
    failed = [x for x in r.records if x["event"] == "failed"]
    check(all(x["ref_seq"] in seqs and x["rule"] == "harness:git-config" for x in revoked),
          "a revoked record that points at no allow: %r" % revoked[:3])
    check(all(x["ref_seq"] in seqs for x in failed), "a failed record that points at no allow: %r" % failed[:3])
    after = len(revoked) + len(failed)
    check(len(allowed) - len(unconfirmed) - after == ok and len(denied) + after == refused,
          "%d renames done, %d refused; records: %d allowed (%d unconfirmed), %d denied, %d revoked, %d failed" % (
              ok, refused, len(allowed), len(unconfirmed), len(denied), len(revoked), len(failed)))
    print("# done %d, refused at the decision %d, after it %d" % (ok, len(denied), len(revoked)))
    check(verify(r.log)[0] == 0, "the chain: %r" % (verify(r.log),))


def _bind(src, dst):
    os.makedirs(dst, exist_ok=True)
    m = subprocess.run(["mount", "--bind", src, dst], capture_output=True, text=True)
    if m.returncode:
        raise Skip("cannot bind-mount here: %s" % m.stderr.strip())


def test_a_second_mount_of_a_denied_directory_is_denied(wd):
    """Found last round, not fixed then: a second mount of a directory
    that holds a denied path (`mount --bind $HOME /mnt/b`, made by root
    before the session) reached ~/.ssh/id_rsa as /mnt/b/.ssh/id_rsa, a
    path no rule names, past the shim, Landlock and the masks. The
    mount table is read at start and every deny and ask rule is rebased
    onto the other mount point, so each layer holds there too; a mount of
    a directory beneath the denied one (~/.ssh itself) is denied whole.
    An ordinary user's session, with the same mounts in place, is held
    the same way and reads the rest of the mount."""
    if os.geteuid() != 0:
        raise Skip("only root can make the second mount")
    home = fake_home(wd)
    with open(os.path.join(home, "notes.txt"), "w") as f:
        f.write("plain\n")
    mnt = tempfile.mkdtemp(prefix="hx-mnt-")  # the user may look in (as /mnt)
    os.chmod(mnt, 0o755)
    b = os.path.join(mnt, "b")
    s = os.path.join(mnt, "s")
    _bind(home, b)
    try:
        _bind(os.path.join(home, ".ssh"), s)
        try:
            script = ("cat %s/.ssh/id_rsa; busybox cat %s/.ssh/id_rsa; busybox cat %s/id_rsa; "
                      "%s -c \"print(open('%s/.ssh/id_rsa').read())\"; cat %s/notes.txt"
                      % (b, b, s, PYTHON, b, b))
            r = harness(["sh", "-c", script], wd, policy=None, env={"HOME": home})
            check("PRIVATE-KEY" not in r.stdout, "a second mount reached the key: %r" % r.stdout)
            check("plain" in r.stdout, "the rest of the mount unreadable: %r %r" % (r.stdout, r.stderr))
            rec = r.one(args_path=os.path.join(b, ".ssh", "id_rsa"), verdict="deny")
            check(rec["rule"] == "ssh", "record %r" % rec)
            # Audit mode: read, and recorded as what it would be.
            r = harness(["busybox", "cat", os.path.join(b, ".ssh", "id_rsa")], wd, policy=None,
                        mode="audit", env={"HOME": home})
            rec = r.one(args_path=os.path.join(b, ".ssh", "id_rsa"))
            check(rec["verdict"] == "deny" and rec["rule"] == "ssh" and rec["enforced"] is False,
                  "audit record %r" % rec)
            _as_user(b, home)
        finally:
            subprocess.run(["umount", "-l", s], capture_output=True)
    finally:
        subprocess.run(["umount", "-l", b], capture_output=True)
        shutil.rmtree(mnt, ignore_errors=True)


def _as_user(b, home):
    """The same mounts, an ordinary user's session: held, and usable."""
    try:
        pw = pwd.getpwnam(os.environ.get("HX_TEST_USER", "harness-test"))
    except KeyError:
        return
    top = tempfile.mkdtemp(prefix="hx-alias-")
    try:
        proj = os.path.join(top, "proj")
        os.makedirs(proj)
        for d in (top, proj):
            os.chown(d, pw.pw_uid, pw.pw_gid)
        for d in (home, os.path.join(home, ".ssh")):
            os.chmod(d, 0o755)
        os.chmod(os.path.join(home, ".ssh", "id_rsa"), 0o644)
        os.chmod(os.path.join(home, "notes.txt"), 0o644)
        script = ("cat %s/.ssh/id_rsa; busybox cat %s/.ssh/id_rsa; cat %s/notes.txt; echo ok > f; cat f"
                  % (b, b, b))
        env = {"HOME": home, "PATH": "/usr/bin:/bin", "XDG_STATE_HOME": os.path.join(top, "st")}
        p = subprocess.run(["setpriv", "--reuid", str(pw.pw_uid), "--regid", str(pw.pw_gid),
                            "--init-groups", EXEC, "--quiet", "--", "sh", "-c", script],
                           cwd=proj, env=env, capture_output=True, text=True, timeout=120)
        check("PRIVATE-KEY" not in p.stdout, "the user's session reached the key: %r" % p.stdout)
        check("plain" in p.stdout and p.stdout.endswith("ok\n"),
              "the user's session: %r %r" % (p.stdout, p.stderr))
        check("rule ssh" in p.stderr, "the user's refusal said nothing: %r" % p.stderr)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_a_freed_socket_inode_does_not_make_a_neighbours_socket_the_sessions(wd):
    """Found in this round: the session's own sockets were known by
    device and inode only. The agent binds a socket and removes it; a
    socket a neighbour of the user binds later on that file system (tmux
    -S, ssh-agent -a, a dev server) takes the freed inode (ext4 hands it
    out again at once), and the agent connected to it as its own,
    whatever harness:neighbour says. Now a socket is the session's by
    its birth time too (statx), which a reused inode does not keep."""
    ino = os.path.join(wd.path, "ino")
    go = os.path.join(wd.path, "go")
    own = os.path.join(wd.path, "own.sock")
    nb = os.path.join(wd.path, "nb.sock")
    prog = ("import os, socket, time\n"
            "s = socket.socket(socket.AF_UNIX); s.bind(%r)\n"
            "n = os.stat(%r).st_ino; open(%r, 'w').write(str(n)); s.close(); os.unlink(%r)\n"
            "for _ in range(500):\n"
            "    if os.path.exists(%r): break\n"
            "    time.sleep(0.01)\n"
            "c = socket.socket(socket.AF_UNIX)\n"
            "try:\n"
            "    c.connect(%r); print(c.recv(64).decode())\n"
            "except OSError as e:\n"
            "    print('refused', e.errno)\n") % (own, own, ino, own, go, nb)
    # The inode is handed out again by chance (ext4 at once, most
    # times): other tests side by side take inodes too, so three tries.
    for _ in range(3):
        for f in (ino, go, own, nb):
            if os.path.lexists(f):
                os.unlink(f)
        result, r = _neighbour_takes_the_inode(wd, prog, ino, go, own, nb)
        if result.get("reused"):
            break
    if not result.get("reused"):
        raise Skip("this file system did not hand the inode out again")
    check("NEIGHBOUR" not in r.stdout, "connected to a neighbour's socket: %r %r" % (r.stdout, r.stderr))
    rec = r.one(op="connect", verdict="deny")
    check(rec["rule"] == "harness:neighbour", "record %r" % rec)


def _neighbour_takes_the_inode(wd, prog, ino, go, own, nb):
    """One try: the agent (prog) binds and frees a socket, a neighbour
    thread binds another once it is gone; (what the neighbour saw, the
    run)."""
    result = {}

    def neighbour():
        import time
        for _ in range(1000):
            if os.path.exists(ino) and not os.path.lexists(own):
                break
            time.sleep(0.005)
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(nb)
        srv.listen(1)
        result["reused"] = str(os.stat(nb).st_ino) == open(ino).read()
        open(go, "w").close()
        srv.settimeout(3)
        try:
            c, _ = srv.accept()
            c.sendall(b"NEIGHBOUR")
            c.close()
        except OSError:
            pass
        srv.close()

    import socket
    import threading
    t = threading.Thread(target=neighbour)
    t.start()
    r = harness([PYTHON, "-c", prog], wd, policy=None, env={"HOME": fake_home(wd)})
    t.join()
    return result, r


def test_toolchain_sources_that_predate_the_session_are_not_rewritten(wd):
    """Found in this round: the toolchains profile (in the default
    policy) let the agent write the stores toolchains extract downloads
    into and later use without a second check: a crate's build.rs in
    ~/.cargo/registry/src, a module's source in ~/go/pkg/mod, a jar in
    ~/.m2/repository, a package in bun's cache. Each rewritten file ran
    in the user's next build, outside the harness. Now what predates the
    session there is kept (keep_existing: no write, chmod, move or
    removal of it or of a directory above it); the agent's builds still
    add new entries."""
    home = fake_home(wd)
    files = {
        ".cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.0/build.rs": "fn main(){}\n",
        ".cargo/git/checkouts/dep-1a2b/abcdef0/src/lib.rs": "pub fn f(){}\n",
        "go/pkg/mod/golang.org/x/mod@v0.1.0/module/module.go": "package module\n",
        ".m2/repository/org/x/x/1.0/x-1.0.jar": "PK\n",
        ".m2/repository/org/x/x/1.0/x-1.0.pom": "<project/>\n",
        ".bun/install/cache/lodash@4.17.21/index.js": "module.exports={}\n",
    }
    for rel, text in files.items():
        p = os.path.join(home, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    src = os.path.join(home, ".cargo/registry/src/index.crates.io-6f17d22bba15001f")
    script = "; ".join("echo EVIL >> ~/%s" % rel for rel in files)
    script += ("; chmod u-w ~/%s; mv %s/serde-1.0.0 %s/serde-x; rm -f ~/%s; "
               "mv ~/.cargo/registry/src ~/.cargo/registry/src2; "
               "mkdir -p %s/new-$$ && echo new > %s/new-$$/lib.rs && "
               "mkdir -p ~/go/pkg/mod/cache/download/x/@v && echo v1 >> ~/go/pkg/mod/cache/download/x/@v/list && "
               "echo added"
               % (list(files)[2], src, src, list(files)[3], src, src))
    for prog in (["sh", "-c", script], [BUSYBOX, "sh", "-c", script]):
        r = harness(prog, wd, policy=None, env={"HOME": home})
        for rel, text in files.items():
            p = os.path.join(home, rel)
            check(os.path.exists(p) and open(p).read() == text,
                  "%s: %s was changed or removed" % (prog[0], rel))
            check(os.stat(p).st_mode & 0o200, "%s: %s re-moded" % (prog[0], rel))
        check(os.path.isdir(os.path.join(src, "serde-1.0.0")), "%s: a kept directory moved" % prog[0])
        check("added" in r.stdout, "%s: a new entry refused: %r %r" % (prog[0], r.stdout, r.stderr))
        rec = r.one(args_path=os.path.join(home, list(files)[0]), verdict="deny")
        check(rec["rule"] == "harness:keep-existing", "%s: record %r" % (prog[0], rec))
        rec = r.one(op="rename", args_path=os.path.join(src, "serde-1.0.0"))
        check(rec["verdict"] == "deny" and rec["rule"] == "harness:keep-existing",
              "%s: record %r" % (prog[0], rec))


def test_a_second_mount_of_the_project_shows_no_masked_file(wd):
    """Found in this round, with the aliases above: the project's
    denied files (.env) are masks bound over their paths in the agent's
    mount namespace, so a second mount of the project made before the
    session (root's `mount --bind`) showed them unmasked to a program
    without the shim. The project's other names are walked for masks as
    the project is."""
    if os.geteuid() != 0:
        raise Skip("only root can make the second mount")
    with open(os.path.join(wd.path, ".env"), "w") as f:
        f.write("API_KEY=SECRET-IN-ENV\n")
    with open(os.path.join(wd.path, "notes.txt"), "w") as f:
        f.write("plain\n")
    mnt = tempfile.mkdtemp(prefix="hx-mnt-")
    other = os.path.join(mnt, "p")
    _bind(wd.path, other)
    try:
        r = harness([BUSYBOX, "sh", "-c", "cat %s/.env; cat %s/notes.txt" % (other, other)], wd,
                    policy=None, env={"HOME": fake_home(wd)})
        check("SECRET-IN-ENV" not in r.stdout, "the project's .env read through its second mount")
        check("plain" in r.stdout, "the rest unreadable: %r %r" % (r.stdout, r.stderr))
        rec = r.one(args_path=os.path.join(other, ".env"), verdict="deny")
        check(rec["rule"] == "dotenv" and rec["layer"] in ("mask", "landlock"), "record %r" % rec)
    finally:
        subprocess.run(["umount", "-l", other], capture_output=True)
        shutil.rmtree(mnt, ignore_errors=True)
