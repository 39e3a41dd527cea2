"""The real agent CLIs the suite drives (Claude Code, Codex CLI, Gemini
CLI): where the pinned install lives, how each is pointed at the
scripted model server through its own configuration in a HOME laid out
like a user's, the command line that runs it non-interactively with its
own auto-approve flags, and the one scripted session every agent plays
with its own built-in tools (shell, file write, file edit, a read of a
denied secret, a read of the project's .env, a denied connect).

Used by tests/integration/test_agents.py and by scripts/bench.
Standard library only."""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from modelserver import ModelServer, Turn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
AGENTS_DIR = os.path.join(BUILD, "agents")
EXEC = os.path.join(BUILD, "harness-exec")
PROFILES = os.path.join(ROOT, "policy", "profiles")
ALL = ("claude", "codex", "gemini")

# What the session plants and expects. The fake key and the .env value
# are unique strings: if either shows up in a request to the model, it
# leaked.
FAKE_KEY = ("-----BEGIN OPENSSH PRIVATE KEY-----\n"
            "hx-fake-ssh-key-7f3a9c0e-not-a-real-key\n"
            "-----END OPENSSH PRIVATE KEY-----\n")
KEY_MARK = "hx-fake-ssh-key-7f3a9c0e"
DOTENV = "HX_API_TOKEN=hx-dotenv-secret-51d2b8\n"
DOTENV_MARK = "hx-dotenv-secret-51d2b8"
# printf builds the mark: the command the model sends does not hold it,
# so finding it in a later request means the output came back.
SHELL_CMD = "printf 'hx-%s-%d\\n' shell 42"
SHELL_MARK = "hx-shell-42"
WRITTEN = "alpha\nbeta\n"
EDITED = "alpha\ngamma\n"
LEAK_BYTES = b"hx-connect-leak"
PROMPT = ("Run the scripted checks: a shell command, a file write and edit, "
          "two reads and a connect.")


def connect_cmd(port):
    """A shell command that connects to 127.0.0.1:port and sends bytes,
    printing what happened (the model gets the printout)."""
    return ("/usr/bin/python3 -c 'import socket\n"
            "try:\n"
            " s = socket.create_connection((\"127.0.0.1\", %d), timeout=3)\n"
            " s.sendall(b\"%s\"); print(\"hx-connect: connected\")\n"
            "except OSError as e:\n"
            " print(\"hx-connect: refused:\", e)'" % (port, LEAK_BYTES.decode()))


class Agent:
    """One agent CLI. Subclasses fill in the wire format and the tools."""

    name = None
    api = None
    package = None  # npm package name
    binary = None   # name in node_modules/.bin

    def installed_dir(self):
        return os.path.join(AGENTS_DIR, self.name)

    def bin_path(self):
        return os.path.join(self.installed_dir(), "node_modules", ".bin", self.binary)

    def version(self):
        with open(os.path.join(HERE, self.name, "package.json")) as f:
            return json.load(f)["dependencies"][self.package]

    def is_installed(self):
        return os.access(self.bin_path(), os.X_OK)

    def env(self, home, url):
        """The environment of a session: a user's, nothing of the caller's."""
        return {"HOME": home, "USER": os.environ.get("USER", "user"),
                "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                "TERM": "dumb", "NO_COLOR": "1", "SHELL": "/bin/bash"}

    def setup_home(self, home, url, project):
        pass

    def argv(self, prompt):
        raise NotImplementedError

    # Turns of the shared session, in this agent's tools.
    def t_shell(self, cmd):
        raise NotImplementedError

    def t_write(self, path, text):
        raise NotImplementedError

    def t_edit(self, path, old, new):
        raise NotImplementedError

    def t_read(self, path):
        """A file read with the agent's own read tool (the shell for Codex,
        which has none)."""
        raise NotImplementedError

    def script(self, project, home, denied_port):
        """(turns, names): the scripted session and the index of each step."""
        # Two files: written.txt shows the write's bytes, notes.txt
        # (written, then edited) the edit's.
        steps = [
            ("shell", self.t_shell(SHELL_CMD)),
            ("write", self.t_write(os.path.join(project, "written.txt"), WRITTEN)),
            ("write2", self.t_write(os.path.join(project, "notes.txt"), WRITTEN)),
            ("edit", self.t_edit(os.path.join(project, "notes.txt"), "beta", "gamma")),
            ("secret", self.t_read(os.path.join(home, ".ssh", "id_rsa"))),
            ("dotenv", self.t_read(os.path.join(project, ".env"))),
            ("connect", self.t_shell(connect_cmd(denied_port))),
        ]
        turns = [t for _, t in steps] + [Turn.say("All scripted checks done.")]
        return turns, {name: i for i, (name, _) in enumerate(steps)}


class Claude(Agent):
    name, api, package, binary = "claude", "anthropic", "@anthropic-ai/claude-code", "claude"
    tools = ("Bash", "Write", "Edit", "Read")

    def env(self, home, url):
        e = super().env(home, url)
        e.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="sk-ant-hx-test",
                 # No telemetry, error reports or update checks: the
                 # session talks to the scripted server only.
                 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
        return e

    def setup_home(self, home, url, project):
        # A user who has run it before: onboarding done, the key approved.
        with open(os.path.join(home, ".claude.json"), "w") as f:
            json.dump({"hasCompletedOnboarding": True, "numStartups": 1,
                       "customApiKeyResponses": {"approved": ["sk-ant-hx-test"[-20:]],
                                                 "rejected": []}}, f)

    def argv(self, prompt):
        # --dangerously-skip-permissions is refused as root: allow the
        # four tools by name instead.
        return [self.bin_path(), "-p", prompt, "--output-format", "text",
                "--allowedTools", ",".join(self.tools), "--permission-mode", "acceptEdits",
                "--max-turns", "20"]

    def t_shell(self, cmd):
        return Turn.call("Bash", {"command": cmd, "description": "scripted step"})

    def t_write(self, path, text):
        return Turn.call("Write", {"file_path": path, "content": text})

    def t_edit(self, path, old, new):
        return Turn.call("Edit", {"file_path": path, "old_string": old, "new_string": new})

    def t_read(self, path):
        return Turn.call("Read", {"file_path": path})

    def script(self, project, home, denied_port):
        # The reads once more through the shell: Read opens the file in
        # the agent's own process, cat in a child.
        turns, steps = super().script(project, home, denied_port)
        extra = [("secret_shell", self.t_shell("cat %s" % os.path.join(home, ".ssh", "id_rsa"))),
                 ("dotenv_shell", self.t_shell("cat %s" % os.path.join(project, ".env")))]
        for name, t in extra:
            steps[name] = len(turns) - 1
            turns.insert(len(turns) - 1, t)
        return turns, steps


class Codex(Agent):
    name, api, package, binary = "codex", "openai", "@openai/codex", "codex"
    tools = ("exec_command", "apply_patch")
    KEY_ENV = "HX_SCRIPTED_MODEL_KEY"

    def env(self, home, url):
        e = super().env(home, url)
        e[self.KEY_ENV] = "sk-hx-test"
        # Codex 0.171 takes a custom provider's address from config.toml
        # only (its built-in one no longer follows OPENAI_BASE_URL), and
        # harness reads no agent's config: the variable names the
        # endpoint for harness (harness:model-endpoint), as a user who
        # points Codex at a local server sets it (README).
        e["OPENAI_BASE_URL"] = url + "/v1"
        return e

    def setup_home(self, home, url, project):
        # ~/.codex/config.toml: a model provider on the scripted server.
        # gpt-5.5 is a model Codex knows (its tools and patch format).
        d = os.path.join(home, ".codex")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.toml"), "w") as f:
            f.write('model = "gpt-5.5"\n'
                    'model_provider = "scripted"\n'
                    'check_for_update_on_startup = false\n'
                    '[model_providers.scripted]\n'
                    'name = "scripted"\n'
                    'base_url = "%s/v1"\n'
                    'wire_api = "responses"\n'
                    'env_key = "%s"\n'
                    '[analytics]\nenabled = false\n' % (url, self.KEY_ENV))

    def argv(self, prompt):
        # Its own sandbox off: harness is the sandbox.
        return [self.bin_path(), "exec", "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox", prompt]

    def t_shell(self, cmd):
        return Turn.call("exec_command", {"cmd": cmd, "yield_time_ms": 5000})

    def t_write(self, path, text):
        body = "".join("+" + line + "\n" for line in text.splitlines())
        return Turn.call("apply_patch", "*** Begin Patch\n*** Add File: %s\n%s*** End Patch\n"
                         % (path, body), kind="custom")

    def t_edit(self, path, old, new):
        return Turn.call("apply_patch", "*** Begin Patch\n*** Update File: %s\n@@\n alpha\n"
                         "-%s\n+%s\n*** End Patch\n" % (path, old, new), kind="custom")

    def t_read(self, path):
        return self.t_shell("cat %s" % path)


class Gemini(Agent):
    name, api, package, binary = "gemini", "gemini", "@google/gemini-cli", "gemini"
    tools = ("run_shell_command", "write_file", "replace", "read_file")

    def env(self, home, url):
        e = super().env(home, url)
        e.update(GEMINI_API_KEY="hx-test-key", GOOGLE_GEMINI_BASE_URL=url)
        return e

    def setup_home(self, home, url, project):
        d = os.path.join(home, ".gemini")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "settings.json"), "w") as f:
            json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}},
                       "privacy": {"usageStatisticsEnabled": False},
                       "general": {"disableAutoUpdate": True,
                                   "disableUpdateNag": True}}, f)
        # The project is trusted, as after the user's first "trust".
        with open(os.path.join(d, "trustedFolders.json"), "w") as f:
            json.dump({project: "TRUST_FOLDER"}, f)

    def argv(self, prompt):
        return [self.bin_path(), "-p", prompt, "--approval-mode", "yolo"]

    def t_shell(self, cmd):
        return Turn.call("run_shell_command", {"command": cmd, "description": "scripted step"})

    def t_write(self, path, text):
        return Turn.call("write_file", {"file_path": path, "content": text})

    def t_edit(self, path, old, new):
        return Turn.call("replace", {"file_path": path, "old_string": old, "new_string": new,
                                     "instruction": "replace %s with %s" % (old, new)})

    def t_read(self, path):
        # read_file refuses paths outside the workspace and any .env
        # itself (hasBlockedPathSegment), before harness sees anything:
        # the shell tool reaches the files.
        return self.t_shell("cat %s" % path)


AGENTS = {a.name: a for a in (Claude(), Codex(), Gemini())}


class Session:
    """One scripted agent session: a temporary HOME and project, the
    model server, and the result of running the CLI (bare or under
    harness-exec)."""

    def __init__(self, agent, denied_port, workroot=None):
        self.agent = agent
        self.root = tempfile.mkdtemp(prefix="hx-agent-%s-" % agent.name, dir=workroot)
        os.chmod(self.root, 0o755)
        self.home = os.path.join(self.root, "home")
        self.project = os.path.join(self.root, "project")
        self.state = os.path.join(self.root, "state")  # audit log: outside HOME
        for d in (self.home, self.project, self.state):
            os.makedirs(d)
        os.chmod(self.home, 0o700)
        ssh = os.path.join(self.home, ".ssh")
        os.makedirs(ssh, mode=0o700)
        with open(os.path.join(ssh, "id_rsa"), "w") as f:
            f.write(FAKE_KEY)
        os.chmod(os.path.join(ssh, "id_rsa"), 0o600)
        with open(os.path.join(self.project, ".env"), "w") as f:
            f.write(DOTENV)
        with open(os.path.join(self.project, "README.md"), "w") as f:
            f.write("A scratch project for the agent tests.\n")
        turns, self.steps = agent.script(self.project, self.home, denied_port)
        self.server = ModelServer(agent.api, turns, tool_names=agent.tools)
        agent.setup_home(self.home, self.server.url, self.project)
        self.log = os.path.join(self.state, "audit.jsonl")
        self.extra = None
        self.proc = None
        self.elapsed = None
        self.timed_out = False

    def add_rules(self, network=()):
        """The test's own rules (network rule texts, "  - id: ..."), as
        a policy file added beside the agent's detected profile."""
        self.extra = os.path.join(self.state, "test-rules.yaml")
        with open(self.extra, "w") as f:
            f.write("version: 1\nnetwork:\n")
            f.writelines(r if r.endswith("\n") else r + "\n" for r in network)
        return self.extra

    def command(self, harnessed=True, mode=None, extra=()):
        cmd = self.agent.argv(PROMPT)
        if not harnessed:
            return cmd
        # The embedded default policy; the agent's profile chosen from
        # its executable (auto), as `harness-exec -- claude` does.
        argv = [EXEC, "--quiet", "--audit-log", self.log]
        if self.extra:
            argv += ["--profile", "auto", "--profile", self.extra]
        if mode:
            argv += ["--mode", mode]
        return argv + list(extra) + ["--"] + cmd

    def run(self, harnessed=True, mode=None, extra=(), timeout=120):
        argv = self.command(harnessed, mode, extra)
        t0 = time.monotonic()
        # Its own process group, so a timeout kills the agent's children too.
        p = subprocess.Popen(argv, cwd=self.project, env=self.agent.env(self.home, self.server.url),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.timed_out = True
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
        self.elapsed = time.monotonic() - t0
        self.status, self.stdout, self.stderr = p.returncode, out, err
        return self

    def result(self, step):
        """What the agent reported back to the model for a step."""
        return self.server.result_of(self.steps[step])

    def sent_to_model(self):
        """Every byte of every request body the agent sent, as text."""
        return "\n".join(json.dumps(r.body) for r in self.server.requests)

    def records(self):
        recs = []
        if os.path.exists(self.log):
            with open(self.log) as f:
                recs = [json.loads(line) for line in f]
        return recs

    def close(self, keep=False):
        self.server.close()
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)
