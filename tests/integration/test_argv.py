"""Long command lines: every argv the kernel runs runs under harness too,
from a program with the shim (dash) and from one without (busybox, the
kernel layer and the exec gate alone), and its record names all of it.

The kernel takes argv and envp up to a quarter of the stack limit (at
most 6 MiB, fs/exec.c). Before, the kernel layer refused more than 4,096
strings or 256 KiB with E2BIG (`rm *` in a directory of 5,000 files
failed), and a record kept 512 strings of a process's command line
without saying so."""

import hashlib
import os
import subprocess

from lib import EXEC, HELPERS, POLICIES, check, harness

BUSYBOX = "/bin/busybox"
SHELLS = (["/bin/sh", "-c"], [BUSYBOX, "sh", "-c"])


def digest(argv):
    return hashlib.sha256(b"".join(a.encode() + b"\0" for a in argv)).hexdigest()


def test_thousands_of_arguments_run_and_their_record_names_them(wd):
    n = 20000  # 108 KiB, five times the old count
    for shell in SHELLS:
        r = harness(shell + ["/bin/echo $(seq %d) | wc -w" % n], wd)
        what = shell[0]
        check(r.status == 0 and r.stdout.split() == [str(n)],
              "%s: %r" % (what, (r.status, r.stdout, r.stderr[-400:])))
        argv = ["/bin/echo"] + [str(i) for i in range(1, n + 1)]
        recs = [x for x in r.events(event="execve", verdict="allow")
                if x.get("args", {}).get("path") == "/bin/echo"
                or x.get("args", {}).get("path") == "/usr/bin/echo"]
        check(recs, "%s: no execve record of echo:\n%s" % (what, r.dump()))
        for rec in recs:
            a = rec["args"]
            meta = {k: v for k, v in a.items() if k != "argv"}
            # The shim's request carries 512 strings and says it was
            # cut; the kernel layer read all of it and records it too.
            check(a.get("argv_truncated") is True and a["argv"] == argv[:len(a["argv"])]
                  and len(a["argv"]) >= 512, "%s: %r" % (what, meta))
        kern = [x for x in recs if x.get("layer") == "kernel"]
        check(len(kern) == 1, "%s: %d kernel records" % (what, len(kern)))
        a = kern[0]["args"]
        check(len(a["argv"]) == 1024 and a.get("argv_total") == n + 1
              and a.get("argv_sha256") == digest(argv),
              "%s: %r" % (what, {k: v for k, v in a.items() if k != "argv"}))
        check(not any(x.get("shim_bypass") for x in recs), "%s: a bypass" % what)


def test_an_argv_past_the_old_byte_bound_runs(wd):
    # 600 KiB in 3,000 strings of 200 bytes: within the kernel's bound
    # (2 MiB under an 8 MiB stack), past the old 256 KiB.
    word = "x" * 199
    script = "/bin/true $(yes %s | head -3000) && echo ran" % word
    for shell in SHELLS:
        r = harness(shell + [script], wd)
        check(r.status == 0 and r.stdout.strip() == "ran",
              "%s: %r" % (shell[0], (r.status, r.stdout, r.stderr[-400:])))
        rec = [x for x in r.events(event="execve", layer="kernel")
               if x.get("args", {}).get("path") in ("/bin/true", "/usr/bin/true")]
        check(rec and rec[0]["args"].get("argv_total") == 3001
              and rec[0]["args"].get("argv_sha256") == digest(["/bin/true"] + [word] * 3000),
              "%s: %r" % (shell[0], [{k: v for k, v in x["args"].items() if k != "argv"}
                                     for x in rec]))


def test_an_argv_past_the_kernels_bound_fails_as_bare(wd):
    # 8 MiB of arguments: the kernel refuses it (E2BIG) whatever the
    # stack limit; harnessed, the same answer, and the session goes on.
    script = ("import os, errno\n"
              "try:\n"
              "    os.execv('/bin/true', ['/bin/true'] + ['y' * 1023] * 8192)\n"
              "except OSError as e:\n"
              "    print(errno.errorcode[e.errno])\n")
    bare = subprocess.run(["python3", "-c", script], capture_output=True, text=True)
    check(bare.stdout.strip() == "E2BIG", repr((bare.stdout, bare.stderr)))
    r = harness(["python3", "-c", script], wd)
    check(r.status == 0 and r.stdout.strip() == "E2BIG",
          repr((r.status, r.stdout, r.stderr[-400:])))
    r = harness([BUSYBOX, "sh", "-c",
                 '/bin/true $(yes $(printf "%01023d" 0) | head -8192); echo "rc=$?"'], wd)
    check(r.status == 0 and "rc=126" in r.stdout and "too long" in r.stderr,
          repr((r.status, r.stdout, r.stderr[-400:])))


def test_argvs_the_kernel_refuses_hold_no_memory_of_their_size(wd):
    # Each of 200 threads execs 6 MB of argv (one 128 KiB string 46
    # times: the agent's memory is small) under an 8 MiB stack: the
    # kernel layer reads, decides and approves it, then the kernel
    # refuses it (E2BIG past 2 MiB) and the thread lives on. The exec
    # gate kept a copy of each approved argv until the thread's exec or
    # end: 1.2 GB of the supervisor's memory here, all of the machine's
    # with the 4,096 tasks a session may have.
    log = os.path.join(wd.state, "hoard.jsonl")
    env = dict(os.environ, XDG_STATE_HOME=wd.state)
    env.pop("LD_PRELOAD", None)
    env.pop("HARNESS_SOCKET", None)
    p = subprocess.Popen([EXEC, "--quiet", "--audit-log", log,
                          "--policy", os.path.join(POLICIES, "test.yaml"), "--",
                          os.path.join(HELPERS, "static_argv_hoard"), "200", "5"],
                         cwd=wd.path, env=env, stdout=subprocess.PIPE, text=True)
    try:
        out = [p.stdout.readline(), p.stdout.readline()]
        with open("/proc/%d/status" % p.pid) as f:
            rss = [int(x.split()[1]) for x in f if x.startswith("VmRSS:")][0]
    finally:
        p.communicate(timeout=60)
    check(out == ["e2big 200\n", "ready\n"], repr(out))
    check(rss < 300 << 10, "the supervisor holds %d MiB" % (rss >> 10))


def test_a_long_argvs_digest_gives_no_secret_its_record_hides(wd):
    # A record writes env's PASSWORD=W as a keyed tag; argv_sha256 was of
    # the words as run, so W was one guess (a dictionary's) away from the
    # record: the digest of everything else the record shows, with W.
    r = harness([BUSYBOX, "sh", "-c",
                 "/usr/bin/env PASSWORD=hunter2 /bin/true $(seq 1100)"], wd)
    r.expect_status(0)
    rec = [x for x in r.events(event="execve", layer="kernel")
           if x.get("args", {}).get("path") == "/usr/bin/env"]
    check(len(rec) == 1, r.dump())
    a = rec[0]["args"]
    shown = a["argv"][:3]
    check(a.get("argv_total") == 1103 and "hunter2" not in shown[1], repr(shown))
    rest = [str(i) for i in range(1, 1101)]
    check(a.get("argv_sha256") != digest(["/usr/bin/env", "PASSWORD=hunter2", "/bin/true"] + rest),
          "the digest is of the secret")
    check(a.get("argv_sha256") == digest(shown + rest),
          "not the digest of what the record shows: %r" % shown)


def test_the_kernels_own_refusals_are_answered_without_a_record(wd):
    # Exactly at the kernel's bound it runs; a byte past it, a string
    # past MAX_ARG_STRLEN or an environment the kernel cannot read fail
    # as bare, before any record: none may say "allow" of an exec that
    # did not happen (the kernel layer decided and recorded them, then
    # the kernel refused them).
    limit = os.path.join(HELPERS, "static_exec_limit")
    for stack in ("unlimited", "1024"):
        for mode, want in (("fit", "ran"), ("over", "E2BIG"), ("longstr", "E2BIG"),
                           ("badenv", "EFAULT")):
            cmd = "ulimit -s %s && exec %s %s" % (stack, limit, mode)
            bare = subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, text=True)
            check(bare.stdout.strip() == want, "bare %s %s: %r" % (stack, mode, bare.stdout))
            r = harness([BUSYBOX, "sh", "-c", cmd], wd)
            what = "%s %s" % (stack, mode)
            check(r.status == 0 and r.stdout.strip() == want,
                  "%s: %r" % (what, (r.status, r.stdout, r.stderr[-300:])))
            recs = [x for x in r.events(op="exec")
                    if x.get("args", {}).get("path") in ("/bin/true", "/usr/bin/true")]
            check(len(recs) == (1 if want == "ran" else 0),
                  "%s: %r" % (what, [(x.get("verdict"), x.get("layer")) for x in recs]))
