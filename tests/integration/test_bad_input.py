"""Bad input gets a clear error and loses nothing: malformed policies,
hostile clients on the supervisor socket, tampered audit logs."""

import json
import os
import re

from lib import AUDIT_TOOL, EXEC, HELPERS, POLICIES, POLICY_TOOL, check, harness, tool

# (file, line, column) where each broken policy is wrong.
BAD = {
    "syntax.yaml": (5, None),
    "unknown-key.yaml": (5, 5),
    "bad-glob.yaml": (4, None),
    "bad-cidr.yaml": (4, None),
}


def test_malformed_policies_name_file_line_column(wd):
    for name, (line, col) in BAD.items():
        path = os.path.join(POLICIES, "bad", name)
        c = tool([POLICY_TOOL, "check", path])
        check(c.returncode == 2, "%s: harness-policy check exit %d" % (name, c.returncode))
        m = re.search(re.escape(path) + r":(\d+):(\d+): \S", c.stderr)
        check(m, "%s: no file:line:column in %r" % (name, c.stderr))
        check(int(m.group(1)) == line and (col is None or int(m.group(2)) == col),
              "%s: reported %s:%s, want %s:%s" % (name, m.group(1), m.group(2), line, col))
        marker = os.path.join(wd.path, "ran-" + name)
        r = harness(["touch", marker], wd, policy=path)
        check(r.status == 2, "%s: harness-exec exit %d" % (name, r.status))
        check(m.group(0) in r.stderr, "%s: harness-exec did not print %r: %r" % (name, m.group(0), r.stderr))
        check(not os.path.exists(marker), "%s: the command ran" % name)


def test_failing_example_fails_check(wd):
    path = os.path.join(POLICIES, "bad", "failing-example.yaml")
    c = tool([POLICY_TOOL, "check", path])
    check(c.returncode == 1, "exit %d: %s" % (c.returncode, c.stderr))
    check(re.search(re.escape(path) + r":5:\d+: .*git status", c.stderr), "message %r" % c.stderr)


def test_policy_check_accepts_good_policies(wd):
    for name in ("test.yaml", "audit-reads.yaml"):
        c = tool([POLICY_TOOL, "check", os.path.join(POLICIES, name)], cwd=wd.path)
        check(c.returncode == 0, "%s: %s %s" % (name, c.stdout, c.stderr))
    d = tool([POLICY_TOOL, "default"])
    check(d.returncode == 0 and "version: 1" in d.stdout, "default: %r" % d.stdout[:200])
    p = os.path.join(wd.path, "default.yaml")
    with open(p, "w") as f:
        f.write(d.stdout)
    c = tool([POLICY_TOOL, "check", p])
    check(c.returncode == 0, "the embedded default does not check: %s" % c.stderr)


def test_hostile_client_is_dropped_good_client_served(wd):
    helper = os.path.join(HELPERS, "static_wire_client")
    r = harness(["sh", "-c", "%s both %s 200 && echo after > after.txt" % (helper, wd.path)], wd)
    r.expect_status(0)
    lines = r.stdout.splitlines()
    closed = [l for l in lines if l.startswith("closed ")]
    still = [l for l in lines if l.startswith(("open ", "sendfail "))]
    check(len(closed) == 10 and not still, "hostile messages not all dropped: %r" % lines)
    check("replies 200" in lines, "good client starved: %r" % lines)
    errors = r.events(event="protocol_error")
    check(len(errors) >= 10, "%d protocol_error records" % len(errors))
    goods = [x for x in r.events(op="write") if "/good-" in x.get("args", {}).get("path", "")]
    check(len(goods) == 200, "%d good requests logged" % len(goods))
    # They claimed writes the kernel never saw (a client, not a program
    # making the calls): each "shim+kernel" claim is taken back.
    if all(x["layer"] == "shim+kernel" for x in goods):
        back = {x["ref_seq"] for x in r.events(event="kernel_unconfirmed")}
        check(back >= {x["seq"] for x in goods}, "unconfirmed claims not reported")
    r.one(op="write", args_path=os.path.join(wd.path, "after.txt"))
    v = tool([AUDIT_TOOL, "verify", r.log])
    check(v.returncode == 0, "chain broken: %s" % v.stdout)


def _lines(path):
    with open(path, "rb") as f:
        return f.read().splitlines(keepends=True)


def _write(path, lines):
    with open(path, "wb") as f:
        f.writelines(lines)


def test_audit_verify_detects_tampering(wd):
    r = harness(["sh", "-c", "echo a > a.txt; echo b > b.txt; echo c > c.txt"], wd)
    r.expect_status(0)
    ok = tool([AUDIT_TOOL, "verify", r.log])
    check(ok.returncode == 0, "clean log fails: %s %s" % (ok.stdout, ok.stderr))
    lines = _lines(r.log)
    check(len(lines) >= 5, "too few records")
    bad = os.path.join(wd.state, "bad.jsonl")
    victim = next(i for i, l in enumerate(lines) if b'"op":"write"' in l)

    edited = list(lines)
    edited[victim] = edited[victim].replace(b"a.txt", b"z.txt")
    deleted = lines[:victim] + lines[victim + 1:]
    swapped = list(lines)
    swapped[victim], swapped[victim + 1] = swapped[victim + 1], swapped[victim]
    for what, content in (("edited", edited), ("deleted", deleted), ("reordered", swapped)):
        _write(bad, content)
        v = tool([AUDIT_TOOL, "verify", bad])
        check(v.returncode == 1, "%s record not detected: %s" % (what, v.stdout))
        out = v.stdout + v.stderr
        check(re.search(r":%d: " % (victim + 1), out), "%s: wrong line reported: %r" % (what, out))
    # A forged record with a recomputed hash still breaks the next link.
    rec = json.loads(lines[victim])
    check("prev" in rec and "hash" in rec, "record lacks prev/hash")


def test_harness_exec_usage_errors(wd):
    for argv in ([EXEC, "--mode", "bogus", "--", "true"], [EXEC, "--no-such-option", "--", "true"], [EXEC]):
        c = tool(argv, cwd=wd.path, env={"XDG_STATE_HOME": wd.state})
        check(c.returncode == 2, "%r exit %d" % (argv[1:], c.returncode))
    h = tool([EXEC, "--help"])
    check(h.returncode == 0 and "--policy" in h.stdout and "EXIT STATUS" in h.stdout.upper(), "help: %r" % h.stdout[:300])
    for t in (POLICY_TOOL, AUDIT_TOOL):
        h = tool([t, "--help"])
        check(h.returncode == 0 and len(h.stdout) > 200, "%s --help: %r" % (t, h.stdout))


def test_forged_pid_is_not_believed(wd):
    helper = os.path.join(HELPERS, "static_wire_client")
    r = harness([helper, "forge", wd.path], wd)
    r.expect_status(0)
    words = r.stdout.split()
    check(words[:1] == ["pid"] and words[3] == "1", "client output %r" % r.stdout)
    real = int(words[1])
    rec = r.one(op="write", args_path=os.path.join(wd.path, "forged"))
    check(rec["pid"] == real, "record believes the claimed pid: %r" % rec)
    check(rec.get("claimed_pid") == 1, "the lie is not recorded: %r" % rec)
