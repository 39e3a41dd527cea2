"""Attack review 26, part a: files that run code later outside the
sandbox, and services outside it that trust the agent's uid (DESIGN
classes 4 and 5), from a static busybox and through the shim, under the
embedded default policy in enforce mode.

Outside every write root the default's file_write: deny holds them all.
But a session started in $HOME (`cd ~ && harness-exec -- agent`) has
$HOME as its project, and its project rule allowed $HOME/**: of the
files the user's shell, session, PATH and tools run later, only the
seven shell-rc names were refused; .zshenv, .bash_login, systemd user
units, XDG autostart, ~/.local/bin/git, a .pth in the user site,
~/.gitconfig, ~/.vimrc, VS Code's settings... were written."""

import os

from lib import PYTHON, check, harness

BUSYBOX = "/bin/busybox"

# Each a place a program of the user's runs or sources later, with the
# rule that refuses it.
PLACES = {
    ".zshenv": "shell-rc",
    ".bash_login": "shell-rc",
    ".bashrc.d/x.sh": "shell-rc",
    ".config/fish/conf.d/x.fish": "shell-rc",
    ".inputrc": "shell-rc",
    ".cargo/env": "shell-rc",
    ".config/systemd/user/x.service": "session-autorun",
    ".local/share/systemd/user/x.timer": "session-autorun",
    ".pam_environment": "session-autorun",
    ".config/autostart/x.desktop": "session-autorun",
    ".local/share/applications/x.desktop": "session-autorun",
    ".config/mimeapps.list": "session-autorun",
    ".local/share/dbus-1/services/org.x.service": "session-autorun",
    ".xsessionrc": "session-autorun",
    ".local/bin/git": "user-path",
    ".cargo/bin/ls": "user-path",
    "go/bin/git": "user-path",
    ".local/lib/python3.11/site-packages/x.pth": "user-path",
    ".local/lib/python3.11/site-packages/usercustomize.py": "user-path",
    ".local/share/pnpm/git": "user-path",
    ".gitconfig": "tool-rc",
    ".config/git/config": "tool-rc",
    ".vimrc": "tool-rc",
    ".config/nvim/init.lua": "tool-rc",
    ".emacs.d/init.el": "tool-rc",
    ".config/Code/User/settings.json": "tool-rc",
    ".cargo/config.toml": "tool-rc",
    ".config/direnv/direnvrc": "tool-rc",
    ".ipython/profile_default/startup/x.py": "tool-rc",
    ".gdbinit": "tool-rc",
    ".tmux.conf": "tool-rc",
    ".lesskey": "tool-rc",
    ".gradle/init.d/x.gradle": "tool-rc",
}

WRITE_ALL = r'''
import os, sys
for p in sys.argv[1:]:
    try:
        os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o755))
        print("wrote", p)
    except OSError as e:
        print("refused", p, e.errno)
'''

# The ways around a name: a directory filled in the project and moved
# or linked to where the user's programs look, a file linked or renamed
# over one.
WAYS = r'''
cd "$HOME"
mkdir -p envd && echo 'PATH=/h/evil:$PATH' > envd/x.conf
mv envd .config/environment.d
mkdir -p evil && echo 'echo pwned' > evil/git && chmod +x evil/git
ln -s "$HOME/evil" bin
ln -s evil .vim
echo 'echo pwned' > mine
ln mine .zlogin
mv mine .bash_aliases
echo ok > notes.txt && echo project-ok
'''


def _home_as_project(wd):
    """$HOME is the project itself, with the directories a user's $HOME
    has (the places beneath them are new files)."""
    for rel in PLACES:
        os.makedirs(os.path.dirname(os.path.join(wd.path, rel)), exist_ok=True)
    os.makedirs(os.path.join(wd.path, ".config"), exist_ok=True)
    return wd.path


def test_a_session_in_home_leaves_no_code_for_later(wd):
    home = _home_as_project(wd)
    paths = [os.path.join(home, rel) for rel in PLACES]
    script = "".join("echo pwned >> '%s'\n" % p for p in paths)
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home})
    r2 = harness([PYTHON, "-c", WRITE_ALL] + paths, wd, policy=None, env={"HOME": home})
    places_refused(home, PLACES, r, r2)


def places_refused(home, places, static, shim):
    """Each place (relative to home: its rule) unwritten, and each run's
    records deny it by its rule, the static program's in the kernel."""
    check("wrote" not in shim.stdout, "the shim's way wrote: %r" % shim.stdout)
    for rel, rule in places.items():
        p = os.path.join(home, rel)
        check(not os.path.exists(p), "~/%s was written" % rel)
        for run, layer in ((static, "kernel"), (shim, None)):
            recs = run.events(args_path=p)
            check(recs, "~/%s: no record (%s)" % (rel, layer or "shim"))
            for rec in recs:
                check(rec["verdict"] == "deny" and rec["rule"] == rule and rec["enforced"] is True,
                      "~/%s: record %r, want a deny by %s" % (rel, rec, rule))
            if layer:
                check(any(x.get("layer") == layer for x in recs), "~/%s: %r" % (rel, recs))


def test_a_session_in_home_puts_no_code_in_place_by_a_move_or_a_link(wd):
    home = _home_as_project(wd)
    r = harness([BUSYBOX, "sh", "-c", WAYS], wd, policy=None, env={"HOME": home})
    check("project-ok" in r.stdout, "a plain project write refused: %r %r" % (r.stdout, r.stderr))
    for rel in (".config/environment.d", "bin", ".vim", ".zlogin", ".bash_aliases"):
        check(not os.path.lexists(os.path.join(home, rel)), "~/%s put in place" % rel)
    rec = r.one(op="rename", args_path2=os.path.join(home, ".config/environment.d"))
    check(rec["verdict"] == "deny" and rec["rule"] == "session-autorun", "record %r" % rec)
    for rel, rule in (("bin", "user-path"), (".vim", "tool-rc"), (".zlogin", "shell-rc")):
        recs = r.events(args_path=os.path.join(home, rel), verdict="deny")
        check(recs and all(x["rule"] == rule for x in recs), "~/%s: %r" % (rel, recs))
    rec = r.one(op="rename", args_path2=os.path.join(home, ".bash_aliases"))
    check(rec["verdict"] == "deny" and rec["rule"] == "shell-rc", "record %r" % rec)


def test_caches_the_users_shell_and_tools_run_from_are_asked(wd):
    """~/.cache is a write root. Not listed were zsh4humans' install
    (~/.zshenv sources ~/.cache/zsh4humans/v5/z4h.zsh at every zsh
    start), znap's cached evals, ble.sh's cached keymaps,
    impatient.nvim's bytecode (loaded at every nvim start), the
    binaries Electron's and wasm-pack's installs take from there
    unchecked, PEX's environments; thefuck's shelve (a pickle, loaded
    at each fuck). The rest of the cache stays the agent's."""
    from test_default_policy import fake_home
    home = fake_home(wd)
    os.makedirs(os.path.join(home, ".cache"), exist_ok=True)
    asked = ["zsh4humans/v5/z4h.zsh", "zsh-snap/eval/starship.zsh", "blesh/0.4/decode.bind",
             "nvim/luacache_chunks", "electron/3b1f/electron-v30.0.0-linux-x64.zip",
             ".wasm-pack/wasm-bindgen-1a2b/wasm-bindgen", "pex/venvs/1/a/pex"]
    denied = ["thefuck.db"]
    script = "cd ~/.cache || exit 9; " + "".join("mkdir -p '%s'; echo x > '%s'; " % (
        os.path.dirname(p) or ".", p) for p in asked + denied) + "echo y > pip-x && echo done"
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home})
    check("done" in r.stdout, "a plain cache write refused: %r" % r.stderr)
    for rel, verdict, rule in ([(p, "ask", "cache-code") for p in asked] +
                               [(p, "deny", "cache-objects") for p in denied]):
        path = os.path.join(home, ".cache", rel)
        check(not os.path.exists(path), "~/.cache/%s written" % rel)
        rec = r.one(args_path=path)
        check(rec["verdict"] == verdict and rec["rule"] == rule and rec["layer"] == "kernel",
              "~/.cache/%s: record %r" % (rel, rec))


TOOLCHAIN = r'''
mkdir -p tc/bin && printf '#!/bin/sh\necho the-agents-cargo\n' > tc/bin/cargo && chmod +x tc/bin/cargo
printf '[toolchain]\npath = "%s/tc"\n' "$PWD" > rust-toolchain.toml
mkdir -p .cargo && printf '[build]\nrustc-wrapper = "%s/tc/bin/cargo"\n' "$PWD" > .cargo/config.toml
printf 'pnpmfile=tc/hooks.cjs\n' > .npmrc
printf 'preload = ["./tc/x.ts"]\n' > bunfig.toml
printf -- '-J-javaagent:tc/a.jar\n' > .sbtopts
echo 'tc/bin/cargo' > .envrc.local
echo done
'''


def test_the_projects_toolchain_is_not_the_agents(wd):
    """A rust-toolchain.toml in the project naming a toolchain by path
    (rustup's [toolchain] path) makes every cargo and rustc the user
    runs in the project, and rust-analyzer's on opening it, the
    program at that path: tried here with rustup 1.29, the user's next
    `cargo --version` printed the agent's line. Likewise .cargo's
    rustc-wrapper, pnpm's pnpmfile by the project's .npmrc (the
    .pnpmfile.cjs it names is asked about already), bun's preload,
    sbt's JVM options, the .envrc.local a team's .envrc sources
    (source_env_if_exists: direnv asks about the .envrc only). Now asked
    (project-autorun), like the wrappers."""
    r = harness([BUSYBOX, "sh", "-c", TOOLCHAIN], wd, policy=None)
    check("done" in r.stdout, "%r %r" % (r.stdout, r.stderr))
    check(os.path.exists(os.path.join(wd.path, "tc", "bin", "cargo")), "a plain project file refused")
    for rel in ("rust-toolchain.toml", ".cargo/config.toml", ".npmrc", "bunfig.toml", ".sbtopts",
                ".envrc.local"):
        p = os.path.join(wd.path, rel)
        check(not os.path.exists(p), "%s written" % rel)
        rec = r.one(args_path=p)
        check(rec["verdict"] == "ask" and rec["rule"] == "project-autorun" and rec["layer"] == "kernel",
              "%s: record %r" % (rel, rec))
    r = harness([PYTHON, "-c", WRITE_ALL, os.path.join(wd.path, "rust-toolchain")], wd, policy=None)
    check("refused" in r.stdout, r.stdout)
    rec = r.one(args_path=os.path.join(wd.path, "rust-toolchain"))
    check(rec["verdict"] == "ask" and rec["rule"] == "project-autorun", "record %r" % rec)


def test_an_agent_profile_keeps_npxs_packages_as_they_were(wd):
    """The gemini profile (Gemini CLI started with npx) allowed
    ~/.npm/_npx/** whole, which the toolchains profile leaves out
    because npx runs what is there without a look: the agent rewrote
    Gemini CLI's own code in npx's cache (and any package the user runs
    with npx), and the user's next npx ran it outside the harness. What
    predates the session is now kept (keep_existing); npx's new
    installs in the session still land."""
    from test_default_policy import fake_home
    home = fake_home(wd)
    old = os.path.join(home, ".npm/_npx/0a1b/node_modules/@google/gemini-cli/dist/index.js")
    os.makedirs(os.path.dirname(old))
    with open(old, "w") as f:
        f.write("// gemini\n")
    new = os.path.join(home, ".npm/_npx/2c3d/node_modules/x/index.js")
    script = ("echo 'require(\"child_process\").exec(\"evil\")' >> '%s'; mkdir -p '%s' && "
              "echo y > '%s' && echo added" % (old, os.path.dirname(new), new))
    for prog in ([BUSYBOX, "sh", "-c", script], ["sh", "-c", script]):
        r = harness(prog, wd, policy=None, env={"HOME": home}, extra=["--profile", "gemini"])
        check(open(old).read() == "// gemini\n", "%s: npx's package rewritten" % prog[0])
        check("added" in r.stdout and os.path.exists(new),
              "%s: a new install refused: %r %r" % (prog[0], r.stdout, r.stderr))
        rec = r.one(args_path=old, verdict="deny")
        check(rec["rule"] == "harness:keep-existing", "%s: record %r" % (prog[0], rec))
        os.unlink(new)


CLAUDE_JSON = ('{"numStartups": 1, "mcpServers": {"mine": {"command": "the-users"}}, '
               '"projects": {"/p": {"mcpServers": {}}}}')

REWRITE = r'''
import json, os, sys
h = os.environ["HOME"]
conf = h + "/.claude.json"
def put(name, obj, text=None):
    tmp = "%s.tmp.%d.%s" % (conf, os.getpid(), name)
    with open(tmp, "w") as f:
        f.write(text if text is not None else json.dumps(obj))
    try:
        os.rename(tmp, conf)
        print(name, "landed")
    except OSError as e:
        print(name, "refused", e.errno)
mine = {"mine": {"command": "the-users"}}
evil = {"command": "sh", "args": ["-c", "touch /tmp/pwned"]}
put("benign", {"numStartups": 2, "mcpServers": mine, "projects": {"/p": {"mcpServers": {}}}})
put("user-scope", {"numStartups": 3, "mcpServers": dict(mine, x=evil)})
put("project-scope", {"numStartups": 3, "mcpServers": mine, "projects": {"/p": {"mcpServers": {"x": evil}}}})
put("changed", {"numStartups": 3, "mcpServers": {"mine": evil}})
put("duplicate", None, '{"mcpServers": %s, "mcpServers": {"x": %s}}' % (json.dumps(mine), json.dumps(evil)))
# an fd kept on the file renamed, written after its check
tmp = conf + ".tmp.fd"
fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
os.write(fd, json.dumps({"numStartups": 4, "mcpServers": mine}).encode())
os.rename(tmp, conf)
os.lseek(fd, 0, 0)
os.write(fd, json.dumps({"mcpServers": dict(mine, x=evil)}).encode())
os.close(fd)
for how, fn in (("write", lambda: open(conf, "w").write(json.dumps({"mcpServers": {"x": evil}}))),
                ("append", lambda: open(conf, "a").write("x")),
                ("truncate", lambda: os.truncate(conf, 0)),
                ("link", lambda: os.link(conf, h + "/c2")),
                # moved away or removed, so that what the user restores
                # is a backup of the agent's; a link put in its place
                ("move", lambda: os.rename(conf, conf + ".tmp.moved")),
                ("unlink", lambda: os.unlink(conf)),
                ("symlink", lambda: os.symlink(h + "/evil.json", conf))):
    try:
        fn()
        print(how, "done")
    except OSError as e:
        print(how, "refused", e.errno)
'''


def test_claude_codes_config_takes_no_new_mcp_server(wd):
    """The claude profile lets the agent rewrite ~/.claude.json (Claude
    Code does at every start), which holds the user's MCP servers and
    each project's: commands the user's next claude starts outside the
    harness. An agent added its own there. Now a rename onto it lands
    only what names no server the file did not hold (a copy of the
    bytes checked, so an fd kept on the source writes nothing after),
    and nothing else writes it (rule harness:agent-config)."""
    from test_default_policy import fake_home
    home = fake_home(wd)
    conf = os.path.join(home, ".claude.json")
    with open(conf, "w") as f:
        f.write(CLAUDE_JSON)
    r = harness([PYTHON, "-c", REWRITE], wd, policy=None, env={"HOME": home},
                extra=["--profile", "claude"])
    out = r.stdout.split("\n")
    check("benign landed" in out, "Claude Code's own rewrite refused: %r %r" % (r.stdout, r.stderr))
    for name in ("user-scope", "project-scope", "changed", "duplicate"):
        check("%s landed" % name not in out, "%s: a server landed: %r" % (name, r.stdout))
    for how in ("write", "append", "truncate", "link", "move", "unlink", "symlink"):
        check("%s done" % how not in out, "%s: %r" % (how, r.stdout))
    import json
    check(os.path.isfile(conf) and not os.path.islink(conf), "~/.claude.json replaced")
    final = open(conf).read()
    check(json.loads(final).get("mcpServers") == {"mine": {"command": "the-users"}} and
          "sh" not in final, "~/.claude.json names the agent's server: %r" % final)
    recs = [x for x in r.events(op="rename", args_path2=conf) if x["verdict"] == "deny"]
    check(len(recs) >= 4 and all(x["rule"] == "harness:agent-config" for x in recs),
          "records %r" % recs)


SNAPSHOTS = r'''
import os, sys, time
d = os.environ["HOME"] + "/.claude/shell-snapshots"
later = d + "/snapshot-bash-later.sh"
for _ in range(200):  # another session, started after this one
    if os.path.exists(later):
        break
    time.sleep(0.05)
def tr(name, fn):
    try:
        fn()
        print(name, "done")
    except OSError as e:
        print(name, "refused", e.errno)
def append(p, text="touch /tmp/pwned\n"):
    with open(p, "a") as f:
        f.write(text)
tr("other", lambda: append(d + "/snapshot-bash-other.sh"))
tr("later", lambda: append(later))
tr("env", lambda: append(os.environ["HOME"] + "/.claude/session-env/s0/hook-0.sh"))
tr("history", lambda: append(os.environ["HOME"] + "/.claude/file-history/s0/0a1b@v1"))
tr("unlink", lambda: os.unlink(d + "/snapshot-bash-other.sh"))
tr("rename-over", lambda: (open(d + "/mine.tmp", "w").close(),
                           os.rename(d + "/mine.tmp", d + "/snapshot-bash-other.sh")))
tr("own", lambda: (append(d + "/snapshot-bash-mine.sh", "x\n"), append(d + "/snapshot-bash-mine.sh", "y\n")))
'''


def test_another_claude_sessions_shell_snapshot_is_not_the_agents(wd):
    """Claude Code sources its session's shell snapshot
    (~/.claude/shell-snapshots/snapshot-*.sh, the user's functions and
    aliases) and its hooks' environment (~/.claude/session-env) before
    every Bash command, and rewinds an edit from its backup in
    ~/.claude/file-history. The claude profile allowed them whole, so the
    agent rewrote the snapshot of another Claude Code session of the
    user's, running outside the harness, which ran the agent's line in
    its next command: one made before the session and one made after it
    began (keep_existing would miss that). Now a file there is written
    only if the session made it (own_files, rule harness:own-files)."""
    from lib import Started
    from test_default_policy import fake_home
    home = fake_home(wd)
    snaps = os.path.join(home, ".claude", "shell-snapshots")
    env = os.path.join(home, ".claude", "session-env", "s0")
    hist = os.path.join(home, ".claude", "file-history", "s0")
    for d in (snaps, env, hist):
        os.makedirs(d)
    for p in (os.path.join(snaps, "snapshot-bash-other.sh"), os.path.join(env, "hook-0.sh"),
              os.path.join(hist, "0a1b@v1")):
        with open(p, "w") as f:
            f.write("alias ll='ls -l'\n")
    run = Started([PYTHON, "-c", SNAPSHOTS], wd, policy=None, env={"HOME": home},
                  extra=["--profile", "claude"])
    import time
    time.sleep(1.0)
    later = os.path.join(snaps, "snapshot-bash-later.sh")
    with open(later, "w") as f:
        f.write("alias ll='ls -l'\n")
    r = run.join(120)
    out = r.stdout.split("\n")
    check("own done" in out, "the session's own snapshot refused: %r %r" % (r.stdout, r.stderr))
    check(open(os.path.join(snaps, "snapshot-bash-mine.sh")).read() == "x\ny\n", "own snapshot")
    for name in ("other", "later", "env", "history", "unlink", "rename-over"):
        check("%s refused 13" % name in out, "%s: %r" % (name, r.stdout))
    for p in (os.path.join(snaps, "snapshot-bash-other.sh"), later, os.path.join(env, "hook-0.sh"),
              os.path.join(hist, "0a1b@v1")):
        check(open(p).read() == "alias ll='ls -l'\n", "%s rewritten" % p)
        recs = r.events(args_path=p, verdict="deny")
        check(recs and all(x["rule"] == "harness:own-files" for x in recs), "%s: %r" % (p, recs))


def test_other_agents_profiles_leave_nothing_their_next_run_executes(wd):
    """The same class in the other agents' profiles: Codex's shell
    snapshots (a concurrent Codex session outside sources its own),
    OpenCode's downloaded binaries (~/.local/share/opencode/bin: the
    language servers and tools its next start runs), Aider's tags cache
    in HOME (a diskcache of pickles). Each was written; now the
    snapshots are own_files, the binaries keep_existing, the pickles
    denied."""
    from test_default_policy import fake_home
    home = fake_home(wd)
    cases = (  # profile, a file there before, a new one, rule refusing the old
        ("codex", ".codex/shell_snapshots/other.sh", ".codex/shell_snapshots/mine.sh",
         "harness:own-files"),
        ("opencode", ".local/share/opencode/bin/rg", ".local/share/opencode/bin/new-lsp",
         "harness:keep-existing"),
        ("aider", ".aider/caches/tags.cache.v4/cache.db", None, "aider-pickles"),
    )
    for profile, old, new, rule in cases:
        old = os.path.join(home, old)
        os.makedirs(os.path.dirname(old), exist_ok=True)
        with open(old, "w") as f:
            f.write("before\n")
        script = "echo 'touch /tmp/pwned' >> '%s'; " % old
        if new:
            new = os.path.join(home, new)
            script += "echo x > '%s' && echo x >> '%s' && " % (new, new)
        script += "echo done"
        r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home},
                    extra=["--profile", profile])
        check("done" in r.stdout, "%s: %r %r" % (profile, r.stdout, r.stderr))
        check(open(old).read() == "before\n", "%s: %s rewritten" % (profile, old))
        rec = r.one(args_path=old, verdict="deny")
        check(rec["rule"] == rule and rec["layer"] == "kernel", "%s: record %r" % (profile, rec))
        if new:
            check(open(new).read() == "x\nx\n", "%s: the session's own file refused" % profile)


BARE = r'''
r="$1"
printf '#!/bin/sh\ntouch "%s"\n' "$2" > "$r/hooks/post-receive" && chmod +x "$r/hooks/post-receive" && echo hook-written
printf '[core]\n\thooksPath = %s\n' "$3" >> "$r/config" && echo config-appended
mkdir -p "$3" && printf '#!/bin/sh\ntouch "%s"\n' "$2" > "$3/post-receive" && chmod +x "$3/post-receive"
ln -s "$3" "$r/hooks2" && mv "$r/hooks" "$r/hooks.old" && mv "$r/hooks2" "$r/hooks" && echo hooks-relinked
echo done
'''


def test_a_bare_repository_in_the_project_runs_no_hook_of_the_agents(wd):
    """The repositories the agent may find in its project that are not
    beneath a .git: a bare one (a dotfiles repository, ~/.dotfiles,
    worked on with --git-dir from a $HOME that is the project; one the
    user pushes to, remote.git). Outside the project such a layout's
    hooks and config were refused (caches), inside it only a HEAD: the
    agent wrote remote.git/hooks/post-receive, which the user's next
    push ran outside the harness. Now a bare layout is judged wherever
    it is (harness:git-config); git's own writes there still work."""
    import shutil
    import subprocess
    git = shutil.which("git")
    if not git:
        from lib import Skip
        raise Skip("no git")
    remote = os.path.join(wd.path, "remote.git")
    subprocess.run([git, "init", "-q", "--bare", remote], check=True)
    mark = os.path.join(wd.state, "hook-ran")
    evil = os.path.join(wd.path, "evilhooks")
    script = wd.file("bare.sh", BARE)
    r = harness([BUSYBOX, "sh", script, remote, mark, evil], wd, policy=None)
    check("done" in r.stdout, "%r %r" % (r.stdout, r.stderr))
    for what in ("hook-written", "config-appended", "hooks-relinked"):
        check(what not in r.stdout.split(), "%s: %r" % (what, r.stdout))
    rec = r.one(args_path=os.path.join(remote, "hooks", "post-receive"), verdict="deny")
    check(rec["rule"] == "harness:git-config" and rec["layer"] == "kernel", "record %r" % rec)
    # git's own configuration of it, by a rename, naming no code: works
    g = harness([git, "--git-dir", remote, "config", "receive.denyCurrentBranch", "ignore"],
                wd, policy=None)
    g.expect_status(0)
    # The user's next push, outside the harness.
    src = os.path.join(wd.state, "src")
    env = dict(os.environ, GIT_AUTHOR_NAME="u", GIT_AUTHOR_EMAIL="u@x", GIT_COMMITTER_NAME="u",
               GIT_COMMITTER_EMAIL="u@x", HOME=wd.state)
    subprocess.run([git, "init", "-q", src], check=True, env=env)
    subprocess.run([git, "-C", src, "commit", "-q", "--allow-empty", "-m", "x"], check=True, env=env)
    subprocess.run([git, "-C", src, "push", "-q", remote, "HEAD:refs/heads/main"], check=True, env=env,
                   capture_output=True)
    check(not os.path.exists(mark), "the user's push ran the agent's hook")
    # The same for a dotfiles repository in a $HOME that is the project.
    dot = os.path.join(wd.path, ".dotfiles")
    subprocess.run([git, "init", "-q", "--bare", dot], check=True)
    r = harness([BUSYBOX, "sh", "-c", "echo 'touch %s' > ~/.dotfiles/hooks/pre-commit; echo done" % mark],
                wd, policy=None, env={"HOME": wd.path})
    check(not os.path.exists(os.path.join(dot, "hooks", "pre-commit")), "~/.dotfiles hook written")
    rec = r.one(args_path=os.path.join(dot, "hooks", "pre-commit"), verdict="deny")
    check(rec["rule"] == "harness:git-config", "record %r" % rec)
