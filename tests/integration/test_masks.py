"""Files the policy denies for reading inside a write root (the project's
.env, a denied directory), where Landlock's grant of the root lets them
through: masked in the agent's own mount namespace (supervisor/masks.h),
so programs that skip the shim cannot read them either (issue 10, class
10). Tried by a static busybox, raw syscalls and python, as root and as
the ordinary user (who gets a user namespace of its own)."""

import os
import shutil

import subprocess

from lib import Skip, check, harness
from test_default_policy import fake_home

BUSYBOX = shutil.which("busybox")
SECRET = "API_KEY=sk-live-123\n"


def _project(wd):
    wd.file(".env", SECRET)
    wd.file("web/.env.production", SECRET)
    wd.file("web/app.js", "console.log(1)\n")
    wd.file("README.md", "hello\n")


def test_masked_for_programs_without_the_shim(wd):
    _project(wd)
    home = fake_home(wd)
    script = ("cat .env; cat web/.env.production; cat /proc/self/root%s/.env; "
              "cd web && cat ../.env; cd ..; cat README.md; echo new > new.txt; cat new.txt; "
              "umount .env; mv .env e2; ln .env e3; cat .env; echo done" % wd.path)
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home})
    check("sk-live" not in r.stdout, "a masked file was read: %r" % r.stdout)
    check("hello" in r.stdout and "new" in r.stdout and r.stdout.endswith("done\n"),
          "the rest of the project broke: %r %r" % (r.stdout, r.stderr))
    check(r.stderr.count("Permission denied") >= 5, r.stderr)
    check(open(os.path.join(wd.path, ".env")).read() == SECRET, "the real .env changed")
    check(not os.path.exists(os.path.join(wd.path, "e2")), ".env renamed")
    k = r.one(event="session_start")["kernel"]
    check(k.get("masks") == 2 and "masks_missing" not in k, "kernel %r" % k)
    # Nothing of the masks is left outside the session.
    with open("/proc/self/mountinfo") as f:
        check(wd.path not in f.read(), "a mask leaked into the caller's mounts")


def test_masked_for_raw_syscalls_in_a_shim_process(wd):
    # python has the shim, but a raw openat skips it (as Bun's reads do).
    _project(wd)
    code = ("import ctypes, os\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "libc.syscall.restype = ctypes.c_long\n"
            "fd = libc.syscall(257, -100, b'.env', os.O_RDONLY, 0)\n"
            "print('fd' if fd >= 0 else 'err', ctypes.get_errno())\n"
            "print(os.read(fd, 100) if fd >= 0 else b'')\n")
    r = harness(["/usr/bin/python3", "-c", code], wd, policy=None,
                env={"HOME": fake_home(wd)})
    check(r.stdout.startswith("err 13"), "raw openat of .env: %r %r" % (r.stdout, r.stderr))


def test_denied_directory_masked_whole(wd):
    # The test policy denies $CWD/secret/** inside its write root $CWD.
    r = harness([BUSYBOX, "cat", "secret/key"], wd)
    check("TOP-SECRET" not in r.stdout and "Permission denied" in r.stderr,
          "secret/key read: %r %r" % (r.stdout, r.stderr))
    check(r.one(event="session_start")["kernel"].get("masks") == 1, r.dump())
    r = harness([BUSYBOX, "ls", "-a", "secret"], wd)
    check("key" not in r.stdout, "the masked directory lists its entries: %r" % r.stdout)


def test_no_masks_where_nothing_is_held_by_them(wd):
    _project(wd)
    home = fake_home(wd)
    # Audit mode enforces nothing; --trace-reads decides every open.
    r = harness([BUSYBOX, "cat", ".env"], wd, policy=None, mode="audit", env={"HOME": home})
    check(r.stdout == SECRET, "audit mode masked: %r" % r.stdout)
    check(r.one(event="session_start")["kernel"].get("masks") == 0, "audit masks")
    r = harness([BUSYBOX, "cat", ".env"], wd, policy=None, env={"HOME": home},
                extra=["--trace-reads"])
    check("sk-live" not in r.stdout, "--trace-reads read it")
    check(r.one(event="session_start")["kernel"].get("masks") == 0, "trace-reads masks")
    check(r.one(op="read", args_path=os.path.join(wd.path, ".env"))["verdict"] == "deny",
          r.dump())
    # A project without such files: nothing mounted but the agent's own
    # devpts (supervisor/terminals.h), which needs the namespace.
    os.unlink(os.path.join(wd.path, ".env"))
    os.unlink(os.path.join(wd.path, "web", ".env.production"))
    r = harness([BUSYBOX, "sh", "-c", "readlink /proc/self/ns/mnt; cat /proc/self/mountinfo"],
                wd, policy=None, env={"HOME": home})
    lines = r.stdout.splitlines()
    check(lines, "no output: %r" % r.stderr)

    def points(text, masks=False):
        # A directory Landlock refuses is a mask too where its refusals
        # cannot be read (test_mask_records.py): not in the project.
        return {l.split()[4] for l in text if len(l.split()) > 4
                and ("harness-mask" in l.split(" - ", 1)[-1]) == masks}

    with open("/proc/self/mountinfo") as f:
        outside = points(f.read().splitlines())
    # Another test's mount in its own work directory (the root suite
    # runs beside the user's) is copied into the agent's namespace at
    # its start and may be gone outside by now: not ours to judge.
    def others(p):
        top = os.path.join(os.path.dirname(wd.path), "hx-it-")
        return p.startswith(top) and not (p + "/").startswith(wd.path + "/")
    extra = {p for p in points(lines[1:]) - outside if not others(p)}
    check(extra <= {"/dev/pts", "/dev/ptmx"}, "mounts without masks: %r" % sorted(extra))
    held = points(lines[1:], masks=True)
    check(not any((p + "/").startswith(wd.path + "/") for p in held), "masks in the project: %r" % held)
    check("/dev/pts" in points(lines[1:]), "no devpts of the agent's own")


def test_files_keep_their_owners(wd):
    # The ordinary user's user namespace maps it to itself.
    _project(wd)
    r = harness([BUSYBOX, "sh", "-c", "id -u; stat -c %u README.md"], wd, policy=None,
                env={"HOME": fake_home(wd)})
    uid = str(os.getuid())
    check(r.stdout.split() == [uid, uid], "uid seen inside: %r" % r.stdout)


def test_masked_on_another_file_system_beneath(wd):
    # Landlock's grant of $CWD covers what is mounted beneath it (a
    # tmpfs, a volume); the walk stopped at the root's file system, so a
    # .env there was read by a program without the shim, unrecorded.
    if os.geteuid() != 0:
        raise Skip("mounting a file system in the project needs root")
    _project(wd)
    sub = os.path.join(wd.path, "vol")
    os.mkdir(sub)
    subprocess.run(["mount", "-t", "tmpfs", "hx-test", sub], check=True)
    try:
        with open(os.path.join(sub, ".env"), "w") as f:
            f.write(SECRET)
        os.mkdir(os.path.join(sub, "deep"))
        with open(os.path.join(sub, "deep", ".env"), "w") as f:
            f.write(SECRET)
        r = harness([BUSYBOX, "sh", "-c", "cat vol/.env vol/deep/.env; echo done"],
                    wd, policy=None, env={"HOME": fake_home(wd)})
    finally:
        subprocess.run(["umount", "-l", sub], check=True)
    check("sk-live" not in r.stdout and r.stdout.endswith("done\n"),
          "a .env on a mounted file system was read: %r %r" % (r.stdout, r.stderr))
    k = r.one(event="session_start")["kernel"]
    check(k.get("masks") == 4, "kernel %r" % k)


RDWR_POLICY = """version: 1
mode: enforce
defaults: {exec: allow, file_read: allow, file_write: deny, net_connect: deny,
           net_send: deny, net_resolve: allow}
files:
  - id: project
    access: write
    allow: ["$CWD/**", "$TMPDIR/**", "/dev/null"]
  - id: append-only-log
    description: the agent may add to it, not read it
    access: read
    deny: "$CWD/notes.log"
"""


def test_an_open_that_reads_and_writes_is_decided_as_a_read_too(wd):
    # O_RDWR (or O_RDONLY|O_CREAT) was decided as a write only: for a
    # file denied for reading and not for writing, the kernel layer opened
    # it itself, in the supervisor's view where no mask covers it, and
    # handed the fd over; the shim let python's "r+" read it too.
    wd.file("notes.log", SECRET)
    wd.file("p.yaml", RDWR_POLICY)
    pol = os.path.join(wd.path, "p.yaml")
    code = ("import ctypes, os\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "for fl in (os.O_RDWR, os.O_RDONLY | os.O_CREAT):\n"
            "    fd = libc.syscall(257, -100, b'notes.log', fl, 0o600)\n"
            "    print(fd >= 0 and os.read(fd, 100))\n"
            "try:\n"
            "    print(open('notes.log', 'r+').read())\n"
            "except OSError as e:\n"
            "    print('refused', e.errno)\n")
    r = harness(["/usr/bin/python3", "-c", code], wd, policy=pol)
    check("sk-live" not in r.stdout and "refused 13" in r.stdout,
          "read through an open for writing (shim): %r %r" % (r.stdout, r.stderr))
    r = harness([BUSYBOX, "sh", "-c", "exec 2>/dev/null; cat notes.log; cat 3<>notes.log <&3; "
                 "echo added >> notes.log; echo done"], wd, policy=pol)
    check("sk-live" not in r.stdout and r.stdout.endswith("done\n"),
          "read through an open for writing (kernel layer): %r %r" % (r.stdout, r.stderr))
    check(open(os.path.join(wd.path, "notes.log")).read() == SECRET + "added\n",
          "an append-only open was refused")
    rec = r.events(op="write", verdict="deny")
    check(rec and rec[0]["rule"] == "append-only-log" and rec[0]["layer"] == "kernel",
          r.dump())


def test_read_denies_inside_other_write_roots_masked(wd):
    # The default's toolchains profile makes $HOME/.local a write root
    # (pnpm makes its store there), which grants its whole tree to
    # Landlock: the keyrings, the shell histories and harness's own state
    # beneath it were read by a static program. They are masked now.
    home = fake_home(wd)
    state = os.path.join(home, ".local", "state")
    for rel, text in ((".local/share/keyrings/login.keyring", "KEYRING-SECRET\n"),
                      (".local/share/fish/fish_history", "- cmd: HISTORY-SECRET\n"),
                      (".local/share/pnpm/store/v3/keep", "store\n")):
        os.makedirs(os.path.dirname(os.path.join(home, rel)), exist_ok=True)
        with open(os.path.join(home, rel), "w") as f:
            f.write(text)
    os.makedirs(state, exist_ok=True)
    script = ("cat $HOME/.local/share/keyrings/login.keyring; "
              "cat $HOME/.local/share/fish/fish_history; "
              "ls $HOME/.local/share/keyrings; "
              "cat $(dirname $HARNESS_SOCKET)/audit.jsonl | head -c 300; "
              "cat $HOME/.local/share/pnpm/store/v3/keep; "
              "echo new > $HOME/.local/share/pnpm/store/v3/new; "
              "cat $HOME/.local/share/pnpm/store/v3/new; echo done")
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None,
                env={"HOME": home, "XDG_STATE_HOME": state},
                log=os.path.join(state, "harness", "x.jsonl"))
    for secret in ("KEYRING-SECRET", "HISTORY-SECRET", "login.keyring", "session_start"):
        check(secret not in r.stdout, "%s read through the write root: %r" % (secret, r.stdout))
    check(r.stdout.endswith("store\nnew\ndone\n"),
          "the write root itself broke: %r %r" % (r.stdout, r.stderr))
    check(r.one(event="session_start")["kernel"].get("masks", 0) >= 3, r.dump())
