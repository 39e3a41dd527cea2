"""Attack review 31, part b: exec of odd files, compared with the bare
kernel (DESIGN classes 1, 6, 8), under the embedded default policy in
enforce mode, as root and as an ordinary user, through the shim (a
dynamic program's execv) and from a static program (raw execve).

What the supervisor looks at in the file an exec names (is it a
script? a loader?) it opened for reading, whatever its type, where the
kernel refuses anything but a regular file (EACCES) before it opens
it: an exec of a FIFO let a writer waiting on it go (the supervisor was
its reader, for a moment), an exec of a device node opened the device
as the supervisor (a terminal without O_NOCTTY, a tape rewinds, a
watchdog arms), and an exec of a socket failed ENXIO (the open's), not
EACCES. The type is looked at first now, through an O_PATH fd.

And the kernel-layer's reading of #! lines differed from the kernel's:
a chain of five scripts (the kernel's bound) failed ELOOP where the
kernel runs it, and a #! line whose interpreter's name is cut by the
kernel's 256-byte head was decided as the exec of the cut name (ENOENT,
or another file of that name) where the kernel refuses it, ENOEXEC.
"""

import json
import os
import subprocess

from lib import HELPERS, PYTHON, check, harness

STATIC = os.path.join(HELPERS, "static_exec")


def _run(wd, script, args=()):
    """The script under the default policy; a session that does not end
    within the timeout waits on what the agent made."""
    try:
        return harness([PYTHON, "-c", script] + list(args), wd, policy=None,
                       timeout=60)
    except subprocess.TimeoutExpired as e:
        check(False, "the session did not end: %r %r" % (e.stdout, e.stderr))


# Both ways in: the shim's (python's execv) and the kernel layer's alone
# (a static program's raw execve). Prints "<how> <errno name>".
BOTH = r'''
import errno, os, subprocess, sys
STATIC = sys.argv[1]

def shim(path):
    pid = os.fork()
    if pid == 0:
        try:
            os.execv(path, [path])
        except OSError as e:
            os.write(1, ("shim %s\n" % errno.errorcode[e.errno]).encode())
        os._exit(0)
    os.waitpid(pid, 0)

def static(path):
    r = subprocess.run([STATIC, "exec", path], capture_output=True, text=True,
                       timeout=20)
    out = r.stdout.split()
    print("static", out[1] if out[:1] == ["err"] else "ran", flush=True)
'''

FIFO_WRITER = BOTH + r'''
import time
os.mkfifo("p")
os.chmod("p", 0o755)
w = os.fork()
if w == 0:
    os.open("p", os.O_WRONLY)   # waits for a reader
    os._exit(7)
time.sleep(0.5)
shim("./p")
static("./p")
time.sleep(1)   # a writer let go is gone within milliseconds
p, st = os.waitpid(w, os.WNOHANG)
print("writer", "let-go" if p else "waiting", flush=True)
if not p:
    os.kill(w, 9)
    os.waitpid(w, 0)
'''


def test_an_exec_of_a_fifo_lets_no_waiting_writer_go(wd):
    """A writer waits in its open of a FIFO for a reader; an exec of
    the FIFO (execute bits on) fails EACCES without opening it, natively.
    The supervisor opened it for reading (the shim's decision, looking
    for a loader, and the kernel layer's, looking for #!): the writer
    was let go, by the supervisor, for the agent."""
    r = _run(wd, FIFO_WRITER, [STATIC])
    r.expect_status(0)
    check("shim EACCES" in r.stdout and "static EACCES" in r.stdout,
          "the execs: %r %r" % (r.stdout, r.stderr[-500:]))
    check("writer waiting" in r.stdout, "the writer was let go: %r" % r.stdout)
    _none_ran(r, os.path.join(os.path.realpath(wd.path), "p"))


def _none_ran(r, path):
    """Each exec of path recorded as allowed is said not to have run."""
    undone = {x.get("ref_seq") for x in r.records
              if x.get("event") in ("failed", "kernel_unconfirmed")}
    for x in r.records:
        if x.get("op") == "exec" and x.get("verdict") == "allow" and \
                x.get("args", {}).get("path") == path:
            check(x["seq"] in undone, "an exec that did not run: %r" % x)


SOCKET = BOTH + r'''
import socket
s = socket.socket(socket.AF_UNIX)
s.bind("s")
os.chmod("s", 0o755)
shim("./s")
static("./s")
'''


def test_an_exec_of_a_socket_fails_as_natively(wd):
    """A socket with execute bits: natively EACCES; the supervisor's
    open of it failed ENXIO, and that was the exec's errno."""
    r = _run(wd, SOCKET, [STATIC])
    r.expect_status(0)
    check("shim EACCES" in r.stdout and "static EACCES" in r.stdout,
          "the execs: %r %r" % (r.stdout, r.stderr[-500:]))
    _none_ran(r, os.path.join(os.path.realpath(wd.path), "s"))


CHAIN = BOTH + r'''
N = int(sys.argv[2])
here = os.getcwd()
for i in range(N):
    nxt = "%s/s%d" % (here, i + 1) if i + 1 < N else "/bin/sh"
    with open("s%d" % i, "w") as f:
        f.write("#!%s\n" % nxt + ("echo ran > ran%d\n" % N if i == N - 1 else ""))
    os.chmod("s%d" % i, 0o755)
shim("./s0")
static("./s0")
'''


def _chain(wd, n):
    r = _run(wd, CHAIN, [STATIC, str(n)])
    r.expect_status(0)
    return r


def test_a_chain_of_five_scripts_runs_as_natively(wd):
    """The kernel follows five #! levels (fs/exec.c: a sixth is ELOOP);
    the kernel layer stopped at four, refusing what runs natively."""
    r = _chain(wd, 5)
    check("static ran" in r.stdout, "the chain did not run: %r %r"
          % (r.stdout, r.stderr[-500:]))
    check(os.path.exists(os.path.join(wd.path, "ran5")), "nothing written")
    static = [x for x in r.records if x.get("op") == "exec"
              and x.get("exe") == STATIC]
    check(len(static) == 1 and static[0]["verdict"] == "allow", r.dump())
    s6 = _chain(wd, 6)
    check("static other" in s6.stdout and "shim ELOOP" in s6.stdout,
          "six levels: %r" % s6.stdout)


CUT = BOTH + r'''
here = os.getcwd()
name = here + "/" + "a" * (300 - len(here))
cut = ("#!" + name)[:255][2:]
with open(cut, "w") as f:     # the name cut at the kernel's head
    f.write("#!/bin/sh\necho ran > cut-ran\n")
os.chmod(cut, 0o755)
with open("long", "w") as f:
    f.write("#!" + name + "\n")
os.chmod("long", 0o755)
shim("./long")
static("./long")
'''


def test_an_interpreter_name_the_head_cuts_is_refused_as_natively(wd):
    """A #! line longer than the 256 bytes the kernel reads, its
    interpreter's name cut there: the kernel refuses it (ENOEXEC), it
    does not run the shorter name. The kernel layer decided the exec
    of the cut name, a file the agent made there."""
    r = _run(wd, CUT, [STATIC])
    r.expect_status(0)
    check("shim ENOEXEC" in r.stdout and "static ENOEXEC" in r.stdout,
          "the execs: %r %r" % (r.stdout, r.stderr[-500:]))
    check(not os.path.exists(os.path.join(wd.path, "cut-ran")), "the cut name ran")
    check(not [x for x in r.records if x.get("op") == "exec" and
               "a" * 40 in json.dumps(x)], "the cut name was decided: %s" % r.dump())


EXEC_ONLY = BOTH + r'''
with open("x", "w") as f:
    f.write("#!/bin/sh\necho ran > x-ran\n")
os.chmod("x", 0o111)
static("./x")
'''


def test_an_execute_only_script_is_what_the_gate_expects(wd):
    """A script with mode 0111: the kernel reads its #! line (the
    caller need not read it) and runs /bin/sh on it, which reads it as
    root and fails to as an ordinary user. The kernel layer's worker
    opens as the agent would and cannot read it: it expects the file
    itself as the image, and the exec gate kills the process with an
    attack record (README: found and not fixed)."""
    from lib import xfail
    r = _run(wd, EXEC_ONLY, [STATIC])
    r.expect_status(0)
    gate = [x for x in r.records if x.get("exec_gate") == "mismatch"]
    if gate or "static ran" not in r.stdout:
        xfail("an execute-only script is killed by the exec gate as a swap")


NO_X = BOTH + r'''
with open("probe", "w") as f:
    f.write("x")
st = os.stat("probe")
os.utime("probe", (st.st_mtime - 1000, st.st_mtime))
open("probe").read()
if os.stat("probe").st_atime == st.st_mtime - 1000:
    print("noatime")        # reads leave atime here: nothing to see
with open("nx", "w") as f:
    f.write("#!/bin/sh\necho ran > nx-ran\n")
os.chmod("nx", 0o644)
st = os.stat("nx")
os.utime("nx", (st.st_mtime - 1000, st.st_mtime))  # a read moves atime
before = os.stat("nx").st_atime
static("./nx")
print("atime", "read" if os.stat("nx").st_atime != before else "unread")
'''


def test_a_file_without_execute_bits_is_not_read_for_its_exec(wd):
    """The kernel refuses the exec of a file with no execute bit
    (EACCES, even root's) before it opens it. The kernel layer read it
    all the same, looking for #! (an atime older than the mtime shows
    the read: relatime): what an exec names is read only where the
    kernel would read it, not any /proc or /sys file the agent names."""
    r = _run(wd, NO_X, [STATIC])
    r.expect_status(0)
    check("static EACCES" in r.stdout, "the exec: %r %r" % (r.stdout, r.stderr[-500:]))
    if "noatime" in r.stdout:
        from lib import Skip
        raise Skip("a read does not move atime on the work directory's mount")
    check("atime unread" in r.stdout, "the supervisor read it: %r" % r.stdout)
    check(not os.path.exists(os.path.join(wd.path, "nx-ran")), "it ran")
