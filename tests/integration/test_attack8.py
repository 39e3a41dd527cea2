"""The eighth attack review: an ordinary user's agent under the default
policy, each hole tried as the attacker would and checked for its
effect and its record."""

import os
import shutil
import subprocess

from lib import PYTHON, check, harness
from test_default_policy import fake_home

BUSYBOX = shutil.which("busybox")


def test_a_directory_moved_in_brings_nothing_the_policy_would_not_write(wd):
    """The toolchains profile lets the agent write a few directories by
    their exact name so that a first run can make them (~/go, ~/.npm,
    ~/.yarn, ~/.bun), not what goes beneath them (~/go/bin, on many
    users' PATH; ~/.npm/_npx, which npx runs without asking). A rename
    was refused only for the deny and ask patterns beneath its source
    and destination, so a directory filled in $TMPDIR and moved to ~/go
    (python, a static busybox), or a symlink ~/go to a store the agent
    fills, put ~/go/bin/gopls and ~/.npm/_npx/... there: code the user
    runs later, outside the harness. What a move takes away is a write
    as well: ~/go, with the user's ~/go/bin in it, moved out of the way.
    Moves inside the write roots keep working."""
    home = fake_home(wd)
    os.makedirs(os.path.join(home, "mine", "bin"))
    user_tool = os.path.join(home, "mine", "bin", "tool")
    open(user_tool, "w").write("the user's\n")
    script = (
        "cd \"$TMPDIR\" && mkdir -p g/bin n/_npx/a/node_modules/e y/bin && "
        "echo evil > g/bin/gopls && echo evil > n/_npx/a/node_modules/e/index.js && "
        "echo evil > y/bin/x && "
        "%s -c \"import os; os.rename('g', os.path.expanduser('~/go'))\"; "
        "%s mv n ~/.npm; mv y ~/.yarn; "
        "mkdir -p ~/.npm/_cacache/b/bin && echo evil > ~/.npm/_cacache/b/bin/bun && "
        "ln -s ~/.npm/_cacache/b ~/.bun; "
        "mkdir -p k/l && echo ok > k/l/f && mv k kk && cd \"$OLDPWD\" && mkdir -p p/q && "
        "mv p kk && "
        "mkdir -p ~/.cache/c && mv ~/.cache/c ~/.cache/c2 && echo moves-ok") % (
            PYTHON, BUSYBOX)
    r = harness(["sh", "-c", script], wd, policy=None, env={"HOME": home})
    for p in ("go/bin/gopls", ".npm/_npx/a/node_modules/e/index.js", ".yarn/bin/x",
              ".bun/bin/bun"):
        check(not os.path.exists(os.path.join(home, p)),
              "~/%s put in place by a move or a link: %r" % (p, r.stderr))
    check("moves-ok" in r.stdout and os.path.isdir(os.path.join(wd.path, "kk", "q")),
          "a move inside the write roots refused: %r %r" % (r.stdout, r.stderr))
    # ~/go/bin is user-path's (a PATH directory), named where a move
    # brings something there (attack review 26a); ~/.npm/_npx no rule's.
    for dst, rule in ((os.path.join(home, "go"), "user-path"),
                      (os.path.join(home, ".npm"), "default:file_write")):
        rec = r.one(op="rename", args_path2=dst)
        check(rec["verdict"] == "deny" and rec["rule"] == rule, "record %r" % rec)
    rec = r.one(op="symlink", args_path=os.path.join(home, ".bun"))
    check(rec["verdict"] == "deny", "record %r" % rec)

    # Taking away: ~/go, holding the user's ~/go/bin, moved out.
    os.rename(os.path.join(home, "mine"), os.path.join(home, "go"))
    r = harness([BUSYBOX, "sh", "-c", "mv ~/go \"$TMPDIR/g\" && rm -rf \"$TMPDIR/g\"; echo x"],
                wd, policy=None, env={"HOME": home})
    check(os.path.exists(os.path.join(home, "go", "bin", "tool")),
          "the user's ~/go/bin/tool moved away and removed")
    rec = r.one(op="rename", args_path=os.path.join(home, "go"))
    check(rec["verdict"] == "deny" and rec["layer"] == "kernel", "record %r" % rec)


def _python_with_jedi():
    """A python of this machine that has jedi (IPython's completion, the
    editors' Python language servers), or None."""
    for py in (shutil.which("python3"), "/root/.pyenv/versions/3.11.7/bin/python3", PYTHON):
        if py and os.access(py, os.X_OK) and subprocess.run(
                [py, "-c", "import jedi"], capture_output=True).returncode == 0:
            return py
    return None


def _refusal(r, path):
    """The refusal of the write of path, or of the mkdir nearest it."""
    best = None
    for rec in r.records:
        p = rec.get("args", {}).get("path")
        if rec.get("verdict") in ("deny", "ask") and p and (path == p or path.startswith(p + "/")) \
                and (not best or len(p) > len(best["args"]["path"])):
            best = rec
    check(best, "no refusal for %s: %s" % (path, r.dump()))
    return best


JEDI_COMPLETE = "import jedi; print(len(jedi.Script('import json\\njson.').complete(2, 5)))"


def test_caches_the_users_tools_load_as_code_are_not_written(wd):
    """~/.cache is the agent's to write, but for caches whose content
    other programs run later (cache-code). Not listed were caches of
    pickles, which run what they name when loaded: jedi's parse cache
    (~/.cache/jedi), loaded on every completion in IPython and in the
    editors' Python language servers; a pickle the agent wrote over it
    ran a command in the user's next completion, outside the harness
    (shown when a python with jedi is here). Nor the Nushell init
    scripts of starship's and carapace's setups, fish's generated
    completions, dein.vim's plugins and state, node-gyp's common.gypi,
    JetBrains Gateway's IDE backends, Xfce's saved sessions (commands
    started again at login). Each is refused (pickles and bytecode: deny, the
    tools go on without a cache; scripts: ask), from python and from a
    static busybox, and recorded. Zig's packages and coursier's jars,
    built from unchecked once fetched, are kept as they were, as cargo's
    sources are (keep_existing)."""
    home = fake_home(wd)
    mark = os.path.join(wd.state, "pickle-ran")
    jpy = _python_with_jedi()
    env = dict(os.environ, HOME=home)
    env.pop("LD_PRELOAD", None)
    pickles = []
    if jpy:  # the user's IPython completes once, before the session
        subprocess.run([jpy, "-c", JEDI_COMPLETE], env=env, check=True, capture_output=True)
        for top, _dirs, files in os.walk(os.path.join(home, ".cache", "jedi")):
            pickles += [os.path.join(top, f) for f in files if f.endswith(".pkl")]
        check(pickles, "jedi made no parse cache")
    plant = ("import os, pickle, sys\n"
             "class E:\n"
             "    def __reduce__(self):\n"
             "        return (os.system, ('touch %s',))\n"
             "bad = pickle.dumps(E())\n"
             "for f in sys.argv[1:]:\n"
             "    try:\n"
             "        os.makedirs(os.path.dirname(f), exist_ok=True)\n"
             "        open(f, 'wb').write(bad); print('wrote', f)\n"
             "    except OSError as e:\n"
             "        print('refused', f, e.errno)\n") % mark
    cache = os.path.join(home, ".cache")
    new = [os.path.join(cache, p) for p in ("jedi/CPython-311-33/x-y.pkl", "black/24.1.0/c.pickle",
                                            "pylint/app1.stats", "tool/state.pkl")]
    r = harness([PYTHON, "-c", plant] + pickles + new, wd, policy=None, env={"HOME": home})
    check("wrote" not in r.stdout, "a pickle written in ~/.cache: %r %r" % (r.stdout, r.stderr))
    for f in pickles + new:
        rec = _refusal(r, f)
        check(rec["rule"] == "cache-objects", "record %r" % rec)
    if jpy:
        subprocess.run([jpy, "-c", JEDI_COMPLETE], env=env, capture_output=True)
        check(not os.path.exists(mark), "the user's next completion ran the agent's pickle")

    scripts = ["starship/init.nu", "carapace/init.nu", "fish/generated_completions/ls.fish",
               "dein/state_nvim.vim", "node-gyp/20.11.0/include/node/common.gypi",
               "JetBrains/RemoteDev/dist/a1/bin/remote-dev-server.sh",
               "sessions/xfce4-session-host:0"]
    os.makedirs(cache, exist_ok=True)
    script = "cd ~/.cache && " + " ".join("mkdir -p %s; echo x > %s;" % (os.path.dirname(s), s)
                                          for s in scripts)
    r = harness([BUSYBOX, "sh", "-c", script + " echo done"], wd, policy=None, env={"HOME": home})
    check("done" in r.stdout, r.stderr)
    for s in scripts:
        f = os.path.join(cache, s)
        check(not os.path.exists(f), "~/.cache/%s written" % s)
        rec = _refusal(r, f)
        check(rec["rule"] == "cache-scripts" and rec["layer"] == "kernel", "record %r" % rec)
    # Zig's packages and coursier's jars, checked when fetched and used
    # unchecked later: what predates the session is kept, new ones come.
    kept = ["zig/p/1220ab/build.zig", "coursier/v1/https/repo/x/x-1.0.jar"]
    for k in kept:
        os.makedirs(os.path.dirname(os.path.join(cache, k)), exist_ok=True)
        open(os.path.join(cache, k), "w").write("fetched\n")
    script = " ".join("echo evil >> ~/.cache/%s;" % k for k in kept)
    script += " mkdir -p ~/.cache/zig/p/1220cd && echo new > ~/.cache/zig/p/1220cd/build.zig && echo added"
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home})
    check("added" in r.stdout, "a new package refused: %r" % r.stderr)
    for k in kept:
        f = os.path.join(cache, k)
        check(open(f).read() == "fetched\n", "~/.cache/%s rewritten" % k)
        check(_refusal(r, f)["rule"] == "harness:keep-existing", r.dump())
    # The rest of ~/.cache stays the agent's.
    r = harness([BUSYBOX, "sh", "-c", "mkdir -p ~/.cache/pip/http && echo y > ~/.cache/pip/http/a"],
                wd, policy=None, env={"HOME": home})
    check(os.path.exists(os.path.join(cache, "pip", "http", "a")), r.stderr)


def test_project_files_the_users_shell_and_editors_run_are_asked(wd):
    """Project files that run code later, outside the harness, with no
    look from the user, beside those project-autorun listed: direnv's
    layout directory (nix-direnv evals .direnv/flake-profile-*.rc in the
    user's shell at every cd into the project while it is newer than
    the files it watches; `layout python` puts .direnv/python-X/bin
    first on that shell's PATH, so a `git` there runs for the user's
    git), a VS Code workspace file (its tasks and settings are
    .vscode's), Helix's languages.toml (the language servers it starts
    on opening a file). Each is asked, refused with nobody to answer,
    written by python, a static busybox, or moved in as a directory."""
    home = fake_home(wd)
    os.makedirs(os.path.join(wd.path, ".direnv"))
    rc = wd.file(".direnv/flake-profile-a1b2.rc", "export PATH=/nix/store/x/bin:$PATH\n")
    files = [".direnv/flake-profile-a1b2.rc", ".direnv/python-3.11/bin/git", "app.code-workspace",
             ".helix/languages.toml", "web/.direnv/python-3.12/bin/ls"]
    code = ("import os, sys\n"
            "for f in sys.argv[1:]:\n"
            "    try:\n"
            "        os.makedirs(os.path.dirname(f) or '.', exist_ok=True)\n"
            "        open(f, 'a').write('touch /tmp/pwned\\n'); print('wrote', f)\n"
            "    except OSError as e:\n"
            "        print('refused', f, e.errno)\n")
    r = harness([PYTHON, "-c", code] + files, wd, policy=None, env={"HOME": home})
    check("wrote" not in r.stdout, "written: %r %r" % (r.stdout, r.stderr))
    for f in files:
        rec = _refusal(r, os.path.join(wd.path, f))
        check(rec["rule"] == "project-autorun", "record %r" % rec)
    check(open(rc).read() == "export PATH=/nix/store/x/bin:$PATH\n", "the cached rc changed")
    script = ("echo 'touch /tmp/pwned' >> .direnv/flake-profile-a1b2.rc; echo '{}' > b.code-workspace; "
              "mkdir -p d/python-3.11/bin sub && echo x > d/python-3.11/bin/git && "
              "mv d sub/.direnv; echo done")
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home})
    check("done" in r.stdout, r.stderr)
    check(open(rc).read() == "export PATH=/nix/store/x/bin:$PATH\n", "busybox: the cached rc changed")
    check(not os.path.exists(os.path.join(wd.path, "b.code-workspace")), "busybox: workspace file")
    check(not os.path.exists(os.path.join(wd.path, "sub", ".direnv")) and
          os.path.exists(os.path.join(wd.path, "d", "python-3.11", "bin", "git")),
          "a directory moved in as .direnv")
    rec = r.one(op="rename", args_path2=os.path.join(wd.path, "sub", ".direnv"))
    check(rec["rule"] == "project-autorun" and rec["layer"] == "kernel", "record %r" % rec)


GIT_ENV = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x"}


def git_repo(wd, home):
    """A repository in wd with one commit, made outside the harness;
    the environment git ran in (HOME home)."""
    genv = dict(os.environ, HOME=home, **GIT_ENV)
    genv.pop("LD_PRELOAD", None)
    subprocess.run(["git", "init", "-q", wd.path], check=True, env=genv)
    wd.file("a.txt", "a\n")
    subprocess.run(["git", "-C", wd.path, "add", "a.txt"], check=True, env=genv)
    subprocess.run(["git", "-C", wd.path, "commit", "-qm", "0"], check=True, env=genv)
    return genv


def test_no_symbolic_link_is_left_in_a_git_directory(wd):
    """Git writes its files in a .git in place, following a symbolic
    link (COMMIT_EDITMSG, ORIG_HEAD, FETCH_HEAD, MERGE_MSG): a link the
    agent left at .git/COMMIT_EDITMSG to a file it may not write had the
    user's next `git commit`, outside the harness, write that file (here
    ~/victim: ~/.ssh/authorized_keys or ~/.bashrc alike). Such a link is
    refused beneath any .git, made by ln, moved in by a rename (python),
    or hard-linked in (busybox, a static program: the kernel layer);
    git's own work in the repository goes on."""
    home = fake_home(wd)
    victim = os.path.join(home, "victim")
    open(victim, "w").write("the user's\n")
    genv = git_repo(wd, home)
    git = os.path.join(wd.path, ".git")
    code = ("import os\n"
            "os.symlink(os.path.expanduser('~/victim'), 'l2')\n"
            "for dst in ('.git/ORIG_HEAD', '.git/MERGE_MSG'):\n"
            "    try:\n"
            "        os.rename('l2', dst); print('moved', dst)\n"
            "    except OSError as e:\n"
            "        print('refused', dst, e.errno)\n")
    script = ("ln -sf ~/victim .git/COMMIT_EDITMSG; ln -s ~/victim .git/FETCH_HEAD; "
              "%s -c \"%s\"; echo b >> a.txt && git commit -qam 1 && echo commit-ok") % (
                  PYTHON, code.replace('"', '\\"'))
    r = harness(["sh", "-c", script], wd, policy=None, env=dict(GIT_ENV, HOME=home))
    check("moved" not in r.stdout, r.stdout)
    for name in ("COMMIT_EDITMSG", "FETCH_HEAD", "ORIG_HEAD", "MERGE_MSG"):
        check(not os.path.islink(os.path.join(git, name)), ".git/%s is a link" % name)
    check("commit-ok" in r.stdout, "git's own commit refused: %r %r" % (r.stdout, r.stderr))
    rec = r.one(op="symlink", args_path=os.path.join(git, "FETCH_HEAD"))
    check(rec["verdict"] == "deny" and rec["rule"] == "harness:git-config", "record %r" % rec)
    rec = r.one(op="rename", args_path2=os.path.join(git, "ORIG_HEAD"))
    check(rec["verdict"] == "deny" and rec["rule"] == "harness:git-config", "record %r" % rec)

    # A static program: a symlink, and a hard link to a link.
    r = harness([BUSYBOX, "sh", "-c", "ln -s ~/victim l3; ln l3 .git/COMMIT_EDITMSG; "
                 "ln -s ~/victim .git/COMMIT_EDITMSG; echo done"], wd, policy=None,
                env={"HOME": home})
    check("done" in r.stdout, r.stderr)
    check(not os.path.islink(os.path.join(git, "COMMIT_EDITMSG")), "busybox: a link in .git")
    rec = r.one(op="link", args_path=os.path.join(git, "COMMIT_EDITMSG"))
    check(rec["verdict"] == "deny" and rec["layer"] == "kernel", "record %r" % rec)

    # The user's next commit, outside: the victim stays as it was.
    open(os.path.join(wd.path, "a.txt"), "a").write("c\n")
    subprocess.run(["git", "-C", wd.path, "commit", "-qam", "user message"], env=genv,
                   capture_output=True)
    check(open(victim).read() == "the user's\n", "the user's git commit wrote ~/victim")

    # A link to a name in its own directory is refused too: git would
    # write MERGE_MSG (text a merged branch chooses) into .git/config.
    r = harness(["sh", "-c", "ln -s config .git/MERGE_MSG || echo refused"], wd,
                policy=None, env=dict(GIT_ENV, HOME=home))
    check("refused" in r.stdout and not os.path.islink(os.path.join(git, "MERGE_MSG")),
          "a link to .git/config: %r %r" % (r.stdout, r.stderr))


def test_browser_caches_are_the_browsers(wd):
    """The default denied the browsers' profiles (~/.mozilla,
    ~/.config/google-chrome...) but not their halves in ~/.cache, a write
    root: Firefox's cache2 (the pages the user saw, a webmail's too) and
    startupCache (precompiled scripts of the browser's own chrome),
    Chrome's Cache and Code Cache, Evolution's copies of the user's
    mail. The agent read them (cat, python, a static busybox) and could
    write a cached script that the browser would run in a site's origin.
    Each is denied, reading and writing, as the profiles are."""
    home = fake_home(wd)
    files = {".cache/mozilla/firefox/p.default-release/cache2/entries/0A1B": "WEBMAIL-PAGE\n",
             ".cache/google-chrome/Default/Cache/Cache_Data/f_000001": "BANK-PAGE\n",
             ".cache/evolution/mail/1a2b/folders/INBOX/cur/00/1": "MAIL-BODY\n"}
    for rel, text in files.items():
        p = os.path.join(home, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").write(text)
    paths = [os.path.join(home, rel) for rel in files]
    new = os.path.join(home, ".cache/mozilla/firefox/p.default-release/cache2/entries/EVIL")
    for prog in (["sh", "-c", "cat \"$@\"; echo x > %s; echo done" % new, "sh"] + paths,
                 [BUSYBOX, "sh", "-c", "cat \"$@\"; echo x > %s; echo done" % new, "sh"] + paths,
                 [PYTHON, "-c", "import sys\nfor p in sys.argv[1:]:\n    try: print(open(p).read())\n"
                  "    except OSError as e: print(e.errno)\nprint('done')"] + paths):
        r = harness(prog, wd, policy=None, env={"HOME": home})
        check("done" in r.stdout, "%s: %r" % (prog[0], r.stderr))
        for text in files.values():
            check(text.strip() not in r.stdout, "%s read %s" % (prog[0], text.strip()))
        check(not os.path.exists(new), "%s wrote a cache entry" % prog[0])
    rec = r.one(args_path=paths[0], verdict="deny")
    check(rec["rule"] == "browser-profiles", "record %r" % rec)
