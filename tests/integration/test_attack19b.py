"""Nineteenth attack review, part b: an outside attacker's agent under
the default policy, against what runs later outside the harness (the
user's tools, the neighbours that trust the user's uid) and the
credentials a process may still read."""

import os
import shutil
import subprocess
import time

from gitrepo import GIT_ENV
from lib import check, harness
from test_default_policy import fake_home

BUSYBOX = shutil.which("busybox")

# Where the toolchains keep the bare repositories they fetch with git,
# in write roots of the default policy: Go's module cache (direct and
# GOPRIVATE modules), cargo's git dependencies (git CLI with
# net.git-fetch-with-cli), uv's git dependencies.
BARE_CACHES = ("go/pkg/mod/cache/vcs/%s", ".cargo/git/db/dep-%s", ".cache/uv/git-v0/db/%s")


def _git(env, *argv):
    subprocess.run(["git"] + list(argv), check=True, env=env, capture_output=True)


def _users_bare_caches(home, env, tag):
    """An origin with one commit and, for each of BARE_CACHES, the
    user's bare repository fetched from it once, as the tools make
    them (git init --bare, remote add, fetch). Returns (origin, repos)."""
    origin = os.path.join(home, "origin-" + tag)
    _git(env, "init", "-q", origin)
    _git(env, "-C", origin, "commit", "-q", "--allow-empty", "-m", "1")
    repos = []
    for c in BARE_CACHES:
        d = os.path.join(home, c % tag)
        _git(env, "init", "-q", "--bare", d)
        _git(env, "-C", d, "remote", "add", "origin", origin)
        _git(env, "-C", d, "fetch", "-q", "origin", "+refs/heads/*:refs/heads/*")
        repos.append(d)
    return origin, repos


def _users_next_fetch(env, origin, d):
    """What the tool does at the user's next build that wants a newer
    commit (go get -u, cargo update, uv lock --upgrade): git fetch in
    its bare repository, outside the harness."""
    _git(env, "-C", origin, "commit", "-q", "--allow-empty", "-m", "n")
    if not os.path.exists(os.path.join(d, "objects")):  # Go's check
        _git(env, "init", "-q", "--bare", d)
        _git(env, "-C", d, "remote", "add", "origin", origin)
    subprocess.run(["git", "-C", d, "fetch", "-q", "origin", "+refs/heads/*:refs/heads/*"],
                   env=env, capture_output=True)


def test_a_bare_repository_in_a_cache_runs_no_code_of_the_agents(wd):
    """Go, cargo and uv keep the repositories of git dependencies as bare
    repositories in caches the default policy lets the agent write
    (~/go/pkg/mod/cache/vcs, ~/.cargo/git/db, ~/.cache/uv/git-v0/db),
    and run git fetch there at the user's next build that wants a newer
    commit. harness:git-config guarded a configuration and hooks beneath
    a ".git" only: the agent (sh, and a static busybox) wrote
    hooks/reference-transaction into each of the user's, set
    core.hooksPath and core.sshCommand by git config, made hooks a
    symlink to a directory of its own, moved a directory of hooks in as
    hooks, and put a hook where Go will make the repository of a module
    the user fetches later (Go's git init --bare keeps what it finds
    there, a file beside it or not); the user's next fetch ran each hook
    (reference-transaction runs at every ref update). A bare layout's
    hooks and configuration are now judged as a .git's, and a file named
    as a hook in a hooks directory outside the project is refused once
    it would run (made executable, an executable moved or linked in, a
    link); the agent's own go/cargo-style fetch into a new cache
    repository still works."""
    home = fake_home(wd)
    env = dict(os.environ, HOME=home, **GIT_ENV)
    env.pop("LD_PRELOAD", None)
    ran = os.path.join(home, "ran")
    hook = "#!/bin/sh\\necho \\\"$PWD\\\" >> %s\\n" % ran
    for tag, shell in (("sh", ["sh"]), ("bb", [BUSYBOX, "sh"])):
        origin, repos = _users_bare_caches(home, env, tag)
        go, cargo, uv = repos
        later = os.path.join(home, BARE_CACHES[0] % (tag + "-later"))
        h = "~/.cargo/git/h-" + tag  # a directory of hooks of the agent's
        script = (
            "H='%(hook)s'; "
            "printf \"$H\" > %(go)s/hooks/reference-transaction; "
            "chmod +x %(go)s/hooks/reference-transaction; "
            "printf \"$H\" > %(cargo)s/hooks/pre-auto-gc; "
            "git -C %(uv)s config core.hooksPath %(h)s; "
            "git -C %(uv)s config core.sshCommand 'sh -c id'; "
            "mkdir -p %(h)s && printf \"$H\" > %(h)s/reference-transaction && "
            "chmod +x %(h)s/reference-transaction; "
            "rm -rf %(cargo)s/hooks; ln -s %(h)s %(cargo)s/hooks; "
            "mkdir -p \"$TMPDIR/e\" && cp -r %(h)s \"$TMPDIR/e/hk\" && "
            "mv \"$TMPDIR/e/hk\" \"$TMPDIR/e/hooks\"; mv \"$TMPDIR/e\" %(cargo)s-new; "
            "mkdir -p %(later)s/hooks && printf \"$H\" > %(later)s/hooks/reference-transaction && "
            "chmod +x %(later)s/hooks/reference-transaction; "
            "mkdir -p %(later2)s/hooks && touch %(later2)s/go.mod && "
            "cp %(h)s/reference-transaction %(later2)s/hooks/; rm %(later2)s/go.mod; "
            "mkdir -p %(later3)s && printf '[core]\\n\\thooksPath = %(h)s\\n' > %(later3)s/config; "
            "printf '[core]\\n\\thooksPath = %(h)s\\n' > \"$TMPDIR/c\" && mv \"$TMPDIR/c\" %(later3)s/config; "
            "own=~/.cache/uv/git-v0/db/own-%(tag)s; git init -q --bare $own && "
            "git -C $own remote add origin %(origin)s && "
            "git -C $own fetch -q origin '+refs/heads/*:refs/heads/*' && echo own-fetch-ok") % dict(
                hook=hook, go=go, cargo=cargo, uv=uv, h=h, later=later, later2=later + "2",
                later3=later + "3",
                tag=tag, origin=origin)
        r = harness(shell + ["-c", script], wd, policy=None, env=dict(GIT_ENV, HOME=home))
        check("own-fetch-ok" in r.stdout, "the agent's own fetch into a new cache repository "
              "failed: %r %r" % (r.stdout, r.stderr[-800:]))
        for d in repos + [cargo + "-new", later, later + "2", later + "3"]:
            _users_next_fetch(env, origin, d)
        got = open(ran).read() if os.path.exists(ran) else ""
        check(not got, "%s: the user's next fetch ran the agent's hook in: %r" % (tag, got))
        for d in repos:
            cfg = open(os.path.join(d, "config")).read()
            check("hooksPath" not in cfg and "sshCommand" not in cfg,
                  "%s: %s's config: %r" % (tag, d, cfg))
        for path in (os.path.join(go, "hooks", "reference-transaction"),
                     os.path.join(cargo, "hooks", "pre-auto-gc"),
                     os.path.join(cargo, "hooks"),
                     os.path.join(later, "hooks", "reference-transaction"),
                     os.path.join(later + "2", "hooks", "reference-transaction")):
            rec = r.one(args_path=path, verdict="deny")
            check(rec["rule"] == "harness:git-config", "%s: %r" % (path, rec))
        for cfg in (os.path.join(uv, "config"), os.path.join(later + "3", "config")):
            rec = r.one(op="rename", args_path2=cfg, verdict="deny")
            check(rec["rule"] == "harness:git-config", "rename onto %s: %r" % (cfg, rec))
        rec = r.one(op="rename", args_path2=cargo + "-new", verdict="deny")
        check(rec["rule"] == "harness:git-config", "a directory holding hooks moved in: %r" % rec)


# Project files that another agent, an editor or the user's shell runs
# from the project with no look, that project-autorun did not list.
AUTORUN = [
    ".devcontainer.json",           # initializeCommand: on the host, at "Reopen in Container"
    "opencode.json",                # OpenCode: mcp servers (local commands) at its start
    "web/opencode.jsonc",
    ".opencode/plugin/x.ts",        # OpenCode: plugins loaded at its start
    ".aider.conf.yml",              # aider: lint-cmd, run after each of its edits
    ".cursor/hooks.json",           # Cursor's agent hooks
    ".continue/mcpServers/x.yaml",  # Continue: workspace MCP servers
    ".roo/mcp.json", ".kilocode/mcp.json", ".amazonq/mcp.json",
    ".kiro/settings/mcp.json", ".kiro/hooks/x.kiro.hook", ".qwen/settings.json",
    "crush.json", ".crush.json", ".junie/mcp/mcp.json", ".gemini/extensions/x/gemini-extension.json",
    "mise.toml", ".mise.toml", "mise.local.toml", ".config/mise.toml",  # mise: hooks, env._.source at cd
    ".mise/config.toml", ".tool-versions",  # asdf's and mise's path:DIR versions: the tool itself
    "flake.nix", "shell.nix", "devenv.nix", "devbox.json",  # what .envrc's use flake/nix/devenv loads
    ".bazeliskrc", ".bazelversion",  # bazelisk: where bazel itself comes from
    "gradle/wrapper/gradle-wrapper.properties", "gradle/wrapper/gradle-wrapper.jar",
    ".mvn/wrapper/maven-wrapper.properties", ".mvn/extensions.xml",  # the build tool itself
]


def test_project_files_other_agents_and_the_users_shell_run_are_asked(wd):
    """project-autorun asks about the project files that run code later
    with no look (an agent's settings and MCP servers, .envrc, editor
    tasks, yarnPath...), but not others of the same kinds: OpenCode's
    and aider's project configuration (both agents harness has profiles
    for: an opencode.json's MCP server is a command OpenCode starts at
    its next start in the project; aider runs lint-cmd after each edit),
    Cursor's hooks, the MCP servers of Continue, Roo, Kilo, Amazon Q,
    Kiro, Qwen, Crush, Junie and Gemini's workspace extensions; a dev
    container's .devcontainer.json at the root (initializeCommand runs
    on the host); mise's configuration (its hooks and env._.source run at
    the user's next cd and prompt there) and .tool-versions (a path:DIR
    version makes DIR/bin the tool the shims run); what an .envrc's use
    flake, use nix, use devenv or devbox loads (its shellHook runs at the
    next prompt); where bazelisk, the Gradle and Maven wrappers take the
    build tool itself from (an IDE's import runs it on opening). python
    and a static busybox wrote each. Each is now asked, refused with
    nobody to answer."""
    home = fake_home(wd)
    code = ("import os, sys\n"
            "for f in sys.argv[1:]:\n"
            "    try:\n"
            "        os.makedirs(os.path.dirname(f) or '.', exist_ok=True)\n"
            "        open(f, 'a').write('x\\n'); print('wrote', f)\n"
            "    except OSError as e:\n"
            "        print('refused', f, e.errno)\n")
    r = harness(["/usr/bin/python3", "-c", code] + AUTORUN, wd, policy=None,
                env={"HOME": home})
    check("wrote" not in r.stdout, "written: %r" % [x for x in r.stdout.splitlines() if "wrote" in x])
    for f in AUTORUN:
        path = os.path.join(wd.path, f)
        # the file's open, or the mkdir of a directory the rule takes whole
        recs = [x for x in r.records if x.get("verdict") and x.get("args", {}).get("path")
                and (path + "/").startswith(x["args"]["path"] + "/") and x["verdict"] != "allow"]
        check(recs and recs[0]["verdict"] == "ask" and recs[0]["rule"] == "project-autorun",
              "%s: %r" % (f, recs[:1]))
    script = "; ".join("mkdir -p $(dirname %s) && echo x >> %s" % (f, f) for f in AUTORUN)
    r = harness([BUSYBOX, "sh", "-c", script + "; echo done"], wd, policy=None, env={"HOME": home})
    check("done" in r.stdout, r.stderr[-500:])
    made = [f for f in AUTORUN if os.path.exists(os.path.join(wd.path, f))]
    check(not made, "busybox wrote %r" % made)


# Credential stores of developer tools that no rule named, each with
# what it holds (the secret written in the test's fake one).
CREDENTIALS = [
    ".docker/contexts/tls/0a1b/docker/key.pem",  # a remote Docker daemon's client key: root there
    ".docker/key.pem",                           # DOCKER_CERT_PATH's default
    ".docker/machine/machines/dev/id_rsa",       # docker-machine's hosts
    ".minikube/profiles/minikube/client.key",    # what ~/.kube/config names: the cluster's admin
    ".minikube/ca.key",
    ".talos/config",                             # Talos' admin certificates
    ".lima/_config/user",                        # the ssh key of Lima's and Colima's VMs
    ".local/share/containers/podman/machine/machine",  # podman machine's ssh key
    ".config/helm/repositories.yaml",            # helm repo add --password
    ".subversion/auth/svn.simple/5d41402abc4b2a76b9719d911017c592",  # svn's plaintext passwords
    ".mylogin.cnf",                              # mysql_config_editor's (obfuscated, not encrypted)
    ".pg_service.conf",                          # libpq's services, password= included
    ".config/dart/pub-credentials.json",         # pub.dev's OAuth refresh token
    ".local/share/gem/credentials",              # RubyGems' API key where XDG puts it
    ".ivy2/.credentials",                        # sbt's publishing credentials
    ".config/configstore/snyk.json",             # node CLIs' tokens (configstore)
    ".kaggle/kaggle.json",                       # Kaggle's API key
    ".modal.toml",                               # Modal's token
    ".ollama/id_ed25519",                        # ollama's key for its registry
    ".cloudflared/cert.pem",                     # a Cloudflare tunnel's account certificate
    ".config/ngrok/ngrok.yml",                   # ngrok's authtoken
    ".config/openstack/clouds.yaml",             # OpenStack's passwords
    ".aliyun/config.json",                       # Alibaba Cloud's access keys
    ".config/Cursor/User/globalStorage/state.vscdb",  # Cursor's access and refresh tokens, in clear
    ".config/Bitwarden CLI/data.json", ".config/goose/secrets.yaml", ".sentryclirc",
    ".config/yandex-cloud/config.yaml", ".bluemix/config.json", ".cf/config.json", ".expo/state.json",
    ".authinfo",                                 # git-credential-netrc's and Emacs' passwords
    # This session's additions (reading the tools' documented stores):
    ".tsh/keys/proxy.example.com/alice",         # Teleport's private key
    ".circleci/cli.yml", ".travis/config.yml", ".railway/config.json",
    ".doppler/.doppler.yaml", ".config/tea/config.yml", ".jfrog/jfrog-cli.conf.v6",
    ".config/argocd/config", ".okta/okta.yaml", ".sfdx/key.json", ".config/linode-cli",
    ".msmtprc", ".fetchmailrc",                  # mail passwords
    ".local/share/python_keyring/keyring_pass.cfg",  # keyrings.alt's file keyring
]


def test_credential_stores_of_developer_tools_are_not_read(wd):
    """The default's credential rules name the common stores, not these
    (each a file the tool keeps a key, a token or a password in, most in
    clear): cat and a static busybox read every one, and could carry it
    out to the model API. Each is denied now (rule tool-credentials),
    and a refusal by cat (the shim) is recorded."""
    home = fake_home(wd)
    for rel in CREDENTIALS:
        p = os.path.join(home, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write("HX-SECRET-%s\n" % rel)
    for argv in (["sh", "-c", 'for f in "$@"; do cat ~/"$f"; done', "sh"],
                 [BUSYBOX, "sh", "-c", 'for f in "$@"; do busybox cat ~/"$f"; done', "sh"]):
        r = harness(argv + CREDENTIALS, wd, policy=None, env={"HOME": home})
        read = [x[len("HX-SECRET-"):] for x in r.stdout.split() if x.startswith("HX-SECRET-")]
        check(not read, "%s read: %r" % (argv[0], read))
        if argv[0] == "sh":
            for rel in CREDENTIALS:
                rec = r.one(args_path=os.path.join(home, rel), verdict="deny")
                check(rec["rule"] == "tool-credentials", "%s: %r" % (rel, rec))


# Credential rules of the default whose patterns Landlock cannot express
# (a wildcard before the last directory): the shim's only, before.
SHIM_ONLY = [
    ".config/JetBrains/IntelliJIdea2024.1/c.kdbx",  # the IDEs' saved passwords
    ".config/JetBrains/IntelliJIdea2024.1/c.pwd",   # and the key that opens them
    ".local/share/DBeaverData/workspace6/General/.dbeaver/credentials-config.json",
    ".minikube/profiles/minikube/client.key",
]


def test_credentials_named_by_a_wildcard_are_not_read_by_a_static_program(wd):
    """A read deny whose pattern has a wildcard before its last
    directory (JetBrains' c.kdbx and c.pwd in each IDE's directory,
    DBeaver's credentials at any depth, minikube's keys) cannot be a
    Landlock rule, so it was the shim's only: a static busybox read each
    (cat was refused). What such a pattern names at start is found by a
    walk of its literal prefix and denied in the kernel as a literal."""
    home = fake_home(wd)
    for rel in SHIM_ONLY:
        p = os.path.join(home, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write("HX-SECRET-%s\n" % rel)
    os.makedirs(os.path.join(home, ".config", "JetBrains", "IntelliJIdea2024.1", "options"))
    other = os.path.join(home, ".config", "JetBrains", "IntelliJIdea2024.1", "options", "ide.xml")
    with open(other, "w") as f:
        f.write("HX-NOT-SECRET\n")
    r = harness([BUSYBOX, "sh", "-c", 'for f in "$@"; do busybox cat ~/"$f"; done; busybox cat %s' % other,
                 "sh"] + SHIM_ONLY, wd, policy=None, env={"HOME": home})
    read = [x[len("HX-SECRET-"):] for x in r.stdout.split() if x.startswith("HX-SECRET-")]
    check(not read, "busybox read: %r" % read)
    check("HX-NOT-SECRET" in r.stdout, "the IDE's other files are unreadable: %r" % r.stderr[-300:])


# Daemons reached by a unix socket that local-sockets let through, each
# carrying the machine's traffic or its devices for whoever connects.
DAEMONS = ["/run/tailscale/tailscaled.sock", "/var/run/tailscale/tailscaled.sock",
           "/var/run/netbird.sock", "/run/mullvad-vpn", "/run/cloudflare-warp/warp_service",
           "/run/tor/control", "/run/openvpn/server.sock", "/run/wpa_supplicant/wlan0",
           "/run/udev/control", "/run/lvm/lvmpolld.socket", "/run/systemd/io.systemd.Credentials",
           "/run/systemd/io.systemd.Machine", "@/org/kernel/linux/storage/multipathd"]


# Sockets of services that run what they are sent: container builders,
# application servers (rule, path).
CODE_SOCKETS = [("container-sockets", "/run/buildkit/buildkitd.sock"),
                ("container-sockets", "/var/run/cri-dockerd.sock"),
                ("container-sockets", "/var/lib/lxd/unix.socket"),
                ("code-servers", "/run/php/php8.2-fpm.sock"),
                ("code-servers", "/run/php-fpm/www.sock"),
                ("code-servers", "/run/uwsgi/app/site/socket")]


def test_services_that_run_what_they_are_sent_are_not_reached(wd):
    """container-sockets named Docker's, containerd's and podman's, not
    BuildKit's daemon (a build runs as root what it is given), the
    dockershim's or LXD's outside snap; and php-fpm's FastCGI socket
    (auto_prepend_file in a request's PHP_VALUE runs any file) and
    uWSGI's (UWSGI_FILE) were local-sockets' to allow. Checked as the
    default's verdict (no such service here)."""
    from lib import POLICY_TOOL
    for rule, path in CODE_SOCKETS:
        out = subprocess.run([POLICY_TOOL, "explain", "--", "connect", "unix:" + path],
                             capture_output=True, text=True).stdout
        check(out.startswith("deny ") and "rule=%s " % rule in out + " ", "%s: %r" % (path, out))


def test_network_daemons_are_not_the_agents_to_reach(wd):
    """A unix socket the user's uid does not own is the policy's alone
    (harness:neighbour takes the user's own, and for a root agent leaves
    root's in /run to the policy), and local-sockets allowed /run/**:
    tailscaled's (its tailnet's peers to anyone; to its operator or to
    root a dial to any tailnet host, Taildrop and funnel, past every
    network rule), NetBird's, Mullvad's, WARP's, Tor's control,
    wpa_supplicant's, and for a root agent udev's control, LVM's and
    systemd's varlink services. No such daemon runs here (a connect to a
    missing socket fails ENOENT before any verdict): the default
    policy's verdict is checked."""
    from lib import POLICY_TOOL
    for path in DAEMONS:
        out = subprocess.run([POLICY_TOOL, "explain", "--", "connect", "unix:" + path],
                             capture_output=True, text=True).stdout
        check(out.startswith("deny ") and "rule=network-daemons" in out, "%s: %r" % (path, out))


def test_a_file_linked_from_outside_is_not_changed_in_place(wd):
    """pnpm links the files of its store into every project's
    node_modules (uv and conda do the same with their caches and each
    environment): one file, many names. The agent's edit of the
    project's node_modules/lodash/index.js (a static busybox's append,
    python's write, a chmod first) changed that package in the user's
    other project and in the store, outside the harness, where it runs
    at that project's next start. A file with other names that predates
    the session is not changed in place now (harness:shared-file); its
    name may still be replaced, and a link the agent makes itself stays
    writable."""
    home = fake_home(wd)
    store = os.path.join(home, ".local", "share", "pnpm", "store", "v3", "files", "ab")
    other = os.path.join(home, "other", "node_modules", ".pnpm", "lodash")
    mine = os.path.join(wd.path, "node_modules", "lodash")
    for d in (store, other, mine):
        os.makedirs(d)
    blob = os.path.join(store, "cdef01-index")
    with open(blob, "w") as f:
        f.write("module.exports = 1\n")
    os.chmod(blob, 0o444)
    os.link(blob, os.path.join(other, "index.js"))
    os.link(blob, os.path.join(mine, "index.js"))
    script = ("chmod u+w node_modules/lodash/index.js; "
              "echo 'require(\"child_process\").execSync(\"id\")' >> node_modules/lodash/index.js; "
              "%s -c \"open('node_modules/lodash/index.js', 'w').write('evil')\"; "
              "echo evil >> %s; "
              "echo a > mine.txt && ln mine.txt also.txt && echo b >> also.txt && cat mine.txt; "
              "cat node_modules/lodash/index.js > x.js && echo '//' >> x.js && "
              "mv x.js node_modules/lodash/index.js && echo replaced") % ("/usr/bin/python3", blob)
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home})
    with open(os.path.join(other, "index.js")) as f:
        got = f.read()
    check(got == "module.exports = 1\n", "the other project's lodash: %r" % got)
    check("a\nb\n" in r.stdout and "replaced" in r.stdout,
          "the agent's own link, or a replacement: %r %r" % (r.stdout, r.stderr[-500:]))
    recs = [x for x in r.records if x.get("rule") == "harness:shared-file"]
    check(recs and all(x["verdict"] == "deny" and x["args"]["path"] == os.path.join(mine, "index.js")
                       for x in recs), "records: %r" % recs)
    # the store's own name: its files are kept besides (toolchains)
    rec = r.one(args_path=blob, verdict="deny")
    check(rec["rule"] in ("harness:shared-file", "harness:keep-existing"), "record %r" % rec)


def test_packages_projects_use_from_a_global_store_are_kept(wd):
    """Yarn berry's Plug'n'Play projects read their packages straight
    from the global cache's zips at every start (checksummed when
    fetched only), yarn 1 copies its cache's extracted packages into a
    project at each install without a second look, and pnpm's store files are what every project's
    node_modules links to (checked again only when their time changed,
    which the agent may set back): python and a static busybox rewrote
    both. What was there before the session is now kept, as bun's
    packages were (keep_existing); new entries are still written."""
    home = fake_home(wd)
    files = {".yarn/berry/cache/lodash-npm-4.17.21-6382451519-10c0.zip": "PK-lodash\n",
             ".local/share/pnpm/store/v3/files/ab/cdef02": "module.exports = 2\n",
             ".cache/yarn/v6/npm-lodash-4.17.21-6382451519-integrity/node_modules/lodash/index.js":
                 "module.exports = 3\n"}
    for rel, text in files.items():
        p = os.path.join(home, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    script = "; ".join("echo EVIL >> ~/%s" % rel for rel in files)
    script += ("; echo new > ~/.yarn/berry/cache/x-npm-1.0.$N-0-10c0.zip && "
               "echo new > ~/.local/share/pnpm/store/v3/files/ab/new0$N && echo added")
    for prog in ([BUSYBOX, "sh", "-c", "N=1; " + script],
                 ["/usr/bin/python3", "-c", "import subprocess,sys; subprocess.run(['sh','-c',sys.argv[1]])",
                  "N=2; " + script]):
        r = harness(prog, wd, policy=None, env={"HOME": home})
        for rel, text in files.items():
            with open(os.path.join(home, rel)) as f:
                got = f.read()
            check(got == text, "%s: %s rewritten: %r" % (prog[0], rel, got))
            rec = r.one(args_path=os.path.join(home, rel), verdict="deny")
            check(rec["rule"] == "harness:keep-existing", "%s: %r" % (rel, rec))
        check("added" in r.stdout, "a new entry refused: %r %r" % (r.stdout, r.stderr[-300:]))


RACE_SHARED = """
import os, threading, time
stop = False
def swap():
    n = 0
    while not stop:
        try:
            open('f%d' % n, 'w').close()
            os.rename('f%d' % n, 't')      # t: a file of the session's
            os.rename('s', 't')            # t: the shared one
            os.rename('t', 's')
        except OSError:
            pass
        n += 1
th = threading.Thread(target=swap); th.start()
wins = refused = 0
end = time.time() + 3
while time.time() < end:
    try:
        with open('t', 'a') as f:
            f.write('X')
        wins += 1
    except OSError:
        refused += 1
stop = True; th.join()
print('done', wins, refused)
"""


def test_a_name_swapped_for_a_shared_file_after_the_decision_is_not_written(wd):
    """The judgement of a file with other names is made on the name; a
    thread renaming such a file onto a name the agent's open was decided
    on as a file of the session's own (between the decision and the
    kernel layer's open) had the append land in it. The kernel layer
    looks at the file it opened too, and refuses it (revoked)."""
    home = fake_home(wd)
    outside = os.path.join(home, "other-project.js")
    with open(outside, "w") as f:
        f.write("module.exports = 1\n")
    os.link(outside, os.path.join(wd.path, "s"))
    r = harness(["/usr/bin/python3", "-c", RACE_SHARED], wd, policy=None, env={"HOME": home})
    check("done" in r.stdout, "%r %r" % (r.stdout, r.stderr[-500:]))
    with open(outside) as f:
        got = f.read()
    check(got == "module.exports = 1\n", "the outside file was written: %r (%s)" % (got, r.stdout))


def test_a_credential_store_the_git_configuration_names_is_not_read(wd):
    """The default denies git's credential store where git keeps it by
    default (~/.git-credentials, ~/.config/git/credentials); a user's
    configuration that names another (credential.helper = store --file
    ~/.secrets/git, netrc -f FILE) left that file to the default's
    file_read allow: cat and a static busybox read the password. The
    credential helpers' files the configuration names are read and
    write denied now (harness:git-credentials), as its hooks are; a
    cache's --socket is not the agent's to bind."""
    home = fake_home(wd)
    store = os.path.join(home, "secrets", "git-store")
    netrc = os.path.join(home, "work.netrc")
    os.makedirs(os.path.dirname(store))
    with open(store, "w") as f:
        f.write("https://me:HX-SECRET-store@github.com\n")
    with open(netrc, "w") as f:
        f.write("machine git.corp login me password HX-SECRET-netrc\n")
    with open(os.path.join(home, ".gitconfig"), "w") as f:
        f.write('[credential]\n\thelper = store --file ~/secrets/git-store\n'
                '[credential "https://git.corp"]\n\thelper = "netrc -f %s"\n'
                '\thelper = cache --socket ~/.cache/gitsock/cred\n' % netrc)
    bind = ("import os, socket; os.makedirs(os.path.expanduser('~/.cache/gitsock'), exist_ok=True); "
            "socket.socket(socket.AF_UNIX).bind(os.path.expanduser('~/.cache/gitsock/cred'))")
    for argv in (["sh", "-c", "cat ~/secrets/git-store %s; /usr/bin/python3 -c \"%s\"" % (netrc, bind)],
                 [BUSYBOX, "sh", "-c", "busybox cat ~/secrets/git-store %s" % netrc]):
        r = harness(argv, wd, policy=None, env={"HOME": home})
        check("HX-SECRET" not in r.stdout, "%s read: %r" % (argv[0], r.stdout))
        if argv[0] == "sh":
            for path in (store, netrc):
                rec = r.one(args_path=path, verdict="deny")
                check(rec["rule"] == "harness:git-credentials", "%s: %r" % (path, rec))
    check(not os.path.exists(os.path.join(home, ".cache", "gitsock", "cred")),
          "the cache's socket was bound")


def test_the_users_remote_mounts_are_not_read(wd):
    """GVFS mounts the desktop user's remote file systems under
    /run/user/UID/gvfs (sftp and smb shares, WebDAV, Google Drive): a
    read there is the session daemon's request to another machine, with
    the user's saved credentials, past every network rule; the default
    allowed it as a read of the system. No desktop session here: the
    default's verdict is checked."""
    from lib import POLICY_TOOL
    for path in ("/run/user/1000/gvfs/sftp:host=prod,user=root/root/.bash_history",
                 "/run/user/0/gvfs/smb-share:server=nas,share=backup/keys.txt"):
        out = subprocess.run([POLICY_TOOL, "explain", "--", "read", path],
                             capture_output=True, text=True).stdout
        check(out.startswith("deny ") and "rule=remote-mounts" in out, "%s: %r" % (path, out))


def test_another_processs_command_line_is_the_agents_to_read(wd):
    """Known gap (README, "Found by the attack reviews and not fixed"):
    a secret the user passes in an argv (mysql -pPASSWORD, curl -u
    user:pass, a --token=) of a program running outside the session is
    in /proc/PID/cmdline, which any process may read: a static busybox
    found it by walking /proc. Hiding other processes needs a procfs of
    the agent's own mounted hidepid=invisible (Landlock's ptrace scope
    then hides all but its tree), which an ordinary user's session can
    mount only in a PID namespace of its own."""
    from lib import xfail
    p = subprocess.Popen(["sh", "-c", "sleep 30", "sh", "--password=HX-SECRET-ARGV"])
    try:
        time.sleep(0.2)
        r = harness([BUSYBOX, "sh", "-c", "for p in /proc/[0-9]*; do busybox cat $p/cmdline "
                     "2>/dev/null | busybox tr '\\0' ' ' | busybox grep -a HX-SECRET; done; echo done"],
                    wd, policy=None)
    finally:
        p.kill()
        p.wait()
    check("done" in r.stdout, r.stderr[-300:])
    if any("--password=HX-SECRET-ARGV" in line and "busybox" not in line
           for line in r.stdout.splitlines()):
        xfail("another process's argv is readable in /proc/PID/cmdline (no PID namespace)")
