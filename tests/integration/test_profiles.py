"""Composed policies (include:, --profile, built-in profiles), the files
that run code later, and refusals that explain themselves once."""

import os
import shutil
import subprocess

from lib import BUILD, EXEC, HELPERS, POLICY_TOOL, check, harness
from test_default_policy import fake_home

BUSYBOX = shutil.which("busybox")


def test_toolchains_profile_caches_but_not_code(wd):
    home = fake_home(wd)
    script = ("mkdir -p ~/.npm/_cacache/index && echo c > ~/.npm/_cacache/index/x && "
              "mkdir -p ~/.cargo/registry/cache && echo c > ~/.cargo/registry/cache/a.crate; "
              "mkdir -p ~/.npm/_npx/1/node_modules 2>/dev/null; "
              "echo evil > ~/.cargo/config.toml; echo done")
    r = harness(["sh", "-c", script], wd, policy=None, env={"HOME": home})
    r.expect_status(0)
    check(os.path.exists(os.path.join(home, ".npm", "_cacache", "index", "x")), "npm cache not written")
    check(os.path.exists(os.path.join(home, ".cargo", "registry", "cache", "a.crate")), "cargo cache not written")
    check(not os.path.exists(os.path.join(home, ".npm", "_npx", "1")), "npx's code store was writable")
    check(not os.path.exists(os.path.join(home, ".cargo", "config.toml")), "cargo config was writable")
    rec = r.one(args_path=os.path.join(home, ".npm", "_cacache", "index", "x"))
    check(rec["rule"] == "npm-cache" and rec["verdict"] == "allow", "record %r" % rec)
    start = r.one(event="session_start")
    names = [s["name"] for s in start["policy_sources"]]
    check(names == ["<default>", "profile:toolchains"], "sources %r" % names)
    check(all(len(s["sha256"]) == 64 for s in start["policy_sources"]), "source digests")


def test_included_policy_file_is_protected(wd):
    extra = wd.file("team/extra.yaml", "version: 1\nfiles:\n"
                    "  - {id: scratch, access: write, allow: \"$CWD/scratch/**\"}\n")
    main = wd.file("team/main.yaml", "version: 1\ninclude: [./extra.yaml]\n"
                   "files:\n  - {id: tmp, access: write, allow: \"$TMPDIR/**\"}\n")
    # The agent tries to widen its next session's rules, by writing
    # and by renaming over the included file; the project itself is
    # not writable under this policy, only scratch/. (It exists before:
    # Landlock refuses new entries beside a read-denied one.)
    os.makedirs(os.path.join(wd.path, "scratch"))
    script = ("echo ok > scratch/a; "
              "echo '  - {id: all, access: write, allow: \"/**\"}' >> team/extra.yaml; "
              "echo 'version: 1' > scratch/x.yaml; mv scratch/x.yaml team/extra.yaml; "
              "cat scratch/a")
    before = open(extra).read()
    r = harness(["sh", "-c", script], wd, policy=main)
    check(open(extra).read() == before, "the included policy file was changed")
    check(r.stdout == "ok\n", "scratch write failed: %r %r" % (r.stdout, r.stderr))
    rec = r.one(op="write", args_path=os.path.realpath(extra))
    check(rec["verdict"] == "deny" and rec["rule"] == "harness:protect", "record %r" % rec)


def test_include_errors_name_the_included_file(wd):
    wd.file("p/bad.yaml", "version: 1\nfiles:\n  - deny: relative/x\n")
    main = wd.file("p/main.yaml", "version: 1\ninclude:\n  - bad.yaml\n")
    r = harness(["true"], wd, policy=main)
    check(r.status == 2, "status %s" % r.status)
    want = "%s:3:11:" % os.path.realpath(os.path.join(wd.path, "p", "bad.yaml"))
    check(want in r.stderr and "included from %s:3" % main in r.stderr,
          "stderr %r" % r.stderr)
    wd.file("p/audit.yaml", "version: 1\nmode: audit\n")
    wd.file("p/main2.yaml", "include: [audit.yaml]\n")
    r = harness(["true"], wd, policy=os.path.join(wd.path, "p", "main2.yaml"))
    check(r.status == 2 and "not allowed in an included policy" in r.stderr,
          "an include turned audit mode on: %s %r" % (r.status, r.stderr))
    p = subprocess.run([EXEC, "--profile", "nosuch", "--", "true"], cwd=wd.path,
                       capture_output=True, text=True)
    check(p.returncode == 2 and "no built-in profile 'nosuch'" in p.stderr and
          "toolchains" in p.stderr, "%s %r" % (p.returncode, p.stderr))


def test_policy_show_and_profiles(wd):
    p = subprocess.run([POLICY_TOOL, "profiles"], capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout.startswith("") and "toolchains" in p.stdout,
          "profiles: %r" % p.stdout)
    for line in p.stdout.splitlines():
        name = line.split()[0]
        q = subprocess.run([POLICY_TOOL, "show", "--profile", name],
                           capture_output=True, text=True)
        check(q.returncode == 0 and "#   profile:%s" % name in q.stdout,
              "show --profile %s: %s %r" % (name, q.returncode, q.stdout[:300] + q.stderr))
    q = subprocess.run([POLICY_TOOL, "show"], capture_output=True, text=True,
                       env=dict(os.environ, HOME="/home/someone"))
    check("  - id: npm-cache    # profile:toolchains:" in q.stdout, q.stdout[:500])
    check('allow: ["/home/someone/.npm/_cacache/**"' in q.stdout, "patterns not expanded")
    check("  - id: ssh    # <default>:" in q.stdout, "default rule origin missing")
    e = subprocess.run([POLICY_TOOL, "explain", "--profile", "toolchains", "--",
                        "write", "/home/someone/.m2/repository/x.xml"],
                       capture_output=True, text=True, env=dict(os.environ, HOME="/home/someone"))
    check(e.stdout.startswith("allow") and "rule=maven-repository" in e.stdout, e.stdout + e.stderr)
    p = subprocess.run([EXEC, "--profile", "none", "--profile", "toolchains", "--", "true"],
                       capture_output=True, text=True)
    check(p.returncode == 2 and "excludes" in p.stderr, p.stderr)


def test_project_files_that_run_code_later_need_approval(wd):
    home = fake_home(wd)
    script = ("echo 'eval $(curl x)' > .envrc; mkdir -p .claude .vscode .husky sub; "
              "echo '{\"hooks\":{}}' > .claude/settings.json; echo '{}' > .vscode/tasks.json; "
              "echo 'sh' > .husky/pre-commit; echo x > sub/.envrc; echo '{}' > .mcp.json; "
              "echo fine > .claude/notes.md; echo ok > notes.txt; cat notes.txt")
    r = harness(["sh", "-c", script], wd, policy=None, env={"HOME": home})
    check(r.stdout == "ok\n", "stdout %r" % r.stdout)
    # (.husky itself is refused at its mkdir; its hook then has no
    # directory: ENOENT, as the kernel would say.)
    for rel, op in ((".envrc", "write"), (".claude/settings.json", "write"),
                    (".vscode/tasks.json", "write"), (".husky", "mkdir"),
                    ("sub/.envrc", "write"), (".mcp.json", "write")):
        path = os.path.join(wd.path, rel)
        check(not os.path.exists(path), "%s was written" % rel)
        rec = r.one(args_path=path, op=op)
        check(rec["verdict"] == "ask" and rec["rule"] == "project-autorun", "%s: %r" % (rel, rec))
        check("harness: not approved: %s %s (rule project-autorun at " % (op, path) in r.stderr,
              "no notice for %s: %r" % (rel, r.stderr))
    check(os.path.exists(os.path.join(wd.path, ".claude", "notes.md")), "a plain file in .claude refused")


ASK_PUSH = """version: 1
exec:
  - id: push
    ask: "git push *"
files:
  - {id: tmp, access: write, allow: ["$TMPDIR/**", "$CWD/**"]}
"""


def test_refusal_explains_itself_once(wd):
    pol = wd.file("ask.yaml", ASK_PUSH)
    # sh searches PATH: /usr/bin/git then /bin/git (one file on merged
    # /usr): one notice, with the command, and the verdict's word.
    r = harness(["sh", "-c", "git push origin main; echo rc=$?"], wd, policy=pol)
    lines = [l for l in r.stderr.splitlines() if l.startswith("harness:")]
    check(len(lines) == 1, "notices: %r" % lines)
    check(lines[0].startswith("harness: not approved: exec ") and
          lines[0].endswith(": git push origin main (rule push at %s:3; it needs a person's approval: "
                            "ask the user, do not retry)" % pol), "notice %r" % lines[0])
    check(r.stdout.strip() == "rc=126", "stdout %r" % r.stdout)
    # A static program has no shim: the supervisor says it, once.
    if BUSYBOX:
        r = harness([BUSYBOX, "sh", "-c", "echo x > /etc/hx-never; echo x > /etc/hx-never; echo $?"],
                    wd, policy=None, env={"HOME": fake_home(wd)})
        lines = [l for l in r.stderr.splitlines() if l.startswith("harness:")]
        check(lines == ["harness: denied write /etc/hx-never (rule default:file_write; the policy refuses it: "
                        "do not retry)"],
              "static notices: %r" % r.stderr)
        check(not os.path.exists("/etc/hx-never"), "/etc written")
        check(len(r.events(args_path="/etc/hx-never", verdict="deny")) == 2,
              "both refusals are in the log")


def test_profile_detected_from_the_real_executable(wd):
    home = fake_home(wd)
    # An entry point installed as pipx does: bin/aider is a symlink
    # into the venv; and the same program run through its interpreter.
    venv = os.path.join(wd.path, "venv", "aider-chat", "bin")
    os.makedirs(venv)
    real = os.path.join(venv, "aider")
    with open(real, "w") as f:
        f.write("#!/bin/sh\nmkdir -p ~/.aider/caches && echo c > ~/.aider/caches/t; "
                "echo 'lint-cmd: evil' > ~/.aider.conf.yml; echo ran\n")
    os.chmod(real, 0o755)
    bindir = os.path.join(wd.path, "bin")
    os.makedirs(bindir)
    os.symlink(real, os.path.join(bindir, "aider"))
    env = {"HOME": home, "PATH": bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin")}
    r = harness(["aider"], wd, policy=None, env=env)
    r.expect_status(0)
    check(r.one(event="session_start")["profiles"] == [{"name": "aider", "chosen": "detected"}],
          "profiles %r" % r.one(event="session_start").get("profiles"))
    check(os.path.exists(os.path.join(home, ".aider", "caches", "t")), "aider state not writable")
    check(not os.path.exists(os.path.join(home, ".aider.conf.yml")), "aider config written")
    check(r.one(args_path=os.path.join(home, ".aider.conf.yml"))["verdict"] == "ask", "config verdict")
    # --profile none: the same command gets the default alone.
    r = harness(["aider"], wd, policy=None, env=env, extra=["--profile", "none"])
    check(r.one(event="session_start")["profiles"] == [], "--profile none")
    check(r.one(args_path=os.path.join(home, ".aider", "caches", "t"))["verdict"] == "deny",
          "state writable without the profile")
    # Through an interpreter: the script it runs decides.
    script = os.path.join(wd.path, "node_modules", "opencode-ai", "bin", "opencode.js")
    os.makedirs(os.path.dirname(script))
    with open(script, "w") as f:
        f.write("print('hi')\n")
    r = harness(["/usr/bin/python3", "-I", script], wd, policy=None, env=env)
    r.expect_status(0)
    check(r.one(event="session_start")["profiles"] == [{"name": "opencode", "chosen": "detected"}],
          "interpreter's script not detected: %r" % r.one(event="session_start").get("profiles"))


def test_neighbour_sockets_denied_and_opened_by_a_profile(wd):
    """Services outside the sandbox that trust the user's uid: the ones
    the agent's environment names, wherever they are, and the usual
    places; the ssh-agent profile opens the key agent alone."""
    import socket
    home = fake_home(wd)
    agent = os.path.join(wd.path, "agent.sock")   # an ssh agent, say
    bus = os.path.join(wd.path, "bus")             # a session bus
    servers = []
    for p in (agent, bus):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(p)
        s.listen(8)
        servers.append(s)
    code = ("import socket, sys\n"
            "for p in sys.argv[1:]:\n"
            "    s = socket.socket(socket.AF_UNIX)\n"
            "    try:\n"
            "        s.connect(p); print(p, 'ok')\n"
            "    except OSError as e:\n"
            "        print(p, e.errno)\n")
    env = {"HOME": home, "SSH_AUTH_SOCK": agent,
           "DBUS_SESSION_BUS_ADDRESS": "unix:path=%s,guid=1" % bus}
    try:
        # Inside $CWD, which local-sockets allows: the environment makes
        # them neighbours. Through the shim and from a static program.
        r = harness(["/usr/bin/python3", "-c", code, agent, bus], wd, policy=None, env=env)
        check(r.stdout.split("\n")[:2] == ["%s 13" % agent, "%s 13" % bus], r.stdout + r.stderr)
        check(r.one(op="connect", args_addr="unix:" + agent)["rule"] == "harness:ssh-agent", r.dump())
        check(r.one(op="connect", args_addr="unix:" + bus)["rule"] == "harness:session-bus", r.dump())
        # Named as the user may write it: "/x/.//agent.sock" named no
        # path the connect is judged by (only the rule for sockets of
        # others held it, and the ssh-agent profile could not open it).
        odd = dict(env, SSH_AUTH_SOCK=os.path.dirname(agent) + "/.//" + os.path.basename(agent))
        r = harness(["/usr/bin/python3", "-c", code, agent], wd, policy=None, env=odd)
        check(r.stdout.split("\n")[:1] == ["%s 13" % agent], r.stdout + r.stderr)
        check(r.one(op="connect", args_addr="unix:" + agent)["rule"] == "harness:ssh-agent",
              r.dump())
        r = harness([os.path.join(HELPERS, "static_unotify"), "uconnect", bus], wd, policy=None,
                    env=env)
        rec = r.one(op="connect", args_addr="unix:" + bus)
        check(rec["verdict"] == "deny" and rec["layer"] == "kernel", r.dump())
        # The ssh-agent profile opens the agent, not the bus.
        r = harness(["/usr/bin/python3", "-c", code, agent, bus], wd, policy=None, env=env,
                    extra=["--profile", "ssh-agent"])
        check(r.stdout.split("\n")[:2] == ["%s ok" % agent, "%s 13" % bus], r.stdout + r.stderr)
    finally:
        for s in servers:
            s.close()
    # The usual places, with no environment naming them.
    for path, rule in (("/tmp/tmux-1000/default", "neighbour-sockets"),
                       ("/run/user/1000/bus", "neighbour-sockets"),
                       ("/tmp/.X11-unix/X0", "neighbour-sockets"),
                       ("/tmp/ssh-abc/agent.1", "ssh-agent-sockets")):
        e = subprocess.run([POLICY_TOOL, "explain", "--", "connect", "unix:" + path],
                           capture_output=True, text=True)
        check(e.stdout.startswith("deny") and "rule=%s" % rule in e.stdout, path + ": " + e.stdout)
