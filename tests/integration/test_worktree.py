"""--worktree sessions (issue 4): checkpoints, restore, the result commit
and its manifest, concurrency, crash + gc, confinement and bad input, on
real repositories made with the git CLI."""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import time

from lib import EXEC, AUDIT_TOOL, SHIM, check, harness, read_log

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo, *args, check_rc=True, input=None):
    e = dict(os.environ)
    e.update(GIT_ENV)
    e.pop("LD_PRELOAD", None)
    p = subprocess.run(["git", "-C", repo] + list(args), capture_output=True,
                       env=e, input=input)
    if check_rc and p.returncode:
        raise AssertionError("git %s: %s" % (args, p.stderr.decode(errors="replace")))
    return p.stdout.decode("utf-8", "surrogateescape")


def make_repo(wd, name="repo", files=None):
    repo = os.path.join(wd.path, name)
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "t")
    git(repo, "config", "user.email", "t@example.com")
    files = files or {"a": "a0\n", "b": "b0\n", "d": "d0\n", "sub/s": "s0\n",
                      ".gitignore": "*.log\n"}
    for p, text in files.items():
        full = os.path.join(repo, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return repo


def user_state(repo):
    """Hashes of what the user owns: HEAD, index, refs of the user, stash,
    config, hooks and every file of the checkout outside .git."""
    h = {}
    gd = os.path.join(repo, ".git")
    for name in ("HEAD", "index", "config", "packed-refs"):
        p = os.path.join(gd, name)
        if os.path.exists(p):
            h[name] = hashlib.sha256(open(p, "rb").read()).hexdigest()
    h["refs"] = git(repo, "for-each-ref", "--format=%(refname) %(objectname)",
                    "refs/heads/main", "refs/stash", "refs/tags")
    h["stash"] = git(repo, "stash", "list")
    for root, dirs, files in os.walk(repo):
        if ".git" in dirs:
            dirs.remove(".git")
        for f in files:
            p = os.path.join(root, f)
            h[os.path.relpath(p, repo)] = hashlib.sha256(open(p, "rb").read()).hexdigest()
    hooks = os.path.join(gd, "hooks")
    h["hooks"] = sorted(os.listdir(hooks)) if os.path.isdir(hooks) else []
    return h


def session_dir(wd, s):
    return os.path.join(wd.state, "harness", "sessions", s)


def tree_files(repo, rev):
    """{path: bytes} of a commit's tree."""
    out = {}
    for line in git(repo, "ls-tree", "-r", "-z", rev).split("\0"):
        if not line:
            continue
        meta, path = line.split("\t", 1)
        mode, typ, oid = meta.split()
        if typ == "blob":
            out[path] = subprocess.run(["git", "-C", repo, "cat-file", "blob", oid],
                                       capture_output=True).stdout
        else:
            out[path] = ("<%s %s>" % (typ, oid)).encode()
    return out


def dir_files(root):
    out = {}
    for r, dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(r, f)
            rel = os.path.relpath(p, root)
            if rel == ".git":
                continue
            out[rel] = open(p, "rb").read()
    return out


def wt_run(wd, repo, cmd, session, extra=(), **kw):
    wd.path, saved = repo, wd.path
    try:
        return harness(cmd, wd, policy=None,
                       extra=["--worktree", "--session", session] + list(extra), **kw)
    finally:
        wd.path = saved


def tool(argv, wd, cwd=None):
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    e["XDG_STATE_HOME"] = wd.state
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=e, timeout=60)


AGENT = ("sh -c 'echo new > a'; mv b c; rm d; sh -c 'mkdir e && echo x > e/f'; "
         "sh -c 'echo junk > build.log'")


def test_worktree_scripted_agent(wd):
    repo = make_repo(wd)
    git(repo, "stash", "list")
    with open(os.path.join(repo, "untracked.txt"), "w") as f:
        f.write("mine\n")
    before = user_state(repo)
    r = wt_run(wd, repo, ["sh", "-c", AGENT], "s1", extra=["--keep-worktree"])
    r.expect_status(0)
    check(user_state(repo) == before, "the user's checkout, index or refs changed")
    # The branch holds exactly the final state (ignored build.log left out).
    want = {".gitignore": b"*.log\n", "a": b"new\n", "c": b"b0\n", "e/f": b"x\n",
            "sub/s": b"s0\n"}
    check(tree_files(repo, "harness/s1") == want,
          "branch tree %r" % sorted(tree_files(repo, "harness/s1")))
    msg = git(repo, "log", "-1", "--format=%B", "harness/s1")
    check("Harness-Session: s1" in msg and "Harness-Exit-Status: 0" in msg, msg)
    recs = read_log(r.log)
    check(recs[-1]["event"] == "session_end", "last record %s" % recs[-1]["event"])
    check("Harness-Audit-Hash: %s" % recs[-1]["hash"] in msg,
          "trailer is not the session_end hash:\n" + msg)
    check(git(repo, "rev-parse", "harness/s1^") .strip() == git(repo, "rev-parse", "main").strip(),
          "result's parent is not the base")
    # Checkpoints: 0 at start and one after each of the 4 writing steps.
    cps = [json.loads(l) for l in open(os.path.join(session_dir(wd, "s1"), "checkpoints.jsonl"))]
    # (the last step wrote only an ignored file: same tree, no commit)
    check([c["n"] for c in cps] == [0, 1, 2, 3, 4], "checkpoints %r" % [(c["n"], c["trigger"]) for c in cps])
    causes = [c["cause"]["argv"][0] if c["cause"] else None for c in cps]
    check(causes == [None, "sh", "mv", "rm", "sh"], "causes %r" % causes)
    expect = [
        {"a": b"a0\n", "b": b"b0\n", "d": b"d0\n"},
        {"a": b"new\n", "b": b"b0\n", "d": b"d0\n"},
        {"a": b"new\n", "c": b"b0\n", "d": b"d0\n"},
        {"a": b"new\n", "c": b"b0\n"},
        {"a": b"new\n", "c": b"b0\n", "e/f": b"x\n"},
    ]
    for n, files in enumerate(expect):
        t = tree_files(repo, "refs/harness/s1/checkpoints/%d" % n)
        base = {".gitignore": b"*.log\n", "sub/s": b"s0\n"}
        base.update(files)
        check(t == base, "checkpoint %d: %r" % (n, sorted(t)))
    out = tool([AUDIT_TOOL, "checkpoints", "s1"], wd)
    check(out.returncode == 0 and "mv b c" in out.stdout, out.stdout + out.stderr)
    d = tool([AUDIT_TOOL, "diff", "s1", "2"], wd)
    check(d.returncode == 0 and "rename" not in d.stdout and "+++ b/c" in d.stdout and "--- a/b" in d.stdout,
          d.stdout + d.stderr)
    # Restore N gives the checkpoint's tree byte for byte (ignored kept).
    wt = os.path.join(repo, ".git", "harness", "worktrees", "s1")
    for n in (1, 3, 0, 4):
        res = tool([EXEC, "restore", "s1", str(n)], wd)
        check(res.returncode == 0, res.stderr)
        got = {k: v for k, v in dir_files(wt).items() if not k.endswith(".log")}
        check(got == tree_files(repo, "refs/harness/s1/checkpoints/%d" % n),
              "restore %d: %r" % (n, sorted(got)))
    check(user_state(repo) == before, "restore touched the user's checkout")
    # The manifest names the process that last wrote each file.
    man = json.load(open(os.path.join(session_dir(wd, "s1"), "manifest.json")))
    by = {f["path"]: f for f in man["files"]}
    check(sorted(by) == ["a", "b", "c", "d", "e/f"], "manifest paths %r" % sorted(by))
    check(by["a"]["status"] == "modified" and by["c"]["status"] == "created" and
          by["d"]["status"] == "deleted", "statuses")
    check(by["a"]["writer"]["argv"] == ["sh", "-c", "echo new > a"], by["a"])
    check(by["b"]["writer"]["argv"][0] == "mv" and by["c"]["writer"]["argv"][0] == "mv", by["c"])
    check(by["d"]["writer"]["argv"] == ["rm", "d"], by["d"])
    check(by["e/f"]["writer"]["argv"][2].startswith("mkdir e"), by["e/f"])
    check(by["a"]["sha256"] == hashlib.sha256(b"new\n").hexdigest(), "sha256 of a")
    for f in man["files"]:
        w = f["writer"]
        seqrec = [x for x in recs if x.get("seq") == w["seq"]][0]
        check(seqrec["pid"] == w["pid"], "writer seq %s is not pid %s" % (w["seq"], w["pid"]))
    note = git(repo, "notes", "--ref=harness", "show", "harness/s1")
    check(json.loads(note) == man, "the note is not the manifest")
    check(hashlib.sha256(open(os.path.join(session_dir(wd, "s1"), "manifest.json"), "rb").read()).hexdigest()
          == recs[-1]["worktree"]["manifest_sha256"], "manifest hash in session_end")
    check(git(repo, "fsck", "--no-progress") is not None, "")


def test_worktree_removed_at_end(wd):
    repo = make_repo(wd)
    r = wt_run(wd, repo, ["sh", "-c", "echo z > z"], "s2")
    r.expect_status(0)
    check(not os.path.exists(os.path.join(repo, ".git", "harness", "worktrees", "s2")),
          "worktree left behind")
    # By its directory's name: the temporary repo's own path may hold "s2".
    listed = git(repo, "worktree", "list")
    check("/worktrees/s2" not in listed and "[harness/s2]" not in listed, listed)
    check(tree_files(repo, "harness/s2")["z"] == b"z\n", "branch lacks z")
    git(repo, "fsck", "--no-progress")


def test_worktree_concurrent_sessions(wd):
    repo = make_repo(wd)
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    e.pop("LD_PRELOAD", None)
    procs = []
    for s in ("c1", "c2"):
        cmd = [EXEC, "--quiet", "--worktree", "--session", s, "--", "sh", "-c",
               "for i in 1 2 3 4 5; do sh -c \"echo %s$i > f$i\"; done; rm a" % s]
        procs.append(subprocess.Popen(cmd, cwd=repo, env=e, stderr=subprocess.PIPE))
    for p in procs:
        _, err = p.communicate(timeout=120)
        check(p.returncode == 0, err.decode())
    for s in ("c1", "c2"):
        t = tree_files(repo, "harness/" + s)
        check(sorted(t) == [".gitignore", "b", "d", "f1", "f2", "f3", "f4", "f5", "sub/s"], sorted(t))
        check(all(t["f%d" % i] == ("%s%d\n" % (s, i)).encode() for i in range(1, 6)), s)
        git(repo, "notes", "--ref=harness", "show", "harness/" + s)
    git(repo, "fsck", "--no-progress")


def find_locks(gitdir):
    return [os.path.join(r, f) for r, _, fs in os.walk(gitdir) for f in fs if f.endswith(".lock")]


def test_worktree_kill9_then_gc(wd):
    repo = make_repo(wd)
    k1 = "k1-%d" % os.getpid()
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    e.pop("LD_PRELOAD", None)
    p = subprocess.Popen([EXEC, "--quiet", "--worktree", "--session", k1, "--", "sh", "-c",
                          "sh -c 'echo x > x'; exec sleep 60"], cwd=repo, env=e,
                         start_new_session=True)
    cpf = os.path.join(session_dir(wd, k1), "checkpoints.jsonl")
    for _ in range(200):
        if os.path.exists(cpf) and len(open(cpf).readlines()) >= 2:
            break
        time.sleep(0.05)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    r = tool([EXEC, "gc"], wd, cwd=repo)
    check(r.returncode == 0, r.stdout + r.stderr)
    check("crashed" in r.stdout, r.stdout)
    check(find_locks(os.path.join(repo, ".git")) == [], "locks %r" % find_locks(repo))
    r2 = wt_run(wd, repo, ["sh", "-c", "echo y > y"], "k2")
    r2.expect_status(0)
    git(repo, "fsck", "--no-progress", "--strict")
    check(tree_files(repo, "refs/harness/%s/checkpoints/1" % k1)["x"] == b"x\n", "crashed checkpoint")
    r = tool([EXEC, "gc", "--older-than", "0s"], wd, cwd=repo)
    check(r.returncode == 0, r.stdout + r.stderr)
    check(not os.path.exists(os.path.join(repo, ".git", "harness", "worktrees", k1)), r.stdout)
    check(git(repo, "for-each-ref", "refs/harness/%s/" % k1) == "", "refs of k1 left")
    check(k1 not in git(repo, "worktree", "list"), "worktree metadata left")
    check(not os.path.exists("/tmp/harness-%d/%s" % (os.getuid(), k1)), "crashed TMPDIR left")
    check(find_locks(os.path.join(repo, ".git")) == [], "locks")
    git(repo, "fsck", "--no-progress")
    bad = tool([EXEC, "gc", "--older-than", "7x"], wd)
    check(bad.returncode == 2, bad.stderr)


def test_worktree_confinement_and_own_commit(wd):
    repo = make_repo(wd)
    hook = os.path.join(repo, ".git", "hooks", "pre-commit")
    before = user_state(repo)
    gd = os.path.join(repo, ".git")
    script = "\n".join([
        "try() { if sh -c \"$1\" 2>/dev/null; then echo \"WROTE $2\"; else echo \"DENIED $2\"; fi; }",
        "try 'echo x > \"%s/a\"' checkout" % repo,
        "try 'echo x > \"%s\"' hook" % hook,
        "try 'echo x >> \"%s/config\"' config" % gd,
        "try 'echo 0 > \"%s/refs/heads/main\"' mainref" % gd,
        "try 'echo x > \"$TMPDIR/t\"' tmpdir",
        "try 'echo 0 > \"%s/refs/heads/harness/other\"' otherbranch" % gd,
        "try 'echo 0 > \"%s/refs/heads/harness/g1x\"' g1x" % gd,
        "try 'echo x > /tmp/outside-%s' tmp" % os.path.basename(wd.path),
        "echo mine > mine.txt && git add mine.txt && git commit -qm 'agent commit' && echo COMMITTED",
    ])
    r = wt_run(wd, repo, ["sh", "-c", script], "g1")
    r.expect_status(0)
    out = r.stdout
    for what in ("checkout", "hook", "config", "mainref", "tmp", "otherbranch", "g1x"):
        check("DENIED " + what in out, "%s: %s\n%s" % (what, out, r.stderr))
    check("WROTE tmpdir" in out, out + r.stderr)
    check("COMMITTED" in out, out + r.stderr)
    check(user_state(repo) == before, "user's repo changed")
    log = git(repo, "log", "--format=%s", "harness/g1").splitlines()
    check(log[0].startswith("harness: ") and log[1] == "agent commit", log)
    check(tree_files(repo, "harness/g1")["mine.txt"] == b"mine\n", "result lacks mine.txt")
    git(repo, "fsck", "--no-progress")


def test_worktree_bad_input(wd):
    repo = make_repo(wd)
    r = wt_run(wd, repo, ["true"], "b1", extra=["--base", "no-such-ref"])
    check(r.status == 2 and "names no commit" in r.stderr, r.stderr)
    check(git(repo, "branch", "--list", "harness/*") == "", "branch left by a failed start")
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    r = wt_run(wd, repo, ["true"], "b2", extra=["--base", tree])
    check(r.status == 2 and "names no commit" in r.stderr, r.stderr)
    bare = os.path.join(wd.path, "bare.git")
    subprocess.run(["git", "init", "-q", "--bare", bare], check=True)
    r = wt_run(wd, bare, ["true"], "b3")
    check(r.status == 2 and "bare" in r.stderr, r.stderr)
    plain = os.path.join(wd.path, "plain")
    os.makedirs(plain)
    r = wt_run(wd, plain, ["true"], "b4")
    check(r.status == 2 and "not inside a git repository" in r.stderr, r.stderr)
    r = harness(["true"], wd, policy=None, extra=["--base", "HEAD"])
    check(r.status == 2 and "needs --worktree" in r.stderr, r.stderr)
    # --base a real older commit works and the subdirectory is mirrored.
    git(repo, "commit", "-q", "--allow-empty", "-m", "second")
    wd.path, saved = os.path.join(repo, "sub"), wd.path
    try:
        r = harness(["sh", "-c", "pwd; echo t > t"], wd, policy=None,
                    extra=["--worktree", "--session", "b5", "--base", "HEAD~1"])
    finally:
        wd.path = saved
    r.expect_status(0)
    check(r.stdout.strip().endswith("/harness/worktrees/b5/sub"), r.stdout)
    check(tree_files(repo, "harness/b5")["sub/t"] == b"t\n", "sub/t")
    check(git(repo, "rev-parse", "harness/b5^").strip() == git(repo, "rev-parse", "HEAD~1").strip(), "base")


def test_worktree_submodule(wd):
    lib_repo = make_repo(wd, "lib", {"l.c": "int l;\n"})
    repo = make_repo(wd)
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib_repo, "lib")
    git(repo, "commit", "-qm", "add submodule")
    gitlink = git(repo, "rev-parse", "HEAD:lib").strip()
    r = wt_run(wd, repo, ["sh", "-c", "sh -c 'echo sub > a'"], "m1")
    r.expect_status(0)
    t = tree_files(repo, "harness/m1")
    check(t["a"] == b"sub\n", "a")
    check(t["lib"] == ("<commit %s>" % gitlink).encode(), "gitlink %r" % t.get("lib"))
    git(repo, "fsck", "--no-progress")


def test_worktree_spaces_and_unicode(wd):
    repo = make_repo(wd, "my repo \u00e9", {"a b.txt": "x\n", "\u00f1and\u00fa.txt": "y\n"})
    before = user_state(repo)
    r = wt_run(wd, repo, ["sh", "-c", "sh -c 'echo z > \"a b.txt\"'; "
                          "sh -c 'echo n > \"\u65b0 file.txt\"'; rm \"\u00f1and\u00fa.txt\""],
               "u1", extra=["--copy-untracked"])
    r.expect_status(0)
    t = tree_files(repo, "harness/u1")
    check(t == {"a b.txt": b"z\n", "\u65b0 file.txt": b"n\n"}, "tree %r" % sorted(t))
    man = json.load(open(os.path.join(session_dir(wd, "u1"), "manifest.json")))
    by = {f["path"]: f for f in man["files"]}
    check(by["\u65b0 file.txt"]["writer"]["argv"][0] == "sh", by)
    check(by["\u00f1and\u00fa.txt"]["writer"]["argv"][0] == "rm", by)
    check(user_state(repo) == before, "user's checkout changed")


def test_worktree_copy_untracked_and_control_checkpoint(wd):
    repo = make_repo(wd)
    with open(os.path.join(repo, "notes.txt"), "w") as f:
        f.write("untracked\n")
    with open(os.path.join(repo, "x.log"), "w") as f:
        f.write("ignored\n")
    e = dict(os.environ, XDG_STATE_HOME=wd.state)
    e.pop("LD_PRELOAD", None)
    wt = os.path.join(repo, ".git", "harness", "worktrees", "t1")
    p = subprocess.Popen([EXEC, "--quiet", "--worktree", "--copy-untracked", "--session", "t1",
                          "--", "/usr/bin/python3", "-c",
                          "import os, time\nopen('late','w').write('L\\n')\n"
                          "open('.ready','w').close()\n"
                          "for _ in range(600):\n"
                          "    if os.path.exists('.done'): break\n"
                          "    time.sleep(0.05)\n"
                          "os.unlink('.done')"],
                         cwd=repo, env=e, stderr=subprocess.PIPE)
    for _ in range(200):
        if os.path.exists(os.path.join(wt, ".ready")):
            break
        time.sleep(0.02)
    check(os.path.exists(os.path.join(wt, "notes.txt")), "untracked file not copied")
    check(not os.path.exists(os.path.join(wt, "x.log")), "ignored file copied")
    c = tool([EXEC, "checkpoint", "t1"], wd)
    check(c.returncode == 0 and " created " in c.stdout, c.stdout + c.stderr)
    c2 = tool([EXEC, "checkpoint"], wd)
    check(c2.returncode == 0 and " unchanged " in c2.stdout, c2.stdout + c2.stderr)
    # The agent waits for this (up to 30 s), not for a fixed time: the
    # two checkpoints above must find it running on a loaded machine.
    open(os.path.join(wt, ".done"), "w").close()
    _, err = p.communicate(timeout=60)
    check(p.returncode == 0, err.decode())
    n = int(c.stdout.split()[1])
    t = tree_files(repo, "refs/harness/t1/checkpoints/%d" % n)
    check(t.get("late") == b"L\n" and "notes.txt" in t, sorted(t))
    cps = [json.loads(l) for l in open(os.path.join(session_dir(wd, "t1"), "checkpoints.jsonl"))]
    check(any(x["trigger"] == "control" for x in cps), cps)
    nope = tool([EXEC, "checkpoint", "t1"], wd)
    check(nope.returncode == 1 and "not running" in nope.stderr, nope.stderr)


def test_git_plugin_loaded_only_for_worktrees(wd):
    # harness-exec without libharness-git.so beside it: a session without
    # --worktree runs (libgit2 is never needed, so never loaded), one with
    # it and the subcommands say what is missing.
    alone = os.path.join(wd.state, "alone")
    os.makedirs(alone)
    exe = shutil.copy(EXEC, alone)
    repo = make_repo(wd)
    env = dict(os.environ, HARNESS_SHIM=SHIM, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    run = lambda *a: subprocess.run([exe] + list(a), cwd=repo, env=env, capture_output=True,
                                    text=True, timeout=60)
    r = run("--quiet", "--", "true")
    check(r.returncode == 0, "a plain session needs the plugin: %r" % r.stderr)
    r = run("--quiet", "--worktree", "--", "true")
    check(r.returncode == 2 and "needs the git plugin" in r.stderr, r.stderr)
    check(git(repo, "branch", "--list", "harness/*") == "", "a branch was made")
    r = run("gc")
    check(r.returncode == 1 and "gc needs the git plugin" in r.stderr, r.stderr)


def test_copy_untracked_leaves_out_what_the_agent_may_not_read(wd):
    """An untracked .env copied into the worktree went into checkpoint 0,
    so `git show` of the session's commit read it, and the result branch
    carried it (found by an attack review). Copies the policy denies
    reading are taken back before the first checkpoint."""
    repo = make_repo(wd)
    with open(os.path.join(repo, ".env"), "w") as f:
        f.write("API_KEY=sk-live-wt\n")
    with open(os.path.join(repo, "notes.txt"), "w") as f:
        f.write("untracked\n")
    script = ("cat .env; cat notes.txt; "
              "for c in $(git rev-list --all); do git show $c:.env; done 2>/dev/null; "
              "git grep -h sk-live $(git rev-list --all) 2>/dev/null; echo done")
    r = wt_run(wd, repo, [shutil.which("busybox"), "sh", "-c", script], "cu1",
               extra=["--copy-untracked"])
    check("sk-live" not in r.stdout, "the untracked .env reached the agent: %r" % r.stdout)
    check("untracked" in r.stdout and r.stdout.endswith("done\n"), "%r %r" % (r.stdout, r.stderr))
    t = tree_files(repo, "harness/cu1")
    check(".env" not in t and t.get("notes.txt") == b"untracked\n", "result tree %r" % sorted(t))
    check(open(os.path.join(repo, ".env")).read() == "API_KEY=sk-live-wt\n", "the user's .env")
