"""The seccomp user-notify layer (supervisor/unotify.c): static programs
(no shim) and raw syscalls are decided by the kernel layer, emulated in
the supervisor, and logged once with layer "kernel"; the shim's own
events are not logged twice."""

import os
import socket
import time

from lib import BUILD, HELPERS, Listener, check, harness

STATIC = os.path.join(HELPERS, "static_unotify")
RAW = os.path.join(HELPERS, "raw_syscall")


def _kernel(r, **want):
    return [x for x in r.events(layer="kernel", **want)]


def test_static_open_denied_outside_and_in_denied_subtree(wd):
    os.makedirs(os.path.join(wd.path, "ask"), exist_ok=True)
    outside = "/tmp/hx-unotify-%d" % os.getpid()
    for target in (outside, "ask/x", "secret/new"):
        r = harness([STATIC, "open", target], wd)
        check(r.stdout.strip() == "err EACCES", "%s: %r %r" % (target, r.stdout, r.stderr))
        full = target if target.startswith("/") else os.path.join(wd.path, target)
        check(not os.path.exists(full), "%s was created" % full)
        rec = _kernel(r, event="openat")
        check(rec and rec[0]["verdict"] in ("deny", "ask"), r.dump())
        check(not rec[0].get("shim_bypass"), "a static program has no shim: %r" % rec[0])


def test_static_open_allowed_and_fd_usable(wd):
    for how in ("open", "openat2"):
        r = harness([STATIC, how, "made-%s.txt" % how], wd)
        check(r.stdout.strip() == "ok open", "%s: %r %r" % (how, r.stdout, r.stderr))
        with open(os.path.join(wd.path, "made-%s.txt" % how)) as f:
            check(f.read() == "data\n", "written through the injected fd")
        mode = os.stat(os.path.join(wd.path, "made-%s.txt" % how)).st_mode & 0o777
        check(mode == 0o644 & ~0o022 or mode == 0o644, "mode %o" % mode)
        check(_kernel(r, verdict="allow"), r.dump())


def test_static_connect_denied_and_allowed(wd):
    denied = Listener(range(21000, 21100))
    allowed = Listener(range(20000, 20100))
    try:
        r = harness([STATIC, "connect", str(denied.port)], wd)
        check(r.stdout.strip() == "err EACCES", repr((r.stdout, r.stderr)))
        r2 = harness([STATIC, "connect", str(allowed.port)], wd)
        check(r2.stdout.strip() == "ok connect", repr((r2.stdout, r2.stderr)))
        time.sleep(0.5)
    finally:
        denied.close()
        allowed.close()
    check(denied.accepted == 0, "the denied listener saw a connection")
    check(allowed.accepted == 1 and b"ping" in allowed.received,
          "allowed connect: %d %r" % (allowed.accepted, allowed.received))
    check(_kernel(r, event="connect", verdict="deny"), r.dump())


def _udp(ports):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for p in ports:
        try:
            s.bind(("127.0.0.1", p))
            break
        except OSError:
            continue
    s.settimeout(0.5)
    return s


def test_static_udp_send_with_address(wd):
    for how in ("sendto", "sendmsg"):
        d = _udp(range(21100, 21200))
        a = _udp(range(20100, 20200))
        try:
            r = harness([STATIC, how, str(d.getsockname()[1])], wd)
            check(r.stdout.strip() == "err EACCES", repr((how, r.stdout, r.stderr)))
            r2 = harness([STATIC, how, str(a.getsockname()[1])], wd)
            check(r2.stdout.strip() == "ok " + how, repr((how, r2.stdout, r2.stderr)))
            try:
                d.recv(100)
                check(False, "%s: a datagram reached the denied port" % how)
            except socket.timeout:
                pass
            check(a.recv(100) == b"dgram\n", "allowed datagram")
        finally:
            d.close()
            a.close()


def test_toctou_path_swap_never_creates_denied(wd):
    r = harness([STATIC, "toctou", "ok-file", "secret/pwned", "2"], wd, timeout=60)
    check(r.stdout.startswith("ok toctou"), repr((r.stdout, r.stderr)))
    check(not os.path.exists(os.path.join(wd.path, "secret", "pwned")),
          "the denied file was created by a racing thread")
    check(os.path.exists(os.path.join(wd.path, "ok-file")), "allowed opens worked")


def test_raw_syscall_from_shim_process_flagged(wd):
    r = harness([RAW, "raw.txt"], wd)
    check(r.stdout.strip() == "ok", repr((r.stdout, r.stderr)))
    rec = _kernel(r, event="openat")
    check(rec and rec[0].get("shim_bypass") is True, r.dump())
    r = harness([RAW, "secret/raw"], wd)
    check(r.stdout.strip() == "err EACCES", repr((r.stdout, r.stderr)))
    check(not os.path.exists(os.path.join(wd.path, "secret", "raw")), "created")


PY = r'''
import socket, sys
open("py-out.txt", "w").write("x")
s = socket.socket()
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
except OSError as e:
    print("connect", e.errno)
'''


def test_one_record_per_event_with_shim(wd):
    lst = Listener(range(20200, 20300))
    try:
        r = harness(["python3", "-c", PY, str(lst.port)], wd)
    finally:
        lst.close()
    r.expect_status(0)
    writes = [x for x in r.records if (x.get("args") or {}).get("path", "").endswith("/py-out.txt")]
    check(len(writes) == 1, "write records: %r" % writes)
    check(writes[0]["layer"] == "shim", writes[0])
    conns = r.events(event="connect")
    check(len(conns) == 1, "connect records: %r" % conns)
    end = r.one(event="session_end")
    check(end.get("kernel_notify", {}).get("notifications", 0) >= 2, end)


def test_no_kernel_notify_option(wd):
    r = harness([STATIC, "open", "plain.txt"], wd, extra=["--no-kernel-notify"])
    check(r.stdout.strip() == "ok open", repr((r.stdout, r.stderr)))
    check(not _kernel(r), "kernel records without the layer")
    start = r.one(event="session_start")
    check(start["kernel"].get("user_notify_used") is False, start)
