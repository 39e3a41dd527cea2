"""The thirteenth attack review: where the kernel layer acts for the
agent with other rights or another view than the kernel's own call
would have. Each hole tried as the attacker would, from inside the
default policy, with a static program (raw system calls), as root and as
an ordinary user, and checked for its effect and its record."""

import os

from lib import HELPERS, Skip, check, harness

PROBE = os.path.join(HELPERS, "static_attack13")

RNDGETENTCNT = "0x80045200"  # _IOR('R', 0, int): no capability needed
KVM_CREATE_VM = "0xae01"     # _IO(0xAE, 1): a virtual machine


def _devioctl(wd, how, path, cmd, arg=None, extra=()):
    argv = [PROBE, "devioctl", how, path, cmd] + ([arg] if arg is not None else [])
    r = harness(argv, wd, policy=None, extra=extra)
    check(r.status == 0, "probe: %r %r" % (r.stdout, r.stderr[-400:]))
    return r


def test_a_device_opened_by_the_kernel_layer_takes_only_the_agents_ioctls(wd):
    """Landlock bounds a device's ioctls by the domain that opened it
    (IOCTL_DEV): the agent's own read-only open of /dev/urandom takes
    none (EACCES), for /dev is no write root. The kernel layer opens for
    the agent in a worker, in no Landlock domain: an openat2 (always
    emulated), and any open under --trace-reads, handed over a file
    whose ioctls were all the worker's (RNDGETENTCNT answered). Now the
    device is reopened within the agent's own rules, and the ioctl is
    refused as the agent's own open would have it; the open itself is
    allowed and recorded as before."""
    native = _devioctl(wd, "openat", "/dev/urandom", RNDGETENTCNT)
    if native.stdout.strip() != "ioctl EACCES":
        raise Skip("Landlock bounds no device ioctl here (ABI < 5): %r" % native.stdout)
    for how, extra in (("openat2", ()), ("openat", ("--trace-reads",))):
        r = _devioctl(wd, how, "/dev/urandom", RNDGETENTCNT, extra=extra)
        print("# %s %s: %s" % (how, " ".join(extra), r.stdout.strip()))
        check(r.stdout.strip() == "ioctl EACCES",
              "%s%s: the worker's file took the ioctl: %r"
              % (how, " (--trace-reads)" if extra else "", r.stdout))
        rec = r.one(args_path="/dev/urandom")
        check(rec["verdict"] == "allow" and rec["layer"] == "kernel", rec)


def test_a_root_agent_makes_no_virtual_machine_through_openat2(wd):
    """As root, /dev/kvm (0600 root) is the agent's to open by its mode,
    and Landlock kept its ioctls from it: KVM_CREATE_VM on its own open
    is EACCES. Through openat2 the worker's file created the machine (a
    new VM fd). Now refused alike."""
    if os.geteuid() != 0:
        raise Skip("/dev/kvm is root's here")
    if not os.path.exists("/dev/kvm"):
        raise Skip("no /dev/kvm")
    native = _devioctl(wd, "openat", "/dev/kvm", KVM_CREATE_VM, "0")
    if native.stdout.strip() != "ioctl EACCES":
        raise Skip("Landlock bounds no device ioctl here: %r" % native.stdout)
    r = _devioctl(wd, "openat2", "/dev/kvm", KVM_CREATE_VM, "0")
    print("# openat2 /dev/kvm: %s" % r.stdout.strip())
    check(r.stdout.strip() == "ioctl EACCES",
          "a virtual machine made through the worker's file: %r" % r.stdout)
