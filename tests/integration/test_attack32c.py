"""Attack review 32, part c: the masks as the target, under the
embedded default policy, from static programs, as root and as an
ordinary user.

Each mask was bound on its name's dentry (an O_PATH fd), then made
read-only by a remount by its name. A process outside the session (the
user's tool, a git checkout) that swapped a denied name between the
walk and the mask made the start fail: the name renamed over after the
bind was no mount point (EINVAL: "sandbox: masks: Invalid argument",
seen in CI), and a file swapped for a directory, or the other way, had
no cover of its kind (ENOTDIR)."""

import ctypes
import json
import os
import subprocess
import sys
import time

from lib import EXEC, check
from test_default_policy import fake_home
from test_mask_records import _wait_for

BUSYBOX = "/bin/busybox"

# renameat2(RENAME_EXCHANGE) of each pair, until the stop file is there.
SWAP = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
stop, pairs = sys.argv[1], sys.argv[2:]
pairs = [(pairs[i].encode(), pairs[i + 1].encode()) for i in range(0, len(pairs), 2)]
open(stop + ".up", "w").close()
while not os.path.exists(stop):
    for a, b in pairs:
        libc.renameat2(-100, a, -100, b, 2)
"""


def _records(log):
    with open(log) as f:
        return [json.loads(l) for l in f]


def _swapped_at_start(wd, home, n):
    """A static agent started while a process outside swaps each d*/.env
    (a file) with d*/stash (a directory holding a key), reads them all
    once the swaps stop and the late masks had their time."""
    stop = os.path.join(wd.state, "stop-%d" % n)
    pairs = []
    for i in range(16):
        pairs += [os.path.join(wd.path, "d%d" % i, ".env"),
                  os.path.join(wd.path, "d%d" % i, "stash")]
    swap = subprocess.Popen([sys.executable, "-c", SWAP, stop] + pairs)
    log = os.path.join(wd.state, "swap-%d.jsonl" % n)
    go = os.path.join(wd.path, "go-%d" % n)
    script = ("while [ ! -e %s ]; do sleep 0.02; done; cat d*/.env d*/.env/key; echo done"
              % go)
    extra = ["--no-kernel-audit"] if os.geteuid() == 0 else []
    try:
        _wait_for(lambda: os.path.exists(stop + ".up"), "the swapper")
        proc = subprocess.Popen([EXEC, "--quiet", "--audit-log", log] + extra +
                                ["--", BUSYBOX, "sh", "-c", script],
                                cwd=wd.path, env=dict(os.environ, HOME=home),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
    finally:
        open(stop, "w").close()
        swap.wait()
    # The late masks of what the last swaps put on the names.
    time.sleep(1.0)
    open(go, "w").close()
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, err, _records(log)


def test_a_secret_swapped_at_the_start_neither_fails_it_nor_is_read(wd):
    """Before: each of three sessions failed to start, "sandbox: masks:
    Invalid argument" or "Not a directory"."""
    home = fake_home(wd)
    for i in range(16):
        d = os.path.join(wd.path, "d%d" % i)
        os.makedirs(os.path.join(d, "stash"))
        wd.file("d%d/.env" % i, "SECRET-FILE\n")
        wd.file("d%d/stash/key" % i, "SECRET-KEY\n")
    for n in range(3):
        rc, out, err, recs = _swapped_at_start(wd, home, n)
        check(rc == 0 and "masks" not in err and out.endswith("done\n"),
              "session %d did not start or end: %d %r %r" % (n, rc, out, err[-800:]))
        check("SECRET" not in out, "session %d read a swapped secret: %r" % (n, out))
        reads = [e for e in recs if e.get("layer") == "mask" and e["event"] != "mask_added"]
        # The shell's glob looks beneath a masked .env (harness:mask).
        bad = [e for e in reads if e["verdict"] != "deny" or "/.env" not in e["args"]["path"] or
               e["rule"] not in ("dotenv", "harness:mask")]
        check(reads and not bad, "session %d's mask records: %r" % (n, (len(reads), bad[:3])))


def test_a_file_beneath_a_masked_directory_is_not_reached_through_the_kernel_layer(wd):
    """A directory the policy names (.env/, .env.d/) is masked whole,
    but the policy lets its files be read (its rules name the directory
    only). The kernel layer emulates a static program's O_RDWR open,
    link and rename in harness-exec's own view, where no mask is: it
    opened .env/key for the agent, linked it out of the mask and moved
    it or its directory out (the records said allowed writes). Before:
    every one of them printed or moved the secret."""
    from lib import HELPERS
    home = fake_home(wd)
    os.makedirs(os.path.join(wd.path, ".env"))
    os.makedirs(os.path.join(wd.path, ".env.d", "sub"))
    wd.file(".env/key", "SECRET-D1\n")
    wd.file(".env.d/sub/prod", "SECRET-D2\n")
    wd.file("plain", "PLAIN\n")
    h = os.path.join(HELPERS, "static_attack32c")
    tries = ["rw .env/key", "creat .env/key", "rw .env.d/sub/prod", "ln .env/key copy",
             "mv .env/key moved", "mv .env.d/sub sub2"]
    script = "; ".join("%s %s" % (h, t) for t in tries)
    script += ("; %s cat copy; %s cat moved; %s cat sub2/prod; %s rw plain; %s ln plain p2; echo done"
               % (h, h, h, h, h))
    log = os.path.join(wd.state, "beneath.jsonl")
    extra = ["--no-kernel-audit"] if os.geteuid() == 0 else []
    r = subprocess.run([EXEC, "--quiet", "--audit-log", log] + extra + ["--", BUSYBOX, "sh", "-c", script],
                       cwd=wd.path, env=dict(os.environ, HOME=home), capture_output=True, text=True,
                       timeout=60)
    out = r.stdout
    check(out.endswith("done\n") and "PLAIN" in out, "the session: %r %r" % (out, r.stderr[-800:]))
    check("SECRET" not in out, "a file beneath a mask was read: %r" % out)
    lines = out.splitlines()
    check(lines[:len(tries)] == ["err EACCES"] * len(tries), "the tries: %r" % lines)
    for name in ("copy", "moved", "sub2"):
        check(not os.path.lexists(os.path.join(wd.path, name)), "%s was made" % name)
    with open(os.path.join(wd.path, ".env", "key")) as f:
        check(f.read() == "SECRET-D1\n", "the user's .env/key changed")
    check(os.path.exists(os.path.join(wd.path, "p2")), "the plain file's link was refused")
    recs = _records(log)
    revoked = [e for e in recs if e["event"] == "revoked" and e.get("rule") == "harness:mask"]
    check(len(revoked) == len(tries), "revocations %r" % revoked)
    for e in recs:
        p = e.get("args", {}).get("path", "") + " " + e.get("args", {}).get("path2", "")
        if e.get("layer") == "kernel" and ".env" in p and e.get("verdict") == "allow":
            check(any(v["ref_seq"] == e["seq"] for v in revoked), "allowed and done: %r" % e)


def test_a_session_started_meanwhile_is_no_failed_mask(wd):
    """harness's own state (~/.local/state/harness) is a directory mask
    inside the write root ~/.local; the names made beneath it during the
    session (another session's directory) were seen by the watch, their
    masks refused by the mask above them, and each was a mask_added
    record with "error": "Permission denied" and a late_failed count, a
    mask that failed where the name was hidden all along. Before: one
    such record for the session started meanwhile."""
    home = fake_home(wd)
    os.makedirs(os.path.join(home, ".local", "share"), exist_ok=True)
    wd.file(".env", "SECRET\n")
    env = dict(os.environ, HOME=home)
    env.pop("XDG_STATE_HOME", None)
    log = os.path.join(wd.state, "first.jsonl")
    extra = ["--no-kernel-audit"] if os.geteuid() == 0 else []
    first = subprocess.Popen([EXEC, "--quiet", "--audit-log", log] + extra +
                             ["--", BUSYBOX, "sh", "-c", "while [ ! -e go ]; do sleep 0.02; done"],
                             cwd=wd.path, env=env)
    try:
        _wait_for(lambda: os.path.exists(log) and '"session_start"' in open(log).read(), "the first")
        r = subprocess.run([EXEC, "--quiet"] + extra + ["--", BUSYBOX, "true"], cwd=wd.path, env=env,
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "the second session: %r" % r.stderr[-500:])
        time.sleep(0.5)
    finally:
        open(os.path.join(wd.path, "go"), "w").close()
        first.wait(timeout=60)
    recs = _records(log)
    state = os.path.join(home, ".local", "state", "harness")
    check(os.path.isdir(os.path.join(state, "sessions")), "no sessions directory at %s" % state)
    failed = [e for e in recs if e["event"] == "mask_added" and "error" in e["args"]]
    check(not failed, "masks said to fail: %r" % failed)
    end = [e for e in recs if e["event"] == "session_end"]
    check(end and not end[0]["mask_records"].get("late_failed"), "session_end %r" % end)
