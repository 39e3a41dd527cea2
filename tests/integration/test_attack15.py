"""The fifteenth attack review: records that say one thing while
another happened, claims from the agent's side, and limits. Each attack
is made as the attacker would (a static program that speaks the
protocol itself and makes raw system calls), in enforce and in audit
mode, and checked for its record."""

import os

from lib import HELPERS, check, harness

MUT_CLAIM = os.path.join(HELPERS, "static_mut_claim")
MODES = ("enforce", "audit")


def _claimed_then_ran(wd, mode, argv, event):
    r = harness([MUT_CLAIM] + argv, wd, policy=None, mode=mode)
    check(r.status == 0 and r.stdout.endswith("done\n"),
          "%s %s: %r" % (mode, argv[0], (r.status, r.stdout, r.stderr[-400:])))
    return r


def test_a_claim_stands_only_for_the_call_it_names(wd):
    """The kernel layer's record of a call was left out when the shim
    had asked about the same op on the same path just before: the key
    both layers matched was the path (and an exec's argv), not what
    else the record shows. A program that speaks the protocol asked
    for a symlink to README and made one to ~/.ssh/id_rsa; asked for a
    rename to b and renamed to c; asked for an open for append and
    chmodded the file 0777, or truncated it: each time the log named
    only the claim. Now a claim stands for the kernel layer's view only
    when both name the same call: its second path (a link's target
    text), its open flags and mode, its kind (an open, a chmod); what
    ran has the kernel layer's record, and the claim a
    kernel_unconfirmed."""
    home = os.path.expanduser("~")
    secret = os.path.join(home, ".ssh", "id_rsa")
    for mode in MODES:
        d = wd.path
        for f in ("l", "a", "b", "c", "f", "g"):
            try:
                os.unlink(os.path.join(d, f))
            except FileNotFoundError:
                pass
        for f in ("a", "f", "g"):
            with open(os.path.join(d, f), "w") as fh:
                fh.write("data\n")
        cases = [
            (["symlink", os.path.join(d, "l"), "README", secret], "symlink",
             lambda a: a.get("path2") == secret,
             lambda: os.readlink(os.path.join(d, "l")) == secret),
            (["rename", os.path.join(d, "a"), os.path.join(d, "b"), os.path.join(d, "c")],
             "rename", lambda a: a.get("path2") == os.path.join(d, "c"),
             lambda: os.path.exists(os.path.join(d, "c"))),
            (["chmod", os.path.join(d, "f")], "chmod",
             lambda a: a.get("mode") == "0777",
             lambda: os.stat(os.path.join(d, "f")).st_mode & 0o777 == 0o777),
            (["trunc", os.path.join(d, "g")], "openat",
             lambda a: "O_TRUNC" in a.get("flags", ""),
             lambda: os.path.getsize(os.path.join(d, "g")) == 0),
        ]
        for argv, event, shows, happened in cases:
            r = _claimed_then_ran(wd, mode, argv, event)
            what = "%s %s" % (mode, argv[0])
            check(happened(), "%s: the call did not happen: %r" % (what, r.stdout))
            ran = [x for x in r.records if x.get("event") == event and
                   x.get("layer") == "kernel" and shows(x.get("args", {}))]
            check(len(ran) == 1,
                  "%s: no kernel record of what ran:\n%s" % (what, r.dump()))
            claimed = [x for x in r.records if x.get("layer") == "shim+kernel"]
            check(len(claimed) == 1, "%s: the claim: %s" % (what, r.dump()))
            r.one(event="kernel_unconfirmed", ref_seq=claimed[0]["seq"])


HONEST = r'''
import os, sys
os.chdir(sys.argv[1])
os.mkdir("d", 0o750)
with open("w.txt", "w") as f: f.write("x")
with open("w.txt", "a") as f: f.write("y")
with open("x.txt", "x") as f: f.write("z")
fd = os.open("m.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o640); os.close(fd)
fd = os.open("m.txt", os.O_RDWR | os.O_APPEND); os.close(fd)
os.rename("w.txt", "d/w2.txt")
os.link("x.txt", "d/x2.txt")
os.symlink("../m.txt", "d/lnk")
os.truncate("m.txt", 0)
os.unlink("x.txt")
os.mkdir("d2"); os.rmdir("d2")
print("ok")
'''


def test_a_programs_own_calls_still_make_one_record_each(wd):
    """The key now covers each call's other arguments: the shim's and
    the kernel layer's reading of them must still agree for a program
    that makes its calls through libc (python: open's modes, os.open
    with a mode and O_CLOEXEC, mkdir, rename, link, symlink, truncate),
    or every such call would be logged twice and marked a bypass."""
    for mode in MODES:
        here = os.path.join(wd.path, mode)
        os.mkdir(here)
        r = harness(["/usr/bin/python3", "-c", HONEST, here], wd, mode=mode)
        check(r.status == 0 and "ok" in r.stdout, "%s: %r" % (mode, (r.stdout, r.stderr[-400:])))
        mine = [x for x in r.records if x.get("op") in
                ("write", "mkdir", "rename", "link", "symlink", "truncate", "unlink", "rmdir")
                and here in str(x.get("args", {}).get("path", ""))]
        check(len(mine) >= 9, "%s: too few records:\n%s" % (mode, r.dump(80)))
        bad = [x for x in mine if x.get("layer") != "shim+kernel" or x.get("shim_bypass")]
        check(not bad, "%s: seen twice or as a bypass: %r" % (mode, bad))
        check(not r.events(event="kernel_unconfirmed"),
              "%s: unconfirmed:\n%s" % (mode, r.dump(80)))


PROBE = os.path.join(HELPERS, "static_attack15")


def test_a_unix_address_longer_than_the_kernel_takes_ends_no_session(wd):
    """A unix address is at most 110 bytes (struct sockaddr_un): the
    kernel answers EINVAL to a longer one. The wire took 128 (a
    sockaddr_storage) and the kernel layer read 128, and each copied
    the path, without a NUL, into a buffer of 109 bytes: a shim request
    naming such an address (connect, send, listen), or a raw connect,
    sendto or bind of one from any program of the session, aborted
    harness-exec (SIGABRT, "buffer overflow detected": exit 134, the log
    cut without its session_end or anchor). Now the request is a
    protocol error that closes its connection, the call gets the
    kernel's EINVAL, and the session goes on to its end."""
    cases = [(["wire", op], "verdict none") for op in ("connect", "send", "listen")]
    cases += [([call], "error EINVAL") for call in ("connect", "sendto", "bind", "abstract")]
    for argv, first in cases:
        for mode in MODES:
            r = harness([PROBE, "longunix"] + argv, wd, policy=None, mode=mode)
            what = "%s %s" % (mode, " ".join(argv))
            check(r.status == 0, "%s: harness-exec ended %d: %r" % (what, r.status, r.stderr[-300:]))
            # audit mode allows the write it asks about (0), enforce refuses (2)
            alive = "alive %d" % (2 if mode == "enforce" else 0)
            check(r.stdout == "%s\n%s\n" % (first, alive), "%s: %r" % (what, r.stdout))
            check(r.records[-1]["event"] == "session_end", "%s: the log was cut" % what)
            if argv[0] == "wire":
                r.one(event="protocol_error", error="malformed field")


def test_a_flood_does_not_hide_that_a_claim_went_unconfirmed(wd):
    """A shim request's record says "shim+kernel" before the call is
    made; when the kernel layer never sees that call, a
    kernel_unconfirmed record naming it (ref_seq) is what says so. Past
    the log's rate that correction was coalesced like a refusal: a
    program that kept a flood of refused opens going, asked for the
    exec of `echo innocent` (an exec: written past the rate) and never
    made it left a log in which that exec read allowed and seen by both
    layers, and its refutation was a count in audit_overflow, naming
    nothing. A record that corrects a written one is now written past
    the rate too (kernel_unconfirmed, revoked), and so is how a process
    whose records are in the log ended (process_exit)."""
    for mode in MODES:
        r = harness([PROBE, "unconfirmed", "/bin/echo", "echo", "innocent"], wd,
                    policy="rate.yaml", mode=mode, timeout=60)
        check(r.status == 0 and r.stdout == "verdict 0\n", "%s: %r" % (mode, (r.stdout, r.stderr[-300:])))
        check(r.events(event="audit_overflow"), "%s: no flood" % mode)
        claim = r.one(event="execve", layer="shim+kernel")
        check(claim["args"]["argv"] == ["echo", "innocent"], claim)
        back = [x for x in r.events(event="kernel_unconfirmed") if x.get("ref_seq") == claim["seq"]]
        check(len(back) == 1, "%s: the claim of seq %d is not named unconfirmed:\n%s"
              % (mode, claim["seq"], [x for x in r.records if x["event"] in
                                       ("kernel_unconfirmed", "audit_overflow")]))
        # how the probe ended (its records are in the log) is a record
        # too, not a count: a flood hid its exit code
        ends = r.events(event="process_exit", pid=claim["pid"])
        check(len(ends) == 1 and ends[0].get("exit_code") == 0,
              "%s: the probe's end: %r" % (mode, [x for x in r.records if x["event"] in
                                                  ("process_exit", "audit_overflow")]))


def test_a_claim_of_a_cut_argv_does_not_stand_for_an_empty_one(wd):
    """A shim request may say its argv was cut (more than it carries):
    its key then holds no argv, and neither did the kernel layer's for
    an execve whose argv is empty, so the two matched and the kernel
    layer's record was left out. A program that speaks the protocol
    asked for `sh -c innocent` "cut", then ran sh with no argv, which
    read its commands from stdin: the log said `sh -c innocent`. Now a
    key says whether it holds the argv; what ran has the kernel layer's
    record (its argv empty) and the claim a kernel_unconfirmed."""
    for mode in MODES:
        r = harness([PROBE, "truncclaim", "/bin/sh", "sh", "-c", "innocent"], wd, policy=None,
                    mode=mode, input="echo EVIL-from-stdin\n")
        check(r.stdout == "verdict 0\nEVIL-from-stdin\n", "%s: %r" % (mode, (r.stdout, r.stderr[-300:])))
        claim = r.one(event="execve", layer="shim+kernel")
        check(claim["args"].get("argv_truncated") is True, claim)
        ran = [x for x in r.events(event="execve", layer="kernel") if x["args"].get("argv") == []]
        check(len(ran) == 1, "%s: no record of the exec that ran:\n%s" % (mode, r.dump()))
        r.one(event="kernel_unconfirmed", ref_seq=claim["seq"])


KEEP = r'''
import os, socket, sys
fd = None
for f in os.listdir("/proc/self/fd"):
    try:
        if os.readlink("/proc/self/fd/" + f).startswith("socket:"):
            s = socket.socket(fileno=os.dup(int(f)))
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE) == socket.SOCK_SEQPACKET:
                fd = int(f)
            s.close()
    except OSError:
        pass
os.set_inheritable(fd, True)
os.execv(sys.argv[1], [sys.argv[1], "inherit", sys.argv[2], str(fd)])
'''


def test_a_request_names_the_image_that_sent_it(wd):
    """What a connection knows of its sender (exe, ppid) was kept while
    the sender's number stayed the same and was not reaped, but an exec
    keeps the number: python kept its shim connection open across the
    exec of a static program (FD_CLOEXEC cleared), which asked on it
    for a write and then made it. The write's one record, "shim+kernel"
    (the kernel layer's own taken as the same), named python3 as the
    writer. Now the facts are read again when the image changed."""
    target = os.path.join(wd.path, "written.txt")
    for mode in MODES:
        r = harness(["/usr/bin/python3", "-c", KEEP, PROBE, target], wd, mode=mode)
        check(r.stdout == "verdict 0\ndone\n", "%s: %r" % (mode, (r.stdout, r.stderr[-300:])))
        rec = [x for x in r.records if x.get("args", {}).get("path") == target]
        check(len(rec) == 1, "%s: %r" % (mode, rec))
        check(rec[0]["exe"] == os.path.realpath(PROBE),
              "%s: the write is recorded as %s's" % (mode, rec[0]["exe"]))
