"""Real agent CLIs under harness-exec (tests/agents/): Claude Code, Codex
CLI and Gemini CLI, pinned and installed by `scripts/install-deps
--agents`, each pointed at the scripted model server through its own
configuration in a temporary HOME, driven through its own tools: a
shell command, a file write, a file edit, a read of a planted SSH key,
a read of the project's .env, and a connect to a denied loopback port.

Checked: what the agent reported back to the model (the recorded
requests), the files, the listener, and the audit log (its chain and
its denials with their rules). Each session runs under the embedded
default policy plus the agent's profile (policy/profiles/NAME.yaml),
which harness-exec chooses from the agent's executable (checked), and
the test's denied port.

Which agents: $HX_AGENTS (space-separated; `make test` sets the one it
installs, `make test-agents` all). Each selected agent's test fails
when the agent is not installed: a missing install is not a pass."""

import os
import subprocess
import sys
import time

from lib import AUDIT_TOOL, Listener, TestFailure, check

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "agents"))
import agents  # noqa: E402

SELECTED = os.environ.get("HX_AGENTS", "").split()
SESSION_TIMEOUT = 90

# The gap the Claude Code Read of $CWD/.env meets (README, "What holds
# today": reads inside a write root are the shim's unless --trace-reads).

def _denied_text(s):
    return any(w in s for w in ("Permission denied", "EACCES", "permission denied"))


class Checks:
    """Named checks of one session; all are run, the failures reported
    together with what the session did."""

    def __init__(self, session):
        self.s = session
        self.failed = []
        self.passed = []

    def __call__(self, name, cond, detail=""):
        (self.passed if cond else self.failed).append((name, detail))
        return cond

    def finish(self):
        if self.failed:
            s = self.s
            lines = ["%s: %d check(s) failed (passed: %s)" % (
                s.agent.name, len(self.failed), ", ".join(n for n, _ in self.passed))]
            for name, detail in self.failed:
                lines.append("FAILED %s: %s" % (name, detail))
            lines.append("status %s, %.1fs%s" % (s.status, s.elapsed or 0,
                                                 ", timed out" if s.timed_out else ""))
            lines.append("requests:\n" + s.server.summary())
            for step in s.steps:
                lines.append("result %s: %r" % (step, (s.result(step) or "<none>")[:300]))
            lines.append("stderr: " + (s.stderr or "")[-1500:])
            raise TestFailure("\n".join(lines))


def run_agent(name, extra=()):
    """One harnessed scripted session of agent name and its checks."""
    agent = agents.AGENTS[name]
    check(agent.is_installed(),
          "%s is not installed at %s (make agents, or scripts/install-deps --agents %s)"
          % (name, agent.bin_path(), name))
    listener = Listener(range(21000, 22000))
    s = agents.Session(agent, listener.port)
    try:
        s.add_rules(['  - id: agent-test-denied-port\n'
                                '    description: a loopback port the test listens on\n'
                                '    deny: "127.0.0.1:%d"\n' % listener.port])
        # Nobody answers a question here: refused after 5 s, not the
        # default 60 (Codex under sh asks about its shell snapshot,
        # whose eval of a built string is unparsable).
        s.run(extra=("--ask-timeout", "5") + tuple(extra), timeout=SESSION_TIMEOUT)
        time.sleep(0.2)
    finally:
        listener.close()
    c = Checks(s)
    recs = s.records()
    sent = s.sent_to_model()

    c("session", s.status == 0 and not s.timed_out, "exit status %s" % s.status)
    start = next((r for r in recs if r.get("event") == "session_start"), {})
    c("profile detected", {"name": name, "chosen": "detected"} in start.get("profiles", []),
      "session_start profiles %r" % start.get("profiles"))
    last = max((r.turn for r in s.server.main_requests() if r.turn is not None), default=-1)
    c("all turns played", last >= len(s.server.script) - 1,
      "the agent stopped after turn %d of %d" % (last, len(s.server.script)))
    offered = s.server.offered_tools()
    c("tool names", set(agent.tools) <= offered,
      "scripted %s, offered %s" % (sorted(agent.tools), sorted(offered)))

    out = s.result("shell") or ""
    c("shell output reported", agents.SHELL_MARK in out, repr(out[:300]))

    written = os.path.join(s.project, "written.txt")
    data = open(written).read() if os.path.exists(written) else None
    c("write", data == agents.WRITTEN, "written.txt holds %r" % data)
    notes = os.path.join(s.project, "notes.txt")
    data = open(notes).read() if os.path.exists(notes) else None
    c("edit", data == agents.EDITED, "notes.txt holds %r" % data)

    for step in [k for k in s.steps if k.startswith("secret")]:
        out = s.result(step) or ""
        c("%s: an error reported" % step, _denied_text(out) and agents.KEY_MARK not in out,
          repr(out[:300]))
    c("the key never reached the model", agents.KEY_MARK not in sent, "the fake key leaked")

    # Claude Code's Read opens with raw syscalls (no shim): the project's
    # .env is held in the kernel by the session's masks (masks.h).
    for step in [k for k in s.steps if k.startswith("dotenv")]:
        out = s.result(step) or ""
        ok = _denied_text(out) and agents.DOTENV_MARK not in out
        c("%s: an error reported" % step, ok, repr(out[:300]))
    c("the .env never reached the model", agents.DOTENV_MARK not in sent, "the .env leaked")

    out = s.result("connect") or ""
    c("connect refused and reported", "hx-connect: refused" in out, repr(out[:300]))
    c("the listener got nothing", listener.accepted == 0 and not listener.received,
      "%d connection(s), %r" % (listener.accepted, listener.received))

    v = subprocess.run([AUDIT_TOOL, "verify", s.log], capture_output=True, text=True)
    c("audit log verifies", v.returncode == 0, (v.stdout + v.stderr)[-300:])
    key = os.path.join(s.home, ".ssh", "id_rsa")
    env = os.path.join(s.project, ".env")

    def denied(rule, **args):
        return [r for r in recs if r.get("verdict") == "deny" and r.get("rule") == rule
                and all((r.get("args") or {}).get(k) == val for k, val in args.items())]
    c("audit: ssh denial", denied("ssh", path=key), "no deny record with rule ssh for the key")
    c("audit: dotenv denial", denied("dotenv", path=env), "no deny record with rule dotenv")
    c("audit: connect denial",
      denied("agent-test-denied-port", addr="127.0.0.1:%d" % listener.port),
      "no deny record of the connect")
    # The profile is enough: no write of the agent's own is refused but
    # the mkdirs of directories that already exist ($HOME and above,
    # answered EEXIST), and no ask but for its settings.
    home_and_up = {s.home}
    p = s.home
    while p != "/":
        p = os.path.dirname(p)
        home_and_up.add(p)
    stray = [r for r in recs if r.get("category") == "file_write"
             and r.get("verdict") in ("deny", "ask")
             and not (r.get("op") == "mkdir" and (r.get("args") or {}).get("path") in home_and_up)
             and not (r.get("verdict") == "ask" and (r.get("rule") or "").startswith(name + "-"))]
    c("the profile covers the agent's writes", not stray, "; ".join(
        "%s %s %s (%s)" % (r.get("verdict"), r.get("op"), (r.get("args") or {}).get("path"),
                           r.get("rule")) for r in stray[:8]))
    c.finish()
    s.close()
    return s


if "claude" in SELECTED:
    def test_claude(wd):
        run_agent("claude")

if "codex" in SELECTED:
    def test_codex(wd):
        run_agent("codex")

if "gemini" in SELECTED:
    def test_gemini(wd):
        run_agent("gemini")


def test_profiles_compose_and_check(wd):
    # Every agent's profile loads with the default policy and passes its
    # own match/not_match examples (needs no agent).
    from lib import POLICY_TOOL
    names = sorted(f[:-5] for f in os.listdir(agents.PROFILES) if f.endswith(".yaml"))
    check(set(agents.ALL) <= set(names), "profiles: %r" % names)
    for name in agents.ALL:
        r = subprocess.run([POLICY_TOOL, "check", os.path.join(agents.PROFILES, name + ".yaml")],
                           capture_output=True, text=True)
        check(r.returncode == 0, "%s: %s%s" % (name, r.stdout[-800:], r.stderr[-800:]))
        r = subprocess.run([POLICY_TOOL, "show", "--profile", name], capture_output=True, text=True)
        check(r.returncode == 0 and "#   profile:%s" % name in r.stdout, "%s: %s" % (name, r.stderr))
