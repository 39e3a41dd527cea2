"""The mode matrix: each real program (sh, python3, git, gcc/make, Node,
a static busybox, a Go binary when go is installed) runs in enforce,
audit, --trace-reads and --no-kernel-notify, and must work alike in
every one: a mode that breaks a real program fails here. Each cell is
one short harness-exec run."""

import os
import shutil

from lib import PYTHON, check, go_binary, harness

MODES = {
    "enforce": {},
    "audit": {"mode": "audit"},
    "trace-reads": {"extra": ["--trace-reads"]},
    "no-kernel-notify": {"extra": ["--no-kernel-notify"]},
}

PY = r'''
import os, subprocess
os.makedirs("pkg/sub", exist_ok=True)
with open("pkg/sub/f.txt", "w") as f:
    f.write("x")
names = sorted(os.listdir("/etc"))[:1] + sorted(os.listdir("pkg"))
out = subprocess.run(["/bin/echo", "child"], capture_output=True, text=True).stdout
print(len(names) > 1, out.strip(), open("pkg/sub/f.txt").read())
'''

NODE = r'''
const fs = require("fs"), cp = require("child_process");
fs.mkdirSync("nd/a", {recursive: true});
fs.writeFileSync("nd/a/f.txt", "y");
const n = fs.readdirSync("/etc").length > 0 && fs.readdirSync("nd").includes("a");
console.log(n, cp.execFileSync("/bin/echo", ["kid"]).toString().trim(),
            fs.readFileSync("nd/a/f.txt", "utf8"));
'''

GO = r'''package main

import (
	"fmt"
	"os"
	"os/exec"
)

func main() {
	if err := os.MkdirAll("gd/a", 0o755); err != nil {
		panic(err)
	}
	if err := os.WriteFile("gd/a/f.txt", []byte("z"), 0o644); err != nil {
		panic(err)
	}
	ents, err := os.ReadDir("/etc")
	if err != nil {
		panic(err)
	}
	out, err := exec.Command("/bin/echo", "gokid").Output()
	if err != nil {
		panic(err)
	}
	b, _ := os.ReadFile("gd/a/f.txt")
	fmt.Println(len(ents) > 0, string(out[:len(out)-1]), string(b))
}
'''


def _programs(wd):
    """(name, argv, expected stdout, setup) of each real program."""
    wd.file("hello.c", '#include <stdio.h>\nint main(void){puts("hi gcc");return 0;}\n')
    wd.file("Makefile", "hello: hello.c\n\tgcc -O0 -o hello hello.c\n")
    progs = [
        ("sh", ["sh", "-c", "mkdir -p s/t && echo a | tr a b > s/t/o && cat s/t/o && ls s && "
                "find s -name o"],
         "b\nt\ns/t/o\n"),
        ("python3", [PYTHON, "-c", PY], "True child x\n"),
        # A repository of its own per cell: the objects of an earlier
        # session's are not this one's to delete (harness:git-objects).
        ("git", ["sh", "-c", "r=$(mktemp -d r.XXXXXX) && git init -q $r && cd $r && "
                 "echo a > a && git add a && "
                 "git -c user.name=t -c user.email=t@e commit -qm m && git status --short && "
                 "git log --format=%s"], "m\n"),
        ("gcc+make", ["sh", "-c", "rm -f hello && make -s && ./hello"], "hi gcc\n"),
        ("busybox", ["/bin/busybox", "sh", "-c",
                     "mkdir -p bb/x && echo q > bb/x/f && /bin/busybox ls bb && "
                     "/bin/busybox find bb -name f && /bin/busybox cat bb/x/f"],
         "x\nbb/x/f\nq\n"),
    ]
    if shutil.which("node"):
        progs.append(("node", [shutil.which("node"), "-e", NODE], "true kid y\n"))
    gobin = go_binary(wd, GO, "gobin")
    if gobin:
        progs.append(("go", [gobin], "true gokid z\n"))
    return progs


def test_mode_matrix(wd):
    bad = []
    cells = 0
    for name, argv, want in _programs(wd):
        for mode, kw in MODES.items():
            r = harness(argv, wd, **kw)
            cells += 1
            if r.status != 0 or r.stdout != want:
                bad.append("%-9s %-17s status %s stdout %r stderr %r" % (
                    name, mode, r.status, r.stdout[-200:], r.stderr[-300:]))
            elif mode != "audit" and r.events(verdict="deny"):
                bad.append("%-9s %-17s denied: %s" % (name, mode, r.events(verdict="deny")[:2]))
    check(not bad, "%d of %d cells broken:\n%s" % (len(bad), cells, "\n".join(bad)))


def test_the_shim_reaches_its_session_with_the_state_directory_in_a_write_root(wd):
    """A state directory inside a write root (the project here; ~/.local
    is one under the toolchains profile, which makes ~/.local/state/harness
    one) has its denied names masked in the agent's mount namespace. Its
    socket, when the listing found it made, was masked too (a file bound
    read-only over it), and with --no-kernel-notify, where the shim
    connects itself, every connect failed EROFS: the agent's first read
    was refused as "supervisor unreachable" in about half the sessions,
    and in every one once the directory above it was masked (its FUSE
    node refuses the look-up). With --no-kernel-notify the socket is in
    /tmp/harness-<uid>, and a socket is never masked; ten sessions each
    read, write and exec."""
    state = os.path.join(wd.path, "state")
    os.makedirs(state)
    wd.state, outside = state, wd.state
    try:
        for i in range(10):
            r = harness(["/bin/sh", "-c", "cat /etc/hostname >/dev/null && echo x > f && /bin/echo ok"],
                        wd, extra=["--no-kernel-notify"])
            check(r.status == 0 and r.stdout == "ok\n" and "unreachable" not in r.stderr,
                  "session %d: %d %r %r" % (i, r.status, r.stdout, r.stderr))
    finally:
        wd.state = outside
