"""Directories a file system makes without mkdir: on btrfs (Fedora's and
openSUSE's default, /home and / on one file system) a subvolume is made
by an ioctl on a directory fd, and neither Landlock (no path hook is
called) nor user-notify (ioctl is not notified) saw it. Found by an
attack review: the agent made a subvolume in the project, wrote
config.fish into it, and snapshotted it as ~/.config/fish (refused by
rule shell-rc, outside every write root): fish would have run it at the
user's next login; an empty subvolume was made there too. The calls that
make, snapshot, remove or re-flag a subvolume are refused in the deny
list (EPERM, no record, as the rest of it)."""

import os
import shutil
import subprocess
import tempfile

from lib import HELPERS, Skip, check, harness
from test_default_policy import fake_home

ATTACK = os.path.join(HELPERS, "static_attack10")


class _BtrfsWorkdir:
    """A project and a fake $HOME on one btrfs file system (a loop
    mounted image), laid out as lib.Workdir is."""

    def __init__(self):
        if os.geteuid() != 0:
            raise Skip("mounting a btrfs image needs root")
        if not shutil.which("mkfs.btrfs"):
            raise Skip("no mkfs.btrfs (btrfs-progs)")
        self.top = tempfile.mkdtemp(prefix="hx-btrfs-")
        self.img = self.top + ".img"
        with open(self.img, "wb") as f:
            f.truncate(128 << 20)
        subprocess.run(["mkfs.btrfs", "-q", "-f", self.img], check=True, capture_output=True)
        m = subprocess.run(["mount", "-o", "loop", self.img, self.top], capture_output=True)
        if m.returncode:
            os.unlink(self.img)
            os.rmdir(self.top)
            raise Skip("cannot mount a btrfs image here: %s" % m.stderr.decode().strip())
        self.path = os.path.join(self.top, "proj")
        os.makedirs(self.path)
        self.state = tempfile.mkdtemp(prefix="hx-state-")

    def cleanup(self):
        subprocess.run(["umount", "-l", self.top], capture_output=True)
        os.unlink(self.img)
        os.rmdir(self.top)
        shutil.rmtree(self.state, ignore_errors=True)


def test_subvolumes_never_make_what_the_policy_refuses(wd):
    bw = _BtrfsWorkdir()
    try:
        home = fake_home(bw)
        config = os.path.join(home, ".config")
        os.makedirs(config)
        r = harness([ATTACK, "btrfs", bw.path, "sub", config, "fish"], bw, policy=None,
                    env={"HOME": home})
        check(r.stdout.startswith("subvol "), "attack did not run: %r %r" % (r.stdout, r.stderr))
        check(not os.path.lexists(os.path.join(config, "fish")),
              "a snapshot made ~/.config/fish: %r" % r.stdout)
        check(not os.path.lexists(os.path.join(config, "fish-empty")),
              "a subvolume made outside the write roots: %r" % r.stdout)
        check(r.stdout.strip() == "subvol EPERM snap EPERM outside EPERM", "answers: %r" % r.stdout)
        # No record says anything was made there.
        for x in r.records:
            p = x.get("args", {}).get("path", "")
            check(not p.startswith(config) or x["verdict"] != "allow", "record %r" % x)
    finally:
        bw.cleanup()
