"""Devices that read what no path rule names: a disk read raw holds every
file on it, a console is another session's screen and keyboard. Found
by an attack review: a root agent (no capability: block devices and
consoles are root's by their mode) read a disk's blocks with a static
`strings` and found the private key of a file the policy denies (rule
ssh), and read /dev/vcs1, the text on the first console. The default
policy refuses reading disks, consoles and serial lines, input, sound
and video capture and the TPM (rule device-reads); Landlock holds it
for programs that skip the shim, and as root its refusal is a record.
As the ordinary user these devices are not the agent's to open."""

import os
import subprocess

from lib import Skip, check, harness
from test_default_policy import fake_home

MARK = "PRIVATE-KEY-ON-A-DISK"


class _Disk:
    """An ext4 image on a loop device, mounted at home/.ssh (denied)."""

    def __init__(self, wd, home):
        self.img = os.path.join(wd.state, "disk.img")
        self.mnt = os.path.join(home, ".ssh")
        with open(self.img, "wb") as f:
            f.truncate(8 << 20)
        subprocess.run(["mkfs.ext4", "-q", "-F", self.img], check=True, capture_output=True)
        lo = subprocess.run(["losetup", "-f", "--show", self.img], capture_output=True, text=True)
        if lo.returncode:
            os.unlink(self.img)
            raise Skip("no loop device here: %s" % lo.stderr.strip())
        self.dev = lo.stdout.strip()
        subprocess.run(["mount", self.dev, self.mnt], check=True)
        with open(os.path.join(self.mnt, "id_rsa"), "w") as f:
            f.write(MARK + "\n")
        subprocess.run(["sync"])

    def close(self):
        subprocess.run(["umount", "-l", self.mnt], capture_output=True)
        subprocess.run(["losetup", "-d", self.dev], capture_output=True)
        os.unlink(self.img)


def test_disks_and_consoles_are_not_read_raw(wd):
    if os.geteuid() != 0:
        raise Skip("block devices and consoles are root's (the user cannot open them)")
    home = fake_home(wd)
    disk = _Disk(wd, home)
    try:
        script = ("/bin/busybox strings %s | /bin/busybox grep -c %s; "
                  "/bin/busybox dd if=/dev/vcs1 bs=1 count=1 2>/dev/null | /bin/busybox wc -c"
                  % (disk.dev, MARK))
        r = harness(["/bin/busybox", "sh", "-c", script], wd, policy=None, env={"HOME": home})
    finally:
        disk.close()
    lines = r.stdout.split()
    check(len(lines) == 2, "attack did not run: %r %r" % (r.stdout, r.stderr[-400:]))
    check(lines[0] == "0", "the key was read off the disk: %r" % r.stdout)
    if os.path.exists("/dev/vcs1"):
        check(lines[1] == "0", "the console's screen was read: %r" % r.stdout)
    recs = [x for x in r.records if x.get("args", {}).get("path") == disk.dev]
    check(recs and all(x["verdict"] == "deny" and x["rule"] == "device-reads" for x in recs),
          "records of the disk: %r" % recs)
