"""Files the policy denies for reading inside a write root (the project's
.env, a denied directory), where Landlock's grant of the root lets them
through: masked in the agent's own mount namespace (supervisor/masks.h),
so programs that skip the shim cannot read them either (issue 10, class
10). Tried by a static busybox, raw syscalls and python, as root and as
the ordinary user (who gets a user namespace of its own)."""

import os
import shutil

from lib import check, harness
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
    # A project without such files: no namespace at all.
    os.unlink(os.path.join(wd.path, ".env"))
    os.unlink(os.path.join(wd.path, "web", ".env.production"))
    r = harness([BUSYBOX, "sh", "-c", "readlink /proc/self/ns/mnt"], wd, policy=None,
                env={"HOME": home})
    check(r.stdout.strip() == os.readlink("/proc/self/ns/mnt"),
          "a mount namespace without masks: %r" % r.stdout)


def test_files_keep_their_owners(wd):
    # The ordinary user's user namespace maps it to itself.
    _project(wd)
    r = harness([BUSYBOX, "sh", "-c", "id -u; stat -c %u README.md"], wd, policy=None,
                env={"HOME": fake_home(wd)})
    uid = str(os.getuid())
    check(r.stdout.split() == [uid, uid], "uid seen inside: %r" % r.stdout)
