"""Helpers for the integration suite: run real programs under the real
harness-exec and shim, and read the audit log they leave."""

import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
EXEC = os.path.join(BUILD, "harness-exec")
POLICY_TOOL = os.path.join(BUILD, "harness-policy")
AUDIT_TOOL = os.path.join(BUILD, "harness-audit")
SHIM = os.path.join(BUILD, "libharness-shim.so")
HELPERS = os.path.join(BUILD, "helpers")
POLICIES = os.path.join(ROOT, "tests", "integration", "policies")
PYTHON = "/usr/bin/python3"

# Ports the test policy allows and denies on loopback (policies/test.yaml).
ALLOWED_PORTS = range(20000, 21000)
DENIED_PORTS = range(21000, 22000)


class TestFailure(AssertionError):
    pass


class Skip(Exception):
    """Raised by a test that cannot run here; the reason is printed."""


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


# Known gaps a test met this run: (test name, reason). A test calls
# xfail(reason) where a documented limitation made one of its checks
# fail; the runner prints an XFAIL line naming it, so a gap is never a
# silent pass. Everything else the test checks must still hold.
XFAILS = []


def xfail(reason):
    XFAILS.append(reason)


def alone(fn):
    """Marks a test that runs with no other test of its run beside it:
    it reads or sets what every root session changes (kernel audit).
    The runner keeps such tests for the end, one at a time."""
    fn.alone = True
    return fn


class Run:
    """One finished harness-exec run: status, output and audit records."""

    def __init__(self, proc, log, workdir):
        self.status = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.log = log
        self.workdir = workdir
        self.records = read_log(log)

    def alerts(self):
        return [r for r in self.records if r.get("event") == "alert"]

    def events(self, **want):
        """Records whose fields match want (args_path=..., args_argv0=...)."""
        out = []
        for r in self.records:
            if all(field(r, k) == v for k, v in want.items()):
                out.append(r)
        return out

    def one(self, **want):
        found = self.events(**want)
        check(found, "no audit record with %r; records:\n%s" % (want, self.dump()))
        return found[0]

    def none(self, **want):
        found = self.events(**want)
        check(not found, "unexpected audit record with %r: %s" % (want, found[:2]))

    def failed(self, errno_name):
        """The "failed" records of errno_name, each with the record of
        the decision it follows (its ref_seq), or None."""
        by_seq = {r.get("seq"): r for r in self.records if "seq" in r}
        return [(r, by_seq.get(r.get("ref_seq")))
                for r in self.events(event="failed", errno=errno_name)]

    def dump(self, limit=40):
        lines = []
        for r in self.records[-limit:]:
            a = r.get("args", {})
            lines.append("  %s %s pid=%s %s %s %s rule=%s" % (
                r.get("seq"), r.get("event"), r.get("pid"), r.get("verdict"),
                a.get("path", ""), " ".join(a.get("argv", [])[:6]) or a.get("addr", "") or a.get("host", ""),
                r.get("rule")))
        return "\n".join(lines)

    def expect_status(self, want=0):
        check(self.status == want, "exit status %s, want %s\nstdout: %s\nstderr: %s" % (
            self.status, want, self.stdout[-2000:], self.stderr[-2000:]))


def field(rec, key):
    """args_path -> rec["args"]["path"]; args_argv0 -> rec["args"]["argv"][0]."""
    if key.startswith("args_"):
        sub = key[5:]
        args = rec.get("args", {})
        if sub.startswith("argv") and sub[4:].isdigit():
            argv = args.get("argv", [])
            i = int(sub[4:])
            return argv[i] if i < len(argv) else None
        return args.get(sub)
    return rec.get(key)


def read_log(path):
    recs = []
    if not os.path.exists(path):
        return recs
    with open(path, "rb") as f:
        for line in f:
            recs.append(json.loads(line))
    return recs


class Workdir:
    """A temporary project directory the harnessed program runs in."""

    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="hx-it-")
        os.makedirs(os.path.join(self.path, "secret"))
        with open(os.path.join(self.path, "secret", "key"), "w") as f:
            f.write("TOP-SECRET\n")
        self.state = tempfile.mkdtemp(prefix="hx-state-")

    def file(self, name, text=""):
        p = os.path.join(self.path, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
        return p

    def cleanup(self):
        # fake_home() (test_default_policy) makes <path>-home beside it.
        for top in (self.path, self.state, self.path + "-home"):
            if os.path.lexists(top):
                shutil.rmtree(top, onerror=_writable_then_retry)


def _writable_then_retry(func, path, _exc):
    """The masks' covers are mode 0 (unreadable, unlistable): made
    listable, what rmtree could not remove goes on a second try."""
    try:
        os.chmod(path if os.path.isdir(path) else os.path.dirname(path), 0o700)
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            func(path)
    except OSError:
        pass


def harness(cmd, wd, policy="test.yaml", mode=None, extra=(), env=None,
            timeout=120, input=None, log=None, ask_timeout=0, wrap=()):
    """Runs cmd under harness-exec in wd; returns a Run. An ask is refused
    at once (ask_timeout 0) unless the test waits for one (test_ask.py).
    wrap: a command that execs harness-exec's argv (its last arguments),
    for a test that starts it otherwise (another terminal)."""
    log = log or os.path.join(wd.state, "audit-%d.jsonl" % len(os.listdir(wd.state)))
    argv = [EXEC, "--quiet", "--audit-log", log]
    if ask_timeout is not None:
        argv += ["--ask-timeout", str(ask_timeout)]
    if policy:
        argv += ["--policy", os.path.join(POLICIES, policy) if "/" not in policy else policy]
    if mode:
        argv += ["--mode", mode]
    if os.environ.get("HX_TEST_NO_EXEC_GATE") == "1":
        extra = ["--no-exec-gate"] + list(extra)  # the whole suite without the gate
    argv += list(extra) + ["--"] + list(cmd)
    e = dict(os.environ)
    e["XDG_STATE_HOME"] = wd.state
    e.pop("LD_PRELOAD", None)
    e.pop("HARNESS_SOCKET", None)
    if env:
        e.update(env)
    proc = subprocess.run(list(wrap) + argv, cwd=wd.path, env=e, capture_output=True,
                          text=True, timeout=timeout, input=input)
    return Run(proc, log, wd)


class Started:
    """harness() run on a thread of its own, for a test that acts on the
    session while it runs (stops the supervisor, signals the agent):
    join() waits for it and returns its Run."""

    def __init__(self, *args, **kwargs):
        import threading
        self.run = None
        self.thread = threading.Thread(target=self._go, args=args, kwargs=kwargs)
        self.thread.start()

    def _go(self, *args, **kwargs):
        self.run = harness(*args, **kwargs)

    def alive(self):
        return self.thread.is_alive()

    def join(self, timeout=60):
        self.thread.join(timeout)
        return self.run


def go_binary(wd, source, name):
    """A static Go program (CGO off: Go's own resolver, raw syscalls)
    built from source into wd.state; None without go."""
    go = shutil.which("go")
    if not go:
        return None
    src = os.path.join(wd.state, name + ".go")
    out = os.path.join(wd.state, name)
    with open(src, "w") as f:
        f.write(source)
    # A cache kept between runs (per user): a cold build takes seconds.
    cache = os.path.join(tempfile.gettempdir(), "hx-gocache-%d" % os.getuid())
    e = dict(os.environ, CGO_ENABLED="0", GOCACHE=cache,
             GOPATH=os.path.join(wd.state, "gopath"), HOME=wd.state)
    e.pop("LD_PRELOAD", None)
    subprocess.run([go, "build", "-o", out, src], check=True, env=e, cwd=wd.state,
                   capture_output=True, timeout=300)
    return out


def preload_library(where, name, source):
    """A shared library built with gcc from C source into the directory
    where, for LD_PRELOAD; the test is skipped without gcc."""
    gcc = shutil.which("gcc")
    if not gcc:
        raise Skip("no gcc")
    src = os.path.join(where, name + ".c")
    lib = os.path.join(where, name + ".so")
    with open(src, "w") as f:
        f.write(source)
    subprocess.run([gcc, "-shared", "-fPIC", "-o", lib, src, "-ldl"], check=True, capture_output=True)
    return lib


def peer_info(pid, uid, gid):
    """What a server learns of a unix peer: SO_PEERCRED, and the comm and
    effective capabilities of that pid (read while it is connected)."""
    info = {"pid": pid, "uid": uid, "gid": gid, "comm": None, "capeff": None}
    try:
        with open("/proc/%d/comm" % pid) as f:
            info["comm"] = f.read().strip()
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("CapEff:"):
                    info["capeff"] = int(line.split()[1], 16)
    except OSError:
        pass
    return info


class Listener:
    """A TCP listener on 127.0.0.1 in a port range, or a unix stream one
    at path, counting connections and bytes received, to prove what did
    or did not reach it; peers holds each connection's SO_PEERCRED."""

    def __init__(self, ports=(), path=None, kind=socket.SOCK_STREAM):
        if path:
            self.sock = socket.socket(socket.AF_UNIX, kind)
            self.sock.bind(path)
            self.port = None
        else:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            for port in ports:
                try:
                    self.sock.bind(("127.0.0.1", port))
                    break
                except OSError:
                    continue
            else:
                raise TestFailure("no free port in %r" % (ports,))
            self.port = self.sock.getsockname()[1]
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.accepted = 0
        self.received = b""
        self.peers = []
        self._stop = False
        self._t = threading.Thread(target=self._serve, daemon=True)
        self._t.start()

    def _serve(self):
        while not self._stop:
            try:
                c, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.accepted += 1
            if self.port is None:
                cred = c.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                    struct.calcsize("3i"))
                self.peers.append(peer_info(*struct.unpack("3i", cred)))
            c.settimeout(1)
            try:
                while True:
                    d = c.recv(4096)
                    if not d:
                        break
                    self.received += d
                    c.sendall(b"pong\n")
            except OSError:
                pass
            c.close()

    def close(self):
        self._stop = True
        self._t.join()
        self.sock.close()


def tool(argv, cwd=None, env=None):
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    if env:
        e.update(env)
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=e, timeout=60)


class PacketCapture:
    """The frames of one ethertype on interface dev that keep(data,
    addr) turns into something, in seen; root only (AF_PACKET), and
    nothing when dev is None. close() after the traffic."""

    def __init__(self, dev, ethertype, keep):
        self.seen = []
        self.sock = None
        if os.geteuid() != 0 or dev is None:
            return
        self.keep = keep
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ethertype))
        self.sock.bind((dev, 0))
        self.sock.settimeout(0.2)
        self._stop = False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop:
            try:
                d, a = self.sock.recvfrom(4096)
            except (socket.timeout, OSError):
                continue
            got = self.keep(d, a)
            if got is not None:
                self.seen.append(got)

    def close(self):
        if self.sock:
            import time
            time.sleep(0.3)
            self._stop = True
            self._t.join()
            self.sock.close()
