"""harness-mcp-worker under the real harness-exec: its file tools and its
code_run children meet the session's policy like any agent's calls (a
denied read is EACCES and a denied record, a write outside the roots is
refused and leaves nothing), and it adds no record of its own making (no
call that bypassed the shim, no refused mkdir of an existing parent)."""

import json
import os

from lib import BUILD, PYTHON, check, harness

WORKER = os.path.join(BUILD, "harness-mcp-worker")

# Inside the session: the worker with a socketpair as fd 3, its other end
# relayed to stdin and stdout. After stdin's end the relay waits for a
# reply to every request sent before it closes the socket (EOF: exit).
BRIDGE = r"""
import json, os, select, socket, sys
a, b = socket.socketpair()
pid = os.fork()
if pid == 0:
    os.dup2(b.fileno(), 3)
    os.dup2(os.open("/dev/null", os.O_RDONLY), 0)
    os.execv(sys.argv[1], [sys.argv[1]])
b.close()
ids, done, buf, inp, shut = set(), set(), b"", 0, False
while True:
    r = select.select([x for x in (inp, a) if x is not None], [], [])[0]
    if inp in r:
        d = os.read(0, 1 << 16)
        if d:
            a.sendall(d)
            for line in d.splitlines():
                ids.add(json.loads(line)["id"])
        else:
            inp = None
    if a in r:
        d = a.recv(1 << 16)
        if not d:
            break
        os.write(1, d)
        buf += d
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            m = json.loads(line)
            if "result" in m or "error" in m:
                done.add(m["id"])
    if inp is None and ids <= done and not shut:
        a.shutdown(socket.SHUT_WR)
        shut = True
os.waitpid(pid, 0)
"""


def serve(wd, requests):
    lines = "".join(json.dumps({"id": i + 1, "tool": t, "args": a}) + "\n"
                    for i, (t, a) in enumerate(requests))
    r = harness([PYTHON, "-c", BRIDGE, WORKER], wd, input=lines, timeout=60)
    r.expect_status(0)
    msgs = [json.loads(l) for l in r.stdout.splitlines()]
    check(msgs and "hello" in msgs[0], "no hello first: %r" % msgs[:2])
    replies = {}
    for m in msgs[1:]:
        if "result" in m or "error" in m:
            check(m["id"] not in replies, "two replies for %d" % m["id"])
            replies[m["id"]] = m
    check(len(replies) == len(requests), "replies %r" % sorted(replies))
    return r, msgs, replies


def test_worker_calls_meet_the_policy(wd):
    secret = os.path.join(wd.path, "secret", "key")
    outside = os.path.join(wd.state, "outside.txt")
    code = os.path.join(wd.path, "src", "m.py")
    r, msgs, rep = serve(wd, [
        ("file_read", {"path": secret}),
        ("file_write", {"path": outside, "content": "x"}),
        ("file_write", {"path": code, "content": "a = 1\nb = 2\n",
                        "create_dirs": True}),
        ("file_patch", {"path": code, "patch": "@@ -1 +1 @@\n-a = 1\n+a = 3\n"
                        "@@ -2 +2 @@\n-b = 9\n+b = 4\n"}),
        ("code_run", {"command": "cat secret/key; echo done", "cwd": wd.path}),
        ("list_dir", {"path": wd.path, "depth": 2}),
    ])
    e = rep[1].get("error", {})
    check(e.get("errno") == "EACCES" and secret in e.get("message", ""),
          "read of the secret: %r" % rep[1])
    r.one(verdict="deny", args_path=secret)
    e = rep[2].get("error", {})
    check(e.get("errno") == "EACCES", "write outside the roots: %r" % rep[2])
    check(not os.path.exists(outside), "the refused write made the file")
    check(not [n for n in os.listdir(wd.state) if "hxtmp" in n],
          "a temporary file was left: %r" % os.listdir(wd.state))
    check(rep[3].get("result", {}).get("created") is True, "write: %r" % rep[3])
    e = rep[4].get("error", {})
    check(e.get("hunk") == 2 and e.get("errno") == "EINVAL", "patch: %r" % rep[4])
    with open(code) as f:
        check(f.read() == "a = 1\nb = 2\n", "a failed patch changed the file")
    res = rep[5].get("result", {})
    check(res.get("stdout") == "done\n" and "Permission denied" in res.get("stderr", ""),
          "code_run: %r" % rep[5])
    started = [m for m in msgs if m.get("id") == 5 and "started" in m]
    check(started and started[0]["started"]["pid"] == res.get("pid"),
          "started %r, result pid %r" % (started, res.get("pid")))
    # cat's refusal, by a process of the call's tree.
    cat = [x for x in r.events(verdict="deny")
           if x.get("args", {}).get("path", "").endswith("secret/key")
           and x.get("pid") != msgs[0]["hello"]["pid"]]
    check(cat, "no refusal of cat's read:\n%s" % r.dump())
    ents = {x["path"]: x for x in rep[6]["result"]["entries"]}
    check("src/m.py" in ents, "list_dir: %r" % ents)
    check(ents.get("secret", {}).get("error") == "EACCES",
          "the denied directory: %r" % ents.get("secret"))
    # Nothing the worker did was out of the shim's sight, and no refusal
    # but those asked for (the secret read, listed, cat; the write).
    check(not r.events(shim_bypass=True),
          "calls the shim missed: %s" % r.events(shim_bypass=True)[:2])
    denied = [x for x in r.records if x.get("verdict") == "deny"]
    paths = sorted(set(x.get("args", {}).get("path", "") for x in denied))
    check(all(p.endswith(("secret", "secret/key")) or "hxtmp" in p for p in paths),
          "refusals: %r" % paths)
