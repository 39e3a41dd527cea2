#!/usr/bin/env python3
"""A stand-in for an AI agent, for `make run`: it does what a coding agent
does (read the project, write files, run tools, talk to the network) and a
few things the default policy denies. Each step prints what happened."""

import os
import socket
import subprocess


def step(what, fn):
    try:
        result = fn()
        print("  ok      %-44s %s" % (what, result or ""))
    except OSError as e:
        print("  blocked %-44s %s" % (what, e.strerror))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return "%d bytes" % len(f.read())


def connect(host, port):
    s = socket.create_connection((host, port), timeout=2)
    s.close()


home = os.path.expanduser("~")
scratch = os.path.join(os.environ.get("TMPDIR", "/tmp"), "demo")
os.makedirs(scratch, exist_ok=True)
print("demo agent: pid %d, working in %s" % (os.getpid(), os.getcwd()))
step("read README.md", lambda: read("README.md"))
step("write a scratch file in $TMPDIR", lambda: write(os.path.join(scratch, "notes.txt"), "plan\n"))
step("rename it", lambda: os.rename(os.path.join(scratch, "notes.txt"), os.path.join(scratch, "plan.txt")))
step("run `ls` (subprocess)", lambda: subprocess.run(["ls", "-1"], capture_output=True, check=True) and None)
step("run `git status`", lambda: subprocess.run(["git", "status", "--short"], capture_output=True) and None)
step("resolve localhost", lambda: socket.getaddrinfo("localhost", 80)[0][4][0])
step("read ~/.ssh/id_rsa (a secret)", lambda: read(os.path.join(home, ".ssh", "id_rsa")))
step("open ~/.bashrc for append (persistence)", lambda: open(os.path.join(home, ".bashrc"), "a").close())
step("write /var/tmp/harness-demo (outside roots)", lambda: write("/var/tmp/harness-demo", "x"))
step("connect to 1.1.1.1:443 (not allowed)", lambda: connect("1.1.1.1", 443))
# The script is read before it runs: its su is refused, and sh with it
# (the policy's privilege rule judges every command a script runs).
try:
    r = subprocess.run(["sh", "-c", "su -c id"], capture_output=True, text=True)
    why = (r.stderr.strip().splitlines() or [""])[-1]
    ok = r.returncode == 0
except OSError as e:
    why, ok = "%s: sh -c 'su -c id'" % e.strerror, False
print("  %-7s %-44s %s" % ("ok" if ok else "blocked", "run `sh -c 'su -c id'` (privilege)", why))
