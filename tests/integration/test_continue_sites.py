"""Issue 3: no CONTINUE answer of the user-notify layer follows a read of
the target's memory without Landlock or the exec gate behind it (the
kernel reads that memory again, where a racing thread may have changed
it). Each site must say, in the comment right above it, what holds the
call; the list of sites is fixed here so that a new one is reviewed.

Issue 10 removed two sites whose argument an attack broke: the abstract
connect ("Landlock's scope": a racing thread made the address an IP one)
and the stream send ("the kernel ignores msg_name": a racing dup2 made
the fd a datagram socket); both are emulated now and the attacks are in
test_issue10.py. The exec site's argument (the gate checks the image and
argv) is attacked by test_execgate.py (swaps after the decision) and
holds only for a traced thread, which hx_un_exec checks (TracerPid is
the gate's tracer) and test_escape.py's clone_untraced attacks. An
O_PATH open under --trace-reads is emulated too (the decided file handed
over read-only, ADDFD refusing O_PATH files); the path-swap race below
attacks it."""

import os
import re

from lib import HELPERS, ROOT, check, harness

SUPERVISOR = os.path.join(ROOT, "supervisor")

# What may stand behind a CONTINUE, and the sites that rely on each.
BACKSTOPS = {
    "hx_un_exec": "exec gate",
    # socket(2) of a netlink protocol: its arguments are registers only.
    "hx_un_socket": "no pointer argument",
}


def _sources():
    for top, _, names in sorted(os.walk(SUPERVISOR)):
        for name in sorted(names):
            if name.endswith(".c"):
                with open(os.path.join(top, name)) as f:
                    yield name, f.read().split("\n")


def _function_at(lines, i):
    for j in range(i, -1, -1):
        m = re.match(r"^(?:static )?\w[\w\s\*]*?\b(\w+)\(", lines[j])
        if m and not lines[j].startswith((" ", "\t")):
            return m.group(1)
    return None


def _comment_above(lines, i):
    """The text of the last comment that ends within 12 lines above i."""
    for j in range(i - 1, max(i - 13, -1), -1):
        if lines[j].rstrip().endswith("*/"):
            k = j
            while "/*" not in lines[k]:
                k -= 1
            return " ".join(l.strip().lstrip("/*").rstrip("*/").strip() for l in lines[k:j + 1])
    return ""


def test_every_continue_names_its_backstop(wd):
    sites = []
    for name, lines in _sources():
        for i, line in enumerate(lines):
            if "SECCOMP_USER_NOTIF_FLAG_CONTINUE" in line:
                check(name == "unotify.c" and _function_at(lines, i) == "handle",
                      "%s:%d answers CONTINUE outside handle()" % (name, i + 1))
            if re.search(r"kind = ANS_CONTINUE;", line):
                sites.append((name, i + 1, _function_at(lines, i), _comment_above(lines, i)))
    found = sorted(fn for _, _, fn, _ in sites)
    check(found == sorted(BACKSTOPS), "CONTINUE sites changed: %r" % sites)
    for name, line, fn, comment in sites:
        check(comment.startswith("CONTINUE"), "%s:%d: no CONTINUE comment: %r" % (name, line, comment))
        want = BACKSTOPS[fn]
        check(want in " ".join(comment.split()),
              "%s:%d (%s) does not name %r: %r" % (name, line, fn, want, comment))


def test_opath_open_holds_against_a_path_swap(wd):
    """O_PATH opens under --trace-reads, attacked: whatever file a racing
    thread makes the open name, the supervisor opens what it decided, and
    reading through the fd never gives the denied file."""
    wd.file("allowed.txt", "public\n")
    prog = os.path.join(HELPERS, "static_opath_race")
    r = harness([prog, "allowed.txt", "secret/key", "2"], wd, extra=["--trace-reads"], timeout=60)
    out = r.stdout.strip()
    check(out.startswith("held opath="), "the denied file was read: %r %r" % (out, r.stderr[-300:]))
    check(int(out.split("opath=")[1].split()[0]) > 100, "the race did not run: %r" % out)
    reads = [x for x in r.events(op="read") if x["args"].get("path", "").endswith("/secret/key")]
    check(reads and all(x["verdict"] == "deny" for x in reads), "secret reads logged %r" % reads[:3])
