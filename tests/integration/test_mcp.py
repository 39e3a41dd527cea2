"""harness-mcp (issue 15): real MCP clients (the official TypeScript SDK's
Client and the inspector CLI, tests/mcp) drive harness-mcp, whose tools
run in the session's sandbox. Every call is checked by the client against
the tool's declared schemas, and its effects, results and audit records
against what really happened: a refusal by the policy before the call,
refusals by the kernel layers inside it (linked to the call by call_id),
atomic patches, stale writes, a hostile client, a call flood, and the
cancellation of a process tree."""

import hashlib
import json
import os
import pty
import select
import signal
import subprocess
import time

from lib import AUDIT_TOOL, BUILD, EXEC, HELPERS, POLICIES, ROOT, Listener, Skip, check, read_log
from test_ask import foreground_job, read_until

MCP = os.path.join(BUILD, "harness-mcp")
CLIENT = os.path.join(ROOT, "tests", "mcp", "client.mjs")
MODULES = os.path.join(BUILD, "mcp", "node_modules")
INSPECTOR = os.path.join(MODULES, "@modelcontextprotocol", "inspector-cli", "build", "index.js")
BUSYBOX_STATIC = "/bin/busybox"
TOOLS = {"code_run", "file_read", "file_write", "file_patch", "list_dir", "search", "session_info",
         "ask_user", "checkpoint", "diff", "restore"}


def env_for(wd, home=None):
    e = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "HARNESS_SOCKET")}
    e["XDG_STATE_HOME"] = wd.state
    if home:
        e["HOME"] = home
    return e


def mcp_argv(wd, extra=(), command=MCP):
    log = os.path.join(wd.state, "audit-%d.jsonl" % len(os.listdir(wd.state)))
    return [command, "--quiet", "--ask-timeout", "0", "--audit-log", log] + list(extra), log


def sdk(wd, steps, extra=(), home=None, parallel=False, command=MCP, elicit=None):
    """The SDK client through steps; returns (its output, the records)."""
    argv, log = mcp_argv(wd, extra, command)
    spec = os.path.join(wd.state, "scenario.json")
    with open(spec, "w") as f:
        json.dump({"command": argv, "cwd": wd.path, "env": env_for(wd, home),
                   "steps": steps, "parallel": parallel, "elicit": elicit}, f)
    p = subprocess.run(["node", CLIENT, spec], capture_output=True, text=True, timeout=240,
                       env=dict(os.environ, HX_MCP_MODULES=MODULES), cwd=wd.path)
    check(p.returncode == 0, "client: %s %s" % (p.stdout[-2000:], p.stderr[-2000:]))
    out = json.loads(p.stdout)
    check(not out.get("fatal"), "client failed: %s\nserver: %s" % (out.get("fatal"), out.get("stderr")))
    return out, read_log(log)


def structured(step):
    check("result" in step, "no result: %r" % step)
    return step["result"].get("structuredContent")


def ok(step):
    check("result" in step and not step["result"].get("isError"), "call failed: %r" % step)
    check(step["input_valid"], "the test's own arguments do not fit the schema: %r" % step)
    return structured(step)


def text(step):
    return step["result"]["content"][0]["text"]


def calls(recs):
    return [r for r in recs if r.get("event") == "tool_call"]


def verify(log_recs, wd):
    check(log_recs and log_recs[-1]["event"] == "session_end", "session not ended")


def test_sdk_lists_and_calls_each_tool(wd):
    wd.file("src/a.c", "int a;\nint b;\nint c;\n")
    wd.file("notes.txt", "one\ntwo\nthree\n")
    patch = "--- a/src/a.c\n+++ b/src/a.c\n@@ -1,3 +1,3 @@\n int a;\n-int b;\n+long b;\n int c;\n"
    steps = [
        {"call": "session_info"},
        {"call": "file_read", "args": {"path": "notes.txt", "start_line": 2, "end_line": 3}},
        {"call": "file_write", "args": {"path": "new/out.txt", "content": "hello\n", "create_dirs": True,
                                        "mode": "create"}},
        {"call": "file_patch", "args": {"path": "src/a.c", "patch": patch}},
        {"call": "file_patch", "args": {"path": "notes.txt", "edits": [{"search": "two", "replace": "2"}]}},
        {"call": "list_dir", "args": {"path": ".", "depth": 2}},
        {"call": "search", "args": {"path": ".", "glob": "**/*.c", "pattern": "long"}},
        {"call": "code_run", "args": {"command": "echo $HX_T; pwd", "env": {"HX_T": "from-env"}}},
        {"call": "code_run", "args": {"argv": ["python3", "-c", "import sys; print(sys.argv[1])", "x y"]}},
        {"call": "code_run", "args": {"language": "python", "code": "print(6*7)"}},
    ]
    out, recs = sdk(wd, steps)
    check({t["name"] for t in out["tools"]} == TOOLS, "tools: %r" % [t["name"] for t in out["tools"]])
    for t in out["tools"]:
        check(t.get("description") and t.get("inputSchema") and t.get("outputSchema") and
              "readOnlyHint" in t.get("annotations", {}), "tool %s lacks a part" % t["name"])
    s = [st for st in out["steps"]]
    info = ok(s[0])
    check(info["project"] == os.path.realpath(wd.path) or info["project"] == wd.path, "project %r" % info)
    check(info["mode"] == "enforce" and any(d["rule"] == "ssh" for d in info["denied"]), "info %r" % info)
    r = ok(s[1])
    check(r["content"] == "two\nthree\n" and r["sha256"] == hashlib.sha256(b"one\ntwo\nthree\n").hexdigest(),
          "file_read %r" % r)
    ok(s[2])
    check(open(os.path.join(wd.path, "new", "out.txt")).read() == "hello\n", "file_write did not write")
    ok(s[3])
    check(open(os.path.join(wd.path, "src", "a.c")).read() == "int a;\nlong b;\nint c;\n", "patch not applied")
    ok(s[4])
    check(open(os.path.join(wd.path, "notes.txt")).read() == "one\n2\nthree\n", "edit not applied")
    names = {e["path"] for e in ok(s[5])["entries"]}
    check({"src", "src/a.c", "new/out.txt", "notes.txt"} <= names, "list_dir %r" % names)
    m = ok(s[6])["matches"]
    check(len(m) == 1 and m[0]["path"].endswith("a.c") and m[0]["line"] == 2, "search %r" % m)
    r = ok(s[7])
    check(r["exit_code"] == 0 and r["stdout"].split("\n")[0] == "from-env", "code_run %r" % r)
    check(ok(s[8])["stdout"] == "x y\n", "argv run %r" % s[8])
    check(ok(s[9])["stdout"] == "42\n", "python run %r" % s[9])
    # One tool_call record a call, each its own call_id, and the work
    # of each (the worker's writes, the commands' execs) linked to it.
    tc = calls(recs)
    check([r["tool"] for r in tc] == [st["call"] for st in steps], "records %r" % [r["tool"] for r in tc])
    check(len({r["call_id"] for r in tc}) == len(tc) and all(r["outcome"] == "ok" for r in tc), "ids %r" % tc)
    write_id = tc[2]["call_id"]
    check(any(r.get("call_id") == write_id and r["event"] != "tool_call" and
              "out.txt" in json.dumps(r.get("args", {})) for r in recs), "file_write's own records unlinked")
    run_id = tc[7]["call_id"]
    check(any(r.get("call_id") == run_id and r.get("category") == "exec" and r["event"] != "tool_call"
              for r in recs), "code_run's exec unlinked")
    check("hello" not in json.dumps(tc[2]), "a file's content in the record")
    verify(recs, wd)


def test_code_run_refusals_in_the_kernel_linked_to_the_call(wd):
    # Static programs (no shim): only the kernel layers see their calls.
    # The secret is inside the project, a write root (masked in the
    # kernel); the write is outside every root; the port is denied.
    key = os.path.join(wd.path, "secret", "key")
    outside = os.path.join(os.path.dirname(wd.path), os.path.basename(wd.path) + "-outside")
    lst = Listener(ports=range(21000, 22000))
    try:
        script = ("%s cat %s; %s sh -c 'echo pwned > %s'; %s nc -w 1 127.0.0.1 %d </dev/null; echo done"
                  % (BUSYBOX_STATIC, key, BUSYBOX_STATIC, outside, BUSYBOX_STATIC, lst.port))
        out, recs = sdk(wd, [{"call": "code_run", "args": {"command": script}},
                             {"call": "file_read", "args": {"path": "secret/key"}}],
                        extra=["--policy", os.path.join(POLICIES, "test.yaml")])
    finally:
        lst.close()
    r = ok(out["steps"][0])
    check("TOP-SECRET" not in r["stdout"] and r["stdout"].endswith("done\n"), "code_run %r" % r)
    check(not os.path.exists(outside), "the write outside the roots happened")
    check(lst.accepted == 0, "the denied connect reached the listener")
    cid = calls(recs)[0]["call_id"]
    linked = [x for x in recs if x.get("call_id") == cid and x["event"] != "tool_call"]
    refused = [x for x in linked if x.get("verdict") == "deny"]
    rules = {x.get("rule") for x in refused}
    check({"test-secret", "default:file_write", "denied-ports"} <= rules,
          "refusals linked to the call: %r" % [(x["event"], x.get("rule"), x.get("layer")) for x in linked])
    check(all(x.get("layer") not in ("shim", "shim+kernel") for x in refused),
          "a static program's refusals must be the kernel's: %r" % refused)
    check({x["rule"] for x in r.get("refusals", [])} >= {"test-secret", "denied-ports"},
          "result's refusals %r" % r.get("refusals"))
    # file_read of the same key: refused before it runs, by the same rule
    st = out["steps"][1]
    check(st["result"]["isError"] and "rule test-secret" in text(st), "file_read of the key: %r" % st)
    tc = calls(recs)[1]
    check(tc["verdict"] == "deny" and tc["rule"] == "test-secret" and tc["outcome"] == "refused", "record %r" % tc)
    check(not [x for x in recs if x.get("call_id") == tc["call_id"] and x["event"] != "tool_call"],
          "a refused call did work")


def test_patch_is_atomic_and_stale_writes_refused(wd):
    wd.file("f.txt", "a\nb\nc\nd\n")
    good = "@@ -1,2 +1,2 @@\n-a\n+A\n b\n"
    bad = "@@ -3,2 +3,2 @@\n-x\n+X\n d\n"
    old_sha = hashlib.sha256(b"a\nb\nc\nd\n").hexdigest()
    steps = [
        {"call": "file_patch", "args": {"path": "f.txt", "patch": good + bad}},
        {"call": "file_patch", "args": {"path": "f.txt", "edits": [{"search": "b", "replace": "B"},
                                                                   {"search": "zzz", "replace": "Z"}]}},
        {"call": "file_write", "args": {"path": "f.txt", "content": "new\n", "expected_sha256": old_sha}},
        {"call": "file_write", "args": {"path": "f.txt", "content": "newer\n", "expected_sha256": "0" * 64}},
    ]
    out, recs = sdk(wd, steps)
    s = out["steps"]
    check(s[0]["result"]["isError"] and "hunk 2" in text(s[0]), "failing hunk not named: %r" % s[0])
    check(s[1]["result"]["isError"] and "2" in text(s[1]), "failing edit not named: %r" % s[1])
    ok(s[2])
    check(s[3]["result"]["isError"] and "ESTALE" in text(s[3]), "stale write not refused: %r" % s[3])
    check(open(os.path.join(wd.path, "f.txt")).read() == "new\n", "the file: %r" % open(
        os.path.join(wd.path, "f.txt")).read())
    check([r["outcome"] for r in calls(recs)] == ["error", "error", "ok", "error"], "outcomes")


class Raw:
    """harness-mcp driven by hand: what no SDK would send."""

    def __init__(self, wd, extra=()):
        argv, self.log = mcp_argv(wd, extra)
        self.p = subprocess.Popen(argv, cwd=wd.path, env=env_for(wd), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.rfd = self.p.stdout.fileno()
        self.initialize()

    def initialize(self):
        self.buf = b""
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "raw", "version": "0"}}})
        check(self.recv()["id"] == 0, "initialize")

    def write(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, msg):
        self.write(json.dumps(msg).encode() + b"\n")

    def recv(self, timeout=30):
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            check(left > 0, "no answer from harness-mcp")
            if select.select([self.rfd], [], [], left)[0]:
                chunk = os.read(self.rfd, 65536)
                check(chunk, "harness-mcp closed its output")
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, i, name, args):
        self.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": name, "arguments": args}})
        return self.recv()

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)
        return read_log(self.log)


def test_hostile_client_gets_errors_and_the_server_serves_on(wd):
    wd.file("a.txt", "A\n")
    c = Raw(wd, ["--calls-per-minute", "5"])
    c.write(b"{not json\n")
    check(c.recv()["error"]["code"] == -32700, "parse error")
    c.write(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n')
    check(c.recv()["error"]["code"] == -32600, "batch")
    c.send({"jsonrpc": "2.0", "id": 2, "method": "no/such"})
    check(c.recv()["error"]["code"] == -32601, "unknown method")
    c.write(b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"' + b"A" * (41 << 20) + b'"}}\n')
    check(c.recv()["error"]["code"] == -32600, "oversized message")
    r = c.call(4, "file_read", {"path": "../../../etc/passwd"})
    check(r["error"]["code"] == -32602 and "climb" in r["error"]["message"], "traversal %r" % r)
    r = c.call(5, "file_read", {"path": "a.txt\u0000/etc/passwd"})
    check(r["error"]["code"] == -32602 and "NUL" in r["error"]["message"], "NUL %r" % r)
    r = c.call(6, "file_read", {"path": 7})
    check(r["error"]["code"] == -32602, "schema %r" % r)
    r = c.call(7, "no_such_tool", {})
    check(r["error"]["code"] == -32602, "unknown tool %r" % r)
    got = [c.call(10 + i, "file_read", {"path": "a.txt"}) for i in range(8)]
    served = [g for g in got if "result" in g]
    flood = [g for g in got if "error" in g]
    check(len(served) == 5 and len(flood) == 3 and all(g["error"]["code"] == -32000 for g in flood),
          "quota: %d served, %r" % (len(served), flood[:1]))
    r = c.call(30, "session_info", {})
    check("result" in r and not r["result"]["isError"], "the server stopped serving: %r" % r)
    recs = c.close()
    check(c.p.returncode == 0, "exit %s" % c.p.returncode)
    check(any(r.get("rule") == "harness:mcp-quota" for r in recs), "quota refusals unrecorded")


def test_cancel_kills_the_process_tree(wd):
    # A tree with a child in a session of its own (setsid: out of the
    # group) under a shell; the next call looks for them from inside
    # the session, which still runs (at its end everything dies anyway).
    marker = "hx-mcp-cancel-%dx" % os.getpid()
    code = ("import subprocess, sys, time\n"
            "c = [sys.executable, '-c', 'import time; time.sleep(300)', '%s']\n"
            "subprocess.Popen(c, start_new_session=True)\n"
            "subprocess.Popen(c)\n"
            "time.sleep(300)\n" % marker)
    steps = [{"call": "code_run", "args": {"language": "python", "code": code, "timeout_ms": 600000},
              "cancel_after_ms": 2000, "progress": True},
             # (this test's own marker: the other run's is alive meanwhile;
             # [x], so that the shell's own command line does not match)
             {"call": "code_run", "args": {"command": "sleep 0.5; pgrep -f '%s[x]' || echo none"
                                           % marker[:-1]}}]
    out, recs = sdk(wd, steps)
    s = out["steps"]
    check("error" in s[0] and "cancel" in s[0]["error"]["message"].lower(), "not cancelled: %r" % s[0])
    check(ok(s[1])["stdout"] == "none\n", "processes of the cancelled call live on: %r" % s[1])
    tc = calls(recs)[0]
    check(tc["outcome"] == "cancelled", "record %r" % tc)
    started = [r for r in recs if r.get("call_id") == tc["call_id"] and r["event"] == "process_start"]
    check(len(started) >= 3, "the tree's processes were not linked to the call: %d" % len(started))


def test_inspector_cli_lists_and_calls(wd):
    wd.file("hello.txt", "hi there\n")
    argv, log = mcp_argv(wd, ["--policy", os.path.join(POLICIES, "test.yaml")])
    # The inspector finds its own package.json from its cwd (its
    # build/): the server is started in the project by a shell.
    server = ["/bin/sh", "-c", 'cd "$0" && exec "$@"', wd.path] + argv
    here = os.path.dirname(INSPECTOR)

    def inspector(*args):
        p = subprocess.run(["node", INSPECTOR] + server + list(args), capture_output=True, text=True,
                           timeout=120, cwd=here, env=env_for(wd))
        check(p.returncode == 0, "inspector %r: %s %s" % (args, p.stdout[-1500:], p.stderr[-1500:]))
        return json.loads(p.stdout)

    check({t["name"] for t in inspector("--method", "tools/list")["tools"]} == TOOLS, "inspector's list")
    r = inspector("--method", "tools/call", "--tool-name", "file_read", "--tool-arg", "path=hello.txt")
    check(r["structuredContent"]["content"] == "hi there\n", "inspector's call %r" % r)
    r = inspector("--method", "tools/call", "--tool-name", "code_run", "--tool-arg", "command=cat secret/key")
    check(r["structuredContent"]["exit_code"] != 0 and "TOP-SECRET" not in r["structuredContent"]["stdout"],
          "the project's secret read: %r" % r)
    recs = read_log(log)  # three sessions, one log: the chain continues
    check([c["tool"] for c in calls(recs)] == ["file_read", "code_run"], "records %r" % calls(recs))
    check(any(x.get("rule") == "test-secret" and x.get("call_id") == calls(recs)[1]["call_id"] for x in recs),
          "the refused read is not linked to its call")


def agent_cli(name):
    """The agent CLI name as `make test` installs it (HX_MCP_AGENTS):
    a selected one that is missing fails, never skips."""
    path = os.path.join(BUILD, "agents", name, "node_modules", ".bin", name)
    if not os.path.exists(path):
        if name in os.environ.get("HX_MCP_AGENTS", "").split():
            check(False, "%s is selected but not installed" % name)
        raise Skip("%s is not installed (make agents)" % name)
    return path


def client_of(log):
    return [(r["client"]["name"], r["transport"]) for r in read_log(log) if r["event"] == "mcp_client"]


def test_codex_registers_it_and_what_it_wrote_serves(wd):
    # `codex mcp add` (offline: it writes ~/.codex/config.toml), then the
    # server as Codex would start it from that file, through the SDK.
    codex = agent_cli("codex")
    home = os.path.join(wd.state, "home")
    os.makedirs(os.path.join(home, ".codex"))
    e = dict(env_for(wd), HOME=home, CODEX_HOME=os.path.join(home, ".codex"))
    p = subprocess.run([codex, "mcp", "add", "harness", "--", MCP, "--policy",
                        os.path.join(POLICIES, "test.yaml")], capture_output=True, text=True, env=e,
                       timeout=60, cwd=wd.path)
    check(p.returncode == 0, "codex mcp add: %s %s" % (p.stdout, p.stderr))
    p = subprocess.run([codex, "mcp", "list", "--json"], capture_output=True, text=True, env=e,
                       timeout=60, cwd=wd.path)
    check(p.returncode == 0, "codex mcp list: %s" % p.stderr)
    entry = [s for s in json.loads(p.stdout) if s["name"] == "harness"]
    check(entry and entry[0]["enabled"], "not registered: %s" % p.stdout)
    t = entry[0]["transport"]
    wd.file("r.txt", "registered\n")
    out, recs = sdk(wd, [{"call": "file_read", "args": {"path": "r.txt"}}],
                    extra=t["args"] + ["--quiet"], command=t["command"])
    check({x["name"] for x in out["tools"]} == TOOLS, "tools %r" % out["tools"])
    check(ok(out["steps"][0])["content"] == "registered\n", "call %r" % out["steps"][0])


def test_claude_registers_it_and_connects(wd):
    # `claude mcp add` writes the project's entry to ~/.claude.json, and
    # `claude mcp get` starts the server as written and speaks MCP to it
    # with Claude Code's own client: it says Connected, and the
    # session's mcp_client record names claude-code.
    claude = agent_cli("claude")
    home = os.path.join(wd.state, "home-claude")
    os.makedirs(home)
    log = os.path.join(wd.state, "claude.jsonl")
    e = dict(env_for(wd, home), DISABLE_AUTOUPDATER="1")
    argv = ["--policy", os.path.join(POLICIES, "test.yaml"), "--quiet", "--audit-log", log]
    p = subprocess.run([claude, "mcp", "add", "harness", "--", MCP] + argv, capture_output=True, text=True,
                       env=e, timeout=60, cwd=wd.path)
    check(p.returncode == 0, "claude mcp add: %s %s" % (p.stdout, p.stderr))
    entry = json.load(open(os.path.join(home, ".claude.json")))["projects"][wd.path]["mcpServers"]["harness"]
    check(entry["command"] == MCP and entry["args"] == argv, "written %r" % entry)
    p = subprocess.run([claude, "mcp", "get", "harness"], capture_output=True, text=True, env=e, timeout=90,
                       cwd=wd.path)
    check(p.returncode == 0 and "Connected" in p.stdout and "Failed" not in p.stdout,
          "claude mcp get: %s %s" % (p.stdout, p.stderr))
    check(client_of(log) and client_of(log)[0] == ("claude-code", "stdio"), "the client: %r" % client_of(log))


def test_gemini_registers_it_and_connects(wd):
    # `gemini mcp add` writes the project's .gemini/settings.json, and
    # `gemini mcp list` (in a trusted folder) starts the server as
    # written and connects with Gemini CLI's own client.
    gemini = agent_cli("gemini")
    home = os.path.join(wd.state, "home-gemini")
    os.makedirs(os.path.join(home, ".gemini"))
    with open(os.path.join(home, ".gemini", "trustedFolders.json"), "w") as f:
        json.dump({wd.path: "TRUST_FOLDER"}, f)
    log = os.path.join(wd.state, "gemini.jsonl")
    e = env_for(wd, home)
    argv = ["--policy", os.path.join(POLICIES, "test.yaml"), "--quiet", "--audit-log", log]
    p = subprocess.run([gemini, "mcp", "add", "harness", MCP] + argv, capture_output=True, text=True,
                       env=e, timeout=60, cwd=wd.path)
    check(p.returncode == 0, "gemini mcp add: %s %s" % (p.stdout, p.stderr))
    entry = json.load(open(os.path.join(wd.path, ".gemini", "settings.json")))["mcpServers"]["harness"]
    check(entry["command"] == MCP and entry["args"] == argv, "written %r" % entry)
    p = subprocess.run([gemini, "mcp", "list"], capture_output=True, text=True, env=e, timeout=90,
                       cwd=wd.path)
    said = p.stdout + p.stderr  # it lists on stderr
    check(p.returncode == 0 and "harness" in said and "Connected" in said and "Disconnected" not in said,
          "gemini mcp list: %s" % said)
    check(client_of(log) and client_of(log)[0][1] == "stdio", "the client: %r" % client_of(log))


def test_ask_user_through_the_clients_elicitation(wd):
    q = {"call": "ask_user", "args": {"question": "Push to main?", "choices": ["yes", "no"]}}
    out, recs = sdk(wd, [q], elicit={"action": "accept", "answer": "no"})
    r = ok(out["steps"][0])
    check(r == {"action": "accept", "answer": "no"}, "answer %r" % r)
    asked = out["questions"]
    check(len(asked) == 1 and asked[0]["message"] == "Push to main?" and
          asked[0]["requestedSchema"]["properties"]["answer"]["enum"] == ["yes", "no"], "asked %r" % asked)
    tc = calls(recs)[0]
    check(tc["tool"] == "ask_user" and tc["args"]["question"] == "Push to main?" and
          tc["result"] == {"action": "accept", "answer": "no"} and tc["outcome"] == "ok", "record %r" % tc)
    out, recs = sdk(wd, [q], elicit={"action": "decline"})
    check(ok(out["steps"][0]) == {"action": "decline", "answer": None}, "decline %r" % out["steps"][0])
    # The client's user must pick one of the choices too.
    out, recs = sdk(wd, [q], elicit={"action": "accept", "answer": "maybe"})
    st = out["steps"][0]
    check(st["result"]["isError"] and "EPROTO" in text(st) and "choices" in text(st), "not a choice %r" % st)
    # A client that declared no elicitation, in a session whose approvals
    # take no question (--ask-timeout 0): a clear error, not a hang, and
    # each time (the refused call gives its place back)
    out, recs = sdk(wd, [q, q, q])
    for st in out["steps"]:
        check(st["result"]["isError"] and "ENOTSUP" in text(st) and not out["questions"], "no elicitation %r" % st)
    check([c["outcome"] for c in calls(recs)] == ["error"] * 3, "records %r" % calls(recs))
    check(not [r for r in recs if r["event"] == "question"], "a question nobody could answer was put")


# ---- ask_user without elicitation: the session's approvals ----

def harness_exec(wd, *args):
    return subprocess.run([EXEC] + list(args), cwd=wd.path, env=env_for(wd), capture_output=True,
                          text=True, timeout=30)


def questions_waiting(wd):
    r = harness_exec(wd, "pending", "--json")
    check(r.returncode == 0, "pending: %r" % r.stderr)
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


def question_waiting(wd, timeout=20):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        qs = questions_waiting(wd)
        if qs:
            check(len(qs) == 1, "one question was put, %d wait: %r" % (len(qs), qs))
            return qs[0]
        time.sleep(0.05)
    raise AssertionError("no question waits after %ss" % timeout)


def ask_call(c, i, args):
    c.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "ask_user", "arguments": args}})


def asked(recs):
    """The agent's questions and their answers, by question id."""
    qs = {r["ask"]: r for r in recs if r["event"] == "question"}
    ans = {r["ask"]: r for r in recs if r["event"] == "ask_answer"}
    check(set(qs) == set(ans), "questions %r, answers %r" % (sorted(qs), sorted(ans)))
    for k, a in ans.items():
        check(a["ref_seq"] == qs[k]["seq"] and a["from"] == "agent" and a["call_id"] == qs[k]["call_id"],
              "answer %r to %r" % (a, qs[k]))
    return [(qs[k], ans[k]) for k in sorted(qs)]


def chain_verifies(log):
    v = subprocess.run([AUDIT_TOOL, "verify", log], capture_output=True, text=True)
    check(v.returncode == 0 and "chain intact" in v.stdout, "harness-audit verify: %r %r" % (v.stdout, v.stderr))


def test_ask_user_without_elicitation_is_answered_through_the_approvals(wd):
    """A client with no elicitation capability: the question waits in the
    session's approvals, where harness-exec pending shows it, and
    harness-exec answer (free text, a choice by its number) or deny
    answers it; approve, a control character and an answer that is none
    of the choices are refused, and the question still waits."""
    c = Raw(wd, ["--ask-timeout", "60"])
    secret = "ghp_" + "R3dact0123456789abcdefghijKLMNOPQRSTuv"
    ask_call(c, 1, {"question": "Which branch? (token %s)" % secret})
    q = question_waiting(wd)
    check(q["op"] == "question" and q["from"] == "agent" and q["call_id"] == "mcp-1" and q["choices"] == [] and
          q["question"].startswith("Which branch? (token ") and secret not in json.dumps(q) and
          "redacted" in q["question"] and 0 < q["timeout_s"] <= 60, "pending %r" % q)
    for verb, args, want in (("approve", [], "wants an answer"),
                             ("answer", ["a\x1bb"], "control character"),
                             ("deny", ["--scope", "session"], "declined once")):
        r = harness_exec(wd, verb, str(q["id"]), *args)
        check(r.returncode == 1 and want in r.stderr, "%s: %r %r" % (verb, r.stdout, r.stderr))
        check([x["id"] for x in questions_waiting(wd)] == [q["id"]], "%s took the question away" % verb)
    r = harness_exec(wd, "answer", str(q["id"]), "--", "-feature/é")
    check(r.returncode == 0 and "answered %d" % q["id"] in r.stdout, "answer: %r %r" % (r.stdout, r.stderr))
    rep = c.recv()
    check(rep["id"] == 1 and not rep["result"]["isError"] and
          rep["result"]["structuredContent"] == {"action": "accept", "answer": "-feature/é"}, "reply %r" % rep)
    check(not questions_waiting(wd), "still pending after its answer")

    ask_call(c, 2, {"question": "Push to main?", "choices": ["yes", "no"]})
    q = question_waiting(wd)
    check(q["choices"] == ["yes", "no"] and q["what"] == "the agent asks: Push to main? [1) yes, 2) no]",
          "pending %r" % q)
    for bad in ("maybe", "3", "Yes"):
        r = harness_exec(wd, "answer", str(q["id"]), bad)
        check(r.returncode == 1 and "not one of the question's choices: 1) yes, 2) no" in r.stderr,
              "%r accepted: %r %r" % (bad, r.stdout, r.stderr))
    r = harness_exec(wd, "approve", str(q["id"]))
    check(r.returncode == 1 and "answer %d CHOICE" % q["id"] in r.stderr and "1) yes, 2) no" in r.stderr,
          "approve of a question with choices: %r" % r.stderr)
    r = harness_exec(wd, "answer", str(q["id"]), "2")
    check(r.returncode == 0, "answer by number: %r" % r.stderr)
    rep = c.recv()
    check(rep["id"] == 2 and rep["result"]["structuredContent"] == {"action": "accept", "answer": "no"},
          "reply %r" % rep)

    ask_call(c, 3, {"question": "May I rewrite history?", "choices": ["yes", "no"]})
    q = question_waiting(wd)
    r = harness_exec(wd, "deny", str(q["id"]))
    check(r.returncode == 0 and "declined" in r.stdout, "deny: %r %r" % (r.stdout, r.stderr))
    rep = c.recv()
    check(rep["id"] == 3 and not rep["result"]["isError"] and
          rep["result"]["structuredContent"] == {"action": "decline", "answer": None}, "reply %r" % rep)
    recs = c.close()
    check(secret not in open(c.log).read(), "the secret reached the audit log")
    pairs = asked(recs)
    check([(qq["call_id"], qq.get("choices")) for qq, _ in pairs] ==
          [("mcp-1", None), ("mcp-2", ["yes", "no"]), ("mcp-3", ["yes", "no"])], "questions %r" % pairs)
    check("redacted" in pairs[0][0]["question"] and "question" in pairs[0][0].get("redacted", []),
          "question record %r" % pairs[0][0])
    check([(a["action"], a.get("answer"), a["verdict"]) for _, a in pairs] ==
          [("accept", "-feature/é", "allow"), ("accept", "no", "allow"), ("decline", None, "deny")],
          "answers %r" % [a for _, a in pairs])
    check(all(a["by"].startswith("control pid ") for _, a in pairs), "by %r" % [a["by"] for _, a in pairs])
    tcs = calls(recs)
    check([(t["call_id"], t["outcome"], t["result"]) for t in tcs] ==
          [("mcp-1", "ok", {"action": "accept", "answer": "-feature/é"}),
           ("mcp-2", "ok", {"action": "accept", "answer": "no"}),
           ("mcp-3", "ok", {"action": "decline"})], "tool_call records %r" % tcs)
    check(recs[-1]["event"] == "session_end" and
          recs[-1]["questions"] == {"answered": 2, "declined": 1, "cancelled": 0}, "session_end %r" % recs[-1])
    chain_verifies(c.log)


def worker_of(p):
    for pid in subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split():
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            if f.read().split(b"\0")[0].endswith(b"harness-mcp-worker"):
                return int(pid)
    raise AssertionError("no harness-mcp-worker under %d" % p.pid)


def test_ask_user_without_elicitation_cancelled_by_timeout_call_or_session_end(wd):
    """Nobody answers within ask_timeout: cancel, reason timeout. The
    client cancels its call: the question is withdrawn at once, and the
    call is not answered. The session ends under a question: cancel,
    reason session end."""
    c = Raw(wd, ["--ask-timeout", "1"])
    t0 = time.monotonic()
    ask_call(c, 1, {"question": "Anyone there?"})
    rep = c.recv(timeout=15)
    took = time.monotonic() - t0
    check(rep["id"] == 1 and rep["result"]["structuredContent"] ==
          {"action": "cancel", "answer": None, "reason": "timeout"}, "reply %r" % rep)
    check(1.0 <= took < 10, "the timeout took %.3fs" % took)
    recs = c.close()
    (_, a), = asked(recs)
    check(a["action"] == "cancel" and a["by"] == "timeout" and a["latency_ms"] >= 1000, "answer %r" % a)
    check(calls(recs)[0]["outcome"] == "timed_out", "record %r" % calls(recs)[0])
    chain_verifies(c.log)

    c = Raw(wd, ["--ask-timeout", "60"])
    ask_call(c, 1, {"question": "Cancel me?"})
    question_waiting(wd)
    c.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    end = time.monotonic() + 5
    while questions_waiting(wd) and time.monotonic() < end:
        time.sleep(0.05)
    check(not questions_waiting(wd), "the cancelled call's question still waits")
    c.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    check(c.recv()["id"] == 2, "the cancelled call was answered")
    ask_call(c, 3, {"question": "Still there?"})
    question_waiting(wd)
    os.kill(worker_of(c.p), signal.SIGKILL)
    rep = c.recv(timeout=15)
    check(rep["id"] == 3 and rep["result"]["structuredContent"] ==
          {"action": "cancel", "answer": None, "reason": "session end"}, "reply %r" % rep)
    recs = c.close()
    check([(a["call_id"], a["action"], a["by"]) for _, a in asked(recs)] ==
          [("mcp-1", "cancel", "cancelled"), ("mcp-2", "cancel", "end")], "answers %r" % asked(recs))
    check([(t["call_id"], t["outcome"]) for t in calls(recs)] == [("mcp-1", "cancelled"), ("mcp-2", "ended")],
          "records %r" % calls(recs))
    check(recs[-1]["questions"] == {"answered": 0, "declined": 0, "cancelled": 2}, "session_end %r" % recs[-1])
    chain_verifies(c.log)


class OnTerminal(Raw):
    """harness-mcp on a new pty, as a shell starts a job (its own process
    group in the terminal's foreground), its client on pipes: the
    approvals put the agent's question on the pty, which the test reads
    and types into."""

    def __init__(self, wd, extra=()):
        argv, self.log = mcp_argv(wd, extra)
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        self.pid, self.tty = pty.fork()
        if self.pid == 0:
            # Only the job holds its ends: harness-mcp sees its client's
            # EOF when the test closes its own.
            os.close(to_w)
            os.close(from_r)
            job = os.fork()
            if job == 0:
                foreground_job()
                os.dup2(to_r, 0)
                os.dup2(from_w, 1)
                os.chdir(wd.path)
                os.execve(argv[0], argv, env_for(wd))
            os.close(to_r)
            os.close(from_w)
            _, st = os.waitpid(job, 0)
            os._exit(os.waitstatus_to_exitcode(st) & 0xff)
        os.close(to_r)
        os.close(from_w)
        self.wfd, self.rfd = to_w, from_r
        self.initialize()

    def write(self, data):
        os.write(self.wfd, data)

    def close(self):
        os.close(self.wfd)
        _, self.status = os.waitpid(self.pid, 0)
        os.close(self.tty)
        os.close(self.rfd)
        return read_log(self.log)


def test_ask_user_without_elicitation_on_the_terminal(wd):
    """The question on harness-mcp's terminal: its text with escape
    sequences shown escaped, its choices numbered; a digit picks one, a
    typed line (Backspace honoured) answers, a line that is none of the
    choices is refused there, Esc declines."""
    c = OnTerminal(wd, ["--ask-timeout", "60"])
    try:
        ask_call(c, 1, {"question": "Deploy\x1b]0;pwned\x07 where?", "choices": ["staging", "production"]})
        seen = read_until(c.tty, b"Esc declines")
        check(b"a question from the agent" in seen and b"1) staging" in seen and b"2) production" in seen and
              b"\\x1b]0;pwned\\x07" in seen and b"\x1b]0;" not in seen and b"a digit picks a choice" in seen,
              "question on the terminal: %r" % seen[-800:])
        time.sleep(0.2)
        os.write(c.tty, b"2")
        rep = c.recv()
        check(rep["id"] == 1 and rep["result"]["structuredContent"] == {"action": "accept", "answer": "production"},
              "digit: %r" % rep)

        ask_call(c, 2, {"question": "Branch name?"})
        seen = read_until(c.tty, b"Esc declines")
        check(b"type your answer and Enter" in seen, "free-text prompt: %r" % seen[-400:])
        time.sleep(0.2)
        os.write(c.tty, b"featx\x7fure/\xc3\xa9\r")
        rep = c.recv()
        check(rep["result"]["structuredContent"] == {"action": "accept", "answer": "feature/é"}, "typed: %r" % rep)

        ask_call(c, 3, {"question": "Which python?", "choices": ["3.11", "3.12"]})
        seen = read_until(c.tty, b"Esc declines")
        check(b"type a choice's number or text and Enter" in seen, "prompt: %r" % seen[-400:])
        time.sleep(0.2)
        os.write(c.tty, b"3.13\r")
        seen = read_until(c.tty, b"again: ")
        check(b"not one of the question's choices" in seen, "a line that is no choice: %r" % seen[-400:])
        os.write(c.tty, b"3.12\r")
        rep = c.recv()
        check(rep["result"]["structuredContent"] == {"action": "accept", "answer": "3.12"}, "choice text: %r" % rep)

        ask_call(c, 4, {"question": "Rewrite history?"})
        read_until(c.tty, b"Esc declines")
        time.sleep(0.2)
        os.write(c.tty, b"\x1b")
        rep = c.recv()
        check(rep["result"]["structuredContent"] == {"action": "decline", "answer": None}, "Esc: %r" % rep)
    finally:
        recs = c.close()
    check(os.WIFEXITED(c.status) and os.WEXITSTATUS(c.status) == 0, "status %r" % c.status)
    pairs = asked(recs)
    check([(a["action"], a.get("answer"), a["by"]) for _, a in pairs] ==
          [("accept", "production", "terminal"), ("accept", "feature/é", "terminal"),
           ("accept", "3.12", "terminal"), ("decline", None, "terminal")], "answers %r" % pairs)
    check(pairs[0][0]["question"] == "Deploy\x1b]0;pwned\x07 where?", "the record keeps the text as asked")
    chain_verifies(c.log)


def test_checkpoint_in_a_worktree_session(wd):
    wd.file("README", "base\n")
    git = ["git", "-C", wd.path, "-c", "user.name=t", "-c", "user.email=t@e"]
    for cmd in (["init", "-q"], ["add", "README"], ["commit", "-qm", "base"]):
        subprocess.run(git + cmd, check=True, capture_output=True)
    steps = [{"call": "session_info"},
             {"call": "file_write", "args": {"path": "new.txt", "content": "work\n"}},
             {"call": "checkpoint"},
             {"call": "checkpoint"}]
    out, recs = sdk(wd, steps, extra=["--worktree"])
    project = ok(out["steps"][0])["project"]
    check(project != wd.path and "/.git/harness/worktrees/" in project, "not a worktree: %s" % project)
    ok(out["steps"][1])
    first, again = ok(out["steps"][2]), ok(out["steps"][3])
    check(first["created"] and first["changed"] >= 1 and not again["created"] and
          again["checkpoint"] == first["checkpoint"], "checkpoints %r %r" % (first, again))
    session = recs[0]["session"]
    ref = "refs/harness/%s/checkpoints/%d" % (session, first["checkpoint"])
    p = subprocess.run(git + ["show", "%s:new.txt" % ref], capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout == "work\n", "the checkpoint lacks the write: %s" % p.stderr)
    check(not os.path.exists(os.path.join(wd.path, "new.txt")), "the user's checkout was written")
    check([c["outcome"] for c in calls(recs)] == ["ok"] * 4, "records %r" % calls(recs))
    # Without --worktree: said, not faked (and twice: no quota is spent)
    out, recs = sdk(wd, [{"call": "checkpoint"}, {"call": "diff"}, {"call": "checkpoint"}])
    for st in out["steps"]:
        check(st["result"]["isError"] and "worktree" in text(st), "%r" % st)


def test_diff_and_restore_run_git_in_the_sandbox(wd):
    wd.file("README", "base\n")
    git = ["git", "-C", wd.path, "-c", "user.name=t", "-c", "user.email=t@e"]
    for cmd in (["init", "-q"], ["add", "README"], ["commit", "-qm", "base"]):
        subprocess.run(git + cmd, check=True, capture_output=True)
    before = subprocess.run(git + ["status", "--porcelain"], capture_output=True, text=True).stdout
    steps = [{"call": "file_write", "args": {"path": "new.txt", "content": "work\n"}},
             {"call": "checkpoint"},
             {"call": "file_write", "args": {"path": "new.txt", "content": "more\n"}},
             {"call": "file_write", "args": {"path": "other.txt", "content": "other\n"}},
             {"call": "diff", "args": {"from": 1}},
             {"call": "diff", "args": {"from": 0, "to": 1}},
             {"call": "restore", "args": {"checkpoint": 1}},
             {"call": "file_read", "args": {"path": "new.txt"}},
             {"call": "file_read", "args": {"path": "other.txt"}},
             {"call": "restore", "args": {"checkpoint": 999}}]
    # The default policy asks before git clean (class destructive), and
    # nobody answers here: the test policy has no such rule.
    out, recs = sdk(wd, steps, extra=["--worktree", "--policy", os.path.join(POLICIES, "test.yaml")])
    s = out["steps"]
    check(ok(s[1])["checkpoint"] == 1, "checkpoint %r" % s[1])
    now = ok(s[4])["diff"]
    check("-work" in now and "+more" in now and "other.txt" in now, "diff to now:\n%s" % now)
    then = ok(s[5])
    check("+work" in then["diff"] and "more" not in then["diff"] and then["to"] == 1, "diff 0..1 %r" % then)
    check(ok(s[6]) == {"checkpoint": 1, "restored": True}, "restore %r" % s[6])
    check(ok(s[7])["content"] == "work\n", "restored content %r" % s[7])
    check(s[8]["result"]["isError"] and "ENOENT" in text(s[8]), "a file the checkpoint lacks stayed: %r" % s[8])
    check(s[9]["result"]["isError"] and "ENOENT" in text(s[9]), "restore of no checkpoint: %r" % s[9])
    tc = calls(recs)
    # git ran in the sandbox: its execs are records of the call
    for i in (4, 6):
        check(any(r.get("call_id") == tc[i]["call_id"] and r.get("category") == "exec" and
                  r["event"] != "tool_call" for r in recs), "%s ran no recorded exec" % tc[i]["tool"])
    after = subprocess.run(git + ["status", "--porcelain"], capture_output=True, text=True).stdout
    check(after == before, "the user's checkout changed: %r" % after)


def test_a_job_left_in_the_background_stays_linked_to_its_call(wd):
    # Without the exec gate (which kills what a code_run leaves when it
    # returns: test_mcp_attacks.py), a code_run's job in a session of
    # its own refuses nothing until its call has returned and its shell
    # is gone (an orphan, harness-exec's): its refusal is still the
    # call's, by the link cache.
    target = "/etc/hx-mcp-bg-%d" % os.getpid()
    job = "import time; time.sleep(1.5); open(%r, 'w')" % target
    steps = [{"call": "code_run", "args": {"command": "setsid python3 -c \"%s\" & sleep 0.5; echo left" % job}},
             {"call": "code_run", "args": {"command": "sleep 2.5"}}]
    out, recs = sdk(wd, steps, extra=["--no-exec-gate"])
    check(ok(out["steps"][0])["stdout"] == "left\n", "first %r" % out["steps"][0])
    check(not os.path.exists(target), "the job wrote %s" % target)
    first, second = calls(recs)
    late = [r for r in recs if r.get("args", {}).get("path") == target and r.get("verdict") == "deny"]
    check(late, "the job's refusal is not recorded:\n%s" % "\n".join(
        "%s %s %s" % (r["event"], r.get("call_id"), r.get("args", {}).get("path")) for r in recs))
    check(late[0]["seq"] > first["seq"], "the refusal came before the call returned: %r" % late[0])
    check(all(r.get("call_id") == first["call_id"] for r in late), "linked to %r, not %s" % (
        [r.get("call_id") for r in late], first["call_id"]))


def test_streamable_http_with_the_sdk(wd):
    # harness-mcp --http: the SDK's Streamable HTTP client, with the
    # token of the session dir's mcp.json; what no client may do is
    # refused; the agent's own processes cannot reach the endpoint.
    wd.file("h.txt", "over http\n")
    log = os.path.join(wd.state, "audit-http.jsonl")
    p = subprocess.Popen([MCP, "--quiet", "--ask-timeout", "0", "--audit-log", log, "--http", "127.0.0.1:0",
                          "--policy", os.path.join(POLICIES, "test.yaml")],
                         cwd=wd.path, env=env_for(wd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        check("MCP at http://127.0.0.1:" in line, "no endpoint said: %r" % line)
        where = line.split("is in ", 1)[1].rstrip(")\n")
        check(os.stat(where).st_mode & 0o077 == 0, "mcp.json is readable by others")
        ep = json.load(open(where))
        host, port = ep["url"][len("http://"):].split("/")[0].rsplit(":", 1)
        raw_http_refusals(host, int(port), ep["token"])
        spec = os.path.join(wd.state, "http.json")
        probe = ("import socket\ntry:\n socket.create_connection(('127.0.0.1', %s), 2)\n print('reached')\n"
                 "except OSError as e:\n print('refused', e.errno)\n" % port)
        steps = [{"call": "file_read", "args": {"path": "h.txt"}},
                 {"call": "code_run", "args": {"command": "sleep 2.2; echo slept"}, "progress": True},
                 {"call": "code_run", "args": {"language": "python", "code": probe}},
                 {"call": "file_read", "args": {"path": "secret/key"}}]
        with open(spec, "w") as f:
            json.dump({"url": ep["url"], "token": ep["token"], "steps": steps, "terminate": True}, f)
        c = subprocess.run(["node", CLIENT, spec], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, HX_MCP_MODULES=MODULES))
        check(c.returncode == 0, "client: %s %s" % (c.stdout[-1500:], c.stderr[-1500:]))
        out = json.loads(c.stdout)
        check(not out.get("fatal") and not out.get("terminate_error"), "client: %r" % out)
        s = out["steps"]
        check(ok(s[0])["content"] == "over http\n", "file_read %r" % s[0])
        check(ok(s[1])["stdout"] == "slept\n" and s[1]["progress"] >= 1, "progress over SSE %r" % s[1])
        check(ok(s[2])["stdout"].startswith("refused"), "the agent reached its own MCP endpoint: %r" % s[2])
        check(s[3]["result"]["isError"] and "rule test-secret" in text(s[3]), "secret %r" % s[3])
        check(p.wait(timeout=60) == 0, "DELETE did not end the session: %s" % p.returncode)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    recs = read_log(log)
    check(recs[-1]["event"] == "session_end", "no session_end")
    tc = calls(recs)
    check([c["tool"] for c in tc] == ["file_read", "code_run", "code_run", "file_read"], "records %r" % tc)
    check(any(r.get("rule") == "harness:protect" and r.get("call_id") == tc[2]["call_id"] for r in recs),
          "the connect to the endpoint was not refused as harness:protect")


def raw_http_refusals(host, port, token, connect=None):
    import http.client

    def req(method, headers, body=None):
        conn = connect() if connect else http.client.HTTPConnection(host, port, timeout=10)
        conn.request(method, "/mcp", body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, dict(r.getheaders()), data

    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-11-25", "capabilities": {}}})
    auth = {"Authorization": "Bearer " + token, "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream"}
    check(req("POST", {}, init)[0] == 401, "no token")
    check(req("POST", dict(auth, Authorization="Bearer " + "0" * len(token)), init)[0] == 401, "a wrong token")
    check(req("POST", dict(auth, Origin="http://attacker.example"), init)[0] == 403, "a web page's origin")
    check(req("GET", auth)[0] == 405, "GET")
    check(req("POST", auth, b"{not json")[0] == 400, "not JSON")
    status, headers, body = req("POST", auth, init)
    sid = {k.lower(): v for k, v in headers.items()}.get("mcp-session-id")
    check(status == 200 and sid and b'"protocolVersion"' in body, "initialize %s %r" % (status, body[:200]))
    ping = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    check(req("POST", auth, ping)[0] == 400, "no session id after initialize")
    check(req("POST", dict(auth, **{"Mcp-Session-Id": "another"}), ping)[0] == 404, "another session id")
    check(req("POST", dict(auth, **{"Mcp-Session-Id": sid}), ping)[0] == 200, "ping")
    return sid


def unix_http(path):
    import http.client
    import socket

    class Conn(http.client.HTTPConnection):
        def connect(self):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(30)
            self.sock.connect(path)
    return lambda: Conn("localhost", timeout=30)


def test_streamable_http_on_a_unix_socket(wd):
    # harness-mcp --http unix:PATH: the same transport on a socket file
    # of mode 0600, removed at the end. The session's own processes
    # cannot use it: a connect by path is refused (harness:protect, by
    # the file's inode), and one that gets past that (here: without the
    # shim and without the kernel layer) is closed unanswered, since its
    # peer is a process under the sandbox's filters.
    import http.client
    wd.file("u.txt", "over a unix socket\n")
    sock = os.path.join(wd.state, "mcp.sock")
    log = os.path.join(wd.state, "audit-unix.jsonl")
    p = subprocess.Popen([MCP, "--quiet", "--ask-timeout", "0", "--audit-log", log, "--no-kernel-notify",
                          "--http", "unix:" + sock, "--policy", os.path.join(POLICIES, "test.yaml")],
                         cwd=wd.path, env=env_for(wd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        check("MCP at http://localhost/mcp on unix:%s " % sock in line, "no endpoint said: %r" % line)
        check(os.stat(sock).st_mode & 0o777 == 0o600, "the socket's mode %o" % os.stat(sock).st_mode)
        ep = json.load(open(line.split("is in ", 1)[1].rstrip(")\n")))
        check(ep["socket"] == sock and ep["url"] == "http://localhost/mcp", "mcp.json %r" % ep)
        conn = unix_http(sock)
        sid = raw_http_refusals(None, None, ep["token"], conn)
        auth = {"Authorization": "Bearer " + ep["token"], "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream", "Mcp-Session-Id": sid}

        def call(n, tool, args):
            c = conn()
            c.request("POST", "/mcp", headers=auth, body=json.dumps(
                {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": tool, "arguments": args}}))
            data = c.getresponse().read().decode()
            c.close()
            msgs = [json.loads(x[5:]) for x in data.splitlines() if x.startswith("data:")]
            return [m for m in msgs if m.get("id") == n][0]["result"]

        got = call(3, "file_read", {"path": "u.txt"})
        check(got["structuredContent"]["content"] == "over a unix socket\n", "file_read %r" % got)
        prog = os.path.join(HELPERS, "static_outside")
        shimmed = call(4, "code_run", {"command": "curl -s --unix-socket %s http://x/mcp; echo curl $?" % sock})
        bare = call(5, "code_run", {"argv": [prog, "http-unix", sock]})
        check(shimmed["structuredContent"]["stdout"] == "curl 7\n", "through the shim %r" % shimmed)
        check(bare["structuredContent"]["stdout"] == "answer 0\n",
              "a session's process was answered: %r" % bare)
        c = conn()
        c.request("DELETE", "/mcp", headers=auth)
        c.getresponse().read()
        check(p.wait(timeout=60) == 0, "DELETE did not end the session: %s" % p.returncode)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    check(not os.path.exists(sock), "the socket file was left")
    recs = read_log(log)
    tc = calls(recs)
    check(any(r.get("rule") == "harness:protect" and r.get("call_id") == tc[1]["call_id"] for r in recs),
          "the connect to the socket was not refused as harness:protect:\n%s" % "\n".join(
              json.dumps(r)[:300] for r in recs if r.get("call_id") == tc[1]["call_id"]))
